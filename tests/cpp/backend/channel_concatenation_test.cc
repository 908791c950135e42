// A concatenation of images along their channels between oneDNN primitives
// (SqueezeNet's Fire, GoogLeNet's Inception, DenseNet's dense layers) keeps
// the primitives' layout: its parts and result stay channels last or in
// channel blocks, each part copied into its channels, so no conversion to
// dense and back surrounds it; and it computes what the interpreter does.
#include <gtest/gtest.h>

#include <set>

#include "aot_test_util.h"
#include "ir/functor.h"
#include "layout/plan_layouts.h"
#include "lower/lower.h"
#include "pipeline/pass_table.h"
#include "text/parser.h"
#include "text/printer.h"
#include "transform/instruments.h"

namespace switchyard::testing {
namespace channel_concatenation_test {

// conv0 (16 channels) -> two branches of `a` and `b` channels -> their
// concatenation (with DenseNet's per-channel scale and ReLU when `scaled`,
// or an input of the result's shape added when `residual`) -> conv3 ->
// softmax (a loop). A batch of two images.
std::string branches(int a, int b, bool scaled = false, bool residual = false) {
  std::string A = std::to_string(a), B = std::to_string(b), C = std::to_string(a + b);
  std::string joined = "concatenate((%1, %2), axis=1)";
  if (scaled) joined = "nn.relu(multiply(" + joined + ", %s))";
  if (residual) joined = "add(" + joined + ", %r)";
  return "def @main(%x: Tensor[(2, 3, 8, 8), float32], %w0: Tensor[(16, 3, 3, 3), float32],\n"
         "          %wa: Tensor[(" + A + ", 16, 1, 1), float32], %wb: Tensor[(" + B + ", 16, 3, 3), float32],\n"
         "          %r: Tensor[(2, " + C + ", 8, 8), float32], %s: Tensor[(" + C + ", 1, 1), float32],\n"
         "          %w3: Tensor[(16, " + C + ", 3, 3), float32]) -> Tensor[(2, 16, 8, 8), float32] {\n"
         "  %0 = nn.relu(nn.conv2d(%x, %w0, padding=[1, 1]));\n"
         "  %1 = nn.relu(nn.conv2d(%0, %wa));\n"
         "  %2 = nn.relu(nn.conv2d(%0, %wb, padding=[1, 1]));\n"
         "  %3 = " + joined + ";\n"
         "  nn.softmax(nn.conv2d(%3, %w3, padding=[1, 1]), axis=1)\n"
         "}\n";
}

std::vector<LayoutRule> rules_of(const std::vector<std::string>& pins) {
  std::vector<LayoutRule> rules;
  for (const std::string& pin : pins) rules.push_back(parse_layout_rule(pin));
  return rules;
}

// The default pipeline and PlanLayouts (channels last preferred), checked
// after every pass, lowered with the layouts applied.
LoweredProgram planned_program(const std::string& text, const std::vector<std::string>& pins = {}) {
  IRModule mod = parse_module(text, "branches.sy");
  PassContext context;
  context.instruments.push_back(std::make_shared<InvariantChecker>());
  PassContext::Scope scope(context);
  IRModule planned = default_pipeline({CompilationConfig::parse("cpu:0"), {}})(mod, context);
  planned = PlanLayouts(16, true, rules_of(pins))(planned, context);
  LoweredProgram program = lower_entry(planned, "main", CompilationConfig::parse("cpu:0"));
  generate_kernels(program, CompilationConfig::parse("cpu:0"));
  apply_layouts(program);
  return program;
}

// The layout of the kernel that concatenates (its generated loops'), and
// whether its code copies parts in that layout.
struct Concatenation {
  std::string layout;
  bool by_laid_out_parts = false;
};

Concatenation concatenation_of(const LoweredProgram& program) {
  for (const KernelSource& source : program.kernel_sources)
    if (source.kernel_ir && source.kernel_ir->comment.find("concatenate") != std::string::npos)
      return {source.layout, source.code.find("of the channel concatenation") != std::string::npos};
  ADD_FAILURE() << "no kernel concatenates";
  return {};
}

// Builds `text` with `pins`, runs it on random inputs and expects the
// interpreter's result.
void expect_artifact_matches_interpreter(const std::string& text, const std::string& name,
                                         const std::vector<std::string>& pins = {}) {
  IRModule mod = parse_module(text, "branches.sy");
  BuildOptions options = aot_options("cpu:0");
  options.layout_rules = rules_of(pins);
  std::string dir = aot_scratch_dir(name) + "/artifact";
  build_artifact(mod, options, dir);
  std::map<std::string, NDArray> inputs = random_inputs(mod, 11);
  std::vector<NDArray> actual = run_artifact(dir, inputs), expected = interpret(mod, inputs);
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) EXPECT_EQ(compare_arrays(actual[i], expected[i], 1e-4, 1e-4), "");
}

TEST(ChannelConcatenation, KeepsChannelsLastBetweenPrimitives) {
  for (bool scaled : {false, true}) {
    SCOPED_TRACE(scaled ? "scaled and rectified" : "alone");
    // 13 + 21 channels: channels last takes any count.
    Concatenation c = concatenation_of(planned_program(branches(13, 21, scaled)));
    EXPECT_EQ(c.layout, "nhwc");
    EXPECT_TRUE(c.by_laid_out_parts);
    expect_artifact_matches_interpreter(branches(13, 21, scaled), scaled ? "concat_nhwc_scaled" : "concat_nhwc");
  }
}

TEST(ChannelConcatenation, InChannelBlocksWhenEveryPartIsWholeBlocks) {
  // Pinned on conv0 (line 5), whose set the branches and the concatenation join.
  const std::vector<std::string> pins{"node:branches.sy:5:*=nChw16c"};
  for (bool scaled : {false, true}) {
    SCOPED_TRACE(scaled ? "scaled and rectified" : "alone");
    Concatenation c = concatenation_of(planned_program(branches(16, 32, scaled), pins));
    EXPECT_EQ(c.layout, "nChw16c");
    EXPECT_TRUE(c.by_laid_out_parts);
    expect_artifact_matches_interpreter(branches(16, 32, scaled), scaled ? "concat_blocks_scaled" : "concat_blocks",
                                        pins);
  }
}

TEST(ChannelConcatenation, StaysDenseWhereAPartIsNotWholeBlocksOrAValueOfItsShapeIsRead) {
  // 8 + 40 channels in 16-channel blocks: the first part would split a block.
  Concatenation split = concatenation_of(planned_program(branches(8, 40), {"node:branches.sy:5:*=nChw16c"}));
  EXPECT_EQ(split.layout, "");
  expect_artifact_matches_interpreter(branches(8, 40), "concat_split_block", {"node:branches.sy:5:*=nChw16c"});
  // An input of the result's shape added after the concatenation would be
  // read at the result's element: the kernel stays a dense loop.
  Concatenation residual = concatenation_of(planned_program(branches(13, 21, false, true)));
  EXPECT_FALSE(residual.by_laid_out_parts);
  expect_artifact_matches_interpreter(branches(13, 21, false, true), "concat_residual");
}

// Two dense layers as DenseNet's: each concatenates the block's input and
// every layer's output so far, scaled and rectified, its total channels
// growing (24, then 32) while its parts' widths repeat (16, 8, 8).
std::string dense_block() {
  return "def @main(%x: Tensor[(2, 3, 8, 8), float32], %w0: Tensor[(16, 3, 3, 3), float32],\n"
         "          %wa: Tensor[(8, 16, 1, 1), float32], %wb: Tensor[(8, 24, 3, 3), float32],\n"
         "          %s1: Tensor[(24, 1, 1), float32], %s2: Tensor[(32, 1, 1), float32],\n"
         "          %w3: Tensor[(16, 32, 3, 3), float32]) -> Tensor[(2, 16, 8, 8), float32] {\n"
         "  %0 = nn.relu(nn.conv2d(%x, %w0, padding=[1, 1]));\n"
         "  %1 = nn.relu(nn.conv2d(%0, %wa));\n"
         "  %2 = nn.relu(multiply(concatenate((%0, %1), axis=1), %s1));\n"
         "  %3 = nn.relu(nn.conv2d(%2, %wb, padding=[1, 1]));\n"
         "  %4 = nn.relu(multiply(concatenate((%0, %1, %3), axis=1), %s2));\n"
         "  nn.softmax(nn.conv2d(%4, %w3, padding=[1, 1]), axis=1)\n"
         "}\n";
}

// The names of the shared loop functions (sy_shared::sy_loop_...) `code` defines.
std::set<std::string> shared_loops(const std::string& code) {
  std::set<std::string> names;
  const std::string definition = "static void sy_loop_";
  for (size_t at = code.find(definition); at != std::string::npos; at = code.find(definition, at + 1))
    names.insert(code.substr(at + 12, code.find('(', at) - at - 12));
  return names;
}

TEST(ChannelConcatenation, ConcatenationsOfOtherWidthsShareTheirPartsLoops) {
  // Channels last (any width) and blocks of 8 (every part whole blocks).
  for (const char* pin : {"", "node:branches.sy:5:*=nChw8c"}) {
    SCOPED_TRACE(pin);
    std::vector<std::string> pins;
    if (*pin) pins.push_back(pin);
    LoweredProgram program = planned_program(dense_block(), pins);
    std::vector<const KernelSource*> concatenations;
    for (const KernelSource& source : program.kernel_sources)
      if (source.code.find("of the channel concatenation") != std::string::npos) concatenations.push_back(&source);
    ASSERT_EQ(concatenations.size(), 2u);
    // A part of 16 channels and one of 8: one function each, which the
    // second kernel's parts (16, 8, 8) call too, with their own buffers,
    // offsets and total channels.
    std::set<std::string> first = shared_loops(concatenations[0]->code);
    EXPECT_EQ(first.size(), 2u) << concatenations[0]->code;
    EXPECT_EQ(shared_loops(concatenations[1]->code), first) << concatenations[1]->code;
    for (const KernelSource* source : concatenations) {
      EXPECT_EQ(source->code.find("\nvoid concatenation_part_"), std::string::npos) << source->code;
      // Shared code names no node of the model (no comment of a kernel's).
      size_t begin = source->code.find("namespace sy_shared"), end = source->code.rfind("// namespace sy_shared");
      ASSERT_LT(begin, end);
      EXPECT_EQ(source->code.substr(begin, end - begin).find("branches.sy"), std::string::npos) << source->code;
    }
    // Built (two units, so a batch each, each object with its own static
    // copy of the shared functions), it computes what the interpreter does.
    expect_artifact_matches_interpreter(dense_block(), *pin ? "dense_block_blocks" : "dense_block_nhwc", pins);
  }
}

}  // namespace channel_concatenation_test
}  // namespace switchyard::testing
