// Artifact loading (manifest, hashes, model.so, weights, devices, library
// primitives, device images) and running through the model ABI with the
// services of runtime/run_context.h.
#include "runtime/artifact.h"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <future>
#include <mutex>

#include "runtime/core_set.h"
#include "runtime/device_registry.h"
#include "runtime/mapped_file.h"
#include "runtime/model_description.h"
#include "runtime/queued_run.h"
#include "runtime/regular_file.h"
#include "runtime/run_context.h"
#include "runtime/runtime_error.h"
#include "runtime/sha256.h"
#include "switchyard/model_abi.h"
#include "targets/cpu/runtime/dnnl_primitive.h"

namespace switchyard {
namespace {

std::string describe_tensor(DType dtype, const std::vector<int64_t>& shape) {
  return std::string(dtype_name(dtype)) + " " + shape_to_string(shape);
}

std::string list_names(const std::vector<ManifestTensor>& tensors) {
  std::string names;
  for (const ManifestTensor& t : tensors) names += (names.empty() ? "" : ", ") + t.name;
  return names;
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
    // The workers first: each ends the requests handed to it (run_async's in flight) and stops.
    in_order_worker.reset();
    queues.reset();
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

  // A place among run_async's requests in flight, once one is free.
  void enter_flight() {
    std::unique_lock<std::mutex> lock(flight_mutex);
    flight_left.wait(lock, [&] { return in_flight < max_in_flight; });
    ++in_flight;
  }
  void leave_flight() {
    {
      std::lock_guard<std::mutex> lock(flight_mutex);
      --in_flight;
    }
    flight_left.notify_one();
  }

  // The worker that runs asynchronous requests in program order, made on first use.
  QueueWorker& in_order_queue() {
    std::lock_guard<std::mutex> lock(flight_mutex);
    if (!in_order_worker) in_order_worker = std::make_unique<QueueWorker>(std::vector<int>());
    return *in_order_worker;
  }

  void* library = nullptr;
  SyModelRunFn run_function = nullptr;
  std::unique_ptr<ModelQueues> queues;  // null: the steps run in order on the caller's thread
  // weights.bin, where host devices read their weights; one mapping for
  // the programs of a specialised artifact that share it.
  std::shared_ptr<const MappedFile> weights_file;
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
  std::mutex flight_mutex;
  std::condition_variable flight_left;
  int in_flight = 0;  // run_async's requests not yet ended
  int max_in_flight = 2;
  std::unique_ptr<QueueWorker> in_order_worker;
};

// One run from its start to its end: its workspace, its staged buffers,
// its context, and where it runs asynchronously, what to call at the end.
struct Artifact::PendingRun {
  std::unique_ptr<Impl::Workspace> workspace;
  // Inputs and outputs on devices the host cannot address are staged.
  std::vector<DeviceBuffer> staged_inputs, staged_outputs;
  std::vector<const void*> inputs;
  std::vector<void*> host_outputs, outputs;
  RunContext context;
  SyRuntimeServices services{};
  SyRunArgs args{};
  RunClock::time_point start;
  int status = 0;
  std::unique_ptr<QueuedRun> queued;  // its queues' events and contexts, where they run at once
  RunEnd done;
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

// Makes the manifest's devices in order, each checked against this machine
// (device kind, CPU features, compute capability). CPU devices without
// threads of their own share one pool of `threads`.
void Artifact::make_devices(Artifact& artifact, const std::vector<ManifestDevice>& devices,
                            const std::string& manifest_path, int threads) {
  std::shared_ptr<ThreadPool> shared_pool;
  for (size_t i = 0; i < devices.size(); ++i) {
    const ManifestDevice& d = devices[i];
    const DeviceFactory* factory = find_device_factory(d.kind);
    if (!factory)
      throw RuntimeError(manifest_path + ": devices[" + std::to_string(i) + "]: device kind '" + d.kind +
                         "' is not supported by this runtime");
    std::shared_ptr<ThreadPool> pool;
    if (d.threads > 0) {
      pool = std::make_shared<ThreadPool>(d.threads);
    } else {
      if (!shared_pool) shared_pool = std::make_shared<ThreadPool>(threads);
      pool = shared_pool;
    }
    std::string where = manifest_path + ": devices[" + std::to_string(i) + "] (" + d.name + ")";
    try {
      artifact.devices_.push_back(factory->make(d.id, std::move(pool)));
    } catch (const RuntimeError& e) {
      throw RuntimeError(where + ": " + e.what());
    }
    if (std::string why = artifact.devices_.back()->cannot_run_cpu_features(d.cpu_features); !why.empty())
      throw RuntimeError(where + ": " + why);
    if (std::string why = artifact.devices_.back()->cannot_run_compute_capability(d.compute_capability);
        !why.empty())
      throw RuntimeError(where + " (target '" + d.target + "'): " + why);
  }
}

// Opens model.so (already hash-checked), finds its entry points and checks
// that the manifest describes the model it was built for.
void Artifact::open_model_library(Impl& impl, const Manifest& manifest, const std::string& manifest_path,
                                  const std::string& model_path) {
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
}

// Gives each device its block of the mapped weights: CPU devices read them
// in place, the others get a copy in their own memory.
void Artifact::place_weight_blocks(Artifact& artifact) {
  Impl& impl = *artifact.impl_;
  const MappedFile& weights_file = *impl.weights_file;
  std::vector<WeightBlock> blocks = weight_blocks(artifact.manifest_);
  impl.weight_blocks.resize(blocks.size());
  impl.weight_pointers.assign(blocks.size(), nullptr);
  for (size_t d = 0; d < blocks.size(); ++d) {
    if (blocks[d].empty()) continue;
    const unsigned char* block = weights_file.data() + blocks[d].begin;
    Device& device = *artifact.devices_[d];
    if (device.host_accessible()) {
      impl.weight_pointers[d] = block;
      continue;
    }
    DeviceBuffer buffer(device, size_t(blocks[d].end - blocks[d].begin));
    device.copy_from_host(buffer.data(), block, buffer.bytes());
    impl.weight_pointers[d] = buffer.data();
    impl.weight_blocks[d] = std::move(buffer);
  }
}

std::shared_ptr<Artifact> Artifact::load(const std::string& dir, const LoadOptions& options) {
  // The error_code overloads: a permission problem reads as "not found" rather than escaping as another type.
  std::error_code ignored;
  if (!std::filesystem::is_directory(dir, ignored)) throw RuntimeError("artifact directory " + dir + " not found");
  if (std::optional<SpecializedManifest> specialized = read_specialized_manifest_file(dir + "/manifest.json"))
    return load_specialized(dir, std::move(*specialized), options);
  return load_program(dir, program_weights_path(dir), options);
}

std::string Artifact::program_weights_path(const std::string& dir) {
  std::error_code ignored;
  if (std::filesystem::exists(dir + "/weights.bin", ignored)) return dir + "/weights.bin";
  // One program of a specialised artifact (ART/n=8), loaded alone, reads the
  // weights.bin its artifact stores once for every program that shares it.
  const std::filesystem::path program = std::filesystem::path(dir).lexically_normal();
  const std::filesystem::path name = program.has_filename() ? program.filename() : program.parent_path().filename();
  const std::filesystem::path artifact = program.has_filename() ? program.parent_path() : program.parent_path().parent_path();
  try {
    if (std::optional<SpecializedManifest> specialized =
            read_specialized_manifest_file((artifact / "manifest.json").string()))
      for (size_t s = 0; s < specialized->specializations.size(); ++s)
        if (specialization_name(*specialized, s) == name.string() && specialized->specializations[s].shared_weights)
          return (artifact / "weights.bin").string();
  } catch (const RuntimeError&) {
    // A malformed enclosing manifest is not this program's: its own weights.bin is reported missing.
  }
  return dir + "/weights.bin";
}

std::shared_ptr<Artifact> Artifact::load_specialized(const std::string& dir, SpecializedManifest specialized,
                                                     const LoadOptions& options) {
  std::shared_ptr<Artifact> artifact(new Artifact());
  artifact->directory_ = dir;
  const std::string manifest_path = dir + "/manifest.json";
  std::shared_ptr<const MappedFile> shared_weights;  // the top-level weights.bin, mapped once
  for (size_t s = 0; s < specialized.specializations.size(); ++s) {
    // The directory is named after the values, never read from the file.
    const std::string program_dir = dir + "/" + specialization_name(specialized, s);
    const std::string weights_path =
        (specialized.specializations[s].shared_weights ? dir : program_dir) + "/weights.bin";
    std::shared_ptr<Artifact> program =
        load_program(program_dir, weights_path, options,
                     specialized.specializations[s].shared_weights ? &shared_weights : nullptr, false);
    // Each program must take and give what the top-level manifest says, at its values.
    auto check = [&](const char* role, const std::vector<SymbolicTensor>& expected,
                     const std::vector<ManifestTensor>& actual) {
      bool same = expected.size() == actual.size();
      for (size_t i = 0; same && i < actual.size(); ++i) {
        same = expected[i].name == actual[i].name && expected[i].dtype == actual[i].dtype &&
               expected[i].shape.size() == actual[i].shape.size();
        for (size_t d = 0; same && d < actual[i].shape.size(); ++d)
          same = expected[i].shape[d].is_symbolic() || expected[i].shape[d].value == actual[i].shape[d];
      }
      if (!same)
        throw RuntimeError(program_dir + "/manifest.json: its " + role + " are not the " + role + " " + manifest_path +
                           " lists");
    };
    check("inputs", specialized.inputs, program->manifest().inputs);
    check("outputs", specialized.outputs, program->manifest().outputs);
    artifact->program_inputs_.emplace_back();
    for (const ManifestTensor& input : program->manifest().inputs)
      artifact->program_inputs_.back().push_back(input.shape);
    artifact->specializations_.push_back(std::move(program));
  }
  // What callers asking for the model's signature see: the first program's, symbolic dimensions -1.
  artifact->manifest_ = artifact->specializations_[0]->manifest();
  auto mark_symbolic = [](std::vector<ManifestTensor>& tensors, const std::vector<SymbolicTensor>& symbolic) {
    for (size_t i = 0; i < tensors.size(); ++i)
      for (size_t d = 0; d < tensors[i].shape.size(); ++d)
        if (symbolic[i].shape[d].is_symbolic()) tensors[i].shape[d] = -1;
  };
  mark_symbolic(artifact->manifest_.inputs, specialized.inputs);
  mark_symbolic(artifact->manifest_.outputs, specialized.outputs);
  artifact->specialized_ = std::make_unique<SpecializedManifest>(std::move(specialized));
  return artifact;
}

const Artifact& Artifact::program_for(const std::vector<std::vector<int64_t>>& input_shapes) const {
  if (!specialized_) return *this;
  return *specializations_[choose_specialization(*specialized_, program_inputs_, input_shapes)];
}

RunPlan Artifact::run_plan(const std::vector<std::vector<int64_t>>& input_shapes) const {
  return plan_run(*specialized_, program_inputs_, input_shapes);
}

std::vector<std::vector<int64_t>> Artifact::chunked_output_shapes(const ChunkPlan& plan) const {
  const ChunkStep& first = plan.steps.front();
  const Manifest& program = specializations_[first.program]->manifest();
  const DimChunking& chunking = specialized_->chunking[plan.dim];
  std::vector<std::vector<int64_t>> shapes;
  for (size_t j = 0; j < program.outputs.size(); ++j)
    shapes.push_back(scaled_shape(program.outputs[j].shape, chunking.output_axes[j], first.count, plan.total));
  return shapes;
}

bool Artifact::runs_in_chunks(const std::vector<std::vector<int64_t>>& input_shapes) const {
  return specialized_ && input_shapes.size() == manifest_.inputs.size() && run_plan(input_shapes).chunks.has_value();
}

std::vector<std::vector<int64_t>> Artifact::output_shapes_for(
    const std::vector<std::vector<int64_t>>& input_shapes) const {
  const Artifact* program = this;
  if (specialized_ && input_shapes.size() == manifest_.inputs.size()) {
    RunPlan plan = run_plan(input_shapes);
    if (plan.chunks) return chunked_output_shapes(*plan.chunks);
    program = specializations_[plan.program].get();
  } else if (specialized_) {
    program = &program_for(input_shapes);  // names what is wrong
  }
  std::vector<std::vector<int64_t>> shapes;
  for (const ManifestTensor& output : program->manifest().outputs) shapes.push_back(output.shape);
  return shapes;
}

RunStats Artifact::run_in_chunks(const ChunkPlan& plan, const std::vector<TensorView>& inputs,
                                 const std::vector<MutableTensorView>& outputs, const RunOptions& options) const {
  const DimChunking& chunking = specialized_->chunking[plan.dim];
  const std::vector<std::vector<int64_t>> output_shapes = chunked_output_shapes(plan);
  if (outputs.size() != manifest_.outputs.size())
    throw RuntimeError("expected " + std::to_string(manifest_.outputs.size()) + " outputs, got " +
                       std::to_string(outputs.size()));
  for (size_t j = 0; j < outputs.size(); ++j)
    if (outputs[j].dtype != manifest_.outputs[j].dtype || outputs[j].shape != output_shapes[j])
      throw RuntimeError("output '" + manifest_.outputs[j].name + "': expected " +
                         describe_tensor(manifest_.outputs[j].dtype, output_shapes[j]) + ", got " +
                         describe_tensor(outputs[j].dtype, outputs[j].shape));
  // Named at the run's shapes, not at a chunk's.
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].dtype != manifest_.inputs[i].dtype)
      throw RuntimeError("input '" + manifest_.inputs[i].name + "': expected " +
                         dtype_name(manifest_.inputs[i].dtype) + ", got " + describe_tensor(inputs[i].dtype, inputs[i].shape));
    if (!inputs[i].data && tensor_nbytes(inputs[i].dtype, inputs[i].shape) != 0)
      throw RuntimeError("input '" + manifest_.inputs[i].name + "': data pointer is null");
  }
  for (size_t j = 0; j < outputs.size(); ++j)
    if (!outputs[j].data && tensor_nbytes(outputs[j].dtype, outputs[j].shape) != 0)
      throw RuntimeError("output '" + manifest_.outputs[j].name + "': data pointer is null");
  RunStats stats;
  for (size_t k = 0; k < plan.steps.size(); ++k) {
    const ChunkStep& step = plan.steps[k];
    const Artifact& program = *specializations_[step.program];
    // Slices the caller's buffers where they are one run of bytes; copies otherwise.
    std::vector<std::vector<char>> scratch(inputs.size() + outputs.size());
    std::vector<TensorView> in = inputs;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const int axis = chunking.input_axes[i];
      if (axis < 0) continue;
      const int bytes = dtype_bytes(inputs[i].dtype);
      const int64_t block = inputs[i].shape[size_t(axis)] / plan.total;
      in[i].shape[size_t(axis)] = block * step.count;
      if (slice_is_contiguous(inputs[i].shape, axis)) {
        in[i].data = static_cast<const char*>(inputs[i].data) +
                     slice_offset_bytes(inputs[i].shape, axis, block * step.start, bytes);
      } else {
        scratch[i].resize(size_t(tensor_nbytes(in[i].dtype, in[i].shape)));
        gather_slice(inputs[i].data, inputs[i].shape, axis, block * step.start, block * step.count, bytes,
                     scratch[i].data());
        in[i].data = scratch[i].data();
      }
    }
    std::vector<MutableTensorView> out = outputs;
    std::vector<bool> scatter(outputs.size(), false);
    for (size_t j = 0; j < outputs.size(); ++j) {
      std::vector<char>& buffer = scratch[inputs.size() + j];
      const int axis = chunking.output_axes[j];
      if (axis < 0) {
        // The same in every chunk: the first writes it, the others a scratch copy.
        if (k == 0) continue;
        buffer.resize(size_t(tensor_nbytes(out[j].dtype, out[j].shape)));
        out[j].data = buffer.data();
        continue;
      }
      const int bytes = dtype_bytes(outputs[j].dtype);
      const int64_t block = outputs[j].shape[size_t(axis)] / plan.total;
      out[j].shape[size_t(axis)] = block * step.count;
      if (slice_is_contiguous(outputs[j].shape, axis)) {
        out[j].data = static_cast<char*>(outputs[j].data) +
                      slice_offset_bytes(outputs[j].shape, axis, block * step.start, bytes);
      } else {
        buffer.resize(size_t(tensor_nbytes(out[j].dtype, out[j].shape)));
        out[j].data = buffer.data();
        scatter[j] = true;
      }
    }
    RunStats part = program.run_buffers(in, out, options);
    for (size_t j = 0; j < outputs.size(); ++j) {
      if (!scatter[j]) continue;
      const int axis = chunking.output_axes[j];
      const int64_t block = outputs[j].shape[size_t(axis)] / plan.total;
      scatter_slice(out[j].data, outputs[j].shape, axis, block * step.start, block * step.count,
                    dtype_bytes(outputs[j].dtype), outputs[j].data);
    }
    stats.kernels.insert(stats.kernels.end(), part.kernels.begin(), part.kernels.end());
    stats.copies.insert(stats.copies.end(), part.copies.begin(), part.copies.end());
    stats.total_ns += part.total_ns;
  }
  return stats;
}

std::shared_ptr<Artifact> Artifact::load_program(const std::string& dir, const std::string& weights_path,
                                                 const LoadOptions& options,
                                                 std::shared_ptr<const MappedFile>* shared_mapping,
                                                 bool workspace_at_load) {
  std::shared_ptr<Artifact> artifact(new Artifact());
  artifact->directory_ = dir;
  artifact->impl_ = std::make_unique<Impl>();
  Impl& impl = *artifact->impl_;
  const std::string manifest_path = dir + "/manifest.json";
  const std::string model_path = dir + "/model.so";
  namespace fs = std::filesystem;
  std::error_code ignored;
  if (!fs::is_directory(dir, ignored)) throw RuntimeError("artifact directory " + dir + " not found");
  if (options.max_in_flight < 0)
    throw RuntimeError(dir + ": max_in_flight must be at least 0 (0: the default), got " +
                       std::to_string(options.max_in_flight));
  artifact->manifest_ = read_manifest_file(manifest_path);
  const Manifest& manifest = artifact->manifest_;
  if (manifest.abi_version != SY_MODEL_ABI_VERSION)
    throw RuntimeError(manifest_path + ": abi_version " + std::to_string(manifest.abi_version) +
                       " does not match this runtime's model ABI version " + std::to_string(SY_MODEL_ABI_VERSION));

  // The devices with the load's core sets, each checked against the cores this process may use.
  std::vector<ManifestDevice> devices = manifest.devices;
  try {
    apply_device_cores(devices, options.cores);
  } catch (const RuntimeError& e) {
    throw RuntimeError(manifest_path + ": cores given at load: " + e.what());
  }
  std::vector<std::vector<int>> device_cores;
  for (size_t i = 0; i < devices.size(); ++i) {
    if (std::string why = cores_not_allowed(devices[i].name, devices[i].cores); !why.empty())
      throw RuntimeError(manifest_path + ": devices[" + std::to_string(i) + "]: " + why);
    device_cores.push_back(devices[i].cores);
  }
  make_devices(*artifact, devices, manifest_path, options.threads);
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
  open_model_library(impl, manifest, manifest_path, model_path);
  impl.queues = load_model_queues(impl.library, manifest, device_cores, model_path);
  impl.max_in_flight = options.max_in_flight > 0 ? options.max_in_flight : std::max(2, 2 * artifact->num_queues());
  artifact->manifest_.devices = devices;  // checked against model.so's own; now as this load runs them

  // Summed where it is mapped, on a thread of its own while the primitives
  // are made from it; a mismatch discards them.
  // CPU devices read their blocks there.
  if (shared_mapping && *shared_mapping) {
    impl.weights_file = *shared_mapping;
  } else {
    impl.weights_file = std::make_shared<const MappedFile>(weights_bin);
    if (shared_mapping) *shared_mapping = impl.weights_file;
  }
  const MappedFile& weights_file = *impl.weights_file;
  const int format_version = manifest.format_version;
  std::future<std::string> weights_hash = std::async(std::launch::async, [&weights_file, format_version] {
    return weights_checksum_hex(format_version, weights_file.data(), size_t(weights_file.size()));
  });
  place_weight_blocks(*artifact);
  load_device_images(*artifact, manifest_path, options.max_model_bytes);
  make_primitives(*artifact, manifest_path);
  if (impl.queues) give_workers_scratch(*impl.queues, artifact->devices_, impl.primitive_workspace_bytes);
  if (std::string actual = weights_hash.get(); actual != manifest.hashes.weights_bin)
    throw RuntimeError(weights_path + ": " + weights_checksum(format_version).name + " " + actual +
                       " does not match the manifest (" + manifest.hashes.weights_bin + ")");
  // The first workspace now, so running out of memory shows at load time.
  if (workspace_at_load) impl.release_workspace(impl.acquire_workspace(*artifact));
  if (impl.gemm_kernels.valid()) impl.gemm_kernels.get();
  return artifact;
}

int Artifact::num_queues() const {
  if (specialized_) return specializations_[0]->num_queues();
  return impl_->queues ? int(impl_->queues->queue_devices.size()) : 0;
}

std::unique_ptr<Artifact::PendingRun> Artifact::start_run(const std::vector<const void*>& host_inputs,
                                                          const std::vector<void*>& host_outputs,
                                                          const RunOptions& options) const {
  Impl& impl = *impl_;
  auto run = std::make_unique<PendingRun>();
  run->workspace = impl.acquire_workspace(*this);
  Impl::Workspace& workspace = *run->workspace;
  run->staged_inputs.resize(manifest_.inputs.size());
  run->staged_outputs.resize(manifest_.outputs.size());
  run->inputs = host_inputs;
  run->host_outputs = host_outputs;
  run->outputs = host_outputs;
  for (size_t i = 0; i < run->inputs.size(); ++i) {
    Device& device = this->device(manifest_.inputs[i].device);
    if (device.host_accessible()) continue;
    size_t bytes = size_t(tensor_nbytes(manifest_.inputs[i].dtype, manifest_.inputs[i].shape));
    run->staged_inputs[i] = DeviceBuffer(device, bytes);
    device.copy_from_host(run->staged_inputs[i].data(), host_inputs[i], bytes);
    run->inputs[i] = run->staged_inputs[i].data();
  }
  for (size_t i = 0; i < run->outputs.size(); ++i) {
    Device& device = this->device(manifest_.outputs[i].device);
    if (device.host_accessible()) continue;
    run->staged_outputs[i] =
        DeviceBuffer(device, size_t(tensor_nbytes(manifest_.outputs[i].dtype, manifest_.outputs[i].shape)));
    run->outputs[i] = run->staged_outputs[i].data();
  }

  RunContext& context = run->context;
  context.manifest = &manifest_;
  context.devices = &devices_;
  context.record_stats = options.record_stats;
  context.stats.kernels.reserve(manifest_.kernels.size());
  context.stats.copies.reserve(manifest_.copies.size());
  context.kernel_primitives = &impl.kernel_primitives;
  context.primitive_workspaces = workspace.primitive_workspace_pointers.data();
  context.kernel_functions = &impl.kernel_functions;
  context.fault_words = workspace.fault_word_pointers.data();
  run->services = runtime_services(&context);
  run->args = SyRunArgs{workspace.arena_pointers.data(), impl.weight_pointers.data(), run->inputs.data(),
                        run->outputs.data(), &run->services};
  run->start = RunClock::now();
  return run;
}

RunStats Artifact::end_run(PendingRun& run) const {
  Impl& impl = *impl_;
  RunContext& context = run.context;
  Impl::Workspace& workspace = *run.workspace;
  for (const std::unique_ptr<Device>& device : devices_) device->synchronize();
  context.stats.total_ns = nanoseconds_since(run.start);
  // The faults device images raised, read once their work is done, and cleared for the next run.
  for (size_t k = 0; k < manifest_.kernels.size(); ++k) {
    if (!workspace.fault_words[k].data()) continue;
    DeviceBuffer& word = workspace.fault_words[k];
    int faults = 0;
    word.device()->copy_to_host(&faults, word.data(), sizeof faults);
    if (faults == 0) continue;
    fail_with_faults(context, int(k), faults);
    word.device()->set_words(word.data(), 0, 1);
  }
  impl.release_workspace(std::move(run.workspace));

  const std::string model_path = directory_ + "/model.so";
  if (!context.error.empty()) throw RuntimeError(model_path + ": " + context.error);
  if (context.open_kernel >= 0)
    throw RuntimeError(model_path + ": " + context.kernel_label(context.open_kernel) + " never ended");
  if (run.status != 0)
    throw RuntimeError(model_path + ": sy_model_run failed with status " + std::to_string(run.status));
  for (size_t i = 0; i < run.outputs.size(); ++i)
    if (run.staged_outputs[i].data())
      run.staged_outputs[i].device()->copy_to_host(run.host_outputs[i], run.staged_outputs[i].data(),
                                                   run.staged_outputs[i].bytes());
  if (!context.record_stats) context.stats = RunStats();
  return std::move(context.stats);
}

RunStats Artifact::execute(const std::vector<const void*>& host_inputs, const std::vector<void*>& host_outputs,
                           const RunOptions& options) const {
  Impl& impl = *impl_;
  std::unique_ptr<PendingRun> run = start_run(host_inputs, host_outputs, options);
  run->status = impl.queues && !options.in_order ? run_model_queues(*impl.queues, run->context, run->args)
                                                 : impl.run_function(&run->args);
  return end_run(*run);
}

void Artifact::execute_async(const std::vector<const void*>& host_inputs, const std::vector<void*>& host_outputs,
                             const RunOptions& options, RunEnd done) const {
  Impl& impl = *impl_;
  impl.enter_flight();
  try {
    std::shared_ptr<PendingRun> run = start_run(host_inputs, host_outputs, options);
    run->done = std::move(done);
    if (impl.queues && !options.in_order) {
      run->queued = std::make_unique<QueuedRun>(*impl.queues, run->context, run->args);
      impl.queues->workers->submit([this, run](int q) {
        if (run->queued->run_queue(q)) complete_async(*run);
      });
    } else {
      impl.in_order_queue().submit([this, run] {
        try {
          run->status = impl_->run_function(&run->args);
        } catch (const std::exception& e) {
          run->context.fail(std::string("the run failed: ") + e.what());
        }
        complete_async(*run);
      });
    }
  } catch (...) {
    impl.leave_flight();
    throw;
  }
}

// On the worker that ran a request's last step: ends it, frees its place in
// flight, and hands its stats or error to `done`, which nothing may escape
// (a worker's task must not throw).
void Artifact::complete_async(PendingRun& run) const {
  RunStats stats;
  std::exception_ptr error;
  try {
    if (run.queued) run.status = run.queued->finish();
    stats = end_run(run);
  } catch (...) {
    error = std::current_exception();
  }
  impl_->leave_flight();
  try {
    run.done(std::move(stats), error);
  } catch (...) {
  }
}

int Artifact::max_in_flight() const {
  return specialized_ ? specializations_[0]->max_in_flight() : impl_->max_in_flight;
}

namespace {

// Views of `inputs` (manifest order), checked for their count and that each is defined.
std::vector<TensorView> input_views(const Manifest& manifest, const std::vector<NDArray>& inputs) {
  if (inputs.size() != manifest.inputs.size())
    throw RuntimeError("expected " + std::to_string(manifest.inputs.size()) + " inputs (" +
                       list_names(manifest.inputs) + "), got " + std::to_string(inputs.size()));
  std::vector<TensorView> views;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].defined())
      throw RuntimeError("input '" + manifest.inputs[i].name + "': expected " +
                         describe_tensor(manifest.inputs[i].dtype, manifest.inputs[i].shape) +
                         ", got an empty array");
    views.push_back({inputs[i].data(), inputs[i].dtype(), inputs[i].shape()});
  }
  return views;
}

// Fresh outputs in manifest order, and views that write into them.
std::vector<MutableTensorView> output_views(const Manifest& manifest, std::vector<NDArray>& outputs) {
  std::vector<MutableTensorView> views;
  for (const ManifestTensor& output : manifest.outputs) {
    outputs.emplace_back(output.dtype, output.shape);
    views.push_back({outputs.back().data(), output.dtype, output.shape});
  }
  return views;
}

// `inputs` by name in manifest order; every input must be given, and nothing else.
std::vector<NDArray> ordered_inputs(const Manifest& manifest, const std::map<std::string, NDArray>& inputs) {
  for (const auto& [name, value] : inputs) {
    bool known = false;
    for (const ManifestTensor& input : manifest.inputs) known = known || input.name == name;
    if (!known) throw RuntimeError("unknown input '" + name + "' (inputs: " + list_names(manifest.inputs) + ")");
  }
  std::vector<NDArray> ordered;
  for (const ManifestTensor& input : manifest.inputs) {
    auto it = inputs.find(input.name);
    if (it == inputs.end()) throw RuntimeError("missing input '" + input.name + "'");
    ordered.push_back(it->second);
  }
  return ordered;
}

std::vector<std::vector<int64_t>> shapes_of(const std::vector<NDArray>& inputs) {
  std::vector<std::vector<int64_t>> shapes;
  for (const NDArray& input : inputs) shapes.push_back(input.defined() ? input.shape() : std::vector<int64_t>{});
  return shapes;
}

std::vector<std::vector<int64_t>> shapes_of(const std::vector<TensorView>& inputs) {
  std::vector<std::vector<int64_t>> shapes;
  for (const TensorView& input : inputs) shapes.push_back(input.shape);
  return shapes;
}

}  // namespace

RunResult Artifact::run(const std::vector<NDArray>& inputs, const RunOptions& options) const {
  if (specialized_ && inputs.size() == manifest_.inputs.size()) {
    RunPlan plan = run_plan(shapes_of(inputs));
    if (!plan.chunks) return specializations_[plan.program]->run(inputs, options);
    std::vector<TensorView> views = input_views(manifest_, inputs);
    RunResult result;
    std::vector<MutableTensorView> outputs;
    std::vector<std::vector<int64_t>> shapes = chunked_output_shapes(*plan.chunks);
    for (size_t j = 0; j < shapes.size(); ++j) {
      result.outputs.emplace_back(manifest_.outputs[j].dtype, shapes[j]);
      outputs.push_back({result.outputs.back().data(), manifest_.outputs[j].dtype, shapes[j]});
    }
    result.stats = run_in_chunks(*plan.chunks, views, outputs, options);
    return result;
  }
  std::vector<TensorView> views = input_views(manifest_, inputs);
  RunResult result;
  std::vector<MutableTensorView> outputs = output_views(manifest_, result.outputs);
  result.stats = run_buffers(views, outputs, options);
  return result;
}

RunResult Artifact::run(const std::map<std::string, NDArray>& inputs, const RunOptions& options) const {
  return run(ordered_inputs(manifest_, inputs), options);
}

std::pair<std::vector<const void*>, std::vector<void*>> Artifact::checked_buffers(
    const std::vector<TensorView>& inputs, const std::vector<MutableTensorView>& outputs) const {
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
  std::pair<std::vector<const void*>, std::vector<void*>> pointers;
  for (size_t i = 0; i < inputs.size(); ++i) {
    check("input", manifest_.inputs[i], inputs[i].data, inputs[i].dtype, inputs[i].shape);
    pointers.first.push_back(inputs[i].data);
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    check("output", manifest_.outputs[i], outputs[i].data, outputs[i].dtype, outputs[i].shape);
    pointers.second.push_back(outputs[i].data);
  }
  return pointers;
}

RunStats Artifact::run_buffers(const std::vector<TensorView>& inputs, const std::vector<MutableTensorView>& outputs,
                               const RunOptions& options) const {
  if (specialized_ && inputs.size() == manifest_.inputs.size()) {
    RunPlan plan = run_plan(shapes_of(inputs));
    if (plan.chunks) return run_in_chunks(*plan.chunks, inputs, outputs, options);
    return specializations_[plan.program]->run_buffers(inputs, outputs, options);
  }
  auto [input_pointers, output_pointers] = checked_buffers(inputs, outputs);
  return execute(input_pointers, output_pointers, options);
}

std::future<RunResult> Artifact::run_async(std::vector<NDArray> inputs, const RunOptions& options) const {
  if (specialized_ && inputs.size() == manifest_.inputs.size()) {
    // A run in chunks is a run of each chunk in turn: it ends before the future is returned.
    RunPlan plan = run_plan(shapes_of(inputs));
    if (plan.chunks) {
      std::promise<RunResult> done;
      try {
        done.set_value(run(inputs, options));
      } catch (...) {
        done.set_exception(std::current_exception());
      }
      return done.get_future();
    }
    return specializations_[plan.program]->run_async(std::move(inputs), options);
  }
  // The request owns its inputs and outputs until it ends.
  struct Request {
    std::vector<NDArray> inputs;
    RunResult result;
    std::promise<RunResult> promise;
  };
  auto request = std::make_shared<Request>();
  request->inputs = std::move(inputs);
  std::vector<TensorView> views = input_views(manifest_, request->inputs);
  std::vector<MutableTensorView> outputs = output_views(manifest_, request->result.outputs);
  auto [input_pointers, output_pointers] = checked_buffers(views, outputs);
  std::future<RunResult> future = request->promise.get_future();
  execute_async(input_pointers, output_pointers, options, [request](RunStats stats, std::exception_ptr error) {
    request->inputs.clear();
    if (error) return request->promise.set_exception(error);
    request->result.stats = std::move(stats);
    request->promise.set_value(std::move(request->result));
  });
  return future;
}

std::future<RunResult> Artifact::run_async(const std::map<std::string, NDArray>& inputs,
                                           const RunOptions& options) const {
  return run_async(ordered_inputs(manifest_, inputs), options);
}

std::future<RunStats> Artifact::run_buffers_async(const std::vector<TensorView>& inputs,
                                                  const std::vector<MutableTensorView>& outputs,
                                                  const RunOptions& options) const {
  if (specialized_ && inputs.size() == manifest_.inputs.size()) {
    RunPlan plan = run_plan(shapes_of(inputs));
    if (plan.chunks) {
      std::promise<RunStats> done;
      try {
        done.set_value(run_buffers(inputs, outputs, options));
      } catch (...) {
        done.set_exception(std::current_exception());
      }
      return done.get_future();
    }
    return specializations_[plan.program]->run_buffers_async(inputs, outputs, options);
  }
  auto [input_pointers, output_pointers] = checked_buffers(inputs, outputs);
  auto promise = std::make_shared<std::promise<RunStats>>();
  std::future<RunStats> future = promise->get_future();
  execute_async(input_pointers, output_pointers, options, [promise](RunStats stats, std::exception_ptr error) {
    if (error) return promise->set_exception(error);
    promise->set_value(std::move(stats));
  });
  return future;
}

}  // namespace switchyard
