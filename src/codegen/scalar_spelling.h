// The expression of one element-wise operator (a kernel IR ScalarCall)
// applied to operand expressions, from its scalar row: the C++ and CUDA
// renderers of the kernel IR print every operator call through it, each
// with its dialect's spelling of the math functions.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "codegen/kernel_code.h"
#include "kernel_ir/scalar_call.h"

namespace switchyard {

// How a C++ dialect spells the functions of the scalar primitives; the
// rest of an operator's rendering (arithmetic, wrapping, NaN rules,
// rounding, casts) is the same in every dialect.
struct ScalarSpelling {
  const char* target;  // in errors: "no CPU kernel for operator ..."
  const char* exp;
  const char* log;
  const char* tanh;
  const char* erf;
  bool math_is_helper;  // exp..erf are the sy_ helpers of kernel_math.cc (CpuHelper::kFloatMath)
  const char* sqrt;
  const char* floor;
  const char* ceil;
  const char* round_half_even;
  const char* pow;
  const char* fabs;
  // The C library's other functions (sin ... atanh) are spelled
  // prefix + name + suffix: "sy_sin" (cpu_prelude()), "sinf", "sin".
  const char* library_prefix;
  const char* library_suffix;
  // The spelling of calls computed in double (Precision::kAccumulator);
  // null where the same names overload on double, as C++'s do.
  const ScalarSpelling* in_double = nullptr;
  // a * b + c on floats with one rounding (ki::fused_multiply_add).
  const char* fused_multiply_add = "fmaf";
  // A function template that picks one of two values both already computed
  // (the prelude's sy_select); null where nested selects stay `?:`.
  const char* select_function = nullptr;
};

// The CPU's: vectorisable sy_ helpers and <cmath>.
extern const ScalarSpelling kCpuScalarSpelling;
// CUDA's: the device math library (expf, erff, rintf, ...; in double exp, erf, rint).
extern const ScalarSpelling kCudaScalarSpelling;

// The expression of the operator applied to `values` (compute-typed operand
// expressions) in `spelling`'s dialect, adding any helper it needs to `helpers`.
std::string render_scalar(const ScalarCall& call, const std::vector<std::string>& values,
                          std::set<CpuHelper>& helpers, const ScalarSpelling& spelling);

// The C++ expression of the operator (render_scalar with the CPU's spelling).
std::string render_cpu_scalar(const ScalarCall& call, const std::vector<std::string>& values,
                              std::set<CpuHelper>& helpers);

}  // namespace switchyard
