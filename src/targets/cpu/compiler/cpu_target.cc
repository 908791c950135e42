// The CPU target as passes see it: a fused function is a oneDNN primitive
// alone when kernel generation makes it one, and the layouts oneDNN prefers
// follow the instruction set it runs on here.
#include "targets/cpu/compiler/cpu_target.h"

#include "codegen/kernel.h"
#include "support/error.h"
#include "targets/cpu/compiler/codegen_cpu.h"
#include "targets/cpu/runtime/dnnl_primitive.h"
#include "targets/cpu/runtime/winograd_convolution.h"

namespace switchyard {

namespace {

// Asks the kernel generation that will run (the anchors' library the
// target names), without rendering; nullopt where it cannot lower `primitive`.
std::optional<KernelSource> lowered_kernel(const Function& primitive, const std::vector<bool>& constant_inputs) {
  try {
    const AnchorLibrary& library = cpu_anchor_library(primitive->virtual_device()->target());
    return lower_kernel_source(primitive, "sy_kernel", constant_inputs, library);
  } catch (const Error&) {
    return std::nullopt;
  }
}

std::optional<PrimitiveSpec> cpu_library_primitive(const Function& primitive,
                                                   const std::vector<bool>& constant_inputs) {
  std::optional<KernelSource> source = lowered_kernel(primitive, constant_inputs);
  // Kernel IR means loops run (around the primitive, if any): not a primitive alone.
  if (!source || source->kernel_ir || !source->primitive) return std::nullopt;
  return source->primitive;
}

std::optional<PrimitiveSpec> cpu_anchored_convolution(const Function& primitive,
                                                      const std::vector<bool>& constant_inputs) {
  std::optional<KernelSource> source = lowered_kernel(primitive, constant_inputs);
  // Primitive and loops: a oneDNN anchor's epilogue (codegen/library_anchor.cc).
  // A pool only of 8-bit values (a QDQ model's max pool and the requantize
  // after it): float pools keep their plans.
  if (!source || !source->kernel_ir || !source->primitive) return std::nullopt;
  const PrimitiveSpec& spec = *source->primitive;
  if (spec.kind != PrimitiveKind::kConvolution && (spec.kind != PrimitiveKind::kPooling || spec.quantization.empty()))
    return std::nullopt;
  for (const PrimitivePostOp& post : spec.post_ops)
    if (post.kind == PrimitivePostOp::Kind::kDepthwise) return std::nullopt;
  return spec;
}

// A 3x3 convolution the runtime's Winograd kernel would take in channels
// last (choose_primitive_algorithms) runs some 2x faster than oneDNN's
// direct one writing dense activations; a conversion afterwards costs a
// fraction of that.
bool cpu_faster_writing_a_layout(const PrimitiveSpec& spec) {
  if (spec.kind != PrimitiveKind::kConvolution || !spec.quantization.empty()) return false;
  PrimitiveSpec laid_out = spec;
  laid_out.src.format = laid_out.dst.format = "nhwc";
  for (PrimitivePostOp& post : laid_out.post_ops)  // a residual shares the result's layout (PlanLayouts' sets)
    if (post.kind == PrimitivePostOp::Kind::kSum) post.operand.format = "nhwc";
  return winograd_refusal(laid_out).empty() && winograd_pays(laid_out);
}

void check_onednn_layout(const std::string& format) { dnnl_tensor_bytes({{1, 16, 1, 1}, {}, format}); }

// oneDNN's instruction set (ONEDNN_MAX_CPU_ISA may lower it) decides the
// planned layouts and the weights' prepared layouts.
std::string onednn_artifact_facts() { return "onednn isa " + std::to_string(dnnl_effective_isa()) + "\n"; }

}  // namespace

const TargetDescription& cpu_target_description() {
  static const TargetDescription description{
      DeviceKind::kCPU, cpu_library_primitive, cpu_anchored_convolution, check_onednn_layout, dnnl_channel_block, dnnl_uses_avx512,
      onednn_artifact_facts, dnnl_implementation, dnnl_runs_reference_once, cpu_faster_writing_a_layout,
  };
  return description;
}

}  // namespace switchyard
