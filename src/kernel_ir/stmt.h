// Statements of the kernel IR: bindings, stores, loops and branches. Like
// expressions, one immutable node type for every kind. `comment` is for the
// reader of generated code and never part of a statement's identity.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "kernel_ir/expr.h"

namespace switchyard::kernel_ir {

enum class StmtKind : uint8_t {
  kLet,       // const `dtype` `name` = value
  kDeclare,   // a `dtype` variable `name` (initialised to value, if any), or
              // an array of `count` elements when count > 0
  kAssign,    // name = value, or name[index] = value for an array
  kStore,     // buffer `name`[index] = value (converted to the buffer's dtype)
  kFor,       // for `name` in [begin, end): body; serial or `simd`, which
              // may combine the lanes' partial `reduction`s of `reduced`
  kIf,        // if (value) body else orelse
  kParallel,  // body over [begin, end) chunks of [0, count), through services->parallel_for
  kCopy,      // buffer `name`[0, count) = buffer `source`[0, count)
  kRunPrimitive,  // the library primitive `source` (its spec, as text), writing buffer `name`
};

enum class LoopKind : uint8_t { kSerial, kSimd };

// How a simd loop's lanes combine their partial values of a variable.
enum class Reduction : uint8_t { kNone, kSum, kMax };

struct StmtNode;
using Stmt = std::shared_ptr<const StmtNode>;

// What a parallel loop's body reads from its call: int64 values it names as
// variables, and kernel buffers it loads under a name of its own. Loops that
// differ only in these can share one function (a renderer that gives every
// loop its own substitutes them: bind_arguments).
struct ParallelArguments {
  std::vector<std::pair<std::string, Expr>> values;            // variable -> its value
  std::vector<std::pair<std::string, std::string>> buffers;    // name in the body -> the kernel's buffer
  bool empty() const { return values.empty() && buffers.empty(); }
};

struct StmtNode {
  StmtKind kind;
  std::string name;  // the variable, buffer, loop variable or parallel loop's function
  DType dtype = DType::kInt64;
  Precision precision = Precision::kCompute;  // declare
  Expr value;   // let, declare, assign, store: the value; if: the condition
  Expr index;   // store, assign: the element; for: begin
  Expr end;     // for
  LoopKind loop = LoopKind::kSerial;
  int vector_width = 0;  // simd loops: the lanes asked for; 0 leaves the choice to the compiler
  Reduction reduction = Reduction::kNone;  // simd loops
  std::string reduced;                     // the variable they reduce
  std::string source;                      // copy: the buffer read; run primitive: its spec
  int64_t count = 0;     // parallel: iterations; declare: array elements
  int64_t grain = 1;     // parallel: the fewest iterations in one chunk
  std::vector<Stmt> body;
  std::vector<Stmt> orelse;
  ParallelArguments arguments;  // parallel
  std::string comment;
  size_t hash = 0;
};

Stmt let(std::string name, DType dtype, Expr value, std::string comment = "");
Stmt declare(std::string name, DType dtype, std::string comment = "");
// A variable holding `initial`'s type, starting at it.
Stmt declare(std::string name, Expr initial);
Stmt declare_array(std::string name, DType dtype, Precision precision, int64_t elements);
Stmt assign(std::string name, Expr value);
Stmt assign_element(std::string array, Expr at, Expr value);
Stmt store(std::string buffer, Expr at, Expr value);
Stmt for_loop(std::string var, Expr begin, Expr end, LoopKind loop, std::vector<Stmt> body, int vector_width = 0);
// A simd loop whose lanes each accumulate `reduced` and combine at its end.
Stmt simd_reduction(std::string var, Expr begin, Expr end, Reduction reduction, std::string reduced,
                    std::vector<Stmt> body);
Stmt if_then_else(Expr condition, std::vector<Stmt> then_body, std::vector<Stmt> else_body = {});
// The parallel loop's body sees the int64 variables `begin` and `end`.
Stmt parallel(std::string function, int64_t count, int64_t grain, std::vector<Stmt> body, std::string comment,
              ParallelArguments arguments = {});
// The parallel loop `loop` with its arguments substituted into its body.
Stmt bind_arguments(const Stmt& loop);

// The parallel loop `loop` with every buffer its body loads or stores by the
// kernel's name (not an argument's) made an argument too, named
// `operand_<k>` in the order the body first names it: a body that then
// names nothing of its kernel's reads the same wherever it came from, so
// loops of different kernels can share its code.
Stmt with_buffers_as_arguments(const Stmt& loop);

// The parallel loop `loop` as code shared by kernels prints it: its buffers
// made arguments (above), the variables its body defines named v0, v1... in
// order, its body's comments (which name model nodes) dropped.
Stmt shareable_form(const Stmt& loop);

Stmt copy(std::string buffer, std::string source, int64_t elements, std::string comment = "");
// Runs the kernel's library primitive (described by `spec`, which is part of
// the identity) with the kernel's inputs, writing `destination`.
Stmt run_primitive(std::string spec, std::string destination, std::string comment = "");

// Structural equality, ignoring comments.
bool equal(const Stmt& a, const Stmt& b);
bool equal(const std::vector<Stmt>& a, const std::vector<Stmt>& b);
size_t hash(const std::vector<Stmt>& stmts);

// Calls `visit` on every expression of `stmts` and their nested statements,
// operands included (pre-order).
void visit_exprs(const std::vector<Stmt>& stmts, const std::function<void(const Expr&)>& visit);

}  // namespace switchyard::kernel_ir
