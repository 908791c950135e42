// Normalisation kernels along one axis: nn.softmax (the row's maximum is
// subtracted before exponentiating, each exponential computed once),
// nn.layer_norm (mean, then variance: two passes) and nn.batch_norm
// (inference: the moving statistics, per channel). Sums are vectorised float
// sums over blocks (emit_float_sum). Softmax and layer_norm apply their
// element-wise epilogue as they store.
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

// Emits `target += term(a)` over a = 0 .. length-1 in float, as an `omp simd`
// reduction (one partial sum per vector lane) over blocks of kSumBlock
// elements whose totals are added up after each block: every float sum adds
// at most kSumBlock / lanes + length / kSumBlock terms, so long rows stay
// accurate (rows up to kSumBlock are one block). `before` lines open each
// element's body ahead of the term, e.g. to name and store a value.
constexpr int64_t kSumBlock = 1024;

void emit_float_sum(CodeWriter& body, const std::string& target, int64_t length,
                    const std::vector<std::string>& before, const std::string& term) {
  bool blocked = length > kSumBlock;
  std::string sum = blocked ? target + "_block" : target;
  std::string first = "0", stop = std::to_string(length);
  body.line("float " + target + " = 0.0f;");
  if (blocked) {
    body.open("for (int64_t block = 0; block < " + stop + "; block += " + std::to_string(kSumBlock) + ")");
    body.line("const int64_t block_end = block + " + std::to_string(kSumBlock) + " < " + stop + " ? block + " +
              std::to_string(kSumBlock) + " : " + stop + ";");
    body.line("float " + sum + " = 0.0f;");
    first = "block";
    stop = "block_end";
  }
  body.line("#pragma omp simd reduction(+ : " + sum + ")");
  body.open("for (int64_t a = " + first + "; a < " + stop + "; ++a)");
  for (const std::string& line : before) body.line(line);
  body.line(sum + " += " + term + ";");
  body.close();
  if (blocked) {
    body.line(target + " += " + sum + ";");
    body.close();
  }
}

// Three passes over each row: its maximum; e^(x - max), computed once, stored
// into the output and summed in float; the scaling by 1 / sum (with the
// epilogue). The stored exponentials are read back at the element that
// holds them, so a float32 output may hold them (it never aliases the input:
// in_place_safe is false). Another output dtype would round them, so there
// the exponential is computed again in the last pass.
void softmax(CpuKernel& k, const AxisView& v, DType dtype) {
  k.helpers.insert(CpuHelper::kFloatMath);
  std::string x = k.input(0);
  auto load = [&](const std::string& a) { return load_element(dtype, x + "[" + along(v, a) + "]", &k.helpers); };
  std::string length = std::to_string(v.length);
  bool keep_exp = k.output_dtype() == DType::kFloat32;
  // Where store_result puts element `a`, so the last pass reads its own exponential.
  std::string slot =
      k.output(0) + "[" + offset_of(ElementIndex::at_offset(along(v, "a")), k.outputs.at(0)->shape) + "]";
  k.parallel_loop("softmax", "nn.softmax" + at_span(k.master->span()) + ", one row at a time",
                  v.outer * v.inner, std::max<int64_t>(1, kElementGrain / std::max<int64_t>(v.length, 1)),
                  [&](CodeWriter& body) {
                    open_rows(body, v);
                    // NaN is skipped here, as by the interpreter's std::max, and
                    // comes out of the exponential below.
                    body.line("float row_max = -INFINITY;");
                    body.line("#pragma omp simd reduction(max : row_max)");
                    body.line("for (int64_t a = 0; a < " + length + "; ++a) row_max = " + load("a") +
                              " > row_max ? " + load("a") + " : row_max;");
                    std::vector<std::string> before = {"const float e = sy_exp(" + load("a") + " - row_max);"};
                    if (keep_exp) before.push_back(slot + " = e;");
                    emit_float_sum(body, "sum", v.length, before, "e");
                    body.line("const float scale = 1.0f / sum;");
                    body.line("#pragma omp simd");
                    body.open("for (int64_t a = 0; a < " + length + "; ++a)");
                    std::string e = keep_exp ? slot : "sy_exp(" + load("a") + " - row_max)";
                    body.line("const float softmax = " + round_to_dtype(dtype, e + " * scale", &k.helpers) + ";");
                    k.store_result(body, "softmax", ElementIndex::at_offset(along(v, "a")));
                    body.close();
                    body.close();
                  });
}

// The mean, then the mean square deviation from it (two passes, so no
// cancellation), both summed in float by emit_float_sum; then the normalised
// row with the epilogue.
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
                    emit_float_sum(body, "sum", v.length, {}, load("a"));
                    body.line("const float mean = sum / " + length + ".0f;");
                    emit_float_sum(body, "squares", v.length, {"const float deviation = " + load("a") + " - mean;"},
                                   "deviation * deviation");
                    body.line("const float inv_std = 1.0f / std::sqrt(squares / " + length + ".0f + " +
                              literal(DType::kFloat32, attrs.get_float("epsilon")) + ");");
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
