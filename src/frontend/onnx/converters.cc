// The converter table (see converters.h), filled once on first use.
#include "frontend/onnx/converters.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <stdexcept>

namespace switchyard {

namespace {

std::map<std::string, OnnxConverter>& table() {
  static std::map<std::string, OnnxConverter> converters;
  return converters;
}

void ensure_registered() {
  static std::once_flag once;
  std::call_once(once, [] {
    register_elementwise_converters();
    register_nn_converters();
    register_tensor_converters();
    register_resample_converters();
  });
}

}  // namespace

void add_onnx_converter(const std::string& op_type, OnnxConverter converter) {
  if (!table().emplace(op_type, std::move(converter)).second)
    throw std::logic_error("ONNX converter registered twice: " + op_type);
}

const OnnxConverter* find_onnx_converter(const std::string& op_type) {
  ensure_registered();
  auto it = table().find(op_type);
  return it == table().end() ? nullptr : &it->second;
}

NDArray int64_vector(const std::vector<int64_t>& values) {
  NDArray a(DType::kInt64, {int64_t(values.size())});
  std::copy(values.begin(), values.end(), a.as<int64_t>());
  return a;
}

Expr reshape_to(NodeContext& c, const Expr& x, std::vector<int64_t> shape) {
  if (tensor_type_of(x).shape == shape) return x;
  return c.call("reshape", {x}, {{"newshape", std::move(shape)}});
}

int64_t normalize_axis(NodeContext& c, int64_t axis, int64_t rank, const std::string& what) {
  if (axis < -rank || axis >= rank)
    c.fail(what + " " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

std::vector<std::string> supported_onnx_ops() {
  ensure_registered();
  std::vector<std::string> names;
  for (const auto& [name, converter] : table()) names.push_back(name);
  return names;
}

}  // namespace switchyard
