#include "targets/cuda/runtime/cuda_library_plan.h"

#include <climits>
#include <vector>

#include "targets/cuda/runtime/cuda_library_primitive.h"

namespace switchyard {
namespace {

using Dims = std::vector<int64_t>;

std::string text(const Dims& dims) {
  std::string out = "[";
  for (size_t i = 0; i < dims.size(); ++i) out += (i ? "," : "") + std::to_string(dims[i]);
  return out + "]";
}

Dims dense_strides(const Dims& dims) {
  Dims strides(dims.size(), 1);
  for (size_t d = dims.size(); d-- > 1;) strides[d - 1] = strides[d] * dims[d];
  return strides;
}

bool is_relu(const PrimitivePostOp& post) {
  return post.kind == PrimitivePostOp::Kind::kEltwise && post.algorithm == "eltwise_relu" && post.alpha == 0;
}

std::string post_op_name(const PrimitivePostOp& post) {
  switch (post.kind) {
    case PrimitivePostOp::Kind::kSum:
      return "sum";
    case PrimitivePostOp::Kind::kEltwise:
      return post.algorithm + "(alpha " + std::to_string(post.alpha) + ")";
    case PrimitivePostOp::Kind::kBinary:
      return post.algorithm;
    case PrimitivePostOp::Kind::kDepthwise:
      return "depthwise convolution";
  }
  return post.algorithm;
}

// The post-ops as a library applies them: a sum first (added before the
// activation), then at most a ReLU. Anything else is named in `why`.
bool read_post_ops(const PrimitiveSpec& spec, bool allow_sum, bool allow_sum_then_relu, bool& relu, int& sum_input,
                   std::string& why) {
  const char* library = cuda_library_name(spec.kind);
  for (size_t i = 0; i < spec.post_ops.size(); ++i) {
    const PrimitivePostOp& post = spec.post_ops[i];
    if (post.kind == PrimitivePostOp::Kind::kSum && i == 0 && allow_sum) {
      if (post.operand != spec.dst) {
        why = std::string(library) + " adds a residual laid out as the destination only (it is " +
              text(post.operand.dims) + " strides " + text(post.operand.strides) + ")";
        return false;
      }
      sum_input = post.input;
      continue;
    }
    if (is_relu(post) && i + 1 == spec.post_ops.size() && (sum_input < 0 || allow_sum_then_relu)) {
      relu = true;
      continue;
    }
    why = std::string(library) + " has no epilogue for post-op " + std::to_string(i) + " (" + post_op_name(post) +
          ") of " + std::to_string(spec.post_ops.size()) + ": it fuses ";
    why += allow_sum ? (allow_sum_then_relu ? "a residual sum first, then a ReLU" : "a residual sum, or a ReLU")
                     : "a ReLU";
    if (post.algorithm == "eltwise_gelu_erf") why += " (its GELU is the tanh approximation, not erf's)";
    return false;
  }
  return true;
}

// A row-major matrix X (rows × columns, element (i, j) at i·row_stride +
// j·column_stride) as cuBLASLt reads Xᵀ.
std::optional<CudaLibraryMatrix> transposed_view(int64_t rows, int64_t columns, int64_t row_stride,
                                                 int64_t column_stride) {
  if (column_stride == 1 || columns == 1) {  // Xᵀ is column-major as it lies
    int64_t leading = rows == 1 ? columns : row_stride;
    if (leading < columns) return std::nullopt;
    return CudaLibraryMatrix{false, columns, rows, leading, 0};
  }
  if (row_stride == 1 || rows == 1) {  // X is column-major: cuBLASLt transposes it
    int64_t leading = columns == 1 ? rows : column_stride;
    if (leading < rows) return std::nullopt;
    return CudaLibraryMatrix{true, rows, columns, leading, 0};
  }
  return std::nullopt;
}

// The one stride between the matrices of a batch over the destination's
// batch dims (`batch`), an operand of extent 1 broadcast (stride 0), or
// nullopt when the operand's batch does not flatten to one stride.
std::optional<int64_t> batch_stride(const PrimitiveTensor& t, const Dims& batch) {
  std::optional<int64_t> inner;  // the stride of the innermost counted dim
  int64_t expected = 0;          // what the next dim out must have
  for (size_t d = batch.size(); d-- > 0;) {
    if (batch[d] == 1) continue;
    int64_t stride = t.dims[d] == 1 ? 0 : t.strides[d];
    if (!inner) {
      inner = stride;
    } else if (stride != expected) {
      return std::nullopt;
    }
    expected = stride * batch[d];
  }
  return inner.value_or(0);
}

bool fits_int(int64_t v) { return v >= 0 && v <= INT_MAX; }

bool plain_layouts(const PrimitiveSpec& spec, std::string& why) {
  auto check = [&](const PrimitiveTensor& t, const char* what) {
    if (t.format.empty()) {
      if (t.strides.size() == t.dims.size()) return true;
      why = std::string(what) + " has " + std::to_string(t.strides.size()) + " strides for " +
            std::to_string(t.dims.size()) + " dims";
      return false;
    }
    why = std::string("the blocked layout ") + t.format + " of " + what + ": " + cuda_library_name(spec.kind) +
          " reads plain layouts only";
    return false;
  };
  if (!check(spec.src, "src") || !check(spec.weights, "weights") || !check(spec.bias, "bias") ||
      !check(spec.dst, "dst"))
    return false;
  for (const PrimitivePostOp& post : spec.post_ops)
    if (!check(post.operand, "a post-op's operand")) return false;
  return true;
}

}  // namespace

std::optional<CudaMatmulPlan> plan_cuda_matmul(const PrimitiveSpec& spec, std::string& why) {
  if (!plain_layouts(spec, why)) return std::nullopt;
  const PrimitiveTensor &src = spec.src, &weights = spec.weights, &dst = spec.dst;
  size_t rank = dst.dims.size();
  if (rank < 2 || src.dims.size() != rank || weights.dims.size() != rank) {
    why = "a matmul of ranks " + std::to_string(src.dims.size()) + " and " + std::to_string(weights.dims.size()) +
          " into rank " + std::to_string(rank);
    return std::nullopt;
  }
  int64_t m = src.dims[rank - 2], k = src.dims[rank - 1], n = weights.dims[rank - 1];
  if (weights.dims[rank - 2] != k || dst.dims[rank - 2] != m || dst.dims[rank - 1] != n) {
    why = "a matmul of " + text(src.dims) + " by " + text(weights.dims) + " into " + text(dst.dims);
    return std::nullopt;
  }
  CudaMatmulPlan plan;
  Dims batch(dst.dims.begin(), dst.dims.end() - 2);
  for (size_t d = 0; d < batch.size(); ++d) {
    plan.batch *= batch[d];
    if ((src.dims[d] != 1 && src.dims[d] != batch[d]) || (weights.dims[d] != 1 && weights.dims[d] != batch[d])) {
      why = "matmul batch dims " + text(src.dims) + " and " + text(weights.dims) + " do not broadcast to " +
            text(dst.dims);
      return std::nullopt;
    }
  }
  auto matrix = [&](const PrimitiveTensor& t, int64_t rows, int64_t columns, const char* what) {
    std::optional<CudaLibraryMatrix> view = transposed_view(rows, columns, t.strides[rank - 2], t.strides[rank - 1]);
    std::optional<int64_t> stride = batch_stride(t, batch);
    if (!view || !stride) {
      why = std::string("the matmul's ") + what + " " + text(t.dims) + " with strides " + text(t.strides) +
            ": cuBLASLt reads matrices with one unit stride, in batches of one stride";
      return std::optional<CudaLibraryMatrix>();
    }
    view->batch_stride = *stride;
    if (plan.batch > 1)
      while (*stride * 4 % plan.alignment != 0) plan.alignment /= 2;
    return view;
  };
  std::optional<CudaLibraryMatrix> a = matrix(weights, k, n, "weights");
  if (!a) return std::nullopt;
  std::optional<CudaLibraryMatrix> b = matrix(src, m, k, "src");
  if (!b) return std::nullopt;
  std::optional<CudaLibraryMatrix> d = matrix(dst, m, n, "dst");
  if (!d) return std::nullopt;
  if (d->transposed) {
    why = "the matmul's dst " + text(dst.dims) + " with strides " + text(dst.strides) +
          ": cuBLASLt writes rows of unit stride only";
    return std::nullopt;
  }
  plan.a = *a;
  plan.b = *b;
  plan.d = *d;
  if (!spec.bias.empty()) {
    const PrimitiveTensor& bias = spec.bias;
    int64_t count = 1;
    for (int64_t e : bias.dims) count *= e;
    if (bias.dims.back() != n || count != n || (n > 1 && bias.strides.back() != 1)) {
      why = "the matmul's bias " + text(bias.dims) + " with strides " + text(bias.strides) +
            ": cuBLASLt adds one packed vector of the " + std::to_string(n) + " output columns";
      return std::nullopt;
    }
    plan.bias = true;
  }
  // cuBLASLt adds C and the bias before its activation; whether a ReLU
  // epilogue follows C is not documented, so a sum is fused alone.
  if (!read_post_ops(spec, true, false, plan.relu, plan.sum_input, why)) return std::nullopt;
  return plan;
}

namespace {

// A convolution's filter (OIHW, or GOIHW grouped, packed), its groups, its
// bias and its post-ops; sets `window` to the filter's height and width.
bool plan_convolution_filter(const PrimitiveSpec& spec, CudaWindowPlan& plan, Dims& window, std::string& why) {
  const PrimitiveTensor &src = spec.src, &dst = spec.dst, &w = spec.weights;
  bool grouped = w.dims.size() == 5;
  if (w.dims.size() != 4 && !grouped) {
    why = "convolution weights " + text(w.dims) + ": cuDNN takes OIHW, or GOIHW grouped";
    return false;
  }
  if (w.strides != dense_strides(w.dims)) {
    why = "convolution weights " + text(w.dims) + " with strides " + text(w.strides) +
          ": cuDNN reads packed filters only";
    return false;
  }
  int64_t groups = grouped ? w.dims[0] : 1, per_group = w.dims[w.dims.size() - 3];
  int64_t outputs = grouped ? w.dims[0] * w.dims[1] : w.dims[0];
  if (src.dims[1] != groups * per_group || dst.dims[1] != outputs || dst.dims[0] != src.dims[0]) {
    why = "a convolution of " + text(src.dims) + " by weights " + text(w.dims) + " into " + text(dst.dims);
    return false;
  }
  window = {w.dims[w.dims.size() - 2], w.dims.back()};
  if (!fits_int(outputs) || !fits_int(per_group)) {
    why = "convolution weights " + text(w.dims) + ": cuDNN's descriptors take 32-bit sizes";
    return false;
  }
  plan.groups = int(groups);
  plan.filter_dims = {int(outputs), int(per_group), int(window[0]), int(window[1])};
  if (!spec.bias.empty()) {
    const PrimitiveTensor& bias = spec.bias;
    int64_t count = 1;
    for (int64_t e : bias.dims) count *= e;
    if (count != outputs || bias.strides != dense_strides(bias.dims)) {
      why = "the convolution's bias " + text(bias.dims) + ": cuDNN adds one packed vector of the " +
            std::to_string(outputs) + " output channels";
      return false;
    }
    plan.bias = true;
  }
  return read_post_ops(spec, true, true, plan.relu, plan.sum_input, why);
}

// A pool reads its source alone, channel by channel.
bool check_pool_operands(const PrimitiveSpec& spec, std::string& why) {
  if (!spec.weights.empty() || !spec.bias.empty() || !spec.post_ops.empty()) {
    why = "cuDNN's pools take no weights, bias or post-ops";
    return false;
  }
  if (spec.src.dims[0] != spec.dst.dims[0] || spec.src.dims[1] != spec.dst.dims[1]) {
    why = "a pool of " + text(spec.src.dims) + " into " + text(spec.dst.dims);
    return false;
  }
  return true;
}

// The window's padding, stride and dilation along spatial dimension d, as
// cuDNN's descriptors express them.
bool plan_window_dimension(const PrimitiveSpec& spec, const Dims& window, size_t d, CudaWindowPlan& plan,
                           std::string& why) {
  const PrimitiveTensor &src = spec.src, &dst = spec.dst;
  bool convolution = spec.kind == PrimitiveKind::kConvolution;
  int64_t in = src.dims[d + 2], out = dst.dims[d + 2], stride = spec.strides[d], dilation = spec.dilation[d] + 1;
  int64_t left = spec.padding_l[d], right = spec.padding_r[d], extent = (window[d] - 1) * dilation + 1;
  if (!fits_int(left) || !fits_int(stride) || !fits_int(window[d]) || !fits_int(dilation)) {
    why = std::string("a ") + primitive_kind_name(spec.kind) + " window " + text(window) +
          ": cuDNN's descriptors take 32-bit sizes";
    return false;
  }
  if (!convolution && dilation != 1) {
    why = "a pool dilated by " + text(spec.dilation) + ": cuDNN's pools have no dilation";
    return false;
  }
  if (stride < 1 || left < 0 || right < 0 || in + left + right < extent ||
      (in + left + right - extent) / stride + 1 != out) {
    why = std::string("a ") + primitive_kind_name(spec.kind) + " window " + text(window) + " strides " +
          text(spec.strides) + " padding " + text(spec.padding_l) + text(spec.padding_r) + " does not map " +
          text(src.dims) + " onto " + text(dst.dims);
    return false;
  }
  // cuDNN pads both sides by the left padding: the windows are the same
  // when the extent it gives is the spec's (zeros, or padding a max or an
  // average without padding ignores, are read either way), except for an
  // average that counts the padding.
  bool counts_padding = spec.algorithm == "pooling_avg_include_padding";
  if ((in + 2 * left < extent || (in + 2 * left - extent) / stride + 1 != out) || (counts_padding && left != right)) {
    why = std::string("padding ") + text(spec.padding_l) + " before and " + text(spec.padding_r) +
          " after: cuDNN pads both sides alike";
    return false;
  }
  plan.padding[d] = int(left);
  plan.strides[d] = int(stride);
  plan.dilation[d] = int(dilation);
  plan.window[d] = int(window[d]);
  return true;
}

// The source's and destination's NCHW dims and strides, in 32 bits.
bool plan_tensor_dims(const PrimitiveSpec& spec, CudaWindowPlan& plan, std::string& why) {
  const PrimitiveTensor &src = spec.src, &dst = spec.dst;
  for (size_t d = 0; d < 4; ++d) {
    if (!fits_int(src.dims[d]) || !fits_int(src.strides[d]) || !fits_int(dst.dims[d]) || !fits_int(dst.strides[d])) {
      why = std::string("a ") + primitive_kind_name(spec.kind) + " of " + text(src.dims) +
            ": cuDNN's descriptors take 32-bit dims and strides";
      return false;
    }
    plan.src_dims[d] = int(src.dims[d]);
    plan.src_strides[d] = int(src.strides[d]);
    plan.dst_dims[d] = int(dst.dims[d]);
    plan.dst_strides[d] = int(dst.strides[d]);
  }
  return true;
}

}  // namespace

std::optional<CudaWindowPlan> plan_cuda_window(const PrimitiveSpec& spec, std::string& why) {
  if (!plain_layouts(spec, why)) return std::nullopt;
  bool convolution = spec.kind == PrimitiveKind::kConvolution;
  const char* library = cuda_library_name(spec.kind);
  // A convolution's algorithm is the CPU's choice (direct, or the runtime's
  // Winograd): cuDNN chooses its own.
  if (convolution ? spec.algorithm != "convolution_direct" && spec.algorithm != "convolution_winograd"
                  : spec.algorithm != "pooling_max" && spec.algorithm != "pooling_avg_include_padding" &&
                        spec.algorithm != "pooling_avg_exclude_padding") {
    why = std::string(library) + " has no " + primitive_kind_name(spec.kind) + " algorithm '" + spec.algorithm + "'";
    return std::nullopt;
  }
  const PrimitiveTensor &src = spec.src, &dst = spec.dst;
  if (src.dims.size() != 4 || dst.dims.size() != 4 || spec.strides.size() != 2 || spec.dilation.size() != 2 ||
      spec.padding_l.size() != 2 || spec.padding_r.size() != 2 || (!convolution && spec.kernel.size() != 2)) {
    why = std::string("a ") + primitive_kind_name(spec.kind) + " of " + text(src.dims) + " into " + text(dst.dims) +
          ": the CUDA path runs 2-d windows over NCHW";
    return std::nullopt;
  }
  CudaWindowPlan plan;
  Dims window = spec.kernel;
  if (convolution ? !plan_convolution_filter(spec, plan, window, why) : !check_pool_operands(spec, why))
    return std::nullopt;
  for (size_t d = 0; d < 2; ++d)
    if (!plan_window_dimension(spec, window, d, plan, why)) return std::nullopt;
  if (!plan_tensor_dims(spec, plan, why)) return std::nullopt;
  return plan;
}

std::string cuda_library_refusal(const PrimitiveSpec& spec) {
  std::string why;
  if (spec.kind == PrimitiveKind::kReorder)
    why = "CUDA kernels read plain layouts only: no library converts layouts here";
  else if (spec.kind == PrimitiveKind::kMatmul)
    plan_cuda_matmul(spec, why);
  else
    plan_cuda_window(spec, why);
  return why;
}

bool cuda_library_makes(const PrimitiveSpec& spec) { return cuda_library_refusal(spec).empty(); }

const char* cuda_library_name(PrimitiveKind kind) { return kind == PrimitiveKind::kMatmul ? "cuBLASLt" : "cuDNN"; }

}  // namespace switchyard
