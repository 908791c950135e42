// Interpreter values: construction, relabelling, flattening and summaries.
#include "interp/value.h"

#include "support/error.h"

namespace switchyard {

Value Value::make_tensor(NDArray data, const VirtualDevice* device) {
  Value v;
  v.kind = Kind::kTensor;
  v.tensor = std::move(data);
  v.device = device ? device : VirtualDevice::unconstrained();
  return v;
}

Value Value::make_tuple(std::vector<Value> fields) {
  Value v;
  v.kind = Kind::kTuple;
  v.fields = TupleFields(std::move(fields));
  return v;
}

Value Value::make_closure(Function function, std::unordered_map<const VarNode*, Value> captured) {
  Value v;
  v.kind = Kind::kClosure;
  v.closure = std::make_shared<const Closure>(Closure{std::move(function), std::move(captured)});
  return v;
}

Value relabel_value(const Value& value, const VirtualDevice* device) {
  // Post-order over nested tuples with an explicit stack: a frame's
  // relabelled fields are complete when its last field has been done.
  struct Frame {
    const Value* tuple;
    std::vector<Value> done;
  };
  auto relabel_leaf = [&](const Value& v) { return v.is_tensor() ? Value::make_tensor(v.tensor, device) : v; };
  if (!value.is_tuple()) return relabel_leaf(value);
  std::vector<Frame> stack{{&value, {}}};
  while (true) {
    Frame& top = stack.back();
    if (top.done.size() < top.tuple->fields.size()) {
      const Value& next = top.tuple->fields[top.done.size()];
      if (next.is_tuple()) {
        stack.push_back({&next, {}});
      } else {
        top.done.push_back(relabel_leaf(next));
      }
      continue;
    }
    Value tuple = Value::make_tuple(std::move(top.done));
    stack.pop_back();
    if (stack.empty()) return tuple;
    stack.back().done.push_back(std::move(tuple));
  }
}

std::vector<Value> flatten_tensors(const Value& value) {
  std::vector<Value> out;
  // Explicit stack, pushed in reverse so fields come out in order.
  std::vector<const Value*> stack{&value};
  while (!stack.empty()) {
    const Value* v = stack.back();
    stack.pop_back();
    if (v->is_tensor()) {
      out.push_back(*v);
    } else if (v->is_closure()) {
      throw Error(ErrorKind::kUsage, "the result contains a function value, which has no tensor form");
    } else {
      for (size_t i = v->fields.size(); i-- > 0;) stack.push_back(&v->fields[i]);
    }
  }
  return out;
}

std::vector<NDArray> flatten_value(const Value& value) {
  std::vector<NDArray> out;
  for (const Value& v : flatten_tensors(value)) out.push_back(v.tensor);
  return out;
}

std::string value_summary(const Value& value) {
  std::string out;
  // Each frame is a tuple being printed and the index of its next field.
  struct Frame {
    const Value* tuple;
    size_t next;
  };
  std::vector<Frame> stack;
  const Value* current = &value;
  while (true) {
    if (current) {
      if (current->is_tensor()) {
        const VirtualDevice* device = current->device;
        out += type_to_string(tensor_type(current->tensor.shape(), current->tensor.dtype())) + " on " +
               (device->is_fully_unconstrained() ? std::string("?") : device->str());
      } else if (current->is_closure()) {
        out += "closure of " + std::to_string(current->closure->function->params.size()) + " parameters";
      } else {
        out += "(";
        stack.push_back({current, 0});
      }
      current = nullptr;
    }
    if (stack.empty()) break;
    Frame& top = stack.back();
    if (top.next < top.tuple->fields.size()) {
      if (top.next > 0) out += ", ";
      current = &top.tuple->fields[top.next++];
    } else {
      out += ")";
      stack.pop_back();
    }
  }
  return out;
}

}  // namespace switchyard
