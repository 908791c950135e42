// Each device kind's code generator is found by its kind; a kind without one
// (cuda, so far) is refused by the lowering check and the kernel generator.
#include "backend/code_generators.h"

#include <gtest/gtest.h>

#include "backend/toolchain.h"

namespace switchyard {
namespace {

TEST(CodeGenerators, CpuHasOneWhoseFlagsFollowTheTargetsMcpu) {
  const CodeGenerator* cpu = code_generator_for(DeviceKind::kCPU);
  ASSERT_NE(cpu, nullptr);
  EXPECT_EQ(cpu->kind, DeviceKind::kCPU);
  EXPECT_EQ(cpu->compile_flags(Target::get("cpu -mcpu=skylake")), Toolchain::cpu_flags("skylake"));
  EXPECT_EQ(cpu->compile_flags(Target::get("cpu")), Toolchain::cpu_flags(""));
}

TEST(CodeGenerators, CudaHasNoneYet) {
  EXPECT_EQ(code_generator_for(DeviceKind::kCUDA), nullptr);
  EXPECT_EQ(code_generator_for(DeviceKind::kUnconstrained), nullptr);
}

}  // namespace
}  // namespace switchyard
