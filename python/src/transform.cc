// Bindings of the pass infrastructure: Pass (callable on a module),
// Sequential, PassContext (a context manager), the C++ instruments
// (InvariantChecker, Timing), Python-subclassable PassInstrument, passes
// written in Python (make_function_pass / make_module_pass), and the
// built-in passes by name. A PassContext refuses what it would otherwise
// ignore: a pass name no pass has (a typo would silently disable nothing).
#include <cctype>
#include <exception>
#include <set>
#include <thread>

#include "layout/plan_layouts.h"
#include "common.h"
#include "ir/compilation_config.h"
#include "pipeline/pass_table.h"
#include "placement/place_new_nodes.h"
#include "placement/plan_devices.h"
#include "support/error.h"
#include "transform/instruments.h"
#include "transform/pass.h"
#include "transform/specialize.h"

namespace switchyard::python {

namespace {

// A Python PassContext: the C++ context, the Python instrument objects it
// uses (kept alive with it) and the scopes entered through `with`.
// A C++ context that places the nodes Python passes insert after planning.
std::shared_ptr<PassContext> placing_context(const PassContext& base = PassContext()) {
  auto ctx = std::make_shared<PassContext>(base);
  if (!ctx->place_new_nodes) ctx->place_new_nodes = [](const IRModule& m) { return place_new_nodes(m); };
  return ctx;
}

struct PyPassContext {
  std::shared_ptr<PassContext> ctx = placing_context();
  py::list python_instruments;
  std::vector<std::unique_ptr<PassContext::Scope>> scopes;
  // The context stack is per thread: a scope is left on the thread that entered it.
  std::vector<std::thread::id> scope_threads;
};

// Exceptions a Python instrument raised in enter_context/exit_context, which
// run inside Scope's constructor and (noexcept) destructor: they are held
// here and raised once the scope change is complete.
std::exception_ptr& pending_instrument_error() {
  static std::exception_ptr pending;
  return pending;
}

void raise_pending_instrument_error() {
  std::exception_ptr p = pending_instrument_error();
  pending_instrument_error() = nullptr;
  if (p) std::rethrow_exception(p);
}

class PyPassInstrument : public PassInstrument {
 public:
  std::string name() const override {
    py::object self = py::cast(static_cast<const PassInstrument*>(this), py::return_value_policy::reference);
    py::object attr = py::getattr(self, "name", py::none());
    if (py::isinstance<py::str>(attr)) return attr.cast<std::string>();
    if (PyCallable_Check(attr.ptr())) {
      py::object value = attr();
      if (py::isinstance<py::str>(value)) return value.cast<std::string>();
    }
    return type_name_of(self);
  }
  void enter_context() override { deferred("enter_context"); }
  void exit_context() override { deferred("exit_context"); }
  bool should_run(const IRModule& mod, const PassInfo& info) override {
    py::gil_scoped_acquire gil;
    py::function f = py::get_override(static_cast<const PassInstrument*>(this), "should_run");
    if (!f) return true;
    py::object answer = f(mod, info);
    // Anything else than a bool is refused: None from a forgotten return would skip every pass.
    if (!PyBool_Check(answer.ptr()))
      throw py::type_error(type_name_of(py::cast(static_cast<const PassInstrument*>(this))) +
                           ".should_run must return a bool, got " + type_name_of(answer));
    return answer.cast<bool>();
  }
  void run_before_pass(const IRModule& mod, const PassInfo& info) override {
    PYBIND11_OVERRIDE_NAME(void, PassInstrument, "run_before_pass", run_before_pass, mod, info);
  }
  void run_after_pass(const IRModule& mod, const PassInfo& info) override {
    PYBIND11_OVERRIDE_NAME(void, PassInstrument, "run_after_pass", run_after_pass, mod, info);
  }

 private:
  void deferred(const char* method) {
    try {
      if (py::function f = py::get_override(static_cast<const PassInstrument*>(this), method)) f();
    } catch (...) {
      if (!pending_instrument_error()) pending_instrument_error() = std::current_exception();
    }
  }
};

// Adds "in Python pass 'X'" to a Python exception raised inside that pass.
void note_pass(py::error_already_set& e, const std::string& pass_name) {
  std::string note = "in Python pass '" + pass_name + "'";
  py::object value = e.value();
  if (!py::hasattr(value, "add_note")) return;
  py::object notes = py::getattr(value, "__notes__", py::list());
  for (py::handle n : notes)
    if (py::str(n).cast<std::string>() == note) return;
  value.attr("add_note")(note);
}

std::shared_ptr<PyPassContext> context_view(const PassContext& ctx) {
  auto view = std::make_shared<PyPassContext>();
  view->ctx = std::make_shared<PassContext>(ctx);
  return view;
}

// Names of the passes made in this process besides the built-in table
// (Python passes, Sequentials), so that PassContext can tell a typo from a
// pass of the user's own. Touched only with the GIL held.
std::set<std::string>& made_pass_names() {
  static auto* names = new std::set<std::string>();
  return *names;
}

const Pass& remember(const Pass& p) {
  made_pass_names().insert(p.name());
  for (const Pass& child : p.children()) remember(child);
  return p;
}

// PassError naming each of `names` that no pass has, with the close matches.
void check_pass_names(const std::vector<std::string>& names, const std::string& option) {
  std::set<std::string> known = made_pass_names();
  for (const std::string& n : pass_names()) known.insert(n);
  for (const std::string& name : names) {
    if (known.count(name)) continue;
    py::list candidates;
    for (const std::string& k : known) candidates.append(k);
    py::list close = py::module_::import("difflib").attr("get_close_matches")(name, candidates, 3, 0.6);
    std::string hint;
    for (py::handle c : close) hint += (hint.empty() ? "" : "' or '") + c.cast<std::string>();
    std::string all;
    for (const std::string& k : known) all += (all.empty() ? "" : ", ") + k;
    throw Error(ErrorKind::kPass, "unknown pass '" + name + "' in " + option +
                                      (hint.empty() ? "" : "; did you mean '" + hint + "'?") + " (known: " + all + ")");
  }
}

PassInfo pass_info(const std::string& name, int opt_level, const std::vector<std::string>& required) {
  if (name.empty()) throw py::value_error("a pass needs a non-empty name");
  made_pass_names().insert(name);
  // Nodes built in Python are untyped until the InferType the next pass needing types runs.
  return PassInfo{name, opt_level, required, /*preserves_types=*/false};
}

Pass python_function_pass(const std::string& name, int opt_level, const std::vector<std::string>& required,
                          py::function fn) {
  return make_function_pass(
      pass_info(name, opt_level, required),
      [fn, name](const Function& f, const IRModule& mod, const PassContext& ctx) -> Function {
        py::object result;
        try {
          result = fn(f, mod, context_view(ctx));
        } catch (py::error_already_set& e) {
          note_pass(e, name);
          throw;
        }
        if (result.is_none() || !py::isinstance<FunctionNode>(result))
          throw py::type_error("function pass '" + name + "' must return a Function, got " + type_name_of(result));
        return result.cast<Function>();
      });
}

Pass python_module_pass(const std::string& name, int opt_level, const std::vector<std::string>& required,
                        py::function fn) {
  return make_module_pass(pass_info(name, opt_level, required),
                          [fn, name](const IRModule& mod, const PassContext& ctx) -> IRModule {
                            py::object result;
                            try {
                              result = fn(mod, context_view(ctx));
                            } catch (py::error_already_set& e) {
                              note_pass(e, name);
                              throw;
                            }
                            if (!py::isinstance<IRModule>(result))
                              throw py::type_error("module pass '" + name + "' must return an IRModule, got " +
                                                   type_name_of(result));
                            return result.cast<IRModule>();
                          });
}

std::vector<std::string> string_list(py::handle value, const std::string& what) {
  std::vector<std::string> out;
  if (value.is_none()) return out;
  if (py::isinstance<py::str>(value) || !(py::isinstance<py::list>(value) || py::isinstance<py::tuple>(value)))
    throw py::type_error(what + " must be a list of str, got " + type_name_of(value));
  for (py::handle item : value) {
    if (py::isinstance<VirtualDevice>(item)) {
      out.push_back(item.cast<const VirtualDevice*>()->str());
      continue;
    }
    if (!py::isinstance<py::str>(item)) throw py::type_error(what + " entries must be str, got " + type_name_of(item));
    out.push_back(item.cast<std::string>());
  }
  return out;
}

std::string optional_string(py::handle value, const std::string& what) {
  if (value.is_none()) return "";
  if (py::isinstance<VirtualDevice>(value)) return value.cast<const VirtualDevice*>()->str();
  if (!py::isinstance<py::str>(value)) throw py::type_error(what + " must be a str or None, got " + type_name_of(value));
  return value.cast<std::string>();
}

PipelineOptions pipeline_options(py::handle devices, py::handle default_device, py::handle host, py::handle place) {
  PipelineOptions options;
  // One name may be given as a string. The list is held here: assigned to
  // the handle, it would be freed at the end of the statement.
  py::object device_list = py::reinterpret_borrow<py::object>(devices);
  if (py::isinstance<py::str>(devices)) device_list = py::make_tuple(devices);
  std::vector<std::string> names = string_list(device_list, "devices");
  if (names.empty()) {
    if (!place.is_none() && py::len(place) > 0) throw py::value_error("placement rules need devices=[...]");
    return options;
  }
  std::string joined;
  for (const std::string& n : names) joined += (joined.empty() ? "" : ",") + n;
  options.config = CompilationConfig::parse(joined, optional_string(default_device, "default"),
                                            optional_string(host, "host"));
  for (const std::string& rule : string_list(place, "place"))
    options.rules.push_back(parse_placement_rule(rule, *options.config));
  return options;
}

// The configuration keys the built-in passes read (fold_constant.cc,
// inline.cc, fuse_ops.cc; all integers). A key under a built-in pass's
// prefix that is not one of them would be silently ignored, so it is
// refused; other keys are the user's own (Python passes read them from
// ctx.config) and pass through.
void check_config_key(const std::string& key, const AttrValue& value) {
  static const std::set<std::string> integer_keys = {"FoldConstant.max_bytes", "FuseOps.max_group_size",
                                                     "inline.max_calls"};
  if (integer_keys.count(key)) {
    if (!std::holds_alternative<int64_t>(value))
      throw Error(ErrorKind::kUsage, "configuration '" + key + "' must be an integer, got " + attr_value_to_string(value));
    return;
  }
  std::string prefix = key.substr(0, key.find('.'));
  if (prefix == key) return;
  auto lower = [](std::string text) {
    for (char& ch : text) ch = char(std::tolower(static_cast<unsigned char>(ch)));
    return text;
  };
  for (const std::string& name : pass_names()) {
    if (lower(name) != lower(prefix)) continue;
    std::string known;
    for (const std::string& k : integer_keys) known += (known.empty() ? "" : ", ") + k;
    throw Error(ErrorKind::kUsage, "unknown configuration '" + key + "': no built-in pass reads it (known: " + known + ")");
  }
}

// Raises each diagnostic reported after the first `reported` as a Python
// UserWarning (an error where the warnings filter says so).
void warn_new_diagnostics(const PassContext& ctx, size_t reported) {
  std::vector<DiagnosticSink::Diagnostic> all = ctx.diagnostics->diagnostics();
  for (size_t i = reported; i < all.size(); ++i)
    if (PyErr_WarnEx(PyExc_UserWarning, all[i].text.c_str(), 1) != 0) throw py::error_already_set();
}

py::object instrument_object(const std::shared_ptr<PassInstrument>& inst, const PyPassContext& c) {
  for (py::handle h : c.python_instruments)
    if (h.cast<std::shared_ptr<PassInstrument>>().get() == inst.get()) return py::reinterpret_borrow<py::object>(h);
  return py::cast(inst);
}

// PassInfo, and Pass: callable on a module, its warnings raised as Python warnings.
void bind_pass_types(py::module_& t) {
  py::class_<PassInfo>(t, "PassInfo", "A pass's name, opt level and required passes.")
      .def_readonly("name", &PassInfo::name)
      .def_readonly("opt_level", &PassInfo::opt_level)
      .def_readonly("required", &PassInfo::required)
      .def_readonly("preserves_types", &PassInfo::preserves_types,
                    "Whether every node it makes is typed (built-in passes); the checker holds it to that.")
      .def("__repr__", [](const PassInfo& i) { return "PassInfo(" + i.name + ", opt_level=" + std::to_string(i.opt_level) + ")"; });

  py::class_<Pass>(t, "Pass", "A named module-to-module transformation; call it on an IRModule.")
      .def(py::init<const Pass&>(), py::arg("other"))
      .def(
          "__call__",
          [](const Pass& p, py::handle mod, py::handle ctx) {
            if (!py::isinstance<IRModule>(mod))
              throw py::type_error("pass '" + p.name() + "' takes an IRModule, got " + type_name_of(mod));
            // A copy: a Python pass may change the caller's module object meanwhile.
            IRModule m = mod.cast<IRModule>();
            if (!ctx.is_none() && !py::isinstance<PyPassContext>(ctx))
              throw py::type_error("ctx must be a PassContext, got " + type_name_of(ctx));
            std::shared_ptr<PassContext> c =
                ctx.is_none() ? placing_context(PassContext::current()) : ctx.cast<const PyPassContext&>().ctx;
            size_t reported = c->diagnostics->diagnostics().size();
            IRModule out = p(m, *c);
            warn_new_diagnostics(*c, reported);
            return out;
          },
          py::arg("mod"), py::arg("ctx") = py::none(),
          "Runs the pass on a module under ctx (default: the current PassContext); its warnings "
          "(PlanDevices' fallbacks to the host) are raised as Python warnings and kept in ctx.diagnostics.")
      .def_property_readonly("name", &Pass::name)
      .def_property_readonly("info", &Pass::info)
      .def_property_readonly("opt_level", [](const Pass& p) { return p.info().opt_level; })
      .def_property_readonly("required", [](const Pass& p) { return p.info().required; })
      .def_property_readonly("children", &Pass::children)
      .def("__repr__", [](const Pass& p) { return "Pass(" + p.name() + ")"; });
}

// Sequential, passes made of Python functions, and the built-in passes by name.
void bind_pass_makers(py::module_& t) {
  t.def(
      "Sequential",
      [](py::handle passes, py::handle name) {
        if (!py::isinstance<py::list>(passes) && !py::isinstance<py::tuple>(passes))
          throw py::type_error("Sequential takes a list of passes, got " + type_name_of(passes));
        std::vector<Pass> ps;
        for (py::handle p : passes) {
          if (!py::isinstance<Pass>(p)) throw py::type_error("Sequential entries must be passes, got " + type_name_of(p));
          ps.push_back(p.cast<Pass>());
        }
        return remember(Sequential(std::move(ps), to_str(name, "name")));
      },
      py::arg("passes"), py::arg("name") = "Sequential", "Runs passes in order, checking each one's requirements.");
  t.def(
      "make_function_pass",
      [](py::handle name, py::handle opt_level, py::handle required, py::function fn) {
        return python_function_pass(to_str(name, "name"), to_int32(opt_level, "opt_level"),
                                    string_list(required, "required"), fn);
      },
      py::arg("name"), py::arg("opt_level"), py::arg("required"), py::arg("fn"),
      "A pass applying fn(func, mod, ctx) -> Function to each function.");
  t.def(
      "make_module_pass",
      [](py::handle name, py::handle opt_level, py::handle required, py::function fn) {
        return python_module_pass(to_str(name, "name"), to_int32(opt_level, "opt_level"),
                                  string_list(required, "required"), fn);
      },
      py::arg("name"), py::arg("opt_level"), py::arg("required"), py::arg("fn"), "A pass applying fn(mod, ctx) -> IRModule.");
  t.def(
      "pass_by_name",
      [](py::handle name, py::handle devices, py::handle default_device, py::handle host, py::handle place) {
        return pass_by_name(to_str(name, "name"), pipeline_options(devices, default_device, host, place));
      },
      py::arg("name"), py::kw_only(), py::arg("devices") = py::none(), py::arg("default") = py::none(),
      py::arg("host") = py::none(), py::arg("place") = py::none(), "A built-in pass by name.");
  t.def("pass_names", &pass_names, "The names pass_by_name knows.");
  t.def(
      "specialize",
      [](const IRModule& mod, const std::map<std::string, int64_t>& values) {
        py::gil_scoped_release release;
        return specialize(mod, values);
      },
      py::arg("mod"), py::arg("values"),
      "The module with dimension variables replaced by values ({'n': 4}) and every type re-derived.");
  t.def(
      "register_pass_name", [](py::handle name) { made_pass_names().insert(to_str(name, "name")); }, py::arg("name"),
      "Makes `name` known to PassContext's name check before a pass of that name is made.");
}

// The built-in passes that take devices or layouts, and the default pipeline.
void bind_planning_passes(py::module_& t) {
  t.def(
      "PlanDevices",
      [](py::handle devices, py::handle default_device, py::handle host, py::handle place) {
        PipelineOptions o = pipeline_options(devices, default_device, host, place);
        if (!o.config) throw py::value_error("PlanDevices needs devices=[\"cpu:0\", ...]");
        return PlanDevices(*o.config, o.rules);
      },
      py::arg("devices"), py::kw_only(), py::arg("default") = py::none(), py::arg("host") = py::none(),
      py::arg("place") = py::none(),
      "Device planning over the given devices (\"cpu:0\", ...), with placement rules such as "
      "\"op:nn.softmax=cpu:1\".");
  t.def(
      "PlanLayouts",
      [](py::handle layouts) {
        std::vector<LayoutRule> rules;
        for (const std::string& rule : string_list(layouts, "layouts")) rules.push_back(parse_layout_rule(rule));
        return PlanLayouts(std::move(rules));
      },
      py::kw_only(), py::arg("layouts") = py::none(),
      "Layouts for the values passed only between oneDNN convolutions and pools of a fused, placed module, "
      "with layout pins such as \"node:layer1/*=nChw16c\".");
  t.def(
      "default_pipeline",
      [](py::handle devices, py::handle default_device, py::handle host, py::handle place) {
        return remember(default_pipeline(pipeline_options(devices, default_device, host, place)));
      },
      py::arg("devices"), py::kw_only(), py::arg("default") = py::none(), py::arg("host") = py::none(),
      py::arg("place") = py::none(), "The compiler's pipeline before lowering.");
}

void bind_instruments(py::module_& t) {
  py::class_<PassInstrument, PyPassInstrument, std::shared_ptr<PassInstrument>>(
      t, "PassInstrument",
      "Observes pass runs. Subclass and override enter_context(), exit_context(), should_run(mod, info) "
      "(False skips the pass), run_before_pass(mod, info), run_after_pass(mod, info); `name` (a str or "
      "method) defaults to the class name.")
      .def(py::init_alias<>())
      .def("enter_context", [](PassInstrument&) {})
      .def("exit_context", [](PassInstrument&) {})
      .def("should_run", [](PassInstrument&, const IRModule&, const PassInfo&) { return true; }, py::arg("mod"), py::arg("info"))
      .def("run_before_pass", [](PassInstrument&, const IRModule&, const PassInfo&) {}, py::arg("mod"), py::arg("info"))
      .def("run_after_pass", [](PassInstrument&, const IRModule&, const PassInfo&) {}, py::arg("mod"), py::arg("info"));

  py::class_<InvariantChecker, PassInstrument, std::shared_ptr<InvariantChecker>>(
      t, "InvariantChecker",
      "After every pass: scoping, types and (once planned) placement; raises InvariantError naming the pass, "
      "the node and its span.")
      .def(py::init<>())
      .def_property_readonly("name", &InvariantChecker::name)
      .def(
          "check",
          [](InvariantChecker& c, py::handle mod, py::handle pass_name) {
            if (!py::isinstance<IRModule>(mod)) throw py::type_error("check() takes an IRModule, got " + type_name_of(mod));
            c.check(mod.cast<const IRModule&>(), to_str(pass_name, "pass_name"));
          },
          py::arg("mod"), py::arg("pass_name") = "<python>", "Checks a module now.")
      .def(
          "last_pass_touching",
          [](const InvariantChecker& c, py::handle node) { return c.last_pass_touching(to_expr(node, "node").get()); },
          py::arg("node"), "The pass that last produced `node`, or \"\".");

  py::class_<TimingInstrument, PassInstrument, std::shared_ptr<TimingInstrument>>(t, "Timing",
                                                                                  "Times every pass run.")
      .def(py::init<>())
      .def_property_readonly("name", &TimingInstrument::name)
      .def_property_readonly("entries",
                             [](const TimingInstrument& ti) {
                               py::list out;
                               for (const auto& e : ti.entries()) out.append(py::make_tuple(e.pass, e.milliseconds));
                               return out;
                             })
      .def("report", &TimingInstrument::report, "A table: one line per pass run, then the total.");
}

// Contexts entered with `with` and not yet left are kept alive here, since
// the C++ context stack points at them.
py::list& entered_contexts() {
  static py::list* entered = new py::list();
  return *entered;
}

// PassContext(...): each argument checked, the instruments kept as the
// Python objects given, and an InvariantChecker added when asked.
std::shared_ptr<PyPassContext> make_pass_context(py::handle opt_level, py::handle check_invariants_arg,
                                                 py::handle instruments, py::handle disabled, py::handle enabled,
                                                 py::handle config) {
  auto c = std::make_shared<PyPassContext>();
  c->ctx->opt_level = to_int32(opt_level, "opt_level");
  bool check_invariants = to_bool(check_invariants_arg, "check_invariants");
  c->ctx->disabled_passes = string_list(disabled, "disabled_passes");
  c->ctx->enabled_passes = string_list(enabled, "enabled_passes");
  check_pass_names(c->ctx->disabled_passes, "disabled_passes");
  check_pass_names(c->ctx->enabled_passes, "enabled_passes");
  for (auto& [k, v] : to_attr_entries(config, "config")) {
    check_config_key(k, v);
    c->ctx->config[k] = v;
  }
  bool has_checker = false;
  if (!instruments.is_none()) {
    if (!py::isinstance<py::list>(instruments) && !py::isinstance<py::tuple>(instruments))
      throw py::type_error("instruments must be a list, got " + type_name_of(instruments));
    for (py::handle inst : instruments) {
      if (!py::isinstance<PassInstrument>(inst))
        throw py::type_error("instruments must be PassInstrument objects, got " + type_name_of(inst));
      auto p = inst.cast<std::shared_ptr<PassInstrument>>();
      has_checker = has_checker || dynamic_cast<InvariantChecker*>(p.get()) != nullptr;
      c->ctx->instruments.push_back(p);
      c->python_instruments.append(inst);
    }
  }
  if (check_invariants && !has_checker) c->ctx->instruments.push_back(std::make_shared<InvariantChecker>());
  return c;
}

py::object enter_pass_context(py::object self) {
  PyPassContext& c = self.cast<PyPassContext&>();
  c.scopes.push_back(std::make_unique<PassContext::Scope>(*c.ctx));
  c.scope_threads.push_back(std::this_thread::get_id());
  entered_contexts().append(self);
  if (pending_instrument_error()) {
    c.scopes.pop_back();
    c.scope_threads.pop_back();
    entered_contexts().attr("pop")();
    raise_pending_instrument_error();
  }
  return self;
}

bool exit_pass_context(py::object self, py::handle, py::handle, py::handle) {
  PyPassContext& c = self.cast<PyPassContext&>();
  if (c.scopes.empty()) throw py::value_error("PassContext.__exit__ without a matching __enter__");
  if (c.scope_threads.back() != std::this_thread::get_id())
    throw py::value_error("PassContext.__exit__ on another thread than its __enter__");
  c.scopes.pop_back();
  c.scope_threads.pop_back();
  for (size_t i = py::len(entered_contexts()); i-- > 0;)
    if (py::object(entered_contexts()[i]).is(self)) {
      entered_contexts().attr("pop")(i);
      break;
    }
  raise_pending_instrument_error();
  return false;
}

void bind_context(py::module_& t) {
  py::class_<PyPassContext, std::shared_ptr<PyPassContext>>(
      t, "PassContext",
      "Opt level, enabled/disabled passes, configuration and instruments for the passes run inside "
      "`with PassContext(...):`. check_invariants adds an InvariantChecker.")
      .def(py::init(&make_pass_context),
           py::arg("opt_level") = 2, py::arg("check_invariants") = true, py::arg("instruments") = py::none(),
           py::arg("disabled_passes") = py::none(), py::arg("enabled_passes") = py::none(),
           py::arg("config") = py::none())
      .def_static("current", []() { return context_view(PassContext::current()); },
                  "A snapshot of the innermost context entered (a default one outside any).")
      .def("__enter__", &enter_pass_context)
      .def("__exit__", &exit_pass_context)
      .def_property_readonly("opt_level", [](const PyPassContext& c) { return c.ctx->opt_level; })
      .def_property_readonly("disabled_passes", [](const PyPassContext& c) { return c.ctx->disabled_passes; })
      .def_property_readonly("enabled_passes", [](const PyPassContext& c) { return c.ctx->enabled_passes; })
      .def_property_readonly("config",
                             [](const PyPassContext& c) {
                               py::dict out;
                               for (const auto& [k, v] : c.ctx->config) out[py::str(k)] = attr_value_to_python(v);
                               return out;
                             })
      .def_property_readonly("instruments",
                             [](const PyPassContext& c) {
                               py::list out;
                               for (const auto& inst : c.ctx->instruments) out.append(instrument_object(inst, c));
                               return out;
                             })
      .def_property_readonly("diagnostics",
                             [](const PyPassContext& c) {
                               py::list out;
                               for (const auto& d : c.ctx->diagnostics->diagnostics())
                                 out.append(py::make_tuple(d.pass, d.text));
                               return out;
                             },
                             "The warnings passes reported under this context, as (pass name, text).")
      .def_property_readonly("check_invariants", [](const PyPassContext& c) {
        for (const auto& inst : c.ctx->instruments)
          if (dynamic_cast<InvariantChecker*>(inst.get())) return true;
        return false;
      });
}

}  // namespace

void bind_transform(py::module_& transform) {
  bind_pass_types(transform);
  bind_pass_makers(transform);
  bind_planning_passes(transform);
  bind_instruments(transform);
  bind_context(transform);
}

}  // namespace switchyard::python
