// Random well-typed modules for property tests of the printer, parser,
// passes, device planning and the backend.
//
// The module has one function, @main, over float32 tensors of small random
// shapes: element-wise and broadcast operators, nn.dense, reshape, transpose,
// sum, nn.softmax, tuples and projections, lets, scalar and small tensor
// constants, an occasional `if` on a bool parameter, parameters some of which
// carry device wishes, and on_device wishes. Shapes are tracked here (no type
// inference), so every module type-checks. The same seed and options always
// give the same module.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/module.h"

namespace switchyard {

struct RandomModuleOptions {
  int num_nodes = 20;  // operator calls to generate (tuples, projections, ifs count too)
  std::vector<std::string> devices = {"cpu:0", "cpu:1"};  // for wishes; empty = none
  double wish_probability = 0.2;  // per parameter and per call: the chance of a device wish
  bool use_control_flow = true;
};

IRModule random_module(uint64_t seed, const RandomModuleOptions& options = {});

}  // namespace switchyard
