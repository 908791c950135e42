// Helpers for pass tests: text IR in, typed modules out, structural
// comparison with an expected text, and the spans and devices of nodes.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "interp/evaluate.h"
#include "ir/compilation_config.h"
#include "ir/functor.h"
#include "ir/structural_equal.h"
#include "text/parser.h"
#include "text/printer.h"
#include "transform/infer_type.h"
#include "transform/pass.h"

namespace switchyard::testing {

// One placed call that SimplifyExpr rewrites away: the pass-infrastructure tests' module.
inline constexpr const char* kSmall = R"(
def @main(%x: Tensor[(2), float32] @cpu:1) -> Tensor[(2), float32] @cpu:1 {
  add(%x, 0f) @cpu:1
}
)";

// Parses and types `text` (spans name "pass_test.sy").
inline IRModule typed(const std::string& text) { return infer_type(parse_module(text, "pass_test.sy")); }

// As `typed`, marked as planned for the devices cpu:0 and cpu:1: the text
// must already be in planned form (every node placed, copies explicit).
inline IRModule planned(const std::string& text) {
  IRModule mod = typed(text);
  mod.set_devices(CompilationConfig::parse("cpu:0,cpu:1").devices);
  mod.set_device_planned(true);
  return mod;
}

// A typed module's types are still right: InferType keeps every node (it
// rebuilds exactly the nodes whose type is missing or wrong).
inline void expect_types_kept(const IRModule& mod) {
  if (!pass_in_effect("InferType", mod)) return;
  IRModule retyped = infer_type(mod);
  for (const auto& [name, fn] : mod.functions())
    EXPECT_TRUE(retyped.lookup(name).same_as(fn)) << "@" << name << " has missing or stale types";
}

// Fails with both texts and the first difference unless `actual` equals the
// module `expected_text` parses to (devices compared, spans not), and unless
// a typed `actual` is still correctly typed.
inline void expect_module(const IRModule& actual, const std::string& expected_text) {
  expect_types_kept(actual);
  IRModule expected = typed(expected_text);
  auto diff = structural_diff(actual, expected, {.compare_devices = true, .compare_spans = false});
  EXPECT_FALSE(diff.has_value()) << *diff << "\nactual:\n" << print_module(actual) << "\nexpected:\n"
                                 << print_module(expected);
}

// Every node reachable from @main for which `pred` holds.
template <typename Pred>
std::vector<Expr> nodes_where(const IRModule& mod, Pred&& pred) {
  std::vector<Expr> out;
  post_order_visit(mod.lookup("main"), [&](const Expr& e) {
    if (pred(e)) out.push_back(e);
  });
  return out;
}

// Calls of operator `name` in @main.
inline std::vector<Expr> calls_of(const IRModule& mod, const std::string& name) {
  return nodes_where(mod, [&](const Expr& e) {
    const CallNode* c = as<CallNode>(e);
    const OpNode* op = c ? as<OpNode>(c->op) : nullptr;
    return op && op->name == name;
  });
}

// "line:column" of every part of a span, e.g. {"3:8", "4:3"}.
inline std::vector<std::string> span_positions(const Span& span) {
  std::vector<std::string> out;
  for (const Span& part : span.parts()) out.push_back(std::to_string(part.line()) + ":" + std::to_string(part.column()));
  return out;
}

// A float32 tensor of the given values.
inline NDArray tensor_f32(std::vector<int64_t> shape, const std::vector<float>& values) {
  NDArray a(DType::kFloat32, std::move(shape));
  for (size_t i = 0; i < values.size(); ++i) a.as<float>()[i] = values[i];
  return a;
}

}  // namespace switchyard::testing
