// The statements the C++ and CUDA renderers of the kernel IR spell alike:
// CUDA C++ is C++, so lets, declarations, assignments and if/else chains
// print through this one printer, and each renderer says only how it prints
// what differs (stores, loops, copies, library primitives, expressions).
#pragma once

#include <string>
#include <vector>

#include "codegen/kernel_code.h"
#include "kernel_ir/kernel.h"

namespace switchyard {

class StatementPrinter {
 public:
  virtual ~StatementPrinter() = default;

  void stmt(CodeWriter& out, const kernel_ir::StmtNode& s);
  void block(CodeWriter& out, const std::vector<kernel_ir::Stmt>& stmts);

 protected:
  virtual std::string expr(const kernel_ir::Expr& e) = 0;
  virtual void store(CodeWriter& out, const kernel_ir::StmtNode& s, const std::string& comment) = 0;
  virtual void loop(CodeWriter& out, const kernel_ir::StmtNode& s) = 0;
  virtual void copy(CodeWriter& out, const kernel_ir::StmtNode& s) = 0;
  virtual void run_primitive(CodeWriter& out, const kernel_ir::StmtNode& s) = 0;

 private:
  // "acc += x" for an update of the form acc = acc + x.
  std::string assignment(const kernel_ir::StmtNode& s);
};

}  // namespace switchyard
