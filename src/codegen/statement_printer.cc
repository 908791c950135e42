// The statement printer shared by the C++ and CUDA renderers.
#include "codegen/statement_printer.h"

#include <stdexcept>


namespace switchyard {

using kernel_ir::Stmt;
using kernel_ir::StmtKind;
using kernel_ir::StmtNode;

void StatementPrinter::block(CodeWriter& out, const std::vector<Stmt>& stmts) {
  for (const Stmt& s : stmts) stmt(out, *s);
}

std::string StatementPrinter::assignment(const StmtNode& s) {
  std::string target = s.index ? s.name + "[" + expr(s.index) + "]" : s.name;
  const kernel_ir::Expr& v = s.value;
  if (v->kind == kernel_ir::ExprKind::kBinary && v->binary == kernel_ir::BinaryOp::kAdd) {
    const kernel_ir::Expr& a = v->operands[0];
    bool updates = a->kind == kernel_ir::ExprKind::kVar && a->name == s.name && a->operands.size() == (s.index ? 1u : 0u) &&
                   (!s.index || kernel_ir::equal(a->operands[0], s.index));
    if (updates) return target + " += " + expr(v->operands[1]) + ";";
  }
  return target + " = " + expr(v) + ";";
}

void StatementPrinter::stmt(CodeWriter& out, const StmtNode& s) {
  std::string comment = s.comment.empty() ? "" : "  // " + s.comment;
  switch (s.kind) {
    case StmtKind::kLet:
      return out.line("const " + compute_type(s.dtype) + " " + s.name + " = " + expr(s.value) + ";" + comment);
    case StmtKind::kDeclare:
      return out.line(kernel_value_type(s.dtype, s.precision) + " " + s.name +
                      (s.count > 0 ? "[" + std::to_string(s.count) + "]" : "") +
                      (s.value ? " = " + expr(s.value) : "") + ";" + comment);
    case StmtKind::kAssign: return out.line(assignment(s) + comment);
    case StmtKind::kStore: return store(out, s, comment);
    case StmtKind::kFor: return loop(out, s);
    case StmtKind::kIf: {
      out.open("if (" + expr(s.value) + ")");
      block(out, s.body);
      const StmtNode* branch = &s;
      // An else holding only an if continues the chain: "} else if (...) {".
      while (branch->orelse.size() == 1 && branch->orelse[0]->kind == StmtKind::kIf) {
        branch = branch->orelse[0].get();
        out.next("else if (" + expr(branch->value) + ")");
        block(out, branch->body);
      }
      if (!branch->orelse.empty()) {
        out.next("else");
        block(out, branch->orelse);
      }
      return out.close();
    }
    case StmtKind::kCopy: return copy(out, s);
    case StmtKind::kRunPrimitive: return run_primitive(out, s);
    // Both renderers print a kernel's parallel loops themselves, at its top level.
    case StmtKind::kParallel: throw std::logic_error("a parallel loop nested in another statement");
  }
}

}  // namespace switchyard
