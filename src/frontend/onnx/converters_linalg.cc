// Converter of ONNX's Det (11) for small matrices: the Laplace expansion
// along the rows, each minor built once (by its rows' first index and its
// columns), over the entries taken from the flattened matrices. Larger
// matrices (whose expansion grows as n!) are refused.
#include <map>

#include "frontend/onnx/converters.h"

namespace switchyard {

namespace {

// Laplace expansion grows as n!: 4 gives 24 products.
constexpr int64_t kLargestDeterminant = 4;

class LaplaceExpansion {
 public:
  LaplaceExpansion(NodeContext& c, Expr rows, int64_t size) : c_(c), rows_(std::move(rows)), size_(size) {}

  // The determinant of the rows from `row` on and the columns in `columns`
  // (a bit mask of as many columns as rows remain).
  Expr minor(int64_t row, unsigned columns) {
    auto known = minors_.find({row, columns});
    if (known != minors_.end()) return known->second;
    Expr sum;
    bool negative = false;  // the sign alternates over the columns present
    for (int64_t column = 0; column < size_; ++column) {
      if (!(columns & (1u << column))) continue;
      Expr term = entry(row, column);
      if (row + 1 < size_) term = c_.call("multiply", {term, minor(row + 1, columns & ~(1u << column))});
      if (!sum) sum = negative ? c_.call("negative", {term}) : term;
      else sum = c_.call(negative ? "subtract" : "add", {sum, term});
      negative = !negative;
    }
    minors_[{row, columns}] = sum;
    return sum;
  }

 private:
  Expr entry(int64_t row, int64_t column) {
    return c_.call("take", {rows_, c_.constant(int64_vector({row * size_ + column}))}, {{"axis", int64_t(1)}});
  }

  NodeContext& c_;
  Expr rows_;  // (batch, size * size)
  int64_t size_;
  std::map<std::pair<int64_t, unsigned>, Expr> minors_;
};

void convert_det(NodeContext& c) {
  require_float(c, 0);
  const std::vector<int64_t>& shape = c.input_shape(0);
  size_t rank = shape.size();
  if (rank < 2 || shape[rank - 1] != shape[rank - 2])
    c.fail("the input must be square matrices (..., M, M), got " + shape_to_string(shape));
  int64_t size = shape[rank - 1];
  if (size < 1 || size > kLargestDeterminant)
    c.fail("matrices of " + std::to_string(size) + "x" + std::to_string(size) + " are not supported (1x1 to " +
           std::to_string(kLargestDeterminant) + "x" + std::to_string(kLargestDeterminant) + " are)");
  std::vector<int64_t> batch(shape.begin(), shape.end() - 2);
  int64_t count = product(shape, 0, rank - 2);
  DType dtype = c.input_dtype(0) == DType::kFloat64 ? DType::kFloat64 : DType::kFloat32;
  Expr rows = reshape_to(c, cast_to(c, c.input(0), dtype), {count, size * size});
  Expr det = LaplaceExpansion(c, rows, size).minor(0, (1u << size) - 1);
  set_single_output(c, reshape_to(c, cast_to(c, det, c.input_dtype(0)), batch));
}

}  // namespace

void register_linalg_converters() { add_onnx_converter("Det", {11}, {{11, convert_det}}); }

}  // namespace switchyard
