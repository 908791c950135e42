// Compiles generated kernels with the system C++ compiler, loads them and
// runs them on NDArrays with test runtime services, so backend tests can
// compare compiled results with the reference interpreter.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "codegen/kernel.h"
#include "runtime/ndarray.h"
#include "switchyard/model_abi.h"
#include "targets/cpu/runtime/dnnl_primitive.h"

namespace switchyard::testing {

using KernelFunction = void (*)(const void* const* inputs, void* const* outputs, const SyRuntimeServices* services,
                                int device_index);

// A shared library built from generated kernels; unloaded when destroyed.
class KernelLibrary {
 public:
  // Compiles `sources` as one translation unit (`c++ -O2 -march=native
  // -fopenmp-simd -fno-math-errno -fno-trapping-math -ffp-contract=off -shared -fPIC
  // -I<repo>/include -I<repo>/src ... -ldnnl`) and loads it. (-fopenmp-simd
  // honours the kernels' `omp simd` loops; without -fno-math-errno std::sqrt
  // stops vectorisation, and without -fno-trapping-math selects on float
  // conditions do.) Libraries are cached under the build tree by the hash of
  // their code, so an unchanged set of kernels compiles once. Throws
  // std::runtime_error carrying the compiler's output on failure.
  static std::shared_ptr<KernelLibrary> build(const std::vector<KernelSource>& sources, const std::string& label);
  ~KernelLibrary();
  KernelLibrary(const KernelLibrary&) = delete;
  KernelLibrary& operator=(const KernelLibrary&) = delete;

  // The kernel named `name`; throws std::runtime_error when absent.
  KernelFunction kernel(const std::string& name) const;
  const std::string& path() const { return path_; }

 private:
  KernelLibrary() = default;
  void* handle_ = nullptr;
  std::string path_;
};

// Runtime services for tests: parallel_for splits [0, n) into chunks of at
// least `grain` over `threads` threads (1 runs the body once, in the caller);
// run_primitive runs the primitive of the kernel run_kernel is running, made
// for `threads` threads (weights reordered per call, as for computed ones).
class TestServices {
 public:
  explicit TestServices(int threads = 1);
  const SyRuntimeServices* get() const { return &services_; }
  int threads() const { return threads_; }
  // The primitive run_primitive runs, with its workspace; null for none.
  void set_primitive(const DnnlPrimitive* primitive) const;
  // parallel_for calls so far, and the largest number of chunks one used.
  int64_t parallel_calls() const { return calls_; }
  int64_t most_chunks() const { return most_chunks_; }
  // The SY_FAULT_* bits kernels reported through kernel_fault, or-ed.
  int faults() const { return faults_; }

 private:
  static void parallel_for(void* ctx, int device_index, int64_t n, int64_t grain, SyParallelBody body, void* closure);
  static void run_primitive(void* ctx, int device_index, const void* const* inputs, void* const* outputs);
  static void kernel_fault(void* ctx, int faults);
  SyRuntimeServices services_{};
  mutable const DnnlPrimitive* primitive_ = nullptr;
  mutable std::vector<unsigned char> workspace_;
  int threads_;
  std::atomic<int64_t> calls_{0}, most_chunks_{0};
  std::atomic<int> faults_{0};
};

// Runs `source`'s kernel on `inputs` (kernel input order; shapes and dtypes
// must match) and returns its outputs, freshly allocated. A kernel with a
// primitive has it made first; one that is the primitive alone needs no code
// in `library`.
std::vector<NDArray> run_kernel(const KernelLibrary& library, const KernelSource& source,
                                const std::vector<NDArray>& inputs, const TestServices& services);

}  // namespace switchyard::testing
