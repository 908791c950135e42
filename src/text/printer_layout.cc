// The text printer's node questions (see printer_layout.h).
#include "text/printer_layout.h"

#include "support/identifier.h"
#include "text/literals.h"

namespace switchyard::printer_layout {

bool is_atom(const ExprNode* n) {
  switch (n->kind()) {
    case ExprKind::kVar:
    case ExprKind::kGlobalVar:
    case ExprKind::kOp: return true;
    case ExprKind::kConstant: return n->virtual_device()->is_fully_unconstrained();
    case ExprKind::kCall: case ExprKind::kFunction: case ExprKind::kLet: case ExprKind::kIf: case ExprKind::kTuple:
    case ExprKind::kTupleGetItem: return false;
  }
  return false;
}

bool opens_blocks(const ExprNode* n) {
  return n->kind() == ExprKind::kIf || n->kind() == ExprKind::kFunction || n->kind() == ExprKind::kLet;
}

const ExprNode* evaluation_operand(const ExprNode* n, uint32_t i) {
  switch (n->kind()) {
    case ExprKind::kCall: {
      auto* call = static_cast<const CallNode*>(n);
      if (i == 0) return call->op.get();
      return i - 1 < call->args.size() ? call->args[i - 1].get() : nullptr;
    }
    case ExprKind::kTuple: {
      auto* tuple = static_cast<const TupleNode*>(n);
      return i < tuple->fields.size() ? tuple->fields[i].get() : nullptr;
    }
    case ExprKind::kTupleGetItem: return i == 0 ? static_cast<const TupleGetItemNode*>(n)->tuple.get() : nullptr;
    case ExprKind::kIf: {
      auto* branch = static_cast<const IfNode*>(n);
      return i == 0 ? branch->cond.get() : i == 1 ? branch->then_branch.get() : i == 2 ? branch->else_branch.get() : nullptr;
    }
    case ExprKind::kFunction: return i == 0 ? static_cast<const FunctionNode*>(n)->body.get() : nullptr;
    case ExprKind::kVar: case ExprKind::kConstant: case ExprKind::kLet: case ExprKind::kGlobalVar: case ExprKind::kOp:
      return nullptr;
  }
  return nullptr;
}

bool is_simple_name(const std::string& name) {
  if (name.empty()) return false;
  for (char c : name)
    if (!is_identifier_char(c)) return false;
  return true;
}

std::string global_text(const std::string& name) {
  return "@" + (is_simple_name(name) ? name : attr_value_text(AttrValue(name)));
}

}  // namespace switchyard::printer_layout
