// Requests in flight (Artifact::run_async): many at once, from one thread
// or several, each get exactly their own outputs (bit for bit the in-order
// run's); a request that fails gives its error through its future and
// leaves the others whole; destroying the artifact with requests in flight
// ends every one of them.
#include <gtest/gtest.h>

#include <cstring>
#include <future>
#include <thread>

#include "aot_test_util.h"
#include "runtime/artifact.h"
#include "runtime/runtime_error.h"
#include "text/parser.h"

namespace switchyard::testing {
namespace aot_run_async_test {

bool same_bits(const NDArray& a, const NDArray& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() && std::memcmp(a.data(), b.data(), a.nbytes()) == 0;
}

std::shared_ptr<Artifact> build_and_load(const IRModule& mod, const std::string& name, const std::string& devices,
                                         const LoadOptions& options = {}) {
  std::string dir = aot_scratch_dir(name) + "/artifact";
  build_artifact(mod, aot_options(devices), dir);
  return Artifact::load(dir, options);
}

// A chain of convolutions in two stages: with `split`, the first stage on
// cpu:0 and the second on cpu:1, so consecutive requests can pipeline.
IRModule two_stage_chain(int blocks_per_stage, bool split, int side = 12) {
  std::string params, body = "  %h0 = %x;\n";
  for (int i = 0; i < 2 * blocks_per_stage; ++i) {
    std::string n = std::to_string(i), next = std::to_string(i + 1);
    params += ", %w" + n + ": Tensor[(8, 8, 3, 3), float32]";
    std::string conv = "nn.relu(add(nn.conv2d(%h" + n + ", %w" + n + ", padding=[1, 1]), %h" + n + "))";
    std::string device = i < blocks_per_stage ? "cpu:0" : "cpu:1";
    body += "  %h" + next + " = " + (split ? "on_device(" + conv + ", device=\"" + device + "\")" : conv) + ";\n";
  }
  std::string image = "Tensor[(1, 8, " + std::to_string(side) + ", " + std::to_string(side) + "), float32]";
  std::string text = "def @main(%x: " + image + " @cpu:0" + params + ") -> " + image + " {\n" + body + "  %h" +
                     std::to_string(2 * blocks_per_stage) + "\n}\n";
  return parse_module(text, "two_stage_chain.sy");
}

struct Requests {
  std::vector<std::map<std::string, NDArray>> inputs;
  std::vector<NDArray> expected;  // the in-order run's output of each
};

Requests make_requests(const Artifact& artifact, const IRModule& mod, int count, uint64_t first_seed) {
  RunOptions in_order;
  in_order.in_order = true;
  Requests requests;
  for (int r = 0; r < count; ++r) {
    requests.inputs.push_back(random_inputs(mod, first_seed + uint64_t(r)));
    requests.expected.push_back(artifact.run(requests.inputs.back(), in_order).outputs.at(0));
  }
  return requests;
}

TEST(RunAsync, ManyRequestsInFlightEachGetExactlyTheirOwnOutputs) {
  IRModule mod = two_stage_chain(3, true);
  std::shared_ptr<Artifact> artifact = build_and_load(mod, "async_many", "cpu:0,cpu:1");
  ASSERT_EQ(artifact->num_queues(), 2);
  EXPECT_EQ(artifact->max_in_flight(), 4);  // two per queue
  Requests requests = make_requests(*artifact, mod, 24, 100);
  EXPECT_EQ(compare_arrays(requests.expected[0], interpret(mod, requests.inputs[0])[0], 1e-3, 1e-3), "");
  // More requests than may be in flight: run_async waits for places as they free.
  std::vector<std::future<RunResult>> futures;
  for (const auto& inputs : requests.inputs) futures.push_back(artifact->run_async(inputs));
  for (size_t r = 0; r < futures.size(); ++r) {
    RunResult result = futures[r].get();
    ASSERT_EQ(result.outputs.size(), 1u);
    EXPECT_TRUE(same_bits(result.outputs[0], requests.expected[r])) << "request " << r;
    // Each request's stats are its own: every kernel once, on both devices.
    EXPECT_EQ(result.stats.kernels.size(), artifact->manifest().kernels.size()) << "request " << r;
    EXPECT_GT(result.stats.total_ns, 0);
  }
}

TEST(RunAsync, RequestsFromSeveralThreadsBesideSynchronousRunsMatchTheirInOrderRuns) {
  IRModule mod = two_stage_chain(2, true);
  std::shared_ptr<Artifact> artifact = build_and_load(mod, "async_threads", "cpu:0,cpu:1");
  ASSERT_EQ(artifact->num_queues(), 2);
  constexpr int kThreads = 3, kPerThread = 8;
  Requests requests = make_requests(*artifact, mod, kThreads * kPerThread, 200);
  std::vector<int> mismatches(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      std::vector<std::future<RunResult>> futures;
      for (int i = 0; i < kPerThread; ++i)
        futures.push_back(artifact->run_async(requests.inputs[size_t(t * kPerThread + i)]));
      // A synchronous run meanwhile takes its turn on the same queues.
      size_t own = size_t(t * kPerThread);
      if (!same_bits(artifact->run(requests.inputs[own]).outputs.at(0), requests.expected[own]))
        ++mismatches[size_t(t)];
      for (int i = 0; i < kPerThread; ++i)
        if (!same_bits(futures[size_t(i)].get().outputs.at(0), requests.expected[size_t(t * kPerThread + i)]))
          ++mismatches[size_t(t)];
    });
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(mismatches[size_t(t)], 0) << "thread " << t;
}

// A model on one device, and a split one asked to run in order, serve their
// requests one after another on a worker; one place in flight is enough.
TEST(RunAsync, RequestsOfAModelThatRunsInOrderRunOneAfterAnother) {
  LoadOptions one_place;
  one_place.max_in_flight = 1;
  IRModule one_device = two_stage_chain(2, false);
  std::shared_ptr<Artifact> single = build_and_load(one_device, "async_one_device", "cpu:0", one_place);
  EXPECT_EQ(single->num_queues(), 0);
  EXPECT_EQ(single->max_in_flight(), 1);
  Requests requests = make_requests(*single, one_device, 6, 300);
  std::vector<std::future<RunResult>> futures;
  for (const auto& inputs : requests.inputs) futures.push_back(single->run_async(inputs));
  for (size_t r = 0; r < futures.size(); ++r)
    EXPECT_TRUE(same_bits(futures[r].get().outputs.at(0), requests.expected[r])) << "request " << r;

  IRModule split = two_stage_chain(2, true);
  std::shared_ptr<Artifact> queued = build_and_load(split, "async_in_order", "cpu:0,cpu:1");
  Requests split_requests = make_requests(*queued, split, 6, 400);
  RunOptions in_order;
  in_order.in_order = true;
  futures.clear();
  for (const auto& inputs : split_requests.inputs) futures.push_back(queued->run_async(inputs, in_order));
  for (size_t r = 0; r < futures.size(); ++r)
    EXPECT_TRUE(same_bits(futures[r].get().outputs.at(0), split_requests.expected[r])) << "request " << r;
}

// cpu:1 divides by zero in every third request: those futures throw the
// in-order run's error, and every other request, before and after them in
// the same queues, gets its own correct output.
TEST(RunAsync, AFailedRequestGivesItsErrorAndLeavesTheOthersWhole) {
  IRModule mod = parse_module(
      "def @main(%x: Tensor[(64), int32] @cpu:0, %y: Tensor[(64), int32] @cpu:1) -> Tensor[(64), int32] @cpu:0 {\n"
      "  %0 = multiply(add(%x, 3), %x);\n"
      "  %1 = on_device(divide(%x, %y), device=\"cpu:1\");\n"
      "  add(%0, %1)\n"
      "}\n",
      "fault.sy");
  std::shared_ptr<Artifact> artifact = build_and_load(mod, "async_fault", "cpu:0,cpu:1");
  ASSERT_EQ(artifact->num_queues(), 2);
  constexpr int kRequests = 12;
  std::vector<std::map<std::string, NDArray>> inputs;
  for (int r = 0; r < kRequests; ++r) {
    NDArray x(DType::kInt32, {64}), y(DType::kInt32, {64});
    for (int64_t i = 0; i < 64; ++i) {
      x.set_from_double(i, double(i + r));
      y.set_from_double(i, r % 3 == 1 && i == 40 ? 0.0 : double(1 + (i + r) % 5));
    }
    inputs.push_back({{"x", x}, {"y", y}});
  }
  RunOptions in_order;
  in_order.in_order = true;
  auto error_of = [](auto&& run) -> std::string {
    try {
      run();
    } catch (const RuntimeError& e) {
      return e.what();
    }
    return "no error";
  };
  std::vector<std::future<RunResult>> futures;
  for (const auto& request : inputs) futures.push_back(artifact->run_async(request));
  for (int r = 0; r < kRequests; ++r) {
    SCOPED_TRACE("request " + std::to_string(r));
    if (r % 3 == 1) {
      std::string expected = error_of([&] { artifact->run(inputs[size_t(r)], in_order); });
      EXPECT_NE(expected.find("integer division by zero"), std::string::npos) << expected;
      EXPECT_EQ(error_of([&] { futures[size_t(r)].get(); }), expected);
    } else {
      NDArray expected = artifact->run(inputs[size_t(r)], in_order).outputs.at(0);
      EXPECT_TRUE(same_bits(futures[size_t(r)].get().outputs.at(0), expected));
    }
  }
}

// The last reference to the artifact goes while its requests are in
// flight (images large enough that most are): the destructor waits for
// them, and each future holds its output.
TEST(RunAsync, DestroyingTheArtifactWithRequestsInFlightEndsEveryOne) {
  IRModule mod = two_stage_chain(3, true, 64);
  LoadOptions options;
  options.max_in_flight = 8;
  std::shared_ptr<Artifact> artifact = build_and_load(mod, "async_destroy", "cpu:0,cpu:1", options);
  Requests requests = make_requests(*artifact, mod, 8, 500);
  std::vector<std::future<RunResult>> futures;
  for (const auto& inputs : requests.inputs) futures.push_back(artifact->run_async(inputs));
  artifact.reset();
  for (size_t r = 0; r < futures.size(); ++r) {
    ASSERT_EQ(futures[r].wait_for(std::chrono::seconds(0)), std::future_status::ready) << "request " << r;
    EXPECT_TRUE(same_bits(futures[r].get().outputs.at(0), requests.expected[r])) << "request " << r;
  }
}

TEST(RunAsync, ABadInputThrowsAtTheCallAndABadBoundAtLoad) {
  IRModule mod = two_stage_chain(1, true);
  std::string dir = aot_scratch_dir("async_bad") + "/artifact";
  build_artifact(mod, aot_options("cpu:0,cpu:1"), dir);
  std::shared_ptr<Artifact> artifact = Artifact::load(dir);
  std::map<std::string, NDArray> inputs = random_inputs(mod, 1);
  inputs["x"] = NDArray(DType::kFloat32, {1, 8, 12, 13});
  try {
    artifact->run_async(inputs);
    FAIL() << "a wrong shape was accepted";
  } catch (const RuntimeError& e) {
    EXPECT_STREQ(e.what(), "input 'x': expected float32 (1, 8, 12, 12), got float32 (1, 8, 12, 13)");
  }
  inputs.erase("x");
  EXPECT_THROW(artifact->run_async(inputs), RuntimeError);
  LoadOptions negative;
  negative.max_in_flight = -1;
  try {
    Artifact::load(dir, negative);
    FAIL() << "max_in_flight -1 was accepted";
  } catch (const RuntimeError& e) {
    EXPECT_EQ(std::string(e.what()), dir + ": max_in_flight must be at least 0 (0: the default), got -1");
  }
}

}  // namespace aot_run_async_test
}  // namespace switchyard::testing
