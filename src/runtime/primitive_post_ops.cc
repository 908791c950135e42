#include "runtime/primitive_post_ops.h"

namespace switchyard {

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
