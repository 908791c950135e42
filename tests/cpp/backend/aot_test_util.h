// Helpers of the AOT tests: scratch and cache directories, build options for
// two CPU devices, random inputs, the interpreter's answer, and comparison.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ir/module.h"
#include "pipeline/build.h"
#include "runtime/ndarray.h"

namespace switchyard::testing {

// A fresh, empty directory for one test, removed when the test program ends.
std::string aot_scratch_dir(const std::string& name);
// The object cache the AOT tests share across runs (under the build tree), so
// only a changed kernel is compiled again.
std::string aot_cache_dir();
// Options for `devices` (e.g. "cpu:0,cpu:1") with the invariant checker on
// and the tests' cache.
BuildOptions aot_options(const std::string& devices);

// Inputs for every parameter of @main (types from InferType), values in
// [-1, 1) varied by `seed`.
std::map<std::string, NDArray> random_inputs(const IRModule& mod, uint64_t seed);
// The reference interpreter's outputs, tuples flattened.
std::vector<NDArray> interpret(const IRModule& mod, const std::map<std::string, NDArray>& inputs);
// The artifact at `dir` run on `inputs`, outputs in manifest order.
std::vector<NDArray> run_artifact(const std::string& dir, const std::map<std::string, NDArray>& inputs);

// Same dtype and shape, and every element within atol + rtol * |expected|
// (NaNs and infinities must match). "" when close, else what differs.
std::string compare_arrays(const NDArray& actual, const NDArray& expected, double rtol, double atol);

}  // namespace switchyard::testing
