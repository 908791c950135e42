// Helpers shared by operator type relations and attribute checks. Every
// failure is an Error(kType) whose message starts with the operator's name.
#pragma once

#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

#include "ir/attrs.h"
#include "ir/type.h"
#include "support/error.h"

namespace switchyard {

// Throws Error(kType, "'op': message").
[[noreturn]] void type_fail(const std::string& op, const std::string& message);

// The argument's tensor type, or Error(kType) "argument N of 'op' must be a tensor, got T".
const TensorTypeNode& expect_tensor(const std::vector<Type>& args, size_t index, const std::string& op);
// The argument's tensor type with exactly `rank` dimensions; `role` names the
// argument ("data") and `layout` describes the expected dimensions ("(N, C, H, W)").
const TensorTypeNode& expect_rank(const std::vector<Type>& args, size_t index, int rank, const std::string& op,
                                  const std::string& role, const std::string& layout = "");
// The argument's tensor type with at least `min_rank` dimensions.
const TensorTypeNode& expect_min_rank(const std::vector<Type>& args, size_t index, int min_rank,
                                      const std::string& op, const std::string& role);
// Error(kType) unless the argument's dtype is a floating-point type.
void expect_float(const TensorTypeNode& t, size_t index, const std::string& op, const std::string& role);
// NumPy broadcasting of two shapes; Error(kType) naming both shapes on mismatch.
std::vector<int64_t> broadcast_shapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                                      const std::string& op);
// The same for dimension expressions: equal dimensions, and any against a
// constant 1, broadcast. A symbolic dimension against a different one may
// or may not be equal at run time: an Error(kType) naming both, unless an
// AssumedDimEqualities (below) takes them as equal.
std::vector<DimExpr> broadcast_dims(const std::vector<DimExpr>& a, const std::vector<DimExpr>& b,
                                    const std::string& op);
// Error(kType) "'op': <role> must be static here, got T (dimension D is n)"
// when dimension `dim` of `t` is symbolic: the relation needs its value.
void expect_static_dim(const TensorTypeNode& t, int64_t dim, const std::string& op, const std::string& role);
// A relation, written for static shapes, whose result's dimension 0 is
// argument `data`'s dimension 0 and depends on nothing else of it (conv2d
// and the pools: the batch): with a symbolic batch it sees batch 1, and the
// result gets the batch back. Error(kType) for any other symbolic dimension.
Type with_symbolic_batch(const std::vector<Type>& args, size_t data, const std::string& op,
                         const std::function<Type(const std::vector<Type>&)>& relation);
// Normalizes a possibly negative axis for a rank; Error(kType) when out of range.
int64_t normalize_axis(int64_t axis, int64_t rank, const std::string& op, const std::string& attr = "axis");
// Error(kType) unless all given dtypes are equal.
void expect_same_dtype(const std::vector<Type>& args, const std::string& op);

// Attribute checks (for OpDef::check_attrs); `attr` names the attribute.
// Error unless the list's length is one of `lengths`.
void check_length(const std::string& op, const std::string& attr, const std::vector<int64_t>& values,
                  std::initializer_list<size_t> lengths);
void check_positive(const std::string& op, const std::string& attr, const std::vector<int64_t>& values);
void check_non_negative(const std::string& op, const std::string& attr, const std::vector<int64_t>& values);
// A 2-d window's strides and dilation (two positive values) and padding
// (1, 2 or 4 values, none negative): convolutions' and pools' attributes.
void check_window_attrs(const std::string& op, const AttrsNode& attrs);
// Error unless `value` is one of `allowed`.
void check_one_of(const std::string& op, const std::string& attr, const std::string& value,
                  std::initializer_list<const char*> allowed);

std::string shape_str(const std::vector<int64_t>& shape);  // "(2, 3)"
std::string ints_str(const std::vector<int64_t>& values);  // "[2, 3]"

// While one of these lives on a thread, the type relations that meet two
// different dimension variables where the shapes need them equal
// (broadcasting, a matmul's contraction, a concatenation's other axes)
// record the pair and go on as if they were equal, rather than failing: the
// ONNX importer collects them, then imports again with the variables named
// alike (a model whose inputs call one batch `batch` and `batch_size`), so a
// run where they differ is refused at its inputs.
class AssumedDimEqualities {
 public:
  AssumedDimEqualities();
  ~AssumedDimEqualities();
  AssumedDimEqualities(const AssumedDimEqualities&) = delete;
  AssumedDimEqualities& operator=(const AssumedDimEqualities&) = delete;

  // The pairs recorded so far, each once, and where each was first needed
  // (the Site current then; "" outside any).
  const std::vector<std::pair<const DimVar*, const DimVar*>>& pairs() const { return pairs_; }
  const std::vector<std::string>& sites() const { return sites_; }
  // Whether `a` and `b` may be taken as equal here: both a lone variable
  // (coefficient 1) while a collector lives; the pair is then recorded.
  static bool assume(const DimExpr& a, const DimExpr& b);

  // Names what is being typed on this thread while it lives (the ONNX node
  // converted), for the notes that tell the user which node needed a pair.
  class Site {
   public:
    explicit Site(std::string name);
    ~Site();
    Site(const Site&) = delete;
    Site& operator=(const Site&) = delete;

   private:
    std::string name_;
    const std::string* outer_;
  };

 private:
  std::vector<std::pair<const DimVar*, const DimVar*>> pairs_;
  std::vector<std::string> sites_;
  AssumedDimEqualities* outer_;
};

}  // namespace switchyard
