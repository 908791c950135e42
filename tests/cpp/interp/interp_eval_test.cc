// The interpreter on whole programs: let, if, tuples, closures, global
// calls, device bookkeeping, input validation and deep chains.
#include "interp/kernel_registry.h"
#include "interp_test_util.h"

namespace switchyard::testing {
namespace interp_eval_test {

const VirtualDevice* cpu(int id) { return VirtualDevice::for_device(DeviceKind::kCPU, id); }
Type f32_type(std::vector<int64_t> shape) { return tensor_type(std::move(shape), DType::kFloat32); }
NDArray scalar(float v) { return NDArray::scalar_f32(v); }
Expr one() { return make_scalar_f32(1); }

IRModule module_with_main(std::vector<Var> params, Expr body) {
  IRModule mod;
  mod.add("main", make_function(std::move(params), std::move(body)));
  return mod;
}

TEST(InterpEval, LetTupleAndProjection) {
  Var x = make_var("x", f32_type({2}));
  Var y = make_var("y");
  Expr body = make_let(y, make_op_call("add", {x, x}),
                       make_tuple_get_item(make_tuple({y, make_op_call("multiply", {y, y})}), 1));
  Value v = evaluate(module_with_main({x}, body), {{"x", f32({2}, {1, 3})}});
  expect_array(v.tensor, DType::kFloat32, {2}, {4, 36});
}

TEST(InterpEval, IfTakesOneBranch) {
  Var c = make_var("c", scalar_type(DType::kBool));
  Var x = make_var("x", f32_type({2}));
  IRModule mod = module_with_main({c, x}, make_if(c, make_op_call("negative", {x}), make_op_call("add", {x, one()})));
  NDArray yes = array(DType::kBool, {}, {1}), no = array(DType::kBool, {}, {0});
  expect_array(evaluate(mod, {{"c", yes}, {"x", f32({2}, {1, 2})}}).tensor, DType::kFloat32, {2}, {-1, -2});
  expect_array(evaluate(mod, {{"c", no}, {"x", f32({2}, {1, 2})}}).tensor, DType::kFloat32, {2}, {2, 3});
}

TEST(InterpEval, IfBranchNotTakenIsNotEvaluated) {
  // The else branch divides integers by zero; it must never run.
  NDArray zero = array(DType::kInt32, {}, {0});
  Expr fault = make_op_call("divide", {make_constant(zero), make_constant(zero)});
  Value v = evaluate_expr(make_if(make_constant(array(DType::kBool, {}, {1})), make_constant(zero), fault));
  expect_array(v.tensor, DType::kInt32, {}, {0});
}

TEST(InterpEval, IfConditionMustBeABoolScalar) {
  Expr e = make_if(make_constant(scalar(1)), one(), one(), {.span = Span("t.sy", 3, 1)});
  try {
    evaluate_expr(e);
    FAIL() << "expected an error";
  } catch (const Error& err) {
    EXPECT_EQ(err.kind(), ErrorKind::kType);
    EXPECT_EQ(err.message(), "the condition of 'if' must be a bool scalar, got float32 on ?");
    EXPECT_EQ(err.span(), Span("t.sy", 3, 1));
  }
}

TEST(InterpEval, ClosuresCaptureTheirFreeVariables) {
  Var x = make_var("x", f32_type({2}));
  Var k = make_var("k", scalar_type(DType::kFloat32));
  Var u = make_var("u", f32_type({2}));
  Var f = make_var("f");
  Function scale = make_function({u}, make_op_call("multiply", {u, k}));
  Expr body = make_let(f, scale, make_call(f, {make_call(f, {x})}));
  Value v = evaluate(module_with_main({x, k}, body), {{"x", f32({2}, {1, 2})}, {"k", scalar(3)}});
  expect_array(v.tensor, DType::kFloat32, {2}, {9, 18});
}

TEST(InterpEval, ClosureOutlivesTheActivationThatMadeIt) {
  // @make_scaler(k) returns fn (u) { u * k }; main calls the returned closure.
  Var k = make_var("k", scalar_type(DType::kFloat32));
  Var u = make_var("u", f32_type({2}));
  IRModule mod;
  mod.add("make_scaler", make_function({k}, make_function({u}, make_op_call("multiply", {u, k}))));
  Var x = make_var("x", f32_type({2}));
  Expr scaler = make_call(make_global_var("make_scaler"), {make_scalar_f32(5)});
  mod.add("main", make_function({x}, make_call(scaler, {x})));
  expect_array(evaluate(mod, {{"x", f32({2}, {1, -1})}}).tensor, DType::kFloat32, {2}, {5, -5});
}

TEST(InterpEval, FunctionValuedParametersAndGlobalsAsValues) {
  IRModule mod;
  Var f = make_var("f"), v = make_var("v", f32_type({2}));
  mod.add("twice", make_function({f, v}, make_call(f, {make_call(f, {v})})));
  Var u = make_var("u", f32_type({2}));
  mod.add("inc", make_function({u}, make_op_call("add", {u, one()})));
  Var x = make_var("x", f32_type({2}));
  Var w = make_var("w", f32_type({2}));
  Function lambda = make_function({w}, make_op_call("multiply", {w, make_scalar_f32(10)}));
  Expr twice_inc = make_call(make_global_var("twice"), {make_global_var("inc"), x});
  Expr twice_lambda = make_call(make_global_var("twice"), {lambda, x});
  mod.add("main", make_function({x}, make_tuple({twice_inc, twice_lambda})));
  std::vector<NDArray> out = flatten_value(evaluate(mod, {{"x", f32({2}, {1, 2})}}));
  ASSERT_EQ(out.size(), 2u);
  expect_array(out[0], DType::kFloat32, {2}, {3, 4});
  expect_array(out[1], DType::kFloat32, {2}, {100, 200});
}

TEST(InterpEval, RecursionThroughGlobalsWorksAndIsBounded) {
  // @count(n) = if (n == 0) { n } else { @count(n - 1) }
  IRModule mod;
  Var n = make_var("n", scalar_type(DType::kInt32));
  NDArray int_one = array(DType::kInt32, {}, {1}), int_zero = array(DType::kInt32, {}, {0});
  Expr recurse = make_call(make_global_var("count"), {make_op_call("subtract", {n, make_constant(int_one)})});
  mod.add("count", make_function({n}, make_if(make_op_call("equal", {n, make_constant(int_zero)}), n, recurse)));
  Var m = make_var("m", scalar_type(DType::kInt32));
  mod.add("main", make_function({m}, make_call(make_global_var("count"), {m})));
  expect_array(evaluate(mod, {{"m", array(DType::kInt32, {}, {50})}}).tensor, DType::kInt32, {}, {0});
  try {
    evaluate(mod, {{"m", array(DType::kInt32, {}, {100000})}});
    FAIL() << "expected the call depth limit";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kRuntime);
    EXPECT_EQ(e.message(), "function calls nest too deep (at most 1000, and fewer in sanitizer builds; unbounded recursion?)");
  }
}

TEST(InterpEval, DevicesFollowTheProducingNode) {
  Var x = make_var("x", f32_type({2}), {.virtual_device = cpu(0)});
  Var y = make_var("y"), z = make_var("z"), w = make_var("w");
  Expr relu = make_op_call("nn.relu", {x}, {}, {.virtual_device = cpu(0)});
  Expr copy = make_op_call("device_copy", {y}, {{"src", text("cpu:0")}, {"dst", text("cpu:1")}});
  Expr unplanned = make_op_call("add", {z, z});
  Expr wish = make_op_call("on_device", {w}, {{"device", text("cpu:1")}});
  Expr placed_constant = make_constant(f32({1}, {7}), {.virtual_device = cpu(2)});
  Expr body = make_let(y, relu, make_let(z, copy, make_let(w, unplanned, make_tuple({x, y, z, w, wish, placed_constant}))));
  std::vector<Value> out = flatten_tensors(evaluate(module_with_main({x}, body), {{"x", f32({2}, {-1, 2})}}));
  ASSERT_EQ(out.size(), 6u);
  EXPECT_EQ(out[0].device, cpu(0));  // an input lives where its parameter says
  EXPECT_EQ(out[1].device, cpu(0));  // the relu node's device
  EXPECT_EQ(out[2].device, cpu(1));  // device_copy's dst
  EXPECT_TRUE(out[3].device->is_fully_unconstrained());
  EXPECT_EQ(out[4].device, cpu(1));  // on_device relabels
  EXPECT_EQ(out[5].device, cpu(2));
  expect_array(out[2].tensor, DType::kFloat32, {2}, {0, 2});  // same data after the copy
  expect_array(out[4].tensor, DType::kFloat32, {2}, {0, 4});
  EXPECT_EQ(value_summary(out[2]), "Tensor[(2), float32] on cpu:1");
}

TEST(InterpEval, DeviceCopyFromTheWrongDeviceIsAnError) {
  Var x = make_var("x", f32_type({2}), {.virtual_device = cpu(0)});
  Expr copy = make_op_call("device_copy", {x}, {{"src", text("cpu:1")}, {"dst", text("cpu:2")}},
                           {.span = Span("t.sy", 4, 2)});
  try {
    evaluate(module_with_main({x}, copy), {{"x", f32({2}, {1, 2})}});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kPlacement);
    EXPECT_EQ(e.message(), "device_copy from cpu:1, but its argument lives on cpu:0");
    EXPECT_EQ(e.span(), Span("t.sy", 4, 2));
  }
}

Error evaluate_error(const IRModule& mod, const std::map<std::string, NDArray>& inputs) {
  try {
    evaluate(mod, inputs);
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    return e;
  }
  return Error(ErrorKind::kUsage, "none");
}

TEST(InterpEval, ValidatesInputs) {
  Var x = make_var("x", f32_type({2, 3}));
  Var b = make_var("b", f32_type({3}));
  IRModule mod = module_with_main({x, b}, make_op_call("add", {x, b}));
  NDArray good_x = iota(DType::kFloat32, {2, 3}), good_b = iota(DType::kFloat32, {3});
  Error missing = evaluate_error(mod, {{"x", good_x}});
  EXPECT_EQ(missing.kind(), ErrorKind::kUsage);
  EXPECT_EQ(missing.message(), "missing input 'b' (expected Tensor[(3), float32])");
  EXPECT_EQ(evaluate_error(mod, {{"x", good_x}, {"b", good_b}, {"c", good_b}}).message(),
            "unknown input 'c': @main takes x, b");
  EXPECT_EQ(evaluate_error(mod, {{"x", good_x}, {"b", iota(DType::kFloat32, {4})}}).message(),
            "input 'b': expected Tensor[(3), float32], got Tensor[(4), float32]");
  EXPECT_EQ(evaluate_error(mod, {{"x", iota(DType::kInt32, {2, 3})}, {"b", good_b}}).message(),
            "input 'x': expected Tensor[(2, 3), float32], got Tensor[(2, 3), int32]");
  expect_array(evaluate(mod, {{"x", good_x}, {"b", good_b}}).tensor, DType::kFloat32, {2, 3}, {0, 2, 4, 3, 5, 7});
  EXPECT_EQ(evaluate_error(mod, {}).kind(), ErrorKind::kUsage);
}

TEST(InterpEval, OperatorWithoutKernelNamesItAndTheCall) {
  static const OpDef* def = register_op({.name = "test.interp_no_kernel",
                                         .num_inputs = 1,
                                         .type_relation = [](const std::vector<Type>& a, const AttrsNode&) { return a[0]; },
                                         .doc = "an operator the interpreter has no kernel for"});
  ASSERT_NE(def, nullptr);
  Expr call = make_op_call("test.interp_no_kernel", {one()}, {}, {.span = Span("t.sy", 9, 5)});
  try {
    evaluate_expr(call);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    EXPECT_EQ(e.message(), "no reference kernel for operator 'test.interp_no_kernel'");
    EXPECT_EQ(e.span(), Span("t.sy", 9, 5));
  }
}

TEST(InterpEval, KernelsAndOperatorsMatchOneToOne) {
  for (const OpDef* def : all_op_defs()) {
    if (def->name.rfind("test.", 0) == 0 || def->name == "on_device" || def->name == "device_copy") continue;
    EXPECT_NE(find_interp_kernel(def->name), nullptr) << def->name;
  }
  for (const std::string& name : interp_kernel_names()) EXPECT_NE(find_op_def(name), nullptr) << name;
}

TEST(InterpEval, FreeVariablesAreReported) {
  Var x = make_var("x", f32_type({2}), {.span = Span("t.sy", 1, 7)});
  try {
    evaluate_expr(make_op_call("nn.relu", {x}));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.message(), "variable %x is not bound here");
    EXPECT_EQ(e.span(), Span("t.sy", 1, 7));
  }
}

TEST(InterpEval, FlattenValueKeepsOrder) {
  Expr nested = make_tuple({make_tuple({make_constant(f32({1}, {1})), make_constant(f32({1}, {2}))}),
                            make_constant(f32({1}, {3}))});
  std::vector<NDArray> flat = flatten_value(evaluate_expr(nested));
  ASSERT_EQ(flat.size(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(flat[i].get_as_double(0), double(i + 1));
  Var u = make_var("u");
  EXPECT_THROW(flatten_value(evaluate_expr(make_function({u}, u))), Error);
}

constexpr int kDeep = 1000000;

TEST(InterpDeep, MillionCallChain) {
  Var x = make_var("x", scalar_type(DType::kFloat32));
  Expr e = x;
  Expr step = one();
  for (int i = 0; i < kDeep; ++i) e = make_op_call("add", {e, step});
  Value v = evaluate(module_with_main({x}, e), {{"x", scalar(0)}});
  expect_array(v.tensor, DType::kFloat32, {}, {double(kDeep)});
}

TEST(InterpDeep, MillionLetChain) {
  Var x = make_var("x", scalar_type(DType::kFloat32));
  std::vector<Var> vars{x};
  for (int i = 0; i < kDeep; ++i) vars.push_back(make_var("v" + std::to_string(i)));
  Expr body = vars.back();
  Expr step = one();
  for (int i = kDeep; i >= 1; --i) body = make_let(vars[size_t(i)], make_op_call("add", {vars[size_t(i - 1)], step}), body);
  Value v = evaluate(module_with_main({x}, body), {{"x", scalar(1)}});
  expect_array(v.tensor, DType::kFloat32, {}, {double(kDeep + 1)});
}

TEST(InterpDeep, MillionGlobalCallChain) {
  IRModule mod;
  Var u = make_var("u", scalar_type(DType::kFloat32));
  mod.add("inc", make_function({u}, make_op_call("add", {u, one()})));
  Var x = make_var("x", scalar_type(DType::kFloat32));
  GlobalVar inc = make_global_var("inc");
  Expr e = x;
  for (int i = 0; i < kDeep; ++i) e = make_call(inc, {e});
  mod.add("main", make_function({x}, e));
  expect_array(evaluate(mod, {{"x", scalar(0)}}).tensor, DType::kFloat32, {}, {double(kDeep)});
}

}  // namespace interp_eval_test
}  // namespace switchyard::testing
