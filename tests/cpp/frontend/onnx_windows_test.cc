// ONNX convolutions and pools over three spatial axes (N, C, D, H, W),
// which the importer writes as the IR's 2-D window operators: one-node
// models built in memory, run by the interpreter against direct loops over
// the 3-D window written here, and the refusals of attributes that do not
// fit the input.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <random>

#include "frontend/onnx/model_reader.h"
#include "frontend/onnx/onnx_importer.h"
#include "interp/evaluate.h"
#include "ir/functor.h"
#include "support/error.h"

namespace switchyard {
namespace onnx_windows_test {

using sy_onnx::AttributeProto;
using sy_onnx::TensorProto;
using Dims = std::vector<int64_t>;

struct Node {
  std::string op_type;
  std::vector<std::pair<std::string, Dims>> ints;  // INTS attributes
  std::vector<std::pair<std::string, int64_t>> int_attrs;
};

void add_float_info(sy_onnx::ValueInfoProto* info, const std::string& name, const Dims& dims) {
  info->set_name(name);
  auto* tensor = info->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(TensorProto::FLOAT);
  for (int64_t d : dims) tensor->mutable_shape()->add_dim()->set_dim_value(d);
}

// A model of one node "node" reading input x and the float initializers.
std::string one_node_model(const Node& spec, const Dims& x_shape,
                           const std::vector<std::pair<std::string, NDArray>>& initializers) {
  sy_onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(13);
  auto* graph = model.mutable_graph();
  add_float_info(graph->add_input(), "x", x_shape);
  sy_onnx::ValueInfoProto* y = graph->add_output();
  y->set_name("y");
  y->mutable_type()->mutable_tensor_type()->set_elem_type(TensorProto::FLOAT);  // its shape is the importer's
  auto* node = graph->add_node();
  node->set_op_type(spec.op_type), node->set_name("node");
  node->add_input("x"), node->add_output("y");
  for (const auto& [name, value] : initializers) {
    TensorProto* t = graph->add_initializer();
    t->set_name(name), t->set_data_type(TensorProto::FLOAT);
    for (int64_t d : value.shape()) t->add_dims(d);
    for (int64_t i = 0; i < value.numel(); ++i) t->add_float_data(value.as<float>()[i]);
    node->add_input(name);
  }
  for (const auto& [name, values] : spec.ints) {
    AttributeProto* a = node->add_attribute();
    a->set_name(name), a->set_type(AttributeProto::INTS);
    for (int64_t v : values) a->add_ints(v);
  }
  for (const auto& [name, value] : spec.int_attrs) {
    AttributeProto* a = node->add_attribute();
    a->set_name(name), a->set_type(AttributeProto::INT), a->set_i(value);
  }
  return model.SerializeAsString();
}

NDArray random_array(const Dims& shape, unsigned seed) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<float> uniform(-1, 1);
  NDArray a(DType::kFloat32, shape);
  for (int64_t i = 0; i < a.numel(); ++i) a.as<float>()[i] = uniform(generator);
  return a;
}

NDArray run(const std::string& model, const NDArray& x) {
  IRModule mod = import_onnx_bytes(model, "windows.onnx", ".");
  return evaluate(mod, {{"x", x}}).tensor;
}

int64_t count_calls(const std::string& model, const std::string& op) {
  IRModule mod = import_onnx_bytes(model, "windows.onnx", ".");
  int64_t count = 0;
  post_order_visit(mod.lookup("main")->body, [&](const Expr& e) {
    if (const CallNode* call = as<CallNode>(e))
      if (const OpNode* callee = as<OpNode>(call->op); callee && callee->name == op) ++count;
  });
  return count;
}

// One 3-D window: per axis kernel, stride, dilation and padding.
struct Window3d {
  Dims kernel, strides, dilations, pads;  // pads: the three begins, then the three ends
  bool ceil_mode = false;
  int64_t out(size_t axis, int64_t input) const {
    int64_t span = input + pads[axis] + pads[axis + 3] - dilations[axis] * (kernel[axis] - 1) - 1;
    return (ceil_mode ? (span + strides[axis] - 1) / strides[axis] : span / strides[axis]) + 1;
  }
};

// Calls `tap(n, c, d, h, w, k)` for every tap of every output position of
// x's shape under `w`, in the output's order (k: the tap's index in the
// kernel; d, h, w may lie in the padding), then `done(c)` after each
// position's taps.
void sweep(const Dims& x, int64_t channels_out, const Window3d& w,
           const std::function<void(int64_t n, int64_t c, int64_t d, int64_t h, int64_t wi, int64_t k)>& tap,
           const std::function<void(int64_t c)>& done, Dims& out_shape) {
  out_shape = {x[0], channels_out, w.out(0, x[2]), w.out(1, x[3]), w.out(2, x[4])};
  for (int64_t n = 0; n < x[0]; ++n)
    for (int64_t c = 0; c < channels_out; ++c)
      for (int64_t od = 0; od < out_shape[2]; ++od)
        for (int64_t oh = 0; oh < out_shape[3]; ++oh)
          for (int64_t ow = 0; ow < out_shape[4]; ++ow) {
            for (int64_t kd = 0, k = 0; kd < w.kernel[0]; ++kd)
              for (int64_t kh = 0; kh < w.kernel[1]; ++kh)
                for (int64_t kw = 0; kw < w.kernel[2]; ++kw, ++k)
                  tap(n, c, od * w.strides[0] - w.pads[0] + kd * w.dilations[0],
                      oh * w.strides[1] - w.pads[1] + kh * w.dilations[1],
                      ow * w.strides[2] - w.pads[2] + kw * w.dilations[2], k);
            done(c);
          }
}

void expect_near_all(const NDArray& got, const Dims& shape, const std::vector<float>& want) {
  ASSERT_EQ(got.shape(), shape);
  ASSERT_EQ(got.numel(), int64_t(want.size()));
  for (int64_t i = 0; i < got.numel(); ++i) EXPECT_NEAR(got.as<float>()[i], want[size_t(i)], 1e-4) << "element " << i;
}

TEST(OnnxWindows3d, GroupedStridedDilatedConvolutionMatchesDirectLoops) {
  Dims x_shape{2, 4, 5, 6, 7};
  Window3d window{{3, 2, 3}, {2, 1, 2}, {1, 2, 1}, {1, 0, 1, 0, 1, 2}};
  NDArray x = random_array(x_shape, 1), weight = random_array({6, 2, 3, 2, 3}, 2), bias = random_array({6}, 3);
  Node node{"Conv", {{"strides", window.strides}, {"dilations", window.dilations}, {"pads", window.pads}}, {{"group", 2}}};
  std::string model = one_node_model(node, x_shape, {{"w", weight}, {"b", bias}});
  Dims out_shape;
  std::vector<float> want;
  double sum = 0;
  sweep(
      x_shape, 6, window,
      [&](int64_t batch, int64_t o, int64_t d, int64_t h, int64_t w, int64_t k) {
        if (d < 0 || d >= 5 || h < 0 || h >= 6 || w < 0 || w >= 7) return;
        for (int64_t c = 0; c < 2; ++c) {
          int64_t channel = (o / 3) * 2 + c;
          sum += double(x.as<float>()[(((batch * 4 + channel) * 5 + d) * 6 + h) * 7 + w]) *
                 weight.as<float>()[(o * 2 + c) * 18 + k];
        }
      },
      [&](int64_t o) {
        want.push_back(float(sum + bias.as<float>()[o]));
        sum = 0;
      },
      out_shape);
  ASSERT_EQ(out_shape, (Dims{2, 6, 2, 5, 4}));
  expect_near_all(run(model, x), out_shape, want);
  EXPECT_EQ(count_calls(model, "nn.conv2d"), 1) << "one 2-D convolution over the gathered depth taps";
}

// Max and average (with and without the padding counted, with ceil_mode's
// extra windows) over a window padded on every axis.
TEST(OnnxWindows3d, PoolsMatchDirectLoops) {
  Dims x_shape{1, 3, 5, 6, 4};
  Window3d window{{2, 3, 2}, {2, 2, 1}, {1, 1, 1}, {1, 1, 0, 0, 1, 1}, true};
  NDArray x = random_array(x_shape, 4);
  for (const char* op : {"MaxPool", "AveragePool"})
    for (int64_t include_pad : {0, 1}) {
      SCOPED_TRACE(std::string(op) + " count_include_pad=" + std::to_string(include_pad));
      bool average = std::string(op) == "AveragePool";
      if (!average && include_pad) continue;
      Node node{op, {{"kernel_shape", window.kernel}, {"strides", window.strides}, {"pads", window.pads}},
                {{"ceil_mode", 1}}};
      if (average) node.int_attrs.push_back({"count_include_pad", include_pad});
      Dims out_shape;
      std::vector<float> want;
      double sum = 0, best = -std::numeric_limits<double>::infinity();
      int64_t real = 0, padded = 0;
      sweep(
          x_shape, 3, window,
          [&](int64_t, int64_t c, int64_t d, int64_t h, int64_t w, int64_t) {
            // The attribute padding counts with count_include_pad; ceil_mode's overhang never does.
            if (d < 5 + window.pads[3] && h < 6 + window.pads[4] && w < 4 + window.pads[5]) ++padded;
            if (d < 0 || d >= 5 || h < 0 || h >= 6 || w < 0 || w >= 4) return;
            double v = x.as<float>()[((c * 5 + d) * 6 + h) * 4 + w];
            sum += v, best = std::max(best, v), ++real;
          },
          [&](int64_t) {
            want.push_back(float(average ? sum / double(include_pad ? padded : real) : best));
            sum = 0, best = -std::numeric_limits<double>::infinity(), real = padded = 0;
          },
          out_shape);
      ASSERT_EQ(out_shape, (Dims{1, 3, 3, 4, 4}));
      expect_near_all(run(one_node_model(node, x_shape, {}), x), out_shape, want);
    }
}

std::string import_error(const std::string& model) {
  try {
    import_onnx_bytes(model, "windows.onnx", ".");
  } catch (const Error& e) {
    return e.message();
  }
  return "(imported)";
}

TEST(OnnxWindows3d, AttributesThatDoNotFitTheInputAreRefusedNamingTheNode) {
  Dims x_shape{1, 2, 4, 4, 4};
  std::string flat = import_error(one_node_model({"MaxPool", {{"kernel_shape", {2, 2}}}}, x_shape, {}));
  EXPECT_NE(flat.find("node 'node' (MaxPool): kernel_shape (2, 2) has 2 entries, but the input has 3 spatial axes"),
            std::string::npos)
      << flat;
  std::string strides = import_error(
      one_node_model({"AveragePool", {{"kernel_shape", {2, 2, 2}}, {"strides", {1, 1}}}}, x_shape, {}));
  EXPECT_NE(strides.find("node 'node' (AveragePool): strides, dilations and pads must have one entry"),
            std::string::npos)
      << strides;
  std::string weight = import_error(one_node_model({"Conv"}, x_shape, {{"w", random_array({3, 2, 2, 2}, 5)}}));
  EXPECT_NE(weight.find("node 'node' (Conv): the weight's rank 4 is not the input's 5"), std::string::npos) << weight;
  std::string kernel = import_error(
      one_node_model({"Conv", {{"kernel_shape", {2, 2, 3}}}}, x_shape, {{"w", random_array({3, 2, 2, 2, 2}, 6)}}));
  EXPECT_NE(kernel.find("kernel_shape (2, 2, 3) does not match the weight's kernel (2, 2, 2)"), std::string::npos)
      << kernel;
  std::string groups = import_error(
      one_node_model({"Conv", {}, {{"group", 2}}}, x_shape, {{"w", random_array({3, 1, 2, 2, 2}, 7)}}));
  EXPECT_NE(groups.find("node 'node' (Conv): the input (1, 2, 4, 4, 4) and weight (3, 1, 2, 2, 2) do not fit group=2"),
            std::string::npos)
      << groups;
  std::string four = import_error(one_node_model({"MaxPool", {{"kernel_shape", {2, 2, 2, 2}}}}, {1, 1, 3, 3, 3, 3}, {}));
  EXPECT_NE(four.find("node 'node' (MaxPool): 4-D windows are not supported (only 1-D, 2-D and 3-D)"),
            std::string::npos)
      << four;
}

}  // namespace onnx_windows_test
}  // namespace switchyard
