// Renders kernel IR as C++. Operators print through render_cpu_scalar (the
// one table of their C++ spellings); index arithmetic is parenthesized only
// where C++ precedence needs it, so loops read like hand-written ones.
#include "backend/cpu_render.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "backend/cpu_scalar.h"
#include "backend/cpu_unit.h"
#include "backend/statement_printer.h"

namespace switchyard {

namespace kernel_ir {
namespace {

// Whether `e` renders as a name, number or function-call-like term that
// needs no parentheses as an operand.
bool is_atom(const Expr& e) {
  switch (e->kind) {
    case ExprKind::kIndex: return e->int_value >= 0;
    case ExprKind::kInt: return true;  // a name or a function-style cast
    case ExprKind::kFloat: return !std::signbit(e->float_value);
    case ExprKind::kVar: case ExprKind::kLoad: case ExprKind::kCast: case ExprKind::kCheckedIndex: return true;
    case ExprKind::kBinary: return e->binary == BinaryOp::kMin;
    default: return false;
  }
}

const char* symbol(BinaryOp op) {
  switch (op) {
    case BinaryOp::kAdd: return " + ";
    case BinaryOp::kSub: return " - ";
    case BinaryOp::kMul: return " * ";
    case BinaryOp::kDiv: return " / ";
    case BinaryOp::kMod: return " % ";
    case BinaryOp::kMin: return ", ";
    case BinaryOp::kLess: return " < ";
    case BinaryOp::kGreater: return " > ";
    case BinaryOp::kLessEqual: return " <= ";
    case BinaryOp::kNotEqual: return " != ";
    case BinaryOp::kOr: return " || ";
    case BinaryOp::kAnd: return " && ";
  }
  return "";
}

bool is_sum(const Expr& e) {
  return e->kind == ExprKind::kBinary && (e->binary == BinaryOp::kAdd || e->binary == BinaryOp::kSub);
}

std::string value_type(DType dtype, Precision precision) { return kernel_value_type(dtype, precision); }

class Renderer final : public StatementPrinter {
 public:
  Renderer(const Kernel& kernel, CpuUnit& unit, const ScalarSpelling& spelling = kCpuScalarSpelling)
      : kernel_(kernel), unit_(unit), spelling_(spelling) {}

  std::string expr(const Expr& e) override {
    switch (e->kind) {
      case ExprKind::kIndex: return std::to_string(e->int_value);
      case ExprKind::kInt:
        if (e->precision == Precision::kAccumulator) return "uint64_t(" + std::to_string(e->int_value) + ")";
        if (e->dtype == DType::kInt64)
          return e->int_value == INT64_MIN ? "INT64_MIN" : "int64_t(" + std::to_string(e->int_value) + ")";
        if (e->dtype == DType::kInt32) return "int32_t(" + std::to_string(e->int_value) + ")";
        if (e->dtype == DType::kUInt64) return "uint64_t(" + std::to_string(uint64_t(e->int_value)) + "ull)";
        return literal(e->dtype, double(e->int_value));
      case ExprKind::kFloat:
        if (e->precision == Precision::kAccumulator) return double_literal(e->float_value);
        return literal(e->dtype, e->float_value);
      case ExprKind::kVar: return e->operands.empty() ? e->name : e->name + "[" + expr(e->operands[0]) + "]";
      case ExprKind::kBinary: return binary(e);
      case ExprKind::kLoad:
        return load_element(e->dtype, e->name + "[" + expr(e->operands[0]) + "]", &unit_.helpers);
      case ExprKind::kSelect: {
        const Expr& otherwise = e->operands[2];
        std::string tail = expr(otherwise);
        if (otherwise->kind == ExprKind::kSelect) tail = "(" + tail + ")";
        return expr(e->operands[0]) + " ? " + operand(e->operands[1]) + " : " + tail;
      }
      case ExprKind::kCast: {
        const Expr& value = e->operands[0];
        std::string type = value_type(e->dtype, e->precision);
        if (dtype_is_float(value->dtype) && !dtype_is_float(e->dtype) && e->dtype != DType::kBool) {
          unit_.helpers.insert(CpuHelper::kFloatToInt);
          const char* convert = e->dtype == DType::kUInt64 ? "sy_float_to_uint64(" : "sy_float_to_int64(";
          return type + "(" + convert + expr(value) + "))";
        }
        // A cast to float16 or bfloat16 rounds to what that dtype holds.
        std::string converted = type + "(" + expr(value) + ")";
        return e->precision == Precision::kCompute ? round_to_dtype(e->dtype, converted, &unit_.helpers) : converted;
      }
      case ExprKind::kCall: {
        // In double (Precision::kAccumulator) the operands are doubles, and
        // C++ overloads compute the float32 operator's C++ form in double.
        std::vector<std::string> values;
        for (const Expr& arg : e->operands) values.push_back(expr(arg));
        bool in_double = e->precision == Precision::kAccumulator && spelling_.in_double;
        return render_scalar(*e->call, values, unit_.helpers, in_double ? *spelling_.in_double : spelling_);
      }
      case ExprKind::kCheckedIndex:
        unit_.helpers.insert(CpuHelper::kCheckedIndex);
        return "sy_checked_index(" + expr(e->operands[0]) + ", " + std::to_string(e->int_value) + ", " +
               kFaultsArgument + ")";
    }
    throw std::logic_error("unknown kernel IR expression");
  }

  // Statements of run() and the loop functions of its parallel loops.
  void entry(const std::vector<Stmt>& body) {
    if (body.empty()) unit_.entry.line("// The result is empty: nothing to compute.");
    for (const Stmt& s : body) {
      if (s->kind == StmtKind::kParallel) parallel(*s);
      else stmt(unit_.entry, *s);
    }
  }

 private:
  // An operand of a tighter-binding operator: parenthesized unless atomic.
  std::string operand(const Expr& e) {
    std::string text = expr(e);
    // An operator's C++ form may be a name or an infix expression.
    if (e->kind == ExprKind::kCall) return parenthesize(text);
    return is_atom(e) ? text : "(" + text + ")";
  }

  std::string binary(const Expr& e) {
    const Expr& a = e->operands[0];
    const Expr& b = e->operands[1];
    std::string op = symbol(e->binary);
    switch (e->binary) {
      case BinaryOp::kAdd: return sum_term(a) + op + sum_term(b);
      case BinaryOp::kSub: return sum_term(a) + op + (is_sum(b) ? operand(b) : sum_term(b));
      case BinaryOp::kMin: return "sy_min(" + expr(a) + op + expr(b) + ")";
      case BinaryOp::kLess: case BinaryOp::kGreater: case BinaryOp::kLessEqual: case BinaryOp::kNotEqual:
        return sum_term(a) + op + sum_term(b);
      // Comparisons bind tighter than && and ||; && in || is parenthesized.
      case BinaryOp::kOr: case BinaryOp::kAnd: return logical_term(a, e->binary) + op + logical_term(b, e->binary);
      // A negative immediate needs no parentheses on the right: "i * -2".
      default: return operand(a) + op + (b->kind == ExprKind::kIndex ? expr(b) : operand(b));
    }
  }

  // A term of a sum or comparison: products and sums need no parentheses.
  std::string sum_term(const Expr& e) {
    if (e->kind == ExprKind::kBinary && !is_comparison(e->binary)) return expr(e);
    return operand(e);
  }

  // A term of `op`, kOr or kAnd: a comparison or the same operator needs no parentheses.
  std::string logical_term(const Expr& e, BinaryOp op) {
    bool logical = e->kind == ExprKind::kBinary && (e->binary == BinaryOp::kOr || e->binary == BinaryOp::kAnd);
    if (e->kind == ExprKind::kBinary && is_comparison(e->binary) && (!logical || e->binary == op)) return expr(e);
    return operand(e);
  }

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
  const ScalarSpelling& spelling_;
  std::vector<Outlined> outlined_;
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

std::string kernel_value_type(DType dtype, kernel_ir::Precision precision) {
  if (precision == kernel_ir::Precision::kCompute) return compute_type(dtype);
  return dtype_is_float(dtype) ? "double" : "uint64_t";
}

std::string render_cpu_index(const kernel_ir::Expr& index) {
  kernel_ir::Kernel none;
  CpuUnit unit;
  return kernel_ir::Renderer(none, unit).expr(index);
}

std::string render_kernel_expr(const kernel_ir::Expr& e, const ScalarSpelling& spelling,
                               std::set<CpuHelper>& helpers) {
  kernel_ir::Kernel none;
  CpuUnit unit;
  std::string text = kernel_ir::Renderer(none, unit, spelling).expr(e);
  helpers.insert(unit.helpers.begin(), unit.helpers.end());
  return text;
}

}  // namespace switchyard
