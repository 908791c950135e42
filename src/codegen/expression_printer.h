// The kernel IR's expressions as C-family source: CUDA C++ is C++, so the
// C++ renderer (targets/cpu/compiler/cpu_render.h) and the CUDA renderer
// (targets/cuda/compiler/cuda_render.h) print every expression through this
// one printer, each with its own spellings of operators.
#pragma once

#include <set>
#include <string>

#include "codegen/kernel_code.h"
#include "codegen/scalar_spelling.h"
#include "kernel_ir/expr.h"

namespace switchyard {

namespace kernel_ir {

class ExpressionPrinter {
 public:
  // Records the helpers the printed expressions use in `helpers`.
  ExpressionPrinter(const ScalarSpelling& spelling, std::set<CpuHelper>& helpers)
      : spelling_(spelling), helpers_(helpers) {}

  std::string expr(const Expr& e);

 private:
  // An operand of a tighter-binding operator: parenthesized unless atomic.
  std::string operand(const Expr& e);
  std::string binary(const Expr& e);
  std::string sum_term(const Expr& e);
  std::string logical_term(const Expr& e, BinaryOp op);

  const ScalarSpelling& spelling_;
  std::set<CpuHelper>& helpers_;
};

}  // namespace kernel_ir

// An expression of the kernel IR as C++ with `spelling`'s math functions,
// recording the helpers it uses.
std::string render_kernel_expr(const kernel_ir::Expr& e, const ScalarSpelling& spelling,
                               std::set<CpuHelper>& helpers);

}  // namespace switchyard
