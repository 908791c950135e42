// Finding the first symbolic dimension of a module, to refuse it by name.
#include "analysis/symbolic_use.h"

#include "analysis/describe.h"
#include "ir/functor.h"
#include "runtime/clipped_text.h"

namespace switchyard {

const char* const kStaticShapeRemedy =
    ": compile needs a static shape (--input-shape) or a specialisation of the symbolic dimension";

namespace {

std::optional<SymbolicUse> symbolic_use_in(const Type& type, const std::string& node, const Span& span) {
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
  for (const auto& [name, fn] : mod.functions()) {
    for (const Var& p : fn->params)
      if (auto use = symbolic_use_in(p->type_annotation, "%" + p->name_hint, p->span())) return use;
    std::optional<SymbolicUse> first;
    // Visits every node once (a shared node is not revisited), iteratively.
    post_order_visit(fn->body, [&first](const Expr& e) {
      if (first) return;
      if (const VarNode* var = as<VarNode>(e)) first = symbolic_use_in(var->type_annotation, node_name(e), e->span());
      if (!first) first = symbolic_use_in(e->checked_type(), node_name(e), e->span());
      if (!first)
        if (const FunctionNode* inner = as<FunctionNode>(e))
          for (const Var& p : inner->params)
            if (!first) first = symbolic_use_in(p->type_annotation, "%" + p->name_hint, p->span());
    });
    if (first) return first;
    if (auto use = symbolic_use_in(fn->ret_type, "the result of @" + name, fn->span())) return use;
  }
  return std::nullopt;
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
