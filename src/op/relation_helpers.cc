// Shared type-relation helpers: tensor checks, broadcasting, axes.
#include "op/relation_helpers.h"

namespace switchyard {

std::string shape_str(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + ")";
}

const TensorTypeNode& expect_tensor(const std::vector<Type>& args, size_t index, const std::string& op) {
  if (index >= args.size())
    throw Error(ErrorKind::kType, "'" + op + "' expects at least " + std::to_string(index + 1) + " arguments");
  const TensorTypeNode* t = as_tensor(args[index]);
  if (!t)
    throw Error(ErrorKind::kType, "argument " + std::to_string(index) + " of '" + op + "' must be a tensor, got " +
                                      type_to_string(args[index]));
  return *t;
}

std::vector<int64_t> broadcast_shapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                                      const std::string& op) {
  size_t n = std::max(a.size(), b.size());
  std::vector<int64_t> out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1)
      throw Error(ErrorKind::kType, "'" + op + "' cannot broadcast shapes " + shape_str(a) + " and " + shape_str(b) +
                                        " (dimension " + std::to_string(i) + ": " + std::to_string(da) + " vs " +
                                        std::to_string(db) + ")");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

int64_t normalize_axis(int64_t axis, int64_t rank, const std::string& op, const std::string& attr) {
  int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank)
    throw Error(ErrorKind::kType, "'" + op + "': " + attr + " " + std::to_string(axis) + " is out of range for rank " +
                                      std::to_string(rank));
  return a;
}

void expect_same_dtype(const std::vector<Type>& args, const std::string& op) {
  const TensorTypeNode* first = nullptr;
  for (size_t i = 0; i < args.size(); ++i) {
    const TensorTypeNode& t = expect_tensor(args, i, op);
    if (!first) first = &t;
    else if (t.dtype != first->dtype)
      throw Error(ErrorKind::kType, "'" + op + "' needs equal dtypes, got " + dtype_name(first->dtype) + " and " +
                                        dtype_name(t.dtype) + " (argument " + std::to_string(i) + ")");
  }
}

}  // namespace switchyard
