// Expression nodes. Every node carries its virtual device, source span and
// checked type (null until InferType). Nodes are immutable: passes rebuild
// them only through with_fields (ir/with_fields.h), which carries every field
// not named.
//
// The node kinds are listed once, in SY_EXPR_KINDS; visitors, mutators,
// printer, structural equality and hashing dispatch from that list.
#pragma once

#include <string>
#include <type_traits>
#include <vector>

#include "ir/attrs.h"
#include "ir/span.h"
#include "ir/type.h"
#include "ir/virtual_device.h"
#include "runtime/ndarray.h"
#include "support/ref.h"

namespace switchyard {

// X(NodeName, visit_method_suffix) for every kind rebuilt through
// with_fields; each has a field table SY_FIELDS_<NodeName> below.
#define SY_REBUILT_EXPR_KINDS(X)       \
  X(Var, var)                          \
  X(Constant, constant)                \
  X(Call, call)                        \
  X(Function, function)                \
  X(Let, let)                          \
  X(If, if)                            \
  X(Tuple, tuple)                      \
  X(TupleGetItem, tuple_get_item)      \
  X(GlobalVar, global_var)

// Every node kind: the above plus Op, interned (one node per operator name,
// never placed or rebuilt).
#define SY_EXPR_KINDS(X) SY_REBUILT_EXPR_KINDS(X) X(Op, op)

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

// Field tables: F(type, name) for each field of a kind, in evaluation order
// (the order of constructor arguments and of for_each_child). Everything
// kind-independent is generated from them: node members and constructors,
// with_fields and its *Changes structs, with_meta, with_children,
// for_each_child, the mutator's default rebuild, structural equality and
// hashing, and the Python properties and with_fields. A field's type says
// how generic code treats it (is_child_field / is_binder_field below).
#define SY_FIELDS_Var(F)                                                    \
  F(std::string, name_hint) /* a hint: structural equality ignores it */    \
  F(Type, type_annotation)  /* may be null */

#define SY_FIELDS_Constant(F) F(NDArray, data)

#define SY_FIELDS_Call(F)                                                    \
  F(Expr, op)               /* an Op, a GlobalVar, or any function-valued expression */ \
  F(std::vector<Expr>, args)                                                 \
  F(Attrs, attrs)           /* operator attributes (null for non-operator calls) */

#define SY_FIELDS_Function(F)                                               \
  F(std::vector<Var>, params)                                               \
  F(Expr, body)                                                             \
  F(Type, ret_type)         /* may be null before InferType */              \
  F(Attrs, attrs)           /* e.g. Primitive=1 for fused kernels; may be null */

#define SY_FIELDS_Let(F) F(Var, var) F(Expr, value) F(Expr, body)

#define SY_FIELDS_If(F) F(Expr, cond) F(Expr, then_branch) F(Expr, else_branch)

#define SY_FIELDS_Tuple(F) F(std::vector<Expr>, fields)

#define SY_FIELDS_TupleGetItem(F) F(Expr, tuple) F(int, index)

#define SY_FIELDS_GlobalVar(F) F(std::string, name)

// Child expressions are walked, rebuilt and compared node by node; Vars are
// binders (structural equality pairs them up to renaming); every other field
// is a plain value.
template <typename T>
constexpr bool is_child_field = std::is_same_v<T, Expr> || std::is_same_v<T, std::vector<Expr>> ||
                                std::is_same_v<T, Var> || std::is_same_v<T, std::vector<Var>>;
template <typename T>
constexpr bool is_binder_field = std::is_same_v<T, Var> || std::is_same_v<T, std::vector<Var>>;
template <typename T>
constexpr bool is_child_list_field = std::is_same_v<T, std::vector<Expr>> || std::is_same_v<T, std::vector<Var>>;

#define SY_FIELD_PARAM(T, name) T name,
#define SY_FIELD_INIT(T, name) , name(std::move(name))
#define SY_FIELD_MEMBER(T, name) const T name;
#define SY_FIELD_POINTER(T, name) fn(#name, &Self::name);

// The kind tag, a constructor taking every field then the metadata, the
// fields as const members, and for_each_field(fn), which calls
// fn("name", &Node::name) for each field in table order.
#define SY_NODE_FIELDS(Name)                                                                  \
  static constexpr ExprKind kKind = ExprKind::k##Name;                                        \
  Name##Node(SY_FIELDS_##Name(SY_FIELD_PARAM) NodeMeta m)                                     \
      : ExprNode(kKind, m.virtual_device, std::move(m.span), std::move(m.checked_type))       \
            SY_FIELDS_##Name(SY_FIELD_INIT) {}                                                \
  SY_FIELDS_##Name(SY_FIELD_MEMBER)                                                           \
  template <typename F>                                                                       \
  static constexpr void for_each_field(F&& fn) {                                              \
    using Self = Name##Node;                                                                  \
    SY_FIELDS_##Name(SY_FIELD_POINTER)                                                        \
  }

class VarNode : public ExprNode {
 public:
  SY_NODE_FIELDS(Var)
};

class ConstantNode : public ExprNode {
 public:
  SY_NODE_FIELDS(Constant)
  TensorType tensor_type() const { return switchyard::tensor_type(data.shape(), data.dtype()); }
};

class CallNode : public ExprNode {
 public:
  SY_NODE_FIELDS(Call)
};

// A function. Its virtual_device is where its result is produced; each
// parameter's device is that parameter Var's virtual_device.
class FunctionNode : public ExprNode {
 public:
  SY_NODE_FIELDS(Function)
  // The result's device (same as virtual_device()).
  const VirtualDevice* result_virtual_device() const { return virtual_device(); }
  bool is_primitive() const;
};

class LetNode : public ExprNode {
 public:
  SY_NODE_FIELDS(Let)
};

class IfNode : public ExprNode {
 public:
  SY_NODE_FIELDS(If)
};

class TupleNode : public ExprNode {
 public:
  SY_NODE_FIELDS(Tuple)
};

class TupleGetItemNode : public ExprNode {
 public:
  SY_NODE_FIELDS(TupleGetItem)
};

// A reference to a module-level function, by name.
class GlobalVarNode : public ExprNode {
 public:
  SY_NODE_FIELDS(GlobalVar)
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

// fn(node) with `e` cast to its own node type (const CallNode*, ...), for
// generic code that branches on the node type at compile time.
template <typename F>
decltype(auto) visit_node(const ExprNode* e, F&& fn) {
  switch (e->kind()) {
#define SY_CASE(name, lower) \
  case ExprKind::k##name:    \
    return fn(static_cast<const name##Node*>(e));
    SY_EXPR_KINDS(SY_CASE)
#undef SY_CASE
  }
  __builtin_unreachable();
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
