// Pass running: opt levels, instruments, requirement checks, function passes.
#include "transform/pass.h"

#include <algorithm>

#include "analysis/symbolic_use.h"
#include "ir/functor.h"
#include "support/error.h"
#include "transform/pass_registry.h"

namespace switchyard {

Pass::Pass(PassInfo info, ModuleFn fn)
    : impl_(std::make_shared<Impl>(Impl{std::move(info), std::move(fn), {}})) {}

Pass make_module_pass(PassInfo info, Pass::ModuleFn fn) { return Pass(std::move(info), std::move(fn)); }

IRModule Pass::operator()(const IRModule& mod) const { return (*this)(mod, PassContext::current()); }

namespace {

// Whether the context lets a pass run: not disabled, and within the opt
// level or enabled by name.
bool selected(const PassInfo& info, const PassContext& ctx) {
  if (ctx.is_disabled(info.name)) return false;
  return info.opt_level <= ctx.opt_level || ctx.is_enabled(info.name);
}

[[noreturn]] void missing_requirement(const PassInfo& info, const std::string& required) {
  throw Error(ErrorKind::kPass, "pass '" + info.name + "' requires '" + required + "' to run before it");
}

// Runs the registered pass `required` on `mod`, unless the context keeps it
// from running (then it stays missing).
IRModule run_requirement(const PassInfo& info, const std::string& required, const IRModule& mod,
                         const PassContext& ctx) {
  std::optional<Pass> missing = registered_pass(required);
  if (!missing || !selected(missing->info(), ctx)) missing_requirement(info, required);
  return (*missing)(mod, ctx);
}

// `mod` with the checkable requirements of `info` brought into effect.
IRModule satisfy_checkable_requirements(const PassInfo& info, IRModule mod, const PassContext& ctx) {
  for (const std::string& req : info.required)
    if (effect_is_checkable(req) && !pass_in_effect(req, mod)) mod = run_requirement(info, req, mod, ctx);
  return mod;
}

// The pass's result with its unplaced nodes placed, when the context can.
IRModule place_new_nodes(const PassInfo& info, const IRModule& out, const PassContext& ctx) {
  if (!ctx.place_new_nodes || !out.device_planned()) return out;
  try {
    return ctx.place_new_nodes(out);
  } catch (const Error& e) {
    throw Error(e.kind(), "placing the nodes pass '" + info.name + "' left without a device: " + e.message(),
                e.span());
  }
}

}  // namespace

IRModule Pass::operator()(const IRModule& mod, const PassContext& ctx) const {
  const PassInfo& pi = info();
  if (!selected(pi, ctx)) return mod;
  bool leaf = impl_->children.empty();
  if (!leaf) return impl_->fn(mod, ctx);
  for (const auto& inst : ctx.instruments)
    if (!inst->should_run(mod, pi)) return mod;
  IRModule in = satisfy_checkable_requirements(pi, mod, ctx);
  if (!pi.symbolic_shapes)
    refuse_symbolic_use(in, ErrorKind::kPass, "pass '" + pi.name + "' does not take symbolic dimensions yet", "");
  for (const auto& inst : ctx.instruments) inst->run_before_pass(in, pi);
  IRModule out = place_new_nodes(pi, impl_->fn(in, ctx), ctx);
  for (const auto& inst : ctx.instruments) inst->run_after_pass(out, pi);
  return out;
}

bool effect_is_checkable(const std::string& pass_name) {
  return pass_name == "InferType" || pass_name == "PlanDevices";
}

bool pass_in_effect(const std::string& pass_name, const IRModule& mod) {
  if (pass_name == "InferType") {
    for (const auto& [name, fn] : mod.functions())
      if (!fn->checked_type()) return false;
    return true;
  }
  if (pass_name == "PlanDevices") return mod.device_planned();
  return false;
}

Pass Sequential(std::vector<Pass> passes, std::string name) {
  Pass seq;
  auto impl = std::make_shared<Pass::Impl>();
  impl->info = PassInfo{std::move(name), 0, {}};
  impl->children = passes;
  impl->fn = [passes](const IRModule& mod, const PassContext& ctx) {
    IRModule current = mod;
    std::vector<std::string> ran;
    for (const Pass& p : passes) {
      auto record = [&ran](const Pass& done) {
        ran.push_back(done.name());
        for (const Pass& c : done.children()) ran.push_back(c.name());
      };
      // Checkable requirements are decided on the module when the pass runs.
      for (const std::string& req : p.info().required) {
        if (effect_is_checkable(req) || std::find(ran.begin(), ran.end(), req) != ran.end()) continue;
        current = run_requirement(p.info(), req, current, ctx);
        ran.push_back(req);
      }
      current = p(current, ctx);
      record(p);
    }
    return current;
  };
  seq.impl_ = impl;
  return seq;
}

namespace {

// Replaces variables by others (used to restore parameter devices).
class VarSubstituter : public ExprMutator {
 public:
  explicit VarSubstituter(std::unordered_map<const ExprNode*, Var> map) : map_(std::move(map)) {}
  Expr visit_var(const Var& v) override {
    auto it = map_.find(v.get());
    return it == map_.end() ? Expr(v) : Expr(it->second);
  }

 private:
  std::unordered_map<const ExprNode*, Var> map_;
};

// The placement a function pass must keep: where the new function states no
// device or span, the old function's are restored.
Function restore_placement(const Function& old_fn, Function new_fn) {
  if (new_fn.same_as(old_fn)) return new_fn;
  std::unordered_map<const ExprNode*, Var> renamed;
  std::vector<Var> params = new_fn->params;
  if (params.size() == old_fn->params.size()) {
    for (size_t i = 0; i < params.size(); ++i) {
      const VirtualDevice* want = old_fn->params[i]->virtual_device();
      if (params[i]->virtual_device()->is_fully_unconstrained() && !want->is_fully_unconstrained()) {
        Var v = with_fields(params[i], {.virtual_device = want});
        renamed.emplace(params[i].get(), v);
        params[i] = v;
      }
    }
  }
  Expr body = new_fn->body;
  if (!renamed.empty()) body = VarSubstituter(renamed).mutate(body);
  FunctionChanges changes{.params = params, .body = body};
  if (new_fn->virtual_device()->is_fully_unconstrained()) changes.virtual_device = old_fn->virtual_device();
  if (!new_fn->span().defined()) changes.span = old_fn->span();
  return with_fields(new_fn, std::move(changes));
}

}  // namespace

IRModule map_functions(const IRModule& mod,
                       const std::function<Function(const std::string& name, const Function& fn)>& fn) {
  IRModule out = mod;
  for (const auto& [name, f] : mod.functions())
    if (!f->is_primitive()) out.add(name, fn(name, f));
  return out;
}

Pass make_function_pass(PassInfo info, FunctionPassFn fn) {
  return Pass(std::move(info), [fn](const IRModule& mod, const PassContext& ctx) {
    return map_functions(mod, [&](const std::string&, const Function& f) {
      return restore_placement(f, fn(f, mod, ctx));
    });
  });
}

void DiagnosticSink::report(Diagnostic diagnostic) {
  if (observer_) observer_(diagnostic);
  std::lock_guard<std::mutex> lock(mutex_);
  diagnostics_.push_back(std::move(diagnostic));
}

std::vector<DiagnosticSink::Diagnostic> DiagnosticSink::diagnostics() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return diagnostics_;
}

namespace {
thread_local std::vector<const PassContext*> context_stack;
}  // namespace

const PassContext& PassContext::current() {
  static const PassContext default_context;
  return context_stack.empty() ? default_context : *context_stack.back();
}

PassContext::Scope::Scope(const PassContext& ctx) {
  context_stack.push_back(&ctx);
  for (const auto& inst : ctx.instruments) inst->enter_context();
}

PassContext::Scope::~Scope() {
  const PassContext* ctx = context_stack.back();
  context_stack.pop_back();
  for (const auto& inst : ctx->instruments) inst->exit_context();
}

bool PassContext::is_disabled(const std::string& pass) const {
  return std::find(disabled_passes.begin(), disabled_passes.end(), pass) != disabled_passes.end();
}
bool PassContext::is_enabled(const std::string& pass) const {
  return std::find(enabled_passes.begin(), enabled_passes.end(), pass) != enabled_passes.end();
}

int64_t PassContext::config_int(const std::string& key, int64_t fallback) const {
  auto it = config.find(key);
  if (it == config.end()) return fallback;
  if (auto* i = std::get_if<int64_t>(&it->second)) return *i;
  throw Error(ErrorKind::kUsage, "configuration '" + key + "' must be an integer");
}
bool PassContext::config_bool(const std::string& key, bool fallback) const {
  auto it = config.find(key);
  if (it == config.end()) return fallback;
  if (auto* b = std::get_if<bool>(&it->second)) return *b;
  throw Error(ErrorKind::kUsage, "configuration '" + key + "' must be a boolean");
}
std::string PassContext::config_string(const std::string& key, const std::string& fallback) const {
  auto it = config.find(key);
  if (it == config.end()) return fallback;
  if (auto* s = std::get_if<std::string>(&it->second)) return *s;
  throw Error(ErrorKind::kUsage, "configuration '" + key + "' must be a string");
}

}  // namespace switchyard
