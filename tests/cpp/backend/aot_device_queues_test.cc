// Split models whose device queues run at once (lower/queue_schedule.h,
// runtime/queued_run.h): every output equals, bit for bit, the run of the
// same artifact in program order (RunOptions::in_order), over repeated and
// concurrent runs; a kernel that faults in one queue fails the run with the
// in-order run's error.
#include <gtest/gtest.h>

#include <cstring>
#include <thread>

#include "aot_test_util.h"
#include "runtime/artifact.h"
#include "runtime/runtime_error.h"
#include "support/random_module.h"
#include "text/parser.h"

namespace switchyard::testing {
namespace aot_device_queues_test {

bool same_bits(const NDArray& a, const NDArray& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() && std::memcmp(a.data(), b.data(), a.nbytes()) == 0;
}

std::shared_ptr<Artifact> build_and_load(const IRModule& mod, const std::string& name) {
  std::string dir = aot_scratch_dir(name) + "/artifact";
  build_artifact(mod, aot_options("cpu:0,cpu:1"), dir);
  return Artifact::load(dir);
}

// Runs `artifact` at once `repeats` times and expects each output to equal
// the in-order run's bit for bit, and the interpreter's within rounding.
void expect_matches_in_order(const Artifact& artifact, const IRModule& mod, uint64_t seed, int repeats = 4) {
  std::map<std::string, NDArray> inputs = random_inputs(mod, seed);
  RunOptions in_order;
  in_order.in_order = true;
  std::vector<NDArray> expected = artifact.run(inputs, in_order).outputs;
  std::vector<NDArray> reference = interpret(mod, inputs);
  ASSERT_EQ(expected.size(), reference.size());
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_EQ(compare_arrays(expected[i], reference[i], 1e-3, 1e-3), "") << "output " << i;
  for (int r = 0; r < repeats; ++r) {
    std::vector<NDArray> actual = artifact.run(inputs).outputs;
    ASSERT_EQ(actual.size(), expected.size());
    for (size_t i = 0; i < actual.size(); ++i) EXPECT_TRUE(same_bits(actual[i], expected[i])) << "output " << i;
  }
}

TEST(DeviceQueues, RandomPlacementsOfRandomGraphsMatchTheInOrderRunBitForBit) {
  RandomModuleOptions options;
  options.use_control_flow = false;
  options.num_nodes = 24;
  options.wish_probability = 0.5;
  int concurrent = 0;
  for (uint64_t seed = 0; seed < 16; ++seed) {
    SCOPED_TRACE("random module seed " + std::to_string(seed));
    IRModule mod = random_module(seed, options);
    std::shared_ptr<Artifact> artifact = build_and_load(mod, "queues_random_" + std::to_string(seed));
    if (artifact->num_queues() == 2) ++concurrent;
    expect_matches_in_order(*artifact, mod, seed);
  }
  EXPECT_GE(concurrent, 8);  // most modules really run on two queues
}

// Two towers of convolutions on two inputs, one per device, summed on cpu:0:
// the towers share no step, so each queue waits only for the copy at the end.
IRModule two_towers() {
  std::string text =
      "def @main(%a: Tensor[(1, 8, 16, 16), float32] @cpu:0, %b: Tensor[(1, 8, 16, 16), float32] @cpu:1,\n"
      "          %wa0: Tensor[(8, 8, 3, 3), float32], %wa1: Tensor[(8, 8, 3, 3), float32],\n"
      "          %wb0: Tensor[(8, 8, 3, 3), float32], %wb1: Tensor[(8, 8, 3, 3), float32])\n"
      "    -> Tensor[(1, 8, 16, 16), float32] @cpu:0 {\n"
      "  %0 = nn.relu(nn.conv2d(%a, %wa0, padding=[1, 1]));\n"
      "  %1 = nn.relu(add(nn.conv2d(%0, %wa1, padding=[1, 1]), %a));\n"
      "  %2 = on_device(nn.relu(nn.conv2d(%b, %wb0, padding=[1, 1])), device=\"cpu:1\");\n"
      "  %3 = on_device(nn.relu(add(nn.conv2d(%2, %wb1, padding=[1, 1]), %b)), device=\"cpu:1\");\n"
      "  add(%1, %3)\n"
      "}\n";
  return parse_module(text, "two_towers.sy");
}

TEST(DeviceQueues, TwoTowersRunOnTwoQueuesAndMatchTheInOrderRun) {
  IRModule mod = two_towers();
  std::shared_ptr<Artifact> artifact = build_and_load(mod, "queues_towers");
  ASSERT_EQ(artifact->num_queues(), 2);
  expect_matches_in_order(*artifact, mod, 3, 8);
  // Each device ran its own tower's kernels.
  RunStats stats = artifact->run(random_inputs(mod, 3)).stats;
  int on[2] = {0, 0};
  for (const KernelRecord& k : stats.kernels) ++on[k.device];
  EXPECT_GE(on[0], 2);
  EXPECT_GE(on[1], 2);
}

// A ResNet-like chain of residual blocks, alternating between the devices:
// each block waits for the one before it, and each device's arena reuses
// slots that the other device's copies read.
IRModule residual_chain(int blocks) {
  std::string params, body = "  %h0 = %x;\n";
  for (int i = 0; i < blocks; ++i) {
    std::string n = std::to_string(i), next = std::to_string(i + 1);
    params += ", %w" + n + "a: Tensor[(8, 8, 3, 3), float32], %w" + n + "b: Tensor[(8, 8, 3, 3), float32]";
    std::string device = i % 2 ? "cpu:1" : "cpu:0";
    body += "  %c" + n + " = on_device(nn.relu(nn.conv2d(%h" + n + ", %w" + n + "a, padding=[1, 1])), device=\"" +
            device + "\");\n";
    body += "  %h" + next + " = on_device(nn.relu(add(nn.conv2d(%c" + n + ", %w" + n + "b, padding=[1, 1]), %h" + n +
            ")), device=\"" + device + "\");\n";
  }
  std::string text = "def @main(%x: Tensor[(1, 8, 12, 12), float32] @cpu:0" + params +
                     ") -> Tensor[(1, 8, 12, 12), float32] @cpu:0 {\n" + body + "  %h" + std::to_string(blocks) +
                     "\n}\n";
  return parse_module(text, "residual_chain.sy");
}

TEST(DeviceQueues, AResidualChainAlternatingDevicesMatchesTheInOrderRun) {
  IRModule mod = residual_chain(6);
  std::shared_ptr<Artifact> artifact = build_and_load(mod, "queues_residual");
  ASSERT_EQ(artifact->num_queues(), 2);
  expect_matches_in_order(*artifact, mod, 5, 8);
}

// cpu:1 is busy with its chain when cpu:0 makes %a (reordered into a slot
// of cpu:0's arena) for it; cpu:0 then reuses that slot for %b's
// convolution. Run without the write-after-read wait, %b overwrites the
// slot before cpu:1's copy reads it, and %q is wrong.
TEST(DeviceQueues, AQueueReusingASlotWaitsForTheOtherQueuesCopyOfIt) {
  IRModule mod = parse_module(
      "def @main(%x: Tensor[(1, 16, 32, 32), float32] @cpu:0, %y: Tensor[(1, 16, 32, 32), float32] @cpu:1,\n"
      "          %w: Tensor[(16, 16, 3, 3), float32])\n"
      "    -> (Tensor[(1, 16, 32, 32), float32], Tensor[(1, 16, 32, 32), float32]) {\n"
      "  %p0 = on_device(nn.relu(nn.conv2d(%y, %w, padding=[1, 1])), device=\"cpu:1\");\n"
      "  %p1 = on_device(nn.relu(nn.conv2d(%p0, %w, padding=[1, 1])), device=\"cpu:1\");\n"
      "  %p2 = on_device(nn.relu(nn.conv2d(%p1, %w, padding=[1, 1])), device=\"cpu:1\");\n"
      "  %p3 = on_device(nn.relu(nn.conv2d(%p2, %w, padding=[1, 1])), device=\"cpu:1\");\n"
      "  %a = on_device(nn.conv2d(%x, %w, padding=[1, 1]), device=\"cpu:0\");\n"
      "  %q = on_device(add(%p3, %a), device=\"cpu:1\");\n"
      "  %b = on_device(nn.conv2d(%a, %w, padding=[1, 1]), device=\"cpu:0\");\n"
      "  %c = on_device(nn.conv2d(%b, %w, padding=[1, 1]), device=\"cpu:0\");\n"
      "  (%q, %c)\n"
      "}\n",
      "reused_slot.sy");
  std::shared_ptr<Artifact> artifact = build_and_load(mod, "queues_reused_slot");
  ASSERT_EQ(artifact->num_queues(), 2);
  expect_matches_in_order(*artifact, mod, 7, 8);
}

TEST(DeviceQueues, ConcurrentRunsOfASplitModelMatchTheInOrderRun) {
  IRModule mod = two_towers();
  std::shared_ptr<Artifact> artifact = build_and_load(mod, "queues_concurrent");
  ASSERT_EQ(artifact->num_queues(), 2);
  RunOptions in_order;
  in_order.in_order = true;
  constexpr int kThreads = 4, kRuns = 6;
  std::vector<std::map<std::string, NDArray>> inputs;
  std::vector<NDArray> expected;
  for (int t = 0; t < kThreads; ++t) {
    inputs.push_back(random_inputs(mod, uint64_t(10 + t)));
    expected.push_back(artifact->run(inputs.back(), in_order).outputs.at(0));
  }
  std::vector<int> mismatches(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRuns; ++r)
        if (!same_bits(artifact->run(inputs[size_t(t)]).outputs.at(0), expected[size_t(t)])) ++mismatches[size_t(t)];
    });
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(mismatches[size_t(t)], 0) << "thread " << t;
}

// cpu:1 divides by zero while cpu:0 works on its own branch and then waits
// for cpu:1's result: the run fails with the in-order run's error, and the
// next run (without the zero) succeeds.
TEST(DeviceQueues, AFaultInOneQueueFailsTheRunWithTheInOrderError) {
  IRModule mod = parse_module(
      "def @main(%x: Tensor[(64), int32] @cpu:0, %y: Tensor[(64), int32] @cpu:1) -> Tensor[(64), int32] @cpu:0 {\n"
      "  %0 = multiply(add(%x, 3), %x);\n"
      "  %1 = on_device(divide(%x, %y), device=\"cpu:1\");\n"
      "  add(%0, %1)\n"
      "}\n",
      "fault.sy");
  std::shared_ptr<Artifact> artifact = build_and_load(mod, "queues_fault");
  ASSERT_EQ(artifact->num_queues(), 2);
  NDArray x(DType::kInt32, {64}), y(DType::kInt32, {64});
  for (int64_t i = 0; i < 64; ++i) {
    x.set_from_double(i, double(i));
    y.set_from_double(i, i == 40 ? 0.0 : 3.0);
  }
  auto error_of = [&](const RunOptions& options) -> std::string {
    try {
      artifact->run({{"x", x}, {"y", y}}, options);
    } catch (const RuntimeError& e) {
      return e.what();
    }
    return "no error";
  };
  RunOptions in_order;
  in_order.in_order = true;
  std::string expected = error_of(in_order);
  EXPECT_NE(expected.find("integer division by zero"), std::string::npos) << expected;
  for (int r = 0; r < 4; ++r) EXPECT_EQ(error_of(RunOptions()), expected);
  y.set_from_double(40, 1.0);
  EXPECT_EQ(error_of(RunOptions()), "no error");
}

}  // namespace aot_device_queues_test
}  // namespace switchyard::testing
