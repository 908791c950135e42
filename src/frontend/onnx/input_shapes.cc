// The shapes of an ONNX graph's inputs (see input_shapes.h).
#include "frontend/onnx/input_shapes.h"

#include <cctype>

#include "frontend/onnx/sy_onnx.pb.h"
#include "runtime/clipped_text.h"
#include "support/error.h"

namespace switchyard {

namespace {

[[noreturn]] void malformed(const std::string& text, const std::string& why) {
  throw Error(ErrorKind::kUsage, "malformed shape '" + clipped_text(text) + "': " + why +
                                     " (expected dimensions like 1x3x224x224, ?x3x224x224, nx3x224x224 or "
                                     "n<=32x3x224x224; n,3,224,224 when a name holds an x)");
}

bool is_name(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char ch : s)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '_') return false;
  return true;
}

// A non-negative decimal number, or nullopt.
std::optional<int64_t> parse_count(const std::string& s) {
  if (s.empty() || s.size() > 18) return std::nullopt;
  for (char ch : s)
    if (!std::isdigit(static_cast<unsigned char>(ch))) return std::nullopt;
  return std::stoll(s);
}

InputDim parse_dim(const std::string& part, const std::string& text) {
  if (std::optional<int64_t> n = parse_count(part)) return {.value = n};
  InputDim dim;
  std::string head = part;
  if (size_t le = part.find("<="); le != std::string::npos) {
    head = part.substr(0, le);
    dim.bound = parse_count(part.substr(le + 2));
    if (!dim.bound) malformed(text, "the bound in '" + part + "' is not a number");
  }
  if (head != "?") {
    if (!is_name(head)) malformed(text, "'" + part + "' is not a number, ?, a name or NAME<=BOUND");
    dim.name = head;
  }
  return dim;
}

// One dimension of one input before variables are made: a number, or a name with a bound.
struct Slot {
  std::optional<int64_t> value;
  std::string name;
  std::optional<int64_t> bound;
};

Slot resolve_dim(const sy_onnx::ValueInfoProto& info, int index, const InputDim* given) {
  const std::string& input = info.name();
  const auto& shape = info.type().tensor_type().shape();
  std::optional<int64_t> declared;
  std::string param;
  if (shape.dim_size() > index) {
    const auto& d = shape.dim(index);
    if (d.has_dim_value() && d.dim_value() >= 0) declared = d.dim_value();
    if (d.has_dim_param() && !d.dim_param().empty()) param = dimension_name(d.dim_param());
  }
  std::string fresh = dimension_name(input) + "_d" + std::to_string(index);
  std::string flag = "--input-shape " + clipped_text(input);
  if (!given) {
    if (declared) return {.value = declared};
    return {.name = param.empty() ? fresh : param};
  }
  if (given->value) {
    if (declared && *declared != *given->value)
      throw Error(ErrorKind::kUsage, flag + ": dimension " + std::to_string(index) + " is " + std::to_string(*declared) +
                                         " in the model, not " + std::to_string(*given->value));
    return {.value = given->value};
  }
  if (declared)
    throw Error(ErrorKind::kUsage, flag + ": dimension " + std::to_string(index) + " is " + std::to_string(*declared) +
                                       " in the model, so it cannot be symbolic");
  std::string name = !given->name.empty() ? given->name : param.empty() ? fresh : param;
  return {.name = name, .bound = given->bound};
}

std::vector<Slot> resolve_input(const sy_onnx::ValueInfoProto& info, const std::vector<InputDim>* given,
                                const std::string& source) {
  const std::string& name = info.name();
  const auto& tt = info.type().tensor_type();
  if (!given && !tt.has_shape())
    throw Error(ErrorKind::kParse, source + ": input '" + clipped_text(name) +
                                       "' has no declared shape; give one with --input-shape " + clipped_text(name) +
                                       "=...");
  if (given && tt.has_shape() && tt.shape().dim_size() != int(given->size()))
    throw Error(ErrorKind::kUsage, "--input-shape " + clipped_text(name) + " gives " + std::to_string(given->size()) +
                                       " dimensions, but the model declares " + std::to_string(tt.shape().dim_size()));
  int rank = given ? int(given->size()) : tt.shape().dim_size();
  std::vector<Slot> slots;
  for (int i = 0; i < rank; ++i) slots.push_back(resolve_dim(info, i, given ? &(*given)[size_t(i)] : nullptr));
  return slots;
}

}  // namespace

std::string dimension_name(const std::string& dim_param) {
  std::string name;
  for (char ch : dim_param) name += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) name = "_" + name;
  return name;
}

std::vector<InputDim> parse_shape_text(const std::string& text) {
  if (text.empty()) malformed(text, "it is empty");
  char separator = text.find(',') != std::string::npos ? ',' : 'x';
  std::vector<InputDim> dims;
  size_t start = 0;
  while (true) {
    size_t end = text.find(separator, start);
    std::string part = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (part.empty()) malformed(text, "a dimension is empty");
    dims.push_back(parse_dim(part, text));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return dims;
}

std::string input_dims_to_string(const std::vector<InputDim>& dims) {
  bool comma = false;
  for (const InputDim& d : dims) comma |= d.name.find('x') != std::string::npos;
  std::string text;
  for (const InputDim& d : dims) {
    if (!text.empty()) text += comma ? "," : "x";
    if (d.value) {
      text += std::to_string(*d.value);
      continue;
    }
    text += d.name.empty() ? "?" : d.name;
    if (d.bound) text += "<=" + std::to_string(*d.bound);
  }
  return text;
}

std::vector<std::vector<DimExpr>> resolve_input_dims(const std::vector<const sy_onnx::ValueInfoProto*>& inputs,
                                                     const std::vector<const std::vector<InputDim>*>& given,
                                                     const std::string& source) {
  std::vector<std::vector<Slot>> slots;
  std::map<std::string, std::pair<int64_t, std::string>> bounds;  // name -> (bound, the input bounding it)
  for (size_t i = 0; i < inputs.size(); ++i) {
    slots.push_back(resolve_input(*inputs[i], given[i], source));
    for (const Slot& s : slots.back()) {
      if (!s.bound) continue;
      auto [it, added] = bounds.emplace(s.name, std::make_pair(*s.bound, inputs[i]->name()));
      if (!added && it->second.first != *s.bound)
        throw Error(ErrorKind::kUsage, "dimension '" + s.name + "' is bounded by " + std::to_string(it->second.first) +
                                           " in --input-shape " + clipped_text(it->second.second) + " but by " +
                                           std::to_string(*s.bound) + " in --input-shape " +
                                           clipped_text(inputs[i]->name()));
    }
  }
  std::vector<std::vector<DimExpr>> dims;
  for (const std::vector<Slot>& input : slots) {
    dims.emplace_back();
    for (const Slot& s : input) {
      if (s.value) {
        dims.back().emplace_back(*s.value);
        continue;
      }
      auto bound = bounds.find(s.name);
      dims.back().emplace_back(
          dim_var(s.name, bound == bounds.end() ? std::nullopt : std::optional<int64_t>(bound->second.first)));
    }
  }
  return dims;
}

}  // namespace switchyard
