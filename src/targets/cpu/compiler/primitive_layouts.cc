// apply_layouts: the layouts PlanLayouts gave IR values, onto the buffers
// and window primitives of the lowered program, checked.
#include <algorithm>
#include <exception>
#include <string>

#include "lower/lower.h"
#include "runtime/dtype.h"
#include "support/error.h"
#include "targets/cpu/runtime/dnnl_primitive.h"

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

[[noreturn]] void refuse(const LoweredBuffer& buffer, const std::string& why);

// A layout names the order of the elements itself: a primitive that reads or
// writes through permuted strides cannot take one (PlanLayouts keeps such
// values dense); a layout there would drop the permutation, a wrong answer.
PrimitiveTensor laid_out(PrimitiveTensor tensor, const LoweredBuffer& buffer) {
  if (buffer.layout.empty()) return tensor;
  if (strides_permuted(tensor)) refuse(buffer, "a primitive reads or writes it through permuted strides (a transpose fused into it)");
  tensor.format = buffer.layout;
  return tensor;
}

// What reads or writes a buffer, for errors: "kernel fused_nn_conv2d_add".
std::string step_name(const LoweredProgram& program, const LoweredStep& step) {
  switch (step.kind) {
    case LoweredStep::Kind::kKernel:
      return "kernel " + program.kernel_calls[size_t(step.index)].base_name;
    case LoweredStep::Kind::kCopy:
      return "a device copy";
    case LoweredStep::Kind::kMove:
      return "a move";
    case LoweredStep::Kind::kIfBegin:
    case LoweredStep::Kind::kElse:
    case LoweredStep::Kind::kIfEnd:
      return "an if";
  }
  return "a step";
}

[[noreturn]] void refuse(const LoweredBuffer& buffer, const std::string& why) {
  throw Error(ErrorKind::kBackend, "value " + buffer.label + " is laid out as " + buffer.layout + ", but " + why,
              buffer.span);
}

// The layout a kernel call's element loops read and write the tensors of
// its result's shape in: "" (dense) for every step but an element-wise
// kernel generated for a layout.
const std::string& loop_layout(const LoweredProgram& program, const LoweredStep& step) {
  static const std::string dense;
  if (step.kind != LoweredStep::Kind::kKernel) return dense;
  return program.kernel_sources[size_t(program.kernel_calls[size_t(step.index)].source)].layout;
}

// The inputs of other shapes than its result's that a laid-out kernel reads
// in its layout (a channel concatenation's parts).
const std::vector<int>& laid_out_parts(const LoweredProgram& program, const LoweredStep& step) {
  static const std::vector<int> none;
  if (step.kind != LoweredStep::Kind::kKernel) return none;
  return program.kernel_sources[size_t(program.kernel_calls[size_t(step.index)].source)].laid_out_parts;
}

// Whether a step is a copy between CPU devices or a whole move that reads
// and writes one layout: it moves the bytes as they lie (PlanLayouts lets a
// value keep its layout across a copy between CPU devices). One that
// changes the layout on the way is refused.
bool transfers_bytes_as_they_lie(const LoweredProgram& program, const LoweredStep& step) {
  if ((step.kind != LoweredStep::Kind::kCopy && step.kind != LoweredStep::Kind::kMove) || step.inputs.size() != 1 ||
      step.outputs.size() != 1 || step.offset != 0)
    return false;
  const LoweredBuffer& from = program.buffers[size_t(step.inputs[0])];
  const LoweredBuffer& to = program.buffers[size_t(step.outputs[0])];
  if (from.layout.empty() && to.layout.empty()) return false;
  if (from.layout != to.layout)
    throw Error(ErrorKind::kBackend,
                "value " + to.label + " is laid out as " + (to.layout.empty() ? "dense row-major" : to.layout) +
                    ", but " + step_name(program, step) + " writes it from " + from.label + ", laid out as " +
                    (from.layout.empty() ? "dense row-major" : from.layout),
                to.span);
  if (from.type->shape != to.type->shape || from.type->dtype != to.type->dtype)
    refuse(to, step_name(program, step) + " writes it from a tensor of another type");
  return true;
}

// Every laid-out buffer is an intermediate 4-d float32 or 8-bit tensor
// written once, by a window primitive or a kernel whose loops are generated
// for its layout (element-wise, or a convolution's epilogue), and read as a
// window primitive's source or residual or by such kernels; those kernels
// read and write every tensor of their result's shape in their layout, and
// the parts they name (a concatenation's, an anchored convolution's source)
// in it too.
void check_layouts(const LoweredProgram& program) {
  std::vector<int> writes(program.buffers.size(), 0);
  for (const LoweredStep& step : program.steps) {
    if (transfers_bytes_as_they_lie(program, step)) {
      ++writes[size_t(step.outputs[0])];
      continue;
    }
    const PrimitiveSpec* spec = window_primitive(program, step);
    const std::string& layout = loop_layout(program, step);
    const TensorTypeNode* result =
        step.outputs.empty() ? nullptr : program.buffers[size_t(step.outputs[0])].type.get();
    const std::vector<int>& parts = laid_out_parts(program, step);
    // Whether the laid-out kernel reads or writes `buffer` (its input
    // `input`, or an output: -1) in its layout.
    auto in_layout = [&](const LoweredBuffer& buffer, int input = -1) {
      return !layout.empty() && result &&
             (buffer.type->shape == result->shape || std::find(parts.begin(), parts.end(), input) != parts.end());
    };
    for (size_t i = 0; i < step.inputs.size(); ++i) {
      int b = step.inputs[i];
      const LoweredBuffer& buffer = program.buffers[size_t(b)];
      if (in_layout(buffer, int(i)) && buffer.layout != layout)
        throw Error(ErrorKind::kBackend,
                    "value " + buffer.label + " is laid out as " + (buffer.layout.empty() ? "dense row-major" : buffer.layout) +
                        ", but " + step_name(program, step) + " reads it as " + layout,
                    buffer.span);
      if (!buffer.layout.empty() && !in_layout(buffer, int(i)) && (!spec || !reads_only_as_activation(step, *spec, b)))
        refuse(buffer, step_name(program, step) + " reads it as dense row-major");
    }
    for (size_t o = 0; o < step.outputs.size(); ++o) {
      const LoweredBuffer& buffer = program.buffers[size_t(step.outputs[o])];
      ++writes[size_t(step.outputs[o])];
      if (!layout.empty() && buffer.layout != layout)
        throw Error(ErrorKind::kBackend,
                    "value " + buffer.label + " is laid out as " + (buffer.layout.empty() ? "dense row-major" : buffer.layout) +
                        ", but " + step_name(program, step) + " writes it as " + layout,
                    buffer.span);
      if (!buffer.layout.empty() && layout.empty() && (!spec || o > 0))
        refuse(buffer, step_name(program, step) + " writes it as dense row-major");
    }
  }
  for (int b : program.outputs)
    if (!program.buffers[size_t(b)].layout.empty())
      refuse(program.buffers[size_t(b)], "model outputs are dense row-major");
  for (size_t b = 0; b < program.buffers.size(); ++b) {
    const LoweredBuffer& buffer = program.buffers[b];
    if (buffer.layout.empty()) continue;
    if (buffer.kind != LoweredBuffer::Kind::kIntermediate)
      refuse(buffer, "model inputs, outputs and weights are dense row-major");
    const DType dtype = buffer.type->dtype;
    if (buffer.type->ndim() != 4 || (dtype != DType::kFloat32 && dtype != DType::kUInt8 && dtype != DType::kInt8))
      refuse(buffer, "only 4-d float32, uint8 and int8 images have a oneDNN layout here");
    if (writes[b] != 1) refuse(buffer, "it is written " + std::to_string(writes[b]) + " times");
  }
}

}  // namespace

void apply_layouts(LoweredProgram& program) {
  check_layouts(program);
  for (LoweredBuffer& buffer : program.buffers) {
    if (buffer.layout.empty()) continue;
    try {
      // oneDNN sizes float32 elements; a layout's padding scales with the element.
      buffer.layout_bytes = dnnl_tensor_bytes({buffer.type->shape, {}, buffer.layout}) / sizeof(float) *
                            uint64_t(dtype_bytes(buffer.type->dtype));
    } catch (const std::exception& e) {
      refuse(buffer, std::string("oneDNN has no such format: ") + e.what());
    }
  }
  // A copy of a laid-out value moves its padded bytes.
  for (const LoweredStep& step : program.steps)
    if (step.kind == LoweredStep::Kind::kCopy)
      program.copies.at(size_t(step.index)).bytes = program.buffers[size_t(step.inputs.at(0))].bytes();
  for (const LoweredStep& step : program.steps) {
    const PrimitiveSpec* source_spec = window_primitive(program, step);
    if (!source_spec) continue;
    PrimitiveSpec spec = *source_spec;
    spec.src = laid_out(spec.src, program.buffers[size_t(step.inputs.at(size_t(spec.src_input)))]);
    spec.dst = laid_out(spec.dst, program.buffers[size_t(step.outputs.at(0))]);
    for (PrimitivePostOp& post : spec.post_ops)
      if (post.kind == PrimitivePostOp::Kind::kSum)
        post.operand = laid_out(post.operand, program.buffers[size_t(step.inputs.at(size_t(post.input)))]);
    program.kernel_calls[size_t(step.index)].dnnl_primitive = spec;
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
