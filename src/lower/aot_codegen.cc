// Generation of the AOT entry function: readable C++ that names every buffer
// and comments every step with what it runs and where it came from.
#include "lower/aot_codegen.h"

#include <algorithm>
#include <set>
#include <sstream>

#include "ir/device_kind.h"
#include "lower/queue_schedule.h"
#include "runtime/model_description.h"
#include "switchyard/model_abi.h"

namespace switchyard {

namespace {

// Text safe inside a one-line // comment.
std::string one_line(std::string text) {
  for (char& c : text)
    if (c == '\n' || c == '\r') c = ' ';
  return text;
}

std::string span_note(const Span& span) { return span.defined() ? " (" + one_line(span.to_string()) + ")" : ""; }

// `text` (printable ASCII: the description is JSON with non-ASCII escaped) as
// C++ string literals of at most 100 characters each, one per line.
std::string string_literal_lines(const std::string& text, const std::string& indent) {
  constexpr size_t kCharsPerLine = 100;
  std::string lines;
  for (size_t begin = 0; begin < text.size(); begin += kCharsPerLine) {
    lines += indent + "\"";
    for (char c : text.substr(begin, kCharsPerLine)) {
      if (c == '"' || c == '\\' || c == '?') lines += '\\';  // '?': no trigraph can form
      lines += c;
    }
    lines += "\"\n";
  }
  return lines.empty() ? indent + "\"\"\n" : lines;
}

// Per device: whether it finishes its work before a step returns (a kind
// that can be the host runs its kernels on the calling thread).
std::vector<bool> synchronous_devices(const Manifest& manifest) {
  std::vector<bool> synchronous;
  for (const ManifestDevice& device : manifest.devices) {
    const DeviceKindInfo* kind = find_device_kind(device.kind);
    synchronous.push_back(kind && kind->can_be_host);
  }
  return synchronous;
}

// Steps per function of the entry: a C++ compiler's time grows faster than
// a function's length (bench/pipeline_bench.cc, BM_BuildLetChain).
constexpr size_t kStepsPerFunction = 256;

class EntryWriter {
 public:
  EntryWriter(const LoweredProgram& program, const MemoryPlan& plan, const std::vector<int>& tensor_of_buffer,
              const Manifest& manifest)
      : program_(program), plan_(plan), tensor_of_buffer_(tensor_of_buffer), manifest_(manifest),
        weight_blocks_(weight_blocks(manifest)), schedule_(schedule_queues(program, plan, tensor_of_buffer,
                                                                           synchronous_devices(manifest))) {}

  std::string write() {
    out_ << "// The entry function of a Switchyard model (@" << program_.entry
         << "), generated: it runs each kernel\n"
         << "// and device copy in order on statically planned arenas. Kernels live in their own\n"
         << "// translation units; the runtime provides the services (include/switchyard/model_abi.h).\n"
         << "#include <cstring>\n";
    out_ << "#include \"switchyard/model_abi.h\"\n\n";
    write_kernel_declarations();
    out_ << "extern \"C\" int " SY_MODEL_ABI_VERSION_SYMBOL "(void) { return SY_MODEL_ABI_VERSION; }\n\n";
    write_in_order();
    write_queues();
    return out_.str();
  }

 private:
  // sy_model_run: every step in program order, on the calling thread.
  void write_in_order() {
    std::vector<StepList> ranges = step_ranges();
    if (ranges.size() == 1) {
      out_ << "extern \"C\" int " SY_MODEL_RUN_SYMBOL "(const SyRunArgs* args) {\n";
      write_body(ranges[0], /*every_arena=*/true, /*events=*/false);
      out_ << "  return 0;\n}\n";
      return;
    }
    for (size_t r = 0; r < ranges.size(); ++r) {
      out_ << "// Steps " << ranges[r].front() << " to " << ranges[r].back() << ".\n";
      // Not inlined: -O1 inlines a static function called once, which would make one function again.
      out_ << "__attribute__((noinline)) static void run_steps_" << r << "(const SyRunArgs* args) {\n";
      write_body(ranges[r], /*every_arena=*/false, /*events=*/false);
      out_ << "}\n\n";
    }
    out_ << "extern \"C\" int " SY_MODEL_RUN_SYMBOL "(const SyRunArgs* args) {\n";
    for (size_t r = 0; r < ranges.size(); ++r) out_ << "  run_steps_" << r << "(args);\n";
    out_ << "  return 0;\n}\n";
  }

  // sy_model_run_queue and sy_model_schedule: each device's steps as a queue
  // of its own, ordered with the others through events (lower/queue_schedule.h).
  void write_queues() {
    const QueueSchedule& s = schedule_;
    out_ << "\n";
    if (!s.why_sequential.empty()) out_ << "// The devices run in order: " << one_line(s.why_sequential) << ".\n";
    for (size_t q = 0; q < s.queue_devices.size(); ++q) {
      const std::vector<int>& steps = s.queue_steps[q];
      size_t parts = (steps.size() + kStepsPerFunction - 1) / kStepsPerFunction;
      for (size_t p = 0; p < parts; ++p) {
        StepList part(steps.begin() + long(p * kStepsPerFunction),
                      steps.begin() + long(std::min(steps.size(), (p + 1) * kStepsPerFunction)));
        out_ << "// Queue " << q << " (" << device_name(s.queue_devices[q]) << "), part " << p << ".\n";
        out_ << "__attribute__((noinline)) static int run_queue_" << q << "_" << p << "(const SyRunArgs* args) {\n";
        write_body(part, /*every_arena=*/false, /*events=*/true);
        out_ << "  return 0;\n}\n\n";
      }
      out_ << "static int run_queue_" << q << "(const SyRunArgs* args) {\n";
      for (size_t p = 0; p < parts; ++p) out_ << "  if (run_queue_" << q << "_" << p << "(args) != 0) return 1;\n";
      out_ << "  return 0;\n}\n\n";
    }
    out_ << "extern \"C\" int " << SY_MODEL_RUN_QUEUE_SYMBOL << "(const SyRunArgs* args, int queue) {\n"
         << "  switch (queue) {\n";
    for (size_t q = 0; q < s.queue_devices.size(); ++q)
      out_ << "    case " << q << ": return run_queue_" << q << "(args);\n";
    out_ << "    default: (void)args; return 1;\n  }\n}\n\n";
    out_ << "static const int queue_devices[] = {";
    for (size_t q = 0; q < s.queue_devices.size(); ++q) out_ << (q ? ", " : "") << s.queue_devices[q];
    out_ << (s.queue_devices.empty() ? "-1" : "") << "};\n";
    out_ << "static const SyModelSchedule schedule = {" << s.queue_devices.size() << ", queue_devices, " << s.event_count
         << "};\n";
    out_ << "extern \"C\" const SyModelSchedule* " << SY_MODEL_SCHEDULE_SYMBOL << "(void) { return &schedule; }\n";
  }

 private:
  void write_kernel_declarations() {
    out_ << "// Kernels: (inputs, outputs, services, device index); buffers are dense, in call order.\n"
         << "extern \"C\" {\n";
    for (const KernelSource& k : program_.kernel_sources)
      if (!k.library_only() && k.image.empty())
        out_ << "void " << k.name << "(const void* const*, void* const*, const SyRuntimeServices*, int);\n";
    out_ << "}\n\n";
  }

  using StepList = std::vector<int>;  // indices into program_.steps, in program order

  // The steps in runs of about kStepsPerFunction, each ending outside any if.
  std::vector<StepList> step_ranges() const {
    std::vector<StepList> ranges{{}};
    int depth = 0;
    for (size_t i = 0; i < program_.steps.size(); ++i) {
      LoweredStep::Kind kind = program_.steps[i].kind;
      depth += kind == LoweredStep::Kind::kIfBegin ? 1 : kind == LoweredStep::Kind::kIfEnd ? -1 : 0;
      ranges.back().push_back(int(i));
      if (depth == 0 && ranges.back().size() >= kStepsPerFunction && i + 1 < program_.steps.size()) ranges.emplace_back();
    }
    return ranges;
  }

  // The services, bases, buffers and steps of `steps`, as a function body.
  void write_body(const StepList& steps, bool every_arena, bool events) {
    std::set<int> used = used_buffers(steps);
    out_ << "  const SyRuntimeServices* services = args->services;\n";
    write_bases(used, every_arena);
    write_buffers(used);
    out_ << "\n";
    write_steps(steps, events);
  }

  std::set<int> used_buffers(const StepList& steps) const {
    std::set<int> used;
    for (int i : steps) {
      const LoweredStep& step = program_.steps[size_t(i)];
      used.insert(step.inputs.begin(), step.inputs.end());
      used.insert(step.outputs.begin(), step.outputs.end());
    }
    return used;
  }

  // The arenas (every one, or those `used` points into) and the weight
  // blocks `used` points into.
  void write_bases(const std::set<int>& used, bool every_arena) {
    std::set<int> weight_devices;
    std::set<size_t> arenas;
    for (int b : used) {
      const LoweredBuffer& buffer = program_.buffers[size_t(b)];
      if (buffer.kind == LoweredBuffer::Kind::kWeight) weight_devices.insert(buffer.device);
      if (buffer.kind == LoweredBuffer::Kind::kIntermediate) arenas.insert(arena_index(buffer));
    }
    if (!plan_.arenas.empty()) out_ << "  // Workspace arenas, one per device and memory scope.\n";
    for (size_t a = 0; a < plan_.arenas.size(); ++a) {
      if (!every_arena && !arenas.count(a)) continue;
      const ArenaPlan& arena = plan_.arenas[a];
      out_ << "  char* const arena_" << a << " = static_cast<char*>(args->arenas[" << a << "]);  // "
           << device_name(arena.key.device) << " scope " << arena.key.scope << ": " << arena.bytes
           << " bytes (lower bound " << arena.lower_bound_bytes << ")\n";
    }
    if (!weight_devices.empty()) out_ << "  // Weight blocks, one per device.\n";
    for (int d : weight_devices)
      out_ << "  const char* const weights_" << d << " = static_cast<const char*>(args->weights[" << d << "]);  // "
           << device_name(d) << "\n";
  }

  void write_buffers(const std::set<int>& used) {
    out_ << "  // Buffers: what each holds, its type and device.\n";
    for (int b : used) {
      const LoweredBuffer& buffer = program_.buffers[size_t(b)];
      bool read_only = buffer.kind == LoweredBuffer::Kind::kInput || buffer.kind == LoweredBuffer::Kind::kWeight;
      out_ << "  " << (read_only ? "const void* const " : "void* const ") << "b" << b << " = ";
      switch (buffer.kind) {
        case LoweredBuffer::Kind::kInput:
          out_ << "args->inputs[" << buffer.index << "]";
          break;
        case LoweredBuffer::Kind::kOutput:
          out_ << "args->outputs[" << buffer.index << "]";
          break;
        case LoweredBuffer::Kind::kWeight: {
          const ManifestWeight& w = manifest_.weights[size_t(buffer.index)];
          out_ << "weights_" << buffer.device << " + " << w.offset - weight_blocks_[size_t(w.device)].begin;
          break;
        }
        case LoweredBuffer::Kind::kIntermediate: {
          int t = tensor_of_buffer_[size_t(b)];
          out_ << "arena_" << arena_index(buffer) << " + " << plan_.offsets[size_t(t)];
          break;
        }
      }
      out_ << ";  // " << one_line(buffer.label) << ": " << type_to_string(buffer.type) << " on "
           << device_name(buffer.device) << (buffer.layout.empty() ? "" : ", oneDNN layout " + buffer.layout) << "\n";
    }
  }

  void write_steps(const StepList& steps, bool events) {
    int depth = 1;
    auto indent = [&] { return std::string(size_t(2 * depth), ' '); };
    for (int i : steps) {
      const LoweredStep& step = program_.steps[size_t(i)];
      if (events) write_waits(i);
      switch (step.kind) {
        case LoweredStep::Kind::kKernel: {
          const LoweredKernelCall& call = program_.kernel_calls[size_t(step.index)];
          const KernelSource& source = program_.kernel_sources[size_t(call.source)];
          const std::string& symbol = source.name;
          std::string in = indent();
          out_ << in << "// kernel " << step.index << ": " << symbol << " on " << device_name(call.device)
               << span_note(call.span) << "\n";
          out_ << in << "{\n";
          if (!step.inputs.empty()) out_ << in << "  const void* const inputs[] = {" << buffer_list(step.inputs) << "};\n";
          if (!step.outputs.empty()) out_ << in << "  void* const outputs[] = {" << buffer_list(step.outputs) << "};\n";
          out_ << in << "  services->kernel_begin(services->ctx, " << step.index << ");\n";
          std::string arguments = std::string(step.inputs.empty() ? "nullptr" : "inputs") + ", " +
                                  (step.outputs.empty() ? "nullptr" : "outputs");
          if (source.library_only())
            out_ << in << "  services->run_primitive(services->ctx, " << call.device << ", " << arguments
                 << ");  // made when the artifact loaded\n";
          else if (!source.image.empty()) {
            if (source.primitive)
              out_ << in << "  services->run_primitive(services->ctx, " << call.device << ", " << arguments
                   << ");  // cuBLASLt or cuDNN, made when the artifact loaded; the loops read its result\n";
            write_launches(source, step, call.device, in + "  ");
          }
          else
            out_ << in << "  " << symbol << "(" << arguments << ", services, " << call.device << ");\n";
          out_ << in << "  services->kernel_end(services->ctx, " << step.index << ");\n";
          out_ << in << "}\n";
          break;
        }
        case LoweredStep::Kind::kCopy: {
          const LoweredCopy& copy = program_.copies[size_t(step.index)];
          out_ << indent() << "// copy " << step.index << ": " << device_name(copy.src_device) << " -> "
               << device_name(copy.dst_device) << span_note(copy.span) << "\n";
          out_ << indent() << "services->device_copy(services->ctx, " << step.index << ", " << copy.dst_device
               << ", b" << step.outputs[0] << ", " << copy.src_device << ", b" << step.inputs[0] << ", "
               << copy.bytes << ");\n";
          break;
        }
        case LoweredStep::Kind::kMove: {
          const LoweredBuffer& to = program_.buffers[size_t(step.outputs[0])];
          // Only a kind that can be the host has memory the host addresses.
          const DeviceKindInfo* kind = find_device_kind(manifest_.devices.at(size_t(to.device)).kind);
          std::string from = "b" + std::to_string(step.inputs[0]);
          if (step.offset != 0)
            from = "static_cast<const unsigned char*>(" + from + ") + " + std::to_string(step.offset);
          if (!kind || !kind->can_be_host) {
            out_ << indent() << "services->device_move(services->ctx, " << to.device << ", b" << step.outputs[0]
                 << ", " << from << ", " << to.bytes() << ");  // on " << device_name(to.device)
                 << span_note(step.span) << "\n";
            break;
          }
          out_ << indent() << "std::memcpy(b" << step.outputs[0] << ", " << from << ", " << to.bytes()
               << ");  // on " << device_name(to.device) << span_note(step.span) << "\n";
          break;
        }
        case LoweredStep::Kind::kIfBegin:
          out_ << indent() << "if (*static_cast<const unsigned char*>(b" << step.inputs[0] << ") != 0) {  // if"
               << span_note(step.span) << "\n";
          ++depth;
          break;
        case LoweredStep::Kind::kElse:
          out_ << std::string(size_t(2 * (depth - 1)), ' ') << "} else {\n";
          break;
        case LoweredStep::Kind::kIfEnd:
          --depth;
          out_ << indent() << "}\n";
          break;
      }
      if (events && schedule_.event_of_step[size_t(i)] >= 0)
        out_ << "  services->signal_event(services->ctx, " << schedule_.event_of_step[size_t(i)] << ");  // step " << i
             << " done\n";
    }
  }

  // Before step `step` of a queue: the steps of other queues it waits for.
  void write_waits(int step) {
    for (int earlier : schedule_.waits[size_t(step)])
      out_ << "  if (services->wait_event(services->ctx, " << schedule_.event_of_step[size_t(earlier)]
           << ") != 0) return 1;  // step " << step << " waits for step " << earlier << "\n";
  }

  // A device image's functions, queued in order on the device's stream.
  void write_launches(const KernelSource& source, const LoweredStep& step, int device, const std::string& in) {
    std::vector<std::string> buffers;
    for (const kernel_ir::Buffer& b : source.kernel_ir->buffers)
      buffers.push_back("b" + std::to_string(b.role == kernel_ir::BufferRole::kInput ? step.inputs.at(size_t(b.slot))
                                                                                      : step.outputs.at(size_t(b.slot))));
    if (source.launches.empty()) {
      out_ << in << "// The result is empty: nothing to launch.\n";
      return;
    }
    out_ << in << "const void* const buffers[] = {";
    for (size_t i = 0; i < buffers.size(); ++i) out_ << (i ? ", " : "") << buffers[i];
    out_ << "};  // the kernel's buffers, in its order\n";
    for (size_t f = 0; f < source.launches.size(); ++f) {
      const ImageLaunch& launch = source.launches[f];
      out_ << in << "services->launch_kernel(services->ctx, " << device << ", " << f << ", " << launch.grid << ", "
           << launch.block << ", buffers, " << buffers.size() << ");  // " << launch.function << "\n";
    }
  }

  static std::string buffer_list(const std::vector<int>& buffers) {
    std::string text;
    for (size_t i = 0; i < buffers.size(); ++i) text += (i ? ", b" : "b") + std::to_string(buffers[i]);
    return text;
  }

  size_t arena_index(const LoweredBuffer& buffer) const {
    for (size_t a = 0; a < plan_.arenas.size(); ++a)
      if (plan_.arenas[a].key.device == buffer.device && plan_.arenas[a].key.scope == buffer.scope) return a;
    return 0;
  }

  const std::string& device_name(int device) const { return manifest_.devices.at(size_t(device)).name; }

  const LoweredProgram& program_;
  const MemoryPlan& plan_;
  const std::vector<int>& tensor_of_buffer_;
  const Manifest& manifest_;
  const std::vector<WeightBlock> weight_blocks_;
  const QueueSchedule schedule_;
  std::ostringstream out_;
};

}  // namespace

std::string generate_entry_source(const LoweredProgram& program, const MemoryPlan& plan,
                                  const std::vector<int>& tensor_of_buffer, const Manifest& manifest) {
  return EntryWriter(program, plan, tensor_of_buffer, manifest).write();
}

std::string generate_description_source(const Manifest& manifest) {
  return "// What this library was built for: its manifest, but for its own hash (the runtime\n"
         "// hashes model.so itself). It loads the library only with a manifest.json that\n"
         "// matches (runtime/model_description.h).\n"
         "extern \"C\" const char* " SY_MODEL_DESCRIPTION_SYMBOL "(void) {\n"
         "  return\n" +
         string_literal_lines(model_description(manifest), "      ") + "      ;\n}\n";
}

}  // namespace switchyard
