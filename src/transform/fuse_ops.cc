// FuseOps: decides the groups over a function's dataflow graph (union-find,
// producers before consumers), then rebuilds the function with one primitive
// Function call per group. Linear (up to union-find) and iterative.
#include "transform/fuse_ops.h"

#include <algorithm>
#include <optional>
#include <unordered_map>
#include <vector>

#include "ir/with_fields.h"
#include "op/handles.h"
#include "op/quantized_attrs.h"
#include "op/registry.h"

namespace switchyard {

namespace {

constexpr int64_t kDefaultMaxGroupSize = 256;

struct NodeInfo {
  const ExprNode* consumer = nullptr;  // the node using this one, when exactly one does
  bool shared = false;                 // used by more than one node (or from outside)
  int index = -1;                      // position in post-order
};

struct Group {
  int parent = 0;                      // union-find
  int64_t size = 1;                    // operator calls in the group
  const ExprNode* master = nullptr;    // the anchor or reduction, if any
  std::vector<const ExprNode*> members;  // calls and pulled-in tuples, producers first
};

// The fusion pattern of an operator call; nullopt for any other node.
std::optional<OpPattern> pattern_of(const ExprNode* n) {
  const CallNode* call = n->kind() == ExprKind::kCall ? static_cast<const CallNode*>(n) : nullptr;
  if (!call) return std::nullopt;
  const OpNode* op = as<OpNode>(call->op);
  if (!op || !op->def) return std::nullopt;
  return op->def->pattern;
}

bool is_fusable_call(const ExprNode* n) {
  std::optional<OpPattern> p = pattern_of(n);
  return p && *p != OpPattern::kOpaque;
}

// An int8 operator: its epilogue is a loop after the primitive in any case
// (only its ReLU is the primitive's own).
bool is_quantized_anchor(const ExprNode* master) {
  const CallNode* call = master && master->kind() == ExprKind::kCall ? static_cast<const CallNode*>(master) : nullptr;
  const OpNode* op = call ? as<OpNode>(call->op) : nullptr;
  return op == ops::quantized_conv2d() || op == ops::quantized_dense();
}

const CallNode* call_of(const ExprNode* n, const OpNode* op) {
  const CallNode* call = n && n->kind() == ExprKind::kCall ? static_cast<const CallNode*>(n) : nullptr;
  return call && as<OpNode>(call->op) == op ? call : nullptr;
}

// multiply(subtract?(cast(anchor))) of an int8 anchor's result, as the
// importer spells DequantizeLinear: the anchor, or null.
const ExprNode* dequantized_anchor(const ExprNode* e) {
  const CallNode* product = call_of(e, ops::multiply());
  if (!product) return nullptr;
  const ExprNode* shifted = product->args[0].get();
  if (const CallNode* difference = call_of(shifted, ops::subtract())) shifted = difference->args[0].get();
  const CallNode* cast = call_of(shifted, ops::cast());
  return cast && is_quantized_anchor(cast->args[0].get()) ? cast->args[0].get() : nullptr;
}

bool is_elementwise_like(OpPattern p) {
  return p == OpPattern::kElementwise || p == OpPattern::kBroadcast || p == OpPattern::kInjective;
}

const std::vector<int64_t>* tensor_shape(const ExprNode* n) {
  const TensorTypeNode* t = as_tensor(n->checked_type());
  return t ? &t->shape : nullptr;
}

class FusionPlanner {
 public:
  FusionPlanner(bool merge, int64_t max_group_size) : merge_(merge), max_group_size_(max_group_size) {}

  Expr run(const Expr& body) {
    walk(body);
    info_[body.get()].shared = true;  // the function's result is used outside
    for (const ExprNode* n : order_)
      if (is_fusable_call(n)) plan_call(static_cast<const CallNode*>(n));
    if (merge_) fuse_epilogue_diamonds(body.get());
    for (const ExprNode* n : order_)
      if (group_of_.count(n)) groups_[find(group_of_[n])].members.push_back(n);
    return rewrite(body);
  }

 private:
  // Post-order over the body without entering primitive functions (they are
  // kernels already), recording each node's users.
  void walk(const Expr& root) {
    struct Frame {
      const ExprNode* node;
      bool expanded;
    };
    std::vector<Frame> stack{{root.get(), false}};
    while (!stack.empty()) {
      Frame& top = stack.back();
      const ExprNode* node = top.node;
      if (info_[node].index >= 0) {
        stack.pop_back();
        continue;
      }
      if (!top.expanded) {
        top.expanded = true;
        const FunctionNode* fn = as<FunctionNode>(Expr(node));
        if (fn && fn->is_primitive()) continue;
        std::vector<const ExprNode*> children;
        for_each_child(Expr(node), [&](const Expr& c) { children.push_back(c.get()); });
        for (const ExprNode* c : children) note_use(c, node);
        for (auto it = children.rbegin(); it != children.rend(); ++it)
          if (info_[*it].index < 0) stack.push_back({*it, false});
        continue;
      }
      stack.pop_back();
      info_[node].index = int(order_.size());
      order_.push_back(node);
    }
  }

  void note_use(const ExprNode* child, const ExprNode* user) {
    users_[child].push_back(user);
    NodeInfo& i = info_[child];
    if (!i.consumer) i.consumer = user;
    else if (i.consumer != user) i.shared = true;
  }

  int find(int g) {
    while (groups_[g].parent != g) {
      groups_[g].parent = groups_[groups_[g].parent].parent;
      g = groups_[g].parent;
    }
    return g;
  }

  int group(const ExprNode* n) { return find(group_of_.at(n)); }

  // Joins the group of `producer` into the group of `consumer`.
  void merge(const ExprNode* producer, const ExprNode* consumer) {
    int p = group(producer), c = group(consumer);
    if (p == c) return;
    groups_[p].parent = c;
    groups_[c].size += groups_[p].size;
    if (!groups_[c].master) groups_[c].master = groups_[p].master;
  }

  int new_group(const ExprNode* n, int64_t size, const ExprNode* master) {
    int g = int(groups_.size());
    groups_.push_back(Group{g, size, master, {}});
    group_of_[n] = g;
    return g;
  }

  // A producer that may join the call `c`: a fusable call whose only user is
  // `user` (c itself, or a tuple argument of c) and which lives on c's device.
  bool may_join(const Expr& producer, const ExprNode* user, const CallNode* c) {
    const NodeInfo& i = info_[producer.get()];
    return is_fusable_call(producer.get()) && !i.shared && i.consumer == user &&
           producer->virtual_device() == c->virtual_device();
  }

  // Whether `cast`, the start of a dequantize of an int8 anchor's result
  // (cast, subtract?, multiply, each read by the next alone), feeds an
  // element-wise join (a residual add) whose earlier argument is another
  // int8 anchor's dequantize: that anchor's epilogue takes the join, and
  // this dequantize joins it as a producer, read there from its 8-bit
  // source, rather than being its own anchor's epilogue writing float32
  // (4x the bytes) for the join to read.
  bool dequantize_belongs_to_join(const CallNode* cast) {
    if (!call_of(cast, ops::cast()) || !is_quantized_anchor(cast->args[0].get())) return false;
    const ExprNode* end = cast;
    for (int step = 0; step < 2; ++step) {
      const ExprNode* next = info_[end].shared ? nullptr : info_[end].consumer;
      if (!call_of(next, ops::subtract()) && !call_of(next, ops::multiply())) break;
      end = next;
      if (call_of(end, ops::multiply())) break;
    }
    if (dequantized_anchor(end) != cast->args[0].get() || info_[end].shared) return false;
    const CallNode* join = as<CallNode>(Expr(info_[end].consumer));
    std::optional<OpPattern> pattern = join ? pattern_of(join) : std::nullopt;
    if (!pattern || !is_elementwise_like(*pattern)) return false;
    for (const Expr& arg : join->args) {
      if (arg.get() == end) return false;
      if (dequantized_anchor(arg.get())) return true;
    }
    return false;
  }

  void plan_call(const CallNode* c) {
    OpPattern pattern = *pattern_of(c);
    bool is_master = pattern == OpPattern::kAnchor || pattern == OpPattern::kReduction;
    new_group(c, 1, is_master ? c : nullptr);
    std::vector<const ExprNode*> candidates;
    for (const Expr& a : c->args) {
      if (const TupleNode* t = as<TupleNode>(a)) {
        // A tuple argument (concatenate's) is pulled into the group; the
        // function takes its tensors separately.
        if (info_[t].shared || info_[t].consumer != c || group_of_.count(t)) continue;
        group_of_[t] = group(c);
        for (const Expr& f : t->fields)
          if (may_join(f, t, c)) candidates.push_back(f.get());
      } else if (may_join(a, c, c)) {
        candidates.push_back(a.get());
      }
    }
    if (!merge_) return;
    // First an anchor's or reduction's epilogue: c follows it element-wise,
    // with the master's shape.
    if (pattern == OpPattern::kElementwise || pattern == OpPattern::kBroadcast) {
      for (const ExprNode* p : candidates) {
        const Group& g = groups_[group(p)];
        if (!g.master || groups_[group(c)].size != 1 || !fits(p, c)) continue;
        if (is_quantized_anchor(g.master) && dequantize_belongs_to_join(c)) continue;
        const std::vector<int64_t>* master_shape = tensor_shape(g.master);
        const std::vector<int64_t>* shape = tensor_shape(c);
        if (master_shape && shape && *master_shape == *shape) {
          merge(p, c);
          break;
        }
      }
    }
    // Then element-wise producers: into an element-wise group, as a
    // reduction's prologue, or into an int8 anchor's epilogue loop (a
    // residual's dequantize read there from its 8-bit source, not written
    // out in float32 first).
    for (const ExprNode* p : candidates) {
      const Group& g = groups_[group(p)];
      const Group& mine = groups_[group(c)];
      if (g.master || group(p) == group(c) || !fits(p, c)) continue;
      bool into_elementwise = is_elementwise_like(pattern) && !mine.master;
      bool into_reduction = pattern == OpPattern::kReduction && mine.master == c;
      bool into_int8_epilogue =
          is_elementwise_like(pattern) && mine.master && mine.master != c && is_quantized_anchor(mine.master);
      if (into_elementwise || into_reduction || into_int8_epilogue) merge(p, c);
    }
  }

  // An anchor's result read by several element-wise calls that all belong
  // to one element-wise group (an exact GELU reads it twice) makes that
  // group its epilogue when every call of the group keeps the anchor's
  // shape: a diamond the single-consumer rule of plan_call cannot see. (No
  // member of the group can feed the anchor: only a group's root has users
  // outside it.)
  void fuse_epilogue_diamonds(const ExprNode* result) {
    std::unordered_map<int, const std::vector<int64_t>*> shape_of_group;  // null: members differ
    for (const ExprNode* n : order_) {
      auto g = group_of_.find(n);
      if (g == group_of_.end() || n->kind() != ExprKind::kCall) continue;
      const std::vector<int64_t>* shape = tensor_shape(n);
      auto [it, inserted] = shape_of_group.emplace(find(g->second), shape);
      if (!inserted && (!it->second || !shape || *it->second != *shape)) it->second = nullptr;
    }
    for (const ExprNode* n : order_) {
      if (n == result || !group_of_.count(n) || users_[n].size() < 2) continue;
      int anchor = group(n);
      const ExprNode* master = groups_[anchor].master;
      if (!master || pattern_of(master) != OpPattern::kAnchor) continue;
      int target = -1;
      bool joins = true;
      for (const ExprNode* u : users_[n]) {
        std::optional<OpPattern> pattern = pattern_of(u);
        joins = joins && pattern && is_elementwise_like(*pattern) && group_of_.count(u) &&
                u->virtual_device() == n->virtual_device() && group(u) != anchor &&
                (target < 0 || group(u) == target);
        if (!joins) break;
        target = group(u);
      }
      if (!joins || target < 0 || groups_[target].master) continue;
      const std::vector<int64_t>* anchor_shape = shape_of_group[anchor];
      const std::vector<int64_t>* target_shape = shape_of_group[target];
      if (!anchor_shape || !target_shape || *anchor_shape != *target_shape) continue;
      if (groups_[anchor].size + groups_[target].size > max_group_size_) continue;
      merge(n, *users_[n].begin());
      shape_of_group[group(n)] = anchor_shape;
    }
  }

  bool fits(const ExprNode* p, const ExprNode* c) {
    return groups_[group(p)].size + groups_[group(c)].size <= max_group_size_;
  }

  // Rebuilds the body: each group's result becomes a call of its primitive
  // function; every other node is rebuilt from its rewritten children.
  Expr rewrite(const Expr& body) {
    for (const ExprNode* n : order_) {
      Expr node(n);
      auto g = group_of_.find(n);
      if (g != group_of_.end()) {
        Group& group = groups_[find(g->second)];
        if (group.members.back() == n && n->kind() == ExprKind::kCall) rewritten_[n] = build_group(group);
        continue;
      }
      std::vector<Expr> children;
      bool leaf = false;
      if (const FunctionNode* fn = as<FunctionNode>(node)) leaf = fn->is_primitive();
      if (leaf) {
        rewritten_[n] = node;
        continue;
      }
      for_each_child(node, [&](const Expr& c) { children.push_back(rewritten_.at(c.get())); });
      rewritten_[n] = children.empty() ? node : with_children(node, children);
    }
    return rewritten_.at(body.get());
  }

  Expr build_group(const Group& group) {
    const ExprNode* root = group.members.back();
    const VirtualDevice* device = root->virtual_device();
    std::vector<Var> params;
    std::vector<Expr> args;
    std::vector<Type> param_types;
    std::unordered_map<const ExprNode*, Var> param_of;
    std::unordered_map<const ExprNode*, Expr> built;
    std::vector<Span> spans;

    auto input = [&](const Expr& a) -> Expr {
      if (auto it = built.find(a.get()); it != built.end()) return it->second;
      if (const ConstantNode* k = as<ConstantNode>(a); k && k->data.ndim() == 0) return a;
      if (auto it = param_of.find(a.get()); it != param_of.end()) return it->second;
      const VarNode* v = as<VarNode>(a);
      std::string name = v ? v->name_hint : "p" + std::to_string(params.size());
      Var param = make_var(name, a->checked_type(), {device, a->span(), a->checked_type()});
      param_of.emplace(a.get(), param);
      params.push_back(param);
      param_types.push_back(a->checked_type());
      args.push_back(rewritten_.at(a.get()));
      return param;
    };
    // A tuple argument not pulled in (it has other users) is rebuilt inside.
    auto argument = [&](const Expr& a) -> Expr {
      const TupleNode* t = as<TupleNode>(a);
      if (!t || built.count(t)) return input(a);
      std::vector<Expr> fields;
      for (const Expr& f : t->fields) fields.push_back(input(f));
      return with_fields(downcast<TupleNode>(a), {.fields = std::move(fields)});
    };

    for (const ExprNode* m : group.members) {
      spans.push_back(m->span());
      if (const TupleNode* t = as<TupleNode>(Expr(m))) {
        std::vector<Expr> fields;
        for (const Expr& f : t->fields) fields.push_back(input(f));
        built[m] = with_fields(Tuple(t), {.fields = std::move(fields)});
        continue;
      }
      const CallNode* c = static_cast<const CallNode*>(m);
      std::vector<Expr> new_args;
      for (const Expr& a : c->args) new_args.push_back(argument(a));
      built[m] = with_fields(Call(c), {.args = std::move(new_args)});
    }
    Span span = Span::fused(spans);
    Type result = root->checked_type();
    Function fn = make_function(params, built.at(root), result, make_attrs({{"Primitive", int64_t(1)}}),
                                {device, span, func_type(param_types, result)});
    return make_call(fn, args, Attrs(), {device, span, result});
  }

  bool merge_;
  int64_t max_group_size_;
  std::unordered_map<const ExprNode*, NodeInfo> info_;
  std::unordered_map<const ExprNode*, std::vector<const ExprNode*>> users_;
  std::vector<const ExprNode*> order_;
  std::vector<Group> groups_;
  std::unordered_map<const ExprNode*, int> group_of_;
  std::unordered_map<const ExprNode*, Expr> rewritten_;
};

}  // namespace

Pass FuseOps() {
  return make_function_pass({"FuseOps", 0, {"InferType"}},
                            [](const Function& fn, const IRModule&, const PassContext& ctx) {
                              bool merge = ctx.opt_level >= 1;
                              int64_t max_size = ctx.config_int("FuseOps.max_group_size", kDefaultMaxGroupSize);
                              FusionPlanner planner(merge, std::max<int64_t>(max_size, 1));
                              return with_fields(fn, {.body = planner.run(fn->body)});
                            });
}

}  // namespace switchyard
