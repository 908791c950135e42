// Each device kind's code generator is found by its kind: cpu kernels are
// C++ built into model.so with the target's flags, cuda kernels device
// images (cubins) compiled apart.
#include "targets/code_generators.h"

#include <gtest/gtest.h>

#include "toolchain/toolchain.h"

namespace switchyard {
namespace code_generators_test {

TEST(CodeGenerators, CpuHasOneWhoseFlagsFollowTheTargetsMcpu) {
  const CodeGenerator* cpu = code_generator_for(DeviceKind::kCPU);
  ASSERT_NE(cpu, nullptr);
  EXPECT_EQ(cpu->kind, DeviceKind::kCPU);
  EXPECT_EQ(cpu->compile_flags(Target::get("cpu -mcpu=skylake")), Toolchain::cpu_flags("skylake"));
  EXPECT_EQ(cpu->compile_flags(Target::get("cpu")), Toolchain::cpu_flags(""));
  EXPECT_EQ(cpu->compile_image, nullptr);
}

TEST(CodeGenerators, CudaKernelsAreCubinsBesideModelSo) {
  const CodeGenerator* cuda = code_generator_for(DeviceKind::kCUDA);
  ASSERT_NE(cuda, nullptr);
  EXPECT_EQ(cuda->kind, DeviceKind::kCUDA);
  EXPECT_EQ(cuda->compile_flags, nullptr);
  EXPECT_NE(cuda->compile_image, nullptr);
  EXPECT_STREQ(cuda->image_extension, ".cubin");
  EXPECT_EQ(code_generator_for(DeviceKind::kUnconstrained), nullptr);
}

}  // namespace code_generators_test
}  // namespace switchyard
