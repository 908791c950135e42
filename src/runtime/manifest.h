// The artifact manifest (manifest.json): what model.so expects and what the
// runtime must provide. The compiler writes it, the runtime reads it; the
// schema is documented in docs/artifact.md.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <optional>
#include <vector>

#include "runtime/dtype.h"
#include "runtime/primitive_spec.h"

namespace switchyard {

// The manifest format this runtime reads and writes; older ones are read too.
// 2: weights.bin's checksum is XXH3-128 (it was SHA-256 in 1).
// 3: a primitive's constant weights may be stored prepared (ManifestWeight::prepared).
// 4: a primitive's activations may be channels last (PrimitiveTensor::format "nhwc").
// 5: a convolution may fuse a depthwise one (post-op "depthwise", ManifestKernel::depthwise_weights).
// 6: a kernel may name the operators it computes (ManifestKernel::operators), for `switchyard inspect`.
// 7: an artifact may be specialised: its manifest.json lists the programs compiled for values of
//    its symbolic dimensions, each an artifact in its own directory (runtime/specialized_manifest.h).
// 8: a specialised artifact's manifest says how runs chunk each symbolic dimension (`chunking`).
// 9: a build planned by --objective latency records its prediction (Manifest::prediction).
constexpr int kArtifactFormatVersion = 9;
// Every weight's offset in weights.bin is a multiple of this.
constexpr uint64_t kWeightAlignment = 64;
// Bounds no real build comes near (ResNet-50's manifest is 70 KB with 57
// kernels and 108 weights), so a manifest beyond one is corrupt and refused before
// anything is allocated or started from it.
constexpr uint64_t kMaxManifestBytes = uint64_t(256) << 20;  // of manifest.json
constexpr size_t kMaxManifestDevices = 256;
// Of each list: inputs, outputs, weights, arenas, kernels, primitives, copies.
constexpr size_t kMaxManifestEntries = size_t(1) << 20;

struct ManifestDevice;
// Gives each named device its core set (`--cores`, LoadOptions::cores) and,
// where the manifest gave it no other threads (none, or as many as its old
// core set), as many threads as cores. Throws RuntimeError naming a device
// the manifest lacks, a device kind without cores, or a core in two sets.
void apply_device_cores(std::vector<ManifestDevice>& devices, const std::map<std::string, std::vector<int>>& cores);

struct ManifestDevice {
  std::string name;  // kind + ":" + id, e.g. "cpu:1"
  std::string kind;  // "cpu"
  int id = 0;
  std::string target;  // the compilation target, e.g. "cpu"
  int threads = 0;     // this device's own share of cores; 0 (omitted) shares the runtime's pool
  // A CPU device's cores (runtime/core_set.h), ascending: its queue's worker
  // and OpenMP team run only there. Empty (omitted): wherever the process may.
  std::vector<int> cores;
  // The instruction-set extensions its generated code was compiled for
  // (runtime/cpu_feature_names.h); the runtime refuses a CPU that lacks one.
  std::vector<std::string> cpu_features;
  // A cuda device's: the compute capability (major * 10 + minor) its
  // kernels' cubins were compiled for; the runtime refuses a GPU below it.
  // 0 (omitted) for other kinds.
  int compute_capability = 0;
};

// A model input or output.
struct ManifestTensor {
  std::string name;
  DType dtype = DType::kFloat32;
  std::vector<int64_t> shape;
  int device = 0;    // index into Manifest::devices
  std::string span;  // where it came from in the model ("file:line:column", node name), may be empty
};

struct ManifestWeight {
  std::string name;
  DType dtype = DType::kFloat32;
  std::vector<int64_t> shape;
  int device = 0;
  uint64_t offset = 0;  // in weights.bin, a multiple of kWeightAlignment
  uint64_t nbytes = 0;  // numel(shape) * dtype_bytes(dtype), or the prepared layout's bytes
  // Empty for plain row-major bytes; else the layout the primitives reading
  // them take (DnnlPrimitive::prepared_weights_layout), written by the
  // compiler so that a load reads them where they lie.
  std::string prepared;
};

// The memory scope of host buffers that copies move to and from a GPU:
// their arenas are page-locked (runtime/cuda_device.h's PinnedHostMemory).
inline constexpr const char* kPinnedScope = "pinned";

// One statically planned workspace of a device and memory scope.
struct ManifestArena {
  int device = 0;
  std::string scope = "global";
  uint64_t bytes = 0;
  uint64_t lower_bound_bytes = 0;  // the memory planner's lower bound, for reports; <= bytes
};

struct ManifestKernel {
  std::string name;
  int device = 0;
  std::string span;
  std::string kind;  // how it was generated: "loops", "dnnl" or "cuda_library"
  // The operators of the function it was generated from, in evaluation
  // order ("nn.conv2d -> nn.bias_add -> nn.relu"), for reports; a
  // depthwise convolution fused into its primitive is that primitive's
  // post-op. Empty (omitted) before format 6.
  std::string operators;
  int primitive = -1;  // the oneDNN primitive it runs (index into Manifest::primitives), if any
  // The weight the primitive reads as its weights argument, reordered into
  // the primitive's layout once at load time; -1 when they are computed.
  int weights = -1;
  // The weight a fused depthwise convolution (its primitive's depthwise
  // post-op) reads, reordered once at load time; -1 when they are computed.
  int depthwise_weights = -1;
  // A kernel compiled to a device image (a cuda kernel's cubin): the file,
  // relative to the artifact, its sha256, the functions the entry launches
  // (SyRuntimeServices::launch_kernel's `function` indexes them) and whether
  // they report faults through a word after their buffers. Empty for a
  // kernel built into model.so.
  std::string image;
  std::string image_sha256;
  std::vector<std::string> functions;
  bool may_fault = false;
};

struct ManifestCopy {
  int src_device = 0;
  int dst_device = 0;
  uint64_t bytes = 0;
  std::string span;
};

struct ManifestHashes {
  std::string model_so;     // sha256 of model.so, 64 lowercase hex digits
  std::string weights_bin;  // weights.bin's checksum, in weights_checksum(format_version)
};

// The checksum of weights.bin in an artifact of `format_version`: XXH3-128
// (32 hex digits) from version 2, SHA-256 (64) before.
struct WeightsChecksum {
  const char* name;  // "xxh128" or "sha256", as errors spell it
  size_t hex_digits;
};
WeightsChecksum weights_checksum(int format_version);
// That checksum of `bytes`, as lowercase hex.
std::string weights_checksum_hex(int format_version, const void* data, size_t bytes);

// What --objective latency predicted for this build, so that `inspect` can
// show it and `run --profile` can set each device's measured time beside it.
struct ManifestPredictedDevice {
  std::string device;  // a name in Manifest::devices
  double compute_ms = 0;
  double copies_ms = 0;  // copies into it
};
struct ManifestPrediction {
  double run_ms = 0;  // one run, the run overhead included
  std::vector<ManifestPredictedDevice> devices;
  std::vector<std::string> critical_path;  // first to last: "nn.dense (model.sy:6:8)"
  std::string choice;  // the candidates' times, what was chosen and how the split was found
};

struct Manifest {
  int format_version = kArtifactFormatVersion;
  int abi_version = 0;  // SY_MODEL_ABI_VERSION of model.so
  std::string switchyard_version;
  std::string entry;  // the compiled IR function, e.g. "main"
  std::vector<ManifestDevice> devices;
  std::vector<ManifestTensor> inputs;
  std::vector<ManifestTensor> outputs;
  std::vector<ManifestWeight> weights;
  std::vector<ManifestArena> arenas;
  std::vector<ManifestKernel> kernels;
  std::vector<PrimitiveSpec> primitives;  // made once when the artifact loads
  std::vector<ManifestCopy> copies;
  std::optional<ManifestPrediction> prediction;  // format 9; absent unless planned by latency
  ManifestHashes hashes;
};

// Parses and validates manifest JSON. `source` names the text in messages,
// which then name the field: "dir/manifest.json: inputs[0].dtype: ...".
// Throws RuntimeError.
Manifest parse_manifest(std::string_view json_text, const std::string& source = "manifest.json");
// The cross-field rules (device indices in range, unique names, the weights
// layout); parse_manifest applies them. Throws RuntimeError.
void validate_manifest(const Manifest& manifest, const std::string& source = "manifest.json");
// Pretty-printed JSON of a valid manifest (validated first).
std::string format_manifest(const Manifest& manifest);

Manifest read_manifest_file(const std::string& path);
void write_manifest_file(const Manifest& manifest, const std::string& path);

// Bytes of a dense tensor; throws RuntimeError on a negative dimension or overflow.
uint64_t tensor_nbytes(DType dtype, const std::vector<int64_t>& shape);

// The part of weights.bin one device loads: [begin, end) spans its weights.
// A device with no weights has an empty block.
struct WeightBlock {
  uint64_t begin = 0;
  uint64_t end = 0;
  bool empty() const { return end == begin; }
};
// One block per device, by device index.
std::vector<WeightBlock> weight_blocks(const Manifest& manifest);
// Where weight `weight_index` lies in its device's block: generated code reads
// it at SyRunArgs::weights[device] + this offset.
uint64_t weight_offset_in_block(const Manifest& manifest, int weight_index);

// For writers: sets every plain weight's nbytes (a prepared one keeps its
// own) and every offset, so weights are grouped by device (ascending
// index), in list order within a device, each aligned to kWeightAlignment. Returns the size weights.bin must have.
uint64_t layout_weights(std::vector<ManifestWeight>& weights, int num_devices);

}  // namespace switchyard
