// The element lowering: an explicit work list evaluates operator trees at
// element indices, appending one let per operator. Operators keep the
// semantics of the reference kernels through render_cpu_scalar: float16 and
// bfloat16 compute in float and round after every operator; integers wrap.
#include "codegen/element_lowering.h"

#include "codegen/kernel_code.h"
#include "op/elementwise_attrs.h"
#include "op/handles.h"
#include "op/movement_attrs.h"
#include "op/registry.h"
#include "op/relation_helpers.h"
#include "support/error.h"

namespace switchyard {

namespace ki = kernel_ir;

namespace {

// A 0-d constant as an immediate of its dtype.
ki::Expr constant_value(const ConstantNode& constant) {
  const NDArray& data = constant.data;
  DType dtype = data.dtype();
  if (dtype == DType::kInt64) return ki::int_value(dtype, data.as<int64_t>()[0]);
  if (dtype == DType::kInt32) return ki::int_value(dtype, data.as<int32_t>()[0]);
  if (dtype_is_float(dtype)) return ki::float_value(dtype, data.get_as_double(0));
  if (dtype == DType::kUInt64) return ki::int_value(dtype, int64_t(data.as<uint64_t>()[0]));  // its bits
  return ki::int_value(dtype, int64_t(data.get_as_double(0)));  // exact below 64 bits
}

std::string at_span_of(const Span& span) { return span.defined() ? " at " + span.to_string() : ""; }

// Whether `call` casts a float32 clip, whose bounds lie within +-2^30, to an
// integer of at most 32 bits (a quantize's last step): the clip's value is
// then never NaN (clip(NaN) is a_min) and int32 holds it exactly, so
// truncating through int32 gives what the saturating cast gives.
bool clipped_into_int32(const CallNode& call) {
  if (as<OpNode>(call.op) != ops::cast() || call.args.size() != 1) return false;
  DType out = dtype_of(Expr(&call));
  if (dtype_is_float(out) || out == DType::kBool || dtype_bytes(out) > 4) return false;
  const CallNode* clip = as<CallNode>(call.args[0]);
  if (!clip || as<OpNode>(clip->op) != ops::clip() || dtype_of(call.args[0]) != DType::kFloat32) return false;
  const ClipAttrs bounds = clip_attrs(*clip->attrs);
  constexpr double kLimit = 0x1p30;
  return bounds.a_min >= -kLimit && bounds.a_max <= kLimit;
}

// `index` less `shift`: the operand of `index` = x + shift, else a difference.
ki::Expr unshift(const ki::Expr& index, const ki::Expr& shift) {
  if (index->kind == ki::ExprKind::kBinary && index->binary == ki::BinaryOp::kAdd) {
    if (ki::equal(index->operands[1], shift)) return index->operands[0];
    if (ki::equal(index->operands[0], shift)) return index->operands[1];
  }
  return ki::binary(ki::BinaryOp::kSub, index, shift);
}

}  // namespace

ElementLowering::ElementLowering(std::vector<ki::Stmt>& out, int& counter)
    : out_(out), counter_(counter), scopes_(1) {}

void ElementLowering::bind_buffer(const ExprNode* node, std::string name) { buffers_[node] = std::move(name); }

void ElementLowering::bind_value(const ExprNode* node, const IndexAt& index, ki::Expr value) {
  scopes_.front()[Key{node, index}] = std::move(value);
  buffers_.erase(node);
  bound_.insert(node);
}

std::string ElementLowering::fresh(const std::string& base) {
  return identifier(base) + "_" + std::to_string(counter_++);
}

ki::Expr ElementLowering::lower(const Expr& node, const IndexAt& index) {
  schedule(node, index);
  while (!work_.empty()) {
    std::function<void()> task = std::move(work_.back());
    work_.pop_back();
    task();
  }
  return pop();
}

void ElementLowering::schedule(const Expr& node, const IndexAt& index) {
  work_.push_back([this, node, index] { evaluate(node, index); });
}

ki::Expr ElementLowering::pop() {
  ki::Expr v = std::move(results_.back());
  results_.pop_back();
  return v;
}

const ki::Expr* ElementLowering::lookup(const Key& key) const {
  for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it)
    if (auto found = it->find(key); found != it->end()) return &found->second;
  return nullptr;
}

void ElementLowering::remember(const Key& key, const ki::Expr& value) { scopes_.back()[key] = value; }

void ElementLowering::evaluate(const Expr& node, const IndexAt& index) {
  Key key{node.get(), index};
  if (const ki::Expr* known = lookup(key)) return results_.push_back(*known);
  if (bound_.count(node.get()))
    throw Error(ErrorKind::kBackend, "an anchor's result is read at another element than its own in its epilogue",
                node->span());
  if (auto buffer = buffers_.find(node.get()); buffer != buffers_.end()) {
    DType dtype = dtype_of(node);
    const VarNode* var = as<VarNode>(node);
    std::string name = fresh(argument_buffers_.count(node.get()) ? buffer->second : var ? var->name_hint : "value");
    block().push_back(ki::let(name, dtype, ki::load(buffer->second, dtype, offset_of(index, shape_of(node)))));
    ki::Expr value = ki::var(name, dtype);
    remember(key, value);
    return results_.push_back(value);
  }
  if (const ConstantNode* constant = as<ConstantNode>(node)) {
    if (constant->data.ndim() != 0)
      throw Error(ErrorKind::kBackend, "a tensor constant inside a primitive function must be one of its parameters",
                  node->span());
    return results_.push_back(constant_value(*constant));
  }
  const CallNode* call = as<CallNode>(node);
  if (call && as<OpNode>(call->op)) return evaluate_call(call, index, key);
  throw Error(ErrorKind::kBackend,
              std::string("CPU code generation cannot inline a ") + expr_kind_name(node->kind()) + " into a loop",
              node->span());
}

void ElementLowering::evaluate_call(const CallNode* call, const IndexAt& index, const Key& key) {
  const OpNode* op = as<OpNode>(call->op);
  if (op == ops::concatenate()) return evaluate_concatenate(call, index, key);
  if (op == ops::take()) return evaluate_take(call, index, key);
  OpPattern pattern = op->def->pattern;
  bool inlinable = pattern == OpPattern::kElementwise || pattern == OpPattern::kBroadcast ||
                   (pattern == OpPattern::kInjective && op != ops::split());
  if (!inlinable)
    throw Error(ErrorKind::kBackend,
                "operator '" + op->name + "' (" + op_pattern_name(pattern) +
                    ") cannot be inlined into an element loop: a CPU kernel holds one anchor or reduction, "
                    "and only element-wise, broadcast and injective operators around it",
                call->span());
  std::vector<IndexAt> indices;
  for (size_t i = 0; i < call->args.size(); ++i) indices.push_back(argument_index(*call, i, index, &divided_));
  size_t arity = call->args.size();
  work_.push_back([this, call, key, arity] { combine(call, key, arity); });
  for (size_t i = arity; i-- > 0;) schedule(call->args[i], indices[i]);
}

void ElementLowering::combine(const CallNode* call, const Key& key, size_t arity) {
  std::vector<ki::Expr> values(arity);
  for (size_t i = arity; i-- > 0;) values[i] = pop();
  const OpNode* op = as<OpNode>(call->op);
  if (data_movement(*call) != DataMovement::kNone) {  // the index did the work
    remember(key, values[0]);
    return results_.push_back(values[0]);
  }
  ScalarCall scalar{op, call->attrs, {}, dtype_of(Expr(call)), call->span()};
  for (const Expr& arg : call->args) scalar.arg_dtypes.push_back(dtype_of(arg));
  std::string name = fresh(op->name);
  DType dtype = scalar.result_dtype;
  ki::Expr computed = clipped_into_int32(*call) ? ki::cast_in_int32_range(dtype, values[0])
                                                : ki::call(std::move(scalar), std::move(values));
  block().push_back(ki::let(name, dtype, std::move(computed), op->name + at_span_of(call->span())));
  ki::Expr value = ki::var(name, dtype);
  remember(key, value);
  results_.push_back(value);
}

void ElementLowering::evaluate_concatenate(const CallNode* call, const IndexAt& index, const Key& key) {
  const TupleNode* tuple = as<TupleNode>(call->args[0]);
  if (!tuple) throw Error(ErrorKind::kBackend, "concatenate expects a tuple of tensors here", call->span());
  const std::vector<int64_t>& out_shape = shape_of(Expr(call));
  int64_t axis = normalize_axis(concatenate_attrs(*call->attrs).axis, int64_t(out_shape.size()), ops::concatenate()->name);
  if (auto known = known_parts_.find(call); known != known_parts_.end())
    return evaluate_concatenation_part(call, size_t(axis), known->second.first, known->second.second, index, key);
  std::vector<ki::Expr> coords = coordinates_of(index, out_shape, &divided_);
  ki::Expr along = coords[size_t(axis)];
  struct Part {
    Expr field;
    int64_t begin, end;
  };
  std::vector<Part> parts;
  int64_t begin = 0;
  for (const Expr& field : tuple->fields) {
    int64_t extent = shape_of(field)[size_t(axis)];
    if (extent > 0) parts.push_back({field, begin, begin + extent});
    begin += extent;
  }
  std::string name = fresh("concatenate");
  DType dtype = dtype_of(Expr(call));
  block().push_back(ki::declare(name, dtype, ops::concatenate()->name + at_span_of(call->span())));
  // Each part is computed only in its branch, where its reads are in bounds;
  // the branches' statements collect in `bodies` until the chain is built.
  auto bodies = std::make_shared<std::vector<std::vector<ki::Stmt>>>();
  std::vector<std::function<void()>> tasks;
  for (const Part& part : parts) {
    std::vector<ki::Expr> c = coords;
    c[size_t(axis)] = ki::add(along, -part.begin);
    tasks.push_back([this] {
      branches_.emplace_back();
      scopes_.emplace_back();
    });
    tasks.push_back([this, field = part.field, i = IndexAt::at_coords(std::move(c))] { schedule(field, i); });
    tasks.push_back([this, name, bodies] {
      branches_.back().push_back(ki::assign(name, pop()));
      bodies->push_back(std::move(branches_.back()));
      branches_.pop_back();
      scopes_.pop_back();
    });
  }
  tasks.push_back([this, name, dtype, key, bodies, along, parts] {
    // The last part needs no test; each earlier one tests the coordinate.
    std::vector<ki::Stmt> chain = bodies->back();
    for (size_t k = parts.size() - 1; k-- > 0;)
      chain = {ki::if_then_else(ki::binary(ki::BinaryOp::kLess, along, ki::index(parts[k].end)), (*bodies)[k],
                                std::move(chain))};
    for (ki::Stmt& s : chain) block().push_back(std::move(s));
    ki::Expr value = ki::var(name, dtype);
    remember(key, value);
    results_.push_back(value);
  });
  for (auto it = tasks.rbegin(); it != tasks.rend(); ++it) work_.push_back(std::move(*it));
}

void ElementLowering::evaluate_take(const CallNode* call, const IndexAt& index, const Key& key) {
  const Expr& data = call->args[0];
  const Expr& indices = call->args[1];
  const std::vector<int64_t>& data_shape = shape_of(data);
  const std::vector<int64_t>& out_shape = shape_of(Expr(call));
  size_t index_rank = shape_of(indices).size();
  const TakeAttrs take = take_attrs(*call->attrs);
  bool flattened = !take.axis;
  int64_t axis = flattened ? 0 : normalize_axis(*take.axis, int64_t(data_shape.size()), ops::take()->name);
  int64_t extent = 1;
  if (flattened)
    for (int64_t d : data_shape) extent *= d;
  else
    extent = data_shape[size_t(axis)];
  if (extent == 0) throw Error(ErrorKind::kBackend, "take from an axis of size 0", call->span());
  std::vector<ki::Expr> coords;
  IndexAt indices_index = index;
  if (!flattened) {
    coords = coordinates_of(index, out_shape, &divided_);
    std::vector<ki::Expr> inner(coords.begin() + axis, coords.begin() + axis + int64_t(index_rank));
    indices_index = inner.empty() ? IndexAt::at_offset(ki::index(0)) : IndexAt::at_coords(inner);
  }
  TakeMode mode = take.mode;
  work_.push_back([=, this] {
    ki::Expr raw = ki::cast(DType::kInt64, pop());
    std::string name = fresh("take_index");
    ki::Expr position_value;
    if (mode == TakeMode::kWrap) {
      ki::Expr remainder = ki::binary(ki::BinaryOp::kMod, raw, ki::index(extent));
      position_value = ki::binary(ki::BinaryOp::kMod, ki::binary(ki::BinaryOp::kAdd, remainder, ki::index(extent)),
                                  ki::index(extent));
    } else if (mode == TakeMode::kFast) {
      position_value = ki::checked_index(raw, extent);  // out of range is an error, as in the interpreter
    } else {
      position_value = ki::select(ki::binary(ki::BinaryOp::kLess, raw, ki::index(0)), ki::index(0),
                                  ki::select(ki::binary(ki::BinaryOp::kGreater, raw, ki::index(extent - 1)),
                                             ki::index(extent - 1), raw));
    }
    block().push_back(ki::let(name, DType::kInt64, position_value,
                              ops::take()->name + " (mode \"" + take_mode_name(mode) + "\")" + at_span_of(call->span())));
    ki::Expr position = ki::var(name);
    IndexAt data_index = IndexAt::at_offset(position);
    if (!flattened) {
      std::vector<ki::Expr> c(coords.begin(), coords.begin() + axis);
      c.push_back(position);
      c.insert(c.end(), coords.begin() + axis + int64_t(index_rank), coords.end());
      data_index = IndexAt::at_coords(std::move(c));
    }
    work_.push_back([this, key] {
      ki::Expr value = pop();
      remember(key, value);
      results_.push_back(value);
    });
    schedule(data, data_index);
  });
  schedule(indices, indices_index);
}

void ElementLowering::evaluate_concatenation_part(const CallNode* call, size_t axis, size_t part,
                                                  const PartStart& start, const IndexAt& index, const Key& key) {
  const TupleNode& tuple = *as<TupleNode>(call->args[0]);
  const std::vector<int64_t>& out_shape = shape_of(Expr(call));
  int64_t part_begin = 0;
  for (size_t f = 0; f < part; ++f) part_begin += shape_of(tuple.fields[f])[axis];
  // The field's element: the result's, shifted back along the axis. With
  // every dimension before the axis of extent 1 the part is one contiguous
  // run of the result, so an offset shifts with no division.
  bool contiguous = true;
  int64_t axis_stride = 1;
  for (size_t d = 0; d < out_shape.size(); ++d) {
    if (d < axis) contiguous = contiguous && out_shape[d] == 1;
    if (d > axis) axis_stride *= out_shape[d];
  }
  auto back = [](const ki::Expr& e, const ki::Expr& shift, int64_t constant) {
    return shift ? unshift(e, shift) : ki::add(e, -constant);
  };
  IndexAt at;
  if (start.offset) {
    std::vector<ki::Expr> coords = coordinates_of(index, out_shape, &divided_);
    coords[axis] = back(coords[axis], start.begin, part_begin);
    at = IndexAt::at(start.offset, std::move(coords));
  } else if (contiguous && index.offset && !index.has_coords) {
    at = IndexAt::at_offset(back(index.offset, start.base, part_begin * axis_stride));
  } else {
    std::vector<ki::Expr> coords = coordinates_of(index, out_shape, &divided_);
    coords[axis] = back(coords[axis], start.begin, part_begin);
    at = contiguous && index.offset ? IndexAt::at(back(index.offset, start.base, part_begin * axis_stride), std::move(coords))
                                    : IndexAt::at_coords(std::move(coords));
  }
  work_.push_back([this, key] {
    ki::Expr value = pop();
    remember(key, value);
    results_.push_back(value);
  });
  schedule(tuple.fields.at(part), at);
}

}  // namespace switchyard
