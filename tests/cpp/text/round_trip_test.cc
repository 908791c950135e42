// parse(print(m)) is structurally equal to m, devices, constants and
// attributes included, and print(parse(print(m))) == print(m): for the shared
// examples, hand-built modules of every node kind, and random modules.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <random>

#include "ir/structural_equal.h"
#include "op/registry.h"
#include "support/error.h"
#include "support/random_module.h"
#include "support/test_paths.h"
#include "text/parser.h"
#include "text/printer.h"

namespace switchyard {
namespace round_trip_test {

const VirtualDevice* cpu(int id) { return VirtualDevice::for_device(DeviceKind::kCPU, id); }

void expect_round_trip(const IRModule& m, const std::string& what) {
  std::string text = print_module(m);
  IRModule parsed;
  try {
    parsed = parse_module(text, what);
  } catch (const Error& e) {
    FAIL() << what << ": " << e.render() << "\n" << text;
  }
  std::optional<std::string> diff = structural_diff(m, parsed, {.compare_spans = false});
  EXPECT_FALSE(diff.has_value()) << what << ": " << diff.value_or("") << "\n" << text;
  EXPECT_EQ(print_module(parsed), text) << what;
}

TEST(RoundTrip, SharedExamples) {
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(testing::example_models_dir())) {
    if (entry.path().extension() != ".sy") continue;
    ++count;
    IRModule m = parse_file(entry.path().string());
    expect_round_trip(m, entry.path().filename().string());
    // fmt is stable: the canonical text of the canonical text is itself.
    std::string canonical = print_module(m);
    EXPECT_EQ(print_module(parse_module(canonical, "again.sy")), canonical);
  }
  EXPECT_GE(count, 3);
}

// An imported model's output names (issue 39): any characters, quoted.
TEST(RoundTrip, AListOfStringsAsAFunctionAttribute) {
  Var x = make_var("x", tensor_type({4}, DType::kFloat32));
  std::vector<std::string> names = {"logits:0", "a \"quoted\" \\ name", "/fc/Gemm_output_0"};
  IRModule m;
  m.add("main", make_function({x}, make_tuple({make_op_call("exp", {x}), x, x}), Type(),
                              make_attrs({{"output_names", names}})));
  expect_round_trip(m, "names.sy");
  EXPECT_NE(print_module(m).find("output_names=[\"logits:0\", \"a \\\"quoted\\\" \\\\ name\", "
                                 "\"/fc/Gemm_output_0\"]"),
            std::string::npos)
      << print_module(m);
  try {
    parse_module("def @main(%x: Tensor[(4), float32], output_names=[\"a\", 2]) {\n  %x\n}\n", "mixed.sy");
    ADD_FAILURE() << "parsed a list of a string and a number";
  } catch (const Error& e) {
    EXPECT_EQ(e.message(), "expected a string in the list, found '2'");
  }
}

TEST(RoundTrip, PlannedExampleIsAlreadyCanonical) {
  std::string path = testing::example_models_dir() + "/mlp_two_devices.planned.sy";
  std::string text = testing::read_file(path);
  std::string body = text.substr(text.find("def @main"));
  EXPECT_EQ(print_module(parse_file(path)), body);
}

TEST(RoundTrip, EveryNodeKindWithDevicesEverywhere) {
  const VirtualDevice* full = VirtualDevice::parse("device=\"cuda:0\", target=\"cuda -arch=sm_90\", scope=\"shared\"");
  const VirtualDevice* kind_only = VirtualDevice::parse("cpu");
  Type t = tensor_type({2, 3}, DType::kFloat32);
  Var x = make_var("x", t, {.virtual_device = cpu(0)});
  Var flag = make_var("flag", scalar_type(DType::kBool), {.virtual_device = kind_only});
  Var p = make_var("p", t);
  Function fused = make_function({p}, make_op_call("nn.relu", {p}), t,
                                 make_attrs({{"Primitive", int64_t(1)}, {"Name", std::string("fused \"relu\"")},
                                             {"Scale", 0.1}, {"Shape", std::vector<int64_t>{2, 3}}}),
                                 {.virtual_device = cpu(1)});
  Call applied = make_call(fused, {x}, Attrs(), {.virtual_device = cpu(1)});
  Var v = make_var("v", t, {.virtual_device = full});
  Var w = make_var("w");
  Tuple pair = make_tuple({applied, make_scalar_f32(2, {.virtual_device = cpu(0)})}, {.virtual_device = cpu(0)});
  Expr chosen = make_if(flag, make_tuple_get_item(pair, 0, {.virtual_device = cpu(1)}),
                        make_op_call("clip", {x}, {{"a_min", -0.5}, {"a_max", 1e30}}), {.virtual_device = full});
  Expr body = make_let(w, make_tuple({}), make_op_call("add", {v, v}, {}, {.virtual_device = full}));
  body = make_let(v, chosen, body, {.virtual_device = full});
  IRModule m;
  m.add("main", make_function({x, flag}, body, Type(), Attrs(), {.virtual_device = full}));
  Var y = make_var("y", t);
  m.add("odd name", make_function({y}, make_call(make_global_var("main"), {y, make_constant(NDArray(DType::kBool, {}))})));
  expect_round_trip(m, "every_kind.sy");
}

TEST(RoundTrip, ConstantsAreBitExact) {
  std::vector<NDArray> arrays;
  auto add = [&](DType dtype, std::vector<int64_t> shape, std::vector<uint8_t> bytes) {
    NDArray a(dtype, shape);
    ASSERT_EQ(a.nbytes(), bytes.size());
    std::memcpy(a.data(), bytes.data(), bytes.size());
    arrays.push_back(a);
  };
  add(DType::kFloat32, {}, {0x01, 0x00, 0xc0, 0x7f});     // NaN with a payload
  add(DType::kFloat32, {}, {0x00, 0x00, 0xc0, 0xff});     // negative quiet NaN
  add(DType::kFloat32, {}, {0x01, 0x00, 0x00, 0x00});     // the smallest subnormal
  add(DType::kFloat32, {2}, {0x00, 0x00, 0x80, 0x7f, 0x00, 0x00, 0x00, 0x80});  // inf, -0
  add(DType::kFloat16, {2}, {0x01, 0x7c, 0x00, 0xfc});    // f16 NaN payload, -inf
  add(DType::kBFloat16, {}, {0x81, 0x7f});                // bf16 NaN payload
  add(DType::kBool, {3}, {1, 0, 2});                      // a bool byte that is neither 0 nor 1
  add(DType::kInt64, {}, {0, 0, 0, 0, 0, 0, 0, 0x80});    // INT64_MIN
  add(DType::kUInt64, {}, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff});  // UINT64_MAX, beyond int64
  add(DType::kFloat64, {}, {0x01, 0, 0, 0, 0, 0, 0xf8, 0x7f});  // f64 NaN payload
  add(DType::kFloat64, {}, {0x9a, 0x99, 0x99, 0x99, 0x99, 0x99, 0xb9, 0x3f});  // 0.1, all 17 digits
  add(DType::kInt16, {}, {0x00, 0x80});                   // INT16_MIN
  std::mt19937 rng(7);
  for (DType dtype : kAllDTypes) {
    for (std::vector<int64_t> shape : {std::vector<int64_t>{3, 5}, {40}, {0, 2}}) {
      NDArray a(dtype, shape);
      for (size_t i = 0; i < a.nbytes(); ++i) static_cast<uint8_t*>(a.data())[i] = uint8_t(rng());
      if (dtype == DType::kBool)
        for (size_t i = 0; i < a.nbytes(); ++i) static_cast<uint8_t*>(a.data())[i] &= 1;
      arrays.push_back(a);
    }
  }
  std::vector<Expr> fields;
  for (const NDArray& a : arrays) fields.push_back(make_constant(a));
  IRModule m;
  m.add("main", make_function({}, make_tuple(fields)));
  expect_round_trip(m, "constants.sy");
}

TEST(RoundTrip, HundredRandomModules) {
  for (uint64_t seed = 0; seed < 100; ++seed) expect_round_trip(random_module(seed), "random_" + std::to_string(seed));
}

TEST(RoundTrip, RandomModulesUnderOtherOptions) {
  RandomModuleOptions options;
  options.num_nodes = 60;
  options.devices = {"cpu:0", "cuda:0", "cpu:3"};
  options.wish_probability = 0.5;
  options.use_control_flow = false;
  for (uint64_t seed = 0; seed < 20; ++seed) {
    IRModule m = random_module(seed, options);
    EXPECT_EQ(print_module(m).find("if ("), std::string::npos);
    expect_round_trip(m, "random_options_" + std::to_string(seed));
  }
}

TEST(RandomModule, IsDeterministicAndVaried) {
  EXPECT_EQ(print_module(random_module(42)), print_module(random_module(42)));
  EXPECT_NE(print_module(random_module(42)), print_module(random_module(43)));
  std::string all;
  for (uint64_t seed = 0; seed < 100; ++seed) all += print_module(random_module(seed));
  for (const char* form : {"nn.dense(", "reshape(", "transpose(", "sum(", "nn.softmax(", "let %", "if (%flag)",
                           "on_device(", "@cpu:1", ".1", "f)", "Tensor[("})
    EXPECT_NE(all.find(form), std::string::npos) << form;
}

}  // namespace round_trip_test
}  // namespace switchyard
