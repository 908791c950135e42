// Passes: named values that turn a module into a module. Module passes see the
// whole module; function passes see one function at a time and keep its
// placement unless they change it on purpose. PassContext carries the opt
// level, enabled/disabled passes, typed configuration, instruments (timing,
// IR dumps, the invariant checker) and the sink for the passes' warnings.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ir/attrs.h"
#include "ir/module.h"

namespace switchyard {

struct PassInfo {
  std::string name;
  int opt_level = 0;
  std::vector<std::string> required;  // passes whose effect this pass needs
  // Every node it makes is typed when its input is (the built-in passes:
  // types by construction), so the invariant checker reports an untyped node
  // it leaves. Passes written in Python leave new nodes untyped, for the
  // InferType that runs before the next pass requiring it.
  bool preserves_types = true;
  // It handles symbolic dimensions (ir/dim.h). Any other pass reads static
  // shapes, so it refuses a module that has one (Error(kPass) naming the
  // pass, the dimension and the node) instead of reading an empty shape.
  bool symbolic_shapes = false;
};

class PassContext;

// Observes (and may veto) pass runs. Exceptions from an instrument stop the
// pipeline (the invariant checker throws Error(kInvariant)).
class PassInstrument {
 public:
  virtual ~PassInstrument() = default;
  virtual std::string name() const = 0;
  virtual void enter_context() {}
  virtual void exit_context() {}
  // Asked before each leaf pass (as TVM's should_run): when any instrument
  // says false the pass is skipped, and no instrument sees it run.
  virtual bool should_run(const IRModule& mod, const PassInfo& info) { return true; }
  virtual void run_before_pass(const IRModule& mod, const PassInfo& info) {}
  virtual void run_after_pass(const IRModule& mod, const PassInfo& info) {}
};

class Pass {
 public:
  using ModuleFn = std::function<IRModule(const IRModule&, const PassContext&)>;
  Pass() = default;
  Pass(PassInfo info, ModuleFn fn);

  const PassInfo& info() const { return impl_->info; }
  const std::string& name() const { return impl_->info.name; }
  // Runs under PassContext::current().
  IRModule operator()(const IRModule& mod) const;
  // Runs under `ctx`: skipped when disabled, above the opt level (unless
  // enabled by name) or vetoed by an instrument's should_run; a required
  // pass whose effect is checkable and missing (InferType after a pass left
  // nodes untyped) runs first, as in Sequential; instruments run before and
  // after; on a planned module, ctx.place_new_nodes places what the pass
  // left unplaced before the instruments see the result.
  IRModule operator()(const IRModule& mod, const PassContext& ctx) const;
  // The passes inside a Sequential (empty for a leaf pass).
  const std::vector<Pass>& children() const { return impl_->children; }

 private:
  struct Impl {
    PassInfo info;
    ModuleFn fn;
    std::vector<Pass> children;
  };
  std::shared_ptr<const Impl> impl_;
  friend Pass Sequential(std::vector<Pass>, std::string);
};

Pass make_module_pass(PassInfo info, Pass::ModuleFn fn);

// `mod` with each function replaced by fn(name, function), primitive fused
// functions excepted: they are kernels, left as they are until lowering.
IRModule map_functions(const IRModule& mod,
                       const std::function<Function(const std::string& name, const Function& fn)>& fn);

using FunctionPassFn = std::function<Function(const Function&, const IRModule&, const PassContext&)>;
// Applies `fn` to each function (primitive fused functions excepted). The
// function's device, span and parameters' devices are restored wherever the
// returned function left them unconstrained (a pass that builds a new function
// from scratch keeps its placement).
Pass make_function_pass(PassInfo info, FunctionPassFn fn);

// Runs passes in order. Before each pass, checks its required passes are in
// effect (see pass_in_effect: decided on the module, so an InferType that
// ran earlier does not count once a pass left nodes untyped) or, for those
// whose effect cannot be checked, ran earlier in this sequence; a missing
// one that needs nothing but the module (a registered pass, see
// pass_registry.h: InferType) runs first, under the same context; any other
// is Error(kPass) "pass 'X' requires 'Y' to run before it".
Pass Sequential(std::vector<Pass> passes, std::string name = "Sequential");

// Whether a module already shows the effect of a pass that can be checked
// ("InferType": every function typed, which with_fields keeps honest: a
// function rebuilt over an untyped node is untyped; "PlanDevices": device
// planned); false for any other pass.
bool pass_in_effect(const std::string& pass_name, const IRModule& mod);
// Whether pass_in_effect can tell for this pass.
bool effect_is_checkable(const std::string& pass_name);

// What passes report without failing (PlanDevices' fallbacks to the host),
// kept for the caller to show: the CLI prints them on stderr, Python raises
// them as warnings. Thread-safe; a context's copies share one sink.
class DiagnosticSink {
 public:
  struct Diagnostic {
    std::string pass;  // the pass that reported it
    std::string text;  // rendered: "file:line:column: warning: ...", the source line, a caret
  };
  using Observer = std::function<void(const Diagnostic&)>;
  DiagnosticSink() = default;
  // `observer` sees each diagnostic as it is reported (the CLI prints it then).
  explicit DiagnosticSink(Observer observer) : observer_(std::move(observer)) {}
  void report(Diagnostic diagnostic);
  std::vector<Diagnostic> diagnostics() const;

 private:
  Observer observer_;
  mutable std::mutex mutex_;
  std::vector<Diagnostic> diagnostics_;
};

class PassContext {
 public:
  int opt_level = 2;
  std::vector<std::string> enabled_passes;   // run even above the opt level
  std::vector<std::string> disabled_passes;  // never run
  std::map<std::string, AttrValue> config;   // typed configuration values
  std::vector<std::shared_ptr<PassInstrument>> instruments;
  std::shared_ptr<DiagnosticSink> diagnostics = std::make_shared<DiagnosticSink>();
  // Places the nodes a pass left without a device on a planned module (nodes
  // it inserted), every other placement fixed; returns the module itself
  // when there are none. Device planning provides it (device/place_new_nodes.h:
  // Python's contexts and the CLI's set it); when empty such nodes stay
  // unplaced and the invariant checker names the pass.
  std::function<IRModule(const IRModule&)> place_new_nodes;

  // The innermost context entered on this thread (a default one otherwise).
  static const PassContext& current();
  // Makes `ctx` current for the scope of the guard.
  class Scope {
   public:
    explicit Scope(const PassContext& ctx);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;
  };

  bool is_disabled(const std::string& pass) const;
  bool is_enabled(const std::string& pass) const;
  // A typed configuration value, or `fallback` when absent.
  int64_t config_int(const std::string& key, int64_t fallback) const;
  bool config_bool(const std::string& key, bool fallback) const;
  std::string config_string(const std::string& key, const std::string& fallback) const;
};

}  // namespace switchyard
