// Specialisation of symbolic dimensions (see specialize.h).
#include "transform/specialize.h"

#include "ir/functor.h"
#include "ir/with_fields.h"
#include "op/registry.h"
#include "runtime/clipped_text.h"
#include "support/error.h"
#include "transform/infer_type.h"

namespace switchyard {

namespace {

// Re-annotates variables and function results; InferType does the rest.
class Specializer : public ExprMutator {
 public:
  explicit Specializer(const DimBindings& values) : values_(values) {}

  Expr visit_var(const Var& v) override {
    if (!v->type_annotation) return v;
    Type type = specialize_type(v->type_annotation, values_);
    if (type.get() == v->type_annotation.get()) return v;
    return with_fields(v, {.type_annotation = type, .checked_type = type});
  }

  // A reshape of a symbolic shape copies (0) or infers (-1) its symbolic
  // dimensions; specialised, it states its shape, as a static import's does.
  Expr visit_call(const Call& call) override {
    Expr rebuilt = stated_dimension_attrs(ExprMutator::visit_call(call));
    const OpNode* op = as<OpNode>(call->op);
    const TensorTypeNode* was = as_tensor(call->checked_type());
    if (!op || op->name != "reshape" || !was || was->is_static()) return rebuilt;
    const TensorTypeNode* now = as_tensor(specialize_type(call->checked_type(), values_));
    if (!now->is_static()) return rebuilt;
    Attrs attrs = normalize_attrs(*find_op_def("reshape"), {{"newshape", now->shape}});
    return with_fields(Call(as<CallNode>(rebuilt)), {.attrs = attrs});
  }

  // Every attribute that names dimensions (AttrKind::kDims: a reshape's
  // target, a slice's end) with the variables' values; numbers only, it
  // normalises to the static attribute.
  Expr stated_dimension_attrs(const Expr& e) {
    const CallNode* call = as<CallNode>(e);
    const OpNode* op = call ? as<OpNode>(call->op) : nullptr;
    if (!op || !op->def || !call->attrs) return e;
    std::vector<std::pair<std::string, AttrValue>> entries = call->attrs->entries();
    bool changed = false;
    for (const AttrSpec& spec : op->def->attrs) {
      if (spec.kind != AttrKind::kDims) continue;
      for (auto& [name, value] : entries) {
        auto* texts = name == spec.name ? std::get_if<std::vector<std::string>>(&value) : nullptr;
        if (!texts) continue;
        std::vector<std::string> stated;
        for (const std::string& text : *texts) stated.push_back(dim_to_string(specialize_dim(parse_dim(text), values_)));
        value = std::move(stated);
        changed = true;
      }
    }
    if (!changed) return e;
    return with_fields(Call(call), {.attrs = normalize_attrs(*op->def, std::move(entries))});
  }

  Expr visit_function(const Function& f) override {
    Expr rebuilt = ExprMutator::visit_function(f);
    const auto* fn = as<FunctionNode>(rebuilt);
    if (!fn->ret_type) return rebuilt;
    Type ret = specialize_type(fn->ret_type, values_);
    return ret.get() == fn->ret_type.get() ? rebuilt : Expr(with_fields(Function(fn), {.ret_type = ret}));
  }

 private:
  const DimBindings& values_;
};

// The declared type of a parameter.
Type param_type(const Var& p) { return p->type_annotation ? p->type_annotation : p->checked_type(); }

// "input 'x' dimension 0 (batch<=32)".
std::string where(const Var& param, size_t index, const DimExpr& d) {
  return "input '" + clipped_text(param->name_hint) + "' dimension " + std::to_string(index) + " (" + dim_to_string(d) +
         ")";
}

}  // namespace

DimExpr specialize_dim(const DimExpr& d, const DimBindings& values) {
  DimExpr out(d.coefficient());
  for (const DimVar* v : d.variables()) {
    auto it = values.find(v->name);
    if (it == values.end()) {
      out = out * DimExpr(v);
      continue;
    }
    if (it->second < 0 || (v->bound && it->second > *v->bound))
      throw Error(ErrorKind::kUsage, "dimension " + dim_to_string(DimExpr(v)) + " cannot be " +
                                         std::to_string(it->second) +
                                         (v->bound ? " (its bound is " + std::to_string(*v->bound) + ")" : ""));
    out = out * DimExpr(it->second);
  }
  return out;
}

Type specialize_type(const Type& t, const DimBindings& values) {
  if (!t || values.empty()) return t;
  if (const TensorTypeNode* tensor = as_tensor(t)) {
    if (tensor->is_static()) return t;
    std::vector<DimExpr> dims;
    for (const DimExpr& d : tensor->dims) dims.push_back(specialize_dim(d, values));
    return tensor_type_of_dims(std::move(dims), tensor->dtype);
  }
  if (const TupleTypeNode* tuple = as_tuple(t)) {
    std::vector<Type> fields;
    for (const Type& f : tuple->fields) fields.push_back(specialize_type(f, values));
    return tuple_type(std::move(fields));
  }
  const FuncTypeNode* fn = as_func(t);
  std::vector<Type> params;
  for (const Type& p : fn->params) params.push_back(specialize_type(p, values));
  return func_type(std::move(params), specialize_type(fn->ret, values));
}

IRModule specialize(const IRModule& mod, const DimBindings& values) {
  if (values.empty()) return mod;
  Specializer specializer(values);
  return infer_type(specializer.mutate_module(mod));
}

DimBindings bind_input_dims(const IRModule& mod, const std::map<std::string, NDArray>& inputs, const std::string& entry) {
  const Function& fn = mod.lookup(entry);
  DimBindings values;
  std::map<std::string, std::string> bound_by;  // variable -> where its value came from
  for (const Var& p : fn->params) {
    const TensorTypeNode* tensor = as_tensor(param_type(p));
    auto input = inputs.find(p->name_hint);
    if (!tensor || tensor->is_static() || input == inputs.end() || !input->second.defined()) continue;
    const std::vector<int64_t>& shape = input->second.shape();
    if (shape.size() != tensor->dims.size())
      throw Error(ErrorKind::kUsage, "input '" + clipped_text(p->name_hint) + "' has " + std::to_string(shape.size()) +
                                         " dimensions, but the model takes " + clipped_text(type_to_string(param_type(p))),
                  p->span());
    for (size_t i = 0; i < shape.size(); ++i) {
      const DimExpr& d = tensor->dims[i];
      if (d.is_constant() || d.coefficient() != 1 || d.variables().size() != 1) continue;  // checked when typed
      const DimVar* v = d.variables()[0];
      if (v->bound && shape[i] > *v->bound)
        throw Error(ErrorKind::kUsage, where(p, i, d) + " is " + std::to_string(shape[i]) + ", above the bound " +
                                           v->name + " <= " + std::to_string(*v->bound), p->span());
      auto [it, added] = values.emplace(v->name, shape[i]);
      if (added) {
        bound_by[v->name] = where(p, i, d);
      } else if (it->second != shape[i]) {
        throw Error(ErrorKind::kUsage, where(p, i, d) + " is " + std::to_string(shape[i]) + ", but " +
                                           bound_by[v->name] + " is " + std::to_string(it->second) + ": both are '" +
                                           v->name + "'", p->span());
      }
    }
  }
  return values;
}

IRModule specialize_for_inputs(const IRModule& mod, const std::map<std::string, NDArray>& inputs,
                               const std::string& entry) {
  const Function& fn = mod.lookup(entry);
  bool symbolic = false;
  for (const Var& p : fn->params) {
    const TensorTypeNode* t = as_tensor(param_type(p));
    symbolic |= t && !t->is_static();
  }
  if (!symbolic) return mod;
  IRModule specialized = specialize(mod, bind_input_dims(mod, inputs, entry));
  for (const Var& p : specialized.lookup(entry)->params) {
    const TensorTypeNode* t = as_tensor(param_type(p));
    if (t && !t->is_static() && inputs.count(p->name_hint))
      throw Error(ErrorKind::kUsage, "input '" + clipped_text(p->name_hint) + "' leaves a symbolic dimension without a "
                                         "value: the model takes " + clipped_text(type_to_string(param_type(p))),
                  p->span());
  }
  return specialized;
}

}  // namespace switchyard
