// Shared type-relation helpers: tensor checks, broadcasting, axes, attribute checks.
#include "op/relation_helpers.h"

#include <algorithm>

#include "runtime/clipped_text.h"

namespace switchyard {

void type_fail(const std::string& op, const std::string& message) {
  throw Error(ErrorKind::kType, "'" + op + "': " + message);
}

namespace {

// The values between brackets, stopping once the text is longer than a
// message quotes (an attribute may hold millions of entries).
std::string bracketed(const std::vector<int64_t>& values, char open, char close) {
  std::string s(1, open);
  for (size_t i = 0; i < values.size() && s.size() <= kMostQuotedChars; ++i)
    s += (i ? ", " : "") + std::to_string(values[i]);
  return clipped_text(s + close);
}

}  // namespace

std::string shape_str(const std::vector<int64_t>& shape) { return bracketed(shape, '(', ')'); }

std::string ints_str(const std::vector<int64_t>& values) { return bracketed(values, '[', ']'); }

const TensorTypeNode& expect_tensor(const std::vector<Type>& args, size_t index, const std::string& op) {
  if (index >= args.size())
    throw Error(ErrorKind::kType, "'" + op + "' expects at least " + std::to_string(index + 1) + " arguments, got " +
                                      std::to_string(args.size()));
  const TensorTypeNode* t = as_tensor(args[index]);
  if (!t)
    throw Error(ErrorKind::kType, "argument " + std::to_string(index) + " of '" + op + "' must be a tensor, got " +
                                      type_to_string(args[index]));
  return *t;
}

const TensorTypeNode& expect_rank(const std::vector<Type>& args, size_t index, int rank, const std::string& op,
                                  const std::string& role, const std::string& layout) {
  const TensorTypeNode& t = expect_tensor(args, index, op);
  if (t.ndim() != rank)
    type_fail(op, "argument " + std::to_string(index) + " (" + role + ") must be " + std::to_string(rank) + "-D" +
                      (layout.empty() ? "" : " " + layout) + ", got " + type_to_string(args[index]));
  return t;
}

const TensorTypeNode& expect_min_rank(const std::vector<Type>& args, size_t index, int min_rank,
                                      const std::string& op, const std::string& role) {
  const TensorTypeNode& t = expect_tensor(args, index, op);
  if (t.ndim() < min_rank)
    type_fail(op, "argument " + std::to_string(index) + " (" + role + ") must have at least " +
                      std::to_string(min_rank) + (min_rank == 1 ? " dimension" : " dimensions") + ", got " +
                      type_to_string(args[index]));
  return t;
}

void expect_float(const TensorTypeNode& t, size_t index, const std::string& op, const std::string& role) {
  if (!dtype_is_float(t.dtype))
    type_fail(op, "argument " + std::to_string(index) + " (" + role + ") must have a floating-point dtype, got " +
                      dtype_name(t.dtype));
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

void check_length(const std::string& op, const std::string& attr, const std::vector<int64_t>& values,
                  std::initializer_list<size_t> lengths) {
  for (size_t n : lengths)
    if (values.size() == n) return;
  std::string allowed;
  size_t i = 0;
  for (size_t n : lengths) {
    allowed += (i == 0 ? "" : i + 1 == lengths.size() ? " or " : ", ") + std::to_string(n);
    ++i;
  }
  type_fail(op, attr + " must have " + allowed + (lengths.size() == 1 && *lengths.begin() == 1 ? " value" : " values") +
                    ", got " + ints_str(values));
}

void check_positive(const std::string& op, const std::string& attr, const std::vector<int64_t>& values) {
  for (int64_t v : values)
    if (v <= 0) type_fail(op, attr + " must be positive, got " + ints_str(values));
}

void check_non_negative(const std::string& op, const std::string& attr, const std::vector<int64_t>& values) {
  for (int64_t v : values)
    if (v < 0) type_fail(op, attr + " must not be negative, got " + ints_str(values));
}

void check_one_of(const std::string& op, const std::string& attr, const std::string& value,
                  std::initializer_list<const char*> allowed) {
  std::string names;
  for (const char* a : allowed) {
    if (value == a) return;
    names += (names.empty() ? "\"" : ", \"") + std::string(a) + "\"";
  }
  type_fail(op, attr + " must be one of " + names + ", got \"" + clipped_text(value) + "\"");
}

}  // namespace switchyard
