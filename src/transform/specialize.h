// Specialisation of symbolic dimensions (ir/dim.h): a module whose types
// hold dimension variables, with some of them given values, re-typed with
// those values in their place. What the interpreter runs when it is given
// concrete inputs for a symbolic model, and what a later `--specialize` of
// compilation will build on.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "ir/module.h"
#include "runtime/ndarray.h"

namespace switchyard {

// Variable name -> value.
using DimBindings = std::map<std::string, int64_t>;

// `d` with the bound variables replaced by their values (a constant when
// every variable is bound). Error(kUsage) when a value exceeds the
// variable's bound or is negative.
DimExpr specialize_dim(const DimExpr& d, const DimBindings& values);
// Every tensor type in `t` with its dimensions specialised.
Type specialize_type(const Type& t, const DimBindings& values);

// `mod` with every variable's annotation and every function's result type
// specialised, then typed again (InferType), so each node's type follows.
// Error(kType) as InferType's when the values contradict the program (a
// reshape that no longer fits).
IRModule specialize(const IRModule& mod, const DimBindings& values);

// The values of the symbolic dimensions of `entry`'s parameters read from
// the shapes of `inputs` (by parameter name). Error(kUsage) naming the
// input, the dimension and the constraint when an input has the wrong
// rank, exceeds a variable's bound, or gives one variable two values (two
// inputs sharing `batch` at different sizes). Inputs that are missing are
// left to the caller (the interpreter names them).
DimBindings bind_input_dims(const IRModule& mod, const std::map<std::string, NDArray>& inputs,
                            const std::string& entry = "main");

// `mod` specialised to the shapes of `inputs` when `entry` has symbolic
// parameters; `mod` itself otherwise. Error(kUsage) as bind_input_dims,
// and when a symbolic dimension of a parameter is left without a value
// (one that appears only in a product such as 196*n).
IRModule specialize_for_inputs(const IRModule& mod, const std::map<std::string, NDArray>& inputs,
                               const std::string& entry = "main");

}  // namespace switchyard
