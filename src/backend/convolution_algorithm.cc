// choose_convolution_algorithms: the Winograd convolution for the 3x3
// layers where it pays. It reads and writes blocked activations only, so
// the choice follows layout planning.
#include "backend/lower.h"
#include "runtime/winograd_convolution.h"

namespace switchyard {

void choose_convolution_algorithms(LoweredProgram& program) {
  for (const LoweredStep& step : program.steps) {
    if (step.kind != LoweredStep::Kind::kKernel) continue;
    std::optional<PrimitiveSpec>& spec = program.kernel_calls[size_t(step.index)].dnnl_primitive;
    if (!spec || spec->kind != PrimitiveKind::kConvolution || spec->weights_input < 0) continue;
    // Its weights are transformed once, at load: they must be constants.
    int weights = step.inputs.at(size_t(spec->weights_input));
    if (program.buffers[size_t(weights)].kind != LoweredBuffer::Kind::kWeight) continue;
    if (winograd_refusal(*spec).empty() && winograd_pays(*spec)) spec->algorithm = kWinogradAlgorithm;
  }
}

}  // namespace switchyard
