// Timing, IR dumps and the invariant checker.
#include "transform/instruments.h"

#include <cstdio>
#include <ostream>

#include "analysis/describe.h"
#include "analysis/placement_check.h"
#include "analysis/well_formed.h"
#include "ir/compilation_config.h"
#include "ir/functor.h"
#include "support/error.h"
#include "text/printer.h"
#include "transform/infer_type.h"

namespace switchyard {

void TimingInstrument::run_before_pass(const IRModule&, const PassInfo&) { start_ = std::chrono::steady_clock::now(); }

void TimingInstrument::run_after_pass(const IRModule&, const PassInfo& info) {
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count();
  entries_.push_back({info.name, ms});
}

std::string TimingInstrument::report() const {
  std::string out = "pass                        time (ms)\n";
  double total = 0;
  char line[128];
  for (const Entry& e : entries_) {
    std::snprintf(line, sizeof line, "%-26s %10.3f\n", e.pass.c_str(), e.milliseconds);
    out += line;
    total += e.milliseconds;
  }
  std::snprintf(line, sizeof line, "%-26s %10.3f\n", "total", total);
  return out + line;
}

PrintIRInstrument::PrintIRInstrument(std::set<std::string> before, std::set<std::string> after, std::ostream& out,
                                     PrintOptions print)
    : before_(std::move(before)), after_(std::move(after)), out_(out), print_(print) {}

void PrintIRInstrument::run_before_pass(const IRModule& mod, const PassInfo& info) {
  if (before_.count(info.name) || before_.count("all"))
    out_ << "# IR before " << info.name << "\n" << print_module(mod, print_) << "\n";
}

void PrintIRInstrument::run_after_pass(const IRModule& mod, const PassInfo& info) {
  if (after_.count(info.name) || after_.count("all"))
    out_ << "# IR after " << info.name << "\n" << print_module(mod, print_) << "\n";
}

std::string render_violation(const std::string& pass_name, const std::string& problem, const Expr& node) {
  std::string out = "after pass '" + pass_name + "': " + problem;
  out += "\n  node: " + describe_node(node);
  out += "\n  span: " + (node->span().defined() ? node->span().to_string() : std::string("<none>"));
  for (const Span& part : node->span().parts()) {
    std::string ctx = source_context(part);
    if (!ctx.empty()) out += "\n" + ctx;
  }
  return out;
}

namespace {

std::string type_text(const Type& t) { return t ? type_to_string(t) : "none"; }

}  // namespace

void InvariantChecker::check(const IRModule& mod, const std::string& pass_name) { check(mod, pass_name, false); }

void InvariantChecker::check(const IRModule& mod, const std::string& pass_name, bool must_be_typed) {
  auto fail = [&](const Violation& v) {
    throw Error(ErrorKind::kInvariant, render_violation(pass_name, v.message, v.node), v.node->span());
  };
  if (auto v = check_scoping(mod)) fail(*v);
  TypeDefects defects;
  try {
    defects = find_type_defects(mod);
  } catch (const Error& e) {
    throw Error(ErrorKind::kInvariant, "after pass '" + pass_name + "': the module no longer type-checks: " + e.message(),
                e.span());
  }
  if (const auto& d = defects.first_mistyped)
    fail({"the node's checked type " + type_text(d->had) + " is stale: its operands give " + type_text(d->inferred),
          d->node});
  if (auto v = kernels_.find_lost(mod)) fail(*v);
  if (mod.device_planned()) {
    const VirtualDevice* host = nullptr;
    if (!mod.devices().empty()) host = CompilationConfig::from_devices(mod.devices()).host_device;
    if (auto v = check_placement(mod, host)) fail(*v);
  }
  if (const auto& d = defects.first_untyped; d && must_be_typed)
    fail({"the pass left this node untyped (it should have type " + type_text(d->inferred) +
              "), though it preserves types and its input was typed",
          d->node});
}

void InvariantChecker::run_before_pass(const IRModule& mod, const PassInfo&) {
  input_typed_ = pass_in_effect("InferType", mod);
}

void InvariantChecker::run_after_pass(const IRModule& mod, const PassInfo& info) {
  check(mod, info.name, info.preserves_types && input_typed_);
  kernels_.remember(mod);
  for (const auto& [name, fn] : mod.functions())
    post_order_visit(fn, [&](const Expr& e) {
      if (!producer_.count(e.get())) producer_.emplace(e.get(), std::make_pair(e, info.name));
    });
}

std::string InvariantChecker::last_pass_touching(const ExprNode* node) const {
  auto it = producer_.find(node);
  return it == producer_.end() ? "" : it->second.second;
}

}  // namespace switchyard
