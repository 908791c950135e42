// The ONNX importer (see onnx_importer.h): reads the model, checks its
// opset and operators up front, then converts the graph node by node.
#include "frontend/onnx/onnx_importer.h"

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "frontend/onnx/converters.h"
#include "frontend/onnx/model_reader.h"
#include "frontend/onnx/onnx_tensor.h"
#include "frontend/onnx/pad_folding.h"
#include "frontend/onnx/subgraph.h"
#include "frontend/onnx/symbolic_shapes.h"
#include "ir/output_names.h"
#include "op/relation_helpers.h"
#include "runtime/clipped_text.h"
#include "support/error.h"

namespace switchyard {

namespace {

[[noreturn]] void model_fail(const std::string& source, const std::string& message) {
  throw Error(ErrorKind::kParse, source + ": " + message);
}

std::string node_label(const sy_onnx::NodeProto& node) {
  std::string name = node.name().empty() ? std::string("(unnamed)") : quoted_name(node.name());
  return name + " (" + clipped_text(node.op_type()) + ")";
}

bool is_default_domain(const std::string& domain) { return domain.empty() || domain == "ai.onnx"; }

int default_opset(const sy_onnx::ModelProto& model, const std::string& source) {
  int opset = -1;
  for (const auto& entry : model.opset_import())
    if (is_default_domain(entry.domain())) opset = int(entry.version());
  if (opset < 0) model_fail(source, "the model imports no version of the default ONNX operator set");
  if (opset < kOldestOnnxOpset || opset > kNewestOnnxOpset)
    model_fail(source, "opset " + std::to_string(opset) + " is not supported (Switchyard imports opsets " +
                           std::to_string(kOldestOnnxOpset) + " to " + std::to_string(kNewestOnnxOpset) + ")");
  return opset;
}

// Every one, up to a screenful: a generated model may repeat one operator thousands of times.
std::string listed(const std::vector<std::string>& lines) {
  constexpr size_t kMostListed = 50;
  std::string list;
  for (size_t i = 0; i < std::min(lines.size(), kMostListed); ++i) list += "\n  " + lines[i];
  if (lines.size() > kMostListed) list += "\n  ... and " + std::to_string(lines.size() - kMostListed) + " more";
  return list;
}

// Every node whose operator has no converter, in one error; then every node
// whose operator's version at `opset` is refused, the first named on the
// error's first line.
void check_operators(const sy_onnx::GraphProto& graph, int opset, const std::string& source) {
  std::vector<std::string> unsupported, refused;
  for (const auto& node : graph.node()) {
    if (!is_default_domain(node.domain())) {
      unsupported.push_back(node_label(node) + " of domain " + quoted_name(node.domain()));
      continue;
    }
    std::optional<OnnxOperatorVersion> op = find_onnx_converter(node.op_type(), opset);
    if (!op)
      unsupported.push_back(node_label(node));
    else if (!op->convert)
      refused.push_back("node " + node_label(node) + ": " + op->refusal);
  }
  if (!unsupported.empty())
    model_fail(source, std::to_string(unsupported.size()) + " node" + (unsupported.size() == 1 ? "" : "s") +
                           " with unsupported operators:" + listed(unsupported));
  if (!refused.empty())
    model_fail(source, refused.front() + (refused.size() == 1 ? "" : "; and in all:" + listed(refused)));
}

// " (an input of node 'q' (QuantizeLinear))": the first node reading
// `name`, for messages about a tensor; empty when no node reads it.
std::string used_by(const sy_onnx::GraphProto& graph, const std::string& name) {
  for (const auto& node : graph.node())
    for (const std::string& input : node.input())
      if (input == name) return " (an input of node " + node_label(node) + ")";
  return "";
}

// The parameter of a graph input: its declared element type and `dims`.
// `user` follows a message about the element type (used_by below).
Var make_input(const sy_onnx::ValueInfoProto& info, std::vector<DimExpr> dims, const std::string& source,
               const std::string& user) {
  const std::string& name = info.name();
  const std::string input = "input " + quoted_name(name);
  std::optional<DType> dtype = dtype_from_onnx(info.type().tensor_type().elem_type());
  if (!dtype)
    model_fail(source, input + " has element type " + onnx_type_name(info.type().tensor_type().elem_type()) +
                           ", which Switchyard does not support" + user);
  Type type;
  try {
    type = tensor_type_of_dims(std::move(dims), *dtype);
  } catch (const Error& e) {
    model_fail(source, input + ": " + e.message());
  }
  // Names reach the IR's printer, Python and the manifest's JSON: valid UTF-8.
  return make_var(valid_utf8(name), type, {.span = Span(name, 0, 0), .checked_type = type});
}

class GraphImporter {
 public:
  GraphImporter(const OnnxModelFile& file, std::string source, std::string model_dir, const OnnxImportOptions& options)
      : file_(file), model_(file.model), source_(std::move(source)), model_dir_(std::move(model_dir)), options_(options) {}

  IRModule run() {
    const sy_onnx::GraphProto& graph = model_.graph();
    int opset = default_opset(model_, source_);
    check_operators(graph, opset, source_);
    for (int i = 0; i < graph.initializer_size(); ++i) {
      const sy_onnx::TensorProto& init = graph.initializer(i);
      std::string_view raw = size_t(i) < file_.initializer_raw_data.size() ? file_.initializer_raw_data[size_t(i)]
                                                                            : std::string_view();
      NDArray value;
      try {
        value = tensor_from_onnx(init, model_dir_, raw, options_.weights_in_place ? file_.mapping : nullptr);
      } catch (const Error& e) {
        model_fail(source_, e.message() + used_by(graph, init.name()));
      }
      values_[init.name()] = make_constant(std::move(value), {.span = Span(init.name(), 0, 0)});
    }
    std::vector<Var> params = import_inputs(graph);
    PadFolding folding(graph);
    for (const auto& node : graph.node())
      if (!folding.folds(node, opset, values_)) convert_node(folding.node_to_convert(node), opset);
    Expr body = import_outputs(graph);
    // The graph's output names name the artifact's outputs.
    std::vector<std::string> names;
    for (const auto& info : graph.output()) names.push_back(info.name());
    Attrs attrs = make_attrs({{kOutputNamesAttr, distinct_output_names(names)}});
    IRModule mod;
    mod.add("main", make_function(std::move(params), body, body->checked_type(), attrs, {.span = Span(source_, 0, 0)}));
    return mod;
  }

  // Each graph input's dimensions, once run() has read them.
  const std::vector<std::pair<std::string, std::vector<DimExpr>>>& input_dims() const { return input_dims_; }

 private:
  std::vector<Var> import_inputs(const sy_onnx::GraphProto& graph) {
    std::vector<const sy_onnx::ValueInfoProto*> inputs;
    std::set<std::string> names;
    std::string list;
    for (const auto& info : graph.input()) {
      if (values_.count(info.name())) continue;  // an initializer: a constant, not a parameter
      inputs.push_back(&info);
      names.insert(info.name());
      if (list.size() < kMostQuotedChars) list += (list.empty() ? "" : ", ") + clipped_text(info.name());
    }
    for (const auto& [name, shape] : options_.input_shapes)
      if (!names.count(name))
        throw Error(ErrorKind::kUsage, "--input-shape names " + quoted_name(name) + ", which is not an input of " + source_ +
                                           " (its inputs: " + (list.empty() ? "none" : list) + ")");
    std::vector<const std::vector<InputDim>*> given;
    for (const sy_onnx::ValueInfoProto* info : inputs) {
      if (!info->type().has_tensor_type()) model_fail(source_, "input " + quoted_name(info->name()) + " is not a tensor");
      auto fixed = options_.input_shapes.find(info->name());
      given.push_back(fixed == options_.input_shapes.end() ? nullptr : &fixed->second);
    }
    std::vector<std::vector<DimExpr>> dims = resolve_input_dims(inputs, given, source_);
    for (size_t i = 0; i < inputs.size(); ++i) input_dims_.emplace_back(inputs[i]->name(), dims[i]);
    std::vector<Var> params;
    for (size_t i = 0; i < inputs.size(); ++i) {
      Var v = make_input(*inputs[i], std::move(dims[i]), source_, used_by(graph, inputs[i]->name()));
      values_[inputs[i]->name()] = v;
      params.push_back(v);
    }
    return params;
  }

  void convert_node(const sy_onnx::NodeProto& node, int opset) {
    AssumedDimEqualities::Site site("node " + node_label(node));
    convert_onnx_node(node, opset, model_dir_, OnnxScope{values_, nullptr, &shape_values_});
  }

  Expr import_outputs(const sy_onnx::GraphProto& graph) {
    std::vector<Expr> outputs;
    for (const auto& info : graph.output()) {
      auto it = values_.find(info.name());
      if (it == values_.end()) model_fail(source_, "graph output " + quoted_name(info.name()) + " is never computed");
      if (shape_values_.values.count(it->second.get()))
        model_fail(source_, "graph output " + quoted_name(info.name()) + " is a shape computed from symbolic dimensions " +
                                clipped_text(dims_to_string(shape_values_.values.at(it->second.get()).second)) +
                                "; outputs that are shapes are not supported yet (fix the dimensions with --input-shape)");
      outputs.push_back(it->second);
    }
    if (outputs.empty()) model_fail(source_, "the graph has no outputs");
    if (outputs.size() == 1) return outputs[0];
    std::vector<Type> types;
    for (const Expr& o : outputs) types.push_back(o->checked_type());
    return make_tuple(std::move(outputs), {.span = Span(source_, 0, 0), .checked_type = tuple_type(std::move(types))});
  }

  const OnnxModelFile& file_;
  const sy_onnx::ModelProto& model_;
  std::string source_;
  std::string model_dir_;
  const OnnxImportOptions& options_;
  std::unordered_map<std::string, Expr> values_;
  ShapeValueTable shape_values_;
  std::vector<std::pair<std::string, std::vector<DimExpr>>> input_dims_;
};

// `options` with each input dimension variable that the import took as equal
// to another (AssumedDimEqualities) named as the first of them in input
// order, at the smallest bound any of them states, so that a second import
// types the model with one variable and a run checks them alike. Adds to
// `notes` a sentence per merged class: its inputs' dimensions, the name
// they now share and the node that needed them equal.
OnnxImportOptions unified_input_dims(const OnnxImportOptions& options,
                                     const std::vector<std::pair<std::string, std::vector<DimExpr>>>& input_dims,
                                     const AssumedDimEqualities& assumed, std::vector<std::string>* notes) {
  const std::vector<std::pair<const DimVar*, const DimVar*>>& equal = assumed.pairs();
  std::map<const DimVar*, const DimVar*> parent;
  std::function<const DimVar*(const DimVar*)> find = [&](const DimVar* v) {
    auto it = parent.find(v);
    return it == parent.end() || it->second == v ? v : (it->second = find(it->second));
  };
  // Each class's first variable in input order becomes its root.
  std::vector<const DimVar*> order;
  for (const auto& [name, dims] : input_dims)
    for (const DimExpr& d : dims)
      if (d.variables().size() == 1 && std::find(order.begin(), order.end(), d.variables()[0]) == order.end())
        order.push_back(d.variables()[0]);
  auto position = [&](const DimVar* v) { return std::find(order.begin(), order.end(), v) - order.begin(); };
  for (const auto& [a, b] : equal) {
    const DimVar *ra = find(a), *rb = find(b);
    if (ra == rb) continue;
    if (position(rb) < position(ra)) std::swap(ra, rb);
    parent[rb] = ra;
  }
  std::map<const DimVar*, std::optional<int64_t>> bound;  // per root
  std::map<const DimVar*, int> members;                   // per root
  for (const DimVar* v : order) {
    std::optional<int64_t>& b = bound[find(v)];
    if (v->bound) b = b ? std::min(*b, *v->bound) : *v->bound;
    ++members[find(v)];
  }
  if (notes) {
    // Per class: where its variables appear, and the first node that needed two of them equal.
    std::map<const DimVar*, std::vector<std::string>> places;
    for (const auto& [name, dims] : input_dims)
      for (size_t axis = 0; axis < dims.size(); ++axis)
        if (!dims[axis].constant() && dims[axis].variables().size() == 1) {
          const DimVar* v = dims[axis].variables()[0];
          if (members[find(v)] > 1)
            places[find(v)].push_back("input " + quoted_name(name) + " dimension " + std::to_string(axis) + " (" +
                                      v->name + ")");
        }
    std::map<const DimVar*, std::string> site;
    for (size_t i = 0; i < equal.size(); ++i)
      if (!assumed.sites()[i].empty()) site.emplace(find(equal[i].first), assumed.sites()[i]);
    for (const DimVar* root : order) {
      auto it = places.find(root);
      if (find(root) != root || it == places.end()) continue;
      std::string list;
      for (size_t i = 0; i < it->second.size(); ++i)
        list += (i == 0 ? "" : i + 1 == it->second.size() ? " and " : ", ") + it->second[i];
      auto where = site.find(root);
      notes->push_back(list + " are taken as one dimension, " + root->name +
                       (where == site.end() ? std::string() : ", since " + where->second + " needs them equal") +
                       "; a run whose inputs differ there is refused");
    }
  }
  OnnxImportOptions renamed = options;
  for (const auto& [name, dims] : input_dims) {
    bool unified = false;
    std::vector<InputDim> shape;
    for (const DimExpr& d : dims) {
      if (std::optional<int64_t> value = d.constant()) {
        shape.push_back({value, "", std::nullopt});
        continue;
      }
      const DimVar* root = find(d.variables()[0]);
      unified |= members[root] > 1;
      shape.push_back({std::nullopt, root->name, bound[root]});
    }
    if (unified) renamed.input_shapes[name] = std::move(shape);
  }
  return renamed;
}

IRModule import_model(const OnnxModelFile& file, const std::string& source, const std::string& model_dir,
                      const OnnxImportOptions& options) {
  if (!file.model.has_graph() || file.model.ir_version() <= 0)
    model_fail(source, "not an ONNX model (no graph or IR version)");
  // Inputs that name one dimension two ways (`batch` and `batch_size`, met
  // by an Add): imported once collecting what had to be equal, then again
  // with those named alike.
  GraphImporter first(file, source, model_dir, options);
  OnnxImportOptions unified;
  std::vector<std::string> notes;
  {
    AssumedDimEqualities assumed;
    try {
      IRModule mod = first.run();
      if (assumed.pairs().empty()) return mod;
    } catch (const Error&) {
      if (assumed.pairs().empty()) throw;
    }
    unified = unified_input_dims(options, first.input_dims(), assumed, &notes);
  }
  IRModule mod = GraphImporter(file, source, model_dir, unified).run();
  if (options.notes)
    for (std::string& note : notes) options.notes->push_back(source + ": note: " + std::move(note));
  return mod;
}

}  // namespace

IRModule import_onnx_bytes(const std::string& bytes, const std::string& source_name, const std::string& model_dir,
                           const OnnxImportOptions& options) {
  return import_model(read_onnx_bytes(bytes, source_name), source_name, model_dir, options);
}

IRModule import_onnx_file(const std::string& path, const OnnxImportOptions& options) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) throw Error(ErrorKind::kUsage, "cannot read " + path + ": no such file");
  std::string dir = std::filesystem::path(path).parent_path().string();
  return import_model(read_onnx_file(path), path, dir.empty() ? "." : dir, options);
}

}  // namespace switchyard
