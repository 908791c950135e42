// Pass instruments: per-pass timing, IR dumps around named passes, and the
// invariant checker that stops a pipeline at the first pass that breaks
// well-formedness or placement, naming that pass, the node and its span.
#pragma once

#include <chrono>
#include <iosfwd>
#include <set>
#include <unordered_map>

#include "analysis/primitive_check.h"
#include "text/printer.h"
#include "transform/pass.h"

namespace switchyard {

class TimingInstrument : public PassInstrument {
 public:
  std::string name() const override { return "Timing"; }
  void run_before_pass(const IRModule& mod, const PassInfo& info) override;
  void run_after_pass(const IRModule& mod, const PassInfo& info) override;
  struct Entry {
    std::string pass;
    double milliseconds;
  };
  const std::vector<Entry>& entries() const { return entries_; }
  // A table: one line per pass run, then the total.
  std::string report() const;

 private:
  std::chrono::steady_clock::time_point start_;
  std::vector<Entry> entries_;
};

// Prints the module (text format) before and/or after the named passes.
class PrintIRInstrument : public PassInstrument {
 public:
  PrintIRInstrument(std::set<std::string> before, std::set<std::string> after, std::ostream& out,
                    PrintOptions print = {});
  std::string name() const override { return "PrintIR"; }
  void run_before_pass(const IRModule& mod, const PassInfo& info) override;
  void run_after_pass(const IRModule& mod, const PassInfo& info) override;

 private:
  std::set<std::string> before_, after_;
  std::ostream& out_;
  PrintOptions print_;
};

// After every pass: scoping; types (the module type-checks, no node carries
// a type other than inference gives, and a pass that preserves types left
// no node untyped when its input was typed); fused kernels keep their
// Primitive attribute; and (once planned) placement. Throws Error(kInvariant)
// naming the pass, the node and its span. Remembers which pass last produced
// each node, so later stages can blame it.
class InvariantChecker : public PassInstrument {
 public:
  std::string name() const override { return "InvariantChecker"; }
  void run_before_pass(const IRModule& mod, const PassInfo& info) override;
  void run_after_pass(const IRModule& mod, const PassInfo& info) override;
  // The name of the last pass that produced `node`, or "" when unknown.
  std::string last_pass_touching(const ExprNode* node) const;
  // Checks `mod` now, reporting failures as after `pass_name` (untyped
  // nodes are not reported: nothing claimed to type them).
  void check(const IRModule& mod, const std::string& pass_name);

 private:
  void check(const IRModule& mod, const std::string& pass_name, bool must_be_typed);
  std::unordered_map<const ExprNode*, std::pair<Expr, std::string>> producer_;
  PrimitiveTracker kernels_;
  bool input_typed_ = false;
};

// Renders an invariant violation: pass, problem, node, span, source context.
std::string render_violation(const std::string& pass_name, const std::string& problem, const Expr& node);

}  // namespace switchyard
