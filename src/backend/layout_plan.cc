// plan_layouts: blocked activations between oneDNN convolutions and pools.
// Reordering to and from plain NCHW around each convolution cost ResNet-50
// half of its convolution time; between two primitives nothing but oneDNN
// looks at the bytes, so they stay in the layout oneDNN computes in.
#include <set>

#include "backend/lower.h"
#include "runtime/dnnl_primitive.h"

namespace switchyard {

namespace {

// The primitive of a kernel call that is a oneDNN convolution or pool and
// nothing else (so no generated loop reads its buffers), or null. cuDNN's
// primitives read plain NCHW.
const PrimitiveSpec* window_primitive(const LoweredProgram& program, const LoweredStep& step) {
  if (step.kind != LoweredStep::Kind::kKernel) return nullptr;
  const KernelSource& source = program.kernel_sources[size_t(program.kernel_calls[size_t(step.index)].source)];
  if (!source.library_only() || source.primitive->kind == PrimitiveKind::kMatmul || !runs_on_cpu(source))
    return nullptr;
  return &*source.primitive;
}

// Whether every use of buffer `b` by `step` is as the primitive's source or a sum's residual.
bool reads_only_as_activation(const LoweredStep& step, const PrimitiveSpec& spec, int b) {
  for (size_t i = 0; i < step.inputs.size(); ++i) {
    if (step.inputs[i] != b) continue;
    bool activation = int(i) == spec.src_input;
    for (const PrimitivePostOp& post : spec.post_ops)
      activation = activation || (post.kind == PrimitivePostOp::Kind::kSum && post.input == int(i));
    if (!activation) return false;
  }
  return true;
}

PrimitiveTensor blocked(PrimitiveTensor tensor, const std::string& format) {
  tensor.format = format;
  return tensor;
}

}  // namespace

void plan_layouts(LoweredProgram& program, int channel_block) {
  const std::string format = "nChw" + std::to_string(channel_block) + "c";
  // Candidates: intermediate 4-d float32 buffers written by a window primitive.
  std::vector<bool> candidate(program.buffers.size(), false);
  for (const LoweredStep& step : program.steps)
    if (window_primitive(program, step) && !step.outputs.empty()) {
      const LoweredBuffer& out = program.buffers[size_t(step.outputs[0])];
      candidate[size_t(step.outputs[0])] = out.kind == LoweredBuffer::Kind::kIntermediate && out.type->ndim() == 4 &&
                                           out.type->dtype == DType::kFloat32;
    }
  // Any other use (a loop kernel, a copy, a move, an if, a weights or binary
  // operand, a second write) keeps a buffer plain.
  for (const LoweredStep& step : program.steps) {
    const PrimitiveSpec* spec = window_primitive(program, step);
    for (int b : step.inputs)
      if (!spec || !reads_only_as_activation(step, *spec, b)) candidate[size_t(b)] = false;
    for (size_t o = 0; o < step.outputs.size(); ++o)
      if (!spec || o > 0) candidate[size_t(step.outputs[o])] = false;
  }
  std::set<int> written;
  for (const LoweredStep& step : program.steps)
    for (int b : step.outputs)
      if (!written.insert(b).second) candidate[size_t(b)] = false;
  for (int b : program.outputs) candidate[size_t(b)] = false;

  for (const LoweredStep& step : program.steps) {
    const PrimitiveSpec* source_spec = window_primitive(program, step);
    if (!source_spec) continue;
    PrimitiveSpec spec = *source_spec;
    if (candidate[size_t(step.inputs.at(size_t(spec.src_input)))]) spec.src = blocked(spec.src, format);
    if (candidate[size_t(step.outputs.at(0))]) spec.dst = blocked(spec.dst, format);
    for (PrimitivePostOp& post : spec.post_ops)
      if (post.kind == PrimitivePostOp::Kind::kSum && candidate[size_t(step.inputs.at(size_t(post.input)))])
        post.operand = blocked(post.operand, format);
    program.kernel_calls[size_t(step.index)].dnnl_primitive = spec;
  }
  for (size_t b = 0; b < program.buffers.size(); ++b) {
    if (!candidate[b]) continue;
    LoweredBuffer& buffer = program.buffers[b];
    buffer.layout = format;
    buffer.layout_bytes = dnnl_tensor_bytes({buffer.type->shape, {}, format});
  }
  restrict_primitive_in_place(program);
}

void restrict_primitive_in_place(LoweredProgram& program) {
  // A primitive must not write over what it reads, except the residual its
  // sum post-op adds: the destination then already holds it, and the copy
  // into the destination before the primitive runs is saved.
  for (LoweredStep& step : program.steps) {
    if (step.kind != LoweredStep::Kind::kKernel) continue;
    const LoweredKernelCall& call = program.kernel_calls[size_t(step.index)];
    const KernelSource& source = program.kernel_sources[size_t(call.source)];
    if (!source.library_only()) continue;
    const PrimitiveSpec& spec = call.dnnl_primitive ? *call.dnnl_primitive : *source.primitive;
    std::vector<int> residuals;
    const LoweredBuffer& out = program.buffers[size_t(step.outputs.at(0))];
    for (const PrimitivePostOp& post : spec.post_ops) {
      if (post.kind != PrimitivePostOp::Kind::kSum) continue;
      int b = step.inputs.at(size_t(post.input));
      const LoweredBuffer& residual = program.buffers[size_t(b)];
      bool reads_otherwise = false;
      for (size_t i = 0; i < step.inputs.size(); ++i) reads_otherwise |= step.inputs[i] == b && int(i) != post.input;
      if (!reads_otherwise && residual.layout == out.layout && residual.bytes() == out.bytes() &&
          residual.type->dtype == out.type->dtype && residual.type->shape == out.type->shape)
        residuals.push_back(b);
    }
    step.in_place_candidates = residuals;
  }
}

}  // namespace switchyard
