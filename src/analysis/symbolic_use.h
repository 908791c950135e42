// Where a module uses a symbolic dimension (ir/dim.h), for the stages that
// accept only static shapes: the passes not marked symbolic-aware and
// compilation refuse such a module with its first use, named.
#pragma once

#include <optional>
#include <string>

#include "ir/module.h"
#include "support/error.h"

namespace switchyard {

struct SymbolicUse {
  std::string dimension;  // "n<=64"
  std::string node;       // "%x" for a variable, else the node described ("reshape(%x)")
  Type type;              // the type holding it
  Span span;
};

// The first symbolic dimension in `mod`: in each function in order, its
// parameters, then every variable's annotation and every node's type in
// evaluation order, then its result type. nullopt when every type is static.
std::optional<SymbolicUse> find_symbolic_use(const IRModule& mod);

// Error(kind, "<who>: dimension n of %x is symbolic (Tensor[(n, 3),
// float32])<remedy>", at the use's span) when `mod` has a symbolic
// dimension; nothing otherwise.
void refuse_symbolic_use(const IRModule& mod, ErrorKind kind, const std::string& who, const std::string& remedy);

// The remedy compilation names: "compile needs a static shape ...".
extern const char* const kStaticShapeRemedy;
// kStaticShapeRemedy with, when @main has symbolic parameters, the flags
// that fix them at size 1 for an ONNX model: "...; for example
// --input-shape input=1x3x224x224".
std::string static_shape_remedy(const IRModule& mod);

}  // namespace switchyard
