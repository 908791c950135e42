// with_fields never leaves a rebuilt node with a stale type: the type is kept
// while the children's types are, recomputed from them where that is local,
// and cleared otherwise (ir/retype.h).
#include <gtest/gtest.h>

#include "ir/functor.h"
#include "ir/with_fields.h"
#include "op/registry.h"

namespace switchyard {
namespace retype_test {

Type f32(std::vector<int64_t> shape) { return tensor_type(std::move(shape), DType::kFloat32); }

// A variable typed as InferType would type it.
Var typed_var(const std::string& name, const Type& t) { return make_var(name, t, {.checked_type = t}); }

Call typed_add(const Expr& a, const Expr& b, const Type& t) { return make_op_call("add", {a, b}, {}, {.checked_type = t}); }

TEST(Retype, ACallKeepsItsTypeObjectWhileItsArgumentsTypesAreTheSame) {
  Var x = typed_var("x", f32({2}));
  Var y = typed_var("y", f32({2}));
  Call c = typed_add(x, x, f32({2}));
  Call d = with_fields(c, {.args = std::vector<Expr>{x, y}});
  EXPECT_FALSE(d.same_as(c));
  EXPECT_TRUE(d->checked_type().same_as(c->checked_type()));
}

TEST(Retype, ACallRebuiltOverArgumentsOfAnotherShapeTakesItsRelationsType) {
  Var x = typed_var("x", f32({2}));
  Var wide = typed_var("wide", f32({3, 4}));
  Call c = typed_add(x, x, f32({2}));
  Call d = with_fields(c, {.args = std::vector<Expr>{wide, wide}});
  EXPECT_TRUE(type_equal(d->checked_type(), f32({3, 4}))) << type_to_string(d->checked_type());
  // Changing the operator types the call by the new operator's relation.
  Call cast = make_op_call("cast", {x}, {{"dtype", std::string("float16")}}, {.checked_type = tensor_type({2}, DType::kFloat16)});
  Call back = with_fields(cast, {.attrs = make_op_call("cast", {x}, {{"dtype", std::string("int32")}})->attrs});
  EXPECT_TRUE(type_equal(back->checked_type(), tensor_type({2}, DType::kInt32)));
}

TEST(Retype, ACallOverAnUntypedOrMismatchedArgumentIsClearedNotThrown) {
  Var x = typed_var("x", f32({2}));
  Call c = typed_add(x, x, f32({2}));
  Call untyped_arg = make_op_call("negative", {x});  // built without a type
  EXPECT_FALSE(with_fields(c, {.args = std::vector<Expr>{x, untyped_arg}})->checked_type());
  Var odd = typed_var("odd", f32({3}));
  EXPECT_FALSE(with_fields(c, {.args = std::vector<Expr>{x, odd}})->checked_type());  // (2) + (3) does not broadcast
  // A type given explicitly is taken as it is.
  EXPECT_TRUE(with_fields(c, {.args = std::vector<Expr>{x, odd}, .checked_type = f32({7})})->checked_type().same_as(f32({7})));
}

TEST(Retype, UntypednessReachesTheFunctionThroughEveryRebuiltParent) {
  Var x = typed_var("x", f32({2}));
  Call inner = make_op_call("negative", {x}, {}, {.checked_type = f32({2})});
  Call outer = make_op_call("exp", {inner}, {}, {.checked_type = f32({2})});
  Function fn = make_function({x}, outer, f32({2}), Attrs(), {.checked_type = func_type({f32({2})}, f32({2}))});
  // A mutator swapping negative for an untyped sigmoid, as a naive pass would.
  class Swap : public ExprMutator {
   public:
    Expr visit_call(const Call& c) override {
      Expr base = ExprMutator::visit_call(c);
      if (as_op_call(base, "negative")) return make_op_call("sigmoid", {downcast<CallNode>(base)->args[0]});
      return base;
    }
  };
  Function out = downcast<FunctionNode>(Swap().mutate(fn));
  EXPECT_FALSE(out->body->checked_type());
  EXPECT_FALSE(out->checked_type());
}

TEST(Retype, StructuralKindsFollowTheirChildren) {
  Var x = typed_var("x", f32({2}));
  Var m = typed_var("m", f32({5}));
  Tuple pair = make_tuple({x, x}, {.checked_type = tuple_type({f32({2}), f32({2})})});
  Tuple mixed = with_fields(pair, {.fields = std::vector<Expr>{x, m}});
  EXPECT_TRUE(type_equal(mixed->checked_type(), tuple_type({f32({2}), f32({5})})));
  TupleGetItem second = make_tuple_get_item(pair, 1, {.checked_type = f32({2})});
  EXPECT_TRUE(type_equal(with_fields(second, {.tuple = mixed})->checked_type(), f32({5})));
  EXPECT_FALSE(with_fields(second, {.index = 2})->checked_type());  // out of range: cleared

  Var v = typed_var("v", f32({2}));
  Let let = make_let(v, x, v, {.checked_type = f32({2})});
  EXPECT_FALSE(with_fields(let, {.value = m})->checked_type());  // the variable's type no longer holds
  Var w = typed_var("w", f32({5}));
  EXPECT_TRUE(type_equal(with_fields(let, {.var = w, .value = m, .body = w})->checked_type(), f32({5})));

  Function fn = make_function({x}, x, f32({2}), Attrs(), {.checked_type = func_type({f32({2})}, f32({2}))});
  // A new parameter list of another type: the declared result type still holds.
  Function reparam = with_fields(fn, {.params = std::vector<Var>{x, m}});
  EXPECT_TRUE(type_equal(reparam->checked_type(), func_type({f32({2}), f32({5})}, f32({2}))));
  // A body contradicting the declared result type: cleared for InferType to report.
  EXPECT_FALSE(with_fields(fn, {.body = m})->checked_type());
  // A new untyped parameter (ir.Var made in Python) clears it too.
  EXPECT_FALSE(with_fields(fn, {.params = std::vector<Var>{make_var("y", f32({2}))}})->checked_type());
}

TEST(Retype, ChangingOnlyDeviceOrSpanKeepsTheTypeObject) {
  Var x = typed_var("x", f32({2}));
  Function fn = make_function({x}, x, f32({2}), Attrs(), {.checked_type = func_type({f32({2})}, f32({2}))});
  Function moved = with_fields(fn, {.span = Span("f.sy", 1, 1)});
  EXPECT_TRUE(moved->checked_type().same_as(fn->checked_type()));
}

}  // namespace retype_test
}  // namespace switchyard
