// InferType on hand-built expressions and modules: every node typed, sharing
// and variable identity kept, precise errors with spans, deep chains.
#include <gtest/gtest.h>

#include "ir/functor.h"
#include "op/registry.h"
#include "support/error.h"
#include "text/parser.h"
#include "transform/infer_type.h"

namespace switchyard {
namespace infer_type_test {

Type f32(std::vector<int64_t> shape) { return tensor_type(std::move(shape), DType::kFloat32); }
Type bool_scalar() { return scalar_type(DType::kBool); }
Span at(uint32_t line, uint32_t column) { return Span("infer.sy", line, column); }

// The Error(kType) that inferring `e` throws.
Error expr_error(const Expr& e, const IRModule* mod = nullptr) {
  try {
    infer_expr_type(e, mod);
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::kType);
    return error;
  }
  ADD_FAILURE() << "inference succeeded";
  return Error(ErrorKind::kUsage, "");
}

Error module_error(const IRModule& mod) {
  try {
    infer_type(mod);
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::kType);
    return error;
  }
  ADD_FAILURE() << "inference succeeded";
  return Error(ErrorKind::kUsage, "");
}

// Every node but the interned operators has a type.
void expect_all_typed(const Expr& e) {
  size_t untyped = 0;
  post_order_visit(e, [&](const Expr& n) {
    if (!is<OpNode>(n) && !n->checked_type()) ++untyped;
  });
  EXPECT_EQ(untyped, 0u);
}

TEST(InferType, TypesEveryNodeAndKeepsParameterIdentity) {
  Var x = make_var("x", f32({2, 3}));
  Var y = make_var("y", f32({3}));
  Call sum = make_op_call("add", {x, y});
  Function fn = make_function({x, y}, make_op_call("nn.relu", {sum}));
  Expr typed = infer_expr_type(fn);
  expect_all_typed(typed);
  const FunctionNode* f = as<FunctionNode>(typed);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(type_to_string(f->checked_type()),
            "fn (Tensor[(2, 3), float32], Tensor[(3), float32]) -> Tensor[(2, 3), float32]");
  EXPECT_EQ(f->ret_type, f32({2, 3}));  // a missing return type is filled in
  const CallNode* relu = as<CallNode>(f->body);
  const CallNode* add = as<CallNode>(relu->args[0]);
  EXPECT_TRUE(add->args[0].same_as(f->params[0]));  // uses are the rebuilt parameters
  EXPECT_TRUE(add->args[1].same_as(f->params[1]));
  EXPECT_EQ(f->params[0]->checked_type(), f32({2, 3}));
}

TEST(InferType, KeepsSharingAndDevicesAndSpans) {
  const VirtualDevice* cpu1 = VirtualDevice::for_device(DeviceKind::kCPU, 1);
  Var x = make_var("x", f32({4}));
  Call e = make_op_call("exp", {x}, {}, {.virtual_device = cpu1, .span = at(2, 5)});
  Call both = make_op_call("multiply", {e, e});
  Expr typed = infer_expr_type(both);
  const CallNode* m = as<CallNode>(typed);
  EXPECT_TRUE(m->args[0].same_as(m->args[1]));
  EXPECT_EQ(m->args[0]->virtual_device(), cpu1);
  EXPECT_EQ(m->args[0]->span(), at(2, 5));
  EXPECT_EQ(m->checked_type(), f32({4}));
}

TEST(InferType, AlreadyTypedNodesAreKept) {
  Var x = make_var("x", f32({2}));
  Var t = make_var("t");
  Expr body = make_tuple({make_op_call("split", {x}, {{"indices_or_sections", int64_t(2)}}), x});
  Function fn = make_function({x}, make_let(t, body, make_tuple_get_item(t, 1)));
  IRModule mod;
  mod.add("main", fn);
  IRModule once = infer_type(mod);
  IRModule twice = infer_type(once);
  EXPECT_TRUE(twice.lookup("main").same_as(once.lookup("main")));
}

TEST(InferType, LetWithoutAnnotationTakesTheValueType) {
  Var x = make_var("x", f32({2, 3}));
  Var v = make_var("v");
  Expr let = make_let(v, make_op_call("sum", {x}, {{"axis", std::vector<int64_t>{1}}}), make_op_call("exp", {v}));
  Expr typed = infer_expr_type(let);
  expect_all_typed(typed);
  const LetNode* l = as<LetNode>(typed);
  EXPECT_EQ(l->var->checked_type(), f32({2}));
  EXPECT_TRUE(as<CallNode>(l->body)->args[0].same_as(l->var));
  EXPECT_EQ(l->checked_type(), f32({2}));
}

TEST(InferType, LetAnnotationMustMatch) {
  Var x = make_var("x", f32({2}));
  Var v = make_var("v", f32({3}));
  Error e = expr_error(make_let(v, x, v, {.span = at(4, 1)}));
  EXPECT_EQ(e.message(), "let %v is annotated Tensor[(3), float32] but its value has type Tensor[(2), float32]");
  EXPECT_EQ(e.span(), at(4, 1));
}

// Issue 39: a parameter listed twice and a free variable typed without
// complaint; the first printed text that does not parse back, and both
// failed only at build. InferType names the variable, its function and span.
TEST(InferType, AParameterListedTwiceIsAnError) {
  Var x = make_var("x", f32({2}), {.span = at(1, 11)});
  IRModule mod;
  mod.add("main", make_function({x, x}, x, Type(), Attrs(), {.span = at(1, 1)}));
  Error e = module_error(mod);
  EXPECT_EQ(e.message(), "variable %x is bound more than once (in @main)");
  EXPECT_EQ(e.span(), at(1, 11));
}

TEST(InferType, AFreeVariableIsAnError) {
  Var x = make_var("x", f32({2}));
  Var y = make_var("y", f32({2}));
  IRModule mod;
  mod.add("main", make_function({x}, make_op_call("add", {x, y}), Type(), Attrs(), {.span = at(1, 1)}));
  Error e = module_error(mod);
  EXPECT_EQ(e.message(), "variable %y is free: no parameter or let of @main binds it");
  EXPECT_EQ(e.span(), at(1, 1));  // %y has none: its function's
  // A let's variable used after its scope is named as such.
  Var v = make_var("v", f32({2}), {.span = at(3, 5)});
  Expr inner = make_let(v, make_op_call("exp", {x}), v);
  IRModule out_of_scope;
  out_of_scope.add("main", make_function({x}, make_tuple({inner, v})));
  EXPECT_EQ(module_error(out_of_scope).message(), "variable %v is used outside the scope of its binding (in @main)");
}

TEST(InferType, IfNeedsABoolScalarAndEqualBranches) {
  Var flag = make_var("flag", bool_scalar());
  Var a = make_var("a", f32({4}));
  Expr good = make_if(flag, make_op_call("negative", {a}), make_op_call("add", {a, make_scalar_f32(1)}));
  Expr typed = infer_expr_type(good);
  expect_all_typed(typed);
  EXPECT_EQ(typed->checked_type(), f32({4}));

  Var mask = make_var("mask", tensor_type({4}, DType::kBool), {.span = at(1, 9)});
  Error cond = expr_error(make_if(mask, a, a, {.span = at(1, 5)}));
  EXPECT_EQ(cond.message(), "the condition of 'if' must be a bool scalar (Tensor[(), bool]), got Tensor[(4), bool]");
  EXPECT_EQ(cond.span(), at(1, 9));

  Error branches = expr_error(make_if(flag, a, make_op_call("sum", {a}), {.span = at(3, 2)}));
  EXPECT_EQ(branches.message(),
            "the branches of 'if' have different types: then Tensor[(4), float32], else float32");
  EXPECT_EQ(branches.span(), at(3, 2));
}

TEST(InferType, TuplesAndTupleGetItem) {
  Var x = make_var("x", f32({1, 3, 4, 4}));
  Var c = make_var("c", f32({3}));
  Call bn = make_op_call("nn.batch_norm", {x, c, c, c, c});
  Expr first = make_tuple_get_item(bn, 0);
  Call halves = make_op_call("split", {first}, {{"indices_or_sections", int64_t(2)}, {"axis", int64_t(2)}});
  Expr joined = make_op_call("concatenate", {make_tuple({make_tuple_get_item(halves, 1), make_tuple_get_item(halves, 0)})},
                             {{"axis", int64_t(2)}});
  Expr typed = infer_expr_type(make_tuple({joined, make_tuple_get_item(bn, 2)}));
  expect_all_typed(typed);
  EXPECT_EQ(type_to_string(typed->checked_type()), "(Tensor[(1, 3, 4, 4), float32], Tensor[(3), float32])");

  Error range = expr_error(make_tuple_get_item(bn, 3, {.span = at(7, 7)}));
  EXPECT_EQ(range.message(),
            "tuple index 3 is out of range for a tuple of 3 fields (Tensor[(1, 3, 4, 4), float32], Tensor[(3), float32], "
            "Tensor[(3), float32])");
  EXPECT_EQ(range.span(), at(7, 7));
  EXPECT_EQ(expr_error(make_tuple_get_item(x, 0)).message(),
            "cannot take field 0 of a value of type Tensor[(1, 3, 4, 4), float32]: it is not a tuple");
}

TEST(InferType, ClosuresAndCallsOfFunctionValues) {
  Var x = make_var("x", f32({4}));
  Var u = make_var("u", f32({4}));
  Var f = make_var("f");
  Function closure = make_function({u}, make_op_call("add", {u, x}));  // captures x
  Expr program = make_let(f, closure, make_call(f, {make_call(f, {x})}));
  Expr typed = infer_expr_type(program);
  expect_all_typed(typed);
  EXPECT_EQ(typed->checked_type(), f32({4}));
  EXPECT_EQ(type_to_string(as<LetNode>(typed)->var->checked_type()), "fn (Tensor[(4), float32]) -> Tensor[(4), float32]");

  Var wrong = make_var("w", f32({5}), {.span = at(6, 11)});
  Error argument = expr_error(make_let(f, closure, make_call(f, {wrong})));
  EXPECT_EQ(argument.message(),
            "argument 0 of the call to %f has type Tensor[(5), float32] but the parameter expects Tensor[(4), float32]");
  EXPECT_EQ(argument.span(), at(6, 11));
  EXPECT_EQ(expr_error(make_let(f, closure, make_call(f, {x, x}))).message(),
            "%f takes 1 argument (fn (Tensor[(4), float32]) -> Tensor[(4), float32]) but the call passes 2");
  EXPECT_EQ(expr_error(make_call(x, {x})).message(),
            "cannot call %x: it has type Tensor[(4), float32], not a function type");
  // A parameter of function type is called like any function value.
  Var g = make_var("g", func_type({f32({4})}, f32({4})));
  Expr typed_call = infer_expr_type(make_function({g, x}, make_call(g, {x})));
  EXPECT_EQ(as<FunctionNode>(typed_call)->ret_type, f32({4}));
}

TEST(InferType, DeclaredReturnTypeMustMatch) {
  Var x = make_var("x", f32({4}));
  IRModule mod;
  mod.add("main", make_function({x}, make_op_call("sum", {x}), f32({4}), Attrs(), {.span = at(1, 1)}));
  Error e = module_error(mod);
  EXPECT_EQ(e.message(), "@main is declared to return Tensor[(4), float32] but its body has type float32");
  EXPECT_EQ(e.span(), at(1, 1));
}

TEST(InferType, GlobalCallsAreTypedCalleesFirst) {
  Var a = make_var("a", f32({2, 4}));
  Var v = make_var("v", f32({4}));
  Var k = make_var("k", scalar_type(DType::kFloat32));
  IRModule mod;
  // @main comes first and calls @scale, defined after it, with no return type.
  mod.add("main", make_function({a}, make_call(make_global_var("scale"), {make_op_call("sum", {a}, {{"axis", std::vector<int64_t>{0}}}), make_scalar_f32(2)})));
  mod.add("scale", make_function({v, k}, make_op_call("multiply", {v, k})));
  IRModule typed = infer_type(mod);
  ASSERT_EQ(typed.functions().size(), 2u);
  EXPECT_EQ(typed.functions()[0].first, "main");  // definition order is kept
  const Function& scale = typed.lookup("scale");
  EXPECT_EQ(type_to_string(scale->checked_type()), "fn (Tensor[(4), float32], float32) -> Tensor[(4), float32]");
  const Function& main = typed.lookup("main");
  EXPECT_EQ(main->ret_type, f32({4}));
  const CallNode* call = as<CallNode>(main->body);
  EXPECT_TRUE(type_equal(call->op->checked_type(), scale->checked_type()));
  expect_all_typed(main);

  Var w = make_var("w", f32({3}), {.span = at(9, 14)});
  IRModule bad = mod;
  bad.add("main", make_function({w}, make_call(make_global_var("scale"), {w, make_scalar_f32(2)})));
  Error e = module_error(bad);
  EXPECT_EQ(e.message(),
            "argument 0 of the call to @scale has type Tensor[(3), float32] but the parameter expects Tensor[(4), float32]");
  EXPECT_EQ(e.span(), at(9, 14));
}

TEST(InferType, UndefinedAndRecursiveGlobals) {
  Var x = make_var("x", f32({2}));
  IRModule mod;
  mod.add("main", make_function({x}, make_call(make_global_var("missing", {.span = at(2, 3)}), {x})));
  Error undefined = module_error(mod);
  EXPECT_EQ(undefined.message(), "@missing is not defined in the module");
  EXPECT_EQ(undefined.span(), at(2, 3));
  EXPECT_EQ(expr_error(make_call(make_global_var("g"), {x})).message(),
            "@g is not defined (no module was given to look it up in)");

  Var y = make_var("y", f32({2}));
  IRModule cycle;
  cycle.add("a", make_function({x}, make_call(make_global_var("b"), {x})));
  cycle.add("b", make_function({y}, make_call(make_global_var("a", {.span = at(5, 8)}), {y})));
  Error recursive = module_error(cycle);
  EXPECT_EQ(recursive.message(), "@a is called recursively (@a -> @b -> @a); recursive global functions are not supported");
  EXPECT_EQ(recursive.span(), at(5, 8));

  IRModule self;
  self.add("loop", make_function({x}, make_call(make_global_var("loop"), {x})));
  EXPECT_EQ(module_error(self).message(),
            "@loop is called recursively (@loop -> @loop); recursive global functions are not supported");
}

TEST(InferType, ExpressionsMayCallModuleFunctions) {
  Var v = make_var("v", f32({4}));
  IRModule mod;
  mod.add("twice", make_function({v}, make_op_call("add", {v, v})));
  Var x = make_var("x", f32({4}));
  Expr typed = infer_expr_type(make_call(make_global_var("twice"), {x}), &mod);
  EXPECT_EQ(typed->checked_type(), f32({4}));
}

TEST(InferType, OperatorErrorsCarryTheCallSpan) {
  Var x = make_var("x", f32({2, 3}));
  Var y = make_var("y", f32({4}));
  Error e = expr_error(make_op_call("add", {x, y}, {}, {.span = at(3, 7)}));
  EXPECT_EQ(e.message(), "'add' cannot broadcast shapes (2, 3) and (4) (dimension 1: 3 vs 4)");
  EXPECT_EQ(e.span(), at(3, 7));
  EXPECT_EQ(std::string(e.what()).rfind("infer.sy:3:7: type error: 'add' cannot broadcast shapes (2, 3) and (4)", 0), 0u);

  // A node without a span is blamed on its nearest enclosing node that has one.
  Function fn = make_function({x, y}, make_op_call("exp", {make_op_call("add", {x, y})}), Type(), Attrs(), {.span = at(1, 1)});
  EXPECT_EQ(expr_error(fn).span(), at(1, 1));

  Error dense = expr_error(make_op_call("nn.dense", {make_var("d", f32({1, 784})), make_var("w", f32({512, 783}))}));
  EXPECT_EQ(dense.message(),
            "'nn.dense': data has 784 columns but weight (512, 783) expects 783 (weight is (units, in_features))");
}

// An axis out of range for the input's rank is refused at the call that
// names it: the parser checked what needs no type (text/parser_test.cc),
// the type relation checks the rank.
TEST(InferType, AnAxisOutOfRangeNamesTheCallOfTheTextThatGaveIt) {
  for (const char* call : {"nn.softmax(%x, axis=2)", "sum(%x, axis=[-3])", "take(%x, %i, axis=5)",
                           "transpose(%x, axes=[0, 1, 2])"}) {
    std::string text =
        std::string("def @main(%x: Tensor[(2, 3), float32], %i: Tensor[(1), int64]) {\n  ") + call + "\n}\n";
    Error e = module_error(parse_module(text, "axis.sy"));
    EXPECT_EQ(e.span().to_string(), "axis.sy:2:3") << call;
    EXPECT_NE(e.message().find("rank 2"), std::string::npos) << e.message();
  }
}

TEST(InferType, ArityAndAttributesOfHandBuiltCalls) {
  Var x = make_var("x", f32({2, 3}));
  EXPECT_EQ(expr_error(make_call(op_get("add"), {x}, Attrs(), {.span = at(8, 2)})).message(),
            "'add' expects 2 arguments, got 1");
  EXPECT_EQ(expr_error(make_call(op_get("exp"), {x, x})).message(), "'exp' expects 1 argument, got 2");
  // A call built without normalized attributes gets them.
  Expr sum = infer_expr_type(make_call(op_get("sum"), {x}));
  EXPECT_EQ(sum->checked_type(), f32({}));
  EXPECT_EQ(as<CallNode>(sum)->attrs->entries().size(), 3u);
  EXPECT_EQ(expr_error(make_call(op_get("clip"), {x})).message(),
            "operator 'clip' requires attribute 'a_min' (a number)");
  // Attributes of the right count but the wrong names do not crash.
  Attrs wrong = make_attrs({{"axes", AttrValue()}, {"keep", AttrValue(false)}, {"excl", AttrValue(false)}});
  EXPECT_EQ(expr_error(make_call(op_get("sum"), {x}, wrong)).message().rfind("'sum' has malformed attributes: ", 0), 0u);
}

TEST(InferType, UntypedVariablesAndOperatorValuesAreErrors) {
  Var p = make_var("p", Type(), {.span = at(1, 10)});
  Error param = expr_error(make_function({p}, p));
  EXPECT_EQ(param.message(), "parameter %p of the function has no type annotation");
  EXPECT_EQ(param.span(), at(1, 10));
  IRModule mod;
  mod.add("main", make_function({p}, p));
  EXPECT_EQ(module_error(mod).message(), "parameter %p of @main has no type annotation");
  EXPECT_EQ(expr_error(make_op_call("exp", {make_var("free")})).message(),
            "variable %free has no type: it has no annotation and no let binds it before this use");
  EXPECT_EQ(expr_error(make_tuple({op_get("exp")})).message(),
            "operator 'exp' is used as a value; an operator can only be called");
}

TEST(InferType, MillionDeepCallChain) {
  Var x = make_var("x", f32({4}));
  Expr e = x;
  for (int i = 0; i < 1000000; ++i) e = make_op_call(i % 2 ? "negative" : "add", i % 2 ? std::vector<Expr>{e} : std::vector<Expr>{e, x});
  IRModule mod;
  mod.add("main", make_function({x}, e));
  IRModule typed = infer_type(mod);
  const Function& main = typed.lookup("main");
  EXPECT_EQ(main->ret_type, f32({4}));
  // The innermost call is typed and uses the rebuilt parameter.
  Expr inner = main->body;
  while (as<CallNode>(inner)->args[0]->kind() == ExprKind::kCall) inner = as<CallNode>(inner)->args[0];
  EXPECT_EQ(inner->checked_type(), f32({4}));
  EXPECT_TRUE(as<CallNode>(inner)->args[0].same_as(main->params[0]));
}

TEST(InferType, MillionDeepLetChain) {
  Var x = make_var("x", f32({4}));
  std::vector<Var> vars;
  vars.reserve(1000000);
  for (int i = 0; i < 1000000; ++i) vars.push_back(make_var("v" + std::to_string(i)));
  // let v0 = exp(x); let v1 = exp(v0); ... ; v999999, built from the inside out.
  Expr body = vars.back();
  for (size_t i = vars.size(); i-- > 0;) body = make_let(vars[i], make_op_call("exp", {i ? Expr(vars[i - 1]) : Expr(x)}), body);
  Expr typed = infer_expr_type(make_function({x}, body));
  EXPECT_EQ(as<FunctionNode>(typed)->ret_type, f32({4}));
  const LetNode* innermost = as<LetNode>(as<FunctionNode>(typed)->body);
  while (is<LetNode>(innermost->body)) innermost = as<LetNode>(innermost->body);
  EXPECT_EQ(innermost->var->checked_type(), f32({4}));
  EXPECT_TRUE(innermost->body.same_as(innermost->var));
}

}  // namespace infer_type_test
}  // namespace switchyard
