// Helpers of the AOT tests.
#include "aot_test_util.h"

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <random>

#include <gtest/gtest.h>

#include "interp/evaluate.h"
#include "runtime/artifact.h"
#include "support/test_paths.h"
#include "transform/infer_type.h"

namespace switchyard::testing {

namespace fs = std::filesystem;

namespace {

std::string scratch_root() { return binary_dir() + "/aot_test_scratch/" + std::to_string(getpid()); }

class ScratchCleanup : public ::testing::Environment {
 public:
  void TearDown() override { fs::remove_all(scratch_root()); }
};
const ::testing::Environment* const kScratchCleanup = ::testing::AddGlobalTestEnvironment(new ScratchCleanup);

}  // namespace

std::string aot_scratch_dir(const std::string& name) {
  std::string dir = scratch_root() + "/" + name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string aot_cache_dir() { return binary_dir() + "/aot_test_cache"; }

BuildOptions aot_options(const std::string& devices) {
  BuildOptions options;
  options.config = CompilationConfig::parse(devices);
  options.check_invariants = true;
  options.cache_dir = aot_cache_dir();
  return options;
}

std::map<std::string, NDArray> random_inputs(const IRModule& mod, uint64_t seed) {
  IRModule typed = infer_type(mod);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  std::map<std::string, NDArray> inputs;
  for (const Var& p : typed.lookup("main")->params) {
    const TensorTypeNode* type = as_tensor(p->checked_type());
    NDArray array(type->dtype, type->shape);
    for (int64_t i = 0; i < array.numel(); ++i)
      array.set_from_double(i, type->dtype == DType::kBool ? double(rng() % 2) : value(rng));
    inputs[p->name_hint] = array;
  }
  return inputs;
}

std::vector<NDArray> interpret(const IRModule& mod, const std::map<std::string, NDArray>& inputs) {
  return flatten_value(evaluate(infer_type(mod), inputs));
}

std::vector<NDArray> run_artifact(const std::string& dir, const std::map<std::string, NDArray>& inputs) {
  return Artifact::load(dir)->run(inputs).outputs;
}

std::string compare_arrays(const NDArray& actual, const NDArray& expected, double rtol, double atol) {
  if (actual.dtype() != expected.dtype() || actual.shape() != expected.shape())
    return std::string("got ") + dtype_name(actual.dtype()) + " " + actual.shape_string() + ", expected " +
           dtype_name(expected.dtype()) + " " + expected.shape_string();
  for (int64_t i = 0; i < actual.numel(); ++i) {
    double a = actual.get_as_double(i), e = expected.get_as_double(i);
    bool same = std::isnan(a) ? std::isnan(e) : std::isinf(e) ? a == e : std::fabs(a - e) <= atol + rtol * std::fabs(e);
    if (!same) return "element " + std::to_string(i) + " is " + std::to_string(a) + ", expected " + std::to_string(e);
  }
  return "";
}

}  // namespace switchyard::testing
