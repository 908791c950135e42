// Building, loading and running generated kernels in tests.
#include "kernel_harness.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <thread>

#include "runtime/sha256.h"
#include "support/test_paths.h"

namespace switchyard::testing {

namespace {

// Runs a shell command, returning its exit status and combined output.
int run_command(const std::string& command, std::string* output) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return -1;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) output->append(buffer, n);
  return pclose(pipe);
}

}  // namespace

std::shared_ptr<KernelLibrary> KernelLibrary::build(const std::vector<KernelSource>& sources,
                                                    const std::string& label) {
  std::string code;
  for (const KernelSource& s : sources) code += s.code + "\n";
  std::string flags = "-std=c++17 -O2 -march=native -fopenmp-simd -fno-math-errno -fno-trapping-math -ffp-contract=off -shared -fPIC -I" +
                      source_dir() + "/include -I" + source_dir() + "/src";
  std::string hash = sha256_hex((code + flags).data(), code.size() + flags.size()).substr(0, 16);
  std::filesystem::path dir = std::filesystem::path(binary_dir()) / "kernel_cache";
  std::filesystem::create_directories(dir);
  std::filesystem::path library = dir / (label + "_" + hash + ".so");
  if (!std::filesystem::exists(library)) {
    std::filesystem::path source = dir / (label + "_" + hash + ".cc");
    std::ofstream(source) << code;
    // Build under a private name, then rename: concurrent test runs never
    // load a half-written library.
    std::string temporary = library.string() + ".tmp" + std::to_string(getpid());
    std::string output;
    int status = run_command("c++ " + flags + " -o " + temporary + " " + source.string() + " -ldnnl", &output);
    if (status != 0) throw std::runtime_error("compiling " + source.string() + " failed:\n" + output);
    std::filesystem::rename(temporary, library);
  }
  std::shared_ptr<KernelLibrary> loaded(new KernelLibrary());
  loaded->path_ = library.string();
  loaded->handle_ = dlopen(loaded->path_.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!loaded->handle_) throw std::runtime_error(std::string("dlopen failed: ") + dlerror());
  return loaded;
}

KernelLibrary::~KernelLibrary() {
  if (handle_) dlclose(handle_);
}

KernelFunction KernelLibrary::kernel(const std::string& name) const {
  void* symbol = dlsym(handle_, name.c_str());
  if (!symbol) throw std::runtime_error("no kernel " + name + " in " + path_);
  return reinterpret_cast<KernelFunction>(symbol);
}

TestServices::TestServices(int threads) : threads_(std::max(threads, 1)) {
  services_.ctx = this;
  services_.parallel_for = &TestServices::parallel_for;
  services_.run_primitive = &TestServices::run_primitive;
  services_.kernel_fault = &TestServices::kernel_fault;
}

void TestServices::kernel_fault(void* ctx, int faults) { static_cast<TestServices*>(ctx)->faults_ |= faults; }

void TestServices::set_primitive(const DnnlPrimitive* primitive) const {
  primitive_ = primitive;
  // 64 bytes of slack for aligning the start.
  if (primitive) workspace_.assign(primitive->workspace_bytes() + 64, 0);
}

void TestServices::run_primitive(void* ctx, int, const void* const* inputs, void* const* outputs) {
  auto* self = static_cast<TestServices*>(ctx);
  if (!self->primitive_) throw std::runtime_error("run_primitive called by a kernel without a primitive");
  auto base = reinterpret_cast<uintptr_t>(self->workspace_.data());
  void* aligned = reinterpret_cast<void*>((base + 63) / 64 * 64);
  self->primitive_->execute(inputs, outputs, nullptr, nullptr, aligned);
}

void TestServices::parallel_for(void* ctx, int device_index, int64_t n, int64_t grain, SyParallelBody body,
                                void* closure) {
  auto* self = static_cast<TestServices*>(ctx);
  ++self->calls_;
  if (n <= 0) return;
  int64_t chunks =
      std::min<int64_t>(self->threads_, (n + std::max<int64_t>(grain, 1) - 1) / std::max<int64_t>(grain, 1));
  chunks = std::max<int64_t>(chunks, 1);
  int64_t most = self->most_chunks_.load();
  while (chunks > most && !self->most_chunks_.compare_exchange_weak(most, chunks)) {
  }
  if (chunks == 1) return body(closure, 0, n);
  std::vector<std::thread> helpers;
  int64_t size = (n + chunks - 1) / chunks;
  for (int64_t c = 1; c < chunks; ++c) {
    int64_t begin = c * size, end = std::min(n, begin + size);
    if (begin < end) helpers.emplace_back([=] { body(closure, begin, end); });
  }
  body(closure, 0, std::min(n, size));
  for (std::thread& t : helpers) t.join();
}

std::vector<NDArray> run_kernel(const KernelLibrary& library, const KernelSource& source,
                                const std::vector<NDArray>& inputs, const TestServices& services) {
  if (inputs.size() != source.inputs.size())
    throw std::runtime_error(source.name + " takes " + std::to_string(source.inputs.size()) + " inputs, got " +
                             std::to_string(inputs.size()));
  std::vector<const void*> in;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].shape() != source.inputs[i]->shape || inputs[i].dtype() != source.inputs[i]->dtype)
      throw std::runtime_error(source.name + " input " + std::to_string(i) + " should be " +
                               type_to_string(source.inputs[i]));
    in.push_back(inputs[i].data());
  }
  std::vector<NDArray> outputs;
  std::vector<void*> out;
  for (const TensorType& t : source.outputs) {
    outputs.emplace_back(t->dtype, t->shape);
    out.push_back(outputs.back().data());
  }
  std::unique_ptr<DnnlPrimitive> primitive;
  if (source.primitive) primitive = std::make_unique<DnnlPrimitive>(*source.primitive, services.threads());
  services.set_primitive(primitive.get());
  if (source.library_only())
    services.get()->run_primitive(services.get()->ctx, 0, in.data(), out.data());
  else
    library.kernel(source.name)(in.data(), out.data(), services.get(), 0);
  services.set_primitive(nullptr);
  return outputs;
}

}  // namespace switchyard::testing
