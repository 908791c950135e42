// Assembles a CPU kernel's translation unit.
#include "targets/cpu/compiler/cpu_unit.h"

namespace switchyard {

std::string assemble_cpu_unit(const CpuUnit& unit, const std::string& summary, const Span& span) {
  std::string scope = unit.name + "_detail";
  CodeWriter code;
  code.line("// Switchyard CPU kernel " + unit.name + ": " + summary);
  if (span.defined()) code.line("// From " + span.to_string());
  code.line("// Generated code: each parallel loop runs through services->parallel_for.");
  for (const char* header : {"<cstdint>", "<cstring>"}) code.line(std::string("#include ") + header);
  for (const std::string& header : unit.includes) code.line("#include " + header);
  code.line("#include \"switchyard/model_abi.h\"");
  code.line();
  code.append(cpu_prelude());
  code.append(unit.shared);
  code.line("namespace " + scope + " {");
  code.line();
  std::string helpers = cpu_helper_definitions(unit.helpers);
  if (!helpers.empty()) {
    code.append(helpers);
    code.line();
  }
  code.line("// The buffers of one run; every loop body receives them as its closure.");
  code.open("struct Buffers");
  for (const BufferField& f : unit.buffers)
    code.line((f.is_const ? "const " : "") + f.type + "* " + f.name + ";" +
              (f.comment.empty() ? "" : "  // " + f.comment));
  bool may_fault = helpers_may_fault(unit.helpers);
  if (may_fault) code.line("int* faults;  // SY_FAULT_* bits any element raised, reported when the loops end");
  code.close(";");
  code.line();
  code.append(unit.definitions);
  code.open(
      "void run(const void* const* inputs, void* const* outputs, const SyRuntimeServices* services, int device_index)");
  code.append(unit.setup);
  std::vector<std::string> initializers;
  for (const BufferField& f : unit.buffers) initializers.push_back(f.initializer);
  if (may_fault) {
    code.line("int faults = 0;");
    initializers.push_back("&faults");
  }
  code.line("Buffers buffers{" + join(initializers) + "};");
  code.append(unit.entry);
  if (may_fault) {
    code.line("// The loops have ended (parallel_for returns when every body has): report what they raised.");
    code.line("if (const int raised = __atomic_load_n(&faults, __ATOMIC_RELAXED))");
    code.line("  services->kernel_fault(services->ctx, raised);");
  }
  code.close();
  code.line();
  code.line("}  // namespace " + scope);
  code.line();
  code.line("extern \"C\" void " + unit.name +
            "(const void* const* inputs, void* const* outputs, const SyRuntimeServices* services, int device_index) {");
  code.line("  " + scope + "::run(inputs, outputs, services, device_index);");
  code.line("}");
  return code.str();
}

}  // namespace switchyard
