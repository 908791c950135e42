// Renders kernel IR as C++: statements here and in the shared statement
// printer, expressions through the shared expression printer
// (codegen/expression_printer.h) with the C++ spellings of operators.
#include "targets/cpu/compiler/cpu_render.h"

#include <algorithm>
#include <stdexcept>

#include "codegen/expression_printer.h"
#include "codegen/scalar_spelling.h"
#include "codegen/statement_printer.h"
#include "runtime/sha256.h"
#include "targets/cpu/compiler/cpu_unit.h"

namespace switchyard {

namespace kernel_ir {
namespace {

class Renderer final : public StatementPrinter {
 public:
  Renderer(const Kernel& kernel, CpuUnit& unit)
      : kernel_(kernel), unit_(unit), printer_(kCpuScalarSpelling, unit.helpers), helpers_(&unit.helpers) {}

  std::string expr(const Expr& e) override { return printing_->expr(e); }

  // Statements of run() and the loop functions of its parallel loops.
  void entry(const std::vector<Stmt>& body) {
    if (body.empty()) unit_.entry.line("// The result is empty: nothing to compute.");
    for (const Stmt& s : body) {
      if (s->kind == StmtKind::kParallel && !s->arguments.empty() && s->count > 0 && parallel_shared(s)) continue;
      if (s->kind == StmtKind::kParallel) parallel(*s);
      else stmt(unit_.entry, *s);
    }
  }

 private:
  void store(CodeWriter& out, const StmtNode& s, const std::string& comment) override {
    out.line(s.name + "[" + expr(s.index) + "] = " + store_value(stored_dtype(s.name), expr(s.value), helpers_) +
             ";" + comment);
  }

  void loop(CodeWriter& out, const StmtNode& s) override {
    if (s.loop == LoopKind::kSimd)
      out.line("#pragma omp simd" + (s.vector_width > 0 ? " simdlen(" + std::to_string(s.vector_width) + ")" : "") +
               reduction_clause(s));
    out.open("for (int64_t " + s.name + " = " + expr(s.index) + "; " + s.name + " < " + expr(s.end) + "; ++" + s.name +
             ")");
    block(out, s.body);
    out.close();
  }

  void copy(CodeWriter& out, const StmtNode& s) override {
    if (!s.comment.empty()) out.line("// " + s.comment);
    out.line("std::memcpy(buffers." + s.name + ", buffers." + s.source + ", " +
             std::to_string(s.count * int64_t(dtype_bytes(buffer(s.name).dtype))) + ");");
  }

  void run_primitive(CodeWriter& out, const StmtNode& s) override {
    if (!s.comment.empty()) out.line("// " + s.comment);
    const Buffer& destination = buffer(s.name);
    if (destination.role == BufferRole::kOutput && destination.slot == 0)
      return out.line("services->run_primitive(services->ctx, device_index, inputs, outputs);");
    out.line("void* const primitive_outputs[] = {buffers." + s.name + "};");
    out.line("services->run_primitive(services->ctx, device_index, inputs, primitive_outputs);");
  }

  static std::string reduction_clause(const StmtNode& s) {
    switch (s.reduction) {
      case Reduction::kNone: return "";
      case Reduction::kSum: return " reduction(+ : " + s.reduced + ")";
      case Reduction::kMax: return " reduction(max : " + s.reduced + ")";
    }
    return "";
  }

  void parallel(const StmtNode& s) {
    if (s.count <= 0) return unit_.entry.line("// " + s.comment + ": no elements");
    if (!s.arguments.empty()) return parallel_with_arguments(s);
    CodeWriter& out = unit_.definitions;
    out.line("// " + s.comment);
    out.open("void " + s.name + "(void* closure, int64_t begin, int64_t end)");
    out.line("const Buffers& buffers = *static_cast<const Buffers*>(closure);");
    declare_buffers(out, s.body);
    block(out, s.body);
    out.close();
    out.line();
    unit_.entry.line("// " + s.comment);
    unit_.entry.line(parallel_for(s, s.name, "&buffers"));
  }

  // A loop with arguments whose body, its buffers made arguments too, reads
  // nothing of its kernel's and uses no helper defined in the kernel's
  // namespace runs a function shared with every kernel's loop of the same
  // code: defined in the namespace sy_shared, named by its code's digest,
  // behind a guard, so that a batch of units compiles it once. Static: each
  // object keeps its own copy, so units compiled with other flags (another
  // device's -march) never share code. Channel concatenations that
  // differ only in their parts' count and offsets (DenseNet's dozens) then
  // compile their loops once. False, rendering nothing, where it cannot be.
  bool parallel_shared(const Stmt& loop) {
    if (has_buffer_statements(loop->body)) return false;
    const Stmt portable = shareable_form(loop);
    const StmtNode& s = *portable;
    const std::string restrict = kernel_.outputs_may_alias_inputs ? "" : " __restrict";
    std::vector<std::string> buffer_types;
    for (const auto& [name, actual] : s.arguments.buffers)
      buffer_types.push_back((buffer(actual).is_const ? "const " : "") + storage_type(buffer(actual).dtype) + "*");

    // The function's code under the placeholder name @, printed with helpers of its own.
    std::set<CpuHelper> helpers;
    ExpressionPrinter printer(kCpuScalarSpelling, helpers);
    CodeWriter code;
    code.open("struct @_arguments");
    for (size_t b = 0; b < buffer_types.size(); ++b) code.line(buffer_types[b] + " " + s.arguments.buffers[b].first + ";");
    for (const auto& [name, value] : s.arguments.values) code.line("int64_t " + name + ";");
    code.close(";");
    code.open("static void @(void* closure, int64_t begin, int64_t end)");
    code.line("const @_arguments& arguments = *static_cast<const @_arguments*>(closure);");
    for (size_t b = 0; b < buffer_types.size(); ++b)
      code.line(buffer_types[b] + restrict + " " + s.arguments.buffers[b].first + " = arguments." +
                s.arguments.buffers[b].first + ";");
    for (const auto& [name, value] : s.arguments.values) code.line("const int64_t " + name + " = arguments." + name + ";");
    printing_ = &printer;
    helpers_ = &helpers;
    stored_as_ = &s.arguments.buffers;
    block(code, s.body);
    printing_ = &printer_;
    helpers_ = &unit_.helpers;
    stored_as_ = nullptr;
    code.close();
    if (!helpers.empty()) return false;

    const std::string digest = sha256_hex(code.str().data(), code.str().size()).substr(0, 16);
    const std::string function = "sy_loop_" + digest;
    if (shared_.insert(function).second) {
      std::string text = code.str();
      for (size_t at = text.find('@'); at != std::string::npos; at = text.find('@', at + function.size()))
        text.replace(at, 1, function);
      unit_.shared.line("#ifndef SY_LOOP_" + digest);
      unit_.shared.line("#define SY_LOOP_" + digest);
      unit_.shared.line("// A parallel loop every kernel with a loop of this code shares (its buffers are arguments).");
      unit_.shared.open("namespace sy_shared");
      unit_.shared.append(text);
      unit_.shared.close("  // namespace sy_shared");
      unit_.shared.line("#endif");
      unit_.shared.line();
    }
    std::string initializer;
    for (const auto& [name, actual] : s.arguments.buffers) initializer += (initializer.empty() ? "buffers." : ", buffers.") + actual;
    for (const auto& [name, value] : s.arguments.values) initializer += ", " + expr(value);
    unit_.entry.line("// " + s.comment);
    unit_.entry.line("sy_shared::" + function + "_arguments " + s.name + "_call{" + initializer + "};");
    unit_.entry.line(parallel_for(s, "sy_shared::" + function, "&" + s.name + "_call"));
    return true;
  }

  static bool has_buffer_statements(const std::vector<Stmt>& body) {
    for (const Stmt& s : body)
      if (s->kind == StmtKind::kCopy || s->kind == StmtKind::kRunPrimitive || s->kind == StmtKind::kParallel ||
          has_buffer_statements(s->body) || has_buffer_statements(s->orelse))
        return true;
    return false;
  }

  // The dtype of the buffer a store names: an argument's (while a shared
  // loop prints) or the kernel's.
  DType stored_dtype(const std::string& name) const {
    if (stored_as_)
      for (const auto& [argument, actual] : *stored_as_)
        if (argument == name) return buffer(actual).dtype;
    return buffer(name).dtype;
  }

  // A loop with arguments runs a function that every loop with the same
  // body and argument names shares (the parts of a concatenation: one
  // function, however many parts), its arguments in a struct of the call's.
  void parallel_with_arguments(const StmtNode& s) {
    std::vector<std::string> buffer_types;
    for (const auto& [name, actual] : s.arguments.buffers)
      buffer_types.push_back((buffer(actual).is_const ? "const " : "") + storage_type(buffer(actual).dtype) + "*");
    const Outlined* shared = nullptr;
    for (const Outlined& o : outlined_)
      if (equal(o.loop->body, s.body) && o.buffer_types == buffer_types && same_names(o.loop->arguments, s.arguments))
        shared = &o;
    if (!shared) {
      outlined_.push_back({&s, buffer_types});
      shared = &outlined_.back();
      CodeWriter& out = unit_.definitions;
      out.open("struct " + s.name + "_arguments");
      out.line("const Buffers* buffers;");
      for (size_t b = 0; b < buffer_types.size(); ++b) out.line(buffer_types[b] + " " + s.arguments.buffers[b].first + ";");
      for (const auto& [name, value] : s.arguments.values) out.line("int64_t " + name + ";");
      out.close(";");
      out.line("// " + s.comment + " (and every loop like it, with other arguments)");
      out.open("void " + s.name + "(void* closure, int64_t begin, int64_t end)");
      out.line("const " + s.name + "_arguments& arguments = *static_cast<const " + s.name + "_arguments*>(closure);");
      out.line("const Buffers& buffers = *arguments.buffers;");
      std::string restrict = kernel_.outputs_may_alias_inputs ? "" : " __restrict";
      for (size_t b = 0; b < buffer_types.size(); ++b)
        out.line(buffer_types[b] + restrict + " " + s.arguments.buffers[b].first + " = arguments." +
                 s.arguments.buffers[b].first + ";");
      for (const auto& [name, value] : s.arguments.values)
        out.line("const int64_t " + name + " = arguments." + name + ";");
      declare_buffers(out, s.body);
      block(out, s.body);
      out.close();
      out.line();
    }
    const std::string& function = shared->loop->name;
    std::string initializer = "&buffers";
    for (const auto& [name, actual] : s.arguments.buffers) initializer += ", buffers." + actual;
    for (const auto& [name, value] : s.arguments.values) initializer += ", " + expr(value);
    unit_.entry.line("// " + s.comment);
    unit_.entry.line(function + "_arguments " + s.name + "_call{" + initializer + "};");
    unit_.entry.line(parallel_for(s, function, "&" + s.name + "_call"));
  }

  static bool same_names(const ParallelArguments& a, const ParallelArguments& b) {
    if (a.values.size() != b.values.size() || a.buffers.size() != b.buffers.size()) return false;
    for (size_t i = 0; i < a.values.size(); ++i)
      if (a.values[i].first != b.values[i].first) return false;
    for (size_t i = 0; i < a.buffers.size(); ++i)
      if (a.buffers[i].first != b.buffers[i].first) return false;
    return true;
  }

  // Locals for the kernel's buffers that `body` reads or writes.
  void declare_buffers(CodeWriter& out, const std::vector<Stmt>& body) {
    std::string restrict = kernel_.outputs_may_alias_inputs ? "" : " __restrict";
    for (const Buffer* b : buffers_used(kernel_, body))
      out.line((b->is_const ? "const " : "") + storage_type(b->dtype) + "*" + restrict + " " + b->name + " = buffers." +
               b->name + ";");
  }

  static std::string parallel_for(const StmtNode& s, const std::string& function, const std::string& closure) {
    return "services->parallel_for(services->ctx, device_index, " + std::to_string(s.count) + ", " +
           std::to_string(std::max<int64_t>(s.grain, 1)) + ", " + function + ", " + closure + ");";
  }

  const Buffer& buffer(const std::string& name) const {
    for (const Buffer& b : kernel_.buffers)
      if (b.name == name) return b;
    throw std::logic_error("kernel IR writes to unknown buffer " + name);
  }

  struct Outlined {
    const StmtNode* loop;                   // the first loop to run the function, which names it
    std::vector<std::string> buffer_types;  // of its buffer arguments
  };

  const Kernel& kernel_;
  CpuUnit& unit_;
  ExpressionPrinter printer_;
  ExpressionPrinter* printing_ = &printer_;  // a shared loop's own while it prints
  std::set<CpuHelper>* helpers_;             // where printed stores record their helpers
  const std::vector<std::pair<std::string, std::string>>* stored_as_ = nullptr;  // a shared loop's buffers
  std::vector<Outlined> outlined_;
  std::set<std::string> shared_;  // the shared loops this unit defines
};

}  // namespace
}  // namespace kernel_ir

std::string render_cpu_kernel(const kernel_ir::Kernel& kernel, const std::string& name) {
  using namespace kernel_ir;
  CpuUnit unit;
  unit.name = name;
  for (const Buffer& b : kernel.buffers) {
    if (!b.layout.empty())
      throw std::logic_error("the C++ renderer prints dense row-major buffers only; " + b.name + " is " + b.layout);
    std::string type = storage_type(b.dtype);
    std::string slot = std::to_string(b.slot);
    std::string initializer;
    switch (b.role) {
      case BufferRole::kInput: initializer = "static_cast<const " + type + "*>(inputs[" + slot + "])"; break;
      case BufferRole::kOutput: initializer = "static_cast<" + type + "*>(outputs[" + slot + "])"; break;
      case BufferRole::kScratch: {
        int64_t elements = 1;
        for (int64_t d : b.shape) elements *= d;
        unit.includes.insert("<memory>");
        unit.setup.line("std::unique_ptr<" + type + "[]> " + b.name + "_storage(new " + type + "[" +
                        std::to_string(elements) + "]);");
        initializer = b.name + "_storage.get()";
        break;
      }
    }
    unit.buffers.push_back({b.name, type, b.is_const, initializer, b.comment});
  }
  Renderer(kernel, unit).entry(kernel.body);
  return assemble_cpu_unit(unit, kernel.comment, kernel.span);
}

std::string render_cpu_index(const kernel_ir::Expr& index) {
  std::set<CpuHelper> helpers;
  return kernel_ir::ExpressionPrinter(kCpuScalarSpelling, helpers).expr(index);
}

}  // namespace switchyard
