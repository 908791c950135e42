// The two IR rewrites PlanLayouts makes once it has chosen: each value's,
// parameter's and function result's layout set on its virtual device, and
// layout conversions (a fused `layout_convert` call) put in place of the
// values their readers need in another layout.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ir/functor.h"
#include "ir/with_fields.h"

namespace switchyard {

// A call of a fused function converting `value` into the layout its
// result's device will name (PlanLayouts sets it), on `device`.
Expr layout_conversion(const Expr& value, const VirtualDevice* device);

// Fills each value's, parameter's and function result's layout.
class LayoutRewriter : public ExprMutator {
 public:
  std::unordered_map<const ExprNode*, std::string> layouts;  // calls, let variables, parameters, functions

 private:
  Expr relaid(const ExprNode* original, Expr rebuilt) {
    auto it = layouts.find(original);
    if (it == layouts.end()) return rebuilt;
    return with_meta(rebuilt, {.virtual_device = original->virtual_device()->with_layout(it->second)});
  }
  Expr visit_var(const Var& v) override { return relaid(v.get(), ExprMutator::visit_var(v)); }
  Expr visit_call(const Call& c) override { return relaid(c.get(), ExprMutator::visit_call(c)); }
  Expr visit_function(const Function& f) override { return relaid(f.get(), ExprMutator::visit_function(f)); }
};

// A conversion PlanLayouts inserts: of the expression `value`, on `device`.
struct Conversion {
  const ExprNode* value;
  const VirtualDevice* device;
};

// Gives the readers of converted values the conversion in their place.
class ConversionInserter : public ExprMutator {
 public:
  // `redirected`: (reader, argument index or -1 for the function's result)
  // -> index into `conversions`.
  ConversionInserter(std::vector<Conversion> conversions, std::map<std::pair<const ExprNode*, int>, size_t> redirected)
      : conversions_(std::move(conversions)), redirected_(std::move(redirected)), made_(conversions_.size()) {}

  Expr rewrite(const Function& fn) {
    Function rebuilt = downcast<FunctionNode>(mutate(fn));
    Expr body = replaced(fn.get(), -1, rebuilt->body);
    return body.same_as(rebuilt->body) ? Expr(rebuilt) : Expr(with_fields(rebuilt, {.body = body}));
  }

 private:
  // Conversion c of its value as rewritten, made once.
  Expr conversion(size_t c) {
    if (!made_[c].defined())
      made_[c] = layout_conversion(mutate(Expr(conversions_[c].value)), conversions_[c].device);
    return made_[c];
  }
  Expr replaced(const ExprNode* reader, int index, const Expr& rewritten) {
    auto it = redirected_.find({reader, index});
    return it == redirected_.end() ? rewritten : conversion(it->second);
  }
  // The children of `reader` as rewritten, conversions in place; nullopt when none is.
  std::optional<std::vector<Expr>> redirect(const ExprNode* reader, std::vector<Expr> children) {
    bool changed = false;
    for (size_t i = 0; i < children.size(); ++i) {
      Expr child = replaced(reader, int(i), children[i]);
      changed = changed || !child.same_as(children[i]);
      children[i] = child;
    }
    return changed ? std::optional(std::move(children)) : std::nullopt;
  }
  Expr visit_call(const Call& c) override {
    Call rebuilt = downcast<CallNode>(ExprMutator::visit_call(c));
    std::optional<std::vector<Expr>> args = redirect(c.get(), rebuilt->args);
    return args ? Expr(with_fields(rebuilt, {.args = std::move(*args)})) : Expr(rebuilt);
  }
  Expr visit_tuple(const Tuple& t) override {
    Tuple rebuilt = downcast<TupleNode>(ExprMutator::visit_tuple(t));
    std::optional<std::vector<Expr>> fields = redirect(t.get(), rebuilt->fields);
    return fields ? Expr(with_fields(rebuilt, {.fields = std::move(*fields)})) : Expr(rebuilt);
  }

  std::vector<Conversion> conversions_;
  std::map<std::pair<const ExprNode*, int>, size_t> redirected_;
  std::vector<Expr> made_;
};

}  // namespace switchyard
