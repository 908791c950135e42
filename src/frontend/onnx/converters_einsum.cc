// Einsum (ONNX 12) as IR operators: one operand is a sum over the letters
// the output lacks and a transpose; two are the standard reduction to a
// batched matrix product (each letter is batch, contracted, left-only,
// right-only or summed out; the operands are transposed and reshaped to
// (batch, M, K) and (batch, K, N), multiplied, and the product reshaped and
// transposed to the output); more are contracted pairwise, left to right.
// A letter repeated within one term (a diagonal, "ii->i") first takes the
// diagonal of its axes. Sizes may be symbolic (a dynamic batch: MaxViT's
// relative attention), except along a diagonal.
#include <algorithm>
#include <cctype>
#include <map>
#include <numeric>

#include "frontend/onnx/converters.h"
#include "frontend/onnx/symbolic_shapes.h"

namespace switchyard {

namespace {

// Letters are their character codes; the dimensions an ellipsis stands for
// are labels from kEllipsisLabel on, aligned from the right across terms.
constexpr int kEllipsisLabel = 256;

using Labels = std::vector<int>;

// An operand with one label per dimension.
struct Term {
  Expr value;
  Labels labels;
};

bool contains(const Labels& labels, int label) { return std::find(labels.begin(), labels.end(), label) != labels.end(); }

std::string label_name(int label) {
  return label >= kEllipsisLabel ? "'...' dimension " + std::to_string(label - kEllipsisLabel) : std::string(1, char(label));
}

// One term of the equation ("b...ij") for an operand of `rank` dimensions
// (the output's rank is known only once the ellipsis is: -1), with
// `ellipsis` labels standing for "...".
Labels parse_term(NodeContext& c, const std::string& term, int64_t rank, int64_t ellipsis_rank, const std::string& what) {
  Labels labels;
  bool seen_ellipsis = false;
  int64_t letters = 0;
  for (char ch : term) letters += std::isalpha(static_cast<unsigned char>(ch)) ? 1 : 0;
  for (size_t i = 0; i < term.size(); ++i) {
    char ch = term[i];
    if (std::isalpha(static_cast<unsigned char>(ch))) {
      labels.push_back(int(static_cast<unsigned char>(ch)));
    } else if (term.compare(i, 3, "...") == 0 && !seen_ellipsis) {
      seen_ellipsis = true;
      i += 2;
      int64_t count = rank >= 0 ? rank - letters : ellipsis_rank;
      if (count < 0) c.fail(what + " '" + term + "' has more letters than its rank " + std::to_string(rank));
      for (int64_t k = ellipsis_rank - count; k < ellipsis_rank; ++k) labels.push_back(kEllipsisLabel + int(k));
    } else {
      c.fail("the equation's " + what + " '" + term + "' holds '" + std::string(1, ch) +
             "': only letters and one '...' are allowed");
    }
  }
  if (rank >= 0 && int64_t(labels.size()) != rank)
    c.fail(what + " '" + term + "' has " + std::to_string(labels.size()) + " letters for an input of rank " +
           std::to_string(rank));
  return labels;
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts(1);
  for (char ch : text) {
    if (ch == separator) parts.emplace_back();
    else parts.back() += ch;
  }
  return parts;
}

// The permutation that orders `from` as `to` (both the same labels).
std::vector<int64_t> permutation(const Labels& from, const Labels& to) {
  std::vector<int64_t> axes;
  for (int label : to) axes.push_back(std::find(from.begin(), from.end(), label) - from.begin());
  return axes;
}

Term transposed(NodeContext& c, const Term& t, const Labels& order) {
  std::vector<int64_t> axes = permutation(t.labels, order);
  std::vector<int64_t> identity(axes.size());
  std::iota(identity.begin(), identity.end(), 0);
  if (axes == identity) return {t.value, order};
  return {c.call("transpose", {t.value}, {{"axes", axes}}), order};
}

// t summed over its labels not in `keep`.
Term summed_to(NodeContext& c, const Term& t, const Labels& keep) {
  std::vector<int64_t> axes;
  Labels kept;
  for (size_t i = 0; i < t.labels.size(); ++i) {
    if (contains(keep, t.labels[i])) kept.push_back(t.labels[i]);
    else axes.push_back(int64_t(i));
  }
  if (axes.empty()) return t;
  return {c.call("sum", {t.value}, {{"axis", axes}, {"keepdims", false}}), kept};
}

class Einsum {
 public:
  explicit Einsum(NodeContext& c) : c_(c) {}

  void convert() {
    std::string equation;
    for (char ch : c_.attr_string("equation"))
      if (ch != ' ') equation += ch;
    size_t arrow = equation.find("->");
    std::vector<std::string> terms = split(equation.substr(0, arrow), ',');
    if (terms.size() != c_.input_count())
      c_.fail("the equation '" + equation + "' has " + std::to_string(terms.size()) + " terms for " +
              std::to_string(c_.input_count()) + " inputs");
    int64_t ellipsis_rank = 0;
    for (size_t i = 0; i < terms.size(); ++i) {
      int64_t letters = std::count_if(terms[i].begin(), terms[i].end(), [](char ch) { return std::isalpha(static_cast<unsigned char>(ch)); });
      if (terms[i].find("...") != std::string::npos)
        ellipsis_rank = std::max(ellipsis_rank, int64_t(c_.input_type(i).ndim()) - letters);
    }
    std::vector<Term> operands;
    std::vector<Labels> written;  // each term's letters as written, before diagonals
    for (size_t i = 0; i < terms.size(); ++i) {
      Term t{c_.input(i), parse_term(c_, terms[i], c_.input_type(i).ndim(), ellipsis_rank, "term " + std::to_string(i))};
      written.push_back(t.labels);
      t = diagonal(t, terms[i]);
      record_sizes(t, i);
      operands.push_back(std::move(t));
    }
    Labels output = arrow == std::string::npos ? implicit_output(written)
                                               : parse_term(c_, equation.substr(arrow + 2), -1, ellipsis_rank, "output");
    for (int label : output) {
      if (std::count(output.begin(), output.end(), label) > 1) c_.fail("'" + label_name(label) + "' appears twice in the output");
      if (!sizes_.count(label)) c_.fail("the output's '" + label_name(label) + "' is in no input term");
    }
    for (Term& t : operands) t = broadcast_to_sizes(t);
    Term result = operands[0];
    for (size_t i = 1; i < operands.size(); ++i) {
      // Keep what the output or a later operand reads.
      Labels keep;
      for (const Labels& side : {result.labels, operands[i].labels})
        for (int label : side) {
          bool later = std::any_of(operands.begin() + long(i) + 1, operands.end(),
                                   [&](const Term& t) { return contains(t.labels, label); });
          if ((contains(output, label) || later) && !contains(keep, label)) keep.push_back(label);
        }
      result = contract(result, operands[i], i + 1 == operands.size() ? output : keep);
    }
    result = transposed(c_, summed_to(c_, result, output), output);
    set_single_output(c_, result.value);
  }

 private:
  // t with each letter repeated in its term ("ii", a diagonal) once: the two
  // axes moved last, merged, and the diagonal taken at steps of n + 1.
  Term diagonal(Term t, const std::string& term) {
    for (size_t a = 0; a < t.labels.size(); ++a) {
      auto repeat = std::find(t.labels.begin() + long(a) + 1, t.labels.end(), t.labels[a]);
      if (repeat == t.labels.end()) continue;
      size_t b = size_t(repeat - t.labels.begin());
      const std::vector<DimExpr> dims = tensor_type_of(t.value).dims;
      for (size_t axis : {a, b})
        if (!dims[axis].is_constant())
          c_.fail("the diagonal of '" + label_name(t.labels[a]) + "' in term '" + term + "' runs along symbolic dimension '" +
                  dim_to_string(dims[axis]) + "', which is not supported (fix it with --input-shape)");
      const int64_t n = *dims[a].constant();
      if (*dims[b].constant() != n)
        c_.fail("'" + label_name(t.labels[a]) + "' has sizes " + std::to_string(n) + " and " +
                std::to_string(*dims[b].constant()) + " in term '" + term + "'");
      Labels rest;
      for (size_t k = 0; k < t.labels.size(); ++k)
        if (k != a && k != b) rest.push_back(int(k));
      std::vector<int64_t> axes(rest.begin(), rest.end());
      std::vector<DimExpr> merged;
      for (int k : rest) merged.push_back(dims[size_t(k)]);
      axes.push_back(int64_t(a));
      axes.push_back(int64_t(b));
      Expr moved = c_.call("transpose", {t.value}, {{"axes", axes}});
      merged.push_back(n * n);
      std::vector<int64_t> steps;
      for (int64_t k = 0; k < n; ++k) steps.push_back(k * (n + 1));
      Labels labels;
      for (int k : rest) labels.push_back(t.labels[size_t(k)]);
      labels.push_back(t.labels[a]);
      t = {take_along(c_, reshape_to_dims(c_, moved, merged), int64_t(merged.size()) - 1, steps), labels};
      a = size_t(-1);  // labels moved: look again from the start
    }
    return t;
  }

  void record_sizes(const Term& t, size_t input) {
    const std::vector<DimExpr>& shape = tensor_type_of(t.value).dims;
    const DimExpr one(1);
    for (size_t a = 0; a < t.labels.size(); ++a) {
      DimExpr& size = sizes_.emplace(t.labels[a], shape[a]).first->second;
      if (size == shape[a] || shape[a] == one) continue;
      if (size != one)
        c_.fail("'" + label_name(t.labels[a]) + "' has size " + dim_to_string(size) + " in one term and " +
                dim_to_string(shape[a]) + " in term " + std::to_string(input));
      size = shape[a];
    }
  }

  // Letters appearing once in all the terms, in alphabetical order, after
  // the ellipsis's dimensions (NumPy's implicit output).
  Labels implicit_output(const std::vector<Labels>& terms) {
    std::map<int, int> count;
    for (const Labels& labels : terms)
      for (int label : labels) ++count[label];
    Labels output;
    for (const auto& [label, n] : count)
      if (label >= kEllipsisLabel) output.push_back(label);
    for (const auto& [label, n] : count)
      if (label < kEllipsisLabel && n == 1) output.push_back(label);
    return output;
  }

  // A dimension of 1 where another term has more is broadcast to it, so the
  // reshapes below see one size per label.
  Term broadcast_to_sizes(const Term& t) {
    std::vector<DimExpr> shape = shape_of(t.labels);
    if (shape == tensor_type_of(t.value).dims) return t;
    return {c_.call("broadcast_to", {t.value}, {{"shape", dims_attr(shape)}}), t.labels};
  }

  DimExpr size_of(const Labels& labels) { return dim_product(shape_of(labels)); }

  std::vector<DimExpr> shape_of(const Labels& labels) {
    std::vector<DimExpr> shape;
    for (int label : labels) shape.push_back(sizes_.at(label));
    return shape;
  }

  // a and b contracted to the labels `keep` (in any order).
  Term contract(Term a, Term b, const Labels& keep) {
    // A label only one side has, and that is not kept, is summed out first.
    Labels a_needs = keep, b_needs = keep;
    a_needs.insert(a_needs.end(), b.labels.begin(), b.labels.end());
    b_needs.insert(b_needs.end(), a.labels.begin(), a.labels.end());
    a = summed_to(c_, a, a_needs);
    b = summed_to(c_, b, b_needs);
    Labels batch, contracted, left, right;
    for (int label : a.labels) {
      if (contains(b.labels, label)) (contains(keep, label) ? batch : contracted).push_back(label);
      else left.push_back(label);
    }
    for (int label : b.labels)
      if (!contains(a.labels, label)) right.push_back(label);
    auto concat = [](std::initializer_list<const Labels*> parts) {
      Labels all;
      for (const Labels* p : parts) all.insert(all.end(), p->begin(), p->end());
      return all;
    };
    DimExpr batch_size = size_of(batch), m = size_of(left), k = size_of(contracted), n = size_of(right);
    Term a3 = transposed(c_, a, concat({&batch, &left, &contracted}));
    Term b3 = transposed(c_, b, concat({&batch, &contracted, &right}));
    Expr product = c_.call("matmul", {reshape_to_dims(c_, a3.value, {batch_size, m, k}),
                                      reshape_to_dims(c_, b3.value, {batch_size, k, n})});
    Labels labels = concat({&batch, &left, &right});
    return {reshape_to_dims(c_, product, shape_of(labels)), labels};
  }

  NodeContext& c_;
  std::map<int, DimExpr> sizes_;
};

}  // namespace

void register_einsum_converters() {
  add_onnx_converter("Einsum", {12}, {{12, [](NodeContext& c) { Einsum(c).convert(); }}});
}

}  // namespace switchyard
