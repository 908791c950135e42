// The hand-written model (see hand_model.h): its source, compilation, weights
// and artifact directory.
#include "hand_model.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "runtime/model_description.h"
#include "runtime/sha256.h"
#include "support/test_paths.h"
#include "switchyard/model_abi.h"

namespace switchyard::testing {
namespace fs = std::filesystem;

std::string hand_model_source(const Manifest& manifest) {
  return R"(// Hand-written model: y = (relu(x) + w) * s across cpu:0 and cpu:1.
#include <stddef.h>
#include <stdint.h>

#include "switchyard/model_abi.h"

#ifndef HAND_MODEL_ABI_VERSION
#define HAND_MODEL_ABI_VERSION SY_MODEL_ABI_VERSION
#endif
#ifndef HAND_MODEL_MULTIPLY_DEVICE
#define HAND_MODEL_MULTIPLY_DEVICE 1
#endif
#ifndef HAND_MODEL_RUN_STATUS
#define HAND_MODEL_RUN_STATUS 0
#endif
#ifndef HAND_MODEL_SIGNALLED_EVENT
#define HAND_MODEL_SIGNALLED_EVENT 0
#endif

namespace {

constexpr int64_t kRows = )" +
         std::to_string(kHandModelRows) + R"(;
constexpr int64_t kCols = )" +
         std::to_string(kHandModelCols) + R"(;

// kernel 0: t = relu(x) + w, over rows
struct ReluAddArgs {
  const float* x;
  const float* w;
  float* t;
};
void fused_relu_add(void* closure, int64_t begin, int64_t end) {
  const ReluAddArgs* a = static_cast<const ReluAddArgs*>(closure);
  for (int64_t i = begin * kCols; i < end * kCols; ++i) a->t[i] = (a->x[i] > 0.0f ? a->x[i] : 0.0f) + a->w[i];
}

// kernel 1: y = t * s, s broadcast along rows
struct MultiplyArgs {
  const float* t;
  const float* s;
  float* y;
};
void multiply(void* closure, int64_t begin, int64_t end) {
  const MultiplyArgs* a = static_cast<const MultiplyArgs*>(closure);
  for (int64_t r = begin; r < end; ++r)
    for (int64_t c = 0; c < kCols; ++c) a->y[r * kCols + c] = a->t[r * kCols + c] * a->s[c];
}

}  // namespace

extern "C" int sy_model_abi_version(void) { return HAND_MODEL_ABI_VERSION; }

#ifndef HAND_MODEL_WITHOUT_DESCRIPTION
extern "C" const char* sy_model_description(void) {
  return R"sy_description()" + model_description(manifest) + R"()sy_description";
}
#endif

extern "C" int sy_model_run(const SyRunArgs* args) {
  const SyRuntimeServices* rt = args->services;
  // Each weight at its offset inside its device's block (both are first, so 0).
  const float* w = reinterpret_cast<const float*>(static_cast<const char*>(args->weights[0]) + 0);
  const float* s = reinterpret_cast<const float*>(static_cast<const char*>(args->weights[1]) + 0);
  float* t_cpu0 = static_cast<float*>(args->arenas[0]);
  float* t_cpu1 = static_cast<float*>(args->arenas[1]);

  rt->kernel_begin(rt->ctx, 0);
  ReluAddArgs k0{static_cast<const float*>(args->inputs[0]), w, t_cpu0};
  rt->parallel_for(rt->ctx, 0, kRows, 1, fused_relu_add, &k0);
  rt->kernel_end(rt->ctx, 0);

  rt->device_copy(rt->ctx, 0, 1, t_cpu1, 0, t_cpu0, size_t(kRows * kCols) * sizeof(float));

  rt->kernel_begin(rt->ctx, 1);
  MultiplyArgs k1{t_cpu1, s, static_cast<float*>(args->outputs[0])};
  rt->parallel_for(rt->ctx, HAND_MODEL_MULTIPLY_DEVICE, kRows, 1, multiply, &k1);
  rt->kernel_end(rt->ctx, 1);
  return HAND_MODEL_RUN_STATUS;
}

#ifdef HAND_MODEL_QUEUES
// The same steps as two queues that run at once: cpu:0 runs kernel 0 and
// signals event 0; cpu:1 waits for it, copies and runs kernel 1.
extern "C" int sy_model_run_queue(const SyRunArgs* args, int queue) {
  const SyRuntimeServices* rt = args->services;
  const float* w = reinterpret_cast<const float*>(static_cast<const char*>(args->weights[0]) + 0);
  const float* s = reinterpret_cast<const float*>(static_cast<const char*>(args->weights[1]) + 0);
  float* t_cpu0 = static_cast<float*>(args->arenas[0]);
  float* t_cpu1 = static_cast<float*>(args->arenas[1]);
  if (queue == 0) {
    rt->kernel_begin(rt->ctx, 0);
    ReluAddArgs k0{static_cast<const float*>(args->inputs[0]), w, t_cpu0};
    rt->parallel_for(rt->ctx, 0, kRows, 1, fused_relu_add, &k0);
    rt->kernel_end(rt->ctx, 0);
    rt->signal_event(rt->ctx, HAND_MODEL_SIGNALLED_EVENT);
    return 0;
  }
  if (rt->wait_event(rt->ctx, 0) != 0) return 1;
  rt->device_copy(rt->ctx, 0, 1, t_cpu1, 0, t_cpu0, size_t(kRows * kCols) * sizeof(float));
  rt->kernel_begin(rt->ctx, 1);
  MultiplyArgs k1{t_cpu1, s, static_cast<float*>(args->outputs[0])};
  rt->parallel_for(rt->ctx, 1, kRows, 1, multiply, &k1);
  rt->kernel_end(rt->ctx, 1);
  return 0;
}
static const int queue_devices[] = {0, 1};
static const SyModelSchedule schedule = {2, queue_devices, 1};
extern "C" const SyModelSchedule* sy_model_schedule(void) { return &schedule; }
#endif
)";
}

void compile_model(const std::string& source, const std::string& so_path, const std::string& extra_flags) {
  std::string source_path = so_path + ".cpp";
  std::string log_path = so_path + ".log";
  {
    std::ofstream out(source_path);
    out << source;
    if (!out) throw std::runtime_error("cannot write " + source_path);
  }
  std::string command = "c++ -std=c++17 -O2 -shared -fPIC -I" + source_dir() + "/include " + extra_flags + " -o " +
                        so_path + " " + source_path + " > " + log_path + " 2>&1";
  if (std::system(command.c_str()) != 0)
    throw std::runtime_error("compiling the hand model failed: " + command + "\n" + read_file(log_path));
}

Manifest hand_model_manifest() {
  Manifest m;
  m.abi_version = SY_MODEL_ABI_VERSION;
  m.switchyard_version = "test";
  m.entry = "main";
  m.devices = {{"cpu:0", "cpu", 0, "cpu", 0}, {"cpu:1", "cpu", 1, "cpu", 0}};
  std::vector<int64_t> matrix = {kHandModelRows, kHandModelCols};
  m.inputs = {{"x", DType::kFloat32, matrix, 0, "hand.sy:1:1"}};
  m.outputs = {{"y", DType::kFloat32, matrix, 1, "hand.sy:4:3"}};
  m.weights = {{"w", DType::kFloat32, matrix, 0, 0, 0}, {"s", DType::kFloat32, {kHandModelCols}, 1, 0, 0}};
  layout_weights(m.weights, int(m.devices.size()));
  m.arenas = {{0, "global", kHandModelTensorBytes, kHandModelTensorBytes},
              {1, "global", kHandModelTensorBytes, kHandModelTensorBytes}};
  m.kernels = {{"fused_relu_add", 0, "hand.sy:2:3", "loops"}, {"multiply", 1, "hand.sy:4:3", "loops"}};
  m.copies = {{0, 1, kHandModelTensorBytes, "hand.sy:3:3"}};
  std::vector<uint8_t> weights = hand_model_weights(m);
  m.hashes.weights_bin = weights_checksum_hex(m.format_version, weights.data(), weights.size());
  return m;
}

std::vector<uint8_t> hand_model_weights(const Manifest& manifest) {
  uint64_t size = 0;
  for (const ManifestWeight& w : manifest.weights) size = std::max(size, w.offset + w.nbytes);
  std::vector<uint8_t> bytes(size, 0);
  for (const ManifestWeight& w : manifest.weights) {
    std::vector<float> values(w.nbytes / sizeof(float));
    for (size_t i = 0; i < values.size(); ++i)
      values[i] = w.name == "w" ? 0.25f * float(i % 7) - 0.5f : 1.0f + float(i) / 8.0f;
    std::memcpy(bytes.data() + w.offset, values.data(), w.nbytes);
  }
  return bytes;
}

NDArray hand_model_input(int seed) {
  NDArray x(DType::kFloat32, {kHandModelRows, kHandModelCols});
  for (int64_t i = 0; i < x.numel(); ++i) x.as<float>()[i] = float((i * 37 + seed * 11) % 23) * 0.5f - 5.0f;
  return x;
}

NDArray hand_model_reference(const NDArray& x) {
  NDArray y(DType::kFloat32, {kHandModelRows, kHandModelCols});
  for (int64_t r = 0; r < kHandModelRows; ++r) {
    for (int64_t c = 0; c < kHandModelCols; ++c) {
      int64_t i = r * kHandModelCols + c;
      float w = 0.25f * float(i % 7) - 0.5f;
      float s = 1.0f + float(c) / 8.0f;
      float v = x.as<float>()[i];
      y.as<float>()[i] = ((v > 0.0f ? v : 0.0f) + w) * s;
    }
  }
  return y;
}

void write_artifact(const std::string& dir, const std::string& so_path, Manifest manifest,
                    const std::vector<uint8_t>& weights_bin) {
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::copy_file(so_path, dir + "/model.so");
  {
    std::ofstream out(dir + "/weights.bin", std::ios::binary);
    out.write(reinterpret_cast<const char*>(weights_bin.data()), std::streamsize(weights_bin.size()));
    if (!out) throw std::runtime_error("cannot write " + dir + "/weights.bin");
  }
  manifest.hashes.model_so = sha256_file_hex(dir + "/model.so");
  manifest.hashes.weights_bin = weights_checksum_hex(manifest.format_version, weights_bin.data(), weights_bin.size());
  write_manifest_file(manifest, dir + "/manifest.json");
}

namespace {

std::string scratch_root() { return binary_dir() + "/runtime_test_scratch/" + std::to_string(getpid()); }

// Removes this process's scratch directories when the test program ends.
class ScratchCleanup : public ::testing::Environment {
 public:
  void TearDown() override { fs::remove_all(scratch_root()); }
};
const ::testing::Environment* const kScratchCleanup = ::testing::AddGlobalTestEnvironment(new ScratchCleanup);

}  // namespace

std::string scratch_dir(const std::string& name) {
  std::string dir = scratch_root() + "/" + name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

}  // namespace switchyard::testing
