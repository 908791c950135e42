// Checks a LoweredProgram's invariants (see lowered_verifier.h).
#include "lower/lowered_verifier.h"

#include <vector>

#include "support/error.h"

namespace switchyard {

namespace {

class LoweredVerifier {
 public:
  LoweredVerifier(const LoweredProgram& program, const CompilationConfig& config, const std::string& stage)
      : program_(program), config_(config), stage_(stage) {}

  void run() {
    for (size_t b = 0; b < program_.buffers.size(); ++b) check_buffer(b);
    check_entry_buffers();
    std::vector<bool> written(program_.buffers.size(), false);
    int depth = 0;
    for (size_t s = 0; s < program_.steps.size(); ++s) check_step(s, &written, &depth);
    if (depth != 0) fail("the program ends inside an if (" + std::to_string(depth) + " unclosed)", Span());
  }

 private:
  [[noreturn]] void fail(const std::string& problem, const Span& span) const {
    throw Error(ErrorKind::kInvariant, "after " + stage_ + ": " + problem, span);
  }

  bool is_device(int device) const { return device >= 0 && size_t(device) < config_.devices.size(); }

  const LoweredBuffer& buffer(size_t s, int b) const {
    if (b < 0 || size_t(b) >= program_.buffers.size())
      fail("step " + std::to_string(s) + " names buffer " + std::to_string(b) + ", which does not exist",
           program_.steps[s].span);
    return program_.buffers[size_t(b)];
  }

  void check_buffer(size_t b) const {
    const LoweredBuffer& buffer = program_.buffers[b];
    std::string name = "buffer b" + std::to_string(b) + " (" + buffer.label + ")";
    if (!is_device(buffer.device)) fail(name + " is on device " + std::to_string(buffer.device) +
                                            ", which the build does not have", buffer.span);
    if (buffer.kind == LoweredBuffer::Kind::kWeight) {
      if (buffer.index < 0 || size_t(buffer.index) >= program_.weights.size())
        fail(name + " is weight " + std::to_string(buffer.index) + ", which does not exist", buffer.span);
      if (program_.weights[size_t(buffer.index)].device != buffer.device)
        fail(name + " holds a weight of another device", buffer.span);
    }
  }

  void check_entry_buffers() const {
    auto check = [&](const std::vector<int>& buffers, LoweredBuffer::Kind kind, const char* what) {
      for (size_t i = 0; i < buffers.size(); ++i) {
        int b = buffers[i];
        if (b < 0 || size_t(b) >= program_.buffers.size())
          fail(std::string(what) + " " + std::to_string(i) + " names buffer " + std::to_string(b) +
                   ", which does not exist", Span());
        const LoweredBuffer& buffer = program_.buffers[size_t(b)];
        if (buffer.kind != kind || buffer.index != int(i))
          fail(std::string(what) + " " + std::to_string(i) + " is buffer b" + std::to_string(b) + " (" +
                   buffer.label + "), which is not marked as that " + what, buffer.span);
      }
    };
    check(program_.inputs, LoweredBuffer::Kind::kInput, "input");
    check(program_.outputs, LoweredBuffer::Kind::kOutput, "output");
  }

  void check_reads_and_writes(size_t s, std::vector<bool>* written) const {
    const LoweredStep& step = program_.steps[s];
    for (int b : step.inputs) {
      const LoweredBuffer& read = buffer(s, b);
      bool produced = read.kind == LoweredBuffer::Kind::kIntermediate || read.kind == LoweredBuffer::Kind::kOutput;
      if (produced && !(*written)[size_t(b)])
        fail("step " + std::to_string(s) + " reads b" + std::to_string(b) + " (" + read.label +
                 ") before any step writes it", step.span);
    }
    for (int b : step.outputs) {
      const LoweredBuffer& out = buffer(s, b);
      if (out.kind == LoweredBuffer::Kind::kInput || out.kind == LoweredBuffer::Kind::kWeight)
        fail("step " + std::to_string(s) + " writes b" + std::to_string(b) + " (" + out.label +
                 "), an input or weight", step.span);
      (*written)[size_t(b)] = true;
    }
  }

  void check_kernel(size_t s) const {
    const LoweredStep& step = program_.steps[s];
    if (step.index < 0 || size_t(step.index) >= program_.kernel_calls.size())
      fail("step " + std::to_string(s) + " runs kernel call " + std::to_string(step.index) + ", which does not exist",
           step.span);
    const LoweredKernelCall& call = program_.kernel_calls[size_t(step.index)];
    std::string name = "kernel call " + std::to_string(step.index) + " (" + call.base_name + ")";
    for (const std::vector<int>* buffers : {&step.inputs, &step.outputs})
      for (int b : *buffers)
        if (buffer(s, b).device != call.device)
          fail(name + " on device " + std::to_string(call.device) + " reaches b" + std::to_string(b) + " on device " +
                   std::to_string(buffer(s, b).device), step.span);
    if (call.source < 0) return;  // kernels not generated yet
    if (size_t(call.source) >= program_.kernel_sources.size())
      fail(name + " runs kernel " + std::to_string(call.source) + ", which does not exist", step.span);
    const KernelSource& kernel = program_.kernel_sources[size_t(call.source)];
    if (kernel.inputs.size() != step.inputs.size() || kernel.outputs.size() != step.outputs.size())
      fail(name + ": kernel " + kernel.name + " takes " + std::to_string(kernel.inputs.size()) + " inputs and " +
               std::to_string(kernel.outputs.size()) + " outputs, the step passes " +
               std::to_string(step.inputs.size()) + " and " + std::to_string(step.outputs.size()), step.span);
    auto same_types = [&](const std::vector<TensorType>& types, const std::vector<int>& buffers, const char* what) {
      for (size_t i = 0; i < types.size(); ++i) {
        const TensorType& given = program_.buffers[size_t(buffers[i])].type;
        if (types[i].defined() && given.defined() &&
            (types[i]->dtype != given->dtype || types[i]->shape != given->shape))
          fail(name + ": kernel " + kernel.name + "'s " + what + " " + std::to_string(i) + " is " +
                   type_to_string(types[i]) + ", its buffer b" + std::to_string(buffers[i]) + " " +
                   type_to_string(given), step.span);
      }
    };
    same_types(kernel.inputs, step.inputs, "input");
    same_types(kernel.outputs, step.outputs, "output");
  }

  void check_transfer(size_t s) const {
    const LoweredStep& step = program_.steps[s];
    std::string name = "step " + std::to_string(s);
    if (step.inputs.size() != 1 || step.outputs.size() != 1)
      fail(name + " moves " + std::to_string(step.inputs.size()) + " buffers to " +
               std::to_string(step.outputs.size()) + ", not one to one", step.span);
    int from = buffer(s, step.inputs[0]).device, to = buffer(s, step.outputs[0]).device;
    if (step.kind == LoweredStep::Kind::kMove) {
      if (from != to) fail(name + " is a move between devices " + std::to_string(from) + " and " +
                               std::to_string(to) + " (a copy is needed)", step.span);
      // Laid-out buffers have their padded sizes only after apply_layouts, which checks their moves.
      const LoweredBuffer &source = buffer(s, step.inputs[0]), &target = buffer(s, step.outputs[0]);
      uint64_t read = source.bytes(), written = target.bytes();
      if (source.layout.empty() && target.layout.empty() && (step.offset > read || written > read - step.offset))
        fail(name + " moves " + std::to_string(written) + " bytes from byte " + std::to_string(step.offset) + " of b" +
                 std::to_string(step.inputs[0]) + ", which holds " + std::to_string(read), step.span);
      return;
    }
    if (step.index < 0 || size_t(step.index) >= program_.copies.size())
      fail(name + " runs copy " + std::to_string(step.index) + ", which does not exist", step.span);
    const LoweredCopy& copy = program_.copies[size_t(step.index)];
    if (copy.src_device != from || copy.dst_device != to)
      fail(name + ": copy " + std::to_string(step.index) + " goes from device " + std::to_string(copy.src_device) +
               " to " + std::to_string(copy.dst_device) + ", its buffers are on " + std::to_string(from) + " and " +
               std::to_string(to), step.span);
    // A laid-out buffer's size is known only once apply_layouts has given it.
    const LoweredBuffer &source = buffer(s, step.inputs[0]), &target = buffer(s, step.outputs[0]);
    const bool sized =
        (source.layout.empty() || source.layout_bytes > 0) && (target.layout.empty() || target.layout_bytes > 0);
    if (sized && (copy.bytes != source.bytes() || copy.bytes != target.bytes()))
      fail(name + ": copy " + std::to_string(step.index) + " moves " + std::to_string(copy.bytes) + " bytes from b" +
               std::to_string(step.inputs[0]) + " (" + std::to_string(source.bytes()) + " bytes) to b" +
               std::to_string(step.outputs[0]) + " (" + std::to_string(target.bytes()) + " bytes)",
           step.span);
  }

  void check_step(size_t s, std::vector<bool>* written, int* depth) const {
    const LoweredStep& step = program_.steps[s];
    switch (step.kind) {
      case LoweredStep::Kind::kKernel: check_kernel(s); break;
      case LoweredStep::Kind::kCopy:
      case LoweredStep::Kind::kMove: check_transfer(s); break;
      case LoweredStep::Kind::kIfBegin:
        if (step.inputs.size() != 1) fail("step " + std::to_string(s) + ": an if reads one condition", step.span);
        ++*depth;
        break;
      case LoweredStep::Kind::kElse:
      case LoweredStep::Kind::kIfEnd:
        if (*depth == 0) fail("step " + std::to_string(s) + ": an else or end outside an if", step.span);
        if (step.kind == LoweredStep::Kind::kIfEnd) --*depth;
        break;
    }
    check_reads_and_writes(s, written);
  }

  const LoweredProgram& program_;
  const CompilationConfig& config_;
  const std::string& stage_;
};

}  // namespace

void verify_lowered_program(const LoweredProgram& program, const CompilationConfig& config, const std::string& stage) {
  LoweredVerifier(program, config, stage).run();
}

}  // namespace switchyard
