// Renders kernel IR as C++: statements here and in the shared statement
// printer, expressions through the shared expression printer
// (codegen/expression_printer.h) with the C++ spellings of operators.
#include "targets/cpu/compiler/cpu_render.h"

#include <algorithm>
#include <stdexcept>

#include "codegen/expression_printer.h"
#include "codegen/scalar_spelling.h"
#include "codegen/statement_printer.h"
#include "targets/cpu/compiler/cpu_unit.h"

namespace switchyard {

namespace kernel_ir {
namespace {

class Renderer final : public StatementPrinter {
 public:
  Renderer(const Kernel& kernel, CpuUnit& unit) : kernel_(kernel), unit_(unit), printer_(kCpuScalarSpelling, unit.helpers) {}

  std::string expr(const Expr& e) override { return printer_.expr(e); }

  // Statements of run() and the loop functions of its parallel loops.
  void entry(const std::vector<Stmt>& body) {
    if (body.empty()) unit_.entry.line("// The result is empty: nothing to compute.");
    for (const Stmt& s : body) {
      if (s->kind == StmtKind::kParallel) parallel(*s);
      else stmt(unit_.entry, *s);
    }
  }

 private:
  void store(CodeWriter& out, const StmtNode& s, const std::string& comment) override {
    out.line(s.name + "[" + expr(s.index) + "] = " + store_value(buffer(s.name).dtype, expr(s.value), &unit_.helpers) +
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
    CodeWriter& out = unit_.definitions;
    out.line("// " + s.comment);
    out.open("void " + s.name + "(void* closure, int64_t begin, int64_t end)");
    out.line("const Buffers& buffers = *static_cast<const Buffers*>(closure);");
    std::string restrict = kernel_.outputs_may_alias_inputs ? "" : " __restrict";
    for (const Buffer* b : buffers_used(kernel_, s.body))
      out.line((b->is_const ? "const " : "") + storage_type(b->dtype) + "*" + restrict + " " + b->name + " = buffers." +
               b->name + ";");
    block(out, s.body);
    out.close();
    out.line();
    unit_.entry.line("// " + s.comment);
    unit_.entry.line("services->parallel_for(services->ctx, device_index, " + std::to_string(s.count) + ", " +
                     std::to_string(std::max<int64_t>(s.grain, 1)) + ", " + s.name + ", &buffers);");
  }

  const Buffer& buffer(const std::string& name) const {
    for (const Buffer& b : kernel_.buffers)
      if (b.name == name) return b;
    throw std::logic_error("kernel IR writes to unknown buffer " + name);
  }

  const Kernel& kernel_;
  CpuUnit& unit_;
  ExpressionPrinter printer_;
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
