// Dimension variables (interned) and canonical products of them.
#include "ir/dim.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <memory>
#include <mutex>
#include <utility>

#include "runtime/clipped_text.h"
#include "support/error.h"

namespace switchyard {

namespace {

bool is_identifier(const std::string& name) {
  if (name.empty()) return false;
  auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  if (!letter(name[0])) return false;
  return std::all_of(name.begin(), name.end(), [&](char c) { return letter(c) || (c >= '0' && c <= '9'); });
}

// The canonical order of variables: by name, then unbounded before bounded, then by bound.
bool variable_before(const DimVar* a, const DimVar* b) {
  if (a->name != b->name) return a->name < b->name;
  return a->bound < b->bound;
}

}  // namespace

const DimVar* dim_var(const std::string& name, std::optional<int64_t> bound) {
  if (!is_identifier(name))
    throw Error(ErrorKind::kType, "a dimension variable's name must be an identifier ([A-Za-z_][A-Za-z0-9_]*), got '" +
                                      clipped_text(name) + "'");
  if (bound && *bound < 0)
    throw Error(ErrorKind::kType, "the bound of dimension variable " + name + " must not be negative, got " +
                                      std::to_string(*bound));
  // Interned forever, as tensor types: a program names few variables.
  static auto* table = new std::map<std::pair<std::string, std::optional<int64_t>>, std::unique_ptr<DimVar>>();
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  auto& slot = (*table)[{name, bound}];
  if (!slot) slot = std::make_unique<DimVar>(DimVar{name, bound});
  return slot.get();
}

std::optional<int64_t> DimExpr::upper_bound() const {
  int64_t most = coefficient_;
  for (const DimVar* v : variables_) {
    if (!v->bound || __builtin_mul_overflow(most, *v->bound, &most)) return std::nullopt;
  }
  return most;
}

DimExpr operator*(const DimExpr& a, const DimExpr& b) {
  DimExpr out;
  if (__builtin_mul_overflow(a.coefficient_, b.coefficient_, &out.coefficient_))
    throw Error(ErrorKind::kType, "the dimension " + dim_to_string(a) + "*" + dim_to_string(b) + " overflows int64");
  if (out.coefficient_ == 0) return out;  // 0 * n is 0 whatever n is
  out.variables_ = a.variables_;
  out.variables_.insert(out.variables_.end(), b.variables_.begin(), b.variables_.end());
  std::sort(out.variables_.begin(), out.variables_.end(), variable_before);
  return out;
}

std::optional<DimExpr> exact_quotient(const DimExpr& a, const DimExpr& b) {
  if (b.coefficient_ == 0 || a.coefficient_ % b.coefficient_ != 0) return std::nullopt;
  DimExpr out;
  out.coefficient_ = a.coefficient_ / b.coefficient_;
  if (out.coefficient_ == 0) return out;
  // Both lists are sorted: remove each of b's variables from a's once.
  std::vector<const DimVar*> rest = a.variables_;
  for (const DimVar* v : b.variables_) {
    auto it = std::find(rest.begin(), rest.end(), v);
    if (it == rest.end()) return std::nullopt;
    rest.erase(it);
  }
  out.variables_ = std::move(rest);
  return out;
}

DimExpr dim_product(const std::vector<DimExpr>& dims) {
  DimExpr product(int64_t(1));
  for (const DimExpr& d : dims) product = product * d;
  return product;
}

std::string dim_to_string(const DimExpr& d) {
  if (d.is_constant()) return std::to_string(d.coefficient());
  std::string text = d.coefficient() == 1 ? "" : std::to_string(d.coefficient());
  for (const DimVar* v : d.variables()) {
    if (!text.empty()) text += "*";
    text += v->name;
    if (v->bound) text += "<=" + std::to_string(*v->bound);
  }
  return text;
}

namespace {

// A decimal integer filling all of `text` (an optional leading '-').
std::optional<int64_t> whole_integer(const std::string& text) {
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace

DimExpr parse_dim(const std::string& text) {
  auto fail = [&](const std::string& why) -> DimExpr {
    throw Error(ErrorKind::kType, "'" + clipped_text(text) + "' is not a dimension: " + why);
  };
  if (std::optional<int64_t> value = whole_integer(text)) return DimExpr(*value);
  DimExpr product(int64_t(1));
  size_t start = 0;
  while (true) {
    size_t star = text.find('*', start);
    std::string factor = text.substr(start, star == std::string::npos ? std::string::npos : star - start);
    if (std::optional<int64_t> value = whole_integer(factor)) {
      if (*value < 0) return fail("a factor of a product must not be negative");
      product = product * DimExpr(*value);
    } else {
      size_t at = factor.find("<=");
      std::optional<int64_t> bound;
      if (at != std::string::npos) {
        bound = whole_integer(factor.substr(at + 2));
        if (!bound) return fail("the bound of '" + factor.substr(0, at) + "' must be an integer");
      }
      if (!is_identifier(factor.substr(0, at)))
        return fail("each factor must be an integer or a variable name, optionally with <=bound");
      product = product * DimExpr(dim_var(factor.substr(0, at), bound));
    }
    if (star == std::string::npos) return product;
    start = star + 1;
  }
}

std::string dims_to_string(const std::vector<DimExpr>& dims) {
  std::string text = "(";
  for (size_t i = 0; i < dims.size(); ++i) text += (i ? ", " : "") + dim_to_string(dims[i]);
  return text + ")";
}

std::vector<DimExpr> constant_dims(const std::vector<int64_t>& shape) {
  return std::vector<DimExpr>(shape.begin(), shape.end());
}

}  // namespace switchyard
