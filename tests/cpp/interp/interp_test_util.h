// Helpers for interpreter tests: build arrays from literal values, run one
// operator call on constants through the interpreter, compare results.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "interp/evaluate.h"
#include "op/registry.h"
#include "support/error.h"

namespace switchyard::testing {

using AttrList = std::vector<std::pair<std::string, AttrValue>>;

inline AttrValue ints(std::vector<int64_t> values) { return AttrValue(std::move(values)); }
inline AttrValue integer(int64_t value) { return AttrValue(value); }
inline AttrValue number(double value) { return AttrValue(value); }
inline AttrValue text(const char* value) { return AttrValue(std::string(value)); }
inline AttrValue boolean(bool value) { return AttrValue(value); }

// An array of `dtype` and `shape` holding `values` (row-major).
inline NDArray array(DType dtype, std::vector<int64_t> shape, const std::vector<double>& values) {
  NDArray a(dtype, std::move(shape));
  EXPECT_EQ(size_t(a.numel()), values.size()) << "test array literal has the wrong element count";
  for (size_t i = 0; i < values.size() && i < size_t(a.numel()); ++i) a.set_from_double(int64_t(i), values[i]);
  return a;
}
inline NDArray f32(std::vector<int64_t> shape, const std::vector<double>& values) {
  return array(DType::kFloat32, std::move(shape), values);
}
// 0, 1, 2, ... in the given shape.
inline NDArray iota(DType dtype, std::vector<int64_t> shape) {
  NDArray a(dtype, std::move(shape));
  for (int64_t i = 0; i < a.numel(); ++i) a.set_from_double(i, double(i));
  return a;
}

inline std::vector<double> values_of(const NDArray& a) {
  std::vector<double> out;
  for (int64_t i = 0; i < a.numel(); ++i) out.push_back(a.get_as_double(i));
  return out;
}

// Exact comparison of dtype, shape and every element.
inline void expect_array(const NDArray& actual, DType dtype, const std::vector<int64_t>& shape,
                         const std::vector<double>& values) {
  EXPECT_EQ(dtype_name(actual.dtype()), std::string(dtype_name(dtype)));
  EXPECT_EQ(actual.shape_string(), shape_to_string(shape));
  EXPECT_EQ(values_of(actual), values);
}

// Comparison within `tolerance` (for transcendental functions).
inline void expect_near_array(const NDArray& actual, const std::vector<int64_t>& shape,
                              const std::vector<double>& values, double tolerance = 1e-6) {
  EXPECT_EQ(actual.shape_string(), shape_to_string(shape));
  std::vector<double> got = values_of(actual);
  ASSERT_EQ(got.size(), values.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], values[i], tolerance) << "element " << i;
}

inline std::vector<Expr> constants(const std::vector<NDArray>& arrays) {
  std::vector<Expr> out;
  for (const NDArray& a : arrays) out.push_back(make_constant(a));
  return out;
}

// The value of `op(args...)` on constant arguments.
inline Value run_call(const std::string& op, const std::vector<NDArray>& args, AttrList attrs = {}) {
  return evaluate_expr(make_op_call(op, constants(args), std::move(attrs)));
}

// The single tensor `op(args...)` returns.
inline NDArray run_op(const std::string& op, const std::vector<NDArray>& args, AttrList attrs = {}) {
  Value v = run_call(op, args, std::move(attrs));
  EXPECT_TRUE(v.is_tensor()) << op << " returned " << value_summary(v);
  return v.tensor;
}

// The Error a call raises; fails the test when it raises none.
inline Error op_error(const std::string& op, const std::vector<NDArray>& args, AttrList attrs = {}) {
  try {
    Value v = run_call(op, args, std::move(attrs));
    ADD_FAILURE() << "'" << op << "' succeeded, giving " << value_summary(v);
  } catch (const Error& e) {
    return e;
  }
  return Error(ErrorKind::kUsage, "no error");
}

}  // namespace switchyard::testing
