// Bindings of evaluation and execution: the reference interpreter
// (evaluate), and loading and running compiled artifacts with their run
// statistics (which device ran each kernel, which copies happened). Inputs
// to an artifact are checked here, as the interpreter checks them, so that a
// wrong input is the same UsageError (same words) on both paths.
#include <pybind11/numpy.h>

#include <algorithm>
#include <chrono>
#include <future>
#include <optional>

#include "common.h"
#include "interp/evaluate.h"
#include "ir/type.h"
#include "runtime/artifact.h"
#include "runtime/core_set.h"
#include "runtime/manifest.h"
#include "runtime/thread_pool.h"
#include "support/error.h"
#include "transform/specialize.h"

namespace switchyard::python {

namespace {

py::object value_to_python(const Value& value) {
  // Iterative over nested tuples: build children first, then each tuple.
  struct Frame {
    const Value* value;
    size_t next = 0;
    std::vector<py::object> done;
  };
  std::vector<Frame> stack;
  stack.push_back({&value});
  py::object result;
  while (!stack.empty()) {
    Frame& top = stack.back();
    const Value& v = *top.value;
    if (v.is_closure())
      throw Error(ErrorKind::kUsage, "the result is a function (a closure), which has no NumPy form");
    if (v.is_tensor()) {
      result = ndarray_to_numpy(v.tensor);
    } else if (top.next < v.fields.size()) {
      const Value* child = &v.fields[top.next++];
      stack.push_back({child});
      continue;
    } else {
      py::tuple out(top.done.size());
      for (size_t i = 0; i < top.done.size(); ++i) out[i] = top.done[i];
      result = out;
    }
    stack.pop_back();
    if (!stack.empty()) stack.back().done.push_back(result);
  }
  return result;
}

std::map<std::string, NDArray> input_map(py::handle inputs) {
  std::map<std::string, NDArray> out;
  if (inputs.is_none()) return out;
  if (!py::isinstance<py::dict>(inputs)) throw py::type_error("inputs must be a dict of name -> array, got " + type_name_of(inputs));
  for (auto item : py::reinterpret_borrow<py::dict>(inputs)) {
    if (!py::isinstance<py::str>(item.first)) throw py::type_error("input names must be strings");
    std::string name = item.first.cast<std::string>();
    out.emplace(name, ndarray_from_python(item.second, "input '" + name + "'"));
  }
  return out;
}

std::string describe(DType dtype, const std::vector<int64_t>& shape) {
  if (std::find(shape.begin(), shape.end(), -1) == shape.end()) return type_to_string(tensor_type(shape, dtype));
  std::string dims;  // a specialised artifact's symbolic dimension, where its name is not at hand
  for (int64_t d : shape) dims += (dims.empty() ? "" : ", ") + (d == -1 ? std::string("?") : std::to_string(d));
  return "Tensor[(" + dims + "), " + dtype_name(dtype) + "]";
}

// How input `name` is described: a specialised artifact's with its symbolic dimensions' names.
std::string describe_input(const Artifact& a, const ManifestTensor& t) {
  if (const SpecializedManifest* s = a.specialized_manifest())
    for (const SymbolicTensor& input : s->inputs)
      if (input.name == t.name)
        return "Tensor[" + symbolic_shape_text(input.shape) + ", " + dtype_name(input.dtype) + "]";
  return describe(t.dtype, t.shape);
}

std::string input_list(const Manifest& manifest) {
  std::string out;
  for (const ManifestTensor& t : manifest.inputs) out += (out.empty() ? "" : ", ") + t.name;
  return out.empty() ? "no inputs" : out;
}

const ManifestTensor& manifest_input(const Manifest& manifest, const std::string& name) {
  for (const ManifestTensor& t : manifest.inputs)
    if (t.name == name) return t;
  throw Error(ErrorKind::kUsage, "unknown input '" + name + "': the model takes " + input_list(manifest));
}

// Equal, or equal but where `expected` is -1 (a specialised artifact's
// symbolic dimension, left to Artifact::program_for).
bool shape_fits(const std::vector<int64_t>& expected, const std::vector<int64_t>& shape) {
  if (expected.size() != shape.size()) return false;
  for (size_t d = 0; d < shape.size(); ++d)
    if (expected[d] != -1 && expected[d] != shape[d]) return false;
  return true;
}

void check_input(const Manifest& manifest, const std::string& name, const NDArray& array) {
  const ManifestTensor& expected = manifest_input(manifest, name);
  if (!array.defined()) throw Error(ErrorKind::kUsage, "input '" + name + "' is an undefined array");
  if (array.dtype() != expected.dtype || !shape_fits(expected.shape, array.shape()))
    throw Error(ErrorKind::kUsage, "input '" + name + "': expected " + describe(expected.dtype, expected.shape) +
                                       ", got " + describe(array.dtype(), array.shape()));
}

void check_view(const ManifestTensor& expected, DType dtype, const std::vector<int64_t>& shape, const char* role) {
  if (dtype != expected.dtype || !shape_fits(expected.shape, shape))
    throw Error(ErrorKind::kUsage, std::string(role) + " '" + expected.name + "': expected " +
                                       describe(expected.dtype, expected.shape) + ", got " + describe(dtype, shape));
}

void check_inputs(const Manifest& manifest, const std::map<std::string, NDArray>& arrays) {
  for (const auto& [name, array] : arrays) check_input(manifest, name, array);
  for (const ManifestTensor& t : manifest.inputs)
    if (!arrays.count(t.name))
      throw Error(ErrorKind::kUsage,
                  "missing input '" + t.name + "' (expected " + describe(t.dtype, t.shape) + ")");
}

py::dict stats_to_python(const RunStats& stats, const Manifest& manifest) {
  auto device_name = [&](int index) -> std::string {
    if (index >= 0 && size_t(index) < manifest.devices.size()) return manifest.devices[size_t(index)].name;
    return "?";
  };
  py::list kernels, copies;
  for (const KernelRecord& k : stats.kernels)
    kernels.append(py::dict(py::arg("index") = k.index, py::arg("name") = k.name,
                            py::arg("device") = device_name(k.device), py::arg("device_index") = k.device,
                            py::arg("elapsed_ns") = k.elapsed_ns));
  for (const CopyRecord& c : stats.copies)
    copies.append(py::dict(py::arg("index") = c.index, py::arg("src") = device_name(c.src_device),
                           py::arg("dst") = device_name(c.dst_device), py::arg("bytes") = c.bytes,
                           py::arg("elapsed_ns") = c.elapsed_ns));
  return py::dict(py::arg("kernels") = kernels, py::arg("copies") = copies, py::arg("total_ns") = stats.total_ns);
}

// A NumPy array the run reads or writes where it lies: C-contiguous,
// aligned, native byte order (the Python layer copies any other array first).
template <typename View>
View view_of(py::handle value, const std::string& what, bool writeable) {
  if (!py::isinstance<py::array>(value)) throw py::type_error(what + " must be a NumPy array, got " + type_name_of(value));
  auto array = py::reinterpret_borrow<py::array>(value);
  int needed = py::array::c_style | (writeable ? py::detail::npy_api::NPY_ARRAY_WRITEABLE_ : 0);
  bool aligned = (array.flags() & py::detail::npy_api::NPY_ARRAY_ALIGNED_) != 0;
  if ((array.flags() & needed) != needed || !aligned || !array.dtype().attr("isnative").cast<bool>())
    throw Error(ErrorKind::kUsage, what + " must be a C-contiguous, aligned, native-order" +
                                       (writeable ? std::string(", writeable") : std::string()) + " array");
  std::optional<DType> dtype = dtype_of_numpy(array.dtype());
  if (!dtype)
    throw py::type_error(what + ": NumPy dtype " + std::string(py::str(array.dtype())) + " is not supported");
  View view;
  view.data = writeable ? array.mutable_data() : const_cast<void*>(array.data());
  view.dtype = *dtype;
  for (py::ssize_t d = 0; d < array.ndim(); ++d) view.shape.push_back(int64_t(array.shape(d)));
  return view;
}

// A run_async request: waited for with the GIL released; its result read
// as run()'s, as often as asked.
struct AsyncRun {
  std::shared_ptr<const Artifact> artifact;  // for its manifest's device names
  std::shared_future<RunResult> result;

  bool ready() const { return result.wait_for(std::chrono::seconds(0)) == std::future_status::ready; }
  // True once it ended; false when `timeout` (seconds, None: no limit) passed first.
  bool wait(std::optional<double> timeout) const {
    py::gil_scoped_release release;
    if (!timeout) {
      result.wait();
      return true;
    }
    return result.wait_for(std::chrono::duration<double>(std::max(0.0, *timeout))) == std::future_status::ready;
  }
};

void bind_async_run(py::module_& rt) {
  py::class_<AsyncRun>(rt, "AsyncRun", "A run started by Artifact.run_async.")
      .def("done", &AsyncRun::ready, "True once the run ended (with outputs or an error).")
      .def("wait", &AsyncRun::wait, py::arg("timeout") = py::none(),
           "Waits for the run to end, at most `timeout` seconds (None: as long as it takes); True when it ended.")
      .def(
          "result",
          [](const AsyncRun& run) {
            run.wait(std::nullopt);
            const RunResult& r = run.result.get();  // throws the run's error
            py::list outputs;
            for (const NDArray& o : r.outputs) outputs.append(ndarray_to_numpy(o));
            return py::make_tuple(outputs, stats_to_python(r.stats, run.artifact->manifest()));
          },
          "Waits for the run; returns (outputs in manifest order, run statistics), or raises its error.");
}

void bind_artifact(py::module_& rt) {
  rt.attr("DEFAULT_MAX_MODEL_BYTES") = kDefaultMaxModelBytes;
  rt.attr("MAX_POOL_THREADS") = kMaxPoolThreads;
  py::class_<Artifact, std::shared_ptr<Artifact>>(rt, "Artifact", "A loaded artifact (model.so, weights.bin, manifest.json).")
      .def_static(
          "load",
          [](const std::string& dir, int threads, uint64_t max_model_bytes,
             const std::map<std::string, std::string>& cores, int max_in_flight) {
            LoadOptions options{threads, max_model_bytes, {}, max_in_flight};
            for (const auto& [device, text] : cores) options.cores[device] = parse_core_set(text, device);
            return Artifact::load(dir, options);
          },
          py::arg("path"), py::arg("threads") = 0, py::arg("max_model_bytes") = kDefaultMaxModelBytes,
          py::arg("cores") = std::map<std::string, std::string>(), py::arg("max_in_flight") = 0)
      .def_property_readonly("max_in_flight", &Artifact::max_in_flight)
      .def_property_readonly("directory", &Artifact::directory)
      .def_property_readonly("manifest_json",
                             [](const Artifact& a) {
                               if (const SpecializedManifest* m = a.specialized_manifest())
                                 return format_specialized_manifest(*m);
                               return format_manifest(a.manifest());
                             })
      .def_property_readonly("specializations",
                             [](const Artifact& a) {
                               std::vector<std::string> out;
                               if (const SpecializedManifest* m = a.specialized_manifest())
                                 for (size_t s = 0; s < m->specializations.size(); ++s)
                                   out.push_back(specialization_name(*m, s));
                               return out;
                             })
      .def(
          "output_shapes_for",
          [](const Artifact& a, const std::vector<std::vector<int64_t>>& input_shapes) {
            return a.output_shapes_for(input_shapes);
          },
          py::arg("input_shapes"),
          "The outputs' shapes for inputs of these shapes (manifest order): a specialised artifact's program for "
          "them; raises RuntimeError naming the dimension no specialisation takes.")
      .def_property_readonly("input_names",
                             [](const Artifact& a) {
                               std::vector<std::string> out;
                               for (const ManifestTensor& t : a.manifest().inputs) out.push_back(t.name);
                               return out;
                             })
      .def_property_readonly("output_names",
                             [](const Artifact& a) {
                               std::vector<std::string> out;
                               for (const ManifestTensor& t : a.manifest().outputs) out.push_back(t.name);
                               return out;
                             })
      .def(
          "run",
          [](const Artifact& a, py::handle inputs, bool record_stats) {
            std::map<std::string, NDArray> arrays = input_map(inputs);
            check_inputs(a.manifest(), arrays);
            RunResult r;
            {
              // Runs are thread-safe and call no Python: other threads may run meanwhile.
              py::gil_scoped_release release;
              r = a.run(arrays, RunOptions{record_stats});
            }
            py::list outputs;
            for (const NDArray& o : r.outputs) outputs.append(ndarray_to_numpy(o));
            return py::make_tuple(outputs, stats_to_python(r.stats, a.manifest()));
          },
          py::arg("inputs"), py::arg("record_stats") = true,
          "Runs on inputs by name; returns (outputs in manifest order, run statistics).")
      .def(
          "run_async",
          [](std::shared_ptr<Artifact> a, py::handle inputs, bool record_stats) {
            std::map<std::string, NDArray> arrays = input_map(inputs);
            check_inputs(a->manifest(), arrays);
            AsyncRun run{a, {}};
            {
              // It may wait for a request in flight to end, which needs no Python.
              py::gil_scoped_release release;
              run.result = a->run_async(arrays, RunOptions{record_stats}).share();
            }
            return run;
          },
          py::arg("inputs"), py::arg("record_stats") = true,
          "Starts a run on inputs by name (copied) and returns an AsyncRun at once.")
      .def(
          "run_into",
          [](const Artifact& a, py::handle inputs, py::handle outputs, bool record_stats) {
            if (!py::isinstance<py::dict>(inputs)) throw py::type_error("inputs must be a dict of name -> array");
            auto given = py::reinterpret_borrow<py::dict>(inputs);
            for (auto item : given) {
              if (!py::isinstance<py::str>(item.first)) throw py::type_error("input names must be strings");
              manifest_input(a.manifest(), item.first.cast<std::string>());
            }
            std::vector<TensorView> in;
            for (const ManifestTensor& t : a.manifest().inputs) {
              if (!given.contains(t.name))
                throw Error(ErrorKind::kUsage,
                            "missing input '" + t.name + "' (expected " + describe(t.dtype, t.shape) + ")");
              in.push_back(view_of<TensorView>(given[py::str(t.name)], "input '" + t.name + "'", false));
              check_view(t, in.back().dtype, in.back().shape, "input");
            }
            if (!py::isinstance<py::list>(outputs) || py::len(outputs) != a.manifest().outputs.size())
              throw py::type_error("outputs must be a list of " + std::to_string(a.manifest().outputs.size()) +
                                   " arrays");
            std::vector<MutableTensorView> out;
            std::vector<std::vector<int64_t>> input_shapes;
            for (const TensorView& view : in) input_shapes.push_back(view.shape);
            const std::vector<std::vector<int64_t>> shapes = a.output_shapes_for(input_shapes);
            for (size_t i = 0; i < shapes.size(); ++i) {
              ManifestTensor t = a.manifest().outputs[i];
              t.shape = shapes[i];
              out.push_back(view_of<MutableTensorView>(outputs[py::int_(i)], "output '" + t.name + "'", true));
              check_view(t, out.back().dtype, out.back().shape, "output");
            }
            RunStats stats;
            {
              // The arrays stay referenced by the caller; the run calls no Python.
              py::gil_scoped_release release;
              stats = a.run_buffers(in, out, RunOptions{record_stats});
            }
            return stats_to_python(stats, a.manifest());
          },
          py::arg("inputs"), py::arg("outputs"), py::arg("record_stats") = true,
          "Runs reading the input arrays and writing the output arrays in place (no copies); returns the "
          "run statistics.")
      .def(
          "check_input",
          [](const Artifact& a, const std::string& name, py::handle value) {
            NDArray array = ndarray_from_python(value, "input '" + name + "'");
            const ManifestTensor& expected = manifest_input(a.manifest(), name);
            if (a.specialized_manifest() && array.defined() &&
                (array.dtype() != expected.dtype || !shape_fits(expected.shape, array.shape())))
              throw Error(ErrorKind::kUsage, "input '" + name + "': expected " + describe_input(a, expected) +
                                                 ", got " + describe(array.dtype(), array.shape()));
            check_input(a.manifest(), name, array);
          },
          py::arg("name"), py::arg("value"), "Raises UsageError unless value fits the model's input `name`.");
}

}  // namespace

void bind_runtime(py::module_& m, py::module_& rt) {
  bind_async_run(rt);
  m.def(
      "evaluate",
      [](const IRModule& mod, py::handle inputs, const std::string& entry) {
        std::map<std::string, NDArray> arrays = input_map(inputs);
        IRModule own = mod;  // a private copy: the GIL is released while evaluating
        Value result;
        {
          py::gil_scoped_release release;
          // A symbolic module runs at the inputs' shapes.
          own = specialize_for_inputs(own, arrays, entry);
          result = evaluate(own, arrays, entry);
        }
        return value_to_python(result);
      },
      py::arg("mod"), py::arg("inputs"), py::arg("entry") = "main",
      "Runs a module with the reference interpreter; NumPy arrays in, a NumPy array (or nested tuple) out.");
  bind_artifact(rt);
}

}  // namespace switchyard::python
