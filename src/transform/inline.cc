// Inline: a call graph over globals, inlining callees-first, then removal of
// the globals nothing refers to any more.
#include "transform/inline.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_set>

#include "ir/functor.h"
#include "transform/substitute.h"

namespace switchyard {

namespace {

// The globals `fn` refers to (as callee or as a value).
std::set<std::string> referenced_globals(const Function& fn) {
  std::set<std::string> out;
  post_order_visit(fn, [&](const Expr& e) {
    if (const GlobalVarNode* g = as<GlobalVarNode>(e)) out.insert(g->name);
  });
  return out;
}

// Whether `fn`'s body holds at most `limit` calls; stops counting past it, so
// a large function costs no more than a small one.
bool has_at_most_calls(const Function& fn, size_t limit) {
  // Nodes are counted when first seen (not when popped), so a long chain of
  // lets over calls stops after the first few.
  size_t calls = 0;
  std::unordered_set<const ExprNode*> seen{fn->body.get()};
  std::vector<const ExprNode*> work{fn->body.get()};
  if (fn->body->kind() == ExprKind::kCall) ++calls;
  while (!work.empty() && calls <= limit) {
    const ExprNode* n = work.back();
    work.pop_back();
    for_each_child(Expr(n), [&](const Expr& c) {
      if (!seen.insert(c.get()).second) return;
      if (c->kind() == ExprKind::kCall) ++calls;
      work.push_back(c.get());
    });
  }
  return calls <= limit;
}

using CallGraph = std::map<std::string, std::set<std::string>>;

// Globals in an order where each comes after every global it calls (cycles
// are cut at an arbitrary point), and the set of globals on a cycle.
std::vector<std::string> callees_first(const IRModule& mod, const CallGraph& graph, std::set<std::string>* recursive) {
  std::vector<std::string> order;
  std::map<std::string, int> state;  // 1: on the stack, 2: done
  for (const auto& [root, fn] : mod.functions()) {
    if (state[root]) continue;
    std::vector<std::pair<std::string, bool>> stack{{root, false}};
    while (!stack.empty()) {
      auto [name, expanded] = stack.back();
      if (expanded) {
        stack.pop_back();
        if (state[name] == 1) {
          state[name] = 2;
          order.push_back(name);
        }
        continue;
      }
      if (state[name]) {
        stack.pop_back();
        continue;
      }
      stack.back().second = true;
      state[name] = 1;
      auto it = graph.find(name);
      if (it == graph.end()) continue;
      for (const std::string& callee : it->second)
        if (!state[callee] && graph.count(callee)) stack.push_back({callee, false});
    }
  }
  // A global is recursive when it can reach itself.
  for (const auto& [start, callees] : graph) {
    std::set<std::string> seen;
    std::vector<std::string> work(callees.begin(), callees.end());
    while (!work.empty()) {
      std::string n = work.back();
      work.pop_back();
      if (n == start) {
        recursive->insert(start);
        break;
      }
      if (!seen.insert(n).second) continue;
      auto it = graph.find(n);
      if (it != graph.end()) work.insert(work.end(), it->second.begin(), it->second.end());
    }
  }
  return order;
}

// A callee that may be inlined: its placement and its body as a template
// over its parameters.
struct InlineCandidate {
  Function function;
  SubstitutionTemplate body;
};

class Inliner : public ExprMutator {
 public:
  explicit Inliner(const std::map<std::string, InlineCandidate>& inlinable) : inlinable_(inlinable) {}

  Expr visit_call(const Call& original) override {
    Call call = downcast<CallNode>(ExprMutator::visit_call(original));
    const GlobalVarNode* g = as<GlobalVarNode>(call->op);
    if (!g) return call;
    auto it = inlinable_.find(g->name);
    if (it == inlinable_.end()) return call;
    const Function& callee = it->second.function;
    if (call->args.size() != callee->params.size() || call->virtual_device() != callee->virtual_device()) return call;
    for (size_t i = 0; i < call->args.size(); ++i)
      if (call->args[i]->virtual_device() != callee->params[i]->virtual_device()) return call;
    return it->second.body.instantiate(call->args);
  }

 private:
  const std::map<std::string, InlineCandidate>& inlinable_;
};

// Removes globals (other than @main) that the module referred to before the
// pass and that no other remaining function refers to; `graph` holds what
// each function refers to now.
void remove_unreferenced(IRModule* mod, CallGraph refers_to, const std::set<std::string>& referenced_before) {
  std::map<std::string, int> referrers;
  for (auto& [name, targets] : refers_to) {
    targets.erase(name);
    for (const std::string& target : targets) ++referrers[target];
  }
  std::vector<std::string> work;
  for (const auto& [name, fn] : mod->functions())
    if (name != "main" && referenced_before.count(name) && !referrers[name]) work.push_back(name);
  while (!work.empty()) {
    std::string name = work.back();
    work.pop_back();
    if (!mod->contains(name)) continue;
    mod->remove(name);
    for (const std::string& target : refers_to[name])
      if (--referrers[target] == 0 && target != "main" && referenced_before.count(target)) work.push_back(target);
  }
}

}  // namespace

Pass Inline() {
  return make_module_pass({"Inline", 1, {}}, [](const IRModule& mod, const PassContext& ctx) {
    size_t max_calls = size_t(std::max<int64_t>(0, ctx.config_int("inline.max_calls", 8)));
    CallGraph graph;
    std::set<std::string> referenced_before;
    for (const auto& [name, fn] : mod.functions()) {
      graph[name] = referenced_globals(fn);
      referenced_before.insert(graph[name].begin(), graph[name].end());
    }
    std::set<std::string> recursive;
    std::vector<std::string> order = callees_first(mod, graph, &recursive);

    IRModule out = mod;
    std::map<std::string, InlineCandidate> inlinable;
    for (const std::string& name : order) {
      Function fn = out.lookup(name);
      if (fn->is_primitive()) continue;
      bool calls_inlinable = false;
      for (const std::string& callee : graph[name]) calls_inlinable = calls_inlinable || inlinable.count(callee);
      if (calls_inlinable) {
        fn = downcast<FunctionNode>(Inliner(inlinable).mutate(fn));
        out.add(name, fn);
        graph[name] = referenced_globals(fn);
      }
      if (!recursive.count(name) && has_at_most_calls(fn, max_calls))
        inlinable.emplace(name, InlineCandidate{fn, SubstitutionTemplate(fn->body, fn->params, /*fresh_bindings=*/true)});
    }
    remove_unreferenced(&out, graph, referenced_before);
    return out;
  });
}

}  // namespace switchyard
