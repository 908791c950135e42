// Core IR scaling: parse, InferType, print and an identity mutation of chains
// of 10^4, 10^5 and 10^6 element-wise calls. Reports time and bytes per node
// (bytes: the growth of the process's heap while the parsed module is alive).
#include <benchmark/benchmark.h>
#include <malloc.h>

#include <string>

#include "ir/functor.h"
#include "text/parser.h"
#include "text/printer.h"
#include "transform/infer_type.h"

namespace switchyard {
namespace {

std::string chain_text(int64_t n) {
  std::string text = "def @main(%x: Tensor[(4), float32]) -> Tensor[(4), float32] {\n  %0 = negative(%x);\n";
  for (int64_t i = 1; i < n; ++i)
    text += "  %" + std::to_string(i) + " = negative(%" + std::to_string(i - 1) + ");\n";
  text += "  %" + std::to_string(n - 1) + "\n}\n";
  return text;
}

size_t heap_in_use() { return mallinfo2().uordblks; }

void BM_Parse(benchmark::State& state) {
  std::string text = chain_text(state.range(0));
  size_t bytes = 0;
  for (auto _ : state) {
    size_t before = heap_in_use();
    IRModule mod = parse_module(text, "chain.sy");
    bytes = heap_in_use() - before;
    benchmark::DoNotOptimize(mod);
  }
  state.counters["ns_per_node"] = benchmark::Counter(double(state.range(0)), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert) ;
  state.counters["bytes_per_node"] = double(bytes) / double(state.range(0));
}

void BM_InferType(benchmark::State& state) {
  IRModule mod = parse_module(chain_text(state.range(0)), "chain.sy");
  size_t bytes = 0;
  for (auto _ : state) {
    size_t before = heap_in_use();
    IRModule typed = infer_type(mod);
    bytes = heap_in_use() - before;
    benchmark::DoNotOptimize(typed);
  }
  state.counters["ns_per_node"] = benchmark::Counter(double(state.range(0)), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  state.counters["bytes_per_node"] = double(bytes) / double(state.range(0));
}

void BM_Print(benchmark::State& state) {
  IRModule mod = infer_type(parse_module(chain_text(state.range(0)), "chain.sy"));
  for (auto _ : state) benchmark::DoNotOptimize(print_module(mod));
  state.counters["ns_per_node"] = benchmark::Counter(double(state.range(0)), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

// Rebuilds every node (a mutator that changes nothing returns the same
// nodes, so this one forces with_fields to copy, the worst case).
class RebuildAll : public ExprMutator {
 public:
  Expr visit_call(const Call& c) override {
    Call base = downcast<CallNode>(ExprMutator::visit_call(c));
    return with_fields(base, {.span = Span("rebuilt", 1, 1)});
  }
};

void BM_IdentityMutation(benchmark::State& state) {
  IRModule mod = infer_type(parse_module(chain_text(state.range(0)), "chain.sy"));
  for (auto _ : state) {
    ExprMutator identity;
    benchmark::DoNotOptimize(identity.mutate(mod.lookup("main")));
  }
  state.counters["ns_per_node"] = benchmark::Counter(double(state.range(0)), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

void BM_RebuildingMutation(benchmark::State& state) {
  IRModule mod = infer_type(parse_module(chain_text(state.range(0)), "chain.sy"));
  for (auto _ : state) {
    RebuildAll m;
    benchmark::DoNotOptimize(m.mutate(mod.lookup("main")));
  }
  state.counters["ns_per_node"] = benchmark::Counter(double(state.range(0)), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

#define SY_CHAINS ->Arg(10000)->Arg(100000)->Arg(1000000)->Unit(benchmark::kMillisecond)->Iterations(3)
BENCHMARK(BM_Parse) SY_CHAINS;
BENCHMARK(BM_InferType) SY_CHAINS;
BENCHMARK(BM_Print) SY_CHAINS;
BENCHMARK(BM_IdentityMutation) SY_CHAINS;
BENCHMARK(BM_RebuildingMutation) SY_CHAINS;

}  // namespace
}  // namespace switchyard

BENCHMARK_MAIN();
