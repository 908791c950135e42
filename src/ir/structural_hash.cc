// Structural hashing (see structural_equal.h), from each kind's field table.
// Walks with an explicit stack and memoizes nodes, so shared sub-graphs cost
// once.
#include <string_view>
#include <type_traits>
#include <unordered_map>

#include "ir/structural_equal.h"

namespace switchyard {

namespace {

size_t combine(size_t seed, size_t value) {
  return seed ^ (value + 0x9e3779b97f4a7c15ull + (seed << 6) + (seed >> 2));
}

template <typename T>
size_t value_hash(const T& v) {
  if constexpr (std::is_same_v<T, Type>) {
    return type_hash(v);
  } else if constexpr (std::is_same_v<T, Attrs>) {
    return attrs_hash(v);
  } else if constexpr (std::is_same_v<T, NDArray>) {
    size_t h = combine(type_hash(tensor_type(v.shape(), v.dtype())), v.nbytes());
    if (v.defined())
      h = combine(h, std::hash<std::string_view>()(std::string_view(static_cast<const char*>(v.bytes()), v.nbytes())));
    return h;
  } else if constexpr (std::is_same_v<T, std::string>) {
    return std::hash<std::string>()(v);
  } else if constexpr (std::is_same_v<T, int>) {
    return size_t(v);
  } else {
    static_assert(!sizeof(T*), "say how structural hashing hashes this field type");
  }
}

class Hasher {
 public:
  explicit Hasher(const StructuralEqualOptions& options) : options_(options) {}

  size_t run(const Expr& root) {
    struct Frame {
      const ExprNode* node;
      bool expanded;
    };
    std::vector<Frame> stack{{root.get(), false}};
    while (!stack.empty()) {
      Frame& top = stack.back();
      if (hashes_.count(top.node)) {
        stack.pop_back();
        continue;
      }
      if (!top.expanded) {
        top.expanded = true;
        const ExprNode* n = top.node;
        visit_node(n, [&](auto* node) { bind_roles(node); });
        for_each_child(Expr(n), [&](const Expr& c) {
          if (!hashes_.count(c.get())) stack.push_back({c.get(), false});
        });
        continue;
      }
      const ExprNode* n = top.node;
      stack.pop_back();
      hashes_[n] = hash_node(n);
    }
    return hashes_.at(root.get());
  }

 private:
  size_t child(const Expr& e) const { return hashes_.at(e.get()); }

  // Variables hash by where they are bound, never by identity: a list
  // binder's i-th variable by (1, i), a single binder's by 2.
  void bind_roles(const OpNode*) {}
  template <typename N>
  void bind_roles(const N* n) {
    N::for_each_field([&](const char*, auto member) {
      using T = std::remove_cvref_t<decltype(n->*member)>;
      if constexpr (std::is_same_v<T, Var>) {
        roles_[(n->*member).get()] = 2;
      } else if constexpr (std::is_same_v<T, std::vector<Var>>) {
        const T& vars = n->*member;
        for (size_t i = 0; i < vars.size(); ++i) roles_[vars[i].get()] = combine(1, i);
      }
    });
  }

  size_t device_hash(const VirtualDevice* d) {
    if (!options_.compare_devices || d->is_fully_unconstrained()) return 0;
    auto [it, inserted] = device_hashes_.try_emplace(d, 0);
    if (inserted) it->second = std::hash<std::string>()(d->str());
    return it->second;
  }

  size_t span_hash(const Span& s) const {
    if (!options_.compare_spans) return 0;
    size_t h = 0;
    for (const Span& part : s.parts())
      h = combine(combine(combine(h, std::hash<std::string>()(part.source())), part.line()), part.column());
    return h;
  }

  size_t hash_node(const ExprNode* n) {
    size_t h = combine(size_t(n->kind()) + 1, span_hash(n->span()));
    // Structural equality compares neither a GlobalVar's nor an Op's device.
    if (n->kind() != ExprKind::kGlobalVar && n->kind() != ExprKind::kOp) h = combine(h, device_hash(n->virtual_device()));
    return visit_node(n, [&](auto* node) { return hash_fields(h, node); });
  }

  size_t hash_fields(size_t h, const VarNode* v) {
    auto role = roles_.find(v);
    return combine(combine(h, role == roles_.end() ? 3 : role->second), type_hash(v->type_annotation));
  }

  size_t hash_fields(size_t h, const OpNode* op) { return combine(h, std::hash<std::string>()(op->name)); }

  // Each field in table order; a child list also hashes its length.
  template <typename N>
  size_t hash_fields(size_t h, const N* n) {
    N::for_each_field([&](const char*, auto member) {
      using T = std::remove_cvref_t<decltype(n->*member)>;
      if constexpr (is_child_list_field<T>) {
        for (const auto& c : n->*member) h = combine(h, child(c));
        h = combine(h, (n->*member).size());
      } else if constexpr (is_child_field<T>) {
        h = combine(h, child(n->*member));
      } else {
        h = combine(h, value_hash(n->*member));
      }
    });
    return h;
  }

  const StructuralEqualOptions& options_;
  std::unordered_map<const ExprNode*, size_t> hashes_;
  std::unordered_map<const ExprNode*, size_t> roles_;
  std::unordered_map<const VirtualDevice*, size_t> device_hashes_;
};

}  // namespace

size_t structural_hash(const Expr& expr, const StructuralEqualOptions& options) {
  return Hasher(options).run(expr);
}

}  // namespace switchyard
