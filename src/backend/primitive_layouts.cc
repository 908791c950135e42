// plan_layouts: blocked activations between oneDNN convolutions and pools.
// Reordering to and from plain NCHW around each convolution cost ResNet-50
// half of its convolution time; between two primitives nothing but oneDNN
// looks at the bytes, so they stay in the layout oneDNN computes in.
#include <numeric>
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

bool is_grouped_convolution(const PrimitiveSpec& spec) {
  return spec.kind == PrimitiveKind::kConvolution && spec.weights.dims.size() == 5;
}

// The buffers one window primitive reads as its source or residual and writes.
std::vector<int> activations_of(const LoweredStep& step, const PrimitiveSpec& spec) {
  std::vector<int> buffers{step.inputs.at(size_t(spec.src_input)), step.outputs.at(0)};
  for (const PrimitivePostOp& post : spec.post_ops)
    if (post.kind == PrimitivePostOp::Kind::kSum) buffers.push_back(step.inputs.at(size_t(post.input)));
  return buffers;
}

// The layout of each candidate buffer. Buffers one primitive reads and
// writes get one layout (a primitive that mixes them runs oneDNN's
// reference kernel), so each set of buffers that primitives join gets
// channels last when `channels_last` and no depthwise (grouped)
// convolution touches it, and `blocked` otherwise: on AVX-512 oneDNN's
// brgconv kernels compute the 3x3 convolutions it runs direct 1.2-1.5x
// faster channels last than its kernels for 16-channel blocks (the 1x1s
// alike), while its depthwise kernels are 1.1-1.6x faster in blocks
// (bench/conv_layout_bench.cc).
std::vector<std::string> choose_formats(const LoweredProgram& program, const std::vector<bool>& candidate,
                                        const std::string& blocked, bool channels_last) {
  std::vector<size_t> root(program.buffers.size());
  std::iota(root.begin(), root.end(), size_t(0));
  auto find = [&](size_t b) {
    while (root[b] != b) b = root[b] = root[root[b]];
    return b;
  };
  for (const LoweredStep& step : program.steps)
    if (const PrimitiveSpec* spec = window_primitive(program, step)) {
      int first = -1;
      for (int b : activations_of(step, *spec))
        if (!candidate[size_t(b)]) continue;
        else if (first < 0) first = b;
        else root[find(size_t(b))] = find(size_t(first));
    }
  std::vector<bool> grouped(program.buffers.size(), false);
  for (const LoweredStep& step : program.steps)
    if (const PrimitiveSpec* spec = window_primitive(program, step); spec && is_grouped_convolution(*spec))
      for (int b : activations_of(step, *spec)) grouped[find(size_t(b))] = true;
  std::vector<std::string> formats(program.buffers.size());
  for (size_t b = 0; b < program.buffers.size(); ++b)
    if (candidate[b]) formats[b] = channels_last && !grouped[find(b)] ? "nhwc" : blocked;
  return formats;
}

}  // namespace

void plan_layouts(LoweredProgram& program, int channel_block, bool channels_last) {
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

  const std::vector<std::string> formats =
      choose_formats(program, candidate, "nChw" + std::to_string(channel_block) + "c", channels_last);
  for (const LoweredStep& step : program.steps) {
    const PrimitiveSpec* source_spec = window_primitive(program, step);
    if (!source_spec) continue;
    PrimitiveSpec spec = *source_spec;
    if (int b = step.inputs.at(size_t(spec.src_input)); candidate[size_t(b)])
      spec.src = blocked(spec.src, formats[size_t(b)]);
    if (int b = step.outputs.at(0); candidate[size_t(b)]) spec.dst = blocked(spec.dst, formats[size_t(b)]);
    for (PrimitivePostOp& post : spec.post_ops) {
      if (post.kind != PrimitivePostOp::Kind::kSum) continue;
      if (int b = step.inputs.at(size_t(post.input)); candidate[size_t(b)])
        post.operand = blocked(post.operand, formats[size_t(b)]);
    }
    program.kernel_calls[size_t(step.index)].dnnl_primitive = spec;
  }
  for (size_t b = 0; b < program.buffers.size(); ++b) {
    if (!candidate[b]) continue;
    LoweredBuffer& buffer = program.buffers[b];
    buffer.layout = formats[b];
    buffer.layout_bytes = dnnl_tensor_bytes({buffer.type->shape, {}, formats[b]});
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
      // The kernel input may be the primitive's operand too (conv(x) + x
      // passes x once): writing over it would change what the primitive reads.
      bool reads_otherwise = spec.src_input == post.input || spec.weights_input == post.input ||
                             spec.bias_input == post.input;
      for (const PrimitivePostOp& other : spec.post_ops)
        reads_otherwise |= &other != &post && (other.input == post.input || other.bias_input == post.input);
      for (size_t i = 0; i < step.inputs.size(); ++i) reads_otherwise |= step.inputs[i] == b && int(i) != post.input;
      if (!reads_otherwise && residual.layout == out.layout && residual.bytes() == out.bytes() &&
          residual.type->dtype == out.type->dtype && residual.type->shape == out.type->shape)
        residuals.push_back(b);
    }
    step.in_place_candidates = residuals;
  }
}

}  // namespace switchyard
