// The registration of each pass that needs nothing but the module: one line
// per pass, its factory. Names, opt levels and requirements come from the
// PassInfo the factory gives its pass.
#include "transform/pass_registry.h"

#include <algorithm>

#include "transform/dead_code_elimination.h"
#include "transform/eliminate_common_subexpr.h"
#include "transform/fold_constant.h"
#include "transform/fuse_ops.h"
#include "transform/infer_type_pass.h"
#include "transform/inline.h"
#include "transform/quantize_chains.h"
#include "transform/quantized_convolutions.h"
#include "transform/simplify_expr.h"
#include "transform/to_a_normal_form.h"
#include "transform/to_graph_normal_form.h"

namespace switchyard {

namespace {

using Factory = Pass (*)();

// Passes are immutable values, so each is made once and shared.
const std::vector<Factory>& factories() {
  static const std::vector<Factory> list = {
      InferType,
      SimplifyExpr,
      FoldConstant,
      EliminateCommonSubexpr,
      DeadCodeElimination,
      FuseOps,
      FuseQDQ,
      SimplifyQuantizeChains,
      Inline,
      ToANormalForm,
      ToGraphNormalForm,
  };
  return list;
}

}  // namespace

const std::vector<Pass>& registered_passes() {
  static const std::vector<Pass> passes = [] {
    std::vector<Pass> made;
    for (Factory make : factories()) made.push_back(make());
    std::sort(made.begin(), made.end(), [](const Pass& a, const Pass& b) { return a.name() < b.name(); });
    return made;
  }();
  return passes;
}

std::optional<Pass> registered_pass(const std::string& name) {
  for (const Pass& p : registered_passes())
    if (p.name() == name) return p;
  return std::nullopt;
}

}  // namespace switchyard
