// Long chains through the whole build: an entry of many steps is split
// into functions (one C++ function of 10,000 kernel calls took the
// compiler longer than linear time), and a chain of 100,000 lets, which
// fuse, compiles and computes what it says. How the build's time grows is
// measured in bench/pipeline_bench.cc, not here.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>

#include "aot_test_util.h"
#include "runtime/artifact.h"
#include "support/let_chain.h"
#include "text/parser.h"

namespace switchyard::testing {
namespace aot_long_chain_test {

std::map<std::string, NDArray> counting_input() {
  NDArray x(DType::kFloat32, {4});
  for (int64_t i = 0; i < 4; ++i) x.set_from_double(i, double(i));
  return {{"x", x}};
}

size_t count_matches(const std::string& text, const std::string& pattern) {
  std::regex re(pattern);
  return size_t(std::distance(std::sregex_iterator(text.begin(), text.end(), re), std::sregex_iterator()));
}

// 600 softmaxes (anchors, which never fuse with each other) are 600 kernel
// calls: three functions of at most 256 steps, called in order; the last
// also reads a weight.
TEST(AotLongChain, AnEntryOfManyStepsIsSplitIntoFunctions) {
  std::string text = let_chain(600, "nn.softmax");
  text.replace(text.rfind("%v599"), 5, "add(%v599, Tensor[(4), float32]{1, 2, 3, 4})");
  IRModule mod = parse_module(text, "softmaxes.sy");
  BuildOptions options = aot_options("cpu:0");
  options.emit_source = true;
  std::string dir = aot_scratch_dir("long_entry") + "/artifact";
  BuildReport report = build_artifact(mod, options, dir);
  EXPECT_EQ(report.kernel_calls, 600) << "the add is the last softmax's epilogue";
  std::ifstream file(dir + "/src/sy_model_entry.cc");
  std::stringstream entry;
  entry << file.rdbuf();
  EXPECT_EQ(count_matches(entry.str(), "static void run_steps_[0-9]+\\("), 3u);
  EXPECT_EQ(count_matches(entry.str(), "\n  run_steps_[0-9]+\\(args\\);"), 3u);
  EXPECT_EQ(count_matches(entry.str(), "services->kernel_begin\\("), 600u);
  EXPECT_EQ(count_matches(entry.str(), "static_cast<const char\\*>\\(args->weights\\[0\\]\\)"), 1u);
  std::vector<NDArray> expected = interpret(mod, counting_input());
  std::vector<NDArray> actual = run_artifact(dir, counting_input());
  EXPECT_EQ(compare_arrays(actual.at(0), expected.at(0), 1e-6, 1e-6), "");
}

// 100,000 let-bound adds fuse into 391 kernels (256 adds each at most) and
// add 100,000 to each element (exactly: the sums stay below 2^24).
TEST(AotLongChain, AHundredThousandLetChainCompilesAndRuns) {
  IRModule mod = parse_module(let_chain(100000, "add"), "adds.sy");
  std::string dir = aot_scratch_dir("long_lets") + "/artifact";
  // Without the invariant checker, which the other tests run: after every
  // pass it would take longer than the build itself.
  BuildOptions options = aot_options("cpu:0");
  options.check_invariants = false;
  BuildReport report = build_artifact(mod, options, dir);
  EXPECT_EQ(report.kernel_calls, 391);
  std::vector<NDArray> out = run_artifact(dir, counting_input());
  ASSERT_EQ(out.size(), 1u);
  for (int64_t i = 0; i < 4; ++i) EXPECT_EQ(out[0].get_as_double(i), double(i + 100000)) << "element " << i;
}

}  // namespace aot_long_chain_test
}  // namespace switchyard::testing
