// Lowering of the entry function to steps over buffers, with an explicit
// work list so a 1,000,000-deep chain of lets or calls needs no native stack.
#include "lower/lower.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

#include "analysis/describe.h"
#include "ir/functor.h"
#include "lower/contiguous_slice.h"
#include "ir/output_names.h"
#include "op/placement_ops.h"
#include "op/registry.h"
#include "support/error.h"
#include "support/identifier.h"

namespace switchyard {

namespace {

// Where a value lives: one buffer, or one location per tuple field.
struct Location {
  int buffer = -1;
  std::vector<Location> fields;
  bool is_tuple() const { return buffer < 0; }
};

// Leaves of a location in order (tuples flattened depth-first), iteratively.
std::vector<int> leaves(const Location& location) {
  std::vector<int> out;
  std::vector<const Location*> stack{&location};
  while (!stack.empty()) {
    const Location* top = stack.back();
    stack.pop_back();
    if (!top->is_tuple()) {
      out.push_back(top->buffer);
      continue;
    }
    for (auto it = top->fields.rbegin(); it != top->fields.rend(); ++it) stack.push_back(&*it);
  }
  return out;
}

// Tensor types of a (possibly tuple) type in order, tuples flattened.
std::vector<TensorType> tensor_leaves(const Type& type) {
  std::vector<TensorType> out;
  std::vector<const TypeNode*> stack{type.get()};
  while (!stack.empty()) {
    const TypeNode* top = stack.back();
    stack.pop_back();
    if (top && top->type_kind() == TypeKind::kTensor) {
      out.push_back(TensorType(static_cast<const TensorTypeNode*>(top)));
    } else if (top && top->type_kind() == TypeKind::kTuple) {
      const auto& fields = static_cast<const TupleTypeNode*>(top)->fields;
      for (auto it = fields.rbegin(); it != fields.rend(); ++it) stack.push_back(it->get());
    } else {
      throw Error(ErrorKind::kBackend, "a value of type " + type_to_string(type) + " cannot live in a buffer");
    }
  }
  return out;
}

// A location shaped like `type` whose leaves are `buffers` (consumed in order).
Location shape_like(const Type& type, const std::vector<int>& buffers) {
  size_t next = 0;
  Location root;
  struct Frame {
    const TypeNode* type;
    Location* target;
  };
  std::vector<Frame> stack{{type.get(), &root}};
  while (!stack.empty()) {
    Frame frame = stack.back();
    stack.pop_back();
    if (frame.type->type_kind() != TypeKind::kTuple) {
      frame.target->buffer = buffers.at(next++);
      continue;
    }
    const auto& fields = static_cast<const TupleTypeNode*>(frame.type)->fields;
    frame.target->fields.resize(fields.size());
    for (size_t i = fields.size(); i-- > 0;) stack.push_back({fields[i].get(), &frame.target->fields[i]});
  }
  return root;
}

// A readable kernel name from the operators a primitive function calls.
std::string kernel_base_name(const Function& primitive) {
  std::vector<std::string> ops;
  post_order_visit(primitive->body, [&](const Expr& e) {
    if (const CallNode* call = as<CallNode>(e))
      if (const OpNode* op = as<OpNode>(call->op)) ops.push_back(op->name);
  });
  constexpr size_t kMostNamed = 4;
  std::string name = ops.size() > 1 ? "fused" : "";
  for (size_t i = 0; i < ops.size() && i < kMostNamed; ++i) name += (name.empty() ? "" : "_") + ops[i];
  if (ops.size() > kMostNamed) name += "_etc";
  return c_identifier(name, "kernel");
}

class Lowerer {
 public:
  Lowerer(const IRModule& mod, const CompilationConfig& config) : mod_(mod), config_(config) {}

  LoweredProgram lower(const std::string& entry) {
    const Function& fn = mod_.lookup(entry);
    program_.entry = entry;
    for (const Var& param : fn->params) {
      TensorType type = tensor_leaves(param->checked_type()).at(0);
      int buffer = add_buffer(LoweredBuffer::Kind::kInput, param, type, "%" + param->name_hint);
      buffers()[size_t(buffer)].index = int(program_.inputs.size());
      program_.inputs.push_back(buffer);
      program_.input_names.push_back(param->name_hint);
      bind(param.get(), Location{buffer, {}});
    }
    run(fn->body);
    make_outputs(location_of(fn->body));
    program_.output_names = output_names(fn, program_.outputs.size());
    return std::move(program_);
  }

 private:
  enum class TaskKind : uint8_t { kVisit, kFinish, kLetBody, kLetDone, kIfThen, kIfElse, kIfEnd, kCallReturn };
  struct Task {
    TaskKind kind;
    Expr expr;
  };

  std::vector<LoweredBuffer>& buffers() { return program_.buffers; }

  const std::string& base_name(const Function& primitive) {
    auto it = base_names_.find(primitive.get());
    if (it == base_names_.end()) it = base_names_.emplace(primitive.get(), kernel_base_name(primitive)).first;
    return it->second;
  }

  int device_index(const Expr& node) {
    const VirtualDevice* vd = node->virtual_device();
    for (size_t i = 0; i < config_.devices.size(); ++i)
      if (config_.devices[i]->same_device(vd)) return int(i);
    throw Error(ErrorKind::kBackend,
                "cannot lower " + describe_node(node) + ": device " + vd->device_name() +
                    " is not among the build's devices (" + config_.to_string() + ")",
                node->span());
  }

  static std::string scope_of(const Expr& node) {
    const std::string& scope = node->virtual_device()->memory_scope();
    return scope.empty() ? "global" : scope;
  }

  int add_buffer(LoweredBuffer::Kind kind, const Expr& placed_at, TensorType type, std::string label) {
    LoweredBuffer b;
    b.kind = kind;
    b.device = device_index(placed_at);
    b.scope = scope_of(placed_at);
    b.layout = placed_at->virtual_device()->layout();  // PlanLayouts' choice; apply_layouts checks it
    b.type = std::move(type);
    b.label = std::move(label);
    b.span = placed_at->span();
    buffers().push_back(std::move(b));
    return int(buffers().size()) - 1;
  }

  void add_step(LoweredStep::Kind kind, int index, std::vector<int> inputs, std::vector<int> outputs, Span span) {
    LoweredStep step;
    step.kind = kind;
    step.index = index;
    step.inputs = std::move(inputs);
    step.outputs = std::move(outputs);
    step.span = std::move(span);
    program_.steps.push_back(std::move(step));
  }

  // Memo entries made inside a branch or a global function's body are dropped
  // when it ends: code emitted there does not run on every path.
  void bind(const ExprNode* node, Location location) {
    if (memo_.emplace(node, int(locations_.size())).second) {
      locations_.push_back(std::move(location));
      if (!scope_starts_.empty()) undo_log_.push_back(node);
    }
  }
  void open_scope() { scope_starts_.push_back(undo_log_.size()); }
  void close_scope() {
    size_t start = scope_starts_.back();
    scope_starts_.pop_back();
    while (undo_log_.size() > start) {
      memo_.erase(undo_log_.back());
      undo_log_.pop_back();
    }
  }
  const Location& location_of(const Expr& e) {
    auto it = memo_.find(e.get());
    if (it == memo_.end())
      throw Error(ErrorKind::kBackend, "cannot lower " + describe_node(e) + ": it is used outside its scope", e->span());
    return locations_[size_t(it->second)];
  }

  void run(const Expr& root) {
    std::vector<Task> tasks{{TaskKind::kVisit, root}};
    while (!tasks.empty()) {
      Task task = std::move(tasks.back());
      tasks.pop_back();
      const Expr& e = task.expr;
      switch (task.kind) {
        case TaskKind::kVisit:
          if (!memo_.count(e.get())) visit(e, tasks);
          break;
        case TaskKind::kFinish:
          finish(e, tasks);
          break;
        case TaskKind::kLetBody: {
          const LetNode* let = as<LetNode>(e);
          Location value = location_of(let->value);
          std::vector<int> value_leaves = leaves(value);
          if (value_leaves.size() == 1) {
            LoweredBuffer& b = buffers()[size_t(value_leaves[0])];
            if (b.kind == LoweredBuffer::Kind::kIntermediate && b.label.rfind('%', 0) != 0)
              b.label = "%" + let->var->name_hint + " = " + b.label;
          }
          bind(let->var.get(), std::move(value));
          tasks.push_back({TaskKind::kLetDone, e});
          tasks.push_back({TaskKind::kVisit, let->body});
          break;
        }
        case TaskKind::kLetDone:
          bind(e.get(), location_of(as<LetNode>(e)->body));
          break;
        case TaskKind::kIfThen: {
          const IfNode* branch = as<IfNode>(e);
          std::vector<int> condition = leaves(location_of(branch->cond));
          std::vector<int> results;
          for (const TensorType& t : tensor_leaves(e->checked_type()))
            results.push_back(add_buffer(LoweredBuffer::Kind::kIntermediate, e, t, "if result"));
          if_results_[e.get()] = shape_like(e->checked_type(), results);
          add_step(LoweredStep::Kind::kIfBegin, -1, condition, {}, e->span());
          branch_starts_.push_back({buffers().size(), program_.steps.size()});
          open_scope();
          tasks.push_back({TaskKind::kIfElse, e});
          tasks.push_back({TaskKind::kVisit, branch->then_branch});
          break;
        }
        case TaskKind::kIfElse:
          move_into_if_result(e, as<IfNode>(e)->then_branch);
          close_scope();
          add_step(LoweredStep::Kind::kElse, -1, {}, {}, e->span());
          branch_starts_.back() = {buffers().size(), program_.steps.size()};
          open_scope();
          tasks.push_back({TaskKind::kIfEnd, e});
          tasks.push_back({TaskKind::kVisit, as<IfNode>(e)->else_branch});
          break;
        case TaskKind::kIfEnd: {
          move_into_if_result(e, as<IfNode>(e)->else_branch);
          branch_starts_.pop_back();
          close_scope();
          add_step(LoweredStep::Kind::kIfEnd, -1, {}, {}, e->span());
          auto it = if_results_.find(e.get());
          Location result = std::move(it->second);
          if_results_.erase(it);
          bind(e.get(), std::move(result));
          break;
        }
        case TaskKind::kCallReturn: {
          Location result = location_of((*callee_of(e))->body);
          close_scope();
          active_functions_.pop_back();
          bind(e.get(), std::move(result));
          break;
        }
      }
    }
  }

  void visit(const Expr& e, std::vector<Task>& tasks) {
    switch (e->kind()) {
      case ExprKind::kVar:
        location_of(e);  // throws for a variable used outside its scope
        return;
      case ExprKind::kConstant:
        bind(e.get(), Location{weight_buffer(e), {}});
        return;
      case ExprKind::kCall: {
        tasks.push_back({TaskKind::kFinish, e});
        const auto& args = as<CallNode>(e)->args;
        for (auto it = args.rbegin(); it != args.rend(); ++it) tasks.push_back({TaskKind::kVisit, *it});
        return;
      }
      case ExprKind::kTuple: {
        tasks.push_back({TaskKind::kFinish, e});
        const auto& fields = as<TupleNode>(e)->fields;
        for (auto it = fields.rbegin(); it != fields.rend(); ++it) tasks.push_back({TaskKind::kVisit, *it});
        return;
      }
      case ExprKind::kTupleGetItem:
        tasks.push_back({TaskKind::kFinish, e});
        tasks.push_back({TaskKind::kVisit, as<TupleGetItemNode>(e)->tuple});
        return;
      case ExprKind::kLet:
        tasks.push_back({TaskKind::kLetBody, e});
        tasks.push_back({TaskKind::kVisit, as<LetNode>(e)->value});
        return;
      case ExprKind::kIf:
        tasks.push_back({TaskKind::kIfThen, e});
        tasks.push_back({TaskKind::kVisit, as<IfNode>(e)->cond});
        return;
      case ExprKind::kFunction:
      case ExprKind::kGlobalVar:
      case ExprKind::kOp:
        throw Error(ErrorKind::kBackend, "cannot lower " + describe_node(e) + ": a function value cannot be compiled",
                    e->span());
    }
  }

  void finish(const Expr& e, std::vector<Task>& tasks) {
    if (const TupleNode* tuple = as<TupleNode>(e)) {
      Location location;
      for (const Expr& f : tuple->fields) location.fields.push_back(location_of(f));
      bind(e.get(), std::move(location));
      return;
    }
    if (const TupleGetItemNode* item = as<TupleGetItemNode>(e)) {
      const Location& whole = location_of(item->tuple);
      if (!whole.is_tuple() || item->index < 0 || size_t(item->index) >= whole.fields.size())
        throw Error(ErrorKind::kBackend, "cannot lower " + describe_node(e) + ": no such tuple field", e->span());
      Location field = whole.fields[size_t(item->index)];
      bind(e.get(), std::move(field));
      return;
    }
    const CallNode* call = as<CallNode>(e);
    if (const OpNode* op = as<OpNode>(call->op)) {
      if (op == device_copy_op()) return lower_device_copy(e);
      return lower_kernel_call(e, Function());  // fusion left it alone: a one-operator kernel
    }
    if (const FunctionNode* literal = as<FunctionNode>(call->op)) {
      if (!literal->is_primitive())
        throw Error(ErrorKind::kBackend, "cannot lower " + describe_node(e) + ": only primitive functions are called",
                    e->span());
      return lower_kernel_call(e, downcast<FunctionNode>(call->op));
    }
    const Function* callee = callee_of(e);
    if ((*callee)->is_primitive()) return lower_kernel_call(e, *callee);
    // A global function: its body is lowered in place, with its parameters
    // bound to the argument locations.
    const std::string& name = as<GlobalVarNode>(call->op)->name;
    for (const std::string& active : active_functions_)
      if (active == name)
        throw Error(ErrorKind::kBackend, "cannot lower " + describe_node(e) + ": @" + name + " is recursive",
                    e->span());
    std::vector<Location> args;
    for (const Expr& a : call->args) args.push_back(location_of(a));
    active_functions_.push_back(name);
    open_scope();
    for (size_t i = 0; i < (*callee)->params.size() && i < args.size(); ++i)
      bind((*callee)->params[i].get(), std::move(args[i]));
    tasks.push_back({TaskKind::kCallReturn, e});
    tasks.push_back({TaskKind::kVisit, (*callee)->body});
  }

  const Function* callee_of(const Expr& call) {
    const GlobalVarNode* global = as<GlobalVarNode>(as<CallNode>(call)->op);
    const Function* fn = global ? mod_.find(global->name) : nullptr;
    if (!fn)
      throw Error(ErrorKind::kBackend, "cannot lower " + describe_node(call) + ": the callee is not a known function",
                  call->span());
    return fn;
  }

  // Where the call's result starts in its one argument's dense bytes, when it
  // only renames them (a reshape, squeeze or expand_dims) or takes one
  // contiguous range of them (a strided slice of whole rows), alone or fused
  // alone, on a CPU device, so that a memcpy in the entry does what a
  // compiled kernel would; nullopt otherwise.
  std::optional<uint64_t> host_move_offset(const Expr& e, const Function& primitive, const std::vector<int>& inputs) {
    if (inputs.size() != 1 || (primitive && primitive->params.size() != 1)) return std::nullopt;
    const TensorTypeNode* out = as_tensor(e->checked_type());
    const LoweredBuffer& from = buffers()[size_t(inputs[0])];
    if (!out || config_.devices[size_t(device_index(e))]->kind() != DeviceKind::kCPU || from.type->dtype != out->dtype)
      return std::nullopt;
    const CallNode* op_call = primitive ? as<CallNode>(primitive->body) : as<CallNode>(e);
    // A lone view moves the whole buffer, whatever its layout (apply_layouts checks it).
    if (op_call && data_movement(*op_call) == DataMovement::kView &&
        op_call->args[0].get() == (primitive ? primitive->params[0].get() : op_call->args[0].get()))
      return 0;
    // A slice reads dense bytes only, and skips zero-sized results (no storage to point into).
    if (!from.layout.empty() || !e->virtual_device()->layout().empty() || out->nbytes() == 0) return std::nullopt;
    std::optional<int64_t> offset = primitive ? contiguous_range_offset(primitive->body, primitive->params[0])
                                              : contiguous_range_offset(e, as<CallNode>(e)->args.at(0));
    if (!offset) return std::nullopt;
    return uint64_t(*offset) * uint64_t(dtype_bytes(out->dtype));
  }

  // A call of a primitive function, or (`primitive` null) of an operator.
  void lower_kernel_call(const Expr& e, const Function& primitive) {
    const CallNode* call = as<CallNode>(e);
    std::vector<int> inputs;
    for (const Expr& a : call->args)
      for (int b : leaves(location_of(a))) inputs.push_back(b);
    if (std::optional<uint64_t> offset = host_move_offset(e, primitive, inputs)) {
      const std::string what = primitive ? base_name(primitive) : as<OpNode>(call->op)->name;
      int out = add_buffer(LoweredBuffer::Kind::kIntermediate, e, tensor_leaves(e->checked_type()).at(0),
                           what + " of " + buffers()[size_t(inputs[0])].label);
      add_step(LoweredStep::Kind::kMove, -1, inputs, {out}, e->span());
      program_.steps.back().offset = *offset;
      bind(e.get(), shape_like(e->checked_type(), {out}));
      return;
    }
    LoweredKernelCall kernel;
    kernel.primitive = primitive;
    if (!primitive) kernel.operator_call = downcast<CallNode>(e);
    kernel.device = device_index(e);
    kernel.span = e->span();
    kernel.base_name = primitive ? base_name(primitive) : c_identifier(as<OpNode>(call->op)->name, "kernel");
    std::vector<TensorType> types = tensor_leaves(e->checked_type());
    std::vector<int> outputs;
    for (size_t i = 0; i < types.size(); ++i) {
      std::string label = kernel.base_name;
      if (types.size() > 1) label.append(".").append(std::to_string(i));
      outputs.push_back(add_buffer(LoweredBuffer::Kind::kIntermediate, e, types[i], label));
    }
    add_step(LoweredStep::Kind::kKernel, int(program_.kernel_calls.size()), inputs, outputs, e->span());
    for (int b : inputs)
      if (!types.empty() && buffers()[size_t(b)].kind == LoweredBuffer::Kind::kIntermediate &&
          buffers()[size_t(b)].type == types[0])
        program_.steps.back().in_place_candidates.push_back(b);
    program_.kernel_calls.push_back(std::move(kernel));
    bind(e.get(), shape_like(e->checked_type(), outputs));
  }

  void lower_device_copy(const Expr& e) {
    Location source = location_of(as<CallNode>(e)->args[0]);
    std::vector<int> copied;
    for (int b : leaves(source)) {
      const LoweredBuffer from = buffers()[size_t(b)];
      int to = add_buffer(LoweredBuffer::Kind::kIntermediate, e, from.type, "copy of " + from.label);
      const LoweredBuffer& dst = buffers()[size_t(to)];
      if (from.device == dst.device) {
        // A copy between scopes of one device stays on that device.
        add_step(LoweredStep::Kind::kMove, -1, {b}, {to}, e->span());
      } else {
        add_step(LoweredStep::Kind::kCopy, int(program_.copies.size()), {b}, {to}, e->span());
        program_.copies.push_back({from.device, dst.device, from.bytes(), e->span()});
      }
      copied.push_back(to);
    }
    bind(e.get(), shape_like(e->checked_type(), copied));
  }

  // A branch's result reaches the if's result buffers. A buffer the branch
  // itself made is replaced by the result buffer in the branch's steps, so
  // its producer writes the result directly; anything else is moved.
  void move_into_if_result(const Expr& branch_node, const Expr& branch) {
    std::vector<int> from = leaves(location_of(branch));
    std::vector<int> to = leaves(if_results_.at(branch_node.get()));
    auto [first_buffer, first_step] = branch_starts_.back();
    std::vector<bool> replaced(buffers().size(), false);
    for (size_t i = 0; i < from.size() && i < to.size(); ++i) {
      const LoweredBuffer& source = buffers()[size_t(from[i])];
      const LoweredBuffer& target = buffers()[size_t(to[i])];
      if (size_t(from[i]) >= first_buffer && !replaced[size_t(from[i])] &&
          source.kind == LoweredBuffer::Kind::kIntermediate && source.device == target.device &&
          source.scope == target.scope) {
        replaced[size_t(from[i])] = true;
        for (size_t s = first_step; s < program_.steps.size(); ++s) {
          LoweredStep& step = program_.steps[s];
          for (std::vector<int>* list : {&step.inputs, &step.outputs, &step.in_place_candidates})
            std::replace(list->begin(), list->end(), from[i], to[i]);
        }
        continue;
      }
      add_step(LoweredStep::Kind::kMove, -1, {from[i]}, {to[i]}, branch->span());
    }
  }

  // One weight per constant data and device: a constant used on two devices
  // is stored twice, each copy loaded onto its device.
  int weight_buffer(const Expr& e) {
    const ConstantNode* constant = as<ConstantNode>(e);
    int device = device_index(e);
    // Keyed by storage, shape and device: reshaped constants share storage.
    auto key = std::make_tuple(constant->data.defined() ? constant->data.storage_identity()
                                                        : static_cast<const void*>(constant),
                               constant->tensor_type().get(), device);
    auto it = weights_.find(key);
    if (it != weights_.end()) return it->second;
    std::string name = "const_" + std::to_string(program_.weights.size());
    int buffer = add_buffer(LoweredBuffer::Kind::kWeight, e, constant->tensor_type(), name);
    buffers()[size_t(buffer)].index = int(program_.weights.size());
    program_.weights.push_back({constant->data, device, name, e->span()});
    weights_.emplace(key, buffer);
    return buffer;
  }

  // The result's buffers become the caller's output buffers; a value that is
  // not a fresh intermediate (an input, a weight, a repeated field) is moved.
  void make_outputs(const Location& result) {
    for (int b : leaves(result)) {
      int index = int(program_.outputs.size());
      LoweredBuffer& buffer = buffers()[size_t(b)];
      if (buffer.kind == LoweredBuffer::Kind::kIntermediate) {
        buffer.kind = LoweredBuffer::Kind::kOutput;
        buffer.index = index;
        buffer.label = "output " + std::to_string(index) + " = " + buffer.label;
        program_.outputs.push_back(b);
        continue;
      }
      LoweredBuffer output = buffer;
      output.kind = LoweredBuffer::Kind::kOutput;
      output.index = index;
      output.label = "output " + std::to_string(index) + " = " + buffer.label;
      buffers().push_back(std::move(output));
      int out = int(buffers().size()) - 1;
      add_step(LoweredStep::Kind::kMove, -1, {b}, {out}, buffers()[size_t(out)].span);
      program_.outputs.push_back(out);
    }
  }

  const IRModule& mod_;
  const CompilationConfig& config_;
  LoweredProgram program_;
  // Where each lowered node's value lives: an index into locations_ (which
  // only grows; entries dropped from the memo stay behind unused).
  std::unordered_map<const ExprNode*, int> memo_;
  std::vector<Location> locations_;
  std::vector<const ExprNode*> undo_log_;
  std::vector<size_t> scope_starts_;
  std::unordered_map<const ExprNode*, Location> if_results_;
  std::unordered_map<const FunctionNode*, std::string> base_names_;
  // Per open if: the first buffer and step of the branch being lowered.
  std::vector<std::pair<size_t, size_t>> branch_starts_;
  std::vector<std::string> active_functions_;
  std::map<std::tuple<const void*, const TensorTypeNode*, int>, int> weights_;
};

}  // namespace

LoweredProgram lower_entry(const IRModule& mod, const std::string& entry, const CompilationConfig& config) {
  return Lowerer(mod, config).lower(entry);
}

}  // namespace switchyard
