// Prints a LoweredProgram (see lowered_printer.h).
#include "lower/lowered_printer.h"

#include <algorithm>
#include <sstream>

namespace switchyard {

namespace {

const char* buffer_kind_name(LoweredBuffer::Kind kind) {
  switch (kind) {
    case LoweredBuffer::Kind::kIntermediate: return "intermediate";
    case LoweredBuffer::Kind::kInput: return "input";
    case LoweredBuffer::Kind::kOutput: return "output";
    case LoweredBuffer::Kind::kWeight: return "weight";
  }
  return "?";
}

std::string device_name(const CompilationConfig& config, int device) {
  if (device < 0 || size_t(device) >= config.devices.size()) return "device " + std::to_string(device) + "?";
  return config.devices[size_t(device)]->device_name();
}

std::string buffer_list(const std::vector<int>& buffers) {
  std::string text = "(";
  for (size_t i = 0; i < buffers.size(); ++i) text += (i ? ", b" : "b") + std::to_string(buffers[i]);
  return text + ")";
}

// "  # file.sy:3:5" when the span is known.
std::string where(const Span& span) { return span.defined() ? "  # " + span.to_string() : ""; }

void print_buffer(std::ostringstream& out, const LoweredProgram& program, const CompilationConfig& config,
                  LoweredMemory memory, size_t b) {
  const LoweredBuffer& buffer = program.buffers[b];
  out << "  b" << b << " " << buffer_kind_name(buffer.kind);
  if (buffer.index >= 0) out << " " << buffer.index;
  out << " " << device_name(config, buffer.device);
  if (buffer.scope != "global") out << " (" << buffer.scope << ")";
  out << " " << (buffer.type.defined() ? type_to_string(buffer.type) : std::string("(no type)"));
  if (!buffer.layout.empty()) out << " layout " << buffer.layout << " (" << buffer.layout_bytes << " B)";
  if (memory.plan && memory.tensor_of_buffer && b < memory.tensor_of_buffer->size()) {
    int tensor = (*memory.tensor_of_buffer)[b];
    if (tensor >= 0 && size_t(tensor) < memory.plan->offsets.size())
      out << " at offset " << memory.plan->offsets[size_t(tensor)];
  }
  if (!buffer.label.empty()) out << "  " << buffer.label;
  out << where(buffer.span) << "\n";
}

void print_kernel_step(std::ostringstream& out, const LoweredProgram& program, const CompilationConfig& config,
                       const LoweredStep& step) {
  out << "kernel call " << step.index;
  if (step.index < 0 || size_t(step.index) >= program.kernel_calls.size()) {
    out << " (no such call)";
    return;
  }
  const LoweredKernelCall& call = program.kernel_calls[size_t(step.index)];
  out << " " << device_name(config, call.device) << " ";
  if (call.source >= 0 && size_t(call.source) < program.kernel_sources.size()) {
    const KernelSource& kernel = program.kernel_sources[size_t(call.source)];
    out << kernel.name << " [" << kernel_kind(kernel) << "]";
  } else {
    out << call.base_name;
  }
  if (call.dnnl_primitive) out << " {" << primitive_kind_name(call.dnnl_primitive->kind) << " "
                               << call.dnnl_primitive->algorithm << "}";
}

void print_step(std::ostringstream& out, const LoweredProgram& program, const CompilationConfig& config, size_t s,
                int depth) {
  const LoweredStep& step = program.steps[s];
  out << "  " << s << " " << std::string(size_t(2 * depth), ' ');
  switch (step.kind) {
    case LoweredStep::Kind::kKernel: print_kernel_step(out, program, config, step); break;
    case LoweredStep::Kind::kCopy: {
      out << "copy " << step.index;
      if (step.index >= 0 && size_t(step.index) < program.copies.size()) {
        const LoweredCopy& copy = program.copies[size_t(step.index)];
        out << " " << device_name(config, copy.src_device) << " -> " << device_name(config, copy.dst_device) << " "
            << copy.bytes << " B";
      }
      break;
    }
    case LoweredStep::Kind::kMove:
      out << "move";
      if (step.offset != 0) out << " from byte " << step.offset;
      break;
    case LoweredStep::Kind::kIfBegin: out << "if"; break;
    case LoweredStep::Kind::kElse: out << "else"; break;
    case LoweredStep::Kind::kIfEnd: out << "end if"; break;
  }
  if (!step.inputs.empty() || !step.outputs.empty())
    out << " " << buffer_list(step.inputs) << " -> " << buffer_list(step.outputs);
  if (!step.in_place_candidates.empty()) out << " in place of " << buffer_list(step.in_place_candidates);
  out << where(step.span) << "\n";
}

}  // namespace

std::string print_lowered_program(const LoweredProgram& program, const CompilationConfig& config,
                                  LoweredMemory memory) {
  std::ostringstream out;
  out << "lowered @" << program.entry << ": " << program.buffers.size() << " buffers, " << program.steps.size()
      << " steps, " << program.kernel_calls.size() << " kernel calls (" << program.kernel_sources.size()
      << " kernels generated), " << program.copies.size() << (program.copies.size() == 1 ? " copy, " : " copies, ")
      << program.weights.size() << " weights\n";
  out << "inputs " << buffer_list(program.inputs) << ", outputs " << buffer_list(program.outputs) << "\n";
  out << "buffers:\n";
  for (size_t b = 0; b < program.buffers.size(); ++b) print_buffer(out, program, config, memory, b);
  out << "steps:\n";
  int depth = 0;
  for (size_t s = 0; s < program.steps.size(); ++s) {
    LoweredStep::Kind kind = program.steps[s].kind;
    if (kind == LoweredStep::Kind::kElse || kind == LoweredStep::Kind::kIfEnd) depth = std::max(0, depth - 1);
    print_step(out, program, config, s, depth);
    if (kind == LoweredStep::Kind::kIfBegin || kind == LoweredStep::Kind::kElse) ++depth;
  }
  return out.str();
}

}  // namespace switchyard
