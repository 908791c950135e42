// The converter table (see converters.h), filled once on first use.
#include "frontend/onnx/converters.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <numeric>
#include <stdexcept>

#include "frontend/onnx/symbolic_shapes.h"

namespace switchyard {

namespace {

struct OnnxOperator {
  std::vector<int> versions;
  std::vector<VersionConverter> converters;
};

std::map<std::string, OnnxOperator>& table() {
  static std::map<std::string, OnnxOperator> operators;
  return operators;
}

void ensure_registered() {
  static std::once_flag once;
  std::call_once(once, [] {
    register_elementwise_converters();
    register_nn_converters();
    register_recurrent_converters();
    register_tensor_converters();
    register_reduce_converters();
    register_resample_converters();
    register_scatter_converters();
    register_scan_converters();
    register_quant_converters();
    register_einsum_converters();
    register_sampling_converters();
    register_control_converters();
    register_signal_converters();
    register_reorder_converters();
    register_linalg_converters();
    register_unpool_converters();
  });
}

// The refusal of `version` of `op_type` (empty when it converts), naming
// the opset that selected it when there is one.
std::string refusal_of(const std::string& op_type, const OnnxOperator& op, int version, const VersionConverter* entry,
                       int opset = 0) {
  std::string name = op_type + "-" + std::to_string(version) + (opset ? " (opset " + std::to_string(opset) + ")" : "");
  if (!entry)
    return name + " is not supported (Switchyard converts " + op_type + " from version " +
           std::to_string(op.converters.front().since) +
           (opset && opset < kFullyConvertedOnnxOpset
                ? "; convert the model to opset " + std::to_string(kFullyConvertedOnnxOpset) +
                      " or newer with onnx.version_converter)"
                : ")");
  if (!entry->convert) return name + " " + entry->refusal;
  return "";
}

// The entry converting `version`: the last whose range starts at or below it.
const VersionConverter* entry_for(const OnnxOperator& op, int version) {
  const VersionConverter* found = nullptr;
  for (const VersionConverter& e : op.converters)
    if (e.since <= version) found = &e;
  return found;
}

}  // namespace

void add_onnx_converter(const std::string& op_type, std::vector<int> versions, std::vector<VersionConverter> converters) {
  auto ascending = [](const auto& v, auto key) {
    for (size_t i = 1; i < v.size(); ++i)
      if (key(v[i - 1]) >= key(v[i])) return false;
    return !v.empty();
  };
  if (!ascending(versions, [](int v) { return v; }) || versions.back() > kNewestOnnxOpset ||
      !ascending(converters, [](const VersionConverter& e) { return e.since; }))
    throw std::logic_error("ONNX converter of " + op_type + ": versions and converters must ascend");
  for (const VersionConverter& e : converters)
    if (std::find(versions.begin(), versions.end(), e.since) == versions.end() &&
        !(&e == &converters.front() && e.since < versions.front()))
      throw std::logic_error("ONNX converter of " + op_type + " starts at " + std::to_string(e.since) +
                             ", which is not a version of the operator");
  if (!table().emplace(op_type, OnnxOperator{std::move(versions), std::move(converters)}).second)
    throw std::logic_error("ONNX converter registered twice: " + op_type);
}

std::optional<OnnxOperatorVersion> find_onnx_converter(const std::string& op_type, int opset) {
  ensure_registered();
  auto it = table().find(op_type);
  if (it == table().end()) return std::nullopt;
  const OnnxOperator& op = it->second;
  OnnxOperatorVersion result;
  for (int v : op.versions)
    if (v <= opset) result.version = v;
  std::string added = "ONNX added it in opset " + std::to_string(op.versions.front());
  if (result.version == 0) {
    const VersionConverter* early = entry_for(op, opset);
    if (!early || !early->convert) {
      result.refusal = op_type + " is not in opset " + std::to_string(opset) + " (" + added + ")";
      return result;
    }
    result.convert = &early->convert;
    result.name = op_type + " at opset " + std::to_string(opset) + ", before " + added;
    return result;
  }
  result.name = op_type + "-" + std::to_string(result.version) + ", the version in opset " + std::to_string(opset);
  const VersionConverter* entry = entry_for(op, result.version);
  result.refusal = refusal_of(op_type, op, result.version, entry, opset);
  if (result.refusal.empty()) result.convert = &entry->convert;
  return result;
}

std::vector<OnnxOperatorSupport> onnx_operator_support() {
  ensure_registered();
  std::vector<OnnxOperatorSupport> all;
  for (const auto& [name, op] : table()) {
    OnnxOperatorSupport s{name, {}};
    for (int v : op.versions) s.versions.emplace_back(v, refusal_of(name, op, v, entry_for(op, v)));
    all.push_back(std::move(s));
  }
  return all;
}

NDArray int64_vector(const std::vector<int64_t>& values) {
  NDArray a(DType::kInt64, {int64_t(values.size())});
  std::copy(values.begin(), values.end(), a.as<int64_t>());
  return a;
}

Expr reshape_to(NodeContext& c, const Expr& x, std::vector<int64_t> shape) {
  if (static_shape_of(x) == shape) return x;
  return c.call("reshape", {x}, {{"newshape", std::move(shape)}});
}

int64_t normalize_axis(NodeContext& c, int64_t axis, int64_t rank, const std::string& what) {
  if (axis < -rank || axis >= rank)
    c.fail(what + " " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

Expr cast_to(NodeContext& c, const Expr& x, DType dtype) {
  if (tensor_type_of(x).dtype == dtype) return x;
  return c.call("cast", {x}, {{"dtype", std::string(dtype_name(dtype))}});
}

void require_float(NodeContext& c, size_t i) {
  if (!dtype_is_float(c.input_dtype(i)))
    c.fail(std::string("needs a floating-point input, got ") + dtype_name(c.input_dtype(i)));
}

int64_t product(const std::vector<int64_t>& dims, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to; ++i) p *= dims[i];
  return p;
}

NDArray multiples_of(int64_t step, const std::vector<int64_t>& shape) {
  NDArray a(DType::kInt64, shape);
  for (int64_t i = 0; i < a.numel(); ++i) a.as<int64_t>()[i] = i * step;
  return a;
}

Expr take_along(NodeContext& c, const Expr& x, int64_t axis, const std::vector<int64_t>& indices) {
  const DimExpr& extent = tensor_type_of(x).dims[size_t(axis)];
  if (!extent.is_constant()) c.fail("picks along symbolic dimension '" + dim_to_string(extent) + "', which is not supported yet");
  std::vector<int64_t> identity(size_t(extent.coefficient()));
  std::iota(identity.begin(), identity.end(), 0);
  if (indices == identity) return x;
  return c.call("take", {x, c.constant(int64_vector(indices))}, {{"axis", axis}});
}

Expr pad_axis(NodeContext& c, const Expr& x, int64_t axis, int64_t before, int64_t after, const Expr& fill) {
  if (before == 0 && after == 0) return x;
  auto block = [&](int64_t extent) {  // the other dimensions may be symbolic (a batch)
    std::vector<DimExpr> dims = tensor_type_of(x).dims;
    dims[size_t(axis)] = extent;
    return c.call("broadcast_to", {fill}, {{"shape", dims_attr(dims)}});
  };
  std::vector<Expr> parts;
  if (before > 0) parts.push_back(block(before));
  parts.push_back(x);
  if (after > 0) parts.push_back(block(after));
  return c.call("concatenate", {c.tuple(parts)}, {{"axis", axis}});
}

}  // namespace switchyard
