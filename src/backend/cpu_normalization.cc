// Normalisation kernels along one axis: nn.softmax (the row's maximum is
// subtracted before exponentiating; the sum accumulates in double),
// nn.layer_norm (mean and variance in double, two passes) and nn.batch_norm
// (inference: the moving statistics, per channel). Softmax and layer_norm
// apply their element-wise epilogue as they store.
#include <algorithm>

#include "backend/cpu_kernel.h"
#include "op/registry.h"
#include "op/relation_helpers.h"
#include "support/error.h"

namespace switchyard {

namespace {

// A tensor seen as (outer, length, inner) around one axis.
struct AxisView {
  int64_t outer = 1, length = 1, inner = 1;
};

AxisView axis_view(const std::vector<int64_t>& shape, int64_t axis) {
  AxisView v;
  for (int64_t d = 0; d < int64_t(shape.size()); ++d) {
    if (d < axis) v.outer *= shape[size_t(d)];
    else if (d == axis) v.length = shape[size_t(d)];
    else v.inner *= shape[size_t(d)];
  }
  return v;
}

// "base + a * inner": the element at position `a` along the axis of row `base`.
std::string along(const AxisView& v, const std::string& a) { return "base + " + times(a, v.inner); }

// Opens the loop over rows and names `base`, the offset of a row's first element.
void open_rows(CodeWriter& body, const AxisView& v) {
  body.open("for (int64_t row = begin; row < end; ++row)");
  if (v.inner == 1)
    body.line("const int64_t base = " + times("row", v.length) + ";");
  else
    body.line("const int64_t base = row / " + std::to_string(v.inner) + " * " + std::to_string(v.length * v.inner) +
              " + row % " + std::to_string(v.inner) + ";");
}

void softmax(CpuKernel& k, const AxisView& v, DType dtype) {
  k.helpers.insert(CpuHelper::kFloatMath);
  std::string x = k.input(0);
  auto load = [&](const std::string& a) { return load_element(dtype, x + "[" + along(v, a) + "]", &k.helpers); };
  k.parallel_loop("softmax", "nn.softmax" + at_span(k.master->span()) + ", one row at a time",
                  v.outer * v.inner, std::max<int64_t>(1, kElementGrain / std::max<int64_t>(v.length, 1)),
                  [&](CodeWriter& body) {
                    open_rows(body, v);
                    body.line("float row_max = -INFINITY;");
                    body.line("#pragma omp simd reduction(max : row_max)");
                    body.line("for (int64_t a = 0; a < " + std::to_string(v.length) +
                              "; ++a) row_max = " + load("a") + " > row_max ? " + load("a") + " : row_max;");
                    body.line("double sum = 0.0;");
                    body.line("#pragma omp simd reduction(+ : sum)");
                    body.line("for (int64_t a = 0; a < " + std::to_string(v.length) + "; ++a) sum += sy_exp(" +
                              load("a") + " - row_max);");
                    body.line("const float scale = float(1.0 / sum);");
                    body.line("#pragma omp simd");
                    body.open("for (int64_t a = 0; a < " + std::to_string(v.length) + "; ++a)");
                    body.line("const float softmax = " +
                              round_to_dtype(dtype, "sy_exp(" + load("a") + " - row_max) * scale", &k.helpers) + ";");
                    k.store_result(body, "softmax", ElementIndex::at_offset(along(v, "a")));
                    body.close();
                    body.close();
                  });
}

void layer_norm(CpuKernel& k, const AxisView& v, DType dtype) {
  const AttrsNode& attrs = *k.master->attrs;
  std::string x = k.input(0);
  auto load = [&](const std::string& a) { return load_element(dtype, x + "[" + along(v, a) + "]", &k.helpers); };
  std::string length = std::to_string(v.length);
  std::string value = "(" + load("a") + " - mean) * inv_std";
  if (attrs.get_bool("scale")) value += " * " + load_element(dtype, k.input(1) + "[a]", &k.helpers);
  if (attrs.get_bool("center")) value += " + " + load_element(dtype, k.input(2) + "[a]", &k.helpers);
  k.parallel_loop("layer_norm", "nn.layer_norm" + at_span(k.master->span()) + ", one row at a time",
                  v.outer * v.inner, std::max<int64_t>(1, kElementGrain / std::max<int64_t>(v.length, 1)),
                  [&](CodeWriter& body) {
                    open_rows(body, v);
                    body.line("double sum = 0.0;");
                    body.line("#pragma omp simd reduction(+ : sum)");
                    body.line("for (int64_t a = 0; a < " + length + "; ++a) sum += " + load("a") + ";");
                    body.line("const double mean_exact = sum / " + length + ".0;");
                    body.line("double squares = 0.0;");
                    body.line("#pragma omp simd reduction(+ : squares)");
                    body.open("for (int64_t a = 0; a < " + length + "; ++a)");
                    body.line("const double deviation = " + load("a") + " - mean_exact;");
                    body.line("squares += deviation * deviation;");
                    body.close();
                    body.line("const float mean = float(mean_exact);");
                    body.line("const float inv_std = float(1.0 / std::sqrt(squares / " + length + ".0 + " +
                              double_literal(attrs.get_float("epsilon")) + "));");
                    body.line("#pragma omp simd");
                    body.open("for (int64_t a = 0; a < " + length + "; ++a)");
                    body.line("const float layer_norm = " + round_to_dtype(dtype, value, &k.helpers) + ";");
                    k.store_result(body, "layer_norm", ElementIndex::at_offset(along(v, "a")));
                    body.close();
                    body.close();
                  });
}

// Output 0 is normalized per channel; outputs 1 and 2 are copies of the
// moving mean and variance (Relay's inference form).
void batch_norm(CpuKernel& k, const AxisView& v, DType dtype) {
  const AttrsNode& attrs = *k.master->attrs;
  std::string channels = std::to_string(v.length);
  auto channel = [&](size_t input) { return load_element(dtype, k.input(input) + "[c]", &k.helpers); };
  std::string factor = "float(1.0 / std::sqrt(double(" + channel(4) + ") + " +
                       double_literal(attrs.get_float("epsilon")) + "))";
  if (attrs.get_bool("scale")) factor += " * " + channel(1);
  std::string shift = attrs.get_bool("center") ? channel(2) : "0.0f";
  k.parallel_loop("batch_norm", "nn.batch_norm" + at_span(k.master->span()) + ", one channel plane at a time",
                  v.outer * v.length, std::max<int64_t>(1, kElementGrain / std::max<int64_t>(v.inner, 1)),
                  [&](CodeWriter& body) {
                    body.open("for (int64_t plane = begin; plane < end; ++plane)");
                    body.line("const int64_t c = plane % " + channels + ";");
                    body.line("const float mean = " + channel(3) + ";");
                    body.line("const float factor = " + factor + ";");
                    body.line("const float shift = " + shift + ";");
                    body.line("const int64_t base = " + times("plane", v.inner) + ";");
                    body.line("#pragma omp simd");
                    body.open("for (int64_t i = 0; i < " + std::to_string(v.inner) + "; ++i)");
                    std::string x = load_element(dtype, k.input(0) + "[base + i]", &k.helpers);
                    body.line(k.output(0) + "[base + i] = " +
                              store_value(dtype, "(" + x + " - mean) * factor + shift", &k.helpers) + ";");
                    body.close();
                    body.close();
                  });
  std::string bytes = std::to_string(v.length * dtype_bytes(dtype));
  k.entry.line("// The moving statistics pass through unchanged.");
  k.entry.line("std::memcpy(buffers." + k.output(1) + ", buffers." + k.input(3) + ", " + bytes + ");");
  k.entry.line("std::memcpy(buffers." + k.output(2) + ", buffers." + k.input(4) + ", " + bytes + ");");
}

}  // namespace

void generate_normalization_kernel(CpuKernel& k) {
  const std::string& op = as<OpNode>(k.master->op)->name;
  const Expr& data = k.master->args[0];
  const std::vector<int64_t>& shape = shape_of(data);
  DType dtype = dtype_of(data);
  if (!dtype_is_float(dtype))
    throw Error(ErrorKind::kBackend, "'" + op + "' needs a floating-point input, got " + dtype_name(dtype),
                k.master->span());
  int64_t axis = normalize_axis(k.master->attrs->get_int("axis"), int64_t(shape.size()), op);
  AxisView v = axis_view(shape, axis);
  if (op == "nn.softmax") return softmax(k, v, dtype);
  if (op == "nn.layer_norm") return layer_norm(k, v, dtype);
  batch_norm(k, v, dtype);
}

}  // namespace switchyard
