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

namespace {
thread_local AssumedDimEqualities* assumed_equalities = nullptr;
}  // namespace

AssumedDimEqualities::AssumedDimEqualities() : outer_(assumed_equalities) { assumed_equalities = this; }
AssumedDimEqualities::~AssumedDimEqualities() { assumed_equalities = outer_; }

thread_local const std::string* assumption_site = nullptr;

AssumedDimEqualities::Site::Site(std::string name) : name_(std::move(name)), outer_(assumption_site) {
  assumption_site = &name_;
}
AssumedDimEqualities::Site::~Site() { assumption_site = outer_; }

bool AssumedDimEqualities::assume(const DimExpr& a, const DimExpr& b) {
  AssumedDimEqualities* collector = assumed_equalities;
  auto lone = [](const DimExpr& d) { return d.coefficient() == 1 && d.variables().size() == 1; };
  if (!collector || !lone(a) || !lone(b)) return false;
  std::pair<const DimVar*, const DimVar*> pair{a.variables()[0], b.variables()[0]};
  if (std::find(collector->pairs_.begin(), collector->pairs_.end(), pair) == collector->pairs_.end()) {
    collector->pairs_.push_back(pair);
    collector->sites_.push_back(assumption_site ? *assumption_site : std::string());
  }
  return true;
}

std::vector<DimExpr> broadcast_dims(const std::vector<DimExpr>& a, const std::vector<DimExpr>& b,
                                    const std::string& op) {
  size_t n = std::max(a.size(), b.size());
  std::vector<DimExpr> out(n);
  const DimExpr one(int64_t(1));
  for (size_t i = 0; i < n; ++i) {
    DimExpr da = i < n - a.size() ? one : a[i - (n - a.size())];
    DimExpr db = i < n - b.size() ? one : b[i - (n - b.size())];
    if (da == db || db == one || AssumedDimEqualities::assume(da, db)) {
      out[i] = da;
    } else if (da == one) {
      out[i] = db;
    } else {
      std::string which = "(dimension " + std::to_string(i) + ": " + dim_to_string(da) + " vs " + dim_to_string(db);
      std::string shapes = clipped_text(dims_to_string(a)) + " and " + clipped_text(dims_to_string(b));
      if (da.is_constant() && db.is_constant())
        throw Error(ErrorKind::kType, "'" + op + "' cannot broadcast shapes " + shapes + " " + which + ")");
      throw Error(ErrorKind::kType, "'" + op + "' cannot broadcast shapes " + shapes + " " + which +
                                        "): whether they are equal is known only at run time, and checking it "
                                        "there is not implemented yet");
    }
  }
  return out;
}

void expect_static_dim(const TensorTypeNode& t, int64_t dim, const std::string& op, const std::string& role) {
  const DimExpr& d = t.dims[size_t(dim)];
  if (!d.is_constant())
    type_fail(op, role + " must be static, got " + clipped_text(type_to_string(TensorType(&t))) + " (dimension " +
                      std::to_string(dim) + " is " + dim_to_string(d) + ")");
}

Type with_symbolic_batch(const std::vector<Type>& args, size_t data, const std::string& op,
                         const std::function<Type(const std::vector<Type>&)>& relation) {
  std::vector<Type> static_args = args;
  DimExpr batch;
  bool symbolic_batch = false;
  if (data < args.size()) {
    const TensorTypeNode* t = as_tensor(args[data]);
    if (t && !t->is_static() && t->ndim() > 0 && !t->dims[0].is_constant()) {
      batch = t->dims[0];
      symbolic_batch = true;
      std::vector<DimExpr> dims = t->dims;
      dims[0] = int64_t(1);
      // Still symbolic when another dimension is: refused just below.
      static_args[data] = tensor_type_of_dims(std::move(dims), t->dtype);
    }
  }
  for (size_t i = 0; i < static_args.size(); ++i) {
    std::optional<SymbolicDim> found = find_symbolic_dim(static_args[i]);
    if (!found) continue;
    type_fail(op, "only the batch (dimension 0 of argument " + std::to_string(data) +
                      ") may be symbolic yet, but argument " + std::to_string(i) + " is " +
                      clipped_text(type_to_string(args[i])) + " (dimension " + std::to_string(found->index) + " is " +
                      dim_to_string(found->tensor->dims[found->index]) + ")");
  }
  Type result = relation(static_args);
  if (!symbolic_batch) return result;
  const TensorTypeNode* out = as_tensor(result);
  std::vector<DimExpr> dims = out->dims;
  dims[0] = batch;
  return tensor_type_of_dims(std::move(dims), out->dtype);
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

void check_window_attrs(const std::string& op, const AttrsNode& attrs) {
  check_length(op, "strides", attrs.get_ints("strides"), {2});
  check_positive(op, "strides", attrs.get_ints("strides"));
  check_length(op, "dilation", attrs.get_ints("dilation"), {2});
  check_positive(op, "dilation", attrs.get_ints("dilation"));
  check_length(op, "padding", attrs.get_ints("padding"), {1, 2, 4});
  check_non_negative(op, "padding", attrs.get_ints("padding"));
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
