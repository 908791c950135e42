// The C API (include/switchyard/runtime.h) over Artifact: every call catches
// everything and turns it into a status plus a thread-local message.
#include <future>
#include <mutex>
#include <new>
#include <set>
#include <string>
#include <vector>

#include "runtime/artifact.h"
#include "runtime/runtime_error.h"
#include "switchyard/runtime.h"

struct SyArtifact {
  std::shared_ptr<switchyard::Artifact> artifact;
  // The shapes sy_artifact_output_shape_for returned (a run in chunks has
  // shapes no program's manifest holds): each lives as long as the artifact.
  mutable std::mutex shapes_mutex;
  mutable std::set<std::vector<int64_t>> chunked_shapes;
};

struct SyRequest {
  std::future<switchyard::RunStats> run;
};

namespace switchyard {
namespace {

static_assert(int(DType::kFloat32) == SY_DTYPE_FLOAT32 && int(DType::kFloat16) == SY_DTYPE_FLOAT16 &&
                  int(DType::kBFloat16) == SY_DTYPE_BFLOAT16 && int(DType::kInt8) == SY_DTYPE_INT8 &&
                  int(DType::kInt32) == SY_DTYPE_INT32 && int(DType::kInt64) == SY_DTYPE_INT64 &&
                  int(DType::kUInt8) == SY_DTYPE_UINT8 && int(DType::kBool) == SY_DTYPE_BOOL &&
                  int(DType::kFloat64) == SY_DTYPE_FLOAT64 && int(DType::kInt16) == SY_DTYPE_INT16 &&
                  int(DType::kUInt16) == SY_DTYPE_UINT16 && int(DType::kUInt32) == SY_DTYPE_UINT32 &&
                  int(DType::kUInt64) == SY_DTYPE_UINT64 && std::size(kAllDTypes) == SY_DTYPE_UINT64 + 1,
              "SyDType codes must equal DType values");

thread_local std::string last_error;

// A failure the C caller caused (bad pointer, index); reported as SY_ERROR_INVALID_ARGUMENT.
class InvalidArgument : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

template <typename Body>
int guarded(Body body) {
  try {
    body();
    return SY_OK;
  } catch (const InvalidArgument& e) {
    last_error = e.what();
    return SY_ERROR_INVALID_ARGUMENT;
  } catch (const std::bad_alloc&) {
    last_error = "out of memory";
    return SY_ERROR_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    last_error = e.what();
    return SY_ERROR_RUNTIME;
  } catch (...) {
    last_error = "unknown error";
    return SY_ERROR_RUNTIME;
  }
}

template <typename T>
T* require(T* pointer, const char* what) {
  if (!pointer) throw InvalidArgument(std::string(what) + " is null");
  return pointer;
}

const Artifact& require_artifact(const SyArtifact* handle) { return *require(handle, "artifact")->artifact; }

const ManifestTensor& tensor_at(const std::vector<ManifestTensor>& tensors, int index, const char* role) {
  if (index < 0 || size_t(index) >= tensors.size())
    throw InvalidArgument(std::string(role) + " index " + std::to_string(index) + " out of range (" +
                          std::to_string(tensors.size()) + " " + role + "s)");
  return tensors[size_t(index)];
}

DType dtype_from_code(int code, const char* role, int index) {
  if (code < 0 || code >= int(std::size(kAllDTypes)))
    throw InvalidArgument(std::string(role) + " " + std::to_string(index) + ": unknown dtype code " +
                          std::to_string(code));
  return DType(code);
}

std::vector<int64_t> shape_of(const SyTensor& tensor, const char* role, int index) {
  if (tensor.ndim < 0 || (tensor.ndim > 0 && !tensor.shape))
    throw InvalidArgument(std::string(role) + " " + std::to_string(index) + ": invalid shape (ndim " +
                          std::to_string(tensor.ndim) + ")");
  return std::vector<int64_t>(tensor.shape, tensor.shape + tensor.ndim);
}

// The checked views of a run's caller buffers.
std::pair<std::vector<TensorView>, std::vector<MutableTensorView>> buffer_views(const SyTensor* inputs, int num_inputs,
                                                                                const SyTensor* outputs,
                                                                                int num_outputs) {
  if (num_inputs < 0 || num_outputs < 0) throw InvalidArgument("negative tensor count");
  if (num_inputs > 0) require(inputs, "inputs");
  if (num_outputs > 0) require(outputs, "outputs");
  std::pair<std::vector<TensorView>, std::vector<MutableTensorView>> views;
  for (int i = 0; i < num_inputs; ++i)
    views.first.push_back(
        {inputs[i].data, dtype_from_code(inputs[i].dtype, "input", i), shape_of(inputs[i], "input", i)});
  for (int i = 0; i < num_outputs; ++i)
    views.second.push_back(
        {outputs[i].data, dtype_from_code(outputs[i].dtype, "output", i), shape_of(outputs[i], "output", i)});
  return views;
}

int load(const char* directory, int num_threads, SyArtifact** artifact) {
  return guarded([&] {
    require(artifact, "artifact output pointer");
    *artifact = nullptr;
    LoadOptions options;
    options.threads = num_threads;
    auto handle = std::make_unique<SyArtifact>();
    handle->artifact = Artifact::load(require(directory, "directory"), options);
    *artifact = handle.release();
  });
}

}  // namespace
}  // namespace switchyard

using namespace switchyard;

extern "C" {

const char* sy_last_error(void) { return last_error.c_str(); }

int sy_artifact_load(const char* directory, SyArtifact** artifact) { return load(directory, 0, artifact); }

int sy_artifact_load_with_threads(const char* directory, int num_threads, SyArtifact** artifact) {
  return load(directory, num_threads, artifact);
}

int sy_artifact_free(SyArtifact* artifact) {
  return guarded([&] { delete artifact; });
}

int sy_artifact_num_inputs(const SyArtifact* artifact, int* count) {
  return guarded([&] { *require(count, "count") = int(require_artifact(artifact).manifest().inputs.size()); });
}

int sy_artifact_num_outputs(const SyArtifact* artifact, int* count) {
  return guarded([&] { *require(count, "count") = int(require_artifact(artifact).manifest().outputs.size()); });
}

int sy_artifact_input_name(const SyArtifact* artifact, int index, const char** name) {
  return guarded([&] {
    *require(name, "name") = tensor_at(require_artifact(artifact).manifest().inputs, index, "input").name.c_str();
  });
}

int sy_artifact_input_dtype(const SyArtifact* artifact, int index, int* dtype) {
  return guarded([&] {
    *require(dtype, "dtype") = int(tensor_at(require_artifact(artifact).manifest().inputs, index, "input").dtype);
  });
}

int sy_artifact_input_shape(const SyArtifact* artifact, int index, int* ndim, const int64_t** shape) {
  return guarded([&] {
    const ManifestTensor& t = tensor_at(require_artifact(artifact).manifest().inputs, index, "input");
    *require(ndim, "ndim") = int(t.shape.size());
    *require(shape, "shape") = t.shape.data();
  });
}

int sy_artifact_output_name(const SyArtifact* artifact, int index, const char** name) {
  return guarded([&] {
    *require(name, "name") = tensor_at(require_artifact(artifact).manifest().outputs, index, "output").name.c_str();
  });
}

int sy_artifact_output_dtype(const SyArtifact* artifact, int index, int* dtype) {
  return guarded([&] {
    *require(dtype, "dtype") = int(tensor_at(require_artifact(artifact).manifest().outputs, index, "output").dtype);
  });
}

int sy_artifact_output_shape(const SyArtifact* artifact, int index, int* ndim, const int64_t** shape) {
  return guarded([&] {
    const ManifestTensor& t = tensor_at(require_artifact(artifact).manifest().outputs, index, "output");
    *require(ndim, "ndim") = int(t.shape.size());
    *require(shape, "shape") = t.shape.data();
  });
}

int sy_artifact_output_shape_for(const SyArtifact* artifact, const SyTensor* inputs, int num_inputs, int index,
                                 int* ndim, const int64_t** shape) {
  return guarded([&] {
    const Artifact& model = require_artifact(artifact);
    if (num_inputs < 0) throw InvalidArgument("negative tensor count");
    if (num_inputs > 0) require(inputs, "inputs");
    std::vector<std::vector<int64_t>> shapes;
    for (int i = 0; i < num_inputs; ++i) shapes.push_back(shape_of(inputs[i], "input", i));
    if (shapes.size() != model.manifest().inputs.size())
      throw InvalidArgument("expected " + std::to_string(model.manifest().inputs.size()) + " inputs, got " +
                            std::to_string(shapes.size()));
    tensor_at(model.manifest().outputs, index, "output");  // the index, checked
    std::vector<std::vector<int64_t>> outputs = model.output_shapes_for(shapes);
    std::lock_guard<std::mutex> lock(artifact->shapes_mutex);
    const std::vector<int64_t>& kept = *artifact->chunked_shapes.insert(outputs[size_t(index)]).first;
    *require(ndim, "ndim") = int(kept.size());
    *require(shape, "shape") = kept.data();
  });
}

int sy_artifact_run(const SyArtifact* artifact, const SyTensor* inputs, int num_inputs, const SyTensor* outputs,
                    int num_outputs) {
  return guarded([&] {
    const Artifact& model = require_artifact(artifact);
    auto [input_views, output_views] = buffer_views(inputs, num_inputs, outputs, num_outputs);
    RunOptions options;
    options.record_stats = false;
    model.run_buffers(input_views, output_views, options);
  });
}

int sy_artifact_run_async(const SyArtifact* artifact, const SyTensor* inputs, int num_inputs,
                          const SyTensor* outputs, int num_outputs, SyRequest** request) {
  return guarded([&] {
    require(request, "request output pointer");
    *request = nullptr;
    const Artifact& model = require_artifact(artifact);
    auto [input_views, output_views] = buffer_views(inputs, num_inputs, outputs, num_outputs);
    RunOptions options;
    options.record_stats = false;
    auto pending = std::make_unique<SyRequest>();
    pending->run = model.run_buffers_async(input_views, output_views, options);
    *request = pending.release();
  });
}

int sy_request_wait(SyRequest* request) {
  std::unique_ptr<SyRequest> owned(request);
  return guarded([&] { require(owned.get(), "request")->run.get(); });
}

const char* sy_dtype_name(int dtype) {
  if (dtype < 0 || dtype >= int(std::size(kAllDTypes))) return nullptr;
  return dtype_name(DType(dtype));
}

}  // extern "C"
