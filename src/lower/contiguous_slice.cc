#include "lower/contiguous_slice.h"

#include "op/handles.h"
#include "op/registry.h"
#include "op/shape_rules.h"

namespace switchyard {

namespace {

const std::vector<int64_t>* static_shape(const Expr& e) {
  const TensorTypeNode* type = as_tensor(e->checked_type());
  if (!type) return nullptr;
  for (int64_t extent : type->shape)
    if (extent < 0) return nullptr;
  return &type->shape;
}

// The element offset one link of the chain adds: 0 for a view, the slice's
// start for a contiguous strided slice.
std::optional<int64_t> link_offset(const CallNode& call) {
  if (data_movement(call) == DataMovement::kView) return 0;
  if (call.op.get() != ops::strided_slice()) return std::nullopt;
  const std::vector<int64_t>* shape = static_shape(call.args[0]);
  if (!shape) return std::nullopt;
  std::vector<int64_t> begin, stride, length;
  for (const SliceAxis& axis : strided_slice_axes(*shape, *call.attrs, ops::strided_slice()->name)) {
    begin.push_back(axis.begin);
    stride.push_back(axis.stride);
    length.push_back(axis.length);
  }
  return contiguous_slice_offset(*shape, begin, stride, length);
}

}  // namespace

std::optional<int64_t> contiguous_slice_offset(const std::vector<int64_t>& shape, const std::vector<int64_t>& begin,
                                               const std::vector<int64_t>& stride,
                                               const std::vector<int64_t>& length) {
  size_t rank = shape.size();
  if (begin.size() != rank || stride.size() != rank || length.size() != rank) return std::nullopt;
  // The first axis the slice takes more than one element of; after it, every
  // axis must be whole, or the range has gaps.
  size_t first = 0;
  while (first < rank && length[first] == 1) ++first;
  if (first < rank && stride[first] != 1) return std::nullopt;
  for (size_t d = first + 1; d < rank; ++d)
    if (begin[d] != 0 || stride[d] != 1 || length[d] != shape[d]) return std::nullopt;
  int64_t offset = 0, row = 1;
  for (size_t d = rank; d-- > 0;) {
    offset += begin[d] * row;
    row *= shape[d];
  }
  return offset;
}

std::optional<int64_t> contiguous_range_offset(const Expr& result, const Expr& source) {
  std::vector<const CallNode*> chain;  // from the result down to the source's reader
  Expr at = result;
  while (at.get() != source.get()) {
    const CallNode* call = as<CallNode>(at);
    if (!call || !as<OpNode>(call->op) || call->args.size() != 1) return std::nullopt;
    chain.push_back(call);
    at = call->args[0];
  }
  if (chain.empty() || !static_shape(result)) return std::nullopt;
  int64_t offset = 0;
  for (auto link = chain.rbegin(); link != chain.rend(); ++link) {
    std::optional<int64_t> step = link_offset(**link);
    if (!step) return std::nullopt;
    // A link reads the range the links below it left, in order, from its start.
    offset += *step;
  }
  return offset;
}

}  // namespace switchyard
