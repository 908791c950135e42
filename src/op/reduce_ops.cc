// Reductions: sum, mean, max, prod over a list of axes (Relay's axis/keepdims/exclude).
#include <algorithm>

#include "op/builtin_ops.h"
#include "op/reduce_attrs.h"
#include "op/registry.h"
#include "op/relation_helpers.h"
#include "op/shape_rules.h"

namespace switchyard {

namespace {

void register_reduction(const std::string& op, const std::string& doc) {
  register_op({.name = op,
               .num_inputs = 1,
               .attrs = {{"axis", AttrKind::kInts, AttrValue(), true},
                         {"keepdims", AttrKind::kBool, AttrValue(false)},
                         {"exclude", AttrKind::kBool, AttrValue(false)}},
               .type_relation =
                   [op](const std::vector<Type>& args, const AttrsNode& attrs) -> Type {
                     const TensorTypeNode& x = expect_tensor(args, 0, op);
                     ReduceAttrs reduce = reduce_attrs(attrs);
                     std::vector<int64_t> axes = reduced_axes(x.ndim(), reduce, op);
                     if (x.is_static()) return tensor_type(reduced_shape(x.shape, axes, reduce.keepdims), x.dtype);
                     // A reduced symbolic axis leaves 1 or nothing; the others stay.
                     std::vector<DimExpr> dims;
                     for (size_t i = 0; i < x.dims.size(); ++i) {
                       bool reduced = std::find(axes.begin(), axes.end(), int64_t(i)) != axes.end();
                       if (!reduced) dims.push_back(x.dims[i]);
                       else if (reduce.keepdims) dims.emplace_back(int64_t(1));
                     }
                     return tensor_type_of_dims(std::move(dims), x.dtype);
                   },
               .pattern = OpPattern::kReduction,
               .check_attrs = [op](const AttrsNode& attrs) { check_reduce_attrs(op, reduce_attrs(attrs)); },
               .doc = doc,
               .symbolic_shapes = true});
}

}  // namespace

void register_reduce_ops() {
  register_reduction("sum", "sum over axis");
  register_reduction("mean", "arithmetic mean over axis");
  register_reduction("max", "maximum over axis");
  register_reduction("prod", "product over axis (1 over no elements)");
}

}  // namespace switchyard
