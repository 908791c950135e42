// Small pieces every CPU kernel generator writes with: an indenting code
// writer, C++ spellings of dtypes, loads, stores and literals, and the
// helper functions (half-precision conversions, integer arithmetic with
// defined overflow) a kernel may need.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "ir/span.h"
#include "kernel_ir/expr.h"
#include "runtime/dtype.h"

namespace switchyard {

// Appends lines of C++ at the current indentation.
class CodeWriter {
 public:
  void line(const std::string& text = "");
  // "header {" and one level deeper.
  void open(const std::string& header);
  // One level shallower and "}" (plus `suffix`, e.g. ";").
  void close(const std::string& suffix = "");
  // "} header {" at the same depth: the next branch of an if/else chain.
  void next(const std::string& header);
  // Appends another writer's lines at the current indentation.
  void append(const CodeWriter& other);
  // Appends lines of text at the current indentation.
  void append(const std::string& text);
  const std::string& str() const { return text_; }
  bool empty() const { return text_.empty(); }

 private:
  std::string text_;
  int depth_ = 0;
};

// Helper functions a kernel's code calls; each is emitted once when used.
enum class CpuHelper : uint8_t {
  kHalf,           // sy_half_to_float / sy_float_to_half
  kBFloat16,       // sy_bfloat16_to_float / sy_float_to_bfloat16
  kFloatToInt,     // sy_float_to_int64 (and _uint64): truncating, saturating, NaN to 0
  kIntegerDivide,  // sy_divide_int (and _uint64): truncating; a zero divisor faults
  kIntegerPower,   // sy_power_int: wrapping; a negative exponent faults
  kCheckedIndex,   // sy_checked_index: an index outside [0, extent) faults
  kFloatMath,      // sy_exp, sy_log, sy_tanh, sy_erf: vectorisable (kernel_math.cc)
};

// Whether `helpers` can raise a kernel fault (SY_FAULT_* of model_abi.h):
// the kernel then keeps a fault word, `buffers.faults`, and reports it.
bool helpers_may_fault(const std::set<CpuHelper>& helpers);
// The argument a faulting helper's call passes: where it records faults.
inline constexpr const char* kFaultsArgument = "buffers.faults";

// The definitions of the kFloatMath helpers.
const char* cpu_math_definitions();

// The definitions of `helpers`, in a fixed order.
std::string cpu_helper_definitions(const std::set<CpuHelper>& helpers);
// What a CPU kernel's unit takes from <cmath> and <algorithm>, as compiler
// builtins under sy_ names (NAN and INFINITY as the macros): those headers
// cost a third of a second each to compile, most of a small kernel's time.
std::string cpu_prelude();

// The type arithmetic happens in: float for every floating-point dtype
// (float16 and bfloat16 through float), the storage type otherwise.
std::string compute_type(DType dtype);
// The storage type ("float", "uint16_t", "int8_t", ...).
std::string storage_type(DType dtype);

// The C++ type a value of `dtype` is held in at `precision` (accumulators:
// double for floating point, wrapping uint64_t for integers).
std::string kernel_value_type(DType dtype, kernel_ir::Precision precision);

// `element` (a storage-typed lvalue, e.g. "x[i]") read as its compute type,
// and a compute-typed value converted for storing. Records helpers used.
std::string load_element(DType dtype, const std::string& element, std::set<CpuHelper>* helpers);
std::string store_value(DType dtype, const std::string& value, std::set<CpuHelper>* helpers);
// A compute-typed value rounded to what `dtype` can hold (float16 and
// bfloat16 round; other dtypes are unchanged).
std::string round_to_dtype(DType dtype, const std::string& value, std::set<CpuHelper>* helpers);

// A compute-typed literal for a number: "2.5f", "-INFINITY", "NAN", "3", "true".
std::string literal(DType dtype, double value);

// A C identifier from an IR name: "nn.relu" -> "relu", "%x.1" -> "x_1".
std::string identifier(const std::string& name);
// `e` wrapped in parentheses unless it is a name or a number.
std::string parenthesize(const std::string& e);
// "a, b, c".
std::string join(const std::vector<std::string>& parts, const std::string& separator = ", ");
// A C++ comment naming a span ("" when it has none).
std::string span_comment(const Span& span);
// " at file:line:column" ("" when the span is undefined).
std::string at_span(const Span& span);
// A double literal that reads back exactly ("1.0000000000000001e-05").
std::string double_literal(double value);

}  // namespace switchyard
