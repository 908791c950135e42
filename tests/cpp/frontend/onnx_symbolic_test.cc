// Symbolic dimensions through the ONNX importer (issue 37, step 2): a
// dim_param becomes a dimension variable (one per name across inputs), an
// unknown dimension a fresh one; --input-shape's ?, names and bounds; a
// shape subgraph over a symbolic batch folds to a symbolic reshape; nodes
// that cannot take a symbolic dimension refuse by name. (Specialising an
// import: tests/python/test_onnx_symbolic.py, where importer and passes meet.)
#include <gtest/gtest.h>

#include "frontend/onnx/onnx_importer.h"
#include "frontend/onnx/sy_onnx.pb.h"
#include "ir/functor.h"
#include "support/error.h"

namespace switchyard {
namespace onnx_symbolic_test {

using sy_onnx::TensorProto;

// A dimension: a number, a dim_param name, or "" for an unknown one.
struct OnnxDim {
  OnnxDim(int64_t v) : value(v) {}  // NOLINT(google-explicit-constructor)
  OnnxDim(const char* p) : param(p) {}  // NOLINT(google-explicit-constructor)
  int64_t value = -1;
  std::string param;
};

void add_input(sy_onnx::GraphProto* graph, const std::string& name, const std::vector<OnnxDim>& dims) {
  auto* info = graph->add_input();
  info->set_name(name);
  auto* tensor = info->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(TensorProto::FLOAT);
  auto* shape = tensor->mutable_shape();
  for (const OnnxDim& d : dims) {
    auto* dim = shape->add_dim();
    if (d.value >= 0) dim->set_dim_value(d.value);
    else if (!d.param.empty()) dim->set_dim_param(d.param);
  }
}

sy_onnx::NodeProto* add_node(sy_onnx::GraphProto* graph, const std::string& op, const std::string& name,
                             const std::vector<std::string>& inputs, const std::string& output) {
  auto* node = graph->add_node();
  node->set_op_type(op), node->set_name(name);
  for (const std::string& i : inputs) node->add_input(i);
  node->add_output(output);
  return node;
}

void add_int64s(sy_onnx::GraphProto* graph, const std::string& name, const std::vector<int64_t>& values, bool scalar = false) {
  TensorProto* t = graph->add_initializer();
  t->set_name(name);
  t->set_data_type(TensorProto::INT64);
  if (!scalar) t->add_dims(int64_t(values.size()));
  for (int64_t v : values) t->add_int64_data(v);
}

sy_onnx::ModelProto model_of(std::vector<std::string> outputs) {
  sy_onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(13);
  for (const std::string& o : outputs) model.mutable_graph()->add_output()->set_name(o);
  return model;
}

IRModule import(const sy_onnx::ModelProto& model, const OnnxImportOptions& options = {}) {
  return import_onnx_bytes(model.SerializeAsString(), "sym.onnx", ".", options);
}

std::string signature(const IRModule& mod) {
  const Function& main = mod.lookup("main");
  std::string text;
  for (const Var& p : main->params) text += p->name_hint + ": " + type_to_string(p->checked_type()) + "; ";
  return text + "-> " + type_to_string(main->ret_type);
}

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.message();
  }
  return "(no error)";
}

// y = a + b, both (batch, 4), and z = relu(c) of an unknown first dimension.
sy_onnx::ModelProto two_inputs_sharing_batch() {
  sy_onnx::ModelProto model = model_of({"y", "z"});
  auto* g = model.mutable_graph();
  add_input(g, "a", {"batch", 4});
  add_input(g, "b", {"batch", 4});
  add_input(g, "c", {"", 4});
  add_node(g, "Add", "add", {"a", "b"}, "y");
  add_node(g, "Relu", "relu", {"c"}, "z");
  return model;
}

// x (batch, 3, 4) viewed as (batch, 12) through Shape -> Gather -> Unsqueeze
// -> Concat -> Reshape, as torch.onnx.export writes x.view(x.size(0), -1).
sy_onnx::ModelProto view_batch_minus_one() {
  sy_onnx::ModelProto model = model_of({"y"});
  auto* g = model.mutable_graph();
  add_input(g, "x", {"batch", 3, 4});
  add_int64s(g, "zero", {0}, true);
  add_int64s(g, "axes", {0});
  add_int64s(g, "minus_one", {-1});
  add_node(g, "Shape", "shape", {"x"}, "s");
  add_node(g, "Gather", "gather", {"s", "zero"}, "n")->add_attribute()->set_name("axis");
  g->mutable_node(1)->mutable_attribute(0)->set_type(sy_onnx::AttributeProto::INT);
  g->mutable_node(1)->mutable_attribute(0)->set_i(0);
  add_node(g, "Unsqueeze", "unsqueeze", {"n", "axes"}, "n1");
  auto* concat = add_node(g, "Concat", "concat", {"n1", "minus_one"}, "target");
  auto* axis = concat->add_attribute();
  axis->set_name("axis"), axis->set_type(sy_onnx::AttributeProto::INT), axis->set_i(0);
  add_node(g, "Reshape", "reshape", {"x", "target"}, "y");
  return model;
}

TEST(OnnxSymbolic, ADimParamIsOneVariableAcrossInputsAndAnUnknownDimensionGetsAFreshName) {
  EXPECT_EQ(signature(import(two_inputs_sharing_batch())),
            "a: Tensor[(batch, 4), float32]; b: Tensor[(batch, 4), float32]; c: Tensor[(c_d0, 4), float32]; "
            "-> (Tensor[(batch, 4), float32], Tensor[(c_d0, 4), float32])");
}

TEST(OnnxSymbolic, InputShapesKeepNameBoundOrFixDimensions) {
  OnnxImportOptions options;
  options.input_shapes["a"] = parse_shape_text("?<=8x4");
  options.input_shapes["c"] = parse_shape_text("m,4");
  // One name, one variable: b's batch takes the bound a's gives.
  EXPECT_EQ(signature(import(two_inputs_sharing_batch(), options)),
            "a: Tensor[(batch<=8, 4), float32]; b: Tensor[(batch<=8, 4), float32]; c: Tensor[(m, 4), float32]; "
            "-> (Tensor[(batch<=8, 4), float32], Tensor[(m, 4), float32])");
  options.input_shapes = {{"a", parse_shape_text("2x4")}, {"b", parse_shape_text("2x4")}, {"c", parse_shape_text("5x4")}};
  EXPECT_EQ(signature(import(two_inputs_sharing_batch(), options)),
            "a: Tensor[(2, 4), float32]; b: Tensor[(2, 4), float32]; c: Tensor[(5, 4), float32]; "
            "-> (Tensor[(2, 4), float32], Tensor[(5, 4), float32])");
}

TEST(OnnxSymbolic, InputShapesThatContradictTheModelOrEachOtherAreRefused) {
  OnnxImportOptions options;
  options.input_shapes = {{"a", parse_shape_text("batch<=8x4")}, {"b", parse_shape_text("batch<=16x4")}};
  EXPECT_EQ(error_of([&] { import(two_inputs_sharing_batch(), options); }),
            "dimension 'batch' is bounded by 8 in --input-shape a but by 16 in --input-shape b");
  options.input_shapes = {{"a", parse_shape_text("?x?")}};
  EXPECT_EQ(error_of([&] { import(two_inputs_sharing_batch(), options); }),
            "--input-shape a: dimension 1 is 4 in the model, so it cannot be symbolic");
}

TEST(OnnxSymbolic, ShapeTextTakesQuestionMarksNamesAndBounds) {
  std::vector<InputDim> dims = parse_shape_text("?x3xn<=32x?<=4");
  ASSERT_EQ(dims.size(), 4u);
  EXPECT_EQ(dims[0], InputDim{});
  EXPECT_EQ(dims[1], InputDim{.value = 3});
  EXPECT_EQ(dims[2], (InputDim{.name = "n", .bound = 32}));
  EXPECT_EQ(dims[3], InputDim{.bound = 4});
  EXPECT_EQ(input_dims_to_string(dims), "?x3xn<=32x?<=4");
  EXPECT_EQ(input_dims_to_string(parse_shape_text("max_batch,3")), "max_batch,3");
}

TEST(OnnxSymbolic, AShapeSubgraphOverASymbolicBatchFoldsToASymbolicReshape) {
  IRModule mod = import(view_batch_minus_one());
  EXPECT_EQ(signature(mod), "x: Tensor[(batch, 3, 4), float32]; -> Tensor[(batch, 12), float32]");
  std::vector<std::string> calls;
  post_order_visit(mod.lookup("main")->body, [&](const Expr& e) {
    if (const CallNode* c = as<CallNode>(e)) calls.push_back(as<OpNode>(c->op)->name + "@" + e->span().to_string());
  });
  EXPECT_EQ(calls, (std::vector<std::string>{"reshape@reshape"}));
}

TEST(OnnxSymbolic, ANodeThatCannotTakeASymbolicDimensionRefusesByName) {
  sy_onnx::ModelProto model = model_of({"y"});
  auto* g = model.mutable_graph();
  add_input(g, "x", {"batch", 4});
  add_node(g, "EyeLike", "eye", {"x"}, "y");
  EXPECT_EQ(error_of([&] { import(model); }),
            "node 'eye' (EyeLike): input 0 has symbolic dimension 'batch'; EyeLike with symbolic shapes is not "
            "supported yet (fix the dimension with --input-shape)");
}

TEST(OnnxSymbolic, AConvolutionTakesASymbolicBatchButNotASymbolicHeight) {
  for (const char* height : {"", "h"}) {
    sy_onnx::ModelProto model = model_of({"y"});
    auto* g = model.mutable_graph();
    if (*height) add_input(g, "x", {"batch", 1, height, 4});
    else add_input(g, "x", {"batch", 1, 4, 4});
    TensorProto* w = g->add_initializer();
    w->set_name("w"), w->set_data_type(TensorProto::FLOAT);
    for (int64_t d : {2, 1, 3, 3}) w->add_dims(d);
    for (int i = 0; i < 18; ++i) w->add_float_data(1.0f);
    add_node(g, "Conv", "conv", {"x", "w"}, "y");
    if (!*height) {
      EXPECT_EQ(signature(import(model)), "x: Tensor[(batch, 1, 4, 4), float32]; -> Tensor[(batch, 2, 2, 2), float32]");
      continue;
    }
    EXPECT_EQ(error_of([&] { import(model); }),
              "node 'conv' (Conv): the input (batch, 1, h, 4) has symbolic dimension 'h' (dimension 2), which Conv "
              "cannot take yet (fix it with --input-shape)");
  }
}

TEST(OnnxSymbolic, ASliceCutsStaticAxesOnly) {
  for (int64_t axis : {1, 0}) {
    sy_onnx::ModelProto model = model_of({"y"});
    auto* g = model.mutable_graph();
    add_input(g, "x", {"batch", 4});
    add_int64s(g, "starts", {0}), add_int64s(g, "ends", {2}), add_int64s(g, "axes", {axis});
    add_node(g, "Slice", "cut", {"x", "starts", "ends", "axes"}, "y");
    if (axis == 1) {
      EXPECT_EQ(signature(import(model)), "x: Tensor[(batch, 4), float32]; -> Tensor[(batch, 2), float32]");
      continue;
    }
    EXPECT_EQ(error_of([&] { import(model); }),
              "node 'cut' (Slice): slices symbolic dimension 'batch' (axis 0); Slice along a symbolic axis is not "
              "supported yet (fix it with --input-shape)");
  }
}

TEST(OnnxSymbolic, AShapeUsedAsDataIsRefusedNamingItsDimensions) {
  sy_onnx::ModelProto model = model_of({"y"});
  auto* g = model.mutable_graph();
  add_input(g, "x", {"batch", 4});
  add_node(g, "Shape", "shape", {"x"}, "s");
  auto* cast = add_node(g, "Cast", "to_float", {"s"}, "y");
  auto* to = cast->add_attribute();
  to->set_name("to"), to->set_type(sy_onnx::AttributeProto::INT), to->set_i(TensorProto::FLOAT);
  EXPECT_EQ(error_of([&] { import(model); }),
            "node 'to_float' (Cast): input 0 ('s') is a shape computed from symbolic dimensions (batch, 4), known only "
            "at run time; Cast with symbolic shapes is not supported yet (fix the dimensions with --input-shape)");
}

}  // namespace onnx_symbolic_test
}  // namespace switchyard
