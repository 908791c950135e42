// What the field tables generate, checked for every node kind and every field
// from the tables themselves: with_fields changes exactly the named field,
// with_meta and with_children keep the rest, for_each_child agrees with
// with_children, the mutator rebuilds only when a child changed, and
// structural equality and hashing see every field (except a Var's name).
#include <gtest/gtest.h>

#include <string_view>

#include "ir/functor.h"
#include "ir/structural_equal.h"
#include "ir/with_fields.h"

namespace switchyard {
namespace node_fields_test {

const VirtualDevice* cpu(int id) { return VirtualDevice::for_device(DeviceKind::kCPU, id); }

// A value for a field of type T; different variants differ structurally.
template <typename T>
T sample(int variant) {
  if constexpr (std::is_same_v<T, Expr>) {
    return make_scalar_f32(float(variant));
  } else if constexpr (std::is_same_v<T, std::vector<Expr>>) {
    std::vector<Expr> out{make_scalar_f32(10), make_scalar_f32(11)};
    for (int i = 0; i < variant; ++i) out.push_back(make_scalar_f32(float(20 + i)));
    return out;
  } else if constexpr (std::is_same_v<T, Var>) {
    return make_var("v", tensor_type({variant + 1}, DType::kFloat32));
  } else if constexpr (std::is_same_v<T, std::vector<Var>>) {
    std::vector<Var> out{make_var("p", tensor_type({1}, DType::kFloat32))};
    for (int i = 0; i < variant; ++i) out.push_back(make_var("q", tensor_type({2}, DType::kFloat32)));
    return out;
  } else if constexpr (std::is_same_v<T, Type>) {
    return tensor_type({variant + 1}, DType::kFloat32);
  } else if constexpr (std::is_same_v<T, Attrs>) {
    return make_attrs({{"axis", int64_t(variant)}});
  } else if constexpr (std::is_same_v<T, NDArray>) {
    return NDArray::scalar_f32(float(variant));
  } else if constexpr (std::is_same_v<T, std::string>) {
    return "name" + std::to_string(variant);
  } else {
    static_assert(std::is_same_v<T, int>, "add a sample for this field type");
    return variant;
  }
}

// Whether two values of a field are the very same (no copy made).
template <typename T>
bool identical(const T& a, const T& b) {
  if constexpr (is_child_list_field<T>) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (!a[i].same_as(b[i])) return false;
    return true;
  } else if constexpr (std::is_same_v<T, NDArray>) {
    return a.data() == b.data();
  } else if constexpr (std::is_same_v<T, std::string> || std::is_same_v<T, int>) {
    return a == b;
  } else {
    return a.same_as(b);
  }
}

std::vector<Expr> children_of(const Expr& e) {
  std::vector<Expr> out;
  for_each_child(e, [&](const Expr& c) { out.push_back(c); });
  return out;
}

// Runs `check(node, changes_type)` for a sample node of every rebuilt kind,
// placed and with a span and type, so that carrying them is checked too.
template <typename Check>
void for_every_kind(Check&& check) {
  NodeMeta meta{cpu(1), Span("f.sy", 3, 4), tensor_type({7}, DType::kFloat32)};
#define SY_SAMPLE(T, name) sample<T>(0),
#define SY_CASE(Name, lower)                                                          \
  {                                                                                   \
    SCOPED_TRACE(#Name);                                                              \
    check(Name(make_ref<Name##Node>(SY_FIELDS_##Name(SY_SAMPLE) meta)), Name##Changes()); \
  }
  SY_REBUILT_EXPR_KINDS(SY_CASE)
#undef SY_CASE
#undef SY_SAMPLE
}

// Device and span are carried; the type too, unless `type_decided` (the
// changed field decides the node's type, which is then recomputed from the
// new fields: retype_test.cc; the samples' types are arbitrary).
template <typename N>
void expect_meta_carried(const Ref<N>& changed, const Ref<N>& original, bool type_decided = false) {
  EXPECT_EQ(changed->virtual_device(), original->virtual_device());
  EXPECT_EQ(changed->span(), original->span());
  if (!type_decided) {
    EXPECT_TRUE(changed->checked_type().same_as(original->checked_type()));
  }
}

TEST(NodeFields, WithFieldsChangesOnlyTheNamedField) {
  for_every_kind([](const auto& node, auto changes) {
    using N = std::remove_cvref_t<decltype(*node)>;
    using C = decltype(changes);
    EXPECT_TRUE(with_fields(node, C{}).same_as(node));
    C::for_each_field([&](const char* changed_name, auto change) {
      SCOPED_TRACE(changed_name);
      using T = typename std::remove_reference_t<decltype(C().*change)>::value_type;
      C c;
      c.*change = sample<T>(1);
      auto changed = with_fields(node, std::move(c));
      ASSERT_FALSE(changed.same_as(node));
      expect_meta_carried(changed, node, std::string_view(changed_name) != "name_hint");
      N::for_each_field([&](const char* name, auto member) {
        bool same = identical(changed.get()->*member, node.get()->*member);
        EXPECT_EQ(same, std::string_view(name) != changed_name) << name;
      });
    });
  });
}

TEST(NodeFields, WithMetaKeepsEveryField) {
  for_every_kind([](const auto& node, auto) {
    using N = std::remove_cvref_t<decltype(*node)>;
    Expr moved = with_meta(node, {.virtual_device = cpu(2), .span = Span("g.sy", 5, 6)});
    ASSERT_FALSE(moved.same_as(node));
    EXPECT_EQ(moved->virtual_device(), cpu(2));
    EXPECT_EQ(moved->span(), Span("g.sy", 5, 6));
    EXPECT_TRUE(moved->checked_type().same_as(node->checked_type()));
    auto* m = as<N>(moved);
    ASSERT_NE(m, nullptr);
    N::for_each_field([&](const char* name, auto member) {
      EXPECT_TRUE(identical(m->*member, node.get()->*member)) << name;
    });
  });
}

TEST(NodeFields, WithChildrenAgreesWithForEachChild) {
  for_every_kind([](const auto& node, auto) {
    std::vector<Expr> children = children_of(node);
    EXPECT_EQ(child_count(node), children.size());
    EXPECT_TRUE(with_children(node, children).same_as(node));
    if (children.empty()) return;
    // Fresh children of the same kinds (Vars stay Vars), in the same order.
    std::vector<Expr> fresh;
    for (const Expr& c : children)
      fresh.push_back(is<VarNode>(c) ? Expr(make_var("w")) : Expr(make_scalar_f32(99)));
    Expr rebuilt = with_children(node, fresh);
    ASSERT_FALSE(rebuilt.same_as(node));
    std::vector<Expr> after = children_of(rebuilt);
    ASSERT_EQ(after.size(), fresh.size());
    for (size_t i = 0; i < fresh.size(); ++i) EXPECT_TRUE(after[i].same_as(fresh[i])) << i;
    EXPECT_EQ(rebuilt->virtual_device(), node->virtual_device());
    EXPECT_EQ(rebuilt->span(), node->span());
  });
}

// Replaces every constant (so every sample child) by a fresh one.
class FreshConstants : public ExprMutator {
 public:
  Expr visit_constant(const Constant& c) override { return make_constant(c->data); }
};

TEST(NodeFields, MutatorRebuildsOnlyWhenAChildChanged) {
  for_every_kind([](const auto& node, auto) {
    using N = std::remove_cvref_t<decltype(*node)>;
    EXPECT_TRUE(ExprMutator().mutate(node).same_as(node));
    Expr mutated = FreshConstants().mutate(node);
    auto* m = as<N>(mutated);
    ASSERT_NE(m, nullptr);
    bool has_constant_child = false;
    for (const Expr& c : children_of(node)) has_constant_child |= is<ConstantNode>(c);
    if (N::kKind != ExprKind::kConstant) {
      EXPECT_EQ(mutated.same_as(node), !has_constant_child);
    }
    N::for_each_field([&](const char* name, auto member) {
      using T = std::remove_cvref_t<decltype(node.get()->*member)>;
      if constexpr (!is_child_field<T>) {
        EXPECT_TRUE(identical(m->*member, node.get()->*member)) << name;
      }
    });
  });
}

TEST(NodeFields, StructuralEqualityAndHashSeeEveryField) {
  for_every_kind([](const auto& node, auto changes) {
    using C = decltype(changes);
    EXPECT_TRUE(structural_equal(node, node));
    C::for_each_field([&](const char* name, auto change) {
      SCOPED_TRACE(name);
      using T = typename std::remove_reference_t<decltype(C().*change)>::value_type;
      C c;
      c.*change = sample<T>(1);
      Expr changed = with_fields(node, std::move(c));
      // A variable's name is a hint: variables compare up to renaming.
      bool ignored = node->kind() == ExprKind::kVar && std::string_view(name) == "name_hint";
      EXPECT_EQ(structural_equal(node, changed), ignored);
      EXPECT_EQ(structural_hash(node) == structural_hash(changed), ignored);
      EXPECT_EQ(structural_diff(node, changed).has_value(), !ignored);
    });
  });
}

TEST(NodeFields, DifferencesAreNamedAsBefore) {
  Call call = make_call(make_scalar_f32(0), {make_scalar_f32(1)}, make_attrs({{"axis", int64_t(0)}}));
  auto first_line = [](const Expr& a, const Expr& b) {
    std::string diff = structural_diff(a, b).value_or("");
    return diff.substr(0, diff.find('\n'));
  };
  EXPECT_EQ(first_line(call, with_fields(call, {.args = std::vector<Expr>{}})), "expr: argument counts differ (1 vs 0)");
  EXPECT_EQ(first_line(call, with_fields(call, {.attrs = Attrs()})), "expr: attributes differ");
  EXPECT_EQ(first_line(call, with_fields(call, {.op = make_scalar_f32(5)})), "expr.op: constant values differ");
  EXPECT_EQ(first_line(call, with_fields(call, {.args = std::vector<Expr>{make_scalar_f32(2)}})),
            "expr.args[0]: constant values differ");
  TupleGetItem item = make_tuple_get_item(make_tuple({call}), 0);
  EXPECT_EQ(first_line(item, with_fields(item, {.index = 1})), "expr: tuple indices differ");
  Var x = make_var("x", tensor_type({1}, DType::kFloat32));
  Function f = make_function({x}, x, Type(), make_attrs({{"Primitive", int64_t(1)}}));
  EXPECT_EQ(first_line(f, with_fields(f, {.attrs = Attrs()})), "expr: function attributes differ");
  EXPECT_EQ(first_line(f, with_fields(f, {.params = std::vector<Var>{make_var("y")}, .body = x})),
            "expr.params[0]: variable types differ");
}

}  // namespace node_fields_test
}  // namespace switchyard
