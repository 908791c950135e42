// Manifest JSON reading (strict: every field typed and present, unknown
// fields rejected, each error naming its JSON path) and writing.
#include "runtime/manifest.h"

#include "runtime/core_set.h"

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "runtime/clipped_text.h"
#include "runtime/file_write.h"
#include "runtime/json_fields.h"
#include "runtime/manifest_json.h"
#include "runtime/ndarray.h"
#include "runtime/primitive_json.h"
#include "runtime/regular_file.h"
#include "runtime/runtime_error.h"
#include "runtime/sha256.h"
#include "runtime/thread_pool.h"
#include "runtime/xxh128.h"
#include "runtime/cpu_feature_names.h"

namespace switchyard {
namespace {

using namespace json_fields;

ManifestTensor read_tensor(ObjectReader& r) {
  ManifestTensor t;
  t.name = r.nonempty_string("name");
  t.dtype = r.dtype("dtype");
  t.shape = r.shape("shape");
  t.device = r.device_index("device");
  t.span = r.string("span");
  return t;
}

std::string read_hash(ObjectReader& r, const char* key, WeightsChecksum kind = {"sha256", 64}) {
  std::string hex = r.string(key);
  bool valid = hex.size() == kind.hex_digits &&
               std::all_of(hex.begin(), hex.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
  if (!valid)
    fail(r.source(), r.path(key),
         "expected " + std::to_string(kind.hex_digits) + " lowercase hex digits (" + kind.name + "), got '" + hex + "'");
  return hex;
}

// An index into another of the manifest's lists, or -1 where the field is absent.
int optional_index(ObjectReader& r, const char* key) {
  const json* value = r.optional(key);
  return value ? int(r.read_integer(*value, r.path(key), 0, std::numeric_limits<int>::max())) : -1;
}

ManifestPrediction read_prediction(ObjectReader&& r) {
  ManifestPrediction p;
  p.run_ms = r.nonnegative_number("run_ms");
  p.devices = read_list<ManifestPredictedDevice>(r, "devices", [](ObjectReader& d) {
    ManifestPredictedDevice device;
    device.device = d.nonempty_string("device");
    device.compute_ms = d.nonnegative_number("compute_ms");
    device.copies_ms = d.nonnegative_number("copies_ms");
    return device;
  });
  const json& path = r.array("critical_path");
  for (size_t i = 0; i < path.size(); ++i) {
    if (!path[i].is_string()) fail(r.source(), element_path(r.path("critical_path"), i), "expected a string, got " + describe(path[i]));
    p.critical_path.push_back(path[i].get<std::string>());
  }
  p.choice = r.string("choice");
  r.finish();
  return p;
}

Manifest read_manifest_json(const json& root, const std::string& source) {
  ObjectReader r(root, "", source);
  Manifest m;
  // The version first: a newer format may differ in any other field.
  m.format_version = int(r.integer("format_version", 1, std::numeric_limits<int>::max()));
  if (m.format_version > kArtifactFormatVersion)
    fail(source, "",
         "artifact format version " + std::to_string(m.format_version) + " is newer than this runtime supports (" +
             std::to_string(kArtifactFormatVersion) + ")");
  m.abi_version = int(r.integer("abi_version", 1, std::numeric_limits<int>::max()));
  m.switchyard_version = r.string("switchyard_version");
  m.entry = r.nonempty_string("entry");
  m.devices = read_list<ManifestDevice>(r, "devices", [](ObjectReader& d) {
    ManifestDevice device;
    device.name = d.nonempty_string("name");
    device.kind = d.nonempty_string("kind");
    device.id = int(d.integer("id", 0, std::numeric_limits<int>::max()));
    device.target = d.nonempty_string("target");
    if (const json* threads = d.optional("threads"))
      device.threads = int(d.read_integer(*threads, d.path("threads"), 1, kMaxPoolThreads));
    if (d.optional("cores")) {
      const json& cores = d.array("cores");
      for (size_t c = 0; c < cores.size(); ++c)
        device.cores.push_back(int(d.read_integer(cores[c], element_path(d.path("cores"), c), 0, kMaxCore)));
    }
    if (d.optional("cpu_features")) {
      const json& features = d.array("cpu_features");
      for (size_t f = 0; f < features.size(); ++f) {
        std::string at = element_path(d.path("cpu_features"), f);
        if (!features[f].is_string()) fail(d.source(), at, "expected a string, got " + describe(features[f]));
        std::string name = features[f].get<std::string>();
        if (!is_known_cpu_feature(name)) fail(d.source(), at, "unknown CPU feature '" + name.substr(0, 40) + "'");
        device.cpu_features.push_back(name);
      }
    }
    if (const json* capability = d.optional("compute_capability"))
      device.compute_capability = int(d.read_integer(*capability, d.path("compute_capability"), 10, 1000));
    return device;
  });
  m.inputs = read_list<ManifestTensor>(r, "inputs", read_tensor);
  m.outputs = read_list<ManifestTensor>(r, "outputs", read_tensor);
  m.weights = read_list<ManifestWeight>(r, "weights", [](ObjectReader& w) {
    ManifestWeight weight;
    weight.name = w.nonempty_string("name");
    weight.dtype = w.dtype("dtype");
    weight.shape = w.shape("shape");
    weight.device = w.device_index("device");
    weight.offset = w.byte_count("offset");
    weight.nbytes = w.byte_count("nbytes");
    if (w.optional("prepared")) weight.prepared = w.nonempty_string("prepared");
    return weight;
  });
  m.arenas = read_list<ManifestArena>(r, "arenas", [](ObjectReader& a) {
    ManifestArena arena;
    arena.device = a.device_index("device");
    arena.scope = a.nonempty_string("scope");
    arena.bytes = a.byte_count("bytes");
    arena.lower_bound_bytes = a.byte_count("lower_bound_bytes");
    return arena;
  });
  m.kernels = read_list<ManifestKernel>(r, "kernels", [](ObjectReader& k) {
    ManifestKernel kernel;
    kernel.name = k.nonempty_string("name");
    kernel.device = k.device_index("device");
    kernel.span = k.string("span");
    kernel.kind = k.nonempty_string("kind");
    if (k.optional("operators")) kernel.operators = k.string("operators");
    kernel.primitive = optional_index(k, "primitive");
    kernel.weights = optional_index(k, "weights");
    kernel.depthwise_weights = optional_index(k, "depthwise_weights");
    if (k.optional("image")) {
      kernel.image = k.nonempty_string("image");
      kernel.image_sha256 = read_hash(k, "image_sha256");
      const json& functions = k.array("functions");
      for (size_t f = 0; f < functions.size(); ++f) {
        std::string at = element_path(k.path("functions"), f);
        if (!functions[f].is_string() || functions[f].get<std::string>().empty())
          fail(k.source(), at, "expected a function name, got " + describe(functions[f]));
        kernel.functions.push_back(functions[f].get<std::string>());
      }
      kernel.may_fault = k.boolean("may_fault");
    }
    return kernel;
  });
  if (r.optional("primitives")) m.primitives = read_list<PrimitiveSpec>(r, "primitives", read_primitive_spec);
  m.copies = read_list<ManifestCopy>(r, "copies", [](ObjectReader& c) {
    ManifestCopy copy;
    copy.src_device = c.device_index("src_device");
    copy.dst_device = c.device_index("dst_device");
    copy.bytes = c.byte_count("bytes");
    copy.span = c.string("span");
    return copy;
  });
  if (const json* prediction = r.optional("prediction")) {
    m.prediction = read_prediction(ObjectReader(*prediction, r.path("prediction"), source));
  }
  ObjectReader hashes(r.required("hashes"), r.path("hashes"), source);
  m.hashes.model_so = read_hash(hashes, "model.so");
  m.hashes.weights_bin = read_hash(hashes, "weights.bin", weights_checksum(m.format_version));
  hashes.finish();
  r.finish();
  return m;
}

void check_device_index(const Manifest& m, int device, const std::string& source, const std::string& path) {
  if (device < 0 || size_t(device) >= m.devices.size())
    fail(source, path,
         "device index " + std::to_string(device) + " out of range (" + std::to_string(m.devices.size()) + " devices)");
}

void check_tensors(const Manifest& m, const std::vector<ManifestTensor>& tensors, const char* list,
                   const std::string& source) {
  std::set<std::string> names;
  for (size_t i = 0; i < tensors.size(); ++i) {
    std::string path = element_path(list, i);
    const ManifestTensor& t = tensors[i];
    if (t.name.empty()) fail(source, member_path(path, "name"), "must not be empty");
    if (!names.insert(t.name).second) fail(source, member_path(path, "name"), "duplicate name '" + t.name + "'");
    check_device_index(m, t.device, source, member_path(path, "device"));
    try {
      tensor_nbytes(t.dtype, t.shape);
    } catch (const RuntimeError& e) {
      fail(source, member_path(path, "shape"), e.what());
    }
  }
}

void check_weights(const Manifest& m, const std::string& source) {
  std::set<std::string> names;
  std::vector<size_t> order;
  for (size_t i = 0; i < m.weights.size(); ++i) {
    std::string path = element_path("weights", i);
    const ManifestWeight& w = m.weights[i];
    if (w.name.empty()) fail(source, member_path(path, "name"), "must not be empty");
    if (!names.insert(w.name).second) fail(source, member_path(path, "name"), "duplicate name '" + w.name + "'");
    check_device_index(m, w.device, source, member_path(path, "device"));
    uint64_t expected = 0;
    try {
      expected = tensor_nbytes(w.dtype, w.shape);
    } catch (const RuntimeError& e) {
      fail(source, member_path(path, "shape"), e.what());
    }
    if (w.prepared.empty() && w.nbytes != expected)
      fail(source, member_path(path, "nbytes"),
           std::to_string(w.nbytes) + " does not match " + dtype_name(w.dtype) + " " + shape_to_string(w.shape) + " (" +
               std::to_string(expected) + " bytes)");
    if (w.offset % kWeightAlignment != 0)
      fail(source, member_path(path, "offset"),
           std::to_string(w.offset) + " is not a multiple of " + std::to_string(kWeightAlignment));
    if (w.offset > std::numeric_limits<uint64_t>::max() / 2 || w.nbytes > std::numeric_limits<uint64_t>::max() / 2)
      fail(source, member_path(path, "offset"), "out of range");
    order.push_back(i);
  }
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return m.weights[a].offset < m.weights[b].offset; });
  for (size_t k = 1; k < order.size(); ++k) {
    const ManifestWeight& before = m.weights[order[k - 1]];
    const ManifestWeight& after = m.weights[order[k]];
    if (after.offset < before.offset + before.nbytes)
      fail(source, element_path("weights", order[k]),
           "'" + after.name + "' overlaps '" + before.name + "' in weights.bin");
  }
  // Each device loads one contiguous block, so blocks must not interleave.
  std::vector<WeightBlock> blocks = weight_blocks(m);
  for (size_t a = 0; a < blocks.size(); ++a)
    for (size_t b = a + 1; b < blocks.size(); ++b)
      if (!blocks[a].empty() && !blocks[b].empty() && blocks[a].begin < blocks[b].end &&
          blocks[b].begin < blocks[a].end)
        fail(source, "weights",
             "the weights of " + m.devices[a].name + " and " + m.devices[b].name +
                 " interleave in weights.bin; each device's weights must be contiguous");
}

// A kernel's depthwise_weights: the plain float32 weights, on its device,
// of its primitive's depthwise post-op.
void check_depthwise_weights(const Manifest& m, const ManifestKernel& k, const std::string& source,
                             const std::string& path) {
  if (k.depthwise_weights >= int(m.weights.size()))
    fail(source, path,
         std::to_string(k.depthwise_weights) + " out of range (" + std::to_string(m.weights.size()) + " weights)");
  if (k.primitive < 0) fail(source, path, "names weights but the kernel runs no primitive");
  const PrimitivePostOp* depthwise = nullptr;
  for (const PrimitivePostOp& post : m.primitives[size_t(k.primitive)].post_ops)
    if (post.kind == PrimitivePostOp::Kind::kDepthwise) depthwise = &post;
  if (!depthwise) fail(source, path, "primitive " + std::to_string(k.primitive) + " fuses no depthwise convolution");
  const ManifestWeight& w = m.weights[size_t(k.depthwise_weights)];
  int64_t numel = 1;
  for (int64_t d : depthwise->operand.dims) numel *= d;
  if (w.dtype != DType::kFloat32 || w.device != k.device || !w.prepared.empty() ||
      w.nbytes != uint64_t(numel) * sizeof(float))
    fail(source, path,
         "weight '" + w.name + "' (" + dtype_name(w.dtype) + " " + shape_to_string(w.shape) + " on " +
             m.devices[size_t(w.device)].name + ") is not the plain float32 depthwise weights of primitive " +
             std::to_string(k.primitive) + " on this kernel's device");
}

ordered_json tensor_json(const ManifestTensor& t) {
  return ordered_json{
      {"name", t.name}, {"dtype", dtype_name(t.dtype)}, {"shape", t.shape}, {"device", t.device}, {"span", t.span}};
}

// JSON holds only UTF-8, and a name or span may come from a model file
// holding any bytes (an ONNX node's name): each string is made valid
// (clipped_text.h), so writing the manifest never fails on one.
void make_strings_valid_utf8(ordered_json& value) {
  if (value.is_string()) {
    const std::string& text = value.get_ref<const std::string&>();
    if (!is_valid_utf8(text)) value = valid_utf8(text);
    return;
  }
  if (value.is_structured())
    for (ordered_json& element : value) make_strings_valid_utf8(element);
}

}  // namespace

WeightsChecksum weights_checksum(int format_version) {
  return format_version >= 2 ? WeightsChecksum{"xxh128", 32} : WeightsChecksum{"sha256", 64};
}

std::string weights_checksum_hex(int format_version, const void* data, size_t bytes) {
  return format_version >= 2 ? xxh128_hex(data, bytes) : sha256_hex(data, bytes);
}

ordered_json manifest_json(const Manifest& m) {
  ordered_json root;
  root["format_version"] = m.format_version;
  root["abi_version"] = m.abi_version;
  root["switchyard_version"] = m.switchyard_version;
  root["entry"] = m.entry;
  root["devices"] = ordered_json::array();
  for (const ManifestDevice& d : m.devices) {
    ordered_json device{{"name", d.name}, {"kind", d.kind}, {"id", d.id}, {"target", d.target}};
    if (d.threads > 0) device["threads"] = d.threads;
    if (!d.cores.empty()) device["cores"] = d.cores;
    if (!d.cpu_features.empty()) device["cpu_features"] = d.cpu_features;
    if (d.compute_capability > 0) device["compute_capability"] = d.compute_capability;
    root["devices"].push_back(device);
  }
  root["inputs"] = ordered_json::array();
  for (const ManifestTensor& t : m.inputs) root["inputs"].push_back(tensor_json(t));
  root["outputs"] = ordered_json::array();
  for (const ManifestTensor& t : m.outputs) root["outputs"].push_back(tensor_json(t));
  root["weights"] = ordered_json::array();
  for (const ManifestWeight& w : m.weights) {
    ordered_json weight{{"name", w.name},        {"dtype", dtype_name(w.dtype)}, {"shape", w.shape},
                        {"device", w.device},    {"offset", w.offset},           {"nbytes", w.nbytes}};
    if (!w.prepared.empty()) weight["prepared"] = w.prepared;
    root["weights"].push_back(weight);
  }
  root["arenas"] = ordered_json::array();
  for (const ManifestArena& a : m.arenas)
    root["arenas"].push_back(ordered_json{
        {"device", a.device}, {"scope", a.scope}, {"bytes", a.bytes}, {"lower_bound_bytes", a.lower_bound_bytes}});
  root["kernels"] = ordered_json::array();
  for (const ManifestKernel& k : m.kernels) {
    ordered_json kernel{{"name", k.name}, {"device", k.device}, {"span", k.span}, {"kind", k.kind}};
    if (!k.operators.empty()) kernel["operators"] = k.operators;
    if (k.primitive >= 0) kernel["primitive"] = k.primitive;
    if (k.weights >= 0) kernel["weights"] = k.weights;
    if (k.depthwise_weights >= 0) kernel["depthwise_weights"] = k.depthwise_weights;
    if (!k.image.empty()) {
      kernel["image"] = k.image;
      kernel["image_sha256"] = k.image_sha256;
      kernel["functions"] = k.functions;
      kernel["may_fault"] = k.may_fault;
    }
    root["kernels"].push_back(kernel);
  }
  if (!m.primitives.empty()) {
    root["primitives"] = ordered_json::array();
    for (const PrimitiveSpec& p : m.primitives) root["primitives"].push_back(primitive_spec_json(p));
  }
  root["copies"] = ordered_json::array();
  for (const ManifestCopy& c : m.copies)
    root["copies"].push_back(
        ordered_json{{"src_device", c.src_device}, {"dst_device", c.dst_device}, {"bytes", c.bytes}, {"span", c.span}});
  if (m.prediction) {
    ordered_json devices = ordered_json::array();
    for (const ManifestPredictedDevice& d : m.prediction->devices)
      devices.push_back(ordered_json{{"device", d.device}, {"compute_ms", d.compute_ms}, {"copies_ms", d.copies_ms}});
    root["prediction"] = ordered_json{{"run_ms", m.prediction->run_ms},
                                      {"devices", devices},
                                      {"critical_path", m.prediction->critical_path},
                                      {"choice", m.prediction->choice}};
  }
  root["hashes"] = ordered_json{{"model.so", m.hashes.model_so}, {"weights.bin", m.hashes.weights_bin}};
  make_strings_valid_utf8(root);
  return root;
}

uint64_t tensor_nbytes(DType dtype, const std::vector<int64_t>& shape) {
  uint64_t bytes = uint64_t(dtype_bytes(dtype));
  for (int64_t d : shape) {
    if (d < 0) throw RuntimeError("negative dimension " + std::to_string(d));
    if (d != 0 && bytes > uint64_t(std::numeric_limits<int64_t>::max()) / uint64_t(d))
      throw RuntimeError("tensor size overflows");
    bytes *= uint64_t(d);
  }
  return bytes;
}

namespace {

// The format and ABI versions, the entry, and the bounds on each list's length.
void check_versions_and_counts(const Manifest& m, const std::string& source) {
  if (m.format_version < 1) fail(source, "format_version", "must be at least 1");
  if (m.format_version > kArtifactFormatVersion)
    fail(source, "",
         "artifact format version " + std::to_string(m.format_version) + " is newer than this runtime supports (" +
             std::to_string(kArtifactFormatVersion) + ")");
  if (m.abi_version < 1) fail(source, "abi_version", "must be at least 1");
  if (m.entry.empty()) fail(source, "entry", "must not be empty");
  if (m.devices.empty()) fail(source, "devices", "an artifact needs at least one device");
  if (m.devices.size() > kMaxManifestDevices)
    fail(source, "devices",
         std::to_string(m.devices.size()) + " devices, more than an artifact may have (" +
             std::to_string(kMaxManifestDevices) + ")");
  for (const auto& [list, count] : {std::pair{"inputs", m.inputs.size()}, {"outputs", m.outputs.size()},
                                    {"weights", m.weights.size()}, {"arenas", m.arenas.size()},
                                    {"kernels", m.kernels.size()}, {"primitives", m.primitives.size()},
                                    {"copies", m.copies.size()}})
    if (count > kMaxManifestEntries)
      fail(source, list,
           std::to_string(count) + " entries, more than an artifact may have (" +
               std::to_string(kMaxManifestEntries) + ")");
}

void check_devices(const Manifest& m, const std::string& source) {
  // Each device with its own threads starts a pool, so the bound is on their sum.
  int own_threads = 0;
  std::set<std::string> device_names;
  for (size_t i = 0; i < m.devices.size(); ++i) {
    const ManifestDevice& d = m.devices[i];
    std::string path = element_path("devices", i);
    if (d.kind.empty()) fail(source, member_path(path, "kind"), "must not be empty");
    if (d.id < 0) fail(source, member_path(path, "id"), "must not be negative");
    if (d.target.empty()) fail(source, member_path(path, "target"), "must not be empty");
    if (d.compute_capability != 0 && d.kind != "cuda")
      fail(source, member_path(path, "compute_capability"), "only a cuda device has one, not a " + d.kind + " device");
    if (d.threads < 0) fail(source, member_path(path, "threads"), "must not be negative");
    if (d.threads > kMaxPoolThreads)
      fail(source, member_path(path, "threads"), "must be at most " + std::to_string(kMaxPoolThreads));
    own_threads += d.threads;
    if (own_threads > kMaxPoolThreads)
      fail(source, member_path(path, "threads"),
           "the devices' own threads add up to " + std::to_string(own_threads) + ", more than " +
               std::to_string(kMaxPoolThreads));
    std::string expected = d.kind + ":" + std::to_string(d.id);
    if (d.name != expected)
      fail(source, member_path(path, "name"), "'" + d.name + "' does not match kind and id ('" + expected + "')");
    if (!device_names.insert(d.name).second)
      fail(source, member_path(path, "name"), "duplicate device '" + d.name + "'");
    if (!d.cores.empty() && d.kind != "cpu")
      fail(source, member_path(path, "cores"), "only a cpu device has cores, not a " + d.kind + " device");
    if (!std::is_sorted(d.cores.begin(), d.cores.end()) ||
        std::adjacent_find(d.cores.begin(), d.cores.end()) != d.cores.end())
      fail(source, member_path(path, "cores"), "must ascend, each core once");
  }
  std::vector<std::pair<std::string, std::vector<int>>> core_sets;
  for (const ManifestDevice& d : m.devices) core_sets.emplace_back(d.name, d.cores);
  if (std::string why = overlapping_cores(core_sets); !why.empty()) fail(source, "devices", why);
}

void check_arenas(const Manifest& m, const std::string& source) {
  for (size_t i = 0; i < m.arenas.size(); ++i) {
    const ManifestArena& a = m.arenas[i];
    std::string path = element_path("arenas", i);
    check_device_index(m, a.device, source, member_path(path, "device"));
    if (a.scope.empty()) fail(source, member_path(path, "scope"), "must not be empty");
    if (a.lower_bound_bytes > a.bytes)
      fail(source, member_path(path, "lower_bound_bytes"),
           std::to_string(a.lower_bound_bytes) + " exceeds bytes (" + std::to_string(a.bytes) + ")");
  }
}

// One kernel: its device, its device image, and the primitive and weights it names.
void check_kernel(const Manifest& m, const ManifestKernel& k, const std::string& path, const std::string& source) {
  if (k.name.empty()) fail(source, member_path(path, "name"), "must not be empty");
  if (k.kind.empty()) fail(source, member_path(path, "kind"), "must not be empty");
  check_device_index(m, k.device, source, member_path(path, "device"));
  if (!k.image.empty()) {
    // A path inside the artifact: relative, without "..".
    bool inside = k.image[0] != '/' && k.image.find("..") == std::string::npos;
    if (!inside)
      fail(source, member_path(path, "image"), "must be a path inside the artifact, got '" + clipped_text(k.image) + "'");
    if (m.devices[size_t(k.device)].compute_capability == 0)
      fail(source, member_path(path, "image"),
           "a device image runs on a cuda device, but " + m.devices[size_t(k.device)].name +
               " records no compute_capability");
  }
  if (k.primitive >= int(m.primitives.size()))
    fail(source, member_path(path, "primitive"),
         std::to_string(k.primitive) + " out of range (" + std::to_string(m.primitives.size()) + " primitives)");
  if (k.weights >= int(m.weights.size()))
    fail(source, member_path(path, "weights"),
         std::to_string(k.weights) + " out of range (" + std::to_string(m.weights.size()) + " weights)");
  if (k.weights >= 0) {
    if (k.primitive < 0) fail(source, member_path(path, "weights"), "names weights but the kernel runs no primitive");
    const ManifestWeight& w = m.weights[size_t(k.weights)];
    const PrimitiveSpec& primitive = m.primitives[size_t(k.primitive)];
    const PrimitiveTensor& expected = primitive.weights;
    // An int8 primitive's weights are int8 (s8, the only type it takes).
    DType type = primitive.quantization.empty() ? DType::kFloat32 : DType::kInt8;
    int64_t numel = 1;
    for (int64_t d : expected.dims) numel *= d;
    if (expected.empty() || w.dtype != type || w.device != k.device ||
        (w.prepared.empty() && w.nbytes != uint64_t(numel) * uint64_t(dtype_bytes(type))))
      fail(source, member_path(path, "weights"),
           "weight '" + w.name + "' (" + dtype_name(w.dtype) + " " + shape_to_string(w.shape) + " on " +
               m.devices[size_t(w.device)].name + ") is not the " + dtype_name(type) + " weights of primitive " +
               std::to_string(k.primitive) + " on this kernel's device");
  }
  if (k.depthwise_weights >= 0) check_depthwise_weights(m, k, source, member_path(path, "depthwise_weights"));
}

void check_copies(const Manifest& m, const std::string& source) {
  for (size_t i = 0; i < m.copies.size(); ++i) {
    const ManifestCopy& c = m.copies[i];
    std::string path = element_path("copies", i);
    check_device_index(m, c.src_device, source, member_path(path, "src_device"));
    check_device_index(m, c.dst_device, source, member_path(path, "dst_device"));
    if (c.src_device == c.dst_device)
      fail(source, path, "copies from " + m.devices[size_t(c.src_device)].name + " to itself");
  }
}

// A prediction names only the artifact's devices, each once.
void check_prediction(const Manifest& m, const std::string& source) {
  if (!m.prediction) return;
  if (m.format_version < 9) fail(source, "prediction", "appears only from format 9 on");
  std::set<std::string> named;
  for (size_t i = 0; i < m.prediction->devices.size(); ++i) {
    const std::string& name = m.prediction->devices[i].device;
    std::string at = element_path("prediction.devices", i) + ".device";
    bool known = std::any_of(m.devices.begin(), m.devices.end(), [&](const ManifestDevice& d) { return d.name == name; });
    if (!known) fail(source, at, "device '" + clipped_text(name) + "' is not one of the artifact's devices");
    if (!named.insert(name).second) fail(source, at, "device '" + clipped_text(name) + "' is named twice");
  }
  if (m.prediction->critical_path.size() > kMaxManifestEntries) fail(source, "prediction.critical_path", "too long");
}

}  // namespace

void validate_manifest(const Manifest& m, const std::string& source) {
  check_versions_and_counts(m, source);
  check_devices(m, source);
  check_prediction(m, source);
  check_tensors(m, m.inputs, "inputs", source);
  check_tensors(m, m.outputs, "outputs", source);
  check_weights(m, source);
  check_arenas(m, source);
  for (size_t i = 0; i < m.kernels.size(); ++i) check_kernel(m, m.kernels[i], element_path("kernels", i), source);
  check_copies(m, source);
}

Manifest parse_manifest(std::string_view json_text, const std::string& source) {
  json root;
  try {
    root = json::parse(json_text);
  } catch (const json::exception& e) {  // malformed, or a number beyond double ("1e4649")
    fail(source, "", std::string("invalid JSON: ") + e.what());
  }
  Manifest manifest = read_manifest_json(root, source);
  validate_manifest(manifest, source);
  return manifest;
}

std::string format_manifest(const Manifest& manifest) {
  validate_manifest(manifest, "manifest");
  return manifest_json(manifest).dump(2) + "\n";
}

Manifest read_manifest_file(const std::string& path) {
  // The size first: the whole text is read into memory.
  RegularFile file(path);
  file.check_size_at_most(kMaxManifestBytes, "a manifest may have");
  return parse_manifest(file.read_all(), path);
}

void write_manifest_file(const Manifest& manifest, const std::string& path) {
  write_whole_file(path, format_manifest(manifest));
}

std::vector<WeightBlock> weight_blocks(const Manifest& manifest) {
  std::vector<WeightBlock> blocks(manifest.devices.size());
  std::vector<bool> seen(manifest.devices.size(), false);
  for (const ManifestWeight& w : manifest.weights) {
    if (w.device < 0 || size_t(w.device) >= blocks.size()) continue;  // validate_manifest reports it
    WeightBlock& block = blocks[size_t(w.device)];
    if (!seen[size_t(w.device)]) {
      block = {w.offset, w.offset + w.nbytes};
      seen[size_t(w.device)] = true;
    } else {
      block.begin = std::min(block.begin, w.offset);
      block.end = std::max(block.end, w.offset + w.nbytes);
    }
  }
  return blocks;
}

uint64_t weight_offset_in_block(const Manifest& manifest, int weight_index) {
  const ManifestWeight& w = manifest.weights.at(size_t(weight_index));
  return w.offset - weight_blocks(manifest).at(size_t(w.device)).begin;
}

uint64_t layout_weights(std::vector<ManifestWeight>& weights, int num_devices) {
  uint64_t end = 0;
  for (int device = 0; device < num_devices; ++device) {
    for (ManifestWeight& w : weights) {
      if (w.device != device) continue;
      if (w.prepared.empty()) w.nbytes = tensor_nbytes(w.dtype, w.shape);
      w.offset = (end + kWeightAlignment - 1) / kWeightAlignment * kWeightAlignment;
      end = w.offset + w.nbytes;
    }
  }
  return end;
}

void apply_device_cores(std::vector<ManifestDevice>& devices, const std::map<std::string, std::vector<int>>& cores) {
  std::string names;
  for (const ManifestDevice& d : devices) names += (names.empty() ? "" : ", ") + d.name;
  for (const auto& [name, set] : cores) {
    auto device = std::find_if(devices.begin(), devices.end(), [&](const ManifestDevice& d) { return d.name == name; });
    if (device == devices.end())
      throw RuntimeError("cores for " + name + ", which is not a device of this model (its devices: " + names + ")");
    if (device->kind != "cpu") throw RuntimeError("cores for " + name + ", but only a cpu device has cores");
    if (device->threads == 0 || device->threads == int(device->cores.size())) device->threads = int(set.size());
    device->cores = set;
  }
  std::vector<std::pair<std::string, std::vector<int>>> core_sets;
  for (const ManifestDevice& d : devices) core_sets.emplace_back(d.name, d.cores);
  if (std::string why = overlapping_cores(core_sets); !why.empty()) throw RuntimeError(why);
}

}  // namespace switchyard
