// Kernel test cases: a small text module whose @main FuseOps turns into one
// primitive call; its kernel is generated, compiled (many cases per shared
// library), run on deterministic random inputs and compared element by
// element with the reference interpreter on the unfused module.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "codegen/kernel.h"
#include "kernel_harness.h"
#include "ir/module.h"

namespace switchyard::testing {

struct KernelCase {
  std::string name;
  std::string text;           // a module with @main
  double low = -2, high = 2;  // range of float inputs
  int64_t int_low = -3, int_high = 5;  // range of integer inputs
  double tolerance = 1e-4;    // relative, plus the same absolute
  // @main parameters the kernel is told are weights (constant between runs
  // at one address), as the AOT build tells it for weights.bin's constants.
  std::vector<std::string> weights = {};
  // Anchors as generated loops even where oneDNN takes them (float32).
  bool generated_loops = false;
};

struct PreparedCase {
  KernelCase spec;
  IRModule module;            // typed, unfused
  Function primitive;         // the one fused function
  KernelSource source;
  std::map<std::string, NDArray> inputs;  // by @main parameter name
  std::vector<NDArray> kernel_inputs;     // in kernel order
};

// Parses, types and fuses the case, checks @main became one primitive call,
// generates its kernel (named after the case) and makes its inputs.
PreparedCase prepare_case(const KernelCase& spec, int seed = 1);

// Prepares every case and compiles their kernels into one library.
struct CaseBatch {
  std::vector<PreparedCase> cases;
  std::shared_ptr<KernelLibrary> library;
};
CaseBatch build_cases(const std::vector<KernelCase>& specs, const std::string& label);

// Runs the case's kernel and compares every output with the interpreter's
// (GoogleTest expectations naming the case).
void expect_matches_interpreter(const CaseBatch& batch, const PreparedCase& prepared, const TestServices& services);

// The arrays are equal within |a - b| <= tolerance * (1 + |b|) (NaN equals NaN);
// a message naming the first difference otherwise, "" when they agree.
std::string compare_arrays(const NDArray& actual, const NDArray& expected, double tolerance);

}  // namespace switchyard::testing
