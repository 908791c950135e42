// Operators that run along one axis with a kernel of their own: cumsum (a
// running sum) and topk_indices (the positions of the k largest or
// smallest elements, in order).
#include "op/builtin_ops.h"
#include "op/scan_attrs.h"
#include "op/registry.h"
#include "op/relation_helpers.h"

namespace switchyard {

namespace {

const TensorTypeNode& numeric_input(const std::vector<Type>& args, const std::string& op) {
  if (args.size() != 1) type_fail(op, "expects 1 argument, got " + std::to_string(args.size()));
  const TensorTypeNode& x = expect_min_rank(args, 0, 1, op, "x");
  if (x.dtype == DType::kBool) type_fail(op, "x must be numeric, got bool");
  return x;
}

Type cumsum_relation(const std::vector<Type>& args, const AttrsNode& attrs) {
  const TensorTypeNode& x = numeric_input(args, "cumsum");
  normalize_axis(cumsum_attrs(attrs).axis, x.ndim(), "cumsum");
  return args[0];
}

Type topk_indices_relation(const std::vector<Type>& args, const AttrsNode& attrs) {
  const std::string op = "topk_indices";
  const TensorTypeNode& x = numeric_input(args, op);
  TopkAttrs topk = topk_attrs(attrs);
  int64_t axis = normalize_axis(topk.axis, x.ndim(), op);
  int64_t k = topk.k, extent = x.shape[size_t(axis)];
  if (k < 1 || k > extent)
    type_fail(op, "k = " + std::to_string(k) + " must be in [1, " + std::to_string(extent) + "], the extent of axis " +
                      std::to_string(axis) + " of x " + shape_str(x.shape));
  std::vector<int64_t> shape = x.shape;
  shape[size_t(axis)] = k;
  return tensor_type(std::move(shape), DType::kInt64);
}

}  // namespace

void register_scan_ops() {
  register_op({.name = "cumsum",
               .num_inputs = 1,
               .attrs = {{"axis", AttrKind::kInt, AttrValue()},
                         {"exclusive", AttrKind::kBool, AttrValue(false)},
                         {"reverse", AttrKind::kBool, AttrValue(false)}},
               .type_relation = cumsum_relation,
               .pattern = OpPattern::kAnchor,
               .doc = "running sum along axis (exclusive: without the element itself; reverse: from the end)"});
  register_op({.name = "topk_indices",
               .num_inputs = 1,
               .attrs = {{"k", AttrKind::kInt, AttrValue()},
                         {"axis", AttrKind::kInt, AttrValue(int64_t(-1))},
                         {"largest", AttrKind::kBool, AttrValue(true)}},
               .type_relation = topk_indices_relation,
               .pattern = OpPattern::kAnchor,
               .check_attrs = [](const AttrsNode& attrs) { check_topk_attrs("topk_indices", topk_attrs(attrs)); },
               .doc = "int64 positions along axis of the k largest (or smallest) elements, best first, ties by "
                      "position"});
}

}  // namespace switchyard
