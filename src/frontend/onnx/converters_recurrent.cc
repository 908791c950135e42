// Converters of ONNX's recurrent layers: RNN, GRU and LSTM, unrolled over
// their static sequence length; the batch may be symbolic.
#include <optional>

#include "frontend/onnx/converters.h"
#include "frontend/onnx/symbolic_shapes.h"

namespace switchyard {

namespace {

// Recurrent layers (RNN, GRU, LSTM), unrolled over their static sequence
// length: per direction, the input projection of every step at once, then
// the steps one after another, each a few dense products and activations.
class Recurrent {
 public:
  Recurrent(NodeContext& c, std::string op, bool has_layout) : c_(c), op_(std::move(op)) {
    require_float(c, 0);
    gates_ = op_ == "LSTM" ? 4 : op_ == "GRU" ? 3 : 1;
    hidden_ = c.attr_int("hidden_size");
    std::string direction = c.attr_string("direction", "forward");
    if (direction != "forward" && direction != "reverse" && direction != "bidirectional")
      c.fail("direction '" + direction + "' is not one of forward, reverse, bidirectional");
    reverse_ = direction == "reverse";
    directions_ = direction == "bidirectional" ? 2 : 1;
    layout_ = has_layout && c.attr_int("layout", 0) != 0;
    if (c.has_attr("activation_alpha") || c.has_attr("activation_beta"))
      c.fail("activation_alpha and activation_beta are not supported");
    if (c.has_attr("clip")) clip_ = c.attr_float("clip");
    if (op_ == "GRU") linear_before_reset_ = c.attr_int("linear_before_reset", 0) != 0;
    if (op_ == "LSTM" && c.attr_int("input_forget", 0) != 0) c.fail("input_forget=1 is not supported");
    read_activations();
    dtype_ = c.input_dtype(0);
    x_ = layout_ ? c.call("transpose", {c.input(0)}, {{"axes", std::vector<int64_t>{1, 0, 2}}}) : c.input(0);
    const std::vector<DimExpr>& xs = tensor_type_of(x_).dims;
    if (xs.size() != 3) c.fail("X must be 3-D");
    // The steps unroll and the features size the weights; the batch may be symbolic.
    for (size_t axis : {size_t(0), size_t(2)})
      if (!xs[axis].is_constant())
        c.fail(std::string("X's ") + (axis == 0 ? "sequence length" : "feature count") + " '" +
               dim_to_string(xs[axis]) + "' is symbolic: " + op_ + " unrolls over a static sequence (fix it with "
               "--input-shape)");
    steps_ = *xs[0].constant(), batch_ = xs[1], features_ = *xs[2].constant();
    int64_t gh = gates_ * hidden_;
    expect_shape(1, {directions_, gh, features_}, "W");
    expect_shape(2, {directions_, gh, hidden_}, "R");
    if (c.has_input(3)) expect_shape(3, {directions_, 2 * gh}, "B");
    // Shorter sequences (sequence_lens) hold their state past their end and
    // output zeros there: a mask per step, forward directions only.
    if (c.has_input(4)) {
      const NDArray* lens = c.constant_input(4);
      bool full = lens != nullptr;
      for (int64_t i = 0; lens && i < lens->numel(); ++i) full = full && lens->get_as_double(i) == double(steps_);
      if (!full) {
        if (reverse_ || directions_ == 2) c.fail("sequence_lens with a reverse direction is not supported");
        if (c.input_dims(4) != std::vector<DimExpr>{batch_}) c.fail("sequence_lens must hold one length per batch entry");
        lengths_ = reshape(cast_to(c, c.input(4), DType::kInt64), {batch_, 1});
      }
    }
  }

  void convert() {
    std::vector<std::vector<Expr>> outputs;  // [direction][time]
    std::vector<Expr> last_h, last_c;
    for (int64_t d = 0; d < directions_; ++d) {
      outputs.emplace_back(size_t(steps_));
      run_direction(d, outputs.back(), last_h, last_c);
    }
    if (c_.output_used(0)) {
      std::vector<Expr> times;
      for (int64_t t = 0; t < steps_; ++t) {
        std::vector<Expr> per_direction;
        for (int64_t d = 0; d < directions_; ++d)
          per_direction.push_back(reshape(outputs[size_t(d)][size_t(t)], {1, 1, batch_, hidden_}));
        times.push_back(concatenate(per_direction, 1));
      }
      Expr y = concatenate(times, 0);
      c_.set_output(0, layout_ ? c_.call("transpose", {y}, {{"axes", std::vector<int64_t>{2, 0, 1, 3}}}) : y);
    }
    c_.set_output(1, stack_directions(last_h));
    if (op_ == "LSTM") c_.set_output(2, stack_directions(last_c));
  }

 private:
  void read_activations() {
    std::vector<std::string> defaults = op_ == "LSTM" ? std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"}
                                        : op_ == "GRU" ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                                       : std::vector<std::string>{"Tanh"};
    if (c_.has_attr("activations")) {
      for (const auto& a : c_.node().attribute())
        if (a.name() == "activations") activations_.assign(a.strings().begin(), a.strings().end());
      if (activations_.size() != defaults.size() * size_t(directions_))
        c_.fail("activations must name " + std::to_string(defaults.size() * size_t(directions_)) + " functions");
    } else {
      for (int64_t d = 0; d < directions_; ++d) activations_.insert(activations_.end(), defaults.begin(), defaults.end());
    }
    per_direction_ = defaults.size();
  }

  void expect_shape(size_t i, const std::vector<int64_t>& shape, const std::string& name) {
    if (c_.input_shape(i) != shape) c_.fail(name + " must be " + shape_to_string(shape) + ", got " + shape_to_string(c_.input_shape(i)));
  }

  Expr reshape(const Expr& x, const std::vector<DimExpr>& shape) { return reshape_to_dims(c_, x, shape); }
  // Zeros of (batch, hidden): a constant, or broadcast to a symbolic batch.
  Expr zeros() {
    if (std::optional<int64_t> batch = batch_.constant()) return c_.constant(NDArray(dtype_, {*batch, hidden_}));
    return c_.call("broadcast_to", {c_.constant(NDArray(dtype_, {1, hidden_}))}, {{"shape", dims_attr({batch_, hidden_})}});
  }
  Expr slice(const Expr& x, int64_t axis, int64_t begin, int64_t end) {
    return c_.call("strided_slice", {x}, {{"begin", std::vector<int64_t>{begin}}, {"end", std::vector<int64_t>{end}},
                                          {"axes", std::vector<int64_t>{axis}}});
  }
  Expr concatenate(const std::vector<Expr>& parts, int64_t axis) {
    return parts.size() == 1 ? parts[0] : c_.call("concatenate", {c_.tuple(parts)}, {{"axis", axis}});
  }
  Expr gate(const Expr& x, int64_t k) { return slice(x, 1, k * hidden_, (k + 1) * hidden_); }
  Expr add(const Expr& a, const Expr& b) { return b ? c_.call("add", {a, b}) : a; }
  Expr mul(const Expr& a, const Expr& b) { return c_.call("multiply", {a, b}); }
  // The activation (the direction's `k`-th) of a gate's pre-activation, clipped when asked.
  Expr activate(int64_t direction, size_t k, Expr x) {
    if (clip_) x = c_.call("clip", {x}, {{"a_min", -double(*clip_)}, {"a_max", double(*clip_)}});
    const std::string& name = activations_[size_t(direction) * per_direction_ + k];
    if (name == "Sigmoid") return c_.call("sigmoid", {x});
    if (name == "Tanh") return c_.call("tanh", {x});
    if (name == "Relu") return c_.call("nn.relu", {x});
    c_.fail("activation '" + name + "' is not supported (Sigmoid, Tanh, Relu)");
  }
  // Input i's slice for direction d, as `shape`; or null when absent.
  Expr of_direction(size_t i, int64_t d, std::vector<DimExpr> shape, bool batch_major = false) {
    if (!c_.has_input(i)) return Expr();
    Expr v = c_.input(i);
    if (batch_major) v = c_.call("transpose", {v}, {{"axes", std::vector<int64_t>{1, 0, 2}}});
    return reshape(slice(v, 0, d, d + 1), std::move(shape));
  }
  Expr stack_directions(const std::vector<Expr>& per_direction) {
    std::vector<Expr> parts;
    for (const Expr& h : per_direction) parts.push_back(reshape(h, {1, batch_, hidden_}));
    Expr y = concatenate(parts, 0);
    return layout_ ? c_.call("transpose", {y}, {{"axes", std::vector<int64_t>{1, 0, 2}}}) : y;
  }

  void run_direction(int64_t d, std::vector<Expr>& outputs, std::vector<Expr>& last_h, std::vector<Expr>& last_c) {
    int64_t gh = gates_ * hidden_;
    Expr w = of_direction(1, d, {gh, features_}), r = of_direction(2, d, {gh, hidden_});
    Expr bias = of_direction(3, d, {2 * gh});
    Expr w_bias = bias ? slice(bias, 0, 0, gh) : Expr(), r_bias = bias ? slice(bias, 0, gh, 2 * gh) : Expr();
    Expr projected = add(c_.call("nn.dense", {reshape(x_, {DimExpr(steps_) * batch_, features_}), w}), w_bias);
    projected = reshape(projected, {steps_, batch_, gh});
    Expr zeros = this->zeros();
    Expr h = of_direction(5, d, {batch_, hidden_}, layout_);
    if (!h) h = zeros;
    Expr cell, peep_i, peep_o, peep_f;
    if (op_ == "LSTM") {
      cell = of_direction(6, d, {batch_, hidden_}, layout_);
      if (!cell) cell = zeros;
      if (Expr p = of_direction(7, d, {3 * hidden_})) {
        peep_i = slice(p, 0, 0, hidden_), peep_o = slice(p, 0, hidden_, 2 * hidden_);
        peep_f = slice(p, 0, 2 * hidden_, 3 * hidden_);
      }
    }
    bool backwards = reverse_ || d == 1;
    for (int64_t k = 0; k < steps_; ++k) {
      int64_t t = backwards ? steps_ - 1 - k : k;
      Expr xt = reshape(slice(projected, 0, t, t + 1), {batch_, gh});
      Expr previous_h = h, previous_cell = cell;
      Expr hr = add(c_.call("nn.dense", {h, r}), r_bias);
      if (op_ == "RNN") {
        h = activate(d, 0, c_.call("add", {xt, hr}));
      } else if (op_ == "GRU") {  // gates z, r, h
        Expr z = activate(d, 0, c_.call("add", {gate(xt, 0), gate(hr, 0)}));
        Expr reset = activate(d, 0, c_.call("add", {gate(xt, 1), gate(hr, 1)}));
        Expr candidate_in;
        if (linear_before_reset_) {
          candidate_in = mul(reset, gate(hr, 2));
        } else {
          Expr r_h = slice(r, 0, 2 * hidden_, 3 * hidden_);
          candidate_in = add(c_.call("nn.dense", {mul(reset, h), r_h}), r_bias ? gate(reshape(r_bias, {1, gh}), 2) : Expr());
        }
        Expr candidate = activate(d, 1, c_.call("add", {gate(xt, 2), candidate_in}));
        Expr keep = c_.call("subtract", {c_.scalar(1, dtype_), z});
        h = c_.call("add", {mul(keep, candidate), mul(z, h)});
      } else {  // gates i, o, f, c
        Expr sum = c_.call("add", {xt, hr});
        Expr in = activate(d, 0, add(gate(sum, 0), peep_i ? mul(peep_i, cell) : Expr()));
        Expr forget = activate(d, 0, add(gate(sum, 2), peep_f ? mul(peep_f, cell) : Expr()));
        Expr candidate = activate(d, 1, gate(sum, 3));
        cell = c_.call("add", {mul(forget, cell), mul(in, candidate)});
        Expr out = activate(d, 0, add(gate(sum, 1), peep_o ? mul(peep_o, cell) : Expr()));
        h = mul(out, activate(d, 2, cell));
      }
      if (lengths_) {  // steps past a sequence's length keep its state and output zeros
        Expr active = c_.call("less", {c_.scalar(double(t), DType::kInt64), lengths_});
        h = c_.call("where", {active, h, previous_h});
        if (cell) cell = c_.call("where", {active, cell, previous_cell});
        outputs[size_t(t)] = c_.call("where", {active, h, zeros});
      } else {
        outputs[size_t(t)] = h;
      }
    }
    last_h.push_back(h);
    last_c.push_back(cell);
  }

  NodeContext& c_;
  std::string op_;
  int64_t gates_ = 1, hidden_ = 0, directions_ = 1, steps_ = 0, features_ = 0;
  DimExpr batch_;
  bool reverse_ = false, layout_ = false, linear_before_reset_ = false;
  std::optional<float> clip_;
  std::vector<std::string> activations_;
  size_t per_direction_ = 1;
  DType dtype_ = DType::kFloat32;
  Expr x_;
  Expr lengths_;  // (batch, 1) int64, when some sequences are shorter
};

}  // namespace

void register_recurrent_converters() {
  // Version 14 added `layout` (batch-major X, Y and states); before, they are time-major.
  for (const char* op : {"RNN", "GRU", "LSTM"}) {
    std::string name = op;
    std::vector<int> versions = name == "GRU" ? std::vector<int>{1, 3, 7, 14} : std::vector<int>{1, 7, 14};
    add_onnx_converter(name, versions,
                       {{7, [name](NodeContext& c) { Recurrent(c, name, false).convert(); }},
                        {14, [name](NodeContext& c) { Recurrent(c, name, true).convert(); }}});
  }
}

}  // namespace switchyard
