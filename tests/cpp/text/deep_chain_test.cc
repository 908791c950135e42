// 1,000,000-node call chains and 1,000,000-deep let chains print, parse,
// compare and hash in an 8 MiB stack (ARCHITECTURE.md invariant 4).
#include <gtest/gtest.h>

#include <chrono>
#include <functional>

#include "ir/structural_equal.h"
#include "op/registry.h"
#include "support/error.h"
#include "support/stack.h"
#include "text/parser.h"
#include "text/printer.h"

namespace switchyard {
namespace deep_chain_test {

constexpr int kDepth = 1000000;

using testing::run_with_8mib_stack;

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

const VirtualDevice* cpu(int id) { return VirtualDevice::for_device(DeviceKind::kCPU, id); }

// negative(negative(...(%x))) with a device on every other call.
IRModule call_chain() {
  Var x = make_var("x", tensor_type({4}, DType::kFloat32), {.virtual_device = cpu(0)});
  Expr e = x;
  for (int i = 0; i < kDepth; ++i) e = make_op_call("negative", {e}, {}, {.virtual_device = i % 2 ? cpu(0) : nullptr});
  IRModule m;
  m.add("main", make_function({x}, e, tensor_type({4}, DType::kFloat32)));
  return m;
}

// let %v0 = negative(%x); let %v1 = negative(%v0); ...; %v999999
IRModule let_chain() {
  Var x = make_var("x", tensor_type({4}, DType::kFloat32));
  std::vector<std::pair<Var, Expr>> bindings;
  Expr previous = x;
  for (int i = 0; i < kDepth; ++i) {
    Var v = make_var("v" + std::to_string(i));
    bindings.emplace_back(v, make_op_call("negative", {previous}));
    previous = v;
  }
  Expr body = previous;
  for (auto it = bindings.rbegin(); it != bindings.rend(); ++it) body = make_let(it->first, it->second, body);
  IRModule m;
  m.add("main", make_function({x}, body));
  return m;
}

// Prints, parses, compares and hashes `m`; returns its text.
std::string check_round_trip(const IRModule& m, const char* what) {
  auto start = std::chrono::steady_clock::now();
  std::string text = print_module(m);
  double print_time = seconds_since(start);
  start = std::chrono::steady_clock::now();
  IRModule parsed = parse_module(text, "chain.sy");
  double parse_time = seconds_since(start);
  start = std::chrono::steady_clock::now();
  EXPECT_TRUE(structural_equal(m, parsed, {.compare_spans = false}));
  double compare_time = seconds_since(start);
  EXPECT_EQ(structural_hash(m.lookup("main"), {.compare_spans = false}),
            structural_hash(parsed.lookup("main"), {.compare_spans = false}));
  EXPECT_EQ(print_module(parsed), text);
  std::printf("%s: print %.0f ns/node, parse %.0f ns/node, compare %.0f ns/node\n", what,
              print_time * 1e9 / kDepth, parse_time * 1e9 / kDepth, compare_time * 1e9 / kDepth);
  return text;
}

TEST(DeepChain, MillionCallChainRoundTrips) {
  run_with_8mib_stack([] {
    std::string text = check_round_trip(call_chain(), "call chain");
    EXPECT_NE(text.find("%999997 = negative(%999996) @cpu:0;\n  %999998 = negative(%999997);"), std::string::npos);
  });
}

TEST(DeepChain, MillionDeepLetChainRoundTripsAndADifferenceAtItsBottomIsFound) {
  run_with_8mib_stack([] {
    IRModule m = let_chain();
    std::string text = check_round_trip(m, "let chain");
    EXPECT_NE(text.find("let %v999999 = negative(%v999998);\n  %v999999\n}"), std::string::npos);
    const std::string last = "let %v999999 = negative(";
    text.replace(text.rfind(last), last.size(), "let %v999999 = exp(");
    IRModule changed = parse_module(text, "changed.sy");
    std::optional<std::string> diff = structural_diff(m, changed, {.compare_spans = false});
    ASSERT_TRUE(diff.has_value());
    EXPECT_NE(diff->find("operators differ"), std::string::npos) << *diff;
    EXPECT_EQ(diff->rfind("@main.body.body.body", 0), 0u) << *diff;
    EXPECT_NE(diff->find("more).body.body"), std::string::npos) << *diff;
    EXPECT_NE(diff->find(".value.op: "), std::string::npos) << *diff;
    EXPECT_LT(diff->size(), 1000u);
  });
}

TEST(DeepChain, NestingInsideOneExpressionIsBoundedWithAnError) {
  run_with_8mib_stack([] {
    std::string text = "def @main(%x: float32) {\n  ";
    for (int i = 0; i < 5000; ++i) text += "negative(";
    text += "%x";
    for (int i = 0; i < 5000; ++i) text += ")";
    text += "\n}\n";
    try {
      parse_module(text, "deep.sy");
      FAIL() << "expected a nesting error";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kParse);
      EXPECT_NE(e.message().find("nesting too deep inside one expression (at most 1000 levels"), std::string::npos) << e.message();
    }
  });
}

}  // namespace deep_chain_test
}  // namespace switchyard
