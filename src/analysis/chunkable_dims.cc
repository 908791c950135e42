// The operator rules that prove a dimension's entries stay apart.
#include "analysis/chunkable_dims.h"

#include <algorithm>
#include <unordered_map>

#include "analysis/describe.h"
#include "ir/functor.h"
#include "ir/type.h"
#include "op/linear_attrs.h"
#include "op/movement_attrs.h"
#include "op/norm_attrs.h"
#include "op/reduce_attrs.h"
#include "op/registry.h"
#include "runtime/clipped_text.h"

namespace switchyard {
namespace {

// One tensor's relation to the dimension n. Along `axis`, of extent
// outer * n * block, index i belongs to entry (i / block) % n: attention's
// (seq, batch * heads, 16) has block 4 (the heads), its (seq * batch, 64)
// outer seq. Whatever a reshape does, entry b is then the same elements of
// the row-major order on both sides when what lies before entry 0's first
// element (the axes before, times outer) and one entry's run (block times
// the axes after) are the same.
struct Carry {
  int axis = -1;   // -1: the value is the same for every entry
  DimExpr extent;  // the axis's extent
  DimExpr outer = DimExpr(int64_t(1));
  // Broadcast from a value every entry shares: any labelling of its axis is right.
  bool uniform = false;
  bool carried() const { return axis >= 0; }
};

// A value: one tensor, or a tuple's fields.
struct State {
  std::vector<Carry> fields;
  bool tuple = false;
};

// Why the dimension cannot be chunked, at a node.
struct Refusal {
  std::string why;
};

int count_of(const DimExpr& d, const DimVar* var) {
  return int(std::count(d.variables().begin(), d.variables().end(), var));
}

// Where the dimension lies in a tensor type (nullopt-like -1 when nowhere).
Carry carry_of_type(const TensorTypeNode& t, const DimVar* var) {
  Carry carry;
  for (size_t i = 0; i < t.dims.size(); ++i) {
    int count = count_of(t.dims[i], var);
    if (count == 0) continue;
    if (count > 1 || carry.carried())
      throw Refusal{"its type " + clipped_text(dims_to_string(t.dims)) + " holds " + var->name + " more than once"};
    carry = Carry{int(i), t.dims[i]};
  }
  return carry;
}

std::vector<Carry> carries_of_type(const Type& type, const DimVar* var) {
  if (const TensorTypeNode* t = as_tensor(type)) return {carry_of_type(*t, var)};
  std::vector<Carry> fields;
  if (const TupleTypeNode* tuple = as_tuple(type))
    for (const Type& field : tuple->fields) {
      const TensorTypeNode* t = as_tensor(field);
      if (!t) throw Refusal{"a tuple nested in a tuple is not followed"};
      fields.push_back(carry_of_type(*t, var));
    }
  return fields;
}

int rank_of(const ExprNode* e) {
  const TensorTypeNode* t = as_tensor(e->checked_type());
  return t ? t->ndim() : 0;
}
int rank_of(const Expr& e) { return rank_of(e.get()); }

const std::vector<DimExpr>& dims_of(const ExprNode* e) { return as_tensor(e->checked_type())->dims; }

int normalized(int64_t axis, int rank) { return int(axis < 0 ? axis + rank : axis); }

class ChunkChecker {
 public:
  explicit ChunkChecker(const DimVar* var) : var_(var) {}

  State state_of(const Expr& e) const { return states_.at(e.get()); }

  void visit(const Expr& e) {
    if (e->kind() == ExprKind::kOp) return;
    try {
      states_[e.get()] = evaluate(e);
    } catch (const Refusal& refusal) {
      // Planning has not run: the node's device says nothing yet.
      std::string node = describe_node(e);
      const std::string unplaced = " (no device)";
      if (node.ends_with(unplaced)) node.resize(node.size() - unplaced.size());
      std::string where = e->span().defined() ? " at " + e->span().to_string() : "";
      throw Refusal{node + where + ": " + refusal.why};
    }
  }

 private:
  const std::string& name() const { return var_->name; }

  State evaluate(const Expr& e) {
    switch (e->kind()) {
      case ExprKind::kVar: return {carries_of_type(e->checked_type(), var_), false};
      case ExprKind::kConstant: return {{Carry{}}, false};
      case ExprKind::kTuple: {
        State s{{}, true};
        for (const Expr& field : static_cast<const TupleNode*>(e.get())->fields) {
          const State& f = states_.at(field.get());
          if (f.tuple) throw Refusal{"a tuple nested in a tuple is not followed"};
          s.fields.push_back(f.fields[0]);
        }
        return s;
      }
      case ExprKind::kTupleGetItem: {
        const auto* get = static_cast<const TupleGetItemNode*>(e.get());
        return {{states_.at(get->tuple.get()).fields.at(size_t(get->index))}, false};
      }
      case ExprKind::kCall: return evaluate_call(*static_cast<const CallNode*>(e.get()));
      default: throw Refusal{"control flow, bindings and functions are not followed"};
    }
  }

  State evaluate_call(const CallNode& call) {
    const OpNode* op = as<OpNode>(call.op);
    if (!op) throw Refusal{"a call of a function is not followed"};
    std::vector<State> args;
    bool any_carried = false;
    for (const Expr& a : call.args) {
      args.push_back(states_.at(a.get()));
      for (const Carry& c : args.back().fields) any_carried = any_carried || c.carried();
    }
    State out{carries_of_type(call.checked_type(), var_), as_tuple(call.checked_type()) != nullptr};
    // A result not yet labelled by a rule below is refused by it.
    bool any_out = false, all_out = true;
    for (const Carry& c : out.fields) {
      any_out = any_out || c.carried();
      all_out = all_out && c.carried();
    }
    if (!any_carried && !any_out) return out;
    if (!any_carried) {
      if (op->name == "broadcast_to") return broadcast_from_whole(call, out);
      throw Refusal{"makes a value of extent " + name() + " from values that do not depend on it, which a chunk "
                    "would cut from its start"};
    }
    if (op->name == "nn.batch_norm") return batch_norm(call, args, out);
    if (!all_out)
      throw Refusal{"its result does not keep " + name() + " though its operands do: it reduces or mixes the entries"};
    check_call(call, *op, args, out);
    return out;
  }

  // An operand carried at `axis` must reach the result's carried axis
  // unchanged; the result takes its labelling.
  void expect_same(const Carry& in, Carry& out, int expected_axis, const std::string& what) const {
    if (out.axis != expected_axis || !(in.extent == out.extent))
      throw Refusal{what + " moves " + name() + " from axis " + std::to_string(in.axis) + " (" + dim_to_string(in.extent) +
                    ") to axis " + std::to_string(out.axis) + " (" + dim_to_string(out.extent) + ")"};
    out.outer = in.outer;
    out.uniform = in.uniform;
  }

  // Several operands reaching the result: each at its expected axis, all
  // labelled alike except uniform ones, and the result takes the labelling
  // of the first that is not uniform.
  void label_from(const std::vector<std::pair<Carry, int>>& operands, Carry& result, const std::string& what) const {
    std::vector<std::pair<Carry, int>> ordered;
    for (const auto& o : operands)
      if (!o.first.uniform) ordered.push_back(o);
    for (const auto& o : operands)
      if (o.first.uniform) ordered.push_back(o);
    for (size_t i = 0; i < ordered.size(); ++i) {
      const Carry& c = ordered[i].first;
      if (i > 0 && !c.uniform && !(c.outer == result.outer))
        throw Refusal{what + " combines operands that hold the entries of " + name() + " in different orders"};
      Carry labelled = result;
      expect_same(c, labelled, ordered[i].second, what);
      if (i == 0) result = labelled;
    }
  }

  void expect_whole(const std::vector<State>& args, size_t first, const std::string& op) const {
    for (size_t i = first; i < args.size(); ++i)
      for (const Carry& c : args[i].fields)
        if (c.carried())
          throw Refusal{op + "'s operand " + std::to_string(i) + " holds " + name() + ", which this rule does not take"};
  }

  void refuse_axis(const std::string& what, int axis) const {
    throw Refusal{what + " along axis " + std::to_string(axis) + ", which holds " + name()};
  }

  void check_call(const CallNode& call, const OpNode& op, const std::vector<State>& args, State& out) {
    const std::string& n = op.name;
    Carry& result = out.fields[0];
    const int out_rank = rank_of(&call);
    const AttrsNode* attrs = call.attrs.get();
    const Carry& data = args[0].fields[0];
    const int rank = call.args.empty() ? 0 : rank_of(call.args[0]);

    if (n == "nn.bias_add" || n == "nn.layer_norm" || n == "nn.softmax") {
      expect_whole(args, 1, n);
      int axis = normalized(n == "nn.softmax" ? attrs->get_int("axis") : norm_attrs(*attrs).axis, rank);
      if (axis == data.axis) refuse_axis(n == "nn.bias_add" ? "adds its bias" : "normalises", axis);
      return expect_same(data, result, data.axis, n);
    }
    if (op.def->scalar && (op.def->pattern == OpPattern::kElementwise || op.def->pattern == OpPattern::kBroadcast)) {
      std::vector<std::pair<Carry, int>> operands;
      for (size_t i = 0; i < args.size(); ++i) {
        const Carry& c = args[i].fields[0];
        if (c.carried()) operands.push_back({c, c.axis + out_rank - rank_of(call.args[i])});
      }
      return label_from(operands, result, "broadcasting");
    }
    if (n == "reshape") return reshape(call, data, result);
    if (n == "transpose") {
      std::optional<std::vector<int64_t>> axes = transpose_attrs(*attrs).axes;
      int to = -1;
      for (int i = 0; i < rank; ++i) {
        int from = axes ? normalized((*axes)[size_t(i)], rank) : rank - 1 - i;
        if (from == data.axis) to = i;
      }
      return expect_same(data, result, to, n);
    }
    if (n == "expand_dims") {
      ExpandDimsAttrs e = expand_dims_attrs(*attrs);
      int at = int(e.axis < 0 ? e.axis + rank + 1 : e.axis);
      return expect_same(data, result, data.axis + (data.axis >= at ? int(e.num_newaxis) : 0), n);
    }
    if (n == "concatenate") {
      if (normalized(concatenate_attrs(*attrs).axis, out_rank) == result.axis) refuse_axis("concatenates", result.axis);
      std::vector<std::pair<Carry, int>> operands;
      for (const Carry& c : args[0].fields) {
        if (!c.carried()) throw Refusal{"concatenates a value that does not hold " + name() + " with ones that do"};
        operands.push_back({c, c.axis});
      }
      return label_from(operands, result, n);
    }
    if (n == "split") {
      if (normalized(split_attrs(*attrs).axis, rank) == data.axis) refuse_axis("splits", data.axis);
      for (Carry& c : out.fields) expect_same(data, c, data.axis, n);
      return;
    }
    if (n == "strided_slice") return strided_slice(*attrs, data, result, rank);
    if (n == "take") return take(call, args, result);
    if (n == "broadcast_to") return expect_same(data, result, data.axis + out_rank - rank, n);
    if (n == "nn.dense" || n == "qnn.dense") {
      expect_whole(args, 1, n);
      if (data.axis == rank - 1) refuse_axis("contracts", data.axis);
      return expect_same(data, result, data.axis, n);
    }
    if (n == "matmul" || n == "nn.batch_matmul") return matmul(call, args, result);
    if (n == "sum" || n == "mean" || n == "max" || n == "prod") {
      ReduceAttrs reduce = reduce_attrs(*attrs);
      std::vector<int64_t> axes = reduced_axes(rank, reduce, n);
      int before = 0;
      for (int64_t a : axes) {
        if (a == data.axis) refuse_axis("reduces", data.axis);
        before += a < data.axis;
      }
      return expect_same(data, result, data.axis - (reduce.keepdims ? 0 : before), n);
    }
    if (n == "nn.conv2d" || n == "qnn.conv2d" || n == "nn.max_pool2d" || n == "nn.avg_pool2d" ||
        n == "nn.global_avg_pool2d") {
      expect_whole(args, 1, n);
      if (data.axis != 0) refuse_axis("slides its window", data.axis);
      return expect_same(data, result, 0, n);
    }
    throw Refusal{n + " is not known to keep the entries of " + name() + " apart"};
  }

  // Row-major order stays put (Carry): the elements before entry 0 and one
  // entry's run must be the same counts on both sides, which fixes the
  // result's outer and block.
  void reshape(const CallNode& call, const Carry& data, Carry& result) const {
    const std::vector<DimExpr>& in = dims_of(call.args[0].get());
    const std::vector<DimExpr>& out = dims_of(&call);
    auto product = [](const std::vector<DimExpr>& dims, size_t from, size_t to) {
      return dim_product(std::vector<DimExpr>(dims.begin() + long(from), dims.begin() + long(to)));
    };
    auto refuse = [&] {
      throw Refusal{"reshapes " + clipped_text(dims_to_string(in)) + " to " + clipped_text(dims_to_string(out)) +
                    ", which regroups the entries of " + name()};
    };
    const DimExpr n(var_);
    const DimExpr before = product(in, 0, size_t(data.axis)) * data.outer;
    std::optional<DimExpr> block = exact_quotient(data.extent, n * data.outer);
    if (!block) refuse();
    const DimExpr run = *block * product(in, size_t(data.axis) + 1, in.size());
    // Uniform data may take any labelling: the one whose elements before entry 0 are the result's axes before.
    std::optional<DimExpr> outer = data.uniform ? std::optional<DimExpr>(DimExpr(int64_t(1)))
                                                : exact_quotient(before, product(out, 0, size_t(result.axis)));
    if (!outer) refuse();
    std::optional<DimExpr> result_block = exact_quotient(result.extent, n * *outer);
    if (!result_block) refuse();
    if (!data.uniform && !(*result_block * product(out, size_t(result.axis) + 1, out.size()) == run)) refuse();
    result.outer = *outer;
    result.uniform = data.uniform;
  }

  void strided_slice(const AttrsNode& attrs, const Carry& data, Carry& result, int rank) const {
    StridedSliceAttrs s = strided_slice_attrs(attrs);
    for (size_t j = 0; j < s.begin.size(); ++j) {
      int axis = s.axes ? normalized((*s.axes)[j], rank) : int(j);
      if (axis != data.axis) continue;
      int64_t stride = s.strides && j < s.strides->size() ? (*s.strides)[j] : 1;
      if (s.begin[j] != 0 || stride != 1) refuse_axis("slices", axis);
    }
    expect_same(data, result, data.axis, "strided_slice");
  }

  void take(const CallNode& call, const std::vector<State>& args, Carry& result) const {
    TakeAttrs t = take_attrs(*call.attrs);
    const Carry& data = args[0].fields[0];
    const Carry& indices = args[1].fields[0];
    if (!t.axis) throw Refusal{"take of the flattened data mixes the entries of " + name()};
    int rank = rank_of(call.args[0]);
    int axis = normalized(*t.axis, rank);
    if (data.carried() && indices.carried()) throw Refusal{"take's data and indices both hold " + name()};
    if (indices.carried()) return expect_same(indices, result, axis + indices.axis, "take");
    if (data.axis == axis) refuse_axis("gathers", axis);
    int shift = data.axis > axis ? rank_of(call.args[1]) - 1 : 0;
    expect_same(data, result, data.axis + shift, "take");
  }

  // matmul (NumPy's) and nn.batch_matmul: rows of a and columns of b are
  // independent, and so are broadcast batch axes; the contracted ones are not.
  void matmul(const CallNode& call, const std::vector<State>& args, Carry& result) const {
    bool batch_matmul = as<OpNode>(call.op)->name == "nn.batch_matmul";
    LinearAttrs flags = batch_matmul ? linear_attrs(*call.attrs) : LinearAttrs{};
    const int out_rank = rank_of(&call);
    std::vector<std::pair<Carry, int>> operands;
    for (size_t i = 0; i < 2; ++i) {
      const Carry& c = args[i].fields[0];
      if (!c.carried()) continue;
      int rank = rank_of(call.args[i]);
      if (rank < 2) throw Refusal{"a matrix-vector product over " + name() + " is not followed"};
      bool transposed = i == 0 ? flags.transpose_a : flags.transpose_b;
      // a: (..., M, K); b: (..., K, N); each transposed swaps its last two.
      int contracted = (i == 0) != transposed ? rank - 1 : rank - 2;
      if (c.axis == contracted) refuse_axis("contracts", c.axis);
      operands.push_back({c, c.axis < rank - 2 ? c.axis + out_rank - rank : (i == 0 ? out_rank - 2 : out_rank - 1)});
    }
    label_from(operands, result, as<OpNode>(call.op)->name);
  }

  // broadcast_to of a value every entry shares: each entry gets the same copy.
  State broadcast_from_whole(const CallNode& call, State out) const {
    Carry& result = out.fields[0];
    result.uniform = true;
    const std::vector<DimExpr>& in = dims_of(call.args[0].get());
    int from = result.axis - (rank_of(&call) - int(in.size()));
    if (from >= 0 && !(in[size_t(from)] == DimExpr(int64_t(1))))
      throw Refusal{"broadcasts to extent " + name() + " along an axis of extent " + dim_to_string(in[size_t(from)])};
    return out;
  }

  // Inference batch norm: the data's entries apart, the statistics untouched.
  State batch_norm(const CallNode& call, const std::vector<State>& args, State out) const {
    expect_whole(args, 1, "nn.batch_norm");
    const Carry& data = args[0].fields[0];
    int axis = normalized(norm_attrs(*call.attrs).axis, rank_of(call.args[0]));
    if (axis == data.axis) refuse_axis("normalises", axis);
    expect_same(data, out.fields[0], data.axis, "nn.batch_norm");
    for (size_t i = 1; i < out.fields.size(); ++i)
      if (out.fields[i].carried()) throw Refusal{"nn.batch_norm's statistics hold " + name()};
    return out;
  }

  const DimVar* var_;
  std::unordered_map<const ExprNode*, State> states_;
};

}  // namespace

ChunkableDim chunkable_dim(const Function& main, const DimVar* var) {
  ChunkableDim result{var->name, "", {}, {}};
  ChunkChecker checker(var);
  try {
    for (const Var& p : main->params) {
      checker.visit(p);
      const State s = checker.state_of(p);
      if (s.tuple) throw Refusal{"input %" + p->name_hint + " is a tuple"};
      if (s.fields[0].carried() && !(s.fields[0].extent == DimExpr(var)))
        throw Refusal{"input %" + p->name_hint + " has extent " + dim_to_string(s.fields[0].extent) + ", not " +
                      var->name};
      result.input_axes.push_back(s.fields[0].axis);
    }
    post_order_visit(main->body, [&checker](const Expr& e) { checker.visit(e); });
    const State outputs = checker.state_of(main->body);
    for (size_t j = 0; j < outputs.fields.size(); ++j) {
      const Carry& c = outputs.fields[j];
      // A run's slice of an output must be whole entries laid one after another.
      if (c.carried() && !c.uniform && !(c.outer == DimExpr(int64_t(1))))
        throw Refusal{"output " + std::to_string(j) + " holds the entries of " + var->name + " interleaved along axis " +
                      std::to_string(c.axis) + " (outer " + dim_to_string(c.outer) +
                      "), so a run's entries are no one slice of it"};
      result.output_axes.push_back(c.axis);
    }
  } catch (const Refusal& refusal) {
    result.refusal = refusal.why;
    result.input_axes.clear();
    result.output_axes.clear();
  }
  return result;
}

}  // namespace switchyard
