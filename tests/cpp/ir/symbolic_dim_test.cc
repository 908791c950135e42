// Symbolic dimensions: canonical products, exact quotients, interned and
// compared tensor types, their text, and what refuses them.
#include <gtest/gtest.h>

#include "ir/dim.h"
#include "ir/structural_equal.h"
#include "ir/type.h"
#include "support/error.h"

namespace switchyard {
namespace symbolic_dim_test {

DimExpr var(const char* name, std::optional<int64_t> bound = std::nullopt) { return DimExpr(dim_var(name, bound)); }
TensorType f32(std::vector<DimExpr> dims) { return tensor_type_of_dims(std::move(dims), DType::kFloat32); }

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kType);
    return e.message();
  }
  ADD_FAILURE() << "no error";
  return "";
}

TEST(SymbolicDim, VariablesAreInternedByNameAndBound) {
  EXPECT_EQ(dim_var("n"), dim_var("n"));
  EXPECT_EQ(dim_var("n", 64), dim_var("n", 64));
  EXPECT_NE(dim_var("n"), dim_var("m"));
  EXPECT_NE(dim_var("n"), dim_var("n", 64));
  EXPECT_EQ(error_of([] { dim_var("2n"); }),
            "a dimension variable's name must be an identifier ([A-Za-z_][A-Za-z0-9_]*), got '2n'");
  EXPECT_EQ(error_of([] { dim_var("n", -1); }), "the bound of dimension variable n must not be negative, got -1");
}

TEST(SymbolicDim, ProductsHaveOneCanonicalForm) {
  DimExpr n = var("n"), m = var("m");
  EXPECT_EQ(n * m, m * n);
  EXPECT_EQ(DimExpr(3) * n * DimExpr(4), DimExpr(12) * n);
  EXPECT_EQ(n * DimExpr(int64_t(0)), DimExpr(int64_t(0)));
  EXPECT_TRUE((n * DimExpr(int64_t(0))).is_constant());
  EXPECT_NE(n, m);
  EXPECT_NE(n, var("n", 64));
  EXPECT_EQ(dim_to_string(m * DimExpr(196) * n), "196*m*n");
  EXPECT_EQ(dim_to_string(var("n", 64) * var("n", 64)), "n<=64*n<=64");
  EXPECT_EQ(dim_to_string(DimExpr(7)), "7");
  EXPECT_EQ(dim_product({n, 3, m, 2}), DimExpr(6) * m * n);
  EXPECT_EQ(error_of([&] { DimExpr(int64_t(1) << 40) * n * DimExpr(int64_t(1) << 40); }),
            "the dimension 1099511627776*n*1099511627776 overflows int64");
}

TEST(SymbolicDim, QuotientsMustBeExact) {
  DimExpr n = var("n"), m = var("m");
  EXPECT_EQ(exact_quotient(DimExpr(150528) * n, DimExpr(768)), DimExpr(196) * n);
  EXPECT_EQ(exact_quotient(n * m * DimExpr(6), m * DimExpr(3)), DimExpr(2) * n);
  EXPECT_EQ(exact_quotient(n, n), DimExpr(1));
  EXPECT_FALSE(exact_quotient(DimExpr(3) * n, DimExpr(2)));  // 3n/2 is exact only for even n
  EXPECT_FALSE(exact_quotient(DimExpr(6), n));
  EXPECT_FALSE(exact_quotient(n, m));
  EXPECT_FALSE(exact_quotient(n, DimExpr(int64_t(0))));
}

TEST(SymbolicDim, UpperBoundsMultiply) {
  EXPECT_EQ((DimExpr(3) * var("n", 64)).upper_bound(), 192);
  EXPECT_EQ(var("n").upper_bound(), std::nullopt);
  EXPECT_EQ(DimExpr(5).upper_bound(), 5);
}

TEST(SymbolicType, InternedAndComparedByDimensions) {
  DimExpr n = var("n"), m = var("m");
  TensorType a = f32({n, 3}), b = f32({n, 3});
  EXPECT_TRUE(a.same_as(b));
  EXPECT_FALSE(a->is_static());
  EXPECT_TRUE(a->shape.empty());
  EXPECT_EQ(a->ndim(), 2);
  EXPECT_TRUE(type_equal(a, b));
  EXPECT_EQ(type_hash(a), type_hash(b));
  EXPECT_FALSE(type_equal(a, f32({m, 3})));
  EXPECT_FALSE(type_equal(a, f32({var("n", 64), 3})));
  EXPECT_FALSE(type_equal(a, tensor_type(std::vector<int64_t>{1, 3}, DType::kFloat32)));
  EXPECT_FALSE(type_equal(a, tensor_type_of_dims({n, 3}, DType::kFloat16)));
  // All-constant dimensions are the static type itself.
  TensorType s = f32({2, 3});
  EXPECT_TRUE(s.same_as(tensor_type(std::vector<int64_t>{2, 3}, DType::kFloat32)));
  EXPECT_TRUE(s->is_static());
  EXPECT_EQ(s->dims, (std::vector<DimExpr>{2, 3}));
}

TEST(SymbolicType, PrintsWithBoundsAndProducts) {
  EXPECT_EQ(type_to_string(f32({var("n", 64), 3, 224, 224})), "Tensor[(n<=64, 3, 224, 224), float32]");
  EXPECT_EQ(type_to_string(f32({DimExpr(196) * var("n"), 768})), "Tensor[(196*n, 768), float32]");
  EXPECT_EQ(type_to_string(tuple_type({f32({var("n")}), f32({2})})), "(Tensor[(n), float32], Tensor[(2), float32])");
}

TEST(SymbolicType, SizeIsUnknownAndChecksUseBounds) {
  TensorType t = f32({var("n"), 3});
  EXPECT_EQ(error_of([&] { t->numel(); }), "the size of Tensor[(n, 3), float32] depends on its symbolic dimensions");
  EXPECT_EQ(error_of([&] { type_nbytes(t); }), "the size of Tensor[(n, 3), float32] depends on its symbolic dimensions");
  DimExpr huge = var("h", int64_t(1) << 40);
  EXPECT_EQ(error_of([&] { f32({huge, huge}); }),
            "the tensor type Tensor[(h<=1099511627776, h<=1099511627776), float32] is too large at its bounds: its "
            "size in bytes overflows int64");
  f32({var("h"), var("h")});  // unbounded: nothing to check
}

TEST(SymbolicType, FoundInTuplesAndFunctionsAndRefusedByName) {
  Type sym = f32({2, var("n")});
  Type fn = func_type({f32({2}), tuple_type({f32({1}), sym})}, f32({3}));
  std::optional<SymbolicDim> found = find_symbolic_dim(fn);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->tensor, sym.get());
  EXPECT_EQ(found->index, 1u);
  EXPECT_FALSE(find_symbolic_dim(func_type({f32({2})}, f32({3}))));
  EXPECT_EQ(error_of([&] { refuse_symbolic_arguments("sum", {f32({4}), sym}); }),
            "'sum' does not take symbolic dimensions yet: argument 1 is Tensor[(2, n), float32] (dimension 1 is n)");
  refuse_symbolic_arguments("sum", {f32({4})});
}

TEST(SymbolicType, StructuralEqualityComparesDimensions) {
  auto fn = [](const char* dim) {
    Var x = make_var("x", f32({var(dim), 3}));
    return make_function({x}, x);
  };
  EXPECT_TRUE(structural_equal(fn("n"), fn("n")));
  EXPECT_FALSE(structural_equal(fn("n"), fn("m")));
  EXPECT_EQ(structural_hash(fn("n")), structural_hash(fn("n")));
}

}  // namespace symbolic_dim_test
}  // namespace switchyard
