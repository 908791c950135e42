// Expression nodes. Every node carries its virtual device, source span and
// checked type (null until InferType). Nodes are immutable: passes rebuild
// them only through with_fields (ir/with_fields.h), which carries every field
// not named.
//
// The node kinds are listed once, in SY_EXPR_KINDS; visitors, mutators,
// printer, structural equality and hashing dispatch from that list.
#pragma once

#include <string>
#include <vector>

#include "ir/attrs.h"
#include "ir/span.h"
#include "ir/type.h"
#include "ir/virtual_device.h"
#include "runtime/ndarray.h"
#include "support/ref.h"

namespace switchyard {

// X(NodeName, visit_method_suffix) for every node kind.
#define SY_EXPR_KINDS(X)               \
  X(Var, var)                          \
  X(Constant, constant)                \
  X(Call, call)                        \
  X(Function, function)                \
  X(Let, let)                          \
  X(If, if)                            \
  X(Tuple, tuple)                      \
  X(TupleGetItem, tuple_get_item)      \
  X(GlobalVar, global_var)             \
  X(Op, op)

enum class ExprKind : uint8_t {
#define SY_ENUM(name, lower) k##name,
  SY_EXPR_KINDS(SY_ENUM)
#undef SY_ENUM
};

const char* expr_kind_name(ExprKind kind);  // "Call", ...

class ExprNode : public Object {
 public:
  ExprKind kind() const { return kind_; }
  // Never null: unconstrained devices are VirtualDevice::unconstrained().
  const VirtualDevice* virtual_device() const { return virtual_device_; }
  const Span& span() const { return span_; }
  const Type& checked_type() const { return checked_type_; }

 protected:
  ExprNode(ExprKind kind, const VirtualDevice* vd, Span span, Type checked_type)
      : kind_(kind),
        virtual_device_(vd ? vd : VirtualDevice::unconstrained()),
        span_(std::move(span)),
        checked_type_(std::move(checked_type)) {}

 private:
  ExprKind kind_;
  const VirtualDevice* virtual_device_;
  Span span_;
  Type checked_type_;
  friend struct NodeFields;
};
using Expr = Ref<ExprNode>;

#define SY_FORWARD(name, lower) \
  class name##Node;       \
  using name = Ref<name##Node>;
SY_EXPR_KINDS(SY_FORWARD)
#undef SY_FORWARD

// Common constructor arguments every node takes.
struct NodeMeta {
  const VirtualDevice* virtual_device = nullptr;  // null = unconstrained
  Span span;
  Type checked_type;
};

class VarNode : public ExprNode {
 public:
  static constexpr ExprKind kKind = ExprKind::kVar;
  VarNode(std::string name_hint, Type type_annotation, NodeMeta m)
      : ExprNode(kKind, m.virtual_device, std::move(m.span), std::move(m.checked_type)),
        name_hint(std::move(name_hint)),
        type_annotation(std::move(type_annotation)) {}
  const std::string name_hint;
  const Type type_annotation;  // may be null
};

class ConstantNode : public ExprNode {
 public:
  static constexpr ExprKind kKind = ExprKind::kConstant;
  ConstantNode(NDArray data, NodeMeta m)
      : ExprNode(kKind, m.virtual_device, std::move(m.span), std::move(m.checked_type)),
        data(std::move(data)) {}
  const NDArray data;
  TensorType tensor_type() const { return switchyard::tensor_type(data.shape(), data.dtype()); }
};

class CallNode : public ExprNode {
 public:
  static constexpr ExprKind kKind = ExprKind::kCall;
  CallNode(Expr op, std::vector<Expr> args, Attrs attrs, NodeMeta m)
      : ExprNode(kKind, m.virtual_device, std::move(m.span), std::move(m.checked_type)),
        op(std::move(op)),
        args(std::move(args)),
        attrs(std::move(attrs)) {}
  const Expr op;  // an Op, a GlobalVar, or any function-valued expression
  const std::vector<Expr> args;
  const Attrs attrs;  // operator attributes (null for non-operator calls)
};

// A function. Its virtual_device is where its result is produced; each
// parameter's device is that parameter Var's virtual_device.
class FunctionNode : public ExprNode {
 public:
  static constexpr ExprKind kKind = ExprKind::kFunction;
  FunctionNode(std::vector<Var> params, Expr body, Type ret_type, Attrs attrs, NodeMeta m)
      : ExprNode(kKind, m.virtual_device, std::move(m.span), std::move(m.checked_type)),
        params(std::move(params)),
        body(std::move(body)),
        ret_type(std::move(ret_type)),
        attrs(std::move(attrs)) {}
  const std::vector<Var> params;
  const Expr body;
  const Type ret_type;  // may be null before InferType
  const Attrs attrs;    // e.g. Primitive=1 for fused kernels; may be null
  // The result's device (same as virtual_device()).
  const VirtualDevice* result_virtual_device() const { return virtual_device(); }
  bool is_primitive() const;
};

class LetNode : public ExprNode {
 public:
  static constexpr ExprKind kKind = ExprKind::kLet;
  LetNode(Var var, Expr value, Expr body, NodeMeta m)
      : ExprNode(kKind, m.virtual_device, std::move(m.span), std::move(m.checked_type)),
        var(std::move(var)),
        value(std::move(value)),
        body(std::move(body)) {}
  const Var var;
  const Expr value;
  const Expr body;
};

class IfNode : public ExprNode {
 public:
  static constexpr ExprKind kKind = ExprKind::kIf;
  IfNode(Expr cond, Expr then_branch, Expr else_branch, NodeMeta m)
      : ExprNode(kKind, m.virtual_device, std::move(m.span), std::move(m.checked_type)),
        cond(std::move(cond)),
        then_branch(std::move(then_branch)),
        else_branch(std::move(else_branch)) {}
  const Expr cond;
  const Expr then_branch;
  const Expr else_branch;
};

class TupleNode : public ExprNode {
 public:
  static constexpr ExprKind kKind = ExprKind::kTuple;
  TupleNode(std::vector<Expr> fields, NodeMeta m)
      : ExprNode(kKind, m.virtual_device, std::move(m.span), std::move(m.checked_type)),
        fields(std::move(fields)) {}
  const std::vector<Expr> fields;
};

class TupleGetItemNode : public ExprNode {
 public:
  static constexpr ExprKind kKind = ExprKind::kTupleGetItem;
  TupleGetItemNode(Expr tuple, int index, NodeMeta m)
      : ExprNode(kKind, m.virtual_device, std::move(m.span), std::move(m.checked_type)),
        tuple(std::move(tuple)),
        index(index) {}
  const Expr tuple;
  const int index;
};

// A reference to a module-level function, by name.
class GlobalVarNode : public ExprNode {
 public:
  static constexpr ExprKind kKind = ExprKind::kGlobalVar;
  GlobalVarNode(std::string name, NodeMeta m)
      : ExprNode(kKind, m.virtual_device, std::move(m.span), std::move(m.checked_type)),
        name(std::move(name)) {}
  const std::string name;
};

struct OpDef;  // op/registry.h
// An operator. Interned: one node per operator name (get with op_get).
class OpNode : public ExprNode {
 public:
  static constexpr ExprKind kKind = ExprKind::kOp;
  OpNode(std::string name, const OpDef* def)
      : ExprNode(kKind, nullptr, Span(), Type()), name(std::move(name)), def(def) {}
  const std::string name;
  const OpDef* const def;
};

// Downcasts: null when `e` is of another kind.
template <typename N>
const N* as(const Expr& e) {
  return e && e->kind() == N::kKind ? static_cast<const N*>(e.get()) : nullptr;
}
template <typename N>
Ref<N> downcast(const Expr& e) {
  return Ref<N>(as<N>(e));
}
template <typename N>
bool is(const Expr& e) {
  return as<N>(e) != nullptr;
}

// Constructors. Device and span are always accepted; null device = unconstrained.
Var make_var(std::string name_hint, Type type_annotation = Type(), NodeMeta meta = {});
Constant make_constant(NDArray data, NodeMeta meta = {});
Call make_call(Expr op, std::vector<Expr> args, Attrs attrs = Attrs(), NodeMeta meta = {});
Function make_function(std::vector<Var> params, Expr body, Type ret_type = Type(), Attrs attrs = Attrs(),
                       NodeMeta meta = {});
Let make_let(Var var, Expr value, Expr body, NodeMeta meta = {});
If make_if(Expr cond, Expr then_branch, Expr else_branch, NodeMeta meta = {});
Tuple make_tuple(std::vector<Expr> fields, NodeMeta meta = {});
TupleGetItem make_tuple_get_item(Expr tuple, int index, NodeMeta meta = {});
GlobalVar make_global_var(std::string name, NodeMeta meta = {});

// A scalar float32 constant (convenience for passes and tests).
Constant make_scalar_f32(float value, NodeMeta meta = {});

// Calls `fn(child)` for each direct child expression of `e` in evaluation
// order (for Function: params then body; for Let: var, value, body).
template <typename F>
void for_each_child(const Expr& e, F&& fn);

// Number of direct children (matching for_each_child).
size_t child_count(const Expr& e);

}  // namespace switchyard

#include "ir/expr_inl.h"
