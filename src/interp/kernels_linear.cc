// Reference kernels of the matrix products: nn.dense (x @ w.T), matmul
// (NumPy's, with 1-D promotion and broadcast batch dimensions) and
// nn.batch_matmul. Products are summed in double and rounded once on store;
// integer inputs are exact while the sums stay below 2^53.
#include "interp/kernel_groups.h"
#include "interp/kernel_registry.h"
#include "interp/kernel_util.h"
#include "op/handles.h"
#include "op/linear_attrs.h"

namespace switchyard {

namespace {

// out[batch, m, n] = sum_k a[a_batch, m, k] * b[b_batch, k, n], with the
// strides of each operand given per (m, k) and (k, n), so transposed operands
// need no copy.
struct MatrixOperand {
  const NDArray* array;
  std::vector<int64_t> batch_offsets;  // element offset of each output batch's matrix
  int64_t row_stride, column_stride;
};

void batched_product(const MatrixOperand& a, const MatrixOperand& b, int64_t m_size, int64_t k_size,
                     int64_t n_size, NDArray& out) {
  int64_t out_index = 0;
  for (size_t batch = 0; batch < a.batch_offsets.size(); ++batch)
    for (int64_t m = 0; m < m_size; ++m)
      for (int64_t n = 0; n < n_size; ++n) {
        double sum = 0;
        for (int64_t k = 0; k < k_size; ++k)
          sum += load_double(*a.array, a.batch_offsets[batch] + m * a.row_stride + k * a.column_stride) *
                 load_double(*b.array, b.batch_offsets[batch] + k * b.row_stride + n * b.column_stride);
        store_double(out, out_index++, sum);
      }
}

std::vector<NDArray> dense_kernel(const std::vector<Value>& args, const AttrsNode& attrs) {
  const NDArray& data = tensor_arg(args, 0);
  const NDArray& weight = tensor_arg(args, 1);
  expect_numeric_dtype(data, "data");
  expect_equal_dtypes(data, weight, "data", "weight");
  if (data.ndim() < 1 || weight.ndim() != 2)
    kernel_fail("expects data (..., K) and weight (N, K), got " + array_type_string(data) + " and " +
                array_type_string(weight));
  int64_t k_size = data.shape().back(), n_size = weight.shape()[0];
  if (weight.shape()[1] != k_size)
    kernel_fail("data " + data.shape_string() + " and weight " + weight.shape_string() + " disagree on K");
  if (std::optional<int64_t> units = linear_attrs(attrs).units; units && *units != n_size)
    kernel_fail("units=" + std::to_string(*units) + " but the weight has " + std::to_string(n_size) + " rows");
  std::vector<int64_t> shape = data.shape();
  shape.back() = n_size;
  NDArray out(data.dtype(), shape);
  int64_t m_size = shape_numel(std::vector<int64_t>(shape.begin(), shape.end() - 1));
  MatrixOperand a{&data, {0}, k_size, 1};
  MatrixOperand b{&weight, {0}, 1, k_size};  // weight read transposed: (k, n) at n * K + k
  batched_product(a, b, m_size, k_size, n_size, out);
  return {out};
}

// Offsets of each broadcast batch's matrix within an operand whose batch
// dimensions are `batch_shape` and whose matrices hold `matrix_size` elements.
std::vector<int64_t> batch_matrix_offsets(const std::vector<int64_t>& out_batch,
                                          const std::vector<int64_t>& batch_shape, int64_t matrix_size) {
  std::vector<int64_t> offsets = broadcast_offsets(out_batch, batch_shape);
  for (int64_t& o : offsets) o *= matrix_size;
  return offsets;
}

std::vector<NDArray> matmul_kernel(const std::vector<Value>& args, const AttrsNode&) {
  const NDArray& a = tensor_arg(args, 0);
  const NDArray& b = tensor_arg(args, 1);
  expect_numeric_dtype(a, "argument 0");
  expect_equal_dtypes(a, b, "argument 0", "argument 1");
  if (a.ndim() == 0 || b.ndim() == 0) kernel_fail("matmul does not take 0-d operands");
  // NumPy's promotion: a 1-D a is a row (1, K), a 1-D b a column (K, 1);
  // the added dimension is dropped from the result.
  std::vector<int64_t> a_shape = a.shape(), b_shape = b.shape();
  if (a.ndim() == 1) a_shape.insert(a_shape.begin(), 1);
  if (b.ndim() == 1) b_shape.push_back(1);
  int64_t m_size = a_shape[a_shape.size() - 2], k_size = a_shape.back();
  int64_t n_size = b_shape.back();
  if (b_shape[b_shape.size() - 2] != k_size)
    kernel_fail("shapes " + a.shape_string() + " and " + b.shape_string() + " do not agree on the inner dimension");
  std::vector<int64_t> a_batch(a_shape.begin(), a_shape.end() - 2), b_batch(b_shape.begin(), b_shape.end() - 2);
  std::vector<int64_t> out_batch = broadcast_shape(a_batch, b_batch);
  MatrixOperand left{&a, batch_matrix_offsets(out_batch, a_batch, m_size * k_size), k_size, 1};
  MatrixOperand right{&b, batch_matrix_offsets(out_batch, b_batch, k_size * n_size), n_size, 1};
  std::vector<int64_t> shape = out_batch;
  if (a.ndim() > 1) shape.push_back(m_size);
  if (b.ndim() > 1) shape.push_back(n_size);
  NDArray out(a.dtype(), shape);
  batched_product(left, right, m_size, k_size, n_size, out);
  return {out};
}

// x (B, M, K) or (B, K, M) when transpose_a; y (B, N, K) when transpose_b
// (the default) or (B, K, N); a batch of 1 broadcasts.
std::vector<NDArray> batch_matmul_kernel(const std::vector<Value>& args, const AttrsNode& attrs) {
  const NDArray& x = tensor_arg(args, 0);
  const NDArray& y = tensor_arg(args, 1);
  expect_numeric_dtype(x, "x");
  expect_equal_dtypes(x, y, "x", "y");
  if (x.ndim() != 3 || y.ndim() != 3)
    kernel_fail("expects 3-D operands, got " + array_type_string(x) + " and " + array_type_string(y));
  const LinearAttrs linear = linear_attrs(attrs);
  bool transpose_a = linear.transpose_a, transpose_b = linear.transpose_b;
  const std::vector<int64_t>& xs = x.shape();
  const std::vector<int64_t>& ys = y.shape();
  int64_t m_size = transpose_a ? xs[2] : xs[1], k_size = transpose_a ? xs[1] : xs[2];
  int64_t n_size = transpose_b ? ys[1] : ys[2], y_k = transpose_b ? ys[2] : ys[1];
  if (y_k != k_size)
    kernel_fail("x " + x.shape_string() + " and y " + y.shape_string() + " disagree on K");
  std::vector<int64_t> out_batch = broadcast_shape({xs[0]}, {ys[0]});
  MatrixOperand left{&x, batch_matrix_offsets(out_batch, {xs[0]}, xs[1] * xs[2]), transpose_a ? 1 : k_size,
                     transpose_a ? m_size : 1};
  MatrixOperand right{&y, batch_matrix_offsets(out_batch, {ys[0]}, ys[1] * ys[2]), transpose_b ? 1 : n_size,
                      transpose_b ? k_size : 1};
  NDArray out(x.dtype(), {out_batch[0], m_size, n_size});
  batched_product(left, right, m_size, k_size, n_size, out);
  return {out};
}

}  // namespace

void register_linear_kernels() {
  register_interp_kernel(ops::dense(), {dense_kernel});
  register_interp_kernel(ops::matmul(), {matmul_kernel});
  register_interp_kernel(ops::batch_matmul(), {batch_matmul_kernel});
}

}  // namespace switchyard
