// lower_kernel_source: checks a primitive function, flattens its tuple
// parameters, picks the generator for its group (element-wise loop,
// reduction, normalisation, library or plain-loop anchor), which builds it
// as kernel IR; each target's generator (targets/*/compiler/codegen_*)
// renders that.
#include <algorithm>
#include <unordered_map>

#include "codegen/channel_concatenation.h"
#include "codegen/group_kernel.h"
#include "codegen/kernel.h"
#include "ir/functor.h"
#include "op/handles.h"
#include "op/registry.h"
#include "support/error.h"
#include "support/identifier.h"

namespace switchyard {

std::string CpuKernel::input(size_t i) const {
  return "in" + std::to_string(i) + "_" + identifier(function->params.at(i)->name_hint);
}

std::string CpuKernel::output(size_t j) const { return "out" + std::to_string(j); }

std::string CpuKernel::operand(size_t arg) const {
  const Expr& e = master->args.at(arg);
  for (size_t i = 0; i < function->params.size(); ++i)
    if (function->params[i].get() == e.get()) return input(i);
  throw Error(ErrorKind::kBackend,
              "'" + as<OpNode>(master->op)->name + "' reads a computed value as argument " + std::to_string(arg) +
                  "; a CPU kernel's anchor reads only the kernel's parameters",
              master->span());
}

kernel_ir::Kernel CpuKernel::kernel_ir_buffers() const {
  namespace ki = kernel_ir;
  ki::Kernel kernel;
  for (size_t i = 0; i < function->params.size(); ++i) {
    const Var& p = function->params[i];
    TensorType type(as_tensor(p->checked_type()));
    kernel.buffers.push_back({input(i), type->dtype, ki::BufferRole::kInput, int(i), true, type->shape, "",
                              "%" + p->name_hint + ": " + type_to_string(type)});
  }
  for (size_t j = 0; j < outputs.size(); ++j)
    kernel.buffers.push_back({output(j), outputs[j]->dtype, ki::BufferRole::kOutput, int(j), false, outputs[j]->shape,
                              "", type_to_string(outputs[j])});
  return kernel;
}

ElementLowering CpuKernel::lowering(std::vector<kernel_ir::Stmt>& out, int& numbering) const {
  ElementLowering l(out, numbering);
  for (size_t i = 0; i < function->params.size(); ++i) l.bind_buffer(function->params[i].get(), input(i));
  return l;
}

void CpuKernel::lower_store_result(std::vector<kernel_ir::Stmt>& out, int& numbering, const kernel_ir::Expr& value,
                                   const IndexAt& at) const {
  kernel_ir::Expr result = value;
  if (has_epilogue()) {
    ElementLowering l = lowering(out, numbering);
    l.bind_value(master, at, value);
    result = l.lower(Expr(root), at);
  }
  out.push_back(kernel_ir::store(output(0), offset_of(at, outputs.at(0)->shape), result));
}

bool CpuKernel::result_is_empty() const {
  return std::all_of(outputs.begin(), outputs.end(), [](const TensorType& t) { return t->numel() == 0; });
}

namespace {

void flatten_type(const Type& t, std::vector<TensorType>* out, const Span& span) {
  if (const TensorTypeNode* tensor = as_tensor(t)) return out->push_back(TensorType(tensor));
  const TupleTypeNode* tuple = as_tuple(t);
  if (!tuple)
    throw Error(ErrorKind::kBackend, "a kernel takes and returns tensors, got " + (t ? type_to_string(t) : "no type"),
                span);
  for (const Type& f : tuple->fields) {
    if (!as_tensor(f)) throw Error(ErrorKind::kBackend, "nested tuples cannot cross a kernel boundary", span);
    out->push_back(TensorType(as_tensor(f)));
  }
}

// Replaces tuple-typed parameters by one tensor parameter per field.
class TupleParameterFlattener : public ExprMutator {
 public:
  std::unordered_map<const VarNode*, Tuple> fields;
  Expr visit_var(const Var& v) override {
    auto it = fields.find(v.get());
    return it == fields.end() ? Expr(v) : Expr(it->second);
  }
};

Function flatten_parameters(const Function& fn) {
  TupleParameterFlattener flattener;
  std::vector<Var> params;
  for (const Var& p : fn->params) {
    std::vector<TensorType> types;
    flatten_type(p->checked_type(), &types, p->span());
    if (as_tensor(p->checked_type())) {
      params.push_back(p);
      continue;
    }
    std::vector<Expr> vars;
    for (size_t i = 0; i < types.size(); ++i) {
      Var field = make_var(p->name_hint + "_" + std::to_string(i), types[i],
                           {p->virtual_device(), p->span(), types[i]});
      params.push_back(field);
      vars.push_back(field);
    }
    flattener.fields[p.get()] = make_tuple(vars, {p->virtual_device(), p->span(), p->checked_type()});
  }
  if (flattener.fields.empty()) return fn;
  return with_fields(fn, {.params = params, .body = flattener.mutate(fn->body)});
}

bool is_master_pattern(OpPattern p) { return p == OpPattern::kAnchor || p == OpPattern::kReduction; }

// Checks the body holds only operator calls, tuples (concatenate's),
// parameters and constants, and finds the one anchor or reduction.
void inspect_body(CpuKernel& k) {
  std::vector<const CallNode*> masters;
  post_order_visit(k.function->body, [&](const Expr& e) {
    switch (e->kind()) {
      case ExprKind::kVar: case ExprKind::kConstant: case ExprKind::kOp: case ExprKind::kTuple: return;
      case ExprKind::kCall: break;
      case ExprKind::kFunction: case ExprKind::kLet: case ExprKind::kIf: case ExprKind::kTupleGetItem:
      case ExprKind::kGlobalVar:
        throw Error(ErrorKind::kBackend,
                    std::string("a primitive function for the CPU holds only operator calls, got a ") +
                        expr_kind_name(e->kind()),
                    e->span());
    }
    const CallNode* call = as<CallNode>(e);
    const OpNode* op = as<OpNode>(call->op);
    if (!op) throw Error(ErrorKind::kBackend, "a primitive function for the CPU calls only operators", e->span());
    if (op->def->pattern == OpPattern::kOpaque)
      throw Error(ErrorKind::kBackend, "no CPU kernel for operator '" + op->name + "'", e->span());
    if (is_master_pattern(op->def->pattern)) masters.push_back(call);
  });
  if (masters.size() > 1)
    throw Error(ErrorKind::kBackend,
                "a CPU kernel holds at most one anchor or reduction; this one has '" +
                    as<OpNode>(masters[0]->op)->name + "' and '" + as<OpNode>(masters[1]->op)->name + "'",
                masters[1]->span());
  k.master = masters.empty() ? nullptr : masters[0];
  if (!k.master || k.master == k.root) return;
  const TensorTypeNode* master_type = as_tensor(k.master->checked_type());
  const TensorTypeNode* root_type = as_tensor(k.root->checked_type());
  if (!master_type || !root_type || master_type->shape != root_type->shape)
    throw Error(ErrorKind::kBackend,
                "the element-wise epilogue of '" + as<OpNode>(k.master->op)->name + "' must keep its shape",
                k.root->span());
}

void check_anchor_reads_parameters(const CpuKernel& k) {
  for (const Expr& arg : k.master->args)
    if (!is<VarNode>(arg))
      throw Error(ErrorKind::kBackend,
                  "'" + as<OpNode>(k.master->op)->name +
                      "' reads a computed value; a CPU kernel's anchor reads only the kernel's parameters",
                  k.master->span());
}

// The kernel IR of the group; nullopt for a oneDNN primitive alone
// (k.library_only), which has no code.
std::optional<kernel_ir::Kernel> lower_to_kernel_ir(CpuKernel& k) {
  if (!k.master && lower_layout_conversion(k)) return std::nullopt;
  if (!k.master) return lower_elementwise_kernel(k);
  const OpNode* op = as<OpNode>(k.master->op);
  // Of the kernels with a master, only an anchored convolution's epilogue
  // loop runs in a layout (PlanLayouts gives one to no other).
  auto refuse_layout = [&] {
    if (!k.layout.empty())
      throw Error(ErrorKind::kBackend,
                  "the kernel of '" + op->name + "' cannot read and write the layout '" + k.layout + "'",
                  k.master->span());
  };
  if (!dnnl_handles(*k.master)) refuse_layout();
  if (op == ops::sum() || op == ops::mean() || op == ops::max() || op == ops::prod()) return lower_reduction_kernel(k);
  if (k.result_is_empty()) return k.kernel_ir_buffers();  // nothing to compute
  check_anchor_reads_parameters(k);
  if (op == ops::softmax() || op == ops::layer_norm() || op == ops::batch_norm()) return lower_normalization_kernel(k);
  if (op == ops::cumsum() || op == ops::topk_indices()) return lower_scan_kernel(k);
  if (dnnl_handles(*k.master)) {
    std::optional<kernel_ir::Kernel> dnnl = lower_dnnl_kernel(k);
    if (k.library_only) k.layout.clear();  // apply_layouts gives a primitive alone its operands' layouts
    if (dnnl || k.library_only) return dnnl;
  }
  refuse_layout();
  return lower_direct_kernel(k);  // a dtype or shape oneDNN does not make
}

}  // namespace

std::string operator_chain(const Function& fn) {
  std::vector<std::string> names;
  post_order_visit(fn->body, [&](const Expr& e) {
    if (const CallNode* c = as<CallNode>(e))
      if (const OpNode* op = as<OpNode>(c->op)) names.push_back(op->name);
  });
  return join(names, " -> ");
}

bool runs_on_cpu(const KernelSource& kernel) { return Target::get(kernel.target)->kind() == DeviceKind::kCPU; }

KernelSource lower_kernel_source(const Function& primitive, const std::string& name,
                                 const std::vector<bool>& constant_inputs, const AnchorLibrary& library) {
  CpuKernel k;
  k.library = &library;
  k.name = c_identifier(name, "_");
  k.function = flatten_parameters(primitive);
  k.constant_inputs = constant_inputs;
  k.constant_inputs.resize(k.function->params.size(), false);
  k.root = as<CallNode>(k.function->body);
  if (!k.root || !as<OpNode>(k.root->op))
    throw Error(ErrorKind::kBackend, "a primitive function's body must be an operator call", primitive->span());
  flatten_type(k.root->checked_type(), &k.outputs, k.root->span());
  inspect_body(k);
  // An element-wise kernel's loops, or an anchored convolution's epilogue
  // loop, run in the layout PlanLayouts gave the result (a primitive alone
  // clears it: its layouts are its operands').
  k.layout = primitive->virtual_device()->layout();

  KernelSource source;
  source.name = k.name;
  source.outputs = k.outputs;
  source.span = primitive->span();
  if (!source.span.defined()) {
    std::vector<Span> spans;
    post_order_visit(k.function->body, [&](const Expr& e) {
      if (is<CallNode>(e)) spans.push_back(e->span());
    });
    source.span = Span::fused(spans);
  }
  for (const Var& p : k.function->params) source.inputs.push_back(TensorType(as_tensor(p->checked_type())));
  std::optional<kernel_ir::Kernel> lowered = lower_to_kernel_ir(k);
  source.primitive = k.primitive;
  source.layout = k.layout;
  if (!k.layout.empty() && !k.master)
    if (std::optional<ChannelConcatenation> concatenation = channel_concatenation(*k.function.get()))
      source.laid_out_parts = concatenation->part_params;
  // An anchored convolution's primitive reads its source in that source's layout.
  if (!k.layout.empty() && k.master && k.primitive && k.primitive->src_input >= 0 &&
      !k.primitive->src.format.empty())
    source.laid_out_parts = {k.primitive->src_input};
  if (!lowered) return source;  // no code: the entry function runs the primitive
  kernel_ir::Kernel kernel = std::move(*lowered);
  kernel.comment = operator_chain(k.function);
  kernel.span = source.span;
  source.elementwise_in_place_safe = kernel.outputs_may_alias_inputs;
  source.kernel_ir = std::move(kernel);
  return source;
}

}  // namespace switchyard
