#include "driver/kernel_report.h"

#include <map>

#include "lower/costly_loops.h"
#include "ir/device_kind.h"
#include "targets/target_description.h"

namespace switchyard {

namespace {

std::vector<std::string> operators_of(const std::string& chain) {
  std::vector<std::string> names;
  const std::string arrow = " -> ";
  for (size_t start = 0; start < chain.size();) {
    size_t end = chain.find(arrow, start);
    if (end == std::string::npos) end = chain.size();
    names.push_back(chain.substr(start, end - start));
    start = end + arrow.size();
  }
  return names;
}

std::string pooling_name(const std::string& algorithm) {
  if (algorithm == "pooling_max") return "max pooling";
  if (algorithm == "pooling_avg_include_padding") return "average pooling (padding counted)";
  if (algorithm == "pooling_avg_exclude_padding") return "average pooling (padding not counted)";
  return "pooling " + algorithm;
}

// "3x3 stride 2 groups 32": the window of a convolution or pool, which
// decides which of a library's implementations runs.
std::string window_text(const PrimitiveSpec& spec) {
  std::vector<int64_t> window = spec.kernel;
  const std::vector<int64_t>& weights = spec.weights.dims;
  if (spec.kind == PrimitiveKind::kConvolution && weights.size() >= 2) window.assign(weights.end() - 2, weights.end());
  std::string text;
  for (size_t i = 0; i < window.size(); ++i) text += (i ? "x" : " ") + std::to_string(window[i]);
  bool strided = false;
  for (int64_t s : spec.strides) strided |= s != 1;
  if (strided) {
    text += " stride";
    for (size_t i = 0; i < spec.strides.size(); ++i) text += (i ? "x" : " ") + std::to_string(spec.strides[i]);
  }
  // oneDNN's grouped weights are {groups, out / groups, in / groups, kh, kw}.
  if (spec.kind == PrimitiveKind::kConvolution && weights.size() == 5) text += " groups " + std::to_string(weights[0]);
  return text;
}

// What a primitive spec runs, by library: oneDNN's primitives on a CPU, the
// runtime's own Winograd convolution and packed matmul, cuBLASLt and cuDNN
// on a GPU.
std::string primitive_description(const PrimitiveSpec& spec, bool cuda) {
  std::string text;
  switch (spec.kind) {
    case PrimitiveKind::kConvolution:
      text = spec.algorithm == "convolution_winograd" ? "Winograd convolution (runtime)"
                                                       : std::string(cuda ? "cuDNN" : "oneDNN") + " convolution";
      break;
    case PrimitiveKind::kMatmul:
      text = spec.algorithm == "matmul_packed" ? "packed matmul (runtime)"
                                                : std::string(cuda ? "cuBLASLt" : "oneDNN") + " matmul";
      break;
    case PrimitiveKind::kPooling:
      text = std::string(cuda ? "cuDNN " : "oneDNN ") + pooling_name(spec.algorithm);
      break;
    case PrimitiveKind::kReorder:
      text = std::string(cuda ? "cuDNN" : "oneDNN") + " reorder";
      break;
  }
  if (spec.kind == PrimitiveKind::kConvolution || spec.kind == PrimitiveKind::kPooling) text += window_text(spec);
  // An int8 primitive's types, source weights destination ("int8 u8s8u8").
  const PrimitiveQuantization& q = spec.quantization;
  if (!q.empty()) text += ", int8 " + q.src_type + q.weights_type + q.dst_type;
  for (const PrimitivePostOp& post : spec.post_ops)
    if (post.kind == PrimitivePostOp::Kind::kDepthwise)
      text += " + fused depthwise " + std::to_string(post.operand.dims.back()) + "x" +
              std::to_string(post.operand.dims.back()) + (post.stride != 1 ? " stride " + std::to_string(post.stride) : "");
  // The activations' layouts where not plain ("nChw16c", "plain -> nhwc"):
  // oneDNN runs a mixed pair with slower implementations.
  auto format = [](const PrimitiveTensor& t) { return t.format.empty() ? std::string("plain") : t.format; };
  if (spec.src.format != spec.dst.format) {
    text += ", " + format(spec.src) + " -> " + format(spec.dst);
  } else if (!spec.src.format.empty()) {
    text += ", " + spec.src.format;
  }
  return text;
}

}  // namespace

KernelExecution kernel_execution(const Manifest& manifest, const ManifestKernel& kernel) {
  KernelExecution execution;
  if (kernel.primitive >= 0 && size_t(kernel.primitive) < manifest.primitives.size()) {
    execution.library = true;
    execution.description =
        primitive_description(manifest.primitives[size_t(kernel.primitive)], kernel.kind == "cuda_library");
    return execution;
  }
  for (const std::string& op : operators_of(kernel.operators))
    if (is_window_or_product_op(op)) execution.window_or_product_ops.push_back(op);
  if (execution.window_or_product_ops.empty()) {
    execution.description = "generated loops";
  } else {
    std::string ops;
    for (const std::string& op : execution.window_or_product_ops) ops += (ops.empty() ? "" : ", ") + op;
    execution.description = "generated window loop (" + ops + ": no library primitive)";
  }
  return execution;
}

bool is_reference_implementation(const std::string& implementation) {
  return implementation.rfind("ref", 0) == 0 || implementation.rfind("simple", 0) == 0 ||
         implementation.find(":ref") != std::string::npos;
}

namespace {

// The description of the target a manifest kernel's device was compiled
// for, or null.
const TargetDescription* kernel_target(const Manifest& manifest, const ManifestKernel& kernel) {
  if (kernel.device < 0 || size_t(kernel.device) >= manifest.devices.size()) return nullptr;
  const DeviceKindInfo* kind = find_device_kind(manifest.devices[size_t(kernel.device)].kind);
  return kind ? target_description_for(kind->kind) : nullptr;
}

}  // namespace

void add_onednn_implementations(const Manifest& manifest, std::vector<KernelExecution>& executions) {
  std::map<int, std::string> by_primitive;
  for (size_t i = 0; i < manifest.kernels.size() && i < executions.size(); ++i) {
    const ManifestKernel& kernel = manifest.kernels[i];
    if (kernel.kind != "dnnl" || kernel.primitive < 0 || size_t(kernel.primitive) >= manifest.primitives.size())
      continue;
    const TargetDescription* target = kernel_target(manifest, kernel);
    if (!target) continue;
    auto known = by_primitive.find(kernel.primitive);
    if (known == by_primitive.end())
      known = by_primitive
                  .emplace(kernel.primitive, target->library_implementation(manifest.primitives[size_t(kernel.primitive)]))
                  .first;
    executions[i].implementation = known->second;
  }
}

std::string kernel_execution_text(const KernelExecution& execution) {
  std::string text = std::string(execution.library ? "library: " : "loops: ") + execution.description;
  if (!execution.implementation.empty())
    text += " [" + execution.implementation +
            (is_reference_implementation(execution.implementation) ? ", oneDNN's reference implementation" : "") + "]";
  return text;
}

}  // namespace switchyard
