// Symbolic dimensions: a dimension variable (a name with an optional upper
// bound, interned) and a dimension expression, a product `c * v1 * v2 ...`
// of a constant and variables kept in one canonical form (variables sorted,
// a zero constant absorbing them), so equal expressions compare equal with ==.
// Sums are not expressions: a relation that would need one refuses.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace switchyard {

// Interned: one object per (name, bound), so variables compare by address.
struct DimVar {
  std::string name;              // [A-Za-z_][A-Za-z0-9_]*
  std::optional<int64_t> bound;  // n <= bound, when known
};

// The interned variable; Error(kType) naming it when the name is not an
// identifier or the bound is negative.
const DimVar* dim_var(const std::string& name, std::optional<int64_t> bound = std::nullopt);

class DimExpr {
 public:
  DimExpr() = default;
  // A constant dimension (implicit, so a static shape converts element by element).
  DimExpr(int64_t value) : coefficient_(value) {}  // NOLINT(google-explicit-constructor)
  explicit DimExpr(const DimVar* var) : coefficient_(1), variables_{var} {}

  bool is_constant() const { return variables_.empty(); }
  // The value of a constant; nullopt for a symbolic expression.
  std::optional<int64_t> constant() const {
    return is_constant() ? std::optional<int64_t>(coefficient_) : std::nullopt;
  }
  int64_t coefficient() const { return coefficient_; }
  // Sorted by name then bound; a variable appears once per power.
  const std::vector<const DimVar*>& variables() const { return variables_; }
  // The largest value it can take (the coefficient times the variables'
  // bounds); nullopt when a variable has no bound or the product overflows.
  std::optional<int64_t> upper_bound() const;

  friend bool operator==(const DimExpr& a, const DimExpr& b) = default;

 private:
  int64_t coefficient_ = 0;
  std::vector<const DimVar*> variables_;
  friend DimExpr operator*(const DimExpr& a, const DimExpr& b);
  friend std::optional<DimExpr> exact_quotient(const DimExpr& a, const DimExpr& b);
};

// The canonical product; Error(kType) when the constant overflows int64.
DimExpr operator*(const DimExpr& a, const DimExpr& b);
// a / b when it is exact for every value of the variables (b's variables
// are among a's and b's constant divides a's); nullopt otherwise, and when b
// is zero.
std::optional<DimExpr> exact_quotient(const DimExpr& a, const DimExpr& b);
// The product of all `dims` (1 for none).
DimExpr dim_product(const std::vector<DimExpr>& dims);

// Text form, as the text IR writes a dimension: "3", "n", "n<=64", "196*n", "n*m".
std::string dim_to_string(const DimExpr& d);
// The expression `text` writes in that form (factors joined by '*', each an
// integer or a variable with an optional "<=bound"; "-1" too, for reshape's
// inferred entry); Error(kType) naming the text when it is not one.
DimExpr parse_dim(const std::string& text);
// "(n<=64, 3, 224, 224)", whole (clip it to quote it in a message).
std::string dims_to_string(const std::vector<DimExpr>& dims);
// A static shape as expressions.
std::vector<DimExpr> constant_dims(const std::vector<int64_t>& shape);

}  // namespace switchyard
