// Manifest assembly, weights.bin, and the all-or-nothing artifact directory.
#include "artifact/artifact_writer.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <numeric>

#include "runtime/file_write.h"
#include "runtime/huge_pages.h"
#include "runtime/primitive_json.h"
#include "runtime/runtime_error.h"
#include "runtime/sha256.h"
#include "runtime/xxh128.h"
#include "support/error.h"
#include "switchyard/model_abi.h"
#include "targets/code_generators.h"
#include "toolchain/interrupt.h"
#include "toolchain/process.h"

namespace switchyard {

namespace fs = std::filesystem;

namespace {

// Preparing weights reads them with vector loads: the staging copies are
// aligned like arena buffers.
constexpr uintptr_t kAlignment = 64;

// The bytes of a weight prepared at a time when its preparer can write
// pieces: the same buffer, in the cache, for every piece of every weight.
constexpr uint64_t kPreparedPieceBytes = uint64_t(4) << 20;

using Buffer = std::unique_ptr<void, decltype(&std::free)>;

Buffer allocate_buffer(uint64_t bytes, const char* what) {
  Buffer buffer(bytes ? allocate_maybe_on_huge_pages(bytes) : nullptr, &std::free);
  if (bytes && !buffer) throw RuntimeError("out of memory for " + std::to_string(bytes) + " bytes of " + what);
  return buffer;
}

// The weight `plain` as `prepare` lays it out, `nbytes`, in a buffer of its
// own. A plain weight that lies unaligned (in the mapped ONNX file, where
// protobuf puts it at any byte) is copied aligned first, since preparing
// reads it as floats. Each buffer lives only while it is used: this VM
// backs memory no process has touched yet slowly, and the pages freed
// here (the copy before the caller writes, the prepared bytes before the
// next weight) are the ones the page cache then takes for the file.
Buffer prepare_weight(const NDArray& plain, const std::function<void(const void*, void*)>& prepare,
                      uint64_t nbytes) {
  const void* bytes = plain.bytes();
  Buffer aligned(nullptr, &std::free);
  if (reinterpret_cast<uintptr_t>(bytes) % kAlignment != 0) {
    aligned = allocate_buffer(plain.nbytes(), "unaligned weights");
    bytes = std::memcpy(aligned.get(), bytes, plain.nbytes());
  }
  Buffer prepared = allocate_buffer(nbytes, "prepared weights");
  prepare(bytes, prepared.get());
  return prepared;
}

ManifestTensor manifest_tensor(std::string name, const LoweredBuffer& buffer) {
  ManifestTensor t;
  t.name = std::move(name);
  t.dtype = buffer.type->dtype;
  t.shape = buffer.type->shape;
  t.device = buffer.device;
  t.span = buffer.span.defined() ? buffer.span.to_string() : "";
  return t;
}

// An exclusive flock on a directory for the scope of the object: writers
// of one directory's entries (in this process or another) take turns.
class DirectoryLock {
 public:
  explicit DirectoryLock(const std::string& dir) : fd_(open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) {
    if (fd_ < 0) throw Error(ErrorKind::kBackend, "cannot open " + dir + " to lock it: " + std::strerror(errno));
    while (flock(fd_, LOCK_EX) != 0) {
      if (errno == EINTR) continue;
      int error = errno;
      close(fd_);
      throw Error(ErrorKind::kBackend, "cannot lock " + dir + ": " + std::strerror(error));
    }
  }
  ~DirectoryLock() { close(fd_); }  // closing releases the lock
  DirectoryLock(const DirectoryLock&) = delete;
  DirectoryLock& operator=(const DirectoryLock&) = delete;

 private:
  int fd_;
};

bool is_artifact_or_empty(const fs::path& dir) {
  return fs::is_directory(dir) && (fs::is_empty(dir) || fs::exists(dir / "manifest.json"));
}

// Error(kUsage) unless `output_dir` is absent, empty or an artifact; the
// caller holds the lock of its parent, so no commit is half-way.
void check_replaceable_locked(const std::string& output_dir) {
  if (fs::exists(output_dir) && !is_artifact_or_empty(output_dir))
    throw Error(ErrorKind::kUsage, output_dir + " exists and is not a Switchyard artifact (no manifest.json); "
                                                "refusing to replace it");
}

// The absolute, normal form of `output_dir` ("dir/" names dir), its parent
// created, so that the names beside it are beside it.
std::string normal_output_path(const std::string& output_dir) {
  fs::path out = fs::absolute(output_dir).lexically_normal();
  if (out.filename().empty()) out = out.parent_path();
  std::error_code ignored;
  fs::create_directories(out.parent_path(), ignored);
  return out.string();
}

// "PARENT/.OUT" + `suffix`, beside `output_dir` (normal).
std::string sibling(const std::string& output_dir, const std::string& suffix) {
  fs::path out(output_dir);
  return (out.parent_path() / ("." + out.filename().string() + suffix)).string();
}

// The PID in "PID-N" or "PID-N.old" (what follows ".OUT.building-"), or 0.
pid_t staging_writer(const std::string& rest) {
  size_t dash = rest.find('-');
  std::string_view counter = std::string_view(rest).substr(dash == std::string::npos ? 0 : dash + 1);
  if (counter.ends_with(".old")) counter.remove_suffix(4);
  auto digits = [](std::string_view text) {
    return !text.empty() && text.size() < 19 && std::all_of(text.begin(), text.end(), ::isdigit);
  };
  if (dash == std::string::npos || !digits(rest.substr(0, dash)) || !digits(counter)) return 0;
  return pid_t(std::stoll(rest.substr(0, dash)));
}

// Removes ".OUT.building-PID-N" (and the ".old" artifact a commit moves
// aside) of every PID whose process is gone: a compile killed by SIGKILL,
// which no handler sees, leaves them. The caller holds the output's lock;
// the PID check spares a live compile where that lock does not reach.
void remove_abandoned_staging(const std::string& output_dir) {
  const std::string prefix = fs::path(sibling(output_dir, ".building-")).filename().string();
  std::error_code error;
  for (fs::directory_iterator it(fs::path(output_dir).parent_path(), error), end; !error && it != end;
       it.increment(error)) {
    std::string name = it->path().filename().string();
    std::error_code ignored;
    if (name.starts_with(prefix) && process_is_gone(staging_writer(name.substr(prefix.size()))))
      fs::remove_all(it->path(), ignored);
  }
}

}  // namespace

Manifest make_manifest(const LoweredProgram& program, const MemoryPlan& plan, const CompilationConfig& config) {
  Manifest m;
  m.abi_version = SY_MODEL_ABI_VERSION;
  m.switchyard_version = kSwitchyardVersion;
  m.entry = program.entry;
  for (const VirtualDevice* d : config.devices)
    m.devices.push_back({d->device_name(), device_kind_name(d->kind()), d->device_id(), d->target()->str(), 0});
  for (size_t i = 0; i < program.inputs.size(); ++i)
    m.inputs.push_back(manifest_tensor(program.input_names[i], program.buffers[size_t(program.inputs[i])]));
  for (size_t i = 0; i < program.outputs.size(); ++i)
    m.outputs.push_back(manifest_tensor(program.output_names[i], program.buffers[size_t(program.outputs[i])]));
  for (const LoweredWeight& w : program.weights) {
    ManifestWeight weight;
    weight.name = w.name;
    weight.dtype = w.data.dtype();
    weight.shape = w.data.shape();
    weight.device = w.device;
    m.weights.push_back(std::move(weight));
  }
  layout_weights(m.weights, int(m.devices.size()));
  for (const ArenaPlan& a : plan.arenas) m.arenas.push_back({a.key.device, a.key.scope, a.bytes, a.lower_bound_bytes});
  // Each distinct primitive once (calls of one kernel may differ in their
  // buffers' layouts); a kernel names the weight its primitive reads when
  // that is a constant, for the runtime to reorder at load.
  std::map<std::string, int> primitive_by_text;
  std::vector<const LoweredStep*> step_of_call(program.kernel_calls.size(), nullptr);
  for (const LoweredStep& step : program.steps)
    if (step.kind == LoweredStep::Kind::kKernel) step_of_call[size_t(step.index)] = &step;
  for (size_t c = 0; c < program.kernel_calls.size(); ++c) {
    const LoweredKernelCall& call = program.kernel_calls[c];
    const KernelSource& source = program.kernel_sources.at(size_t(call.source));
    ManifestKernel kernel{source.name, call.device, call.span.defined() ? call.span.to_string() : "",
                          kernel_kind(source)};
    if (call.primitive) kernel.operators = operator_chain(call.primitive);
    if (!source.image.empty()) {
      // Beside model.so, in a folder named for the device kind: "cuda/NAME.cubin".
      const VirtualDevice* device = config.devices[size_t(call.device)];
      kernel.image = std::string(device_kind_name(device->kind())) + "/" + source.name +
                     code_generator_for(device->kind())->image_extension;
      kernel.image_sha256 = sha256_hex(source.image.data(), source.image.size());
      for (const ImageLaunch& launch : source.launches) kernel.functions.push_back(launch.function);
      kernel.may_fault = source.may_fault;
    }
    if (source.primitive) {
      const PrimitiveSpec& spec = call.dnnl_primitive ? *call.dnnl_primitive : *source.primitive;
      auto [it, inserted] = primitive_by_text.emplace(primitive_spec_text(spec), int(m.primitives.size()));
      if (inserted) m.primitives.push_back(spec);
      kernel.primitive = it->second;
      int weights_input = spec.weights_input;
      if (weights_input >= 0 && step_of_call[c]) {
        const LoweredBuffer& buffer = program.buffers[size_t(step_of_call[c]->inputs.at(size_t(weights_input)))];
        if (buffer.kind == LoweredBuffer::Kind::kWeight) kernel.weights = buffer.index;
      }
      for (const PrimitivePostOp& post : spec.post_ops)
        if (post.kind == PrimitivePostOp::Kind::kDepthwise && step_of_call[c]) {
          const LoweredBuffer& buffer = program.buffers[size_t(step_of_call[c]->inputs.at(size_t(post.input)))];
          if (buffer.kind == LoweredBuffer::Kind::kWeight) kernel.depthwise_weights = buffer.index;
        }
    }
    m.kernels.push_back(std::move(kernel));
  }
  for (const LoweredCopy& c : program.copies)
    m.copies.push_back({c.src_device, c.dst_device, c.bytes, c.span.defined() ? c.span.to_string() : ""});
  return m;
}

WeightPreparers mark_prepared_weights(const LoweredProgram& program, Manifest& manifest,
                                      const CompilationConfig& config) {
  WeightPreparers preparers(manifest.weights.size());
  for (const DeviceKindInfo& kind : device_kinds())
    if (const CodeGenerator* generator = code_generator_for(kind.kind); generator && generator->mark_prepared_weights)
      generator->mark_prepared_weights(program, manifest, config, preparers);
  layout_weights(manifest.weights, int(manifest.devices.size()));
  return preparers;
}

std::string write_weights_file(const LoweredProgram& program, const Manifest& manifest,
                               const WeightPreparers& preparers, const std::string& path) {
  // Weights are grouped by device in the file, not in program order.
  std::vector<size_t> order(program.weights.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return manifest.weights[a].offset < manifest.weights[b].offset; });
  try {
    FileWriter out(path);
    // Summed as written (reading 100 MB back cost a fifth of a second), with
    // the checksum of the format written: XXH3-128 (manifest.h).
    static_assert(kArtifactFormatVersion == 9, "weights.bin's checksum changes with the format");
    Xxh128 digest;
    static const char kZeros[4096] = {};
    uint64_t position = 0;
    Buffer pieces(nullptr, &std::free);  // a piece of a weight prepared in pieces
    uint64_t pieces_bytes = 0;
    for (size_t i : order) {
      const ManifestWeight& w = manifest.weights[i];
      out.write_zeros(w.offset - position);  // alignment padding
      for (uint64_t gap = w.offset - position; gap > 0;) {
        size_t piece = size_t(std::min<uint64_t>(gap, sizeof kZeros));
        digest.update(kZeros, piece);
        gap -= piece;
      }
      position = w.offset + w.nbytes;
      if (preparers[i].prepare_range) {
        // In pieces through one small buffer, read where the model file
        // lies: no copy of the whole weight, aligned or prepared, is made.
        const uint64_t granule = preparers[i].granule;
        const uint64_t piece = std::max<uint64_t>(1, kPreparedPieceBytes / granule) * granule;
        if (pieces_bytes < piece) {
          pieces = allocate_buffer(piece, "prepared weights");
          pieces_bytes = piece;
        }
        for (uint64_t begin = 0; begin < w.nbytes; begin += piece) {
          const uint64_t end = std::min(w.nbytes, begin + piece);
          preparers[i].prepare_range(program.weights[i].data.bytes(), begin, end, pieces.get());
          out.write(pieces.get(), end - begin);
          digest.update(pieces.get(), end - begin);
        }
        continue;
      }
      Buffer prepared = preparers[i] ? prepare_weight(program.weights[i].data, preparers[i].prepare, w.nbytes)
                                     : Buffer(nullptr, &std::free);
      const void* bytes = prepared ? prepared.get() : program.weights[i].data.bytes();
      out.write(bytes, w.nbytes);
      digest.update(bytes, w.nbytes);
    }
    out.finish();
    return digest.hex();
  } catch (const RuntimeError& e) {
    throw Error(ErrorKind::kBackend, e.what());
  }
}

void check_replaceable(const std::string& output_dir) {
  // Absent: nothing to replace (or a commit has it moved aside, which is an artifact).
  std::error_code error;
  if (!fs::exists(output_dir, error)) return;
  // Else look under the lock commits take: between a commit's two renames
  // the directory is briefly gone, and twelve compiles of one model into
  // one directory, handed back by the artifact cache, saw that.
  fs::path out = fs::absolute(output_dir).lexically_normal();
  if (out.filename().empty()) out = out.parent_path();
  DirectoryLock lock(out.parent_path().string());
  check_replaceable_locked(output_dir);
}

StagingDirectory::StagingDirectory(const std::string& output_dir)
    : output_dir_(normal_output_path(output_dir)), lock_(sibling(output_dir_, ".lock")) {
  static std::atomic<uint64_t> counter{0};
  remove_abandoned_staging(output_dir_);
  path_ = sibling(output_dir_, ".building-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
  std::error_code error;
  fs::remove_all(path_, error);
  if (!fs::create_directory(path_, error) || error)
    throw Error(ErrorKind::kBackend, "cannot create " + path_ + ": " + error.message());
}

StagingDirectory::~StagingDirectory() {
  if (committed_) return;
  std::error_code ignored;
  fs::remove_all(path_, ignored);
}

void StagingDirectory::commit() {
  throw_if_interrupted();  // an interrupted compile leaves the old artifact as it was
  // Commits into one directory take turns (its parent is locked), so
  // concurrent compiles of it all succeed and the last one stays.
  DirectoryLock lock(fs::path(output_dir_).parent_path().string());
  throw_if_interrupted();
  check_replaceable_locked(output_dir_);
  std::error_code error;
  std::string old = path_ + ".old";
  bool replacing = fs::exists(output_dir_);
  if (replacing) {
    fs::rename(output_dir_, old, error);
    if (error) throw Error(ErrorKind::kBackend, "cannot move the old " + output_dir_ + " aside: " + error.message());
  }
  fs::rename(path_, output_dir_, error);
  if (error) {
    std::error_code ignored;
    if (replacing) fs::rename(old, output_dir_, ignored);
    throw Error(ErrorKind::kBackend, "cannot move the new artifact to " + output_dir_ + ": " + error.message());
  }
  committed_ = true;
  if (replacing) fs::remove_all(old, error);
}

}  // namespace switchyard
