// Artifact loading (manifest, hashes, model.so, weights) and running through
// the model ABI, with the runtime services that record and check each kernel
// and copy against the manifest.
#include "runtime/artifact.h"

#include <dlfcn.h>

#include <algorithm>
#include <future>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <mutex>

#include "runtime/cpu_features.h"
#include "runtime/device_registry.h"
#include "runtime/dnnl_primitive.h"
#include "runtime/model_description.h"
#include "runtime/mapped_file.h"
#include "runtime/regular_file.h"
#include "runtime/runtime_error.h"
#include "runtime/sha256.h"
#include "switchyard/model_abi.h"

namespace switchyard {
namespace {

using Clock = std::chrono::steady_clock;

int64_t nanoseconds_since(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count();
}

std::string describe_tensor(DType dtype, const std::vector<int64_t>& shape) {
  return std::string(dtype_name(dtype)) + " " + shape_to_string(shape);
}

std::string list_names(const std::vector<ManifestTensor>& tensors) {
  std::string names;
  for (const ManifestTensor& t : tensors) names += (names.empty() ? "" : ", ") + t.name;
  return names;
}

// One run's state behind SyRuntimeServices::ctx. kernel_begin, kernel_end
// and device_copy come from the thread that called sy_model_run;
// parallel_for may also come from inside a parallel body.
// What a kernel's oneDNN primitive needs at run time, made at load time.
struct KernelPrimitive {
  const DnnlPrimitive* primitive = nullptr;
  const DeviceLibraryPrimitive* device_primitive = nullptr;  // instead, on a device with its own library
  std::shared_ptr<const PreparedWeights> weights;  // constant weights in its layout, if it reorders them
  const void* weights_address = nullptr;           // where the kernel must pass those weights from
  // The same for the weights of a depthwise convolution it fuses.
  std::shared_ptr<const PreparedWeights> depthwise_weights;
  const void* depthwise_weights_address = nullptr;
};

struct RunContext {
  const Manifest* manifest = nullptr;
  const std::vector<std::unique_ptr<Device>>* devices = nullptr;
  const std::vector<KernelPrimitive>* kernel_primitives = nullptr;  // by manifest kernel
  const std::vector<std::vector<void*>>* kernel_functions = nullptr;  // by manifest kernel: its image's functions
  void* const* fault_words = nullptr;  // by manifest kernel: a device image's fault word, if it may fault
  void* const* primitive_workspaces = nullptr;                      // by device index
  bool record_stats = true;
  RunStats stats;
  int open_kernel = -1;
  Clock::time_point kernel_start;
  std::mutex error_mutex;
  std::string error;  // the first broken rule; the run fails with it

  void fail(const std::string& message) {
    std::lock_guard<std::mutex> lock(error_mutex);
    if (error.empty()) error = message;
  }
  bool valid_device(int index) const { return index >= 0 && size_t(index) < devices->size(); }
  const std::string& device_name(int index) const { return (*devices)[size_t(index)]->name(); }
  std::string kernel_label(int index) const {
    return "kernel " + std::to_string(index) + " '" + manifest->kernels[size_t(index)].name + "'";
  }
};

void service_parallel_for(void* ctx, int device_index, int64_t n, int64_t grain, SyParallelBody body, void* closure) {
  auto& run = *static_cast<RunContext*>(ctx);
  try {
    if (!run.valid_device(device_index)) {
      run.fail("parallel work on device index " + std::to_string(device_index) + ", but the artifact has " +
               std::to_string(run.devices->size()) + " devices");
      return;
    }
    int kernel = run.open_kernel;
    if (kernel >= 0 && run.manifest->kernels[size_t(kernel)].device != device_index)
      run.fail(run.kernel_label(kernel) + " is planned on " +
               run.device_name(run.manifest->kernels[size_t(kernel)].device) + " but ran parallel work on " +
               run.device_name(device_index));
    (*run.devices)[size_t(device_index)]->parallel_for(
        n, grain, [body, closure](int64_t begin, int64_t end) { body(closure, begin, end); });
  } catch (const std::exception& e) {
    run.fail(std::string("parallel work failed: ") + e.what());
  }
}

void service_device_copy(void* ctx, int copy_index, int dst_device, void* dst, int src_device, const void* src,
                         size_t bytes) {
  auto& run = *static_cast<RunContext*>(ctx);
  try {
    const std::vector<ManifestCopy>& copies = run.manifest->copies;
    if (copy_index < 0 || size_t(copy_index) >= copies.size()) {
      run.fail("copy " + std::to_string(copy_index) + " is not in the manifest (" + std::to_string(copies.size()) +
               " copies)");
      return;
    }
    if (!run.valid_device(src_device) || !run.valid_device(dst_device)) {
      run.fail("copy " + std::to_string(copy_index) + " names a device index out of range");
      return;
    }
    const ManifestCopy& planned = copies[size_t(copy_index)];
    if (planned.src_device != src_device || planned.dst_device != dst_device || planned.bytes != bytes)
      run.fail("copy " + std::to_string(copy_index) + " moved " + std::to_string(bytes) + " bytes from " +
               run.device_name(src_device) + " to " + run.device_name(dst_device) + ", but the manifest plans " +
               std::to_string(planned.bytes) + " bytes from " + run.device_name(planned.src_device) + " to " +
               run.device_name(planned.dst_device));
    Clock::time_point start = run.record_stats ? Clock::now() : Clock::time_point();
    copy_between_devices(*(*run.devices)[size_t(dst_device)], dst, *(*run.devices)[size_t(src_device)], src, bytes);
    if (run.record_stats)
      run.stats.copies.push_back({copy_index, src_device, dst_device, bytes, nanoseconds_since(start)});
  } catch (const std::exception& e) {
    run.fail("copy " + std::to_string(copy_index) + " failed: " + e.what());
  }
}

void service_kernel_begin(void* ctx, int kernel_index) {
  auto& run = *static_cast<RunContext*>(ctx);
  if (kernel_index < 0 || size_t(kernel_index) >= run.manifest->kernels.size()) {
    run.fail("kernel " + std::to_string(kernel_index) + " is not in the manifest (" +
             std::to_string(run.manifest->kernels.size()) + " kernels)");
    return;
  }
  if (run.open_kernel >= 0)
    run.fail(run.kernel_label(kernel_index) + " began inside " + run.kernel_label(run.open_kernel));
  run.open_kernel = kernel_index;
  if (run.record_stats) run.kernel_start = Clock::now();
}

void service_kernel_end(void* ctx, int kernel_index) {
  auto& run = *static_cast<RunContext*>(ctx);
  if (kernel_index < 0 || kernel_index != run.open_kernel) {
    run.fail("kernel " + std::to_string(kernel_index) + " ended without beginning");
    return;
  }
  run.open_kernel = -1;
  if (!run.record_stats) return;
  try {
    const ManifestKernel& kernel = run.manifest->kernels[size_t(kernel_index)];
    run.stats.kernels.push_back({kernel_index, kernel.name, kernel.device, nanoseconds_since(run.kernel_start)});
  } catch (const std::exception& e) {
    run.fail(std::string("recording a kernel failed: ") + e.what());
  }
}

void service_run_primitive(void* ctx, int device_index, const void* const* inputs, void* const* outputs) {
  auto& run = *static_cast<RunContext*>(ctx);
  try {
    int kernel = run.open_kernel;
    if (kernel < 0) return run.fail("a oneDNN primitive ran outside any kernel");
    const KernelPrimitive& planned = (*run.kernel_primitives)[size_t(kernel)];
    if (!planned.primitive && !planned.device_primitive)
      return run.fail(run.kernel_label(kernel) + " ran a library primitive, but plans none");
    if (run.manifest->kernels[size_t(kernel)].device != device_index)
      return run.fail(run.kernel_label(kernel) + " is planned on " +
                      run.device_name(run.manifest->kernels[size_t(kernel)].device) +
                      " but ran its primitive on device index " + std::to_string(device_index));
    if (planned.device_primitive) {
      (*run.devices)[size_t(device_index)]->run_library_primitive(*planned.device_primitive, inputs, outputs,
                                                                  run.primitive_workspaces[device_index]);
      return;
    }
    int weights_input = planned.primitive->spec().weights_input;
    if (planned.weights_address && inputs[weights_input] != planned.weights_address)
      return run.fail(run.kernel_label(kernel) + " passed other weights than the manifest's weight " +
                      std::to_string(run.manifest->kernels[size_t(kernel)].weights));
    if (planned.depthwise_weights_address) {
      for (const PrimitivePostOp& post : planned.primitive->spec().post_ops)
        if (post.kind == PrimitivePostOp::Kind::kDepthwise && inputs[post.input] != planned.depthwise_weights_address)
          return run.fail(run.kernel_label(kernel) + " passed other depthwise weights than the manifest's weight " +
                          std::to_string(run.manifest->kernels[size_t(kernel)].depthwise_weights));
    }
    Device& device = *(*run.devices)[size_t(device_index)];
    planned.primitive->execute(
        inputs, outputs, planned.weights.get(), planned.depthwise_weights.get(), run.primitive_workspaces[device_index],
        [&device](int64_t n, int64_t grain, const ParallelBody& body) { device.parallel_for(n, grain, body); });
  } catch (const std::exception& e) {
    run.fail(run.kernel_label(run.open_kernel) + ": its library primitive failed: " + e.what());
  }
}

// A kernel's elements hit an operator's documented error: the run fails
// naming the kernel, where it came from and each fault.
void fail_with_faults(RunContext& run, int kernel, int faults) {
  static const std::pair<int, const char*> kFaults[] = {
      {SY_FAULT_INTEGER_DIVISION_BY_ZERO, "integer division by zero"},
      {SY_FAULT_NEGATIVE_INTEGER_EXPONENT, "integer power with a negative exponent"},
      {SY_FAULT_INDEX_OUT_OF_RANGE, "take index out of range (mode \"fast\")"}};
  std::string what;
  for (auto [bit, name] : kFaults)
    if (faults & bit) what += (what.empty() ? "" : "; ") + std::string(name);
  if (what.empty()) what = "unknown fault bits " + std::to_string(faults);
  const std::string& span = run.manifest->kernels[size_t(kernel)].span;
  run.fail(run.kernel_label(kernel) + (span.empty() ? "" : " (from " + span + ")") + ": " + what);
}

void service_kernel_fault(void* ctx, int faults) {
  auto& run = *static_cast<RunContext*>(ctx);
  if (run.open_kernel < 0) return run.fail("a kernel fault was reported outside any kernel");
  fail_with_faults(run, run.open_kernel, faults);
}

// Queues a function of the open kernel's device image on its GPU's stream,
// its parameter the kernel's buffers (and its fault word).
void service_launch_kernel(void* ctx, int device_index, int function, int64_t grid, int block,
                           const void* const* buffers, int buffer_count) {
  auto& run = *static_cast<RunContext*>(ctx);
  int kernel = run.open_kernel;
  try {
    if (kernel < 0) return run.fail("a device function was launched outside any kernel");
    const ManifestKernel& planned = run.manifest->kernels[size_t(kernel)];
    const std::vector<void*>& functions = (*run.kernel_functions)[size_t(kernel)];
    if (planned.device != device_index)
      return run.fail(run.kernel_label(kernel) + " is planned on " + run.device_name(planned.device) +
                      " but launched on device index " + std::to_string(device_index));
    if (function < 0 || size_t(function) >= functions.size())
      return run.fail(run.kernel_label(kernel) + " launched function " + std::to_string(function) + ", but its image has " +
                      std::to_string(functions.size()));
    if (buffer_count < 0 || grid <= 0 || block <= 0)
      return run.fail(run.kernel_label(kernel) + " launched with " + std::to_string(buffer_count) + " buffers, grid " +
                      std::to_string(grid) + ", block " + std::to_string(block));
    std::vector<const void*> param(buffers, buffers + buffer_count);
    if (planned.may_fault) param.push_back(run.fault_words[kernel]);
    (*run.devices)[size_t(device_index)]->launch(functions[size_t(function)], grid, block, param.data(),
                                                 param.size() * sizeof(void*));
  } catch (const std::exception& e) {
    run.fail(run.kernel_label(kernel) + ": " + e.what());
  }
}

void service_device_move(void* ctx, int device_index, void* dst, const void* src, size_t bytes) {
  auto& run = *static_cast<RunContext*>(ctx);
  try {
    if (!run.valid_device(device_index))
      return run.fail("a move on device index " + std::to_string(device_index) + ", but the artifact has " +
                      std::to_string(run.devices->size()) + " devices");
    (*run.devices)[size_t(device_index)]->copy_within(dst, src, bytes);
  } catch (const std::exception& e) {
    run.fail("a move on " + run.device_name(device_index) + " failed: " + e.what());
  }
}

// weights.bin must be exactly as long as the manifest's weights reach,
// checked before it is mapped or hashed.
void check_weights_size(const Manifest& manifest, const RegularFile& weights_bin) {
  uint64_t end = 0;
  for (const ManifestWeight& w : manifest.weights) {
    if (w.offset + w.nbytes > weights_bin.size())
      throw RuntimeError(weights_bin.path() + " is truncated: it has " + std::to_string(weights_bin.size()) +
                         " bytes, but weight '" + w.name + "' needs bytes [" + std::to_string(w.offset) + ", " +
                         std::to_string(w.offset + w.nbytes) + ")");
    end = std::max(end, w.offset + w.nbytes);
  }
  if (weights_bin.size() != end)
    throw RuntimeError(weights_bin.path() + " has " + std::to_string(weights_bin.size()) +
                       " bytes, but the manifest's weights end at byte " + std::to_string(end) +
                       ": it is not the weights.bin this artifact was built with");
}

}  // namespace

class Artifact::Impl {
 public:
  // One run's scratch memory: a buffer per manifest arena, on that arena's device.
  struct Workspace {
    std::vector<DeviceBuffer> arenas;
    std::vector<void*> arena_pointers;
    // Per device: scratch of the primitives that run there, one at a time.
    std::vector<DeviceBuffer> primitive_workspaces;
    std::vector<void*> primitive_workspace_pointers;
    // Per manifest kernel: a zeroed word on its GPU, for a device image that may fault.
    std::vector<DeviceBuffer> fault_words;
    std::vector<void*> fault_word_pointers;
  };

  ~Impl() {
    // Buffers go before the library that might still reference them.
    workspaces.clear();
    pinned_memories.clear();
    kernel_primitives.clear();
    primitives.clear();
    device_primitives.clear();
    weight_blocks.clear();
    weights_file.reset();
    if (library) dlclose(library);
  }

  std::unique_ptr<Workspace> acquire_workspace(const Artifact& artifact) {
    {
      std::lock_guard<std::mutex> lock(workspace_mutex);
      if (!workspaces.empty()) {
        std::unique_ptr<Workspace> workspace = std::move(workspaces.back());
        workspaces.pop_back();
        return workspace;
      }
    }
    auto workspace = std::make_unique<Workspace>();
    for (const ManifestArena& arena : artifact.manifest_.arenas) {
      Device* pinned = arena.scope == kPinnedScope ? pinned_memories[size_t(arena.device)].get() : nullptr;
      workspace->arenas.emplace_back(pinned ? *pinned : artifact.device(arena.device), size_t(arena.bytes));
      workspace->arena_pointers.push_back(workspace->arenas.back().data());
    }
    for (size_t d = 0; d < primitive_workspace_bytes.size(); ++d) {
      workspace->primitive_workspaces.emplace_back();
      if (primitive_workspace_bytes[d] > 0)
        workspace->primitive_workspaces.back() = DeviceBuffer(artifact.device(int(d)), primitive_workspace_bytes[d]);
      workspace->primitive_workspace_pointers.push_back(workspace->primitive_workspaces.back().data());
    }
    for (const ManifestKernel& kernel : artifact.manifest_.kernels) {
      workspace->fault_words.emplace_back();
      if (kernel.may_fault) {
        workspace->fault_words.back() = DeviceBuffer(artifact.device(kernel.device), sizeof(int));
        artifact.device(kernel.device).set_words(workspace->fault_words.back().data(), 0, 1);
      }
      workspace->fault_word_pointers.push_back(workspace->fault_words.back().data());
    }
    return workspace;
  }

  void release_workspace(std::unique_ptr<Workspace> workspace) {
    std::lock_guard<std::mutex> lock(workspace_mutex);
    workspaces.push_back(std::move(workspace));
  }

  void* library = nullptr;
  SyModelRunFn run_function = nullptr;
  std::unique_ptr<MappedFile> weights_file;  // weights.bin, where host devices read their weights
  // oneDNN's GEMM kernels (14-25 ms), made beside the rest of the load when
  // a primitive multiplies with them, joined before the load returns so the
  // first run has the cores to itself.
  std::future<void> gemm_kernels;
  std::vector<DeviceBuffer> weight_blocks;   // by device index: the weights of a device the host cannot address
  std::vector<const void*> weight_pointers;  // by device index; null for a device without weights
  std::vector<std::unique_ptr<DnnlPrimitive>> primitives;  // by manifest primitive, on the first device using it
  // The same, on devices with a library of their own.
  std::vector<std::unique_ptr<DeviceLibraryPrimitive>> device_primitives;
  // By device index: a host device's page-locked memory, for its "pinned" arenas.
  std::vector<std::unique_ptr<Device>> pinned_memories;
  std::vector<KernelPrimitive> kernel_primitives;          // by manifest kernel
  std::vector<size_t> primitive_workspace_bytes;           // by device index
  std::vector<std::vector<void*>> kernel_functions;        // by manifest kernel: its device image's functions
  std::mutex workspace_mutex;
  std::vector<std::unique_ptr<Workspace>> workspaces;  // free for the next run
};

Artifact::~Artifact() = default;

// A host device with arenas of scope "pinned" gets page-locked memory from
// the artifact's first device that offers it (a GPU's driver: the pages are
// locked for every GPU). Without one there is nothing to copy to, and those
// arenas are plain host memory.
void Artifact::make_pinned_memories(Artifact& artifact) {
  Impl& impl = *artifact.impl_;
  impl.pinned_memories.resize(artifact.devices_.size());
  for (const ManifestArena& arena : artifact.manifest_.arenas) {
    const Device& host = artifact.device(arena.device);
    std::unique_ptr<Device>& pinned = impl.pinned_memories[size_t(arena.device)];
    for (size_t d = 0; d < artifact.devices_.size() && arena.scope == kPinnedScope && host.host_accessible() && !pinned;
         ++d)
      pinned = artifact.devices_[d]->make_pinned_host_memory(host);
  }
}

// Makes every primitive for the device that runs it (oneDNN's for a CPU's
// threads, cuBLASLt's or cuDNN's for a GPU) and gives each oneDNN kernel
// its constant weights in its primitive's layout: read where weights.bin
// holds them when the compiler stored them so, else prepared now. No run
// makes or reorders anything.
void Artifact::make_primitives(Artifact& artifact, const std::string& manifest_path) {
  Impl& impl = *artifact.impl_;
  const Manifest& manifest = artifact.manifest_;
  impl.primitive_workspace_bytes.assign(manifest.devices.size(), 0);
  impl.kernel_primitives.resize(manifest.kernels.size());
  // A primitive is made per (primitive, device): a device's thread count shapes it.
  std::map<std::pair<int, int>, const DnnlPrimitive*> made;
  std::map<std::pair<int, int>, const DeviceLibraryPrimitive*> made_on_devices;
  std::map<std::pair<const DnnlPrimitive*, int>, std::shared_ptr<const PreparedWeights>> prepared;
  for (size_t k = 0; k < manifest.kernels.size(); ++k) {
    const ManifestKernel& kernel = manifest.kernels[k];
    if (kernel.primitive < 0) continue;
    std::string where = manifest_path + ": kernels[" + std::to_string(k) + "] '" + kernel.name + "'";
    Device& device = artifact.device(kernel.device);
    if (device.has_own_library()) {
      // Its library (cuBLASLt and cuDNN on a GPU) reads the weights as they are.
      const DeviceLibraryPrimitive*& primitive = made_on_devices[{kernel.primitive, kernel.device}];
      if (!primitive) {
        try {
          impl.device_primitives.push_back(device.make_library_primitive(manifest.primitives[size_t(kernel.primitive)]));
        } catch (const RuntimeError& e) {
          throw RuntimeError(where + ": " + e.what());
        }
        primitive = impl.device_primitives.back().get();
        size_t& bytes = impl.primitive_workspace_bytes[size_t(kernel.device)];
        bytes = std::max(bytes, primitive->workspace_bytes());
      }
      impl.kernel_primitives[k].device_primitive = primitive;
      continue;
    }
    const DnnlPrimitive*& primitive = made[{kernel.primitive, kernel.device}];
    if (!primitive) {
      try {
        impl.primitives.push_back(std::make_unique<DnnlPrimitive>(manifest.primitives[size_t(kernel.primitive)],
                                                                  artifact.device(kernel.device).num_threads()));
      } catch (const RuntimeError& e) {
        throw RuntimeError(where + ": " + e.what());
      }
      primitive = impl.primitives.back().get();
      if (primitive->multiplies_with_onednn_gemm() && !impl.gemm_kernels.valid())
        impl.gemm_kernels = std::async(std::launch::async, generate_onednn_gemm_kernels);
      size_t& bytes = impl.primitive_workspace_bytes[size_t(kernel.device)];
      bytes = std::max(bytes, primitive->workspace_bytes());
    }
    KernelPrimitive& planned = impl.kernel_primitives[k];
    planned.primitive = primitive;
    if (kernel.weights < 0 && primitive->needs_prepared_weights())
      throw RuntimeError(where + ": its primitive (" + manifest.primitives[size_t(kernel.primitive)].algorithm +
                         ") needs constant weights, and the kernel has none");
    const char* block = static_cast<const char*>(impl.weight_pointers[size_t(kernel.device)]);
    if (kernel.depthwise_weights >= 0) {
      planned.depthwise_weights_address = block + weight_offset_in_block(manifest, kernel.depthwise_weights);
      try {
        planned.depthwise_weights = primitive->prepare_depthwise_weights(planned.depthwise_weights_address);
      } catch (const RuntimeError& e) {
        throw RuntimeError(where + ": weight '" + manifest.weights[size_t(kernel.depthwise_weights)].name +
                           "': " + e.what());
      }
    }
    if (kernel.weights < 0) continue;
    planned.weights_address = block + weight_offset_in_block(manifest, kernel.weights);
    std::shared_ptr<const PreparedWeights>& weights = prepared[{primitive, kernel.weights}];
    const ManifestWeight& stored = manifest.weights[size_t(kernel.weights)];
    try {
      if (!weights)
        weights = stored.prepared.empty() ? primitive->prepare_weights(planned.weights_address)
                                          : primitive->adopt_prepared_weights(planned.weights_address,
                                                                              size_t(stored.nbytes), stored.prepared);
    } catch (const RuntimeError& e) {
      throw RuntimeError(where + ": weight '" + stored.name + "': " + e.what());
    }
    planned.weights = weights;
  }
}

// Loads each kernel's device image (a cubin, hash-checked) on its GPU once
// and finds the functions the entry launches.
void Artifact::load_device_images(Artifact& artifact, const std::string& manifest_path, uint64_t max_image_bytes) {
  Impl& impl = *artifact.impl_;
  const Manifest& manifest = artifact.manifest_;
  impl.kernel_functions.resize(manifest.kernels.size());
  std::map<std::pair<std::string, int>, size_t> loaded;  // (image, device) -> the first kernel using it
  for (size_t k = 0; k < manifest.kernels.size(); ++k) {
    const ManifestKernel& kernel = manifest.kernels[k];
    if (kernel.image.empty()) continue;
    auto [it, inserted] = loaded.emplace(std::make_pair(kernel.image, kernel.device), k);
    if (!inserted && manifest.kernels[it->second].functions == kernel.functions) {
      impl.kernel_functions[k] = impl.kernel_functions[it->second];
      continue;
    }
    std::string path = artifact.directory_ + "/" + kernel.image;
    std::string where = manifest_path + ": kernels[" + std::to_string(k) + "] '" + kernel.name + "'";
    std::vector<uint8_t> image;
    try {
      RegularFile file(path);
      file.check_size_at_most(max_image_bytes, "the limit on model.so and device images "
                                               "(LoadOptions::max_model_bytes, switchyard run --max-model-bytes)");
      if (std::string actual = sha256_file_hex(file); actual != kernel.image_sha256)
        throw RuntimeError(path + ": sha256 " + actual + " does not match the manifest (" + kernel.image_sha256 + ")");
      image.resize(size_t(file.size()));
      file.read_at(image.data(), image.size(), 0);
    } catch (const RuntimeError& e) {
      throw RuntimeError(where + ": " + e.what());
    }
    try {
      impl.kernel_functions[k] = artifact.device(kernel.device).load_functions(image, kernel.functions);
    } catch (const RuntimeError& e) {
      throw RuntimeError(where + ": " + e.what());
    }
  }
}

std::shared_ptr<Artifact> Artifact::load(const std::string& dir, const LoadOptions& options) {
  std::shared_ptr<Artifact> artifact(new Artifact());
  artifact->directory_ = dir;
  artifact->impl_ = std::make_unique<Impl>();
  Impl& impl = *artifact->impl_;
  const std::string manifest_path = dir + "/manifest.json";
  const std::string model_path = dir + "/model.so";
  const std::string weights_path = dir + "/weights.bin";
  namespace fs = std::filesystem;
  // The error_code overloads: a permission problem reads as "not found" rather than escaping as another type.
  std::error_code ignored;
  if (!fs::is_directory(dir, ignored)) throw RuntimeError("artifact directory " + dir + " not found");
  artifact->manifest_ = read_manifest_file(manifest_path);
  const Manifest& manifest = artifact->manifest_;
  if (manifest.abi_version != SY_MODEL_ABI_VERSION)
    throw RuntimeError(manifest_path + ": abi_version " + std::to_string(manifest.abi_version) +
                       " does not match this runtime's model ABI version " + std::to_string(SY_MODEL_ABI_VERSION));

  std::shared_ptr<ThreadPool> shared_pool;
  for (size_t i = 0; i < manifest.devices.size(); ++i) {
    const ManifestDevice& d = manifest.devices[i];
    const DeviceFactory* factory = find_device_factory(d.kind);
    if (!factory)
      throw RuntimeError(manifest_path + ": devices[" + std::to_string(i) + "]: device kind '" + d.kind +
                         "' is not supported by this runtime");
    if (std::vector<std::string> missing = missing_cpu_features(d.cpu_features); !missing.empty()) {
      std::string names;
      for (const std::string& f : missing) names += (names.empty() ? "" : ", ") + f;
      throw RuntimeError(manifest_path + ": devices[" + std::to_string(i) + "] (" + d.name +
                         "): model.so was compiled for CPU features this machine lacks: " + names +
                         "; compile the model on (or for) this machine");
    }
    std::shared_ptr<ThreadPool> pool;
    if (d.threads > 0) {
      pool = std::make_shared<ThreadPool>(d.threads);
    } else {
      if (!shared_pool) shared_pool = std::make_shared<ThreadPool>(options.threads);
      pool = shared_pool;
    }
    std::string where = manifest_path + ": devices[" + std::to_string(i) + "] (" + d.name + ")";
    try {
      artifact->devices_.push_back(factory->make(d.id, std::move(pool)));
    } catch (const RuntimeError& e) {
      throw RuntimeError(where + ": " + e.what());
    }
    if (std::string why = artifact->devices_.back()->cannot_run_compute_capability(d.compute_capability);
        !why.empty())
      throw RuntimeError(where + " (target '" + d.target + "'): " + why);
  }

  make_pinned_memories(*artifact);

  // Both files' sizes before either is hashed or mapped: a truncated file
  // deserves a clearer message than a hash mismatch, and a sparse one seconds
  // of hashing and gigabytes of page cache.
  RegularFile model_file(model_path);
  model_file.check_size_at_most(options.max_model_bytes, "the limit on model.so (LoadOptions::max_model_bytes, "
                                                         "switchyard run --max-model-bytes)");
  RegularFile weights_bin(weights_path);
  check_weights_size(manifest, weights_bin);
  // model.so before it is opened (by its path: the dynamic loader needs
  // one); weights.bin as it is read, below.
  if (std::string actual = sha256_file_hex(model_file); actual != manifest.hashes.model_so)
    throw RuntimeError(model_path + ": sha256 " + actual + " does not match the manifest (" +
                       manifest.hashes.model_so + ")");

  impl.library = dlopen(model_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!impl.library) {
    const char* reason = dlerror();
    throw RuntimeError(model_path + ": cannot load: " + (reason ? reason : "unknown reason"));
  }
  auto abi_version = reinterpret_cast<SyModelAbiVersionFn>(dlsym(impl.library, SY_MODEL_ABI_VERSION_SYMBOL));
  if (!abi_version) throw RuntimeError(model_path + ": missing symbol " SY_MODEL_ABI_VERSION_SYMBOL);
  if (int built = abi_version(); built != SY_MODEL_ABI_VERSION)
    throw RuntimeError(model_path + ": built against model ABI version " + std::to_string(built) +
                       ", this runtime supports version " + std::to_string(SY_MODEL_ABI_VERSION));
  impl.run_function = reinterpret_cast<SyModelRunFn>(dlsym(impl.library, SY_MODEL_RUN_SYMBOL));
  if (!impl.run_function) throw RuntimeError(model_path + ": missing symbol " SY_MODEL_RUN_SYMBOL);
  // Nothing below trusts the manifest until it matches what model.so was built for.
  auto describe = reinterpret_cast<SyModelDescriptionFn>(dlsym(impl.library, SY_MODEL_DESCRIPTION_SYMBOL));
  if (!describe) throw RuntimeError(model_path + ": missing symbol " SY_MODEL_DESCRIPTION_SYMBOL);
  const char* description = describe();
  if (!description) throw RuntimeError(model_path + ": " SY_MODEL_DESCRIPTION_SYMBOL " returned null");
  size_t description_bytes = strnlen(description, kMaxModelDescriptionBytes + 1);
  if (description_bytes > kMaxModelDescriptionBytes)
    throw RuntimeError(model_path + ": its description is longer than " + std::to_string(kMaxModelDescriptionBytes) +
                       " bytes");
  check_manifest_matches_model(manifest, {description, description_bytes}, manifest_path, model_path);

  // Summed where it is mapped, on a thread of its own while the primitives
  // are made from it; a mismatch discards them.
  // CPU devices read their blocks there.
  impl.weights_file = std::make_unique<MappedFile>(weights_bin);
  const MappedFile& weights_file = *impl.weights_file;
  const int format_version = manifest.format_version;
  std::future<std::string> weights_hash = std::async(std::launch::async, [&weights_file, format_version] {
    return weights_checksum_hex(format_version, weights_file.data(), size_t(weights_file.size()));
  });
  std::vector<WeightBlock> blocks = weight_blocks(manifest);
  impl.weight_blocks.resize(blocks.size());
  impl.weight_pointers.assign(blocks.size(), nullptr);
  for (size_t d = 0; d < blocks.size(); ++d) {
    if (blocks[d].empty()) continue;
    const unsigned char* block = weights_file.data() + blocks[d].begin;
    Device& device = *artifact->devices_[d];
    if (device.host_accessible()) {
      impl.weight_pointers[d] = block;
      continue;
    }
    DeviceBuffer buffer(device, size_t(blocks[d].end - blocks[d].begin));
    device.copy_from_host(buffer.data(), block, buffer.bytes());
    impl.weight_pointers[d] = buffer.data();
    impl.weight_blocks[d] = std::move(buffer);
  }
  load_device_images(*artifact, manifest_path, options.max_model_bytes);
  make_primitives(*artifact, manifest_path);
  if (std::string actual = weights_hash.get(); actual != manifest.hashes.weights_bin)
    throw RuntimeError(weights_path + ": " + weights_checksum(format_version).name + " " + actual +
                       " does not match the manifest (" + manifest.hashes.weights_bin + ")");
  // The first workspace now, so running out of memory shows at load time.
  impl.release_workspace(impl.acquire_workspace(*artifact));
  if (impl.gemm_kernels.valid()) impl.gemm_kernels.get();
  return artifact;
}

RunStats Artifact::execute(const std::vector<const void*>& host_inputs, const std::vector<void*>& host_outputs,
                           const RunOptions& options) const {
  Impl& impl = *impl_;
  std::unique_ptr<Impl::Workspace> workspace = impl.acquire_workspace(*this);
  // Inputs and outputs on devices the host cannot address are staged.
  std::vector<DeviceBuffer> staged_inputs(manifest_.inputs.size()), staged_outputs(manifest_.outputs.size());
  std::vector<const void*> inputs(host_inputs);
  std::vector<void*> outputs(host_outputs);
  for (size_t i = 0; i < inputs.size(); ++i) {
    Device& device = this->device(manifest_.inputs[i].device);
    if (device.host_accessible()) continue;
    size_t bytes = size_t(tensor_nbytes(manifest_.inputs[i].dtype, manifest_.inputs[i].shape));
    staged_inputs[i] = DeviceBuffer(device, bytes);
    device.copy_from_host(staged_inputs[i].data(), host_inputs[i], bytes);
    inputs[i] = staged_inputs[i].data();
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    Device& device = this->device(manifest_.outputs[i].device);
    if (device.host_accessible()) continue;
    staged_outputs[i] =
        DeviceBuffer(device, size_t(tensor_nbytes(manifest_.outputs[i].dtype, manifest_.outputs[i].shape)));
    outputs[i] = staged_outputs[i].data();
  }

  RunContext context;
  context.manifest = &manifest_;
  context.devices = &devices_;
  context.record_stats = options.record_stats;
  context.stats.kernels.reserve(manifest_.kernels.size());
  context.stats.copies.reserve(manifest_.copies.size());
  context.kernel_primitives = &impl.kernel_primitives;
  context.primitive_workspaces = workspace->primitive_workspace_pointers.data();
  context.kernel_functions = &impl.kernel_functions;
  context.fault_words = workspace->fault_word_pointers.data();
  SyRuntimeServices services{&context,           service_parallel_for,  service_device_copy,  service_kernel_begin,
                             service_kernel_end, service_run_primitive, service_kernel_fault, service_launch_kernel,
                             service_device_move};
  SyRunArgs args{workspace->arena_pointers.data(), impl.weight_pointers.data(), inputs.data(), outputs.data(),
                 &services};
  Clock::time_point start = Clock::now();
  int status = impl.run_function(&args);
  for (const std::unique_ptr<Device>& device : devices_) device->synchronize();
  context.stats.total_ns = nanoseconds_since(start);
  // The faults device images raised, read once their work is done, and cleared for the next run.
  for (size_t k = 0; k < manifest_.kernels.size(); ++k) {
    if (!workspace->fault_words[k].data()) continue;
    DeviceBuffer& word = workspace->fault_words[k];
    int faults = 0;
    word.device()->copy_to_host(&faults, word.data(), sizeof faults);
    if (faults == 0) continue;
    fail_with_faults(context, int(k), faults);
    word.device()->set_words(word.data(), 0, 1);
  }
  impl.release_workspace(std::move(workspace));

  const std::string model_path = directory_ + "/model.so";
  if (!context.error.empty()) throw RuntimeError(model_path + ": " + context.error);
  if (context.open_kernel >= 0)
    throw RuntimeError(model_path + ": " + context.kernel_label(context.open_kernel) + " never ended");
  if (status != 0) throw RuntimeError(model_path + ": sy_model_run failed with status " + std::to_string(status));
  for (size_t i = 0; i < outputs.size(); ++i)
    if (staged_outputs[i].data())
      staged_outputs[i].device()->copy_to_host(host_outputs[i], staged_outputs[i].data(), staged_outputs[i].bytes());
  if (!options.record_stats) context.stats = RunStats();
  return std::move(context.stats);
}

RunResult Artifact::run(const std::vector<NDArray>& inputs, const RunOptions& options) const {
  if (inputs.size() != manifest_.inputs.size())
    throw RuntimeError("expected " + std::to_string(manifest_.inputs.size()) + " inputs (" +
                       list_names(manifest_.inputs) + "), got " + std::to_string(inputs.size()));
  std::vector<TensorView> views;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].defined())
      throw RuntimeError("input '" + manifest_.inputs[i].name + "': expected " +
                         describe_tensor(manifest_.inputs[i].dtype, manifest_.inputs[i].shape) +
                         ", got an empty array");
    views.push_back({inputs[i].data(), inputs[i].dtype(), inputs[i].shape()});
  }
  RunResult result;
  std::vector<MutableTensorView> outputs;
  for (const ManifestTensor& output : manifest_.outputs) {
    result.outputs.emplace_back(output.dtype, output.shape);
    outputs.push_back({result.outputs.back().data(), output.dtype, output.shape});
  }
  result.stats = run_buffers(views, outputs, options);
  return result;
}

RunResult Artifact::run(const std::map<std::string, NDArray>& inputs, const RunOptions& options) const {
  for (const auto& [name, value] : inputs) {
    bool known = false;
    for (const ManifestTensor& input : manifest_.inputs) known = known || input.name == name;
    if (!known) throw RuntimeError("unknown input '" + name + "' (inputs: " + list_names(manifest_.inputs) + ")");
  }
  std::vector<NDArray> ordered;
  for (const ManifestTensor& input : manifest_.inputs) {
    auto it = inputs.find(input.name);
    if (it == inputs.end()) throw RuntimeError("missing input '" + input.name + "'");
    ordered.push_back(it->second);
  }
  return run(ordered, options);
}

RunStats Artifact::run_buffers(const std::vector<TensorView>& inputs, const std::vector<MutableTensorView>& outputs,
                               const RunOptions& options) const {
  if (inputs.size() != manifest_.inputs.size())
    throw RuntimeError("expected " + std::to_string(manifest_.inputs.size()) + " inputs (" +
                       list_names(manifest_.inputs) + "), got " + std::to_string(inputs.size()));
  if (outputs.size() != manifest_.outputs.size())
    throw RuntimeError("expected " + std::to_string(manifest_.outputs.size()) + " outputs (" +
                       list_names(manifest_.outputs) + "), got " + std::to_string(outputs.size()));
  auto check = [](const char* role, const ManifestTensor& expected, const void* data, DType dtype,
                  const std::vector<int64_t>& shape) {
    if (dtype != expected.dtype || shape != expected.shape)
      throw RuntimeError(std::string(role) + " '" + expected.name + "': expected " +
                         describe_tensor(expected.dtype, expected.shape) + ", got " + describe_tensor(dtype, shape));
    if (!data && tensor_nbytes(dtype, shape) != 0)
      throw RuntimeError(std::string(role) + " '" + expected.name + "': data pointer is null");
  };
  std::vector<const void*> input_pointers;
  std::vector<void*> output_pointers;
  for (size_t i = 0; i < inputs.size(); ++i) {
    check("input", manifest_.inputs[i], inputs[i].data, inputs[i].dtype, inputs[i].shape);
    input_pointers.push_back(inputs[i].data);
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    check("output", manifest_.outputs[i], outputs[i].data, outputs[i].dtype, outputs[i].shape);
    output_pointers.push_back(outputs[i].data);
  }
  return execute(input_pointers, output_pointers, options);
}

}  // namespace switchyard
