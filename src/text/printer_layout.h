// What the text printer (printer.cc) plans before it writes: each node's
// uses, home block and whether it is bound, the blocks' statements, the
// write tasks; and the node questions that plan asks (atoms, blocks,
// evaluation order, names that print bare).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/expr.h"
#include "ir/virtual_device.h"

namespace switchyard::printer_layout {

enum class Position : uint8_t { kNone, kTail, kLetValue, kOperand };

struct NodeInfo {
  const ExprNode* node = nullptr;
  uint32_t uses = 0;
  int32_t home = -1;                    // block the node is written in
  Position position = Position::kNone;  // kind of its use when it has one
  bool bound = false;                   // written as its own `%N = ...;`
  bool chain_let = false;               // a Let written as a `let` statement of its home block
  bool visited = false;                 // by `place`
  int32_t block = -1;                   // Function body, If then-branch, block of a non-chain Let
  int32_t else_block = -1;
  int32_t name = -1;  // index into names_
};

struct Statement {
  const ExprNode* node;
  bool is_let;
};

struct Block {
  int32_t parent;
  int32_t depth;
  const ExprNode* tail;  // the expression in tail position when the block opens
  std::vector<Statement> statements;
};

struct Task {
  enum Kind : uint8_t { kText, kBlock } kind;
  int32_t block = 0;
  uint32_t next = 0;  // first statement still to write
  int indent = 0;
  const VirtualDevice* previous = nullptr;  // device of the previous binding (Devices::kChanged)
  std::string text;
};

// Whether a node prints as itself wherever it is used (a variable, a
// global, an operator, an unplaced constant).
bool is_atom(const ExprNode* n);
// Whether a node written in place opens nested blocks.
bool opens_blocks(const ExprNode* n);
// The i-th operand in evaluation order (Let is walked apart); null past the end.
const ExprNode* evaluation_operand(const ExprNode* n, uint32_t i);
// Whether `name` prints without quotes.
bool is_simple_name(const std::string& name);
// "@name", quoted when it is not simple.
std::string global_text(const std::string& name);

}  // namespace switchyard::printer_layout
