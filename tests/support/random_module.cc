// Random well-typed modules (see random_module.h). Shapes are tracked by the
// generator itself, which sits below type inference.
#include "support/random_module.h"

#include <algorithm>
#include <numeric>
#include <random>

#include "op/registry.h"

namespace switchyard {

namespace {

using Shape = std::vector<int64_t>;

struct Value {
  Expr expr;
  Shape shape;
  bool consumed = false;
};

class Generator {
 public:
  Generator(uint64_t seed, const RandomModuleOptions& options) : rng_(seed), options_(options) {}

  IRModule run() {
    int inputs = 1 + int(below(3));
    for (int i = 0; i < inputs; ++i) {
      Shape shape = random_shape();
      add_value(new_param("x", shape), shape);
    }
    for (int made = 0; made < options_.num_nodes;) made += step();
    Expr result = make_result();
    for (auto it = lets_.rbegin(); it != lets_.rend(); ++it) result = make_let(it->first, it->second, result);
    IRModule module;
    module.add("main", make_function(params_, result, result_type_));
    return module;
  }

 private:
  uint64_t below(uint64_t n) { return rng_() % n; }
  bool chance(double p) { return double(rng_() >> 11) * 0x1.0p-53 < p; }
  template <typename T>
  const T& pick(const std::vector<T>& items) { return items[below(items.size())]; }

  Shape random_shape() {
    Shape shape(1 + below(3));
    for (int64_t& d : shape) d = 1 + int64_t(below(5));
    return shape;
  }

  const VirtualDevice* random_wish() {
    if (options_.devices.empty() || !chance(options_.wish_probability)) return nullptr;
    return VirtualDevice::parse(pick(options_.devices));
  }

  Var new_param(const std::string& prefix, const Shape& shape) {
    Var p = make_var(prefix + std::to_string(params_.size()), tensor_type(shape, DType::kFloat32),
                     {.virtual_device = random_wish()});
    params_.push_back(p);
    return p;
  }

  void add_value(Expr e, Shape shape) { pool_.push_back({std::move(e), std::move(shape)}); }

  // A random pool value, preferring recent ones so chains grow deep.
  Value& operand() {
    size_t n = pool_.size();
    size_t index = chance(0.6) ? n - 1 - below(std::min<size_t>(n, 3)) : below(n);
    pool_[index].consumed = true;
    return pool_[index];
  }

  // Exactly representable values keep interpreters and backends in agreement.
  float random_scalar() { return float(int(below(17)) - 8) * 0.25f; }

  Constant random_constant(const Shape& shape) {
    NDArray data(DType::kFloat32, shape);
    for (int64_t i = 0; i < data.numel(); ++i) data.as<float>()[i] = random_scalar();
    return make_constant(std::move(data));
  }

  // A second operand broadcastable against `shape`: the same shape, a suffix
  // of it (a parameter or a constant), or a scalar constant.
  Expr broadcast_partner(const Shape& shape) {
    switch (below(4)) {
      case 0:
        for (Value& v : pool_)
          if (v.shape == shape && chance(0.5)) {
            v.consumed = true;
            return v.expr;
          }
        return new_param("x", shape);
      case 1: return make_scalar_f32(random_scalar());
      case 2:
        if (shape.empty()) return make_scalar_f32(random_scalar());
        return random_constant(Shape(shape.end() - long(1 + below(shape.size())), shape.end()));
      default: return new_param("x", Shape(shape.begin() + long(below(shape.size() + 1)), shape.end()));
    }
  }

  // Adds a call's result (maybe wrapped in an on_device wish, maybe let-bound).
  void add_result(Expr e, Shape shape) {
    if (const VirtualDevice* wish = random_wish())
      e = make_op_call("on_device", {e}, {{"device", wish->device_name()}});
    if (chance(0.25)) {
      Type type = chance(0.5) ? Type(tensor_type(shape, DType::kFloat32)) : Type();
      Var v = make_var("t" + std::to_string(lets_.size()), type);
      lets_.emplace_back(v, e);
      e = v;
    }
    add_value(std::move(e), std::move(shape));
  }

  // One random construct; returns how many nodes it made.
  int step() {
    static const std::vector<std::string> unary = {"nn.relu", "negative", "tanh", "sigmoid", "abs"};
    static const std::vector<std::string> binary = {"add", "subtract", "multiply", "maximum", "minimum"};
    Value& x = operand();
    Expr input = x.expr;
    Shape shape = x.shape;
    switch (below(use_control_flow() ? 10 : 9)) {
      case 0:
      case 1: add_result(make_op_call(pick(unary), {input}), shape); return 1;
      case 2:
      case 3: {
        Expr partner = broadcast_partner(shape);
        Expr lhs = input, rhs = partner;
        if (chance(0.3)) std::swap(lhs, rhs);
        add_result(make_op_call(pick(binary), {lhs, rhs}), shape);
        return 1;
      }
      case 4: {
        if (shape.empty()) shape = {1}, input = make_op_call("reshape", {input}, {{"newshape", Shape{1}}});
        int64_t units = 1 + int64_t(below(5));
        Shape weight_shape = {units, shape.back()};
        Expr weight = chance(0.3) ? Expr(random_constant(weight_shape)) : Expr(new_param("w", weight_shape));
        shape.back() = units;
        add_result(make_op_call("nn.dense", {input, weight}), shape);
        return 1;
      }
      case 5: {
        int64_t count = std::accumulate(shape.begin(), shape.end(), int64_t(1), std::multiplies<>());
        Shape target = {count};
        for (int64_t d = 2; d <= count; ++d)
          if (count % d == 0 && chance(0.5)) target = {d, count / d};
        Shape newshape = target;
        if (newshape.size() == 2 && chance(0.5)) newshape[below(2)] = -1;
        add_result(make_op_call("reshape", {input}, {{"newshape", newshape}}), target);
        return 1;
      }
      case 6: {
        Shape axes(shape.size());
        std::iota(axes.begin(), axes.end(), 0);
        std::shuffle(axes.begin(), axes.end(), rng_);
        Shape permuted;
        for (int64_t a : axes) permuted.push_back(shape[size_t(a)]);
        add_result(make_op_call("transpose", {input}, {{"axes", axes}}), permuted);
        return 1;
      }
      case 7: {
        if (shape.empty()) return 0;
        int64_t axis = int64_t(below(shape.size()));
        bool keepdims = chance(0.5);
        Shape reduced = shape;
        if (keepdims) reduced[size_t(axis)] = 1;
        else reduced.erase(reduced.begin() + axis);
        add_result(make_op_call("sum", {input}, {{"axis", Shape{axis}}, {"keepdims", keepdims}}), reduced);
        return 1;
      }
      case 8: {
        if (chance(0.5)) {
          if (shape.empty()) return 0;
          add_result(make_op_call("nn.softmax", {input}), shape);
          return 1;
        }
        const Value& other = pool_[below(pool_.size())];
        bool first = chance(0.5);
        Expr tuple = make_tuple({input, other.expr});
        add_value(make_tuple_get_item(tuple, first ? 0 : 1), first ? shape : other.shape);
        return 2;
      }
      default: {
        if (!flag_) flag_ = make_var("flag", scalar_type(DType::kBool)), params_.push_back(flag_);
        Expr then_branch = make_op_call(pick(unary), {input});
        Expr else_branch = make_op_call(pick(binary), {input, make_scalar_f32(random_scalar())});
        add_result(make_if(flag_, then_branch, else_branch), shape);
        return 3;
      }
    }
  }

  bool use_control_flow() const { return options_.use_control_flow; }

  // The last value, plus up to two other unconsumed values as a tuple.
  Expr make_result() {
    Value& last = pool_.back();
    std::vector<Expr> fields{last.expr};
    std::vector<Type> types{tensor_type(last.shape, DType::kFloat32)};
    for (size_t i = pool_.size() - 1; i-- > 0 && fields.size() < 3;)
      if (!pool_[i].consumed && !is<VarNode>(pool_[i].expr)) {
        fields.push_back(pool_[i].expr);
        types.push_back(tensor_type(pool_[i].shape, DType::kFloat32));
      }
    if (fields.size() == 1) {
      result_type_ = types[0];
      return fields[0];
    }
    result_type_ = tuple_type(types);
    return make_tuple(fields);
  }

  std::mt19937_64 rng_;
  const RandomModuleOptions& options_;
  std::vector<Var> params_;
  Var flag_;
  std::vector<Value> pool_;
  std::vector<std::pair<Var, Expr>> lets_;
  Type result_type_;
};

}  // namespace

IRModule random_module(uint64_t seed, const RandomModuleOptions& options) { return Generator(seed, options).run(); }

}  // namespace switchyard
