// Reading, writing and dispatching on a specialised artifact's manifest.
#include "runtime/specialized_manifest.h"

#include <map>
#include <cctype>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "runtime/json_fields.h"
#include "runtime/manifest.h"
#include "runtime/regular_file.h"
#include "runtime/runtime_error.h"

namespace switchyard {
namespace {

using namespace json_fields;
using ordered_json = nlohmann::ordered_json;

// The first format with specialised artifacts.
constexpr int kFirstSpecializedFormat = 7;
// The first format whose specialised manifest says how runs chunk each dimension.
constexpr int kFirstChunkingFormat = 8;
// More programs than anyone compiles; bounds what a corrupt file makes the loader open.
constexpr size_t kMaxSpecializations = 1024;

std::vector<ManifestDim> read_symbolic_shape(ObjectReader& r, const char* key) {
  const json& dims = r.array(key);
  std::vector<ManifestDim> shape;
  for (size_t i = 0; i < dims.size(); ++i) {
    std::string at = element_path(r.path(key), i);
    ManifestDim dim;
    if (dims[i].is_string() && !dims[i].get<std::string>().empty())
      dim.symbol = dims[i].get<std::string>();
    else
      dim.value = r.read_integer(dims[i], at, 0, std::numeric_limits<int64_t>::max());
    shape.push_back(dim);
  }
  return shape;
}

SymbolicTensor read_symbolic_tensor(ObjectReader& r) {
  SymbolicTensor t;
  t.name = r.nonempty_string("name");
  t.dtype = r.dtype("dtype");
  t.shape = read_symbolic_shape(r, "shape");
  return t;
}

ordered_json tensor_json(const SymbolicTensor& t) {
  ordered_json shape = ordered_json::array();
  for (const ManifestDim& d : t.shape) shape.push_back(d.is_symbolic() ? ordered_json(d.symbol) : ordered_json(d.value));
  return {{"name", t.name}, {"dtype", dtype_name(t.dtype)}, {"shape", shape}};
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string text = "(";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + (shape.size() == 1 ? ",)" : ")");
}

std::string specialization_list(const SpecializedManifest& manifest) {
  std::string text;
  for (size_t s = 0; s < manifest.specializations.size(); ++s)
    text += (s ? "; " : "") + specialization_name(manifest, s);
  return text;
}

// Axes of each tensor along a dimension: -1 (not held) or an axis of it.
std::vector<int> read_axes(ObjectReader& r, const char* key, const std::vector<SymbolicTensor>& tensors) {
  const json& axes = r.array(key);
  if (axes.size() != tensors.size())
    fail(r.source(), r.path(key),
         "expected " + std::to_string(tensors.size()) + " axes (one per tensor), got " + std::to_string(axes.size()));
  std::vector<int> result;
  for (size_t i = 0; i < axes.size(); ++i)
    result.push_back(int(r.read_integer(axes[i], element_path(r.path(key), i), -1, int64_t(tensors[i].shape.size()) - 1)));
  return result;
}

std::vector<DimChunking> read_chunking(ObjectReader& r, const SpecializedManifest& m, const std::string& path) {
  std::vector<DimChunking> chunking = read_list<DimChunking>(r, "chunking", [&](ObjectReader& c) {
    DimChunking dim;
    dim.dim = c.nonempty_string("dim");
    if (const json* refused = c.optional("refused")) {
      if (!refused->is_string() || refused->get<std::string>().empty())
        fail(path, c.path("refused"), "expected the reason as a non-empty string, got " + describe(*refused));
      dim.refusal = refused->get<std::string>();
    } else {
      dim.input_axes = read_axes(c, "input_axes", m.inputs);
      dim.output_axes = read_axes(c, "output_axes", m.outputs);
    }
    return dim;
  });
  if (chunking.size() != m.dims.size())
    fail(path, "chunking", "expected one entry per dims entry (" + std::to_string(m.dims.size()) + "), got " +
                               std::to_string(chunking.size()));
  for (size_t d = 0; d < chunking.size(); ++d)
    if (chunking[d].dim != m.dims[d])
      fail(path, element_path("chunking", d), "names dimension '" + chunking[d].dim + "', but dims[" +
                                                 std::to_string(d) + "] is '" + m.dims[d] + "'");
  return chunking;
}

}  // namespace

std::string specialization_name(const SpecializedManifest& manifest, size_t index) {
  const Specialization& s = manifest.specializations.at(index);
  std::string name;
  for (size_t d = 0; d < manifest.dims.size() && d < s.values.size(); ++d)
    name += (d ? "," : "") + manifest.dims[d] + "=" + std::to_string(s.values[d]);
  return name;
}

std::string chunking_text(const SpecializedManifest& manifest, size_t d) {
  const DimChunking& c = manifest.chunking.at(d);
  if (!c.chunkable()) return c.dim + ": only the compiled values (" + c.refusal + ")";
  std::string along;
  auto list = [&along](const std::vector<SymbolicTensor>& tensors, const std::vector<int>& axes) {
    for (size_t i = 0; i < tensors.size() && i < axes.size(); ++i)
      if (axes[i] >= 0) along += (along.empty() ? "" : ", ") + tensors[i].name + " axis " + std::to_string(axes[i]);
  };
  list(manifest.inputs, c.input_axes);
  list(manifest.outputs, c.output_axes);
  return c.dim + ": any value, as a sum of compiled ones run one after another (along " + along + ")";
}

std::string symbolic_shape_text(const std::vector<ManifestDim>& shape) {
  std::string text = "(";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + (shape[i].is_symbolic() ? shape[i].symbol : std::to_string(shape[i].value));
  return text + (shape.size() == 1 ? ",)" : ")");
}

std::optional<SpecializedManifest> read_specialized_manifest_file(const std::string& path) {
  RegularFile file(path);
  file.check_size_at_most(kMaxManifestBytes, "a manifest may have");
  json root;
  try {
    root = json::parse(file.read_all());
  } catch (const json::exception& e) {
    fail(path, "", std::string("invalid JSON: ") + e.what());
  }
  if (!root.is_object() || !root.contains("specializations")) return std::nullopt;
  ObjectReader r(root, "", path);
  SpecializedManifest m;
  m.format_version = int(r.integer("format_version", 1, std::numeric_limits<int>::max()));
  if (m.format_version > kArtifactFormatVersion)
    fail(path, "",
         "artifact format version " + std::to_string(m.format_version) + " is newer than this runtime supports (" +
             std::to_string(kArtifactFormatVersion) + ")");
  if (m.format_version < kFirstSpecializedFormat)
    fail(path, "specializations", "only format " + std::to_string(kFirstSpecializedFormat) + " and later have it");
  m.switchyard_version = r.string("switchyard_version");
  const json& dims = r.array("dims");
  std::set<std::string> seen;
  for (size_t d = 0; d < dims.size(); ++d) {
    std::string at = element_path(r.path("dims"), d);
    // An identifier: the programs' directories are named after it.
    bool identifier = dims[d].is_string() && !dims[d].get<std::string>().empty();
    for (size_t c = 0; identifier && c < dims[d].get<std::string>().size(); ++c) {
      char ch = dims[d].get<std::string>()[c];
      identifier = std::isalpha(static_cast<unsigned char>(ch)) || ch == '_' ||
                   (c > 0 && std::isdigit(static_cast<unsigned char>(ch)));
    }
    if (!identifier) fail(path, at, "expected a dimension name (an identifier), got " + describe(dims[d]));
    if (!seen.insert(dims[d].get<std::string>()).second) fail(path, at, "named twice");
    m.dims.push_back(dims[d].get<std::string>());
  }
  if (m.dims.empty()) fail(path, "dims", "must not be empty");
  m.inputs = read_list<SymbolicTensor>(r, "inputs", read_symbolic_tensor);
  m.outputs = read_list<SymbolicTensor>(r, "outputs", read_symbolic_tensor);
  const size_t num_dims = m.dims.size();
  m.specializations = read_list<Specialization>(r, "specializations", [&](ObjectReader& s) {
    Specialization spec;
    const json& values = s.array("values");
    if (values.size() != num_dims)
      fail(path, s.path("values"),
           "expected " + std::to_string(num_dims) + " values (one per dims entry), got " + std::to_string(values.size()));
    for (size_t v = 0; v < values.size(); ++v)
      spec.values.push_back(s.read_integer(values[v], element_path(s.path("values"), v), 0, int64_t(1) << 40));
    spec.shared_weights = s.boolean("shared_weights");
    return spec;
  });
  if (m.specializations.empty() || m.specializations.size() > kMaxSpecializations)
    fail(path, "specializations", "expected 1 to " + std::to_string(kMaxSpecializations) + " entries");
  if (m.format_version >= kFirstChunkingFormat) m.chunking = read_chunking(r, m, path);
  r.finish();
  return m;
}

std::string format_specialized_manifest(const SpecializedManifest& m) {
  ordered_json inputs = ordered_json::array(), outputs = ordered_json::array(), specs = ordered_json::array();
  for (const SymbolicTensor& t : m.inputs) inputs.push_back(tensor_json(t));
  for (const SymbolicTensor& t : m.outputs) outputs.push_back(tensor_json(t));
  for (const Specialization& s : m.specializations)
    specs.push_back({{"values", s.values}, {"shared_weights", s.shared_weights}});
  ordered_json root = {{"format_version", m.format_version},
                       {"switchyard_version", m.switchyard_version},
                       {"dims", m.dims},
                       {"inputs", inputs},
                       {"outputs", outputs},
                       {"specializations", specs}};
  if (!m.chunking.empty()) {
    ordered_json chunking = ordered_json::array();
    for (const DimChunking& c : m.chunking) {
      if (c.chunkable())
        chunking.push_back({{"dim", c.dim}, {"input_axes", c.input_axes}, {"output_axes", c.output_axes}});
      else
        chunking.push_back({{"dim", c.dim}, {"refused", c.refusal}});
    }
    root["chunking"] = chunking;
  }
  return root.dump(2) + "\n";
}

void check_shared_dims_agree(const SpecializedManifest& manifest,
                             const std::vector<std::vector<int64_t>>& input_shapes) {
  std::map<std::string, std::pair<size_t, size_t>> first;  // symbol -> (input, dimension) that gave it a value
  for (size_t i = 0; i < input_shapes.size() && i < manifest.inputs.size(); ++i) {
    const std::vector<ManifestDim>& shape = manifest.inputs[i].shape;
    for (size_t d = 0; d < shape.size() && d < input_shapes[i].size(); ++d) {
      if (!shape[d].is_symbolic()) continue;
      auto [it, added] = first.emplace(shape[d].symbol, std::make_pair(i, d));
      if (added) continue;
      const auto [j, e] = it->second;
      if (input_shapes[j][e] == input_shapes[i][d]) continue;
      auto where = [&](size_t input, size_t dim) {
        return "input '" + manifest.inputs[input].name + "' dimension " + std::to_string(dim) + " (" +
               shape[d].symbol + ") is " + std::to_string(input_shapes[input][dim]);
      };
      throw RuntimeError(where(i, d) + ", but " + where(j, e) + ": the model needs them equal");
    }
  }
}

size_t choose_specialization(const SpecializedManifest& manifest,
                             const std::vector<std::vector<std::vector<int64_t>>>& program_inputs,
                             const std::vector<std::vector<int64_t>>& input_shapes) {
  if (input_shapes.size() != manifest.inputs.size())
    throw RuntimeError("expected " + std::to_string(manifest.inputs.size()) + " inputs, got " +
                       std::to_string(input_shapes.size()));
  for (size_t s = 0; s < program_inputs.size(); ++s)
    if (program_inputs[s] == input_shapes) return s;
  check_shared_dims_agree(manifest, input_shapes);
  // None fits: name the first dimension no program takes at that size.
  for (size_t i = 0; i < input_shapes.size(); ++i) {
    const SymbolicTensor& input = manifest.inputs[i];
    const std::vector<int64_t>& shape = input_shapes[i];
    bool fits_statically = shape.size() == input.shape.size();
    for (size_t d = 0; fits_statically && d < shape.size(); ++d)
      fits_statically = input.shape[d].is_symbolic() || input.shape[d].value == shape[d];
    if (!fits_statically)
      throw RuntimeError("input '" + input.name + "': expected " + dtype_name(input.dtype) + " " +
                         symbolic_shape_text(input.shape) + ", got shape " + shape_text(shape));
    for (size_t d = 0; d < shape.size(); ++d) {
      if (!input.shape[d].is_symbolic()) continue;
      bool taken = false;
      for (const auto& program : program_inputs) taken = taken || program[i][d] == shape[d];
      if (!taken)
        throw RuntimeError("input '" + input.name + "' dimension " + std::to_string(d) + " (" + input.shape[d].symbol +
                           ") is " + std::to_string(shape[d]) + ", but this artifact was compiled only for " +
                           specialization_list(manifest) + " (switchyard compile --specialize)");
    }
  }
  std::string shapes;
  for (size_t i = 0; i < input_shapes.size(); ++i)
    shapes += (i ? ", " : "") + manifest.inputs[i].name + " " + shape_text(input_shapes[i]);
  throw RuntimeError("no specialisation of this artifact takes the inputs' shapes together (" + shapes +
                     "); it was compiled for " + specialization_list(manifest) + " (switchyard compile --specialize)");
}

}  // namespace switchyard
