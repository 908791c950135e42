// The default pipeline on random two-device modules, under the invariant
// checker: the interpreter's outputs stay equal to those of the unoptimized
// module, and every function keeps its parameter and result devices.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "interp/evaluate.h"
#include "pipeline/pass_table.h"
#include "placement/plan_devices.h"
#include "support/error.h"
#include "support/random_module.h"
#include "text/printer.h"
#include "transform/infer_type_pass.h"
#include "transform/instruments.h"

namespace switchyard {
namespace default_pipeline_property_test {

constexpr int kSeeds = 50;

// Random inputs for @main's parameters, by name: values in [-2, 2], random
// truth values for bools.
std::map<std::string, NDArray> random_inputs(const IRModule& mod, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(-2.0, 2.0);
  std::map<std::string, NDArray> inputs;
  for (const Var& p : mod.lookup("main")->params) {
    const TensorTypeNode* t = as_tensor(p->type_annotation);
    NDArray a(t->dtype, t->shape);
    for (int64_t i = 0; i < a.numel(); ++i) a.set_from_double(i, t->dtype == DType::kBool ? double(rng() & 1) : uniform(rng));
    inputs.emplace(p->name_hint, a);
  }
  return inputs;
}

// Equal bit for bit, or (where folding may reassociate) within 1e-5
// relative; NaN matches NaN.
bool close(const NDArray& got, const NDArray& want, bool* bitwise) {
  if (got.bitwise_equal(want)) return true;
  *bitwise = false;
  if (got.shape() != want.shape() || got.dtype() != want.dtype()) return false;
  for (int64_t i = 0; i < got.numel(); ++i) {
    double a = got.get_as_double(i), b = want.get_as_double(i);
    if (std::isnan(a) && std::isnan(b)) continue;
    if (std::abs(a - b) > 1e-5 * std::max({std::abs(a), std::abs(b), 1e-1})) return false;
  }
  return true;
}

std::vector<std::string> signature_devices(const Function& fn) {
  std::vector<std::string> out;
  for (const Var& p : fn->params) out.push_back(p->virtual_device()->str());
  out.push_back(fn->virtual_device()->str());
  return out;
}

TEST(DefaultPipelineProperty, RandomTwoDeviceModulesKeepTheirResultsAndSignatures) {
  PipelineOptions options;
  options.config = CompilationConfig::parse("cpu:0,cpu:1");
  RandomModuleOptions module_options;
  module_options.num_nodes = 40;
  module_options.devices = {"cpu:0", "cpu:1"};
  int not_bitwise = 0;
  for (int seed = 0; seed < kSeeds; ++seed) {
    IRModule mod = random_module(uint64_t(seed), module_options);
    SCOPED_TRACE("seed " + std::to_string(seed) + ":\n" + print_module(mod));
    IRModule planned = Sequential({InferType(), PlanDevices(*options.config)})(mod);
    PassContext ctx;
    ctx.instruments.push_back(std::make_shared<InvariantChecker>());
    IRModule optimized;
    try {
      optimized = default_pipeline(options)(mod, ctx);
    } catch (const Error& e) {
      ADD_FAILURE() << e.render();
      continue;
    }
    ASSERT_TRUE(optimized.device_planned());
    EXPECT_EQ(signature_devices(optimized.lookup("main")), signature_devices(planned.lookup("main")))
        << print_module(optimized);

    std::map<std::string, NDArray> inputs = random_inputs(mod, uint64_t(seed) * 7919 + 1);
    std::vector<Value> want = flatten_tensors(evaluate(mod, inputs));
    std::vector<Value> want_placed = flatten_tensors(evaluate(planned, inputs));
    std::vector<Value> got = flatten_tensors(evaluate(optimized, inputs));
    ASSERT_EQ(got.size(), want.size());
    bool bitwise = true;
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_TRUE(close(got[i].tensor, want[i].tensor, &bitwise)) << "output " << i << "\n" << print_module(optimized);
      // Results are produced where the planned module produces them.
      EXPECT_EQ(got[i].device, want_placed[i].device) << "output " << i;
    }
    not_bitwise += bitwise ? 0 : 1;
  }
  // Reported, not asserted: how often folding changed the last bits.
  std::printf("%d of %d random modules were not bit-identical\n", not_bitwise, kSeeds);
}

TEST(DefaultPipelineProperty, NormalFormsKeepResultsOfPlannedRandomModules) {
  CompilationConfig config = CompilationConfig::parse("cpu:0,cpu:1");
  RandomModuleOptions module_options;
  module_options.num_nodes = 40;
  for (int seed = 0; seed < kSeeds; ++seed) {
    IRModule mod = random_module(uint64_t(seed), module_options);
    SCOPED_TRACE("seed " + std::to_string(seed) + ":\n" + print_module(mod));
    IRModule planned = Sequential({InferType(), PlanDevices(config)})(mod);
    PassContext ctx;
    ctx.instruments.push_back(std::make_shared<InvariantChecker>());
    IRModule round_trip;
    try {
      round_trip = Sequential({pass_by_name("ToANormalForm", {}), pass_by_name("DeadCodeElimination", {}),
                               pass_by_name("ToGraphNormalForm", {}), pass_by_name("Inline", {})})(planned, ctx);
    } catch (const Error& e) {
      ADD_FAILURE() << e.render();
      continue;
    }
    EXPECT_EQ(signature_devices(round_trip.lookup("main")), signature_devices(planned.lookup("main")));
    std::map<std::string, NDArray> inputs = random_inputs(mod, uint64_t(seed) + 17);
    std::vector<NDArray> want = flatten_value(evaluate(planned, inputs));
    std::vector<NDArray> got = flatten_value(evaluate(round_trip, inputs));
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) EXPECT_TRUE(got[i].bitwise_equal(want[i])) << "output " << i;
  }
}

}  // namespace default_pipeline_property_test
}  // namespace switchyard
