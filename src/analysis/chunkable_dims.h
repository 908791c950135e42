// Whether a symbolic dimension can be run in chunks: the batch of a model
// whose every operator treats each entry of that dimension on its own
// (convolutions, dense layers, attention within one sequence) computes the
// same outputs for a batch of 3 as for three runs of batch 1 laid side by
// side. A specialised artifact uses that to run a value no program was
// compiled for, as a sum of values that were (runtime/chunked_run.h).
//
// The proof is by construction, operator by operator: each value is either
// independent of the dimension's entries, or holds them along one axis in
// blocks (dimension n * k, entry = index / k); an operator keeps entries
// apart only under the rule written for it here, and any operator without
// a rule, or any reduction, contraction or gather across the axis, refuses
// with the node. Refusing is always safe: the artifact then runs only its
// compiled values, as before.
#pragma once

#include <string>
#include <vector>

#include "ir/dim.h"
#include "ir/expr.h"

namespace switchyard {

struct ChunkableDim {
  std::string dim;  // the variable's name
  // Empty when runs may chunk the dimension; otherwise why not, naming the
  // node and its span ("nn.softmax(%x) at model.onnx:Softmax_3: normalises
  // along axis 0, which holds n").
  std::string refusal;
  // Per parameter of @main, and per tensor of its result flattened: the
  // axis whose extent holds the dimension, -1 where the tensor does not
  // depend on its entries (given whole to every chunk; an output of the
  // first chunk's).
  std::vector<int> input_axes, output_axes;
};

// `main` type-checked (InferType), `var` one of its parameters' variables.
ChunkableDim chunkable_dim(const Function& main, const DimVar* var);

}  // namespace switchyard
