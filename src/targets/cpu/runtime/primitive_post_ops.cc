#include "targets/cpu/runtime/primitive_post_ops.h"

#include <limits>
#include <map>
#include <utility>

namespace switchyard {

OneDnnEltwise onednn_eltwise(const PrimitivePostOp& post) {
  if (post.algorithm == "eltwise_relu" && post.alpha == 0)
    return {"eltwise_clip", 0, std::numeric_limits<float>::infinity()};
  return {post.algorithm, post.alpha, post.beta};
}

std::string repeated_eltwise_parameters(const std::vector<PrimitivePostOp>& posts) {
  std::map<std::string, std::pair<float, float>> first;  // algorithm -> its first (alpha, beta)
  for (const PrimitivePostOp& p : posts) {
    if (p.kind == PrimitivePostOp::Kind::kDepthwise) first.clear();
    if (p.kind != PrimitivePostOp::Kind::kEltwise) continue;
    OneDnnEltwise e = onednn_eltwise(p);
    auto [it, inserted] = first.emplace(e.algorithm, std::make_pair(e.alpha, e.beta));
    if (!inserted && it->second != std::make_pair(e.alpha, e.beta))
      return "two " + e.algorithm + " post-ops with different parameters";
  }
  return "";
}

std::string read_post_ops(const PrimitiveSpec& spec, std::vector<PostOp>* posts) {
  for (const PrimitivePostOp& p : spec.post_ops) {
    PostOp post;
    post.alpha = p.alpha;
    post.beta = p.beta;
    if (p.kind == PrimitivePostOp::Kind::kSum) {
      bool same_layout = p.operand.dims == spec.dst.dims && p.operand.format == spec.dst.format &&
                         (!spec.dst.format.empty() || p.operand.strides == spec.dst.strides);
      if (!same_layout) return "a residual laid out unlike the destination";
      post.kind = PostOp::Kind::kSum;
      post.input = p.input;
    } else if (p.kind == PrimitivePostOp::Kind::kEltwise && p.algorithm == "eltwise_relu") {
      post.kind = PostOp::Kind::kRelu;
    } else if (p.kind == PrimitivePostOp::Kind::kEltwise && p.algorithm == "eltwise_clip") {
      post.kind = PostOp::Kind::kClip;
    } else if (p.kind == PrimitivePostOp::Kind::kEltwise && p.algorithm == "eltwise_linear") {
      post.kind = PostOp::Kind::kLinear;
    } else {
      return "the post-op " + (p.algorithm.empty() ? std::string(post_op_kind_name(p.kind)) : p.algorithm);
    }
    posts->push_back(post);
  }
  return "";
}

}  // namespace switchyard
