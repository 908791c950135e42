// One-line node descriptions and source context for diagnostics.
#include "analysis/describe.h"

#include <cstdio>

#include "ir/virtual_device.h"
#include "runtime/clipped_text.h"

namespace switchyard {

namespace {

std::string atom(const Expr& e) {
  switch (e->kind()) {
    case ExprKind::kVar: return "%" + static_cast<const VarNode*>(e.get())->name_hint;
    case ExprKind::kGlobalVar: return "@" + static_cast<const GlobalVarNode*>(e.get())->name;
    case ExprKind::kOp: return static_cast<const OpNode*>(e.get())->name;
    case ExprKind::kConstant: {
      const NDArray& d = static_cast<const ConstantNode*>(e.get())->data;
      if (d.numel() == 1) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%g", d.get_as_double(0));
        return std::string(buf) + ":" + dtype_name(d.dtype());
      }
      return std::string("const") + d.shape_string();
    }
    case ExprKind::kCall: {
      const CallNode* c = static_cast<const CallNode*>(e.get());
      return (c->op->kind() == ExprKind::kOp ? atom(c->op) : std::string("call")) + "(...)";
    }
    case ExprKind::kFunction: return "fn(...)";
    case ExprKind::kTuple: return "(...)";
    case ExprKind::kTupleGetItem: {
      // A chain of projections is as deep as the data: walk it iteratively,
      // naming at most the last few.
      std::string suffix;
      Expr inner = e;
      for (int shown = 0; const auto* t = as<TupleGetItemNode>(inner); ++shown) {
        if (shown == 4) return "(...)" + suffix;
        suffix = "." + std::to_string(t->index) + suffix;
        inner = t->tuple;
      }
      return atom(inner) + suffix;
    }
    case ExprKind::kLet: return "let %" + static_cast<const LetNode*>(e.get())->var->name_hint;
    case ExprKind::kIf: return "if (...)";
  }
  return "?";
}

std::string device_suffix(const Expr& e) {
  const VirtualDevice* vd = e->virtual_device();
  return vd->is_fully_unconstrained() ? " (no device)" : " @" + vd->str();
}

}  // namespace

std::string describe_node(const Expr& e) {
  std::string out;
  switch (e->kind()) {
    case ExprKind::kCall: {
      const CallNode* c = static_cast<const CallNode*>(e.get());
      out = atom(c->op) + "(";
      for (size_t i = 0; i < c->args.size(); ++i) out += (i ? ", " : "") + atom(c->args[i]);
      out += ")";
      break;
    }
    case ExprKind::kTuple: {
      out = "(";
      const auto& fields = static_cast<const TupleNode*>(e.get())->fields;
      for (size_t i = 0; i < fields.size(); ++i) out += (i ? ", " : "") + atom(fields[i]);
      out += ")";
      break;
    }
    case ExprKind::kFunction: {
      const FunctionNode* f = static_cast<const FunctionNode*>(e.get());
      out = "fn (";
      for (size_t i = 0; i < f->params.size(); ++i) out += (i ? ", " : "") + atom(f->params[i]);
      out += ") { " + atom(f->body) + " }";
      break;
    }
    case ExprKind::kLet: {
      const LetNode* l = static_cast<const LetNode*>(e.get());
      out = "let %" + l->var->name_hint + " = " + atom(l->value) + "; " + atom(l->body);
      break;
    }
    case ExprKind::kIf: {
      const IfNode* i = static_cast<const IfNode*>(e.get());
      out = "if (" + atom(i->cond) + ") { " + atom(i->then_branch) + " } else { " + atom(i->else_branch) + " }";
      break;
    }
    case ExprKind::kVar: case ExprKind::kConstant: case ExprKind::kTupleGetItem: case ExprKind::kGlobalVar:
    case ExprKind::kOp:
      out = atom(e);
  }
  return out + device_suffix(e);
}

std::string source_context(const Span& span, int radius) {
  if (!span.defined() || span.line() == 0) return "";
  std::string out;
  uint32_t first = span.line() > uint32_t(radius) ? span.line() - radius : 1;
  for (uint32_t l = first; l <= span.line() + radius; ++l) {
    std::string text = source_line(span.source(), l);
    if (text.empty() && l > span.line()) break;
    char num[16];
    std::snprintf(num, sizeof num, "%5u", l);
    out += std::string(l == span.line() ? "  > " : "    ") + num + " | " + clipped_text(text) + "\n";
  }
  return out;
}

}  // namespace switchyard
