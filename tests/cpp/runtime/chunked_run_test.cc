// Planning a run of a specialised artifact in chunks of compiled values, and
// moving the slices along an axis that is not the outermost.
#include "runtime/chunked_run.h"

#include <gtest/gtest.h>

#include <numeric>

#include "runtime/runtime_error.h"

namespace switchyard {
namespace chunked_run_test {

// x (n, s, 16) -> y (n, s); programs for (n, s) = (1, 16), (1, 128), (4, 16);
// n chunkable along axis 0, s not.
SpecializedManifest batch_and_sequence() {
  SpecializedManifest m;
  m.dims = {"n", "s"};
  m.inputs = {{"x", DType::kFloat32, {{-1, "n"}, {-1, "s"}, {16, ""}}}};
  m.outputs = {{"y", DType::kFloat32, {{-1, "n"}, {-1, "s"}}}};
  m.specializations = {{{1, 16}, true}, {{1, 128}, true}, {{4, 16}, true}};
  m.chunking = {{"n", {0}, {0}, ""}, {"s", {}, {}, "nn.softmax(%x) at m.onnx:sm: normalises along axis 1, which holds s"}};
  return m;
}

std::vector<std::vector<std::vector<int64_t>>> program_inputs(const SpecializedManifest& m) {
  std::vector<std::vector<std::vector<int64_t>>> inputs;
  for (const Specialization& s : m.specializations) inputs.push_back({{s.values[0], s.values[1], 16}});
  return inputs;
}

std::string plan_error(const std::vector<int64_t>& shape) {
  SpecializedManifest m = batch_and_sequence();
  try {
    plan_chunks(m, program_inputs(m), {shape});
  } catch (const RuntimeError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ChunkedRun, AValueNoProgramTakesIsTheFewestCompiledValues) {
  SpecializedManifest m = batch_and_sequence();
  EXPECT_FALSE(plan_chunks(m, program_inputs(m), {{4, 16, 16}}));  // a program takes it as it is
  std::optional<ChunkPlan> plan = plan_chunks(m, program_inputs(m), {{9, 16, 16}});
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->dim, 0u);
  EXPECT_EQ(plan->total, 9);
  ASSERT_EQ(plan->steps.size(), 3u);  // 4 + 4 + 1, largest first
  EXPECT_EQ(plan->steps[0].program, 2u);
  EXPECT_EQ(plan->steps[1].start, 4);
  EXPECT_EQ(plan->steps[2].program, 0u);
  EXPECT_EQ(plan->steps[2].start, 8);
  EXPECT_EQ(plan->steps[2].count, 1);
  // Only programs compiled for the run's s take part: at s = 128, batch 3 is 1 + 1 + 1.
  plan = plan_chunks(m, program_inputs(m), {{3, 128, 16}});
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->steps.size(), 3u);
  EXPECT_EQ(plan->steps[0].program, 1u);
}

TEST(ChunkedRun, WhatNoChunkingTakesIsRefusedWithWhy) {
  EXPECT_EQ(plan_error({4, 64, 16}),
            "input 'x' dimension 1 (s) is 64, but this artifact was compiled only for n=1,s=16; n=1,s=128; n=4,s=16 "
            "(switchyard compile --specialize); s cannot run in chunks: nn.softmax(%x) at m.onnx:sm: normalises along "
            "axis 1, which holds s");
  EXPECT_EQ(plan_error({0, 16, 16}).find("input 'x' dimension 0 (n) is 0"), 0u);
  EXPECT_NE(plan_error({2, 16, 15}).find("input 'x': expected float32 (n, s, 16)"), std::string::npos);
}

TEST(ChunkedRun, AValueAboveTheDimensionsBoundIsRefused) {
  SpecializedManifest m = batch_and_sequence();
  m.inputs[0].shape[0].symbol = "n<=8";
  EXPECT_TRUE(plan_chunks(m, program_inputs(m), {{8, 16, 16}}));  // 4 + 4
  try {
    plan_chunks(m, program_inputs(m), {{9, 16, 16}});
    ADD_FAILURE() << "no error";
  } catch (const RuntimeError& e) {
    EXPECT_EQ(std::string(e.what()), "input 'x' dimension 0 (n<=8) is 9, above its bound 8");
  }
}

TEST(ChunkedRun, SlicesAlongAnInnerAxisRoundTrip) {
  const std::vector<int64_t> shape = {2, 5, 3};
  std::vector<float> whole(30);
  std::iota(whole.begin(), whole.end(), 0.0f);
  EXPECT_FALSE(slice_is_contiguous(shape, 1));
  EXPECT_TRUE(slice_is_contiguous({1, 5, 3}, 1));
  std::vector<float> slice(12);
  gather_slice(whole.data(), shape, 1, 1, 2, 4, slice.data());
  EXPECT_EQ(slice, (std::vector<float>{3, 4, 5, 6, 7, 8, 18, 19, 20, 21, 22, 23}));
  std::vector<float> back(30, -1.0f);
  scatter_slice(slice.data(), shape, 1, 1, 2, 4, back.data());
  EXPECT_EQ(back[3], 3.0f);
  EXPECT_EQ(back[23], 23.0f);
  EXPECT_EQ(back[2], -1.0f);
  EXPECT_EQ(slice_offset_bytes({6, 4}, 0, 2, 4), 32);
  EXPECT_EQ(scaled_shape({4, 16}, 0, 4, 9), (std::vector<int64_t>{9, 16}));
}

}  // namespace chunked_run_test
}  // namespace switchyard
