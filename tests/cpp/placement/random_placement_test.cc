// Optimality of device planning on small random graphs: with two devices the
// bytes copied must equal the minimum over every placement consistent with the
// hard facts (found here by brute force), and the rewritten IR must move
// exactly those bytes. With three devices, how often and by how much the
// planner exceeds the minimum is printed.
#include <gtest/gtest.h>

#include <cstdio>
#include <random>

#include "ir/functor.h"
#include "op/registry.h"
#include "placement/plan_devices.h"
#include "support/error.h"
#include "transform/infer_type.h"

namespace switchyard {
namespace random_placement_test {

struct RandomProgram {
  IRModule module;
};

// A random DAG of element-wise, broadcast and reducing operators over float32
// tensors of a few sizes, with random wishes on parameters, results and
// intermediate values.
IRModule random_dag(uint32_t seed, int num_ops, const std::vector<std::string>& devices) {
  std::mt19937 rng(seed);
  auto chance = [&](double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; };
  auto pick_device = [&] { return VirtualDevice::parse(devices[rng() % devices.size()]); };
  int64_t rows = 1 + rng() % 8, cols = 1 + rng() % 64;
  Type big = tensor_type({rows, cols}, DType::kFloat32);
  std::vector<Var> params;
  std::vector<Expr> values;
  int num_params = 1 + int(rng() % 3);
  for (int i = 0; i < num_params; ++i) {
    const VirtualDevice* vd = chance(0.5) ? pick_device() : nullptr;
    Var p = make_var("p" + std::to_string(i), big, {.virtual_device = vd});
    params.push_back(p);
    values.push_back(p);
  }
  auto any = [&]() { return values[rng() % values.size()]; };
  for (int i = 0; i < num_ops; ++i) {
    Expr e;
    switch (rng() % 5) {
      case 0: e = make_op_call("nn.relu", {any()}); break;
      case 1: e = make_op_call("exp", {any()}); break;
      case 2: e = make_op_call("add", {any(), any()}); break;
      case 3: e = make_op_call("multiply", {any(), any()}); break;
      default: {
        // A small value (rows x 1) broadcast back to the big shape.
        Expr small = make_op_call("sum", {any()}, {{"axis", std::vector<int64_t>{1}}, {"keepdims", true}});
        e = make_op_call("add", {any(), small});
      }
    }
    if (chance(0.15)) e = make_op_call("on_device", {e}, {{"device", devices[rng() % devices.size()]}});
    values.push_back(e);
  }
  // The result: the last value plus every other unused one, so nothing is dead.
  Expr result = values.back();
  for (size_t i = num_params; i + 1 < values.size(); i += 3) result = make_op_call("add", {result, values[i]});
  Function main = make_function(params, result, Type(), Attrs(), {.virtual_device = chance(0.3) ? pick_device() : nullptr});
  IRModule mod;
  mod.add("main", main);
  return infer_type(mod);
}

// Minimum cost over every assignment of free place nodes, by enumeration.
int64_t brute_force_minimum(const PlacementGraph& g, const CompilationConfig& config,
                            const std::vector<const VirtualDevice*>& planned) {
  std::vector<int> free_nodes;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (!g.nodes[i].fixed) free_nodes.push_back(int(i));
  // Ties force equal devices: enumerate, then reject assignments breaking them.
  size_t k = config.devices.size();
  size_t combos = 1;
  for (size_t i = 0; i < free_nodes.size(); ++i) combos *= k;
  int64_t best = INT64_MAX;
  std::vector<const VirtualDevice*> device(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i) device[i] = g.nodes[i].fixed;
  for (size_t code = 0; code < combos; ++code) {
    size_t c = code;
    for (int n : free_nodes) {
      device[n] = config.devices[c % k];
      c /= k;
    }
    bool ok = true;
    for (const auto& t : g.ties) ok = ok && device[t.a] == device[t.b];
    if (!ok) continue;
    best = std::min(best, placement_cost(g, device).first);
  }
  return best;
}

int64_t bytes_copied_in_ir(const IRModule& mod) {
  int64_t bytes = 0;
  post_order_visit(mod.lookup("main"), [&](const Expr& e) {
    if (as_op_call(e, "device_copy")) bytes += type_nbytes(e->checked_type());
  });
  return bytes;
}

int free_node_count(const PlacementGraph& g) {
  int n = 0;
  for (const PlaceNode& p : g.nodes) n += p.fixed == nullptr;
  return n;
}

TEST(RandomPlacement, TwoDevicesAreOptimalAndTheIrMovesExactlyThat) {
  CompilationConfig config = CompilationConfig::parse("cpu:0,cpu:1");
  int checked = 0;
  for (uint32_t seed = 1; checked < 150 && seed < 2000; ++seed) {
    IRModule mod = random_dag(seed, 3 + seed % 7, {"cpu:0", "cpu:1"});
    PlacementGraph g = build_placement_graph(mod, config);
    if (free_node_count(g) > 13) continue;
    PlanResult plan;
    try {
      plan = plan_devices(mod, config);
    } catch (const Error&) {
      continue;  // contradicting random wishes are reported, not planned
    }
    int64_t minimum = brute_force_minimum(g, config, plan.solution.device);
    ASSERT_EQ(plan.solution.bytes_copied, minimum) << "seed " << seed;
    ASSERT_EQ(bytes_copied_in_ir(plan.module), minimum) << "seed " << seed;
    ++checked;
  }
  EXPECT_GE(checked, 100);
}

TEST(RandomPlacement, ThreeDevicesReport) {
  CompilationConfig config = CompilationConfig::parse("cpu:0,cpu:1,cpu:2");
  int checked = 0, above = 0;
  double worst = 1.0, total_ratio = 0;
  for (uint32_t seed = 1; checked < 60 && seed < 3000; ++seed) {
    IRModule mod = random_dag(seed, 3 + seed % 5, {"cpu:0", "cpu:1", "cpu:2"});
    PlacementGraph g = build_placement_graph(mod, config);
    if (free_node_count(g) > 8) continue;
    PlanResult plan;
    try {
      plan = plan_devices(mod, config);
    } catch (const Error&) {
      continue;
    }
    int64_t minimum = brute_force_minimum(g, config, plan.solution.device);
    ASSERT_GE(plan.solution.bytes_copied, minimum);
    ASSERT_EQ(bytes_copied_in_ir(plan.module), plan.solution.bytes_copied) << "seed " << seed;
    double ratio = minimum ? double(plan.solution.bytes_copied) / double(minimum) : (plan.solution.bytes_copied ? 2.0 : 1.0);
    if (plan.solution.bytes_copied > minimum) ++above;
    worst = std::max(worst, ratio);
    total_ratio += ratio;
    ++checked;
  }
  std::printf("three devices: %d graphs, %d above the minimum, mean ratio %.3f, worst ratio %.3f\n", checked, above,
              total_ratio / checked, worst);
  EXPECT_GE(checked, 40);
}

}  // namespace random_placement_test
}  // namespace switchyard
