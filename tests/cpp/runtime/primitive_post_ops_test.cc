// The post-ops the runtime's own kernels (Winograd convolution, packed
// matmul) apply follow docs/operators.md's edge-case rules for relu and
// clip: NaN gives 0 and a_min, -inf and -0 give +0.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "targets/cpu/runtime/primitive_post_ops.h"

namespace switchyard {
namespace primitive_post_ops_test {

constexpr float kInf = std::numeric_limits<float>::infinity();

PostOp post(PostOp::Kind kind, float alpha = 0, float beta = 0) {
  PostOp p{kind};
  p.alpha = alpha;
  p.beta = beta;
  return p;
}

// Each value through `posts`, as a float and in a Float8 lane.
std::vector<float> applied(const std::vector<PostOp>& posts, const std::vector<float>& values) {
  std::vector<float> out;
  for (float v : values) {
    float scalar = v;
    apply_post_ops(scalar, posts, nullptr, 0);
    Float8 lanes;
    for (int i = 0; i < 8; ++i) lanes[i] = v;
    apply_post_ops(lanes, posts, nullptr, 0);
    EXPECT_TRUE(std::memcmp(&scalar, &lanes[3], sizeof scalar) == 0 || (std::isnan(scalar) && std::isnan(lanes[3])))
        << v << ": a float and a lane differ";
    out.push_back(scalar);
  }
  return out;
}

void expect_bits(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_TRUE(std::memcmp(&got[i], &want[i], sizeof(float)) == 0)
        << "value " << i << ": " << got[i] << (std::signbit(got[i]) ? " (sign set)" : "") << ", expected " << want[i];
}

TEST(PrimitivePostOps, ReluGivesPlusZeroForNaNMinusInfinityAndMinusZero) {
  // -inf used to give 0 * -inf = NaN (found by the fusion fuzzer: a residual
  // of -inf summed by the packed matmul, then relu).
  expect_bits(applied({post(PostOp::Kind::kRelu)}, {std::nanf(""), -kInf, -0.0f, -2.5f, 0.0f, 3.0f, kInf}),
              {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 3.0f, kInf});
}

TEST(PrimitivePostOps, ClipGivesItsMinimumForNaN) {
  expect_bits(applied({post(PostOp::Kind::kClip, 0.0f, 6.0f)}, {std::nanf(""), -kInf, -0.0f, 2.5f, 7.0f, kInf}),
              {0.0f, 0.0f, 0.0f, 2.5f, 6.0f, 6.0f});
}

}  // namespace primitive_post_ops_test
}  // namespace switchyard
