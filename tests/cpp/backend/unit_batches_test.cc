// Joinable translation units compiled several to a compiler process: every
// unit in exactly one batch, the same units always in the same batches, and
// a batch's cached object keyed by every member's code, so a changed kernel
// in a batch misses the cache and its new code is what gets linked.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>

#include "support/error.h"
#include "toolchain/toolchain.h"
#include "toolchain/unit_batches.h"

namespace switchyard {
namespace unit_batches_test {

namespace fs = std::filesystem;

TranslationUnit function_unit(const std::string& name, int value, std::vector<std::string> flags = {"-O1", "-fPIC"}) {
  return {name, "extern \"C\" int " + name + "() { return " + std::to_string(value) + "; }\n", std::move(flags), true};
}

TEST(UnitBatches, EveryUnitIsInOneBatchAndUnjoinableOnesAreAlone) {
  std::vector<TranslationUnit> units;
  const size_t joinable = 40;
  for (size_t i = 0; i < joinable; ++i) units.push_back(function_unit("k" + std::to_string(i), int(i)));
  units.push_back({"entry", "int entry;\n", {"-O1", "-fPIC"}});                   // not joinable
  units.push_back(function_unit("other_flags", 1, {"-O2", "-fPIC"}));            // alone in its group
  std::vector<std::vector<size_t>> batches = plan_unit_batches(units, 2);
  std::multiset<size_t> seen;
  size_t same_flags_batches = 0;
  for (const std::vector<size_t>& batch : batches) {
    ASSERT_FALSE(batch.empty());
    seen.insert(batch.begin(), batch.end());
    for (size_t u : batch) EXPECT_EQ(units[u].flags, units[batch.front()].flags);
    same_flags_batches += batch.front() < joinable;
    EXPECT_TRUE(batch.size() == 1 || batch.front() < joinable) << "unit " << batch.front() << " was joined";
  }
  std::multiset<size_t> all;
  for (size_t u = 0; u < units.size(); ++u) all.insert(u);
  EXPECT_EQ(seen, all);
  // Forty units of one flag set: batches of at most sixteen (three), as
  // many as a multiple of the two compilers (four).
  EXPECT_EQ(same_flags_batches, 4u);
  EXPECT_EQ(plan_unit_batches(units, 2), batches);  // the same units, the same batches
}

TEST(UnitBatches, ABatchSourceNamesEachMembersFileForTheCompilersMessages) {
  std::vector<TranslationUnit> units{function_unit("first", 1), function_unit("second", 2)};
  std::string source = batch_source(units, {0, 1});
  size_t first = source.find("#line 1 \"first.cc\"\n" + units[0].code);
  size_t second = source.find("#line 1 \"second.cc\"\n" + units[1].code);
  ASSERT_NE(first, std::string::npos) << source;
  EXPECT_NE(second, std::string::npos) << source;
  EXPECT_LT(first, second);
}

class BatchedCompileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("sy_unit_batches_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "sources");
  }
  void TearDown() override {
    for (void* handle : handles_) dlclose(handle);
    fs::remove_all(dir_);
  }

  // Compiles and links `units` into a library of its own, and returns what
  // its function `name` returns.
  int compile_and_call(const std::vector<TranslationUnit>& units, const std::string& name, ToolchainStats* stats) {
    Toolchain tools = Toolchain::find("", (dir_ / "cache").string());
    std::vector<std::string> objects = tools.compile(units, (dir_ / "sources").string(), stats);
    std::string library = (dir_ / ("model" + std::to_string(handles_.size()) + ".so")).string();
    tools.link(objects, library, stats);
    void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) throw std::runtime_error(std::string("dlopen failed: ") + dlerror());
    handles_.push_back(handle);
    auto function = reinterpret_cast<int (*)()>(dlsym(handle, name.c_str()));
    if (!function) throw std::runtime_error("no function " + name);
    return function();
  }

  fs::path dir_;
  std::vector<void*> handles_;
};

TEST_F(BatchedCompileTest, AChangedKernelInABatchMissesTheCacheAndItsNewCodeIsLinked) {
  std::vector<TranslationUnit> units;
  for (int i = 0; i < 6; ++i) units.push_back(function_unit("kernel" + std::to_string(i), i));
  ToolchainStats first;
  EXPECT_EQ(compile_and_call(units, "kernel4", &first), 4);
  EXPECT_EQ(first.objects_compiled, 6);  // counted by unit
  EXPECT_EQ(first.compiler_invocations, 3);  // two batches and the link

  ToolchainStats again;
  EXPECT_EQ(compile_and_call(units, "kernel4", &again), 4);
  EXPECT_EQ(again.objects_cached, 6);
  EXPECT_EQ(again.compiler_invocations, 0);

  // Kernel 4 computes something else under the same name: its batch
  // compiles again, the other batch comes from the cache.
  units[4] = function_unit("kernel4", 40);
  ToolchainStats changed;
  EXPECT_EQ(compile_and_call(units, "kernel4", &changed), 40);
  EXPECT_EQ(changed.objects_compiled, 3);
  EXPECT_EQ(changed.objects_cached, 3);

  // So do the flags a batch is compiled with.
  for (TranslationUnit& unit : units) unit.flags = {"-O2", "-fPIC"};
  ToolchainStats reflagged;
  EXPECT_EQ(compile_and_call(units, "kernel4", &reflagged), 40);
  EXPECT_EQ(reflagged.objects_compiled, 6);
}

TEST_F(BatchedCompileTest, AFailedBatchNamesTheKernelAndKeepsTheWholeSource) {
  std::vector<TranslationUnit> units;
  for (int i = 0; i < 6; ++i) {
    units.push_back(function_unit("bad" + std::to_string(i), i));
    units.back().code = "extern \"C\" int bad" + std::to_string(i) + "() { return undeclared_name; }\n";
  }
  ToolchainStats stats;
  try {
    compile_and_call(units, "bad0", &stats);
    FAIL() << "batches holding code that does not compile compiled";
  } catch (const Error& e) {
    // The compiler's message names the member's own file and line.
    EXPECT_NE(e.message().find(".cc:1:"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("undeclared_name"), std::string::npos) << e.message();
    size_t kept = e.message().find("the source is kept at ");
    ASSERT_NE(kept, std::string::npos) << e.message();
    std::string kept_path = e.message().substr(kept + 22);
    std::ifstream kept_file(kept_path);
    ASSERT_TRUE(kept_file) << e.message();
    std::string text((std::istreambuf_iterator<char>(kept_file)), std::istreambuf_iterator<char>());
    int members = 0;
    for (const TranslationUnit& unit : units) {
      bool held = text.find(unit.code) != std::string::npos;
      members += held;
      if (held) {
        EXPECT_NE(e.message().find(unit.name + ".cc"), std::string::npos) << e.message();
      }
    }
    EXPECT_EQ(members, 3) << text;  // the whole batch, each member named
  }
}

}  // namespace unit_batches_test
}  // namespace switchyard
