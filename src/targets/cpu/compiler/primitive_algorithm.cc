// choose_primitive_algorithms: the runtime's own CPU kernels where they beat
// oneDNN's. Both transform constant weights once, at load; the Winograd
// convolution reads and writes blocked activations only, so the choice
// follows layout planning.
#include "lower/lower.h"
#include "targets/cpu/runtime/packed_matmul.h"
#include "targets/cpu/runtime/winograd_convolution.h"

namespace switchyard {

void choose_primitive_algorithms(LoweredProgram& program) {
  for (const LoweredStep& step : program.steps) {
    if (step.kind != LoweredStep::Kind::kKernel) continue;
    LoweredKernelCall& call = program.kernel_calls[size_t(step.index)];
    // The call's own spec where layout planning gave it one, else its kernel's.
    const std::optional<PrimitiveSpec>& kernel_spec = program.kernel_sources[size_t(call.source)].primitive;
    std::optional<PrimitiveSpec> spec = call.dnnl_primitive ? call.dnnl_primitive : kernel_spec;
    if (!spec || spec->weights_input < 0 || !runs_on_cpu(program.kernel_sources[size_t(call.source)])) continue;
    if (!spec->quantization.empty()) continue;  // the runtime's own kernels compute float32 only
    int weights = step.inputs.at(size_t(spec->weights_input));
    if (program.buffers[size_t(weights)].kind != LoweredBuffer::Kind::kWeight) continue;
    if (spec->kind == PrimitiveKind::kConvolution && winograd_refusal(*spec).empty() && winograd_pays(*spec))
      spec->algorithm = kWinogradAlgorithm;
    else if (spec->kind == PrimitiveKind::kMatmul && packed_matmul_refusal(*spec).empty() &&
             packed_matmul_pays(*spec))
      spec->algorithm = kPackedMatmulAlgorithm;
    else
      continue;
    call.dnnl_primitive = spec;
  }
}

}  // namespace switchyard
