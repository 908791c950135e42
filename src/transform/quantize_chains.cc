// SimplifyQuantizeChains (transform/quantize_chains.h).
#include "transform/quantize_chains.h"

#include <cmath>
#include <optional>

#include "ir/functor.h"
#include "op/elementwise_attrs.h"
#include "op/handles.h"
#include "op/registry.h"
#include "transform/quantized_values.h"
#include "transform/read_counting_mutator.h"

namespace switchyard {

namespace {

using namespace quantized_values;

bool is_integral(double v) { return std::isfinite(v) && v == std::nearbyint(v); }

class ChainSimplifier : public ReadCountingMutator {
 public:
  explicit ChainSimplifier(const Expr& body) : ReadCountingMutator(body) {}

  Expr visit_call(const Call& n) override {
    if (Expr same = round_trip_through_eight_bits(*n)) return mutate(same);
    if (Expr shorter = clip_without_relu(n)) return shorter;
    return ExprMutator::visit_call(n);
  }

 private:
  // The clip of a quantize, clip(add?(round(x), k)), with integral k and
  // bounds: the steps under it, each read once ({clip, add?, round}), or
  // nothing.
  std::optional<std::vector<const CallNode*>> integral_clip(const Expr& e) const {
    const CallNode* clip = call_of(e, ops::clip());
    if (!clip || dtype_of(e) != DType::kFloat32) return std::nullopt;
    ClipAttrs bounds = clip_attrs(*clip->attrs);
    if (!is_integral(bounds.a_min) || !is_integral(bounds.a_max) || bounds.a_min > bounds.a_max) return std::nullopt;
    std::vector<const CallNode*> steps{clip};
    Expr rounded = clip->args[0];
    if (const CallNode* sum = call_of(rounded, ops::add())) {
      std::optional<double> k = scalar_constant(sum->args[1]);
      if (!k || !is_integral(*k) || !read_once(rounded)) return std::nullopt;
      steps.push_back(sum);
      rounded = sum->args[0];
    }
    const CallNode* round = call_of(rounded, op_get("round").get());
    if (!round || !read_once(rounded)) return std::nullopt;
    steps.push_back(round);
    return steps;
  }

  // cast(cast(c, 8-bit), float32) -> c; null where it does not apply.
  Expr round_trip_through_eight_bits(const CallNode& widen) const {
    if (as<OpNode>(widen.op) != ops::cast() || dtype_of(Expr(&widen)) != DType::kFloat32) return Expr();
    const CallNode* narrow = call_of(widen.args[0], ops::cast());
    if (!narrow || !read_once(widen.args[0])) return Expr();
    const Expr& clipped = narrow->args[0];
    if (!is_int8(dtype_of(widen.args[0])) || !integral_clip(clipped) || clipped->virtual_device() != widen.virtual_device())
      return Expr();
    auto [low, high] = eight_bit_range(dtype_of(widen.args[0]));
    ClipAttrs bounds = clip_attrs(*downcast<CallNode>(clipped)->attrs);
    if (bounds.a_min < double(low) || bounds.a_max > double(high)) return Expr();
    return clipped;
  }

  // clip(add?(round(divide(relu(v), s)), zp)) -> the same of v; null where
  // it does not apply.
  Expr clip_without_relu(const Call& clip) {
    std::optional<std::vector<const CallNode*>> steps = integral_clip(clip);
    if (!steps) return Expr();
    const CallNode* round = steps->back();
    double zero_point = 0;
    if (steps->size() == 3) zero_point = *scalar_constant((*steps)[1]->args[1]);
    if (zero_point > clip_attrs(*clip->attrs).a_min) return Expr();
    const CallNode* quotient = call_of(round->args[0], ops::divide());
    if (!quotient || !read_once(round->args[0])) return Expr();
    std::optional<double> scale = scalar_constant(quotient->args[1]);
    const CallNode* relu = call_of(quotient->args[0], ops::relu());
    if (!scale || !(*scale > 0) || !relu) return Expr();
    // Rebuild from the divide up, each step with the mutated operand below.
    Expr value = with_fields(downcast<CallNode>(Expr(quotient)), {.args = std::vector<Expr>{mutate(relu->args[0]), mutate(quotient->args[1])}});
    for (auto step = steps->rbegin(); step != steps->rend(); ++step) {
      std::vector<Expr> args;
      for (const Expr& a : (*step)->args) args.push_back(a);
      args[0] = value;
      for (size_t i = 1; i < args.size(); ++i) args[i] = mutate(args[i]);
      value = with_fields(downcast<CallNode>(Expr(*step)), {.args = std::move(args)});
    }
    return value;
  }

};

}  // namespace

Pass SimplifyQuantizeChains() { return function_mutator_pass<ChainSimplifier>("SimplifyQuantizeChains"); }

}  // namespace switchyard
