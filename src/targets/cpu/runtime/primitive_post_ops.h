// The element-wise post-ops the runtime's own primitives (the Winograd
// convolution, the packed matmul) fuse into their output: the subset of
// oneDNN's that they apply in registers, in the spec's order.
#pragma once

#include <string>
#include <type_traits>
#include <vector>

#include "runtime/float8.h"
#include "runtime/primitive_spec.h"

namespace switchyard {

struct PostOp {
  enum class Kind { kRelu, kClip, kLinear, kSum } kind;
  float alpha = 0, beta = 0;
  int input = -1;  // kSum: the kernel input holding the residual
};

// An eltwise post-op as oneDNN is asked to compute it. A relu becomes
// clip(x, 0, +inf): oneDNN's jit kernels give relu(NaN) = 0 and relu(-0) = +0
// (docs/operators.md, "Edge cases"), but its GEMM-based convolution and its
// reference pooling give NaN and -0; every implementation computes that clip
// as the rule says.
struct OneDnnEltwise {
  std::string algorithm;
  float alpha = 0, beta = 0;
};
OneDnnEltwise onednn_eltwise(const PrimitivePostOp& post);

// Why oneDNN would compute these post-ops wrong, or "". Its jit kernels
// (Debian's oneDNN 2.6, every convolution, pool and product tried) apply the
// parameters of an eltwise algorithm's first post-op to every later one of
// that algorithm: linear(0.25, 0) then linear(1, 0.5) computed 0.0625x, not
// 0.25x + 0.5. A depthwise post-op starts a chain of its own. Compared as
// onednn_eltwise gives them, so a relu and a clip(-1, 1) conflict.
std::string repeated_eltwise_parameters(const std::vector<PrimitivePostOp>& posts);

// The spec's post-ops in this form, or why not (e.g. "the post-op
// eltwise_tanh"). A residual must be laid out as the destination is.
std::string read_post_ops(const PrimitiveSpec& spec, std::vector<PostOp>* posts);

// Applies every post-op to `r` (by reference: a 32-byte vector passed or
// returned by value would change the ABI with AVX off); a sum adds residuals[p] at element `at` (the
// post-op's residual, null for other post-ops). Value is a float or a
// Float8, read from consecutive elements.
template <typename Value>
inline __attribute__((always_inline)) void apply_post_ops(Value& r, const std::vector<PostOp>& posts,
                                                          const float* const* residuals, size_t at) {
  for (size_t p = 0; p < posts.size(); ++p) {
    const PostOp& post = posts[p];
    switch (post.kind) {
      // NaN gives 0 and a_min, as the rule for relu and clip says.
      case PostOp::Kind::kRelu:  // +0 for -inf, -0 and NaN (0 * -inf would be NaN)
        if (post.alpha == 0)
          r = r > 0 ? r : Value{};
        else
          r = r > 0 ? r : (r <= 0 ? post.alpha * r : Value{});
        break;
      case PostOp::Kind::kClip:
        r = r > post.alpha ? r : post.alpha;
        r = r < post.beta ? r : post.beta;
        break;
      case PostOp::Kind::kLinear:
        r = post.alpha * r + post.beta;
        break;
      case PostOp::Kind::kSum: {
        if constexpr (std::is_same_v<Value, Float8>) {
          Float8 residual;
          load_float8(residual, residuals[p] + at);
          r += residual;
        } else {
          r += residuals[p][at];
        }
        break;
      }
    }
  }
}

}  // namespace switchyard
