// The code generators by device kind. A new kind's generator is its own
// files plus one row here.
#include "backend/code_generators.h"

#include "backend/cpu_render.h"
#include "backend/toolchain.h"

namespace switchyard {

namespace {

// Its -mcpu option picks the CPU model.
std::vector<std::string> cpu_compile_flags(const Target* target) { return Toolchain::cpu_flags(target->option("-mcpu")); }

}  // namespace

const CodeGenerator* code_generator_for(DeviceKind kind) {
  static const std::vector<CodeGenerator> generators = {
      {DeviceKind::kCPU, generate_cpu_kernel, render_cpu_kernel, cpu_compile_flags},
  };
  for (const CodeGenerator& g : generators)
    if (g.kind == kind) return &g;
  return nullptr;
}

}  // namespace switchyard
