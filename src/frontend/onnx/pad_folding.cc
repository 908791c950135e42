// Zero Pads folded into the Conv or AveragePool that reads them (see pad_folding.h).
#include "frontend/onnx/pad_folding.h"

#include <optional>
#include <vector>

#include "runtime/ndarray.h"

namespace switchyard {

namespace {

using sy_onnx::AttributeProto;
using sy_onnx::NodeProto;

bool default_domain(const NodeProto& node) { return node.domain().empty() || node.domain() == "ai.onnx"; }

const AttributeProto* attribute(const NodeProto& node, const std::string& name) {
  for (const AttributeProto& a : node.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

int64_t int_attribute(const NodeProto& node, const std::string& name, int64_t fallback) {
  const AttributeProto* a = attribute(node, name);
  return a && a->type() == AttributeProto::INT ? a->i() : fallback;
}

bool auto_pad_unset(const NodeProto& node) {
  const AttributeProto* a = attribute(node, "auto_pad");
  return !a || a->s() == "NOTSET";
}

// The constant a value name stands for, if it is one already converted.
const NDArray* constant_of(const std::unordered_map<std::string, Expr>& values, const std::string& name) {
  auto it = values.find(name);
  const ConstantNode* constant = it == values.end() ? nullptr : as<ConstantNode>(it->second);
  return constant ? &constant->data : nullptr;
}

template <typename T>
bool zeros_of(const NDArray& value) {
  for (int64_t i = 0; i < value.numel(); ++i)
    if (value.as<T>()[i] != T(0)) return false;
  return true;
}

bool all_zero(const NDArray& value) {
  switch (value.dtype()) {
    case DType::kFloat32: return zeros_of<float>(value);
    case DType::kFloat64: return zeros_of<double>(value);
    case DType::kInt64: return zeros_of<int64_t>(value);
    case DType::kInt32: return zeros_of<int32_t>(value);
    default: return false;  // no need to know more fills: the Pad is converted as it is
  }
}

// A Pad's amounts (begins, then ends, every axis) where it pads with
// constant zeros and every amount is known; nullopt otherwise.
std::optional<std::vector<int64_t>> zero_pad_amounts(const NodeProto& pad, int opset,
                                                     const std::unordered_map<std::string, Expr>& values) {
  const AttributeProto* mode = attribute(pad, "mode");
  if (mode && mode->s() != "constant") return std::nullopt;
  std::vector<int64_t> amounts;
  if (opset < 11) {
    const AttributeProto* pads = attribute(pad, opset < 2 ? "paddings" : "pads");
    const AttributeProto* value = attribute(pad, "value");
    if (!pads || (value && value->f() != 0.0f)) return std::nullopt;
    amounts.assign(pads->ints().begin(), pads->ints().end());
    return amounts;
  }
  if (pad.input_size() > 3 && !pad.input(3).empty()) return std::nullopt;  // axes: left to the converter
  const NDArray* pads = pad.input_size() > 1 ? constant_of(values, pad.input(1)) : nullptr;
  if (!pads || pads->dtype() != DType::kInt64) return std::nullopt;
  if (pad.input_size() > 2 && !pad.input(2).empty()) {
    const NDArray* fill = constant_of(values, pad.input(2));
    if (!fill || fill->numel() != 1 || !all_zero(*fill)) return std::nullopt;
  }
  amounts.assign(pads->as<int64_t>(), pads->as<int64_t>() + pads->numel());
  return amounts;
}

void set_ints(NodeProto& node, const std::string& name, const std::vector<int64_t>& values) {
  AttributeProto* found = nullptr;
  for (AttributeProto& a : *node.mutable_attribute())
    if (a.name() == name) found = &a;
  if (!found) {
    found = node.add_attribute();
    found->set_name(name);
  }
  found->set_type(AttributeProto::INTS);
  found->clear_ints();
  for (int64_t v : values) found->add_ints(v);
}

void set_int(NodeProto& node, const std::string& name, int64_t value) {
  for (AttributeProto& a : *node.mutable_attribute())
    if (a.name() == name) {
      a.set_i(value);
      return;
    }
  AttributeProto* added = node.add_attribute();
  added->set_name(name);
  added->set_type(AttributeProto::INT);
  added->set_i(value);
}

void count_readers(const sy_onnx::GraphProto& graph, std::unordered_map<std::string, int>* readers) {
  for (const NodeProto& node : graph.node()) {
    for (const std::string& input : node.input()) ++(*readers)[input];
    for (const AttributeProto& a : node.attribute()) {
      if (a.has_g()) count_readers(a.g(), readers);
      for (const sy_onnx::GraphProto& g : a.graphs()) count_readers(g, readers);
    }
  }
  for (const auto& output : graph.output()) ++(*readers)[output.name()];
}

}  // namespace

PadFolding::PadFolding(const sy_onnx::GraphProto& graph) {
  count_readers(graph, &readers_);
  for (const NodeProto& node : graph.node())
    for (const std::string& input : node.input()) reader_of_[input] = &node;
}

bool PadFolding::folds(const NodeProto& pad, int opset, const std::unordered_map<std::string, Expr>& values) {
  if (pad.op_type() != "Pad" || !default_domain(pad) || pad.input_size() < 1 || pad.output_size() != 1) return false;
  const std::string& padded = pad.output(0);
  auto reader_it = reader_of_.find(padded);
  if (readers_[padded] != 1 || reader_it == reader_of_.end()) return false;
  const NodeProto& reader = *reader_it->second;
  // AveragePool has count_include_pad from opset 7.
  const bool conv = reader.op_type() == "Conv", pool = reader.op_type() == "AveragePool" && opset >= 7;
  if (!(conv || pool) || !default_domain(reader) || reader.input_size() < 1 || reader.input(0) != padded ||
      !auto_pad_unset(reader) || rewritten_.count(&reader))
    return false;
  std::optional<std::vector<int64_t>> amounts = zero_pad_amounts(pad, opset, values);
  if (!amounts || amounts->size() < 6 || amounts->size() % 2 != 0) return false;
  const size_t rank = amounts->size() / 2, spatial = rank - 2;
  for (int64_t a : *amounts)
    if (a < 0) return false;
  // The batch and channel axes are not the window's.
  if ((*amounts)[0] || (*amounts)[1] || (*amounts)[rank] || (*amounts)[rank + 1]) return false;
  std::vector<int64_t> pads(2 * spatial, 0);
  if (const AttributeProto* own = attribute(reader, "pads")) {
    if (size_t(own->ints_size()) != 2 * spatial) return false;  // malformed: the converter says so
    for (size_t i = 0; i < pads.size(); ++i) pads[i] = own->ints(int(i));
  }
  if (pool) {
    // A pool's own padding is counted only with count_include_pad; a ceil
    // mode's extra window would count the Pad's zeros but not its own.
    bool own_padding = false;
    for (int64_t p : pads) own_padding = own_padding || p != 0;
    if (int_attribute(reader, "ceil_mode", 0) != 0 || (own_padding && int_attribute(reader, "count_include_pad", 0) != 1))
      return false;
  }
  for (size_t i = 0; i < spatial; ++i) {
    pads[i] += (*amounts)[2 + i];
    pads[spatial + i] += (*amounts)[rank + 2 + i];
  }
  NodeProto folded = reader;
  folded.set_input(0, pad.input(0));
  set_ints(folded, "pads", pads);
  if (pool) set_int(folded, "count_include_pad", 1);
  rewritten_.emplace(&reader, std::move(folded));
  return true;
}

const NodeProto& PadFolding::node_to_convert(const NodeProto& node) const {
  auto it = rewritten_.find(&node);
  return it == rewritten_.end() ? node : it->second;
}

}  // namespace switchyard
