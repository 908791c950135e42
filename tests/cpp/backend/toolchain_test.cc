// The toolchain without a source tree: generated code includes the model ABI
// header the compiler embeds (written into the cache under its hash);
// -march=native is resolved to this machine's CPU for the cache key; and a
// model whose kernels run oneDNN primitives links no oneDNN (they run in the
// runtime).
#include <elf.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "aot_test_util.h"
#include "runtime/sha256.h"
#include "support/test_paths.h"
#include "text/parser.h"
#include "toolchain/toolchain.h"

namespace switchyard::testing {
namespace toolchain_test {

namespace fs = std::filesystem;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The DT_NEEDED entries of a 64-bit ELF shared library.
std::vector<std::string> needed_libraries(const std::string& path) {
  std::string bytes = read_file(path);
  auto at = [&](size_t offset) { return bytes.data() + offset; };
  if (bytes.size() < sizeof(Elf64_Ehdr) || bytes.compare(0, 4, ELFMAG) != 0) return {"<not an ELF file>"};
  const auto* header = reinterpret_cast<const Elf64_Ehdr*>(at(0));
  const auto* sections = reinterpret_cast<const Elf64_Shdr*>(at(header->e_shoff));
  std::vector<std::string> needed;
  for (int i = 0; i < header->e_shnum; ++i) {
    if (sections[i].sh_type != SHT_DYNAMIC) continue;
    const char* strings = at(sections[sections[i].sh_link].sh_offset);
    const auto* entries = reinterpret_cast<const Elf64_Dyn*>(at(sections[i].sh_offset));
    for (size_t k = 0; k < sections[i].sh_size / sizeof(Elf64_Dyn) && entries[k].d_tag != DT_NULL; ++k)
      if (entries[k].d_tag == DT_NEEDED) needed.emplace_back(strings + entries[k].d_un.d_val);
  }
  return needed;
}

TEST(Toolchain, GeneratedCodeIncludesTheEmbeddedAbiHeaderFromTheCache) {
  std::string dir = aot_scratch_dir("toolchain_abi");
  Toolchain toolchain = Toolchain::find("", dir + "/cache");
  std::string source_header = read_file(source_dir() + "/include/switchyard/model_abi.h");
  ASSERT_FALSE(source_header.empty());
  EXPECT_EQ(toolchain.include_dir(),
            dir + "/cache/include/" + sha256_hex(source_header.data(), source_header.size()));
  std::string cached = toolchain.include_dir() + "/switchyard/model_abi.h";
  EXPECT_EQ(read_file(cached), source_header);

  fs::create_directories(dir + "/sources");
  ToolchainStats stats;
  TranslationUnit unit{"abi_user",
                       "#include \"switchyard/model_abi.h\"\n"
                       "extern \"C\" int abi() { return SY_MODEL_ABI_VERSION; }\n",
                       {"-O0", "-fPIC"}};
  std::vector<std::string> objects = toolchain.compile({unit}, dir + "/sources", &stats);
  EXPECT_EQ(stats.objects_compiled, 1);

  // A damaged copy is written again from the embedded text.
  std::ofstream(cached, std::ios::trunc) << "#error damaged\n";
  Toolchain again = Toolchain::find("", dir + "/cache");
  EXPECT_EQ(read_file(cached), source_header);
  ToolchainStats second;
  EXPECT_EQ(again.compile({unit}, dir + "/sources", &second), objects);
  EXPECT_EQ(second.objects_cached, 1);
}

TEST(Toolchain, MarchNativeIsResolvedToThisMachinesCpu) {
  Toolchain toolchain = Toolchain::find("", aot_scratch_dir("toolchain_native") + "/cache");
  const std::string& cpu = toolchain.native_cpu();
  size_t march = cpu.find("march:");
  if (march == std::string::npos) GTEST_SKIP() << toolchain.compiler() << " does not report -march=native";
  std::string resolved = cpu.substr(march + 6, cpu.find('\n', march) - march - 6);
  EXPECT_FALSE(resolved.empty());
  EXPECT_NE(resolved, "native");
}

// A stand-in compiler that logs each question it is asked to `log`.
void write_fake_compiler(const std::string& path, const std::string& log, const std::string& version) {
  std::ofstream(path) << "#!/bin/sh\n"
                      << "echo \"$*\" >> '" << log << "'\n"
                      << "case \"$*\" in\n"
                      << "  --version) echo '" << version << "' ;;\n"
                      << "  *--help=target*) echo '  -march=                     fakecpu'; "
                      << "echo '  -mavx2                      [enabled]' ;;\n"
                      << "esac\n";
  fs::permissions(path, fs::perms::owner_all);
}

int lines_in(const std::string& path) {
  std::string text = read_file(path);
  return int(std::count(text.begin(), text.end(), '\n'));
}

// The compiler is asked its version and -march=native once per binary and
// CPU: a second find asks nothing, a changed binary is asked again.
TEST(Toolchain, TheCompilersAnswersAreKeptUntilItsFileChanges) {
  std::string dir = aot_scratch_dir("toolchain_answers");
  std::string cxx = dir + "/fake-c++", log = dir + "/asked.log";
  write_fake_compiler(cxx, log, "fake 1.0");
  Toolchain first = Toolchain::find(cxx, dir + "/cache");
  EXPECT_EQ(lines_in(log), 2);
  EXPECT_NE(first.native_cpu().find("march:fakecpu"), std::string::npos) << first.native_cpu();
  EXPECT_EQ(first.cpu_features(""), std::vector<std::string>{"avx2"});

  Toolchain second = Toolchain::find(cxx, dir + "/cache");
  EXPECT_EQ(lines_in(log), 2) << read_file(log);
  EXPECT_EQ(second.native_cpu(), first.native_cpu());
  EXPECT_EQ(second.cpu_features(""), first.cpu_features(""));

  // Another binary at the same path (its size and time differ) is asked again.
  write_fake_compiler(cxx, log, "fake 2.0 with a longer version line");
  Toolchain third = Toolchain::find(cxx, dir + "/cache");
  EXPECT_EQ(lines_in(log), 4) << read_file(log);
}

TEST(Toolchain, AModelRunningOneDnnPrimitivesLinksNoOneDnn) {
  std::string dir = aot_scratch_dir("toolchain_link") + "/artifact";
  build_artifact(parse_file(example_models_dir() + "/mlp_two_devices.sy"), aot_options("cpu:0,cpu:1"), dir);
  ASSERT_NE(read_file(dir + "/manifest.json").find("\"primitive\""), std::string::npos)
      << "the model no longer runs a oneDNN primitive, so this test checks nothing";
  for (const std::string& library : needed_libraries(dir + "/model.so"))
    EXPECT_EQ(library.find("dnnl"), std::string::npos) << "model.so needs " << library;
}

}  // namespace toolchain_test
}  // namespace switchyard::testing
