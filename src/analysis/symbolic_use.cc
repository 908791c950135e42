// Finding the first symbolic dimension of a module, to refuse it by name.
#include "analysis/symbolic_use.h"

#include <unordered_set>
#include <vector>

#include "analysis/describe.h"
#include "ir/functor.h"
#include "runtime/clipped_text.h"

namespace switchyard {

const char* const kStaticShapeRemedy =
    ": compile needs a static shape (--input-shape) or a specialisation of the symbolic dimension (--specialize)";

namespace {

// The types a walk found static, remembered: each nested tuple type of a
// deep tuple chain holds the one before, so walking each node's type afresh
// took time quadratic in the depth (100,000 nested tuples: minutes).
class StaticTypes {
 public:
  // Whether `type` holds a symbolic dimension; iterative, so any depth.
  bool symbolic(const Type& type) {
    std::vector<const TypeNode*> work{type.get()}, seen;
    while (!work.empty()) {
      const TypeNode* t = work.back();
      work.pop_back();
      if (!t || static_.count(t)) continue;
      seen.push_back(t);
      if (t->type_kind() == TypeKind::kTensor) {
        if (!static_cast<const TensorTypeNode*>(t)->is_static()) return true;
      } else if (t->type_kind() == TypeKind::kTuple) {
        for (const Type& field : static_cast<const TupleTypeNode*>(t)->fields) work.push_back(field.get());
      } else {
        const FuncTypeNode* func = static_cast<const FuncTypeNode*>(t);
        for (const Type& param : func->params) work.push_back(param.get());
        work.push_back(func->ret.get());
      }
    }
    static_.insert(seen.begin(), seen.end());
    return false;
  }

 private:
  std::unordered_set<const TypeNode*> static_;
};

std::optional<SymbolicUse> symbolic_use_in(StaticTypes& statics, const Type& type, const std::string& node,
                                           const Span& span) {
  if (!type.defined() || !statics.symbolic(type)) return std::nullopt;
  std::optional<SymbolicDim> found = find_symbolic_dim(type);
  if (!found) return std::nullopt;
  return SymbolicUse{dim_to_string(found->tensor->dims[found->index]), node, type, span};
}

std::string node_name(const Expr& e) {
  if (const VarNode* var = as<VarNode>(e)) return "%" + var->name_hint;
  return describe_node(e);
}

}  // namespace

std::optional<SymbolicUse> find_symbolic_use(const IRModule& mod) {
  StaticTypes statics;
  for (const auto& [name, fn] : mod.functions()) {
    for (const Var& p : fn->params)
      if (auto use = symbolic_use_in(statics, p->type_annotation, "%" + p->name_hint, p->span())) return use;
    std::optional<SymbolicUse> first;
    // Visits every node once (a shared node is not revisited), iteratively.
    post_order_visit(fn->body, [&first, &statics](const Expr& e) {
      if (first) return;
      if (const VarNode* var = as<VarNode>(e))
        first = symbolic_use_in(statics, var->type_annotation, node_name(e), e->span());
      if (!first) first = symbolic_use_in(statics, e->checked_type(), node_name(e), e->span());
      if (!first)
        if (const FunctionNode* inner = as<FunctionNode>(e))
          for (const Var& p : inner->params)
            if (!first) first = symbolic_use_in(statics, p->type_annotation, "%" + p->name_hint, p->span());
    });
    if (first) return first;
    if (auto use = symbolic_use_in(statics, fn->ret_type, "the result of @" + name, fn->span())) return use;
  }
  return std::nullopt;
}

std::string static_shape_remedy(const IRModule& mod) {
  const Function* main = mod.find("main");
  std::string flags;
  for (size_t i = 0; main && i < (*main)->params.size(); ++i) {
    const Var& p = (*main)->params[i];
    const TensorTypeNode* t = as_tensor(p->type_annotation ? p->type_annotation : p->checked_type());
    if (!t || t->is_static()) continue;
    std::string dims;
    for (const DimExpr& d : t->dims) dims += (dims.empty() ? "" : "x") + std::to_string(d.constant().value_or(1));
    flags += " --input-shape " + clipped_text(p->name_hint) + "=" + (dims.empty() ? "1" : dims);
  }
  if (flags.empty()) return kStaticShapeRemedy;
  return std::string(kStaticShapeRemedy) + "; for example" + flags;
}

void refuse_symbolic_use(const IRModule& mod, ErrorKind kind, const std::string& who, const std::string& remedy) {
  std::optional<SymbolicUse> use = find_symbolic_use(mod);
  if (!use) return;
  throw Error(kind,
              who + ": dimension " + use->dimension + " of " + clipped_text(use->node) + " is symbolic (" +
                  clipped_text(type_to_string(use->type)) + ")" + remedy,
              use->span);
}

}  // namespace switchyard
