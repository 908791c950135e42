// fuse_depthwise_convolutions: a 1x1 convolution and the depthwise 3x3
// that alone reads its result become one oneDNN primitive (a depthwise
// post-op), so the expanded tensor between them (MobileNetV2's 96 channels
// at 112x112, 4.8 MB) never goes to memory: oneDNN computes the depthwise
// rows from a few rows of the 1x1's result kept in its scratchpad.
#include <map>

#include "lower/lower.h"
#include "runtime/primitive_json.h"
#include "runtime/runtime_error.h"
#include "runtime/sha256.h"
#include "runtime/thread_pool.h"
#include "targets/cpu/runtime/dnnl_primitive.h"

namespace switchyard {

namespace {

const PrimitiveSpec* cpu_primitive_alone(const LoweredProgram& program, const LoweredStep& step) {
  if (step.kind != LoweredStep::Kind::kKernel) return nullptr;
  const LoweredKernelCall& call = program.kernel_calls[size_t(step.index)];
  const KernelSource& source = program.kernel_sources[size_t(call.source)];
  if (!source.library_only() || !runs_on_cpu(source)) return nullptr;
  return call.dnnl_primitive ? &*call.dnnl_primitive : &*source.primitive;
}

bool only_eltwise_post_ops(const PrimitiveSpec& spec) {
  for (const PrimitivePostOp& post : spec.post_ops)
    if (post.kind != PrimitivePostOp::Kind::kEltwise) return false;
  return true;
}

bool all_equal(const std::vector<int64_t>& values, int64_t value) {
  for (int64_t v : values)
    if (v != value) return false;
  return true;
}

// A dense 1x1 convolution, stride 1, no padding, writing a layout oneDNN
// computes in: oneDNN fuses a depthwise convolution only into those.
bool is_pointwise(const PrimitiveSpec& s) {
  return s.kind == PrimitiveKind::kConvolution && s.algorithm == "convolution_direct" && s.weights.dims.size() == 4 &&
         s.weights.dims[2] == 1 && s.weights.dims[3] == 1 && all_equal(s.strides, 1) && all_equal(s.dilation, 0) &&
         all_equal(s.padding_l, 0) && all_equal(s.padding_r, 0) && !s.dst.format.empty() &&
         only_eltwise_post_ops(s);
}

// A depthwise convolution over every channel of `source`'s result, in its
// layout, with one stride and one left padding in both dimensions.
bool is_depthwise_after(const PrimitiveSpec& s, const PrimitiveSpec& source) {
  const std::vector<int64_t>& w = s.weights.dims;
  return s.kind == PrimitiveKind::kConvolution && s.algorithm == "convolution_direct" && w.size() == 5 &&
         w[0] == source.dst.dims[1] && w[1] == 1 && w[2] == 1 && w[3] == w[4] && s.src == source.dst &&
         s.dst.format == source.dst.format && s.strides.size() == 2 && s.strides[0] == s.strides[1] &&
         s.padding_l.size() == 2 && s.padding_l[0] == s.padding_l[1] && all_equal(s.dilation, 0) &&
         only_eltwise_post_ops(s);
}

// Whether buffer `b` is read once in the program, and nowhere but by step `reader`.
bool read_only_by(const LoweredProgram& program, int b, size_t reader) {
  for (int output : program.outputs)
    if (output == b) return false;
  int reads = 0;
  for (size_t s = 0; s < program.steps.size(); ++s)
    for (int input : program.steps[s].inputs)
      if (input == b && (s != reader || ++reads > 1)) return false;
  return reads == 1;
}

// Whether the buffer holds the same bytes through every run (a weight) or
// is given (an input): fused into an earlier step, it is read earlier.
bool available_from_the_start(const LoweredProgram& program, int b) {
  LoweredBuffer::Kind kind = program.buffers[size_t(b)].kind;
  return kind == LoweredBuffer::Kind::kWeight || kind == LoweredBuffer::Kind::kInput;
}

Span joined(const Span& a, const Span& b) {
  std::vector<Span> parts = a.parts();
  for (const Span& part : b.parts()) parts.push_back(part);
  return Span::fused(parts);
}

PrimitiveSpec fused_spec(const PrimitiveSpec& pointwise, const PrimitiveSpec& depthwise, int inputs) {
  PrimitiveSpec fused = pointwise;
  fused.dst = depthwise.dst;
  PrimitivePostOp post;
  post.kind = PrimitivePostOp::Kind::kDepthwise;
  post.input = inputs;
  post.operand = depthwise.weights;
  post.bias_input = depthwise.bias_input >= 0 ? inputs + 1 : -1;
  post.stride = depthwise.strides[0];
  post.padding = depthwise.padding_l[0];
  fused.post_ops.push_back(post);
  fused.post_ops.insert(fused.post_ops.end(), depthwise.post_ops.begin(), depthwise.post_ops.end());
  return fused;
}

// Whether oneDNN runs the fused primitive as one kernel here: otherwise it
// chains the two convolutions through a buffer of its own
// ("ref_fused_convolution"), no faster than two primitives.
bool runs_as_one_kernel(const PrimitiveSpec& fused, int threads) {
  try {
    DnnlPrimitive primitive(fused, threads);
    return primitive.implementation().rfind("ref_fused", 0) != 0;
  } catch (const RuntimeError&) {
    return false;
  }
}

std::string strip_fused_prefix(const std::string& name) {
  const std::string prefix = "fused_";
  return name.rfind(prefix, 0) == 0 ? name.substr(prefix.size()) : name;
}

// Removes kernel call `index` (no step runs it any more), renumbering the steps'.
void remove_kernel_call(LoweredProgram& program, int index) {
  program.kernel_calls.erase(program.kernel_calls.begin() + index);
  for (LoweredStep& step : program.steps)
    if (step.kind == LoweredStep::Kind::kKernel && step.index > index) --step.index;
}

// Drops the kernels no call uses any more, renumbering the calls' sources.
void remove_unused_kernel_sources(LoweredProgram& program) {
  std::vector<int> renumbered(program.kernel_sources.size(), -1);
  for (const LoweredKernelCall& call : program.kernel_calls) renumbered[size_t(call.source)] = 0;
  std::vector<KernelSource> kept;
  for (size_t k = 0; k < program.kernel_sources.size(); ++k)
    if (renumbered[k] == 0) {
      renumbered[k] = int(kept.size());
      kept.push_back(std::move(program.kernel_sources[k]));
    }
  program.kernel_sources = std::move(kept);
  for (LoweredKernelCall& call : program.kernel_calls) call.source = renumbered[size_t(call.source)];
}

}  // namespace

void fuse_depthwise_convolutions(LoweredProgram& program) {
  std::map<std::string, bool> pays;         // by the fused spec's text
  std::map<std::string, int> fused_source;  // by the fused spec's text and target
  const int threads = default_thread_count();
  bool fused_any = false;
  // The depthwise step must come right after the 1x1: the fused step runs
  // where the 1x1 did.
  for (size_t a = 0; a + 1 < program.steps.size(); ++a) {
    const size_t b = a + 1;
    const PrimitiveSpec* pointwise = cpu_primitive_alone(program, program.steps[a]);
    const PrimitiveSpec* depthwise = cpu_primitive_alone(program, program.steps[b]);
    if (!pointwise || !depthwise || !is_pointwise(*pointwise) || !is_depthwise_after(*depthwise, *pointwise)) continue;
    LoweredStep& first = program.steps[a];
    const LoweredStep& second = program.steps[b];
    const int between = first.outputs.at(0);
    const int weights = second.inputs.at(size_t(depthwise->weights_input));
    const int bias = depthwise->bias_input >= 0 ? second.inputs.at(size_t(depthwise->bias_input)) : -1;
    if (first.outputs.size() != 1 || second.outputs.size() != 1 ||
        program.buffers[size_t(between)].kind != LoweredBuffer::Kind::kIntermediate ||
        second.inputs.at(size_t(depthwise->src_input)) != between || !read_only_by(program, between, b) ||
        !available_from_the_start(program, weights) || (bias >= 0 && !available_from_the_start(program, bias)))
      continue;
    LoweredKernelCall& call = program.kernel_calls[size_t(first.index)];
    const LoweredKernelCall& next = program.kernel_calls[size_t(second.index)];
    if (call.device != next.device) continue;

    const PrimitiveSpec fused = fused_spec(*pointwise, *depthwise, int(first.inputs.size()));
    const std::string text = primitive_spec_text(fused);
    auto known = pays.find(text);
    if (known == pays.end()) known = pays.emplace(text, runs_as_one_kernel(fused, threads)).first;
    if (!known->second) continue;

    // One kernel, named after both, for every call of this fused primitive.
    const KernelSource& source = program.kernel_sources[size_t(call.source)];
    const KernelSource& next_source = program.kernel_sources[size_t(next.source)];
    auto [it, inserted] = fused_source.emplace(text + "\n" + source.target, int(program.kernel_sources.size()));
    if (inserted) {
      KernelSource kernel = source;
      const std::string identity = "target: " + source.target + "\nprimitive: " + text;
      kernel.name = call.base_name + "_" + strip_fused_prefix(next.base_name) + "_" +
                    sha256_hex(identity.data(), identity.size()).substr(0, 12);
      kernel.inputs.push_back(program.buffers[size_t(weights)].type);
      if (bias >= 0) kernel.inputs.push_back(program.buffers[size_t(bias)].type);
      kernel.outputs = next_source.outputs;
      kernel.span = joined(source.span, next_source.span);
      kernel.primitive = fused;
      program.kernel_sources.push_back(std::move(kernel));
    }
    call.source = it->second;
    call.dnnl_primitive = fused;
    call.span = joined(call.span, next.span);
    first.inputs.push_back(weights);
    if (bias >= 0) first.inputs.push_back(bias);
    first.outputs = second.outputs;
    first.in_place_candidates.clear();
    first.span = joined(first.span, second.span);
    const int removed_call = second.index;
    program.steps.erase(program.steps.begin() + std::ptrdiff_t(b));
    remove_kernel_call(program, removed_call);
    fused_any = true;
  }
  if (fused_any) remove_unused_kernel_sources(program);
}

}  // namespace switchyard
