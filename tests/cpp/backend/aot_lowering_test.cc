// The lowering check's diagnostics, and lowering to steps over buffers
// (no C++ compiler needed).
#include <gtest/gtest.h>

#include "artifact/artifact_writer.h"
#include "ir/with_fields.h"
#include "lower/aot_codegen.h"
#include "lower/lower.h"
#include "lower/lower_check.h"
#include "op/registry.h"
#include "pipeline/pass_table.h"
#include "support/error.h"
#include "support/test_paths.h"
#include "text/parser.h"
#include "transform/infer_type.h"

namespace switchyard {
namespace aot_lowering_test {

const VirtualDevice* cpu0() { return VirtualDevice::for_device(DeviceKind::kCPU, 0); }

// @main(%x) { nn.relu(%x) } built by hand, the call placed on `call_device`.
IRModule relu_module(const VirtualDevice* call_device) {
  TensorType t = tensor_type({4}, DType::kFloat32);
  Var x = make_var("x", t, {cpu0(), Span("hand.sy", 1, 11), Type()});
  Call relu = make_op_call("nn.relu", {x}, {}, {call_device, Span("hand.sy", 2, 3), Type()});
  IRModule mod;
  mod.add("main", make_function({x}, relu, t, Attrs(), {cpu0(), Span("hand.sy", 1, 1), Type()}));
  return infer_type(mod);
}

Error lowering_error(const IRModule& mod, const InvariantChecker* checker = nullptr) {
  try {
    check_lowerable(mod, "main", checker);
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "check_lowerable accepted the module";
  return Error(ErrorKind::kUsage, "accepted");
}

TEST(LowerCheck, AnUnplacedCallIsNamedWithItsSpan) {
  Error e = lowering_error(relu_module(nullptr));
  EXPECT_EQ(e.kind(), ErrorKind::kBackend);
  EXPECT_NE(e.message().find("cannot lower nn.relu(%x) (no device): it is not fully placed"), std::string::npos)
      << e.message();
  EXPECT_EQ(e.span(), Span("hand.sy", 2, 3));
  EXPECT_EQ(e.render().rfind("hand.sy:2:3: backend error: ", 0), 0u) << e.render();
}

TEST(LowerCheck, APlacedModulePasses) { EXPECT_NO_THROW(check_lowerable(relu_module(cpu0()), "main")); }

TEST(LowerCheck, NamesThePassThatLastProducedTheUnplacedNode) {
  // A pass that rebuilds the call and loses its device, as a careless pass might.
  Pass forget = make_module_pass({"ForgetDevices", 0, {}}, [](const IRModule& m, const PassContext&) {
    const Function& main = m.lookup("main");
    IRModule out = m;
    Expr unplaced = with_meta(main->body, {.virtual_device = VirtualDevice::unconstrained()});
    out.add("main", with_fields(main, {.body = unplaced}));
    return out;
  });
  auto checker = std::make_shared<InvariantChecker>();
  PassContext ctx;
  ctx.instruments.push_back(checker);
  IRModule out = Sequential({pass_by_name("InferType", {}), forget})(relu_module(cpu0()), ctx);
  Error e = lowering_error(out, checker.get());
  EXPECT_NE(e.message().find("last produced by pass 'ForgetDevices'"), std::string::npos) << e.message();
  EXPECT_EQ(e.span(), Span("hand.sy", 2, 3));
}

TEST(LowerCheck, RecursionIsRejectedAtTheCallThatClosesTheCycle) {
  // Not typed: type inference rejects recursion too; lowering must on its own.
  IRModule mod = parse_module(
      "def @f(%x: Tensor[(4), float32]) -> Tensor[(4), float32] {\n"
      "  @g(%x)\n"
      "}\n"
      "def @g(%x: Tensor[(4), float32]) -> Tensor[(4), float32] {\n"
      "  @f(%x)\n"
      "}\n"
      "def @main(%x: Tensor[(4), float32]) -> Tensor[(4), float32] {\n"
      "  @f(%x)\n"
      "}\n",
      "recursive.sy");
  Error e = lowering_error(mod);
  EXPECT_NE(e.message().find("recursion (@f -> @g -> @f)"), std::string::npos) << e.message();
  EXPECT_EQ(e.span().line(), 5u);
}

TEST(LowerCheck, AClosureIsRejectedWithItsSpan) {
  IRModule mod = infer_type(parse_module(
      "def @main(%x: Tensor[(4), float32]) -> Tensor[(4), float32] {\n"
      "  %0 = fn (%y: Tensor[(4), float32]) -> Tensor[(4), float32] { nn.relu(%y) };\n"
      "  %0(%x)\n"
      "}\n",
      "closure.sy"));
  Error e = lowering_error(mod);
  EXPECT_NE(e.message().find("closure"), std::string::npos) << e.message();
  EXPECT_EQ(e.span().source(), "closure.sy");
  EXPECT_EQ(e.span().line(), 2u);
}

TEST(LowerCheck, EntryParametersMustBeTensors) {
  IRModule mod = infer_type(parse_module(
      "def @main(%p: (Tensor[(4), float32], Tensor[(4), float32])) -> Tensor[(4), float32] {\n"
      "  %p.0\n"
      "}\n",
      "tuple_param.sy"));
  PipelineOptions options;
  options.config = CompilationConfig::parse("cpu:0");
  Error e = lowering_error(default_pipeline(options)(mod));
  EXPECT_NE(e.message().find("parameters must be tensors"), std::string::npos) << e.message();
}

TEST(Lower, TheTwoDeviceMlpBecomesKernelsAndOneCopy) {
  PipelineOptions options;
  options.config = CompilationConfig::parse("cpu:0,cpu:1");
  IRModule planned = default_pipeline(options)(parse_file(testing::example_models_dir() + "/mlp_two_devices.sy"));
  check_lowerable(planned, "main");
  LoweredProgram program = lower_entry(planned, "main", *options.config);
  ASSERT_EQ(program.inputs.size(), 5u);
  EXPECT_EQ(program.input_names[0], "x");
  EXPECT_TRUE(program.weights.empty());  // every tensor is a parameter
  ASSERT_EQ(program.copies.size(), 1u);
  EXPECT_EQ(program.copies[0].src_device, 0);
  EXPECT_EQ(program.copies[0].dst_device, 1);
  EXPECT_EQ(program.copies[0].bytes, 512u * 4u);
  int copies_seen = 0;
  for (const LoweredStep& step : program.steps) {
    ASSERT_TRUE(step.kind == LoweredStep::Kind::kKernel || step.kind == LoweredStep::Kind::kCopy);
    if (step.kind == LoweredStep::Kind::kCopy) ++copies_seen;
    if (step.kind == LoweredStep::Kind::kKernel) {
      EXPECT_EQ(program.kernel_calls[size_t(step.index)].device, copies_seen);  // cpu:0 before the copy, cpu:1 after
    }
  }
  // The last kernel writes straight into the caller's output buffer.
  ASSERT_EQ(program.outputs.size(), 1u);
  const LoweredBuffer& output = program.buffers[size_t(program.outputs[0])];
  EXPECT_EQ(output.kind, LoweredBuffer::Kind::kOutput);
  EXPECT_EQ(output.device, 1);
  EXPECT_EQ(program.steps.back().outputs, std::vector<int>{program.outputs[0]});
}

// A reshape alone renames dense bytes: the entry copies them (a memcpy), so
// no kernel is compiled for it. Fused with other work, it stays a kernel.
TEST(Lower, AReshapeAloneIsAMoveNotAKernel) {
  PipelineOptions options;
  options.config = CompilationConfig::parse("cpu:0");
  IRModule planned = default_pipeline(options)(parse_module(
      "def @main(%x: Tensor[(2, 3, 4), float32], %w: Tensor[(5, 4), float32]) -> Tensor[(6, 5), float32] {\n"
      "  nn.dense(reshape(%x, newshape=[6, 4]), %w)\n"
      "}\n",
      "reshape.sy"));
  LoweredProgram program = lower_entry(planned, "main", *options.config);
  ASSERT_EQ(program.steps.size(), 2u);
  EXPECT_EQ(program.steps[0].kind, LoweredStep::Kind::kMove);
  EXPECT_EQ(program.steps[0].inputs, std::vector<int>{program.inputs[0]});
  EXPECT_EQ(program.buffers[size_t(program.steps[0].outputs[0])].type->shape, (std::vector<int64_t>{6, 4}));
  EXPECT_EQ(program.steps[1].kind, LoweredStep::Kind::kKernel);
  EXPECT_EQ(program.kernel_calls.size(), 1u);  // the dense
}

TEST(Lower, AConstantUsedOnTwoDevicesIsStoredOncePerDevice) {
  const VirtualDevice* cpu1 = VirtualDevice::for_device(DeviceKind::kCPU, 1);
  TensorType t = tensor_type({4}, DType::kFloat32);
  NDArray data(DType::kFloat32, {4});
  for (int64_t i = 0; i < 4; ++i) data.set_from_double(i, double(i));
  Var x = make_var("x", t, {cpu0(), Span(), t});
  Var y = make_var("y", t, {cpu1, Span(), t});
  Constant on_cpu0 = make_constant(data, {cpu0(), Span("c.sy", 2, 3), t});
  Constant on_cpu1 = make_constant(data, {cpu1, Span("c.sy", 3, 3), t});
  Expr first = make_op_call("add", {x, on_cpu0}, {}, {cpu0(), Span(), t});
  Expr again = make_op_call("multiply", {first, on_cpu0}, {}, {cpu0(), Span(), t});
  Expr second = make_op_call("add", {y, on_cpu1}, {}, {cpu1, Span(), t});
  Type result = tuple_type({t, t});
  IRModule mod;
  mod.add("main", make_function({x, y}, make_tuple({again, second}, {cpu0(), Span(), result}), result, Attrs(),
                                {cpu0(), Span(), func_type({t, t}, result)}));
  CompilationConfig config = CompilationConfig::parse("cpu:0,cpu:1");
  check_lowerable(mod, "main");
  LoweredProgram program = lower_entry(mod, "main", config);
  ASSERT_EQ(program.weights.size(), 2u);
  EXPECT_EQ(program.weights[0].device, 0);
  EXPECT_EQ(program.weights[1].device, 1);
  // Each device's weights lie in its own block of weights.bin.
  generate_kernels(program, config);
  std::vector<int> tensor_of_buffer;
  MemoryPlan plan = plan_memory(memory_problem(program, &tensor_of_buffer));
  Manifest manifest = make_manifest(program, plan, config);
  std::vector<WeightBlock> blocks = weight_blocks(manifest);
  EXPECT_EQ(blocks[0].end - blocks[0].begin, 16u);
  EXPECT_EQ(blocks[1].end - blocks[1].begin, 16u);
  // The entry function reads each from its device's block.
  std::string entry = generate_entry_source(program, plan, tensor_of_buffer, manifest);
  EXPECT_NE(entry.find("= weights_0 + 0;  // const_0: Tensor[(4), float32] on cpu:0"), std::string::npos) << entry;
  EXPECT_NE(entry.find("= weights_1 + 0;  // const_1: Tensor[(4), float32] on cpu:1"), std::string::npos) << entry;
}

TEST(Lower, AMillionDeepLetChainLowersAndPlansWithoutDeepRecursion) {
  constexpr int kDepth = 1000000;
  TensorType t = tensor_type({4}, DType::kFloat32);
  NodeMeta placed{cpu0(), Span(), t};
  Var x = make_var("x", t, placed);
  std::vector<Var> vars;
  std::vector<Expr> values;
  Expr previous = x;
  for (int i = 0; i < kDepth; ++i) {
    values.push_back(make_op_call("add", {previous, previous}, {}, placed));
    vars.push_back(make_var("v", t, placed));
    previous = vars.back();
  }
  Expr body = previous;
  for (int i = kDepth - 1; i >= 0; --i) body = make_let(vars[size_t(i)], values[size_t(i)], body, placed);
  values.clear();
  vars.clear();
  IRModule mod;
  mod.add("main", make_function({x}, body, t, Attrs(), {cpu0(), Span(), func_type({t}, t)}));
  body = Expr();
  LoweredProgram program = lower_entry(mod, "main", CompilationConfig::parse("cpu:0"));
  EXPECT_EQ(program.steps.size(), size_t(kDepth));
  std::vector<int> tensor_of_buffer;
  MemoryPlan plan = plan_memory(memory_problem(program, &tensor_of_buffer));
  ASSERT_EQ(plan.arenas.size(), 1u);
  // Each step reads one dying tensor and writes the next: two live at once.
  EXPECT_EQ(plan.arenas[0].bytes, 2 * kArenaAlignment);
  EXPECT_EQ(plan.arenas[0].lower_bound_bytes, 2 * kArenaAlignment);
}

}  // namespace aot_lowering_test
}  // namespace switchyard
