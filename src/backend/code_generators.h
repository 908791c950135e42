// The code generator of each device kind, one row per kind in
// code_generators.cc: how a primitive function becomes a kernel for a
// target of that kind, and the compiler flags its code is built with. A
// kind without a row (cuda, so far) has devices the backend cannot compile.
#pragma once

#include <string>
#include <vector>

#include "backend/kernel.h"
#include "ir/virtual_device.h"

namespace switchyard {

struct CodeGenerator {
  DeviceKind kind;
  KernelSource (*generate)(const Function& primitive, const std::string& name,
                           const std::vector<bool>& constant_inputs);
  // The translation unit of a kernel built as kernel IR.
  std::string (*render)(const kernel_ir::Kernel& kernel, const std::string& name);
  std::vector<std::string> (*compile_flags)(const Target* target);
};

// Null when the kind has no code generator.
const CodeGenerator* code_generator_for(DeviceKind kind);

}  // namespace switchyard
