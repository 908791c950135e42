// float32 anchors through oneDNN: nn.dense, matmul and nn.batch_matmul as
// matmul primitives (transposes expressed as strides, no copies),
// nn.conv2d, and the pools. This file says what oneDNN computes for each
// anchor and writes the kernel; library_epilogue.cc maps the element-wise
// epilogue onto the primitive's bias and post-ops. The primitive itself
// lives in the runtime: a kernel whose epilogue oneDNN fuses whole has no
// code at all.
#include <algorithm>
#include <set>

#include "codegen/library_anchor.h"
#include "op/handles.h"
#include "op/linear_attrs.h"
#include "op/quantized_attrs.h"
#include "op/registry.h"
#include "op/shape_rules.h"
#include "op/window_attrs.h"
#include "runtime/primitive_json.h"
#include "support/error.h"

namespace switchyard {

Dims dense_strides(const Dims& shape) {
  Dims strides(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) strides[d - 1] = strides[d] * shape[d];
  return strides;
}

int parameter_index(const CpuKernel& k, const Expr& e) {
  for (size_t i = 0; i < k.function->params.size(); ++i)
    if (k.function->params[i].get() == e.get()) return int(i);
  return -1;
}

namespace {

PrimitiveTensor plain(const Dims& shape) { return {shape, dense_strides(shape)}; }

DnnlAnchor product(const CpuKernel& k) {
  const CallNode& call = *k.master;
  const OpNode* op = as<OpNode>(call.op);
  Dims a = shape_of(call.args[0]), b = shape_of(call.args[1]);
  DnnlAnchor o;
  PrimitiveSpec& s = o.spec;
  s.kind = PrimitiveKind::kMatmul;
  Dims out = shape_of(Expr(&call));
  // A product of a matrix of rows with shared weights: nn.dense, and a
  // matmul whose right operand is one matrix (a batch of rows times the
  // same weights is one matrix product, not a batch of vector products).
  bool shared_weights = op == ops::dense() || (op == ops::matmul() && a.size() >= 2 && b.size() == 2);
  if (shared_weights) {
    int64_t k_size = a.back(), n = op == ops::dense() ? b[0] : b[1], m = 1;
    for (size_t d = 0; d + 1 < a.size(); ++d) m *= a[d];
    s.src = plain({m, k_size});
    s.weights = op == ops::dense() ? PrimitiveTensor{{k_size, n}, {1, k_size}} : plain({k_size, n});
    s.dst = plain({m, n});
    o.to_destination = [out, m](const Dims& side) -> std::optional<Dims> {
      bool ones = true, full = true;
      for (size_t d = 0; d + 1 < side.size(); ++d) {
        ones = ones && side[d] == 1;
        full = full && side[d] == out[d];
      }
      if (ones) return Dims{1, side.back()};
      if (full) return Dims{m, side.back()};
      return std::nullopt;
    };
  } else if (op == ops::matmul()) {
    bool a_vector = a.size() == 1, b_vector = b.size() == 1;
    if (a_vector) a.insert(a.begin(), 1);
    if (b_vector) b.push_back(1);
    size_t rank = std::max(a.size(), b.size());
    a.insert(a.begin(), rank - a.size(), 1);
    b.insert(b.begin(), rank - b.size(), 1);
    Dims dst = a;
    for (size_t d = 0; d + 2 < rank; ++d) dst[d] = std::max(a[d], b[d]);
    dst[rank - 1] = b[rank - 1];
    s.src = plain(a);
    s.weights = plain(b);
    s.dst = plain(dst);
    o.to_destination = [rank, a_vector, b_vector](Dims side) -> std::optional<Dims> {
      if (b_vector) side.push_back(1);
      if (a_vector) side.insert(side.end() - 1, 1);
      side.insert(side.begin(), rank - std::min(rank, side.size()), 1);
      return side;
    };
  } else {  // nn.batch_matmul
    const LinearAttrs linear = linear_attrs(*call.attrs);
    bool ta = linear.transpose_a, tb = linear.transpose_b;
    int64_t m = ta ? a[2] : a[1], k_size = ta ? a[1] : a[2], n = tb ? b[1] : b[2];
    s.src = {{a[0], m, k_size}, ta ? Dims{m * k_size, 1, m} : Dims{m * k_size, k_size, 1}};
    s.weights = {{b[0], k_size, n}, tb ? Dims{k_size * n, 1, k_size} : Dims{k_size * n, n, 1}};
    s.dst = plain(out);
    o.to_destination = [](const Dims& side) { return std::optional<Dims>(side); };
  }
  // The operands are parameters of the kernel; one value may be both (x·xᵀ).
  s.src_input = parameter_index(k, call.args[0]);
  s.weights_input = parameter_index(k, call.args[1]);
  // A packed layout pays only when the reorder is not repeated every call.
  s.any_weights_layout = s.weights_input >= 0 && k.constant_inputs.at(size_t(s.weights_input));
  return o;
}

// An int8 operator's side (qnn.conv2d, qnn.dense): the element types, its
// bias (kernel input 2, in the accumulator's units), output scales and zero
// points, and its relu as the one post-op, applied before the output zero
// point as the operator defines it.
void quantize(const CallNode& call, const CpuKernel& k, PrimitiveSpec& s) {
  auto type_of = [](const Expr& e) { return as_tensor(e->checked_type())->dtype == DType::kInt8 ? "s8" : "u8"; };
  const QuantizedAttrs attrs = quantized_attrs(*call.attrs);
  PrimitiveQuantization& q = s.quantization;
  q.src_type = type_of(call.args[0]);
  q.weights_type = "s8";
  q.dst_type = type_of(Expr(&call));
  q.output_scales = attrs.output_scales;
  q.src_zero_point = int32_t(attrs.input_zero_point);
  q.dst_zero_point = int32_t(attrs.output_zero_point);
  Dims bias = shape_of(call.args[2]);
  s.bias = plain(bias);
  s.bias_input = parameter_index(k, call.args[2]);
  if (attrs.relu) s.post_ops.push_back({.algorithm = "eltwise_relu"});
}

// qnn.dense: a matrix (M, K) times (N, K) weights read transposed.
DnnlAnchor quantized_product(const CpuKernel& k) {
  const CallNode& call = *k.master;
  Dims a = shape_of(call.args[0]), b = shape_of(call.args[1]);
  int64_t m = a[0], k_size = a[1], n = b[0];
  DnnlAnchor o;
  PrimitiveSpec& s = o.spec;
  s.kind = PrimitiveKind::kMatmul;
  s.src = plain({m, k_size});
  s.weights = PrimitiveTensor{{k_size, n}, {1, k_size}};
  s.dst = plain({m, n});
  o.to_destination = [](const Dims& side) { return std::optional<Dims>(side); };
  s.src_input = parameter_index(k, call.args[0]);
  s.weights_input = parameter_index(k, call.args[1]);
  s.any_weights_layout = s.weights_input >= 0 && k.constant_inputs.at(size_t(s.weights_input));
  quantize(call, k, s);
  s.bias = plain({1, n});
  return o;
}

// Right padding that gives oneDNN the output extent the IR computed (larger
// than the attribute's padding under ceil_mode).
int64_t effective_right_padding(int64_t input, int64_t left, int64_t right, int64_t kernel, int64_t stride,
                                int64_t dilation, int64_t output) {
  return std::max(right, (output - 1) * stride + (kernel - 1) * dilation + 1 - input - left);
}

// Whether `pool` reads and writes 8-bit integers.
bool is_8bit_pool(const CallNode& pool) {
  const TensorTypeNode* in = as_tensor(pool.args[0]->checked_type());
  const TensorTypeNode* out = as_tensor(pool.checked_type());
  return in && out && in->dtype == out->dtype && (in->dtype == DType::kUInt8 || in->dtype == DType::kInt8);
}

DType result_dtype(const CallNode& call) { return as_tensor(call.checked_type())->dtype; }

DnnlAnchor window(const CpuKernel& k) {
  const CallNode& call = *k.master;
  const OpNode* op = as<OpNode>(call.op);
  Dims in = shape_of(call.args[0]), out = shape_of(Expr(&call));
  DnnlAnchor o;
  PrimitiveSpec& s = o.spec;
  o.to_destination = [](const Dims& side) { return std::optional<Dims>(side); };
  s.src = plain(in);
  s.dst = plain(out);
  s.src_input = parameter_index(k, call.args[0]);
  if (op == ops::global_avg_pool2d()) {
    s.kind = PrimitiveKind::kPooling;
    s.algorithm = "pooling_avg_exclude_padding";
    s.strides = {1, 1};
    s.kernel = {in[2], in[3]};
    s.dilation = s.padding_l = s.padding_r = {0, 0};
    return o;
  }
  const WindowAttrs attrs = window_attrs(call);
  auto [stride_h, stride_w] = std::pair(attrs.stride_h, attrs.stride_w);
  auto [dilation_h, dilation_w] = std::pair(attrs.dilation_h, attrs.dilation_w);
  const Padding2D& pad = attrs.padding;
  if (op == ops::conv2d() || op == ops::quantized_conv2d()) {
    Dims w = shape_of(call.args[1]);
    int64_t groups = attrs.groups;
    Dims weights = groups == 1 ? w : Dims{groups, w[0] / groups, w[1], w[2], w[3]};
    s.kind = PrimitiveKind::kConvolution;
    s.algorithm = "convolution_direct";
    s.weights = plain(weights);
    s.weights_input = parameter_index(k, call.args[1]);
    s.strides = {stride_h, stride_w};
    s.dilation = {dilation_h - 1, dilation_w - 1};
    s.padding_l = {pad.top, pad.left};
    s.padding_r = {pad.bottom, pad.right};
    // Plain OIHW weights send oneDNN to its slow paths: let it choose, even
    // when that means a reorder per call for computed weights.
    s.any_weights_layout = true;
    o.is_convolution = true;
    // Its fast kernels read and write blocked activations only (with plain
    // ones oneDNN falls back to im2col and GEMM): the runtime reorders them
    // in and out around the primitive, until layout planning keeps them
    // blocked between operators.
    s.any_activation_layout = true;
    if (op == ops::quantized_conv2d()) quantize(call, k, s);
    return o;
  }
  auto [pool_h, pool_w] = std::pair(attrs.pool_h, attrs.pool_w);
  int64_t bottom = effective_right_padding(in[2], pad.top, pad.bottom, pool_h, stride_h, dilation_h, out[2]);
  int64_t right = effective_right_padding(in[3], pad.left, pad.right, pool_w, stride_w, dilation_w, out[3]);
  std::string algorithm = op == ops::max_pool2d()                        ? "pooling_max"
                          : attrs.count_include_pad                    ? "pooling_avg_include_padding"
                                                                       : "pooling_avg_exclude_padding";
  s.kind = PrimitiveKind::kPooling;
  s.algorithm = algorithm;
  if (op == ops::max_pool2d() && is_8bit_pool(call)) {
    // The element type alone: a max pool has no scales or zero points.
    s.quantization.src_type = s.quantization.dst_type = result_dtype(call) == DType::kInt8 ? "s8" : "u8";
  }
  s.strides = {stride_h, stride_w};
  s.kernel = {pool_h, pool_w};
  s.dilation = {dilation_h - 1, dilation_w - 1};
  s.padding_l = {pad.top, pad.left};
  s.padding_r = {bottom, right};
  return o;
}

PrimitiveSpec with_bias(PrimitiveSpec spec, const DnnlEpilogue& epilogue) {
  if (epilogue.bias_input >= 0) {
    spec.bias = {epilogue.bias_dims, dense_strides(epilogue.bias_dims)};
    spec.bias_input = epilogue.bias_input;
  }
  return spec;
}

// The anchor's primitive with the epilogue's bias and post-ops.
PrimitiveSpec with_epilogue(const PrimitiveSpec& anchor, const DnnlEpilogue& epilogue) {
  PrimitiveSpec spec = with_bias(anchor, epilogue);
  spec.post_ops = epilogue.post_ops.value_or(std::vector<PrimitivePostOp>{});
  return spec;
}

// Whether the epilogue reads the primitive's result only at the element it
// writes: only then may the primitive write the kernel's output and the loop
// rewrite it in place. A transpose, slice or concatenation of the result, or
// a broadcast of it, reads elements the loop may already have overwritten.
bool reads_in_place(const CpuKernel& k, const CallNode* computed) {
  // The calls after `computed`, each after every call it reads.
  std::vector<const CallNode*> order;
  std::set<const CallNode*> visited{computed};
  std::vector<std::pair<const CallNode*, size_t>> stack{{k.root, 0}};
  visited.insert(k.root);
  while (!stack.empty()) {
    auto& [call, next] = stack.back();
    if (next < call->args.size()) {
      const CallNode* arg = as<CallNode>(call->args[next++]);
      if (arg && visited.insert(arg).second) stack.push_back({arg, 0});
      continue;
    }
    order.push_back(call);
    stack.pop_back();
  }
  std::set<const CallNode*> reads_result{computed};
  for (const CallNode* call : order) {
    const OpDef* def = as<OpNode>(call->op)->def;
    for (const Expr& arg : call->args) {
      const CallNode* c = as<CallNode>(arg);
      if (!c || !reads_result.count(c)) continue;
      reads_result.insert(call);
      bool same_elements = as_tensor(arg->checked_type())->numel() == as_tensor(call->checked_type())->numel();
      bool flat = def && (def->pattern == OpPattern::kElementwise || def->pattern == OpPattern::kBroadcast ||
                          def->movement == DataMovement::kView);
      if (!flat || !same_elements) return false;
    }
  }
  return true;
}

// An int8 primitive (qnn.conv2d, qnn.dense) computes its whole operator, relu
// included; what follows in the kernel (a dequantization) reads its int8
// result as a loop, since post-ops would apply before the rounding.
// An anchored convolution in a layout (PlanLayouts gave its result one):
// the primitive reads its source in the source's layout and writes its
// result, and reads the operands of its post-ops of the result's shape, in
// theirs; the epilogue loop then runs over the kernel's layout.
void lay_out_anchor(const CpuKernel& k, PrimitiveSpec& spec) {
  if (k.layout.empty()) return;
  const bool eight_bit_pool = spec.kind == PrimitiveKind::kPooling && !spec.quantization.empty();
  if ((spec.kind != PrimitiveKind::kConvolution && !eight_bit_pool) || spec.src_input < 0)
    throw Error(ErrorKind::kBackend,
                "only a convolution's or an 8-bit pool's epilogue loop runs in a layout, not " +
                    as<OpNode>(k.master->op)->name + "'s",
                k.master->span());
  auto layout_of = [&](int input) { return k.function->params.at(size_t(input))->virtual_device()->layout(); };
  spec.src.format = layout_of(spec.src_input);
  spec.dst.format = k.layout;
  for (PrimitivePostOp& post : spec.post_ops)
    if ((post.kind == PrimitivePostOp::Kind::kSum || post.kind == PrimitivePostOp::Kind::kBinary) && post.input >= 0 &&
        post.operand.dims == spec.dst.dims)
      post.operand.format = layout_of(post.input);
}

std::optional<kernel_ir::Kernel> lower_quantized_kernel(CpuKernel& k, PrimitiveSpec spec) {
  namespace ki = kernel_ir;
  if (spec.bias_input < 0 || !k.library->makes(spec))
    throw Error(ErrorKind::kBackend, "oneDNN cannot make the int8 primitive of " + as<OpNode>(k.master->op)->name + " " +
                                         primitive_spec_text(spec).substr(0, 200), k.master->span());
  k.primitive = spec;
  if (k.master == k.root) {
    k.library_only = true;
    return std::nullopt;
  }
  DType anchor_dtype = as_tensor(k.master->checked_type())->dtype;
  if (!k.library->scratch)
    throw Error(ErrorKind::kBackend, "the int8 primitive's epilogue needs a scratch buffer", k.master->span());
  lay_out_anchor(k, spec);
  k.primitive = spec;
  ki::Kernel kernel = k.kernel_ir_buffers();
  std::string destination = "anchor";
  kernel.buffers.push_back({destination, anchor_dtype, ki::BufferRole::kScratch, 0, false,
                            as_tensor(k.master->checked_type())->shape, "", "the int8 result, before the epilogue"});
  kernel.body.push_back(ki::run_primitive(primitive_spec_text(spec), destination));
  Expr root(k.root);
  lower_element_loop(
      k, kernel, "epilogue", "The epilogue over the int8 result", k.outputs[0]->shape, k.output(0),
      [&](ElementLowering& lowering, const IndexAt& at) {
        lowering.bind_buffer(k.master, destination);
        return lowering.lower(root, at);
      },
      k.layout);
  return kernel;
}

}  // namespace

DnnlAnchor dnnl_anchor(const CpuKernel& k) {
  const OpNode* op = as<OpNode>(k.master->op);
  if (op == ops::quantized_dense()) return quantized_product(k);
  return ops::is_product(op) ? product(k) : window(k);
}

bool dnnl_handles(const CallNode& anchor) {
  const OpNode* op = as<OpNode>(anchor.op);
  // Their type relations admit only what the int8 primitives take, and they
  // have no other kernel.
  if (op == ops::quantized_conv2d()) return true;
  if (op == ops::quantized_dense()) return shape_of(anchor.args[0]).size() == 2;
  if (!ops::is_product(op) && !ops::is_window(op)) return false;
  std::vector<Expr> tensors(anchor.args.begin(), anchor.args.end());
  tensors.push_back(Expr(&anchor));
  // A max pool of 8-bit values too (a QDQ model's pool once FuseQDQ moved
  // it before the dequantize): its result is one of its inputs, exactly.
  const DType dtype = op == ops::max_pool2d() && is_8bit_pool(anchor) ? result_dtype(anchor) : DType::kFloat32;
  for (const Expr& t : tensors) {
    const TensorTypeNode* type = as_tensor(t->checked_type());
    if (!type || type->dtype != dtype || type->numel() == 0 || type->ndim() > 12) return false;
  }
  if (!ops::is_window(op)) return true;
  const WindowAttrs w = window_attrs(anchor);
  if (op == ops::conv2d()) return w.data_layout == "NCHW" && w.kernel_layout == "OIHW";
  if (w.data_layout != "NCHW") return false;
  if (op == ops::avg_pool2d() && w.count_include_pad) {
    // oneDNN would count ceil_mode's extra window positions as padding; the
    // reference does not.
    const Dims& in = shape_of(anchor.args[0]);
    const Dims& out = shape_of(Expr(&anchor));
    const Padding2D& pad = w.padding;
    return effective_right_padding(in[2], pad.top, pad.bottom, w.pool_h, w.stride_h, w.dilation_h, out[2]) ==
               pad.bottom &&
           effective_right_padding(in[3], pad.left, pad.right, w.pool_w, w.stride_w, w.dilation_w, out[3]) ==
               pad.right;
  }
  return true;
}

bool lower_layout_conversion(CpuKernel& k) {
  if (as<OpNode>(k.root->op) != ops::layout_convert() || parameter_index(k, k.root->args[0]) != 0) return false;
  const TensorTypeNode* type = as_tensor(k.root->checked_type());
  if (type->dtype != DType::kFloat32 || type->numel() == 0 || type->ndim() > 12) return false;
  PrimitiveSpec spec;
  spec.kind = PrimitiveKind::kReorder;
  spec.src = spec.dst = plain(type->shape);
  if (!k.library->makes(spec)) return false;
  k.primitive = spec;
  k.library_only = true;
  // Its layouts are its operands' and result's, not a loop's.
  k.layout.clear();
  return true;
}

std::optional<kernel_ir::Kernel> lower_dnnl_kernel(CpuKernel& k) {
  namespace ki = kernel_ir;
  const OpNode* op = as<OpNode>(k.master->op);
  DnnlAnchor anchor = dnnl_anchor(k);
  PrimitiveSpec spec = anchor.spec;
  // The primitive reads its operands from the kernel's inputs: an operand
  // computed inside the kernel has none.
  bool has_weights = spec.kind != PrimitiveKind::kPooling;
  if (spec.src_input < 0 || (has_weights && spec.weights_input < 0)) return std::nullopt;
  // An 8-bit max pool (its quantization the element type alone) goes on as a float one does.
  if (!spec.quantization.empty() && spec.kind != PrimitiveKind::kPooling) return lower_quantized_kernel(k, spec);
  DnnlEpilogue epilogue;
  epilogue.base = k.master;
  // A pool's epilogue runs after it: the runtime repairs the pool's result
  // where oneDNN departs from the rules (targets/cpu/runtime/dnnl_pooling_repair.h),
  // which post-ops would already have changed.
  if (k.has_epilogue() && spec.kind != PrimitiveKind::kPooling) {
    // An exact GELU ending the epilogue (the encoder's feed-forward) is one
    // post-op of a convolution. After a matmul it is one only where the
    // library applies it inside its kernel: oneDNN's brgemm matmul spends
    // 0.05 ms on it for a 128x1024 result at one thread, the vectorised
    // loop after the primitive 0.1 ms, but its GEMM-based matmul 0.46 ms.
    bool matmul = spec.kind == PrimitiveKind::kMatmul;
    epilogue = map_dnnl_epilogue(k, anchor, !matmul);
    if (matmul) {
      DnnlEpilogue with_gelu = map_dnnl_epilogue(k, anchor, true);
      if (with_gelu.post_ops_root != epilogue.post_ops_root && with_gelu.post_ops &&
          k.library->post_ops_in_kernel(with_epilogue(spec, with_gelu)))
        epilogue = with_gelu;
    }
  }
  // The epilogue is fused only where this oneDNN makes the primitive with
  // it, and with jit kernels where it has them without it (a broadcast
  // operand of a binary post-op can send a batched matmul to reference
  // loops, 40x slower); otherwise it runs as a loop after the primitive.
  bool fused = false;
  if (epilogue.post_ops && !epilogue.post_ops->empty()) {
    PrimitiveSpec with_post_ops = with_epilogue(spec, epilogue);
    fused = k.library->makes(with_post_ops) &&
            (!k.library->runs_reference(with_post_ops) || k.library->runs_reference(with_bias(spec, epilogue)));
    if (fused) spec = with_post_ops;
  }
  spec = with_bias(spec, epilogue);
  if (!fused && !k.library->makes(spec)) return std::nullopt;
  k.primitive = spec;
  const CallNode* computed = fused ? epilogue.post_ops_root : epilogue.base;
  if (computed == k.root) {
    k.library_only = true;
    return std::nullopt;
  }
  lay_out_anchor(k, spec);
  k.primitive = spec;
  // The primitive writes the output directly unless the epilogue changes the
  // dtype or reads the result at other elements than it writes.
  const DType computed_dtype = as_tensor(computed->checked_type())->dtype;
  bool scratch = k.output_dtype() != computed_dtype || !reads_in_place(k, computed);
  if (scratch && !k.library->scratch) {
    k.primitive.reset();
    return std::nullopt;
  }
  ki::Kernel kernel = k.kernel_ir_buffers();
  std::string destination = k.output(0);
  if (scratch) {
    destination = "anchor";
    kernel.buffers.push_back({destination, computed_dtype, ki::BufferRole::kScratch, 0, false,
                              as_tensor(computed->checked_type())->shape, "", op->name + "'s result, before the epilogue"});
  }
  kernel.body.push_back(ki::run_primitive(primitive_spec_text(spec), destination));
  Expr root(k.root);
  lower_element_loop(
      k, kernel, "epilogue", "The epilogue over " + op->name + "'s result", k.outputs[0]->shape, k.output(0),
      [&](ElementLowering& lowering, const IndexAt& at) {
        lowering.bind_buffer(computed, destination);
        return lowering.lower(root, at);
      },
      k.layout);
  return kernel;
}

}  // namespace switchyard
