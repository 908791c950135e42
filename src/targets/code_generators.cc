// The code generators by device kind. A new kind's generator is its own
// folder (targets/<kind>/compiler) plus one row here.
#include "targets/code_generators.h"

#include "targets/cpu/compiler/codegen_cpu.h"
#include "targets/cuda/compiler/codegen_cuda.h"

namespace switchyard {

const CodeGenerator* code_generator_for(DeviceKind kind) {
  static const std::vector<const CodeGenerator*> generators = {
      &cpu_code_generator(),
      &cuda_code_generator(),
  };
  for (const CodeGenerator* g : generators)
    if (g->kind == kind) return g;
  return nullptr;
}

}  // namespace switchyard
