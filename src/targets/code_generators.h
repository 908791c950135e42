// The code generator of each device kind, one row per kind in
// code_generators.cc: how a primitive function becomes a kernel for a
// target of that kind, and how its code is built: C++ compiled with flags
// into model.so (cpu), or a device image stored beside it (cuda: a cubin).
// A kind without a row has devices the backend cannot compile.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "codegen/kernel.h"
#include "ir/virtual_device.h"
#include "runtime/manifest.h"
#include "toolchain/toolchain.h"

namespace switchyard {

struct CompilationConfig;
struct LoweredProgram;

// What writes a weight's plain bytes in the layout its kernels read.
struct WeightPreparer {
  // The whole weight, read aligned to 64 bytes, into a buffer of its manifest nbytes.
  std::function<void(const void* weights, void* prepared)> prepare;
  // When it can also write a piece: bytes [begin, end) of the prepared
  // weight, `begin` a multiple of `granule` and `end` too or the end,
  // reading the plain bytes at any alignment. So weights.bin is written
  // through a small buffer, straight from the model file's bytes.
  std::function<void(const void* weights, uint64_t begin, uint64_t end, void* prepared)> prepare_range;
  uint64_t granule = 0;
  explicit operator bool() const { return bool(prepare); }
};

// By manifest weight: its preparer, or empty for a weight stored as it is.
using WeightPreparers = std::vector<WeightPreparer>;

struct CodeGenerator {
  DeviceKind kind;
  KernelSource (*generate)(const Function& primitive, const std::string& name,
                           const std::vector<bool>& constant_inputs);
  // Prints kernel.kernel_ir under kernel.name into kernel.code (and, for
  // a device image, its launches).
  void (*render)(KernelSource& kernel);
  // The C++ compiler's flags for code built into model.so; null for a kind
  // whose kernels are device images. Such kernels' code is compiled several
  // kernels to a file (TranslationUnit::joinable): it keeps its names in
  // its own namespace and guards what it shares (cpu_unit.cc).
  std::vector<std::string> (*compile_flags)(const Target* target);
  // Compiles kernel.code to its device image, through the kernel cache in
  // `cache_dir`; `cached` says whether it came from there. Null for a kind
  // whose kernels are built into model.so.
  std::vector<uint8_t> (*compile_image)(const KernelSource& kernel, const Target* target,
                                        const std::string& cache_dir, bool* cached);
  const char* image_extension;  // the image files' ".cubin"
  // Records in the manifest's device what running its kernels needs, which
  // the runtime checks at load: the CPU features code for `target` may use
  // (as `toolchain` reports them), or the compute capability of a GPU's cubins.
  void (*record_requirements)(const Target* target, const Toolchain& toolchain, ManifestDevice& device);
  // Marks the weights of `manifest` that its kernels read stored prepared
  // (setting their `prepared` and `nbytes`) and sets their `preparers`;
  // the caller lays the weights out again. Null for a kind whose weights
  // are stored as they are.
  void (*mark_prepared_weights)(const LoweredProgram& program, Manifest& manifest, const CompilationConfig& config,
                                WeightPreparers& preparers);
};

// Null when the kind has no code generator.
const CodeGenerator* code_generator_for(DeviceKind kind);

}  // namespace switchyard
