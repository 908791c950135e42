// Structural equality, difference reports and hashing of expressions and
// modules.
//
// Bound variables compare up to renaming: function parameters and let
// variables are paired where they are bound; a variable free in both sides is
// paired where first met. GlobalVars compare by name (their devices are not
// compared), operators by identity, constants bitwise (NaN payloads
// included), types with type_equal, attributes with attrs_equal. checked_type
// is never compared. Sharing is not compared: a DAG equals the tree it
// unfolds to. Everything is iterative, so 1,000,000-deep chains are fine.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "ir/module.h"

namespace switchyard {

// Spans say where a node came from, not what it computes, so they count
// only when asked for (as in TVM, and MLIR's locations): a module equals its
// own printed-and-parsed text. Devices are part of the program and count.
struct StructuralEqualOptions {
  bool compare_devices = true;
  bool compare_spans = false;
};

bool structural_equal(const Expr& lhs, const Expr& rhs, const StructuralEqualOptions& options = {});
// Functions pairwise in module order (names must match); the module's device
// list and planned flag are not compared.
bool structural_equal(const IRModule& lhs, const IRModule& rhs, const StructuralEqualOptions& options = {});

// nullopt when equal; otherwise the first difference, e.g.
//   @main.body.args[0]: devices differ
//     lhs: Call add @cpu:0 at f.sy:3:5
//     rhs: Call add @cpu:1 at f.sy:3:5
std::optional<std::string> structural_diff(const Expr& lhs, const Expr& rhs,
                                           const StructuralEqualOptions& options = {});
std::optional<std::string> structural_diff(const IRModule& lhs, const IRModule& rhs,
                                           const StructuralEqualOptions& options = {});

// Consistent with structural_equal under the same options: equal expressions
// hash equally. Stable across runs of the same build.
size_t structural_hash(const Expr& expr, const StructuralEqualOptions& options = {});

}  // namespace switchyard
