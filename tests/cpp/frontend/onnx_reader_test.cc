// The ONNX reader and importer on models built in memory with the generated
// protobuf classes: weights kept outside the parsed message and copied into
// constants bit for bit (raw_data, typed fields), spans from node names,
// folding of shape computations, and the shape-text parser.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>

#include "frontend/onnx/model_reader.h"
#include "frontend/onnx/onnx_importer.h"
#include "ir/functor.h"
#include "support/error.h"

namespace switchyard {
namespace onnx_reader_test {

using sy_onnx::TensorProto;

void add_value_info(sy_onnx::ValueInfoProto* info, const std::string& name, std::vector<int64_t> dims) {
  info->set_name(name);
  auto* tensor = info->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(TensorProto::FLOAT);
  for (int64_t d : dims) tensor->mutable_shape()->add_dim()->set_dim_value(d);
}

// y = x + w with w (2, 3) as raw_data, then * v with v as float_data.
sy_onnx::ModelProto add_mul_model(const std::vector<float>& w, const std::vector<float>& v) {
  sy_onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(13);
  auto* graph = model.mutable_graph();
  add_value_info(graph->add_input(), "x", {2, 3});
  add_value_info(graph->add_output(), "y", {2, 3});
  TensorProto* wt = graph->add_initializer();
  wt->set_name("w");
  wt->set_data_type(TensorProto::FLOAT);
  wt->add_dims(2), wt->add_dims(3);
  wt->set_raw_data(std::string(reinterpret_cast<const char*>(w.data()), w.size() * sizeof(float)));
  TensorProto* vt = graph->add_initializer();
  vt->set_name("v");
  vt->set_data_type(TensorProto::FLOAT);
  vt->add_dims(3);
  for (float f : v) vt->add_float_data(f);
  auto* add = graph->add_node();
  add->set_op_type("Add"), add->set_name("block/add");
  add->add_input("x"), add->add_input("w"), add->add_output("s");
  auto* mul = graph->add_node();
  mul->set_op_type("Mul"), mul->set_name("block/mul");
  mul->add_input("s"), mul->add_input("v"), mul->add_output("y");
  return model;
}

TEST(OnnxReader, KeepsRawDataOutsideTheParsedMessage) {
  std::vector<float> w{1, 2, 3, 4, 5, 6}, v{0.5f, -1, 2};
  std::string bytes = add_mul_model(w, v).SerializeAsString();
  OnnxModelFile file = read_onnx_bytes(bytes, "mem.onnx");
  ASSERT_EQ(file.initializer_raw_data.size(), 2u);
  EXPECT_FALSE(file.model.graph().initializer(0).has_raw_data());
  ASSERT_EQ(file.initializer_raw_data[0].size(), w.size() * sizeof(float));
  EXPECT_EQ(std::memcmp(file.initializer_raw_data[0].data(), w.data(), file.initializer_raw_data[0].size()), 0);
  EXPECT_TRUE(file.initializer_raw_data[1].empty()) << "typed data stays in the message";
  EXPECT_EQ(file.model.graph().initializer(1).float_data_size(), 3);
  // The views point into the caller's bytes: nothing was copied.
  EXPECT_GE(file.initializer_raw_data[0].data(), bytes.data());
  EXPECT_LT(file.initializer_raw_data[0].data(), bytes.data() + bytes.size());
}

TEST(OnnxImporter, ConstantsCarryTheWeightsAndCallsTheNodeNames) {
  std::vector<float> w{1, 2, 3, 4, 5, 6}, v{0.5f, -1, 2};
  IRModule mod = import_onnx_bytes(add_mul_model(w, v).SerializeAsString(), "mem.onnx", ".");
  const Function& main = mod.lookup("main");
  ASSERT_EQ(main->params.size(), 1u);
  EXPECT_EQ(main->params[0]->name_hint, "x");
  std::vector<std::string> spans;
  std::vector<float> weights;
  post_order_visit(main->body, [&](const Expr& e) {
    if (is<CallNode>(e)) spans.push_back(e->span().to_string());
    if (const ConstantNode* c = as<ConstantNode>(e))
      weights.insert(weights.end(), c->data.as<float>(), c->data.as<float>() + c->data.numel());
  });
  EXPECT_EQ(spans, (std::vector<std::string>{"block/add", "block/mul"}));
  EXPECT_EQ(weights, (std::vector<float>{1, 2, 3, 4, 5, 6, 0.5f, -1, 2}));
}

// With weights_in_place (the command line's choice) a raw_data weight is
// read inside the mapped file until its aligned data is asked for; without
// it (the Python API's), it is copied at import. Both carry the same values.
TEST(OnnxImporter, WeightsInPlaceAreReadFromTheFileUntilTheirDataIsNeeded) {
  std::vector<float> w{1, 2, 3, 4, 5, 6}, v{0.5f, -1, 2};
  std::string path = ::testing::TempDir() + "weights_in_place_" + std::to_string(getpid()) + ".onnx";
  {
    std::ofstream out(path, std::ios::binary);
    out << add_mul_model(w, v).SerializeAsString();
  }
  for (bool in_place : {true, false}) {
    SCOPED_TRACE(in_place ? "in place" : "copied");
    OnnxImportOptions options;
    options.weights_in_place = in_place;
    IRModule mod = import_onnx_file(path, options);
    const ConstantNode* weight = nullptr;
    post_order_visit(mod.lookup("main")->body, [&](const Expr& e) {
      if (const ConstantNode* c = as<ConstantNode>(e); c && c->data.numel() == 6) weight = c;
    });
    ASSERT_NE(weight, nullptr);
    const void* before = weight->data.bytes();
    const float* data = weight->data.as<float>();
    EXPECT_EQ(before != data, in_place);
    EXPECT_EQ(std::vector<float>(data, data + 6), w);
  }
  std::remove(path.c_str());
}

TEST(OnnxImporter, TruncatedBytesAreAParseError) {
  std::string bytes = add_mul_model({1, 2, 3, 4, 5, 6}, {1, 1, 1}).SerializeAsString();
  for (size_t cut : {size_t(5), bytes.size() / 2, bytes.size() - 3}) {
    try {
      import_onnx_bytes(bytes.substr(0, cut), "cut.onnx", ".");
      ADD_FAILURE() << "a model cut at " << cut << " bytes was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kParse);
      EXPECT_NE(e.message().find("cut.onnx"), std::string::npos) << e.message();
    }
  }
}

TEST(OnnxImporter, ShapeTextParses) {
  auto fixed = [](std::vector<int64_t> dims) {
    std::vector<InputDim> out;
    for (int64_t d : dims) out.push_back({.value = d});
    return out;
  };
  EXPECT_EQ(parse_shape_text("1x3x224x224"), fixed({1, 3, 224, 224}));
  EXPECT_EQ(parse_shape_text("7"), fixed({7}));
  for (const char* bad : {"", "1x", "x2", "1x-3", "2x4four", "1xx2", "n<=x2", "n<=-1x2", "?<x2", "1,,2", "n-1,2"}) {
    EXPECT_THROW(parse_shape_text(bad), Error) << bad;
  }
}

}  // namespace onnx_reader_test
}  // namespace switchyard
