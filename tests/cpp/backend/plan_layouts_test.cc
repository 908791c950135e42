// PlanLayouts: a value's layout is a part of its device in the IR, chosen
// after fusion for values passed only between oneDNN convolutions and pools,
// printed and parsed with the module, carried by rewrites and compared by
// the invariant checker where a value passes between kernels; lowering reads
// it back and refuses a layout no primitive reads or writes.
#include <gtest/gtest.h>

#include "aot_test_util.h"
#include "ir/functor.h"
#include "ir/structural_equal.h"
#include "layout/plan_layouts.h"
#include "lower/lower.h"
#include "op/registry.h"
#include "pipeline/pass_table.h"
#include "runtime/artifact.h"
#include "support/error.h"
#include "targets/cpu/runtime/dnnl_primitive.h"
#include "text/parser.h"
#include "text/printer.h"
#include "transform/instruments.h"

namespace switchyard::testing {
namespace plan_layouts_test {

// conv -> pool -> conv -> conv adding the pool's result -> softmax (a loop
// kernel). With `depthwise`, the middle convolution is a depthwise one.
std::string pooled_block(bool depthwise) {
  return std::string(
             "def @main(%x: Tensor[(1, 3, 10, 10), float32], %w0: Tensor[(16, 3, 3, 3), float32],\n"
             "          %w1: Tensor[(16, 16, 3, 3), float32], %w2: Tensor[(16, 1, 3, 3), float32])\n"
             "          -> Tensor[(1, 16, 5, 5), float32] {\n"
             "  %0 = nn.relu(nn.conv2d(%x, %w0, padding=[1, 1]));\n"
             "  %1 = nn.max_pool2d(%0, pool_size=[2, 2], strides=[2, 2]);\n") +
         (depthwise ? "  %2 = nn.relu(nn.conv2d(%1, %w2, padding=[1, 1], groups=16));\n"
                    : "  %2 = nn.relu(nn.conv2d(%1, %w1, padding=[1, 1]));\n") +
         "  %3 = nn.relu(add(nn.conv2d(%2, %w1, padding=[1, 1]), %1));\n"
         "  nn.softmax(%3, axis=1)\n"
         "}\n";
}

CompilationConfig one_cpu() { return CompilationConfig::parse("cpu:0"); }

// The default pipeline, then PlanLayouts with `pins` ("node:GLOB=FORMAT"),
// with the invariant checker after every pass; `extra` runs last, checked too.
IRModule plan(const std::string& text, const std::string& layout_family, std::optional<Pass> extra = {},
              const std::vector<std::string>& pins = {}) {
  IRModule mod = parse_module(text, "block.sy");
  std::vector<LayoutRule> rules;
  for (const std::string& pin : pins) rules.push_back(parse_layout_rule(pin));
  PassContext context;
  context.instruments.push_back(std::make_shared<InvariantChecker>());
  PassContext::Scope scope(context);
  IRModule planned = default_pipeline({one_cpu(), {}})(mod, context);
  planned = PlanLayouts(16, layout_family == "nhwc", rules)(planned, context);
  return extra ? (*extra)(planned, context) : planned;
}

// The message of the Error that planning with `pins` raises, checking its kind.
std::string pin_error(const std::vector<std::string>& pins, ErrorKind kind) {
  try {
    plan(pooled_block(false), "nhwc", {}, pins);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "planning with the pins succeeded";
  return "";
}

struct Laid {
  std::vector<std::string> values;      // layouts of calls of fused functions, in evaluation order
  std::vector<std::string> parameters;  // layouts of fused functions' parameters, in post-order
};

Laid layouts_of(const IRModule& mod) {
  Laid laid;
  post_order_visit(mod.lookup("main"), [&](const Expr& e) {
    if (const FunctionNode* f = as<FunctionNode>(e); f && f->is_primitive())
      for (const Var& p : f->params) laid.parameters.push_back(p->virtual_device()->layout());
    if (const CallNode* c = as<CallNode>(e); c && as<FunctionNode>(c->op))
      laid.values.push_back(c->virtual_device()->layout());
  });
  return laid;
}

TEST(PlanLayouts, ValuesBetweenPrimitivesCarryTheirLayoutInTheIR) {
  for (const std::string family : {"nhwc", "nChw16c"}) {
    IRModule planned = plan(pooled_block(false), family);
    Laid laid = layouts_of(planned);
    // conv0, the pool and conv1 are read only as a primitive's source or
    // residual; conv2 is read by the softmax loop.
    std::vector<std::string> expected_values{family, family, family, "", ""};
    EXPECT_EQ(laid.values, expected_values) << print_module(planned);
    // Parameters, fused functions from the result back (the visit's order):
    // the softmax its dense input; conv2 its source, weights and the pool's
    // result as residual; conv1 its source and weights; the pool its
    // source; conv0 the dense model input and weights.
    std::vector<std::string> expected_parameters{"", family, "", family, family, "", family, "", ""};
    EXPECT_EQ(laid.parameters, expected_parameters) << print_module(planned);
    // Shown in the text IR, and read back the same.
    std::string text = print_module(planned);
    EXPECT_NE(text.find("layout=\"" + family + "\""), std::string::npos) << text;
    IRModule reparsed = parse_module(text, "planned.sy");
    EXPECT_EQ(structural_diff(planned, reparsed, {.compare_devices = true, .compare_spans = false}), std::nullopt);
  }
}

TEST(PlanLayouts, ADepthwiseConvolutionKeepsItsSetInChannelBlocks) {
  IRModule planned = plan(pooled_block(true), "nhwc");
  std::vector<std::string> expected_values{"nChw16c", "nChw16c", "nChw16c", "", ""};
  EXPECT_EQ(layouts_of(planned).values, expected_values) << print_module(planned);
}

TEST(PlanLayouts, APinnedValueGivesItsLayoutToTheValuesItsPrimitivesShare) {
  // The pool (line 5) in 8-channel blocks: conv0 writes what it reads and
  // conv1 reads what it writes, so they follow.
  IRModule planned = plan(pooled_block(false), "nhwc", {}, {"node:block.sy:5:*=nChw8c"});
  std::vector<std::string> expected_values{"nChw8c", "nChw8c", "nChw8c", "", ""};
  EXPECT_EQ(layouts_of(planned).values, expected_values) << print_module(planned);
}

TEST(PlanLayouts, APinOnAValueALoopReadsIsRefusedNamingTheReader) {
  // conv2 (line 7) is read by the softmax loop.
  std::string message = pin_error({"node:block.sy:7:*=nhwc"}, ErrorKind::kPlacement);
  EXPECT_NE(message.find("layout rule 'node:block.sy:7:*=nhwc' pins a value that cannot have a layout: it is read "
                         "by the kernel nn.softmax at block.sy:8:"),
            std::string::npos)
      << message;
}

TEST(PlanLayouts, APinOnTheModelsResultIsRefused) {
  std::string two_convolutions =
      "def @main(%x: Tensor[(1, 16, 4, 4), float32], %w: Tensor[(16, 16, 1, 1), float32])\n"
      "          -> Tensor[(1, 16, 4, 4), float32] {\n"
      "  %0 = nn.conv2d(%x, %w);\n"
      "  nn.conv2d(%0, %w)\n"
      "}\n";
  std::vector<std::string> expected_values{"nChw8c", ""};
  EXPECT_EQ(layouts_of(plan(two_convolutions, "nhwc", {}, {"node:block.sy:3:*=nChw8c"})).values, expected_values);
  try {
    plan(two_convolutions, "nhwc", {}, {"node:block.sy:4:*=nhwc"});
    ADD_FAILURE() << "the model's result was laid out";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("it is the function's result, which is dense row-major"), std::string::npos)
        << e.what();
  }
}

TEST(PlanLayouts, PinsThatDisagreeOnOneSetAreRefused) {
  std::string message = pin_error({"node:block.sy:4:*=nChw8c", "node:block.sy:6:*=nChw16c"}, ErrorKind::kPlacement);
  EXPECT_NE(message.find("layout rules 'node:block.sy:4:*=nChw8c' and 'node:block.sy:6:*=nChw16c' pin values that "
                         "must share one layout"),
            std::string::npos)
      << message;
}

TEST(PlanLayouts, MalformedOrUnmatchedPinsAreRefused) {
  EXPECT_NE(pin_error({"node:nowhere*=nhwc"}, ErrorKind::kUsage)
                .find("layout rule 'node:nowhere*=nhwc' matches no kernel's result"),
            std::string::npos);
  try {
    parse_layout_rule("node:block.sy:5:*=nChw5c");
    ADD_FAILURE() << "an unknown format was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    EXPECT_NE(std::string(e.what()).find("unknown oneDNN format 'nChw5c'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_layout_rule("op:nn.conv2d=nhwc"), Error);
  EXPECT_THROW(parse_layout_rule("node:=nhwc"), Error);
  // A name that is no IR layout at all, before asking the target.
  try {
    parse_layout_rule("node:block.sy:5:*=NCHW");
    ADD_FAILURE() << "NCHW was accepted as a layout";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'NCHW' is not a layout (nhwc (channels last), or nChw<N>c"),
              std::string::npos)
        << e.what();
  }
}

// Builds `mod` into scratch directory `name` with `pins`, runs it on random
// inputs and expects each output to match the interpreter's; returns the
// artifact's directory.
std::string expect_artifact_matches_interpreter(const IRModule& mod, const std::string& name, unsigned seed,
                                                const std::vector<std::string>& pins = {}) {
  BuildOptions options = aot_options("cpu:0");
  for (const std::string& pin : pins) options.layout_rules.push_back(parse_layout_rule(pin));
  std::string dir = aot_scratch_dir(name) + "/artifact";
  build_artifact(mod, options, dir);
  std::map<std::string, NDArray> inputs = random_inputs(mod, seed);
  std::vector<NDArray> actual = run_artifact(dir, inputs), expected = interpret(mod, inputs);
  EXPECT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size() && i < expected.size(); ++i)
    EXPECT_EQ(compare_arrays(actual[i], expected[i], 1e-4, 1e-4), "") << "output " << i;
  return dir;
}

TEST(PlanLayouts, APinnedArtifactComputesWhatTheInterpreterDoes) {
  std::string dir = expect_artifact_matches_interpreter(parse_module(pooled_block(false), "block.sy"), "pinned_layout",
                                                        5, {"node:block.sy:5:*=nChw8c"});
  // The pool reads and writes 8-channel blocks (kernel 1: conv0, pool, ...).
  Manifest manifest = Artifact::load(dir)->manifest();
  const ManifestKernel& pool = manifest.kernels.at(1);
  ASSERT_GE(pool.primitive, 0);
  EXPECT_EQ(manifest.primitives[size_t(pool.primitive)].src.format, "nChw8c");
  EXPECT_EQ(manifest.primitives[size_t(pool.primitive)].dst.format, "nChw8c");
}

// A pass that rebuilds every call of a fused function with a dense result,
// as a careless rewrite would, while their readers still expect the layout.
Pass drop_value_layouts() {
  struct Dropper : ExprMutator {
    Expr visit_call(const Call& c) override {
      Expr rebuilt = ExprMutator::visit_call(c);
      if (!as<FunctionNode>(c->op) || c->virtual_device()->layout().empty()) return rebuilt;
      return with_meta(rebuilt, {.virtual_device = c->virtual_device()->with_layout("")});
    }
  };
  return make_module_pass({"DropValueLayouts", 0, {}},
                          [](const IRModule& mod, const PassContext&) { return Dropper().mutate_module(mod); });
}

TEST(PlanLayouts, TheCheckerBlamesAPassThatLosesALayout) {
  try {
    plan(pooled_block(false), "nhwc", drop_value_layouts());
    FAIL() << "the checker let a lost layout through";
  } catch (const Error& e) {
    std::string message = e.what();
    EXPECT_NE(message.find("DropValueLayouts"), std::string::npos) << message;
    EXPECT_NE(message.find("nhwc"), std::string::npos) << message;
    EXPECT_NE(message.find("block.sy:"), std::string::npos) << message;  // the node's source line
  }
}

TEST(PlanLayouts, ALayoutIsNoPlacementWish) {
  std::string text =
      "def @main(%x: Tensor[(1, 4, 2, 2), float32] @{device=\"cpu:0\", layout=\"nhwc\"}) -> Tensor[(1, 4, 2, 2), "
      "float32] {\n  nn.relu(%x)\n}\n";
  try {
    plan(text, "nhwc");
    FAIL() << "a layout wish was taken as a device";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kPlacement);
    EXPECT_NE(std::string(e.what()).find("a layout is not a placement wish"), std::string::npos) << e.what();
  }
}

// The lowered program of the planned block, kernels generated.
LoweredProgram lowered(const IRModule& planned) {
  LoweredProgram program = lower_entry(planned, "main", one_cpu());
  generate_kernels(program, one_cpu());
  return program;
}

TEST(PlanLayouts, LoweringReadsTheLayoutsBack) {
  LoweredProgram program = lowered(plan(pooled_block(false), "nhwc"));
  apply_layouts(program);
  int laid_out = 0;
  for (const LoweredBuffer& b : program.buffers)
    if (!b.layout.empty()) {
      ++laid_out;
      EXPECT_EQ(b.layout, "nhwc");
      EXPECT_EQ(b.layout_bytes, dnnl_tensor_bytes({b.type->shape, {}, "nhwc"}));
    }
  EXPECT_EQ(laid_out, 3);  // conv0's, the pool's and conv1's results
}

TEST(PlanLayouts, LoweringRefusesALayoutNoPrimitiveReads) {
  LoweredProgram program = lowered(plan(pooled_block(false), "nhwc"));
  // The softmax loop's input, laid out by hand.
  const LoweredStep& softmax = program.steps.back();
  program.buffers[size_t(softmax.inputs.at(0))].layout = "nhwc";
  try {
    apply_layouts(program);
    FAIL() << "a loop kernel was given a laid-out input";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("is laid out as nhwc, but kernel nn_softmax reads it as dense row-major"),
              std::string::npos)
        << e.what();
  }
}

TEST(PlanLayouts, LoweringRefusesAFormatOneDnnDoesNotKnow) {
  LoweredProgram program = lowered(plan(pooled_block(false), "nhwc"));
  for (LoweredBuffer& b : program.buffers)
    if (b.layout == "nhwc") b.layout = "nChw5c";
  try {
    apply_layouts(program);
    FAIL() << "an unknown format was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("oneDNN has no such format"), std::string::npos) << e.what();
  }
}

// A pre-activation block of `c` channels: conv0's result is scaled per
// channel and rectified by an element-wise kernel of its own (conv0 has two
// readers, so FuseOps leaves it alone), which conv2 reads; conv2 adds
// conv0's result as its residual. `extra` is a further parameter,
// `activation` what the element-wise kernel adds to conv0's result (empty:
// nothing).
std::string preactivation_block(const std::string& extra = "", const std::string& activation = "",
                                bool depthwise = false, int c = 16) {
  std::string C = std::to_string(c);
  return "def @main(%x: Tensor[(1, 3, 10, 10), float32], %w0: Tensor[(" + C + ", 3, 3, 3), float32],\n"
         "          %w1: Tensor[(" + C + ", " + C + ", 3, 3), float32], %w2: Tensor[(" + C + ", 1, 3, 3), float32],\n"
         "          %s: Tensor[(" + C + ", 1, 1), float32]" + extra + ") -> Tensor[(1, " + C + ", 10, 10), float32] {\n"
         "  %0 = nn.conv2d(%x, %w0, padding=[1, 1]);\n" +
         (activation.empty() ? "  %1 = nn.relu(multiply(%0, %s));\n"
                             : "  %1 = nn.relu(multiply(add(%0, " + activation + "), %s));\n") +
         (depthwise ? "  %2 = nn.conv2d(%1, %w2, padding=[1, 1], groups=" + C + ");\n"
                    : "  %2 = nn.conv2d(%1, %w1, padding=[1, 1]);\n") +
         "  nn.softmax(add(%2, %0), axis=1)\n"
         "}\n";
}

TEST(PlanLayouts, AnElementWiseKernelBetweenPrimitivesReadsAndWritesTheirLayout) {
  IRModule planned = plan(preactivation_block(), "nhwc");
  // conv0, the element-wise kernel, conv2 with its residual, the softmax.
  std::vector<std::string> expected_values{"nhwc", "nhwc", "", ""};
  Laid laid = layouts_of(planned);
  EXPECT_EQ(laid.values, expected_values) << print_module(planned);
  // Parameters, fused functions from the result back: the softmax its
  // dense input; conv2 its source (the element-wise result) and residual
  // (conv0's) in the layout, weights dense; the element-wise kernel conv0's
  // result in the layout, the channel scale dense; conv0 the dense input
  // and weights.
  std::vector<std::string> expected_parameters{"", "nhwc", "", "nhwc", "nhwc", "", "", ""};
  EXPECT_EQ(laid.parameters, expected_parameters) << print_module(planned);

  // Generated for channels last, and computing what the interpreter does.
  expect_artifact_matches_interpreter(parse_module(preactivation_block(), "block.sy"), "elementwise_layout", 7);
  LoweredProgram program = lowered(planned);
  apply_layouts(program);
  int laid_out_kernels = 0;
  for (const KernelSource& source : program.kernel_sources)
    if (source.layout == "nhwc") {
      ++laid_out_kernels;
      EXPECT_NE(source.code.find("channels last"), std::string::npos) << source.code;
    }
  EXPECT_EQ(laid_out_kernels, 1);
}

TEST(PlanLayouts, AnElementWiseKernelInChannelBlocksComputesWhatTheInterpreterDoes) {
  // A depthwise conv2 keeps its set in 16-channel blocks; so does a CPU
  // without AVX-512 (the "nChw16c" family here) every set.
  std::vector<std::string> blocked{"nChw16c", "nChw16c", "", ""};
  IRModule depthwise = plan(preactivation_block("", "", true), "nhwc");
  EXPECT_EQ(layouts_of(depthwise).values, blocked) << print_module(depthwise);
  IRModule without_avx512 = plan(preactivation_block(), "nChw16c");
  EXPECT_EQ(layouts_of(without_avx512).values, blocked) << print_module(without_avx512);
  // 32 channels in two blocks, and a pin to 8-channel blocks on the
  // element-wise kernel (line 5) that its set follows.
  for (const std::string pin : {"", "node:block.sy:5:*=nChw8c"}) {
    SCOPED_TRACE(pin);
    std::vector<std::string> pins;
    if (!pin.empty()) pins.push_back(pin);
    expect_artifact_matches_interpreter(parse_module(preactivation_block("", "", true, 32), "block.sy"),
                                        "blocked_elementwise", 13, pins);
    IRModule planned = plan(preactivation_block("", "", true, 32), "nhwc", {}, pins);
    LoweredProgram program = lowered(planned);
    apply_layouts(program);
    std::string layout = pin.empty() ? "nChw16c" : "nChw8c";
    int laid_out_kernels = 0;
    for (const KernelSource& source : program.kernel_sources)
      if (source.layout == layout) {
        ++laid_out_kernels;
        EXPECT_NE(source.code.find(layout + ": blocks of channels"), std::string::npos) << source.code;
      }
    EXPECT_EQ(laid_out_kernels, 1);
  }
}

// conv0 -> a grouped convolution of `groups` groups -> a 1x1 conv2 adding
// conv0's result -> softmax (a loop): conv0's and the grouped convolution's
// results pass only between primitives.
std::string grouped_block(int c, int groups) {
  std::string C = std::to_string(c), G = std::to_string(groups), per_group = std::to_string(c / groups);
  return "def @main(%x: Tensor[(1, 3, 10, 10), float32], %w0: Tensor[(" + C + ", 3, 3, 3), float32],\n"
         "          %w1: Tensor[(" + C + ", " + per_group + ", 3, 3), float32], %w2: Tensor[(" + C + ", " + C +
         ", 1, 1), float32]) -> Tensor[(1, " + C + ", 10, 10), float32] {\n"
         "  %0 = nn.relu(nn.conv2d(%x, %w0, padding=[1, 1]));\n"
         "  %1 = nn.relu(nn.conv2d(%0, %w1, padding=[1, 1], groups=" + G + "));\n"
         "  %2 = nn.conv2d(%1, %w2);\n"
         "  nn.softmax(add(%2, %0), axis=1)\n"
         "}\n";
}

TEST(PlanLayouts, AGroupedConvolutionWhoseGroupsAreNotWholeChannelBlocksTakesChannelsLast) {
  // oneDNN runs such a convolution in channel blocks only with its
  // reference loops (a ResNeXt 4-channel group 100x slower), in channels
  // last with jit code, whichever layout the CPU would otherwise get; a
  // depthwise one (a channel a group) keeps blocks, and a grouped one of
  // whole blocks the default.
  struct Case {
    int channels, groups;
    std::string with_avx512, without;
  };
  for (const Case& c : std::vector<Case>{{64, 16, "nhwc", "nhwc"},
                                         {64, 8, "nhwc", "nhwc"},
                                         {96, 4, "nhwc", "nhwc"},
                                         {64, 4, "nhwc", "nChw16c"},
                                         {32, 32, "nChw16c", "nChw16c"}}) {
    for (const std::string family : {"nhwc", "nChw16c"}) {
      SCOPED_TRACE(std::to_string(c.channels) + " channels in " + std::to_string(c.groups) + " groups, " + family);
      IRModule planned = plan(grouped_block(c.channels, c.groups), family);
      const std::string& layout = family == "nhwc" ? c.with_avx512 : c.without;
      EXPECT_EQ(layouts_of(planned).values, (std::vector<std::string>{layout, layout, "", ""}))
          << print_module(planned);
    }
  }
  // Computed as the interpreter does, 4 and 24 channels a group.
  expect_artifact_matches_interpreter(parse_module(grouped_block(64, 16), "grouped.sy"), "grouped_4", 17);
  expect_artifact_matches_interpreter(parse_module(grouped_block(96, 4), "grouped.sy"), "grouped_24", 19);
}

TEST(PlanLayouts, AnElementWiseKernelReadingADenseValueOrInBlocksNotDividingItsChannelsStaysDense) {
  // Each time the element-wise kernel is dense, so it reads conv0's result
  // dense; conv2 reads that result as its residual in its layout, so conv0
  // writes it in the layout and one conversion gives the kernel a dense copy
  // (values: conv0, the conversion, the kernel, conv2, the softmax).
  auto laid_out_with_conversion = [](const std::string& layout) {
    return std::vector<std::string>{layout, "", "", "", ""};
  };
  // It adds a model input of the image's shape, which is dense.
  IRModule reads_input = plan(preactivation_block(", %y: Tensor[(1, 16, 10, 10), float32]", "%y"), "nhwc");
  EXPECT_EQ(layouts_of(reads_input).values, laid_out_with_conversion("nhwc")) << print_module(reads_input);
  // 20 channels in a depthwise conv2's 16-channel blocks: the last block is padded.
  IRModule padded = plan(preactivation_block("", "", true, 20), "nhwc");
  EXPECT_EQ(layouts_of(padded).values, laid_out_with_conversion("nChw16c")) << print_module(padded);
  // Its result is also read by a softmax loop, whose result conv2 adds
  // after its residual: a second operand of the destination's shape is no
  // post-op of a convolution (oneDNN's GEMM-based convolution misreads it in
  // a layout), so a loop adds it, conv2 is no primitive alone, and nothing
  // is laid out.
  std::string softmax_reads_it = preactivation_block();
  softmax_reads_it.replace(softmax_reads_it.find("  nn.softmax(add(%2, %0), axis=1)"), 33,
                           "  add(add(%2, %0), nn.softmax(%1, axis=1))");
  IRModule read_by_loop = plan(softmax_reads_it, "nhwc");
  EXPECT_EQ(layouts_of(read_by_loop).values, (std::vector<std::string>{"", "", "", ""}))
      << print_module(read_by_loop);
  LoweredProgram program = lowered(read_by_loop);
  EXPECT_NO_THROW(apply_layouts(program));
}

// conv0, an element-wise kernel, then conv2 adding two values of its
// result's shape (conv0's result and the element-wise one): one can be a
// sum post-op, the other is added by a loop after the primitive (an
// anchored convolution); a softmax loop reads its result.
std::string anchored_block(int c = 16) {
  std::string C = std::to_string(c);
  return "def @main(%x: Tensor[(1, 3, 10, 10), float32], %w0: Tensor[(" + C + ", 3, 3, 3), float32],\n"
         "          %w1: Tensor[(" + C + ", " + C + ", 3, 3), float32], %s: Tensor[(" + C + ", 1, 1), float32])\n"
         "          -> Tensor[(1, " + C + ", 10, 10), float32] {\n"
         "  %0 = nn.conv2d(%x, %w0, padding=[1, 1]);\n"
         "  %1 = nn.relu(multiply(%0, %s));\n"
         "  %2 = nn.relu(add(add(nn.conv2d(%1, %w1, padding=[1, 1]), %0), %1));\n"
         "  nn.softmax(%2, axis=1)\n"
         "}\n";
}

TEST(PlanLayouts, AnAnchoredConvolutionsLoopRunsInItsLayoutAndOneConversionServesItsDenseReaders) {
  for (const std::string family : {"nhwc", "nChw16c"}) {
    IRModule planned = plan(anchored_block(), family);
    // conv0, the element-wise kernel and the anchored conv2 in the layout;
    // the conversion gives the softmax a dense copy of conv2's result.
    std::vector<std::string> expected_values{family, family, family, "", ""};
    EXPECT_EQ(layouts_of(planned).values, expected_values) << print_module(planned);
    LoweredProgram program = lowered(planned);
    apply_layouts(program);
    // conv2's kernel runs its primitive reading and writing the layout, then its loop over it.
    int anchored = 0;
    for (const KernelSource& k : program.kernel_sources)
      if (k.primitive && k.kernel_ir) {
        ++anchored;
        EXPECT_EQ(k.layout, family);
        EXPECT_EQ(k.primitive->src.format, family);
        EXPECT_EQ(k.primitive->dst.format, family);
        EXPECT_EQ(k.laid_out_parts, std::vector<int>{k.primitive->src_input});
      }
    EXPECT_EQ(anchored, 1);
  }
  expect_artifact_matches_interpreter(parse_module(anchored_block(), "anchored.sy"), "anchored_nhwc", 23);
  expect_artifact_matches_interpreter(parse_module(anchored_block(16), "anchored.sy"), "anchored_blocks", 29,
                                      {"node:anchored.sy:4:*=nChw16c"});
  // 20 channels in 16-channel blocks would pad the loop's rows: it stays
  // dense (so a pin on conv0's set is refused); channels last takes them.
  IRModule padded = plan(anchored_block(20), "nChw16c");
  EXPECT_EQ(layouts_of(padded).values[2], "") << print_module(padded);
  EXPECT_THROW(expect_artifact_matches_interpreter(parse_module(anchored_block(20), "anchored.sy"), "anchored_pinned",
                                                   31, {"node:anchored.sy:4:*=nChw16c"}),
               Error);
  IRModule channels_last = plan(anchored_block(20), "nhwc");
  EXPECT_EQ(layouts_of(channels_last).values[2], "nhwc") << print_module(channels_last);
  expect_artifact_matches_interpreter(parse_module(anchored_block(20), "anchored.sy"), "anchored_20", 37);
}

// A transpose after a convolution's epilogue (H and W swapped on a square
// image, so no shape tells): the kernel's loop reads the primitive's result
// at other coordinates than it writes, which one layout for both cannot
// say. Laid out, it wrote the untransposed result (the fusion fuzzer's
// graph 806431, through a copy to another device; here a convolution reads it).
const char* const kTransposedEpilogue =
    "def @main(%x: Tensor[(1, 8, 6, 6), float32], %w0: Tensor[(16, 8, 3, 3), float32],\n"
    "          %w1: Tensor[(16, 16, 3, 3), float32]) -> Tensor[(1, 16, 6, 6), float32] {\n"
    "  %0 = nn.conv2d(%x, %w0, padding=[1, 1]);\n"
    "  %1 = multiply(multiply(%0, add(erf(divide(%0, 1.4142135f)), 1f)), 0.5f);\n"
    "  %2 = transpose(%1, axes=[0, 1, 3, 2]);\n"
    "  nn.relu(nn.conv2d(%2, %w1, padding=[1, 1]))\n"
    "}\n";

TEST(PlanLayouts, AConvolutionWhoseEpilogueTransposesKeepsItsResultDense) {
  for (const std::string family : {"nhwc", "nChw16c"}) {
    IRModule planned = plan(kTransposedEpilogue, family);
    std::vector<std::string> values = layouts_of(planned).values;
    ASSERT_EQ(values.size(), 2u) << print_module(planned);
    EXPECT_EQ(values[0], "") << print_module(planned);  // the convolution, its epilogue and the transpose
  }
  expect_artifact_matches_interpreter(parse_module(kTransposedEpilogue, "transposed.sy"), "transposed_epilogue", 41);
}

// The model input feeds a 3x3 and a 1x1 convolution; the 3x3's result
// feeds a convolution and a softmax loop.
const char* const kSharedValues =
    "def @main(%x: Tensor[(1, 16, 8, 8), float32], %w0: Tensor[(16, 16, 3, 3), float32],\n"
    "          %w1: Tensor[(16, 16, 1, 1), float32]) -> (Tensor[(1, 16, 8, 8), float32], Tensor[(1, 16, 8, 8), "
    "float32]) {\n"
    "  %0 = nn.relu(nn.conv2d(%x, %w0, padding=[1, 1]));\n"
    "  %1 = nn.conv2d(%x, %w1);\n"
    "  %2 = nn.conv2d(%0, %w1);\n"
    "  %3 = nn.softmax(%0, axis=1);\n"
    "  (add(%2, %1), %3)\n"
    "}\n";

// The layouts a conversion reads and writes, in evaluation order: "dense -> nhwc".
std::vector<std::string> conversions_of(const IRModule& mod) {
  std::vector<std::string> conversions;
  post_order_visit(mod.lookup("main"), [&](const Expr& e) {
    const CallNode* call = as<CallNode>(e);
    const FunctionNode* callee = call ? as<FunctionNode>(call->op) : nullptr;
    if (!callee || !as_op_call(callee->body, "layout_convert")) return;
    auto name = [](const std::string& layout) { return layout.empty() ? std::string("dense") : layout; };
    conversions.push_back(name(callee->params[0]->virtual_device()->layout()) + " -> " +
                          name(call->virtual_device()->layout()));
  });
  return conversions;
}

TEST(PlanLayouts, SharedValuesAreConvertedOnceForAllTheirReaders) {
  for (const std::string family : {"nhwc", "nChw16c"}) {
    IRModule planned = plan(kSharedValues, family);
    // The input once into the layout for both convolutions; the 3x3's
    // result stays in it for the convolution and once out of it for the softmax.
    std::vector<std::string> expected{"dense -> " + family, family + " -> dense"};
    EXPECT_EQ(conversions_of(planned), expected) << print_module(planned);
    // Read back from the text, and checked after each pass (plan() runs the checker).
    IRModule reparsed = parse_module(print_module(planned), "planned.sy");
    EXPECT_EQ(structural_diff(planned, reparsed, {.compare_devices = true, .compare_spans = false}), std::nullopt);
  }
  // A value one primitive reads is converted inside it, as before.
  EXPECT_EQ(conversions_of(plan(pooled_block(false), "nhwc")), std::vector<std::string>{});
}

TEST(PlanLayouts, ConversionsAreReordersThatComputeWhatTheInterpreterDoes) {
  std::string dir = expect_artifact_matches_interpreter(parse_module(kSharedValues, "shared.sy"), "layout_conversions", 9);
  // Two of the primitives are reorders, one into the layout and one out of it.
  Manifest manifest = Artifact::load(dir)->manifest();
  std::vector<std::string> reorders;
  for (const PrimitiveSpec& spec : manifest.primitives)
    if (spec.kind == PrimitiveKind::kReorder)
      reorders.push_back((spec.src.format.empty() ? "dense" : spec.src.format) + " -> " +
                         (spec.dst.format.empty() ? "dense" : spec.dst.format));
  std::sort(reorders.begin(), reorders.end());
  std::string layout = dnnl_uses_avx512() ? "nhwc" : "nChw8c";
  std::vector<std::string> expected_reorders{"dense -> " + layout, layout + " -> dense"};
  std::sort(expected_reorders.begin(), expected_reorders.end());
  EXPECT_EQ(reorders, expected_reorders);
}

TEST(PlanLayouts, APinOnAnElementWiseKernelsResultToBlocksNotDividingItsChannelsIsRefused) {
  // The element-wise kernel (line 5) of 20 channels may be pinned to nhwc, not to blocks.
  std::vector<std::string> expected_values{"nhwc", "nhwc", "", ""};
  EXPECT_EQ(layouts_of(plan(preactivation_block("", "", false, 20), "nhwc", {}, {"node:block.sy:5:*=nhwc"})).values,
            expected_values);
  try {
    plan(preactivation_block("", "", false, 20), "nhwc", {}, {"node:block.sy:5:*=nChw8c"});
    ADD_FAILURE() << "an element-wise kernel's result was pinned to blocks not dividing its channels";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kPlacement);
    EXPECT_NE(std::string(e.what()).find("an element-wise kernel, whose loops read and write channels last or "
                                         "channel blocks that divide its 20 channels, and its values must take "
                                         "blocks of 8"),
              std::string::npos)
        << e.what();
  }
}

TEST(PlanLayouts, LoweringRefusesALaidOutElementWiseKernelReadingADenseValue) {
  LoweredProgram program = lowered(plan(preactivation_block(), "nhwc"));
  // conv0's result, made dense by hand, still read by the channels-last kernel.
  int made_dense = 0;
  for (const LoweredStep& step : program.steps) {
    if (step.kind != LoweredStep::Kind::kKernel) continue;
    const KernelSource& source = program.kernel_sources[size_t(program.kernel_calls[size_t(step.index)].source)];
    if (source.layout != "nhwc") continue;
    for (int b : step.inputs)
      if (program.buffers[size_t(b)].layout == "nhwc") {
        program.buffers[size_t(b)].layout = "";
        ++made_dense;
      }
  }
  ASSERT_EQ(made_dense, 1);
  try {
    apply_layouts(program);
    FAIL() << "a channels-last kernel was given a dense input";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("is laid out as dense row-major, but kernel"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("reads it as nhwc"), std::string::npos) << e.what();
  }
}

}  // namespace plan_layouts_test
}  // namespace switchyard::testing
