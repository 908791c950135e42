// Converters of ONNX's window functions (17): HannWindow, HammingWindow and
// BlackmanWindow, constants computed at import from a size known there, by
// the cosine sum ONNX defines them with: a0 - a1 cos(2 pi n / N) +
// a2 cos(4 pi n / N), N the size (periodic) or the size - 1 (symmetric).
#include <cmath>

#include "frontend/onnx/converters.h"
#include "frontend/onnx/onnx_tensor.h"

namespace switchyard {

namespace {

struct CosineSum {
  double a0, a1, a2;
};

void convert_window(NodeContext& c, CosineSum terms) {
  if (!dtype_is_int(c.input_dtype(0)) || c.input_type(0).numel() != 1) c.fail("size must be one integer");
  int64_t size = c.constant_ints(0, "size")[0];
  bool periodic = c.attr_int("periodic", 1) != 0;
  int64_t onnx_type = c.attr_int("output_datatype", 1);
  std::optional<DType> dtype = dtype_from_onnx(int(onnx_type));
  if (!dtype) c.fail("output_datatype " + std::to_string(onnx_type) + " is not an element type Switchyard supports");
  if (size < 1) c.fail("size " + std::to_string(size) + " is not supported (empty windows are not)");
  if (!periodic && size == 1) c.fail("a symmetric window of size 1 divides by zero in ONNX's definition");
  double denominator = double(periodic ? size : size - 1);
  NDArray window(*dtype, {size});
  const double tau = 2 * M_PI;
  for (int64_t n = 0; n < size; ++n) {
    double angle = tau * double(n) / denominator;
    window.set_from_double(n, terms.a0 - terms.a1 * std::cos(angle) + terms.a2 * std::cos(2 * angle));
  }
  set_single_output(c, c.constant(std::move(window)));
}

}  // namespace

void register_signal_converters() {
  add_onnx_converter("HannWindow", {17}, {{17, [](NodeContext& c) { convert_window(c, {0.5, 0.5, 0}); }}});
  add_onnx_converter("HammingWindow", {17},
                     {{17, [](NodeContext& c) { convert_window(c, {25.0 / 46, 21.0 / 46, 0}); }}});
  add_onnx_converter("BlackmanWindow", {17}, {{17, [](NodeContext& c) { convert_window(c, {0.42, 0.5, 0.08}); }}});
}

}  // namespace switchyard
