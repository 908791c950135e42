// A loaded artifact (model.so + weights.bin + manifest.json) and its runs.
//
// load() checks the manifest, the hashes and the ABI version, loads each
// device's weights once, and prepares one workspace. run() is const and safe
// from many threads at once: each run takes its own workspace (one buffer per
// manifest arena) from a pool, so concurrent runs never share scratch memory.
// run_async() starts a run and returns a future: requests in flight each
// have a workspace of their own, and a model whose device queues run at
// once pipelines them (each queue takes request k+1's steps right after
// request k's).
#pragma once

#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runtime/chunked_run.h"
#include "runtime/device.h"
#include "runtime/manifest.h"
#include "runtime/ndarray.h"
#include "runtime/specialized_manifest.h"

namespace switchyard {

class MappedFile;

// The largest model.so (and device image) loaded unless LoadOptions says
// otherwise: far beyond any generated one, so a corrupt or sparse file is
// refused before it is hashed, not after seconds of hashing.
constexpr uint64_t kDefaultMaxModelBytes = uint64_t(1) << 30;

struct LoadOptions {
  // Threads of the pool shared by CPU devices without their own "threads";
  // 0 means default_thread_count().
  int threads = 0;
  // The largest model.so and device image load() reads and hashes
  // (`switchyard run --max-model-bytes`, load(..., max_model_bytes=) in Python).
  uint64_t max_model_bytes = kDefaultMaxModelBytes;
  // Core sets by device name ("cpu:1" -> {2, 3}) in place of the manifest's
  // devices[].cores (`switchyard run --cores cpu:1=2-3`): where the device's
  // queue worker and its OpenMP team run (runtime/core_set.h).
  std::map<std::string, std::vector<int>> cores;
  // The most run_async requests in flight at once (each holds a workspace);
  // run_async waits for one to end before starting one more. 0: twice the
  // number of device queues, and at least 2.
  int max_in_flight = 0;
};

struct RunOptions {
  // Records RunStats (kernel and copy timings); off saves two clock reads per
  // kernel and copy. Placement checks run either way.
  bool record_stats = true;
  // Runs every step in program order on the calling thread (sy_model_run)
  // even where the model's device queues could run at once, each on its
  // worker: the reference those runs match bit for bit.
  bool in_order = false;
};

struct KernelRecord {
  int index = 0;  // into Manifest::kernels
  std::string name;
  int device = 0;  // where it ran (the manifest's device index)
  int64_t elapsed_ns = 0;
};

struct CopyRecord {
  int index = 0;  // into Manifest::copies
  int src_device = 0;
  int dst_device = 0;
  uint64_t bytes = 0;
  int64_t elapsed_ns = 0;
};

struct RunStats {
  // In execution order; where device queues ran at once, queue by queue.
  std::vector<KernelRecord> kernels;
  std::vector<CopyRecord> copies;
  int64_t total_ns = 0;               // the whole sy_model_run call
};

struct RunResult {
  std::vector<NDArray> outputs;  // in manifest order
  RunStats stats;
};

// A host buffer handed to run_buffers without copying: `data` needs only its
// element type's alignment.
struct TensorView {
  const void* data = nullptr;
  DType dtype = DType::kFloat32;
  std::vector<int64_t> shape;
};
struct MutableTensorView {
  void* data = nullptr;
  DType dtype = DType::kFloat32;
  std::vector<int64_t> shape;
};

class Artifact {
 public:
  // Loads the artifact directory `dir`. Throws RuntimeError naming the file
  // (or field) at fault. A specialised artifact (runtime/specialized_manifest.h)
  // loads every program it holds; each run picks the one its inputs' shapes fit.
  static std::shared_ptr<Artifact> load(const std::string& dir, const LoadOptions& options = {});
  ~Artifact();
  Artifact(const Artifact&) = delete;
  Artifact& operator=(const Artifact&) = delete;

  // A specialised artifact's is its first program's with each symbolic
  // dimension of an input or output -1.
  const Manifest& manifest() const { return manifest_; }
  // Null unless the artifact is specialised.
  const SpecializedManifest* specialized_manifest() const { return specialized_.get(); }
  // The program that runs inputs of these shapes (manifest order): this
  // artifact itself unless it is specialised. Throws RuntimeError naming the
  // input, dimension and value no specialisation takes.
  const Artifact& program_for(const std::vector<std::vector<int64_t>>& input_shapes) const;
  // The shapes of a run's outputs (manifest order) for inputs of these
  // shapes: the program's that takes them, or for a specialised artifact
  // running them in chunks (runtime/chunked_run.h) the whole run's. Throws
  // as program_for when neither takes them.
  std::vector<std::vector<int64_t>> output_shapes_for(const std::vector<std::vector<int64_t>>& input_shapes) const;
  // Whether a run on inputs of these shapes goes in chunks (no program takes
  // them as they are, and chunks of compiled values do). Throws as
  // program_for when neither takes them.
  bool runs_in_chunks(const std::vector<std::vector<int64_t>>& input_shapes) const;
  int num_specializations() const { return int(specializations_.size()); }
  const Artifact& specialization(int index) const { return *specializations_.at(size_t(index)); }
  const std::string& directory() const { return directory_; }
  int num_devices() const { return int(devices_.size()); }
  Device& device(int index) const { return *devices_.at(size_t(index)); }
  // The device queues that run at once, each on its own worker (the model's
  // schedule); 0 when every run goes in program order on the caller's thread.
  int num_queues() const;

  // Runs on inputs in manifest order. Throws RuntimeError naming the input
  // whose count, dtype or shape is wrong, or the kernel/copy that broke the
  // plan.
  RunResult run(const std::vector<NDArray>& inputs, const RunOptions& options = {}) const;
  // Runs on inputs by name; every input must be given, and nothing else.
  RunResult run(const std::map<std::string, NDArray>& inputs, const RunOptions& options = {}) const;
  // Runs on caller-owned host buffers (the C API's path): outputs are written
  // in place. Validated like run().
  RunStats run_buffers(const std::vector<TensorView>& inputs, const std::vector<MutableTensorView>& outputs,
                       const RunOptions& options = {}) const;

  // Starts a run and returns at once with its future: its outputs, or the
  // run's RuntimeError (the error of one request never touches another).
  // Inputs are checked as run() checks them, and a bad one throws here.
  // Where the model's device queues run at once, consecutive requests
  // pipeline: each queue's worker runs its steps of request k, then of
  // request k+1, so stage 1 of k+1 runs while stage 2 of k does; otherwise
  // requests run one after another, in order, on a worker of their own
  // (also with RunOptions::in_order). With max_in_flight() requests in
  // flight, it first waits for one to end. Destroying the artifact waits
  // for every request in flight to end (each future gets its result).
  std::future<RunResult> run_async(std::vector<NDArray> inputs, const RunOptions& options = {}) const;
  std::future<RunResult> run_async(const std::map<std::string, NDArray>& inputs, const RunOptions& options = {}) const;
  // On caller-owned host buffers (the C API's path), which must stay valid,
  // and the outputs unread, until the future is ready.
  std::future<RunStats> run_buffers_async(const std::vector<TensorView>& inputs,
                                          const std::vector<MutableTensorView>& outputs,
                                          const RunOptions& options = {}) const;
  int max_in_flight() const;

 private:
  class Impl;  // the loaded library, weights and workspace pool
  struct PendingRun;  // one run from its start to its end
  using RunEnd = std::function<void(RunStats stats, std::exception_ptr error)>;
  Artifact() = default;
  // `shared_mapping`, when given, holds weights_path mapped by an earlier
  // program (else it is mapped and put there). A specialised artifact's
  // programs make their first workspace (arenas) at their first run, not at
  // load: a process pays only for the programs its runs use.
  static std::shared_ptr<Artifact> load_program(const std::string& dir, const std::string& weights_path,
                                                const LoadOptions& options,
                                                std::shared_ptr<const MappedFile>* shared_mapping = nullptr,
                                                bool workspace_at_load = true);
  static std::shared_ptr<Artifact> load_specialized(const std::string& dir, SpecializedManifest specialized,
                                                    const LoadOptions& options);
  // DIR/weights.bin, or for one program of a specialised artifact whose
  // weights are stored once at the top (ART/n=8), ART/weights.bin.
  static std::string program_weights_path(const std::string& dir);
  static void make_devices(Artifact& artifact, const std::vector<ManifestDevice>& devices,
                           const std::string& manifest_path, int threads);
  static void open_model_library(Impl& impl, const Manifest& manifest, const std::string& manifest_path,
                                 const std::string& model_path);
  static void place_weight_blocks(Artifact& artifact);
  static void make_pinned_memories(Artifact& artifact);
  static void make_primitives(Artifact& artifact, const std::string& manifest_path);
  static void load_device_images(Artifact& artifact, const std::string& manifest_path, uint64_t max_image_bytes);
  // How a specialised artifact runs inputs of these shapes: one program, or
  // in chunks (plan_run).
  RunPlan run_plan(const std::vector<std::vector<int64_t>>& input_shapes) const;
  std::vector<std::vector<int64_t>> chunked_output_shapes(const ChunkPlan& plan) const;
  // One run of each step's program on its slice of the inputs, writing its slice of the outputs.
  RunStats run_in_chunks(const ChunkPlan& plan, const std::vector<TensorView>& inputs,
                         const std::vector<MutableTensorView>& outputs, const RunOptions& options) const;
  // Checks the buffers against the manifest; their pointers, inputs then outputs.
  std::pair<std::vector<const void*>, std::vector<void*>> checked_buffers(
      const std::vector<TensorView>& inputs, const std::vector<MutableTensorView>& outputs) const;
  RunStats execute(const std::vector<const void*>& host_inputs, const std::vector<void*>& host_outputs,
                   const RunOptions& options) const;
  std::unique_ptr<PendingRun> start_run(const std::vector<const void*>& host_inputs,
                                        const std::vector<void*>& host_outputs, const RunOptions& options) const;
  RunStats end_run(PendingRun& run) const;
  // Starts a run on its worker(s); `done` is called once, on a worker, when it ended.
  void execute_async(const std::vector<const void*>& host_inputs, const std::vector<void*>& host_outputs,
                     const RunOptions& options, RunEnd done) const;
  void complete_async(PendingRun& run) const;

  std::string directory_;
  Manifest manifest_;
  std::vector<std::unique_ptr<Device>> devices_;
  std::unique_ptr<Impl> impl_;
  // A specialised artifact's manifest and programs (impl_ is then null).
  std::unique_ptr<SpecializedManifest> specialized_;
  std::vector<std::shared_ptr<Artifact>> specializations_;
  std::vector<std::vector<std::vector<int64_t>>> program_inputs_;  // each program's input shapes
};

}  // namespace switchyard
