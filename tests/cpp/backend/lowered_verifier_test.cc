// The lowered program's verifier accepts what lowering makes and names the
// stage, step and buffer of each broken invariant; the printer shows the
// buffers and steps.
#include <gtest/gtest.h>

#include "lower/lower.h"
#include "lower/lower_check.h"
#include "lower/lowered_printer.h"
#include "lower/lowered_verifier.h"
#include "pipeline/pass_table.h"
#include "support/error.h"
#include "support/test_paths.h"
#include "text/parser.h"

namespace switchyard {
namespace lowered_verifier_test {

struct Lowered {
  CompilationConfig config = CompilationConfig::parse("cpu:0,cpu:1");
  LoweredProgram program;
};

// The two-device MLP lowered: kernel on cpu:0, copy, kernel on cpu:1.
Lowered two_device_mlp() {
  Lowered lowered;
  PipelineOptions options;
  options.config = lowered.config;
  IRModule planned = default_pipeline(options)(parse_file(testing::example_models_dir() + "/mlp_two_devices.sy"));
  check_lowerable(planned, "main");
  lowered.program = lower_entry(planned, "main", lowered.config);
  return lowered;
}

// A one-device module lowered: two contiguous rows of %x, a move at an offset.
Lowered row_slice() {
  Lowered lowered;
  lowered.config = CompilationConfig::parse("cpu:0");
  PipelineOptions options;
  options.config = lowered.config;
  IRModule planned = default_pipeline(options)(parse_module(
      "def @main(%x: Tensor[(4, 3), float32]) {\n  strided_slice(%x, begin=[1], end=[3])\n}\n", "rows.sy"));
  check_lowerable(planned, "main");
  lowered.program = lower_entry(planned, "main", lowered.config);
  return lowered;
}

int first_step(const LoweredProgram& program, LoweredStep::Kind kind) {
  for (size_t s = 0; s < program.steps.size(); ++s)
    if (program.steps[s].kind == kind) return int(s);
  ADD_FAILURE() << "no such step";
  return 0;
}

std::string violation(const Lowered& lowered) {
  try {
    verify_lowered_program(lowered.program, lowered.config, "some-stage");
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvariant);
    return e.message();
  }
  ADD_FAILURE() << "the verifier accepted the program";
  return "";
}

TEST(LoweredVerifier, AcceptsWhatLoweringMakes) {
  Lowered lowered = two_device_mlp();
  EXPECT_NO_THROW(verify_lowered_program(lowered.program, lowered.config, "lower"));
}

TEST(LoweredVerifier, AKernelReachingABufferOnAnotherDeviceIsNamed) {
  Lowered lowered = two_device_mlp();
  LoweredProgram& p = lowered.program;
  const LoweredStep& kernel = p.steps[size_t(first_step(p, LoweredStep::Kind::kKernel))];
  p.buffers[size_t(kernel.outputs[0])].device = 1;  // its call is on cpu:0
  std::string message = violation(lowered);
  EXPECT_NE(message.find("after some-stage: kernel call 0"), std::string::npos) << message;
  EXPECT_NE(message.find("on device 0 reaches b"), std::string::npos) << message;
}

TEST(LoweredVerifier, ACopyBetweenTheWrongDevicesIsNamed) {
  Lowered lowered = two_device_mlp();
  lowered.program.copies[0].dst_device = 0;
  std::string message = violation(lowered);
  EXPECT_NE(message.find("copy 0 goes from device 0 to 0, its buffers are on 0 and 1"), std::string::npos) << message;
}

TEST(LoweredVerifier, AReadBeforeAnyWriteIsNamed) {
  Lowered lowered = two_device_mlp();
  LoweredProgram& p = lowered.program;
  std::swap(p.steps[0], p.steps[1]);  // the copy now runs before the kernel that writes its source
  std::string message = violation(lowered);
  EXPECT_NE(message.find("step 0 reads b"), std::string::npos) << message;
  EXPECT_NE(message.find("before any step writes it"), std::string::npos) << message;
}

TEST(LoweredVerifier, AStepWritingAnInputIsNamed) {
  Lowered lowered = two_device_mlp();
  LoweredProgram& p = lowered.program;
  p.steps[size_t(first_step(p, LoweredStep::Kind::kKernel))].outputs[0] = p.inputs[0];
  EXPECT_NE(violation(lowered).find("an input or weight"), std::string::npos);
}

TEST(LoweredVerifier, AnUnclosedIfAndAMissingBufferAreNamed) {
  Lowered unclosed = two_device_mlp();
  unclosed.program.steps.push_back({LoweredStep::Kind::kIfBegin, -1, {unclosed.program.inputs[0]}, {}, {}, Span()});
  EXPECT_NE(violation(unclosed).find("the program ends inside an if"), std::string::npos);
  Lowered missing = two_device_mlp();
  missing.program.steps[0].inputs[0] = 99;
  EXPECT_NE(violation(missing).find("step 0 names buffer 99, which does not exist"), std::string::npos);
}

TEST(LoweredVerifier, AKernelWhoseArityDiffersFromItsStepIsNamed) {
  Lowered lowered = two_device_mlp();
  generate_kernels(lowered.program, lowered.config);
  EXPECT_NO_THROW(verify_lowered_program(lowered.program, lowered.config, "generate-kernels"));
  LoweredProgram& p = lowered.program;
  p.kernel_sources[size_t(p.kernel_calls[0].source)].inputs.pop_back();
  std::string message = violation(lowered);
  EXPECT_NE(message.find("takes 2 inputs and 1 outputs, the step passes 3 and 1"), std::string::npos) << message;
}

TEST(LoweredVerifier, AMoveReadingPastItsSourceIsNamed) {
  Lowered lowered = row_slice();
  LoweredProgram& p = lowered.program;
  ASSERT_NO_THROW(verify_lowered_program(p, lowered.config, "lower"));
  LoweredStep& move = p.steps[size_t(first_step(p, LoweredStep::Kind::kMove))];
  EXPECT_EQ(move.offset, 12u);  // row 1 of 3 floats
  move.offset = 28;             // 24 bytes from byte 28 of 48
  std::string message = violation(lowered);
  EXPECT_NE(message.find("moves 24 bytes from byte 28 of b0, which holds 48"), std::string::npos) << message;
}

TEST(LoweredPrinter, ShowsAMoveAtAnOffset) {
  Lowered lowered = row_slice();
  std::string text = print_lowered_program(lowered.program, lowered.config);
  EXPECT_NE(text.find("move from byte 12 (b0) -> (b"), std::string::npos) << text;
}

TEST(LoweredPrinter, ShowsBuffersStepsAndTheCopy) {
  Lowered lowered = two_device_mlp();
  std::string text = print_lowered_program(lowered.program, lowered.config);
  EXPECT_NE(text.find("lowered @main: 8 buffers, 3 steps, 2 kernel calls"), std::string::npos) << text;
  EXPECT_NE(text.find("b0 input 0 cpu:0 Tensor[(1, 784), float32]"), std::string::npos) << text;
  EXPECT_NE(text.find("copy 0 cpu:0 -> cpu:1 2048 B"), std::string::npos) << text;
  EXPECT_NE(text.find("mlp_two_devices.sy:"), std::string::npos) << text;  // steps name their source lines
}

}  // namespace lowered_verifier_test
}  // namespace switchyard
