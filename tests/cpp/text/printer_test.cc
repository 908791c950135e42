// The canonical printer: every node kind, constants, attributes, devices,
// names and block layout.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "op/registry.h"
#include "text/printer.h"

namespace switchyard {
namespace printer_test {

const VirtualDevice* cpu(int id) { return VirtualDevice::for_device(DeviceKind::kCPU, id); }
Type t4() { return tensor_type({4}, DType::kFloat32); }

IRModule single(const Function& fn) {
  IRModule m;
  m.add("main", fn);
  return m;
}

TEST(Printer, EveryNodeKind) {
  Var x = make_var("x", t4(), {.virtual_device = cpu(0)});
  Var flag = make_var("flag", scalar_type(DType::kBool));
  Var u = make_var("u", t4());
  Function inner = make_function({u}, make_op_call("exp", {u}), t4());
  Call relu = make_op_call("nn.relu", {x}, {}, {.virtual_device = cpu(0)});
  Var r = make_var("r");
  Tuple tuple = make_tuple({relu, make_call(inner, {x})});
  If branch = make_if(flag, make_op_call("negative", {relu}), make_call(make_global_var("helper"), {relu}));
  Expr body = make_let(r, branch, make_tuple_get_item(tuple, 1));
  IRModule m;
  Var h = make_var("h", t4());
  m.add("helper", make_function({h}, h, t4()));
  m.add("main", make_function({x, flag}, body, t4(), Attrs(), {.virtual_device = cpu(0)}));
  EXPECT_EQ(print_module(m),
            "def @helper(%h: Tensor[(4), float32]) -> Tensor[(4), float32] {\n"
            "  %h\n"
            "}\n"
            "\n"
            "def @main(%x: Tensor[(4), float32] @cpu:0, %flag: bool) -> Tensor[(4), float32] @cpu:0 {\n"
            "  %0 = nn.relu(%x) @cpu:0;\n"
            "  let %r = if (%flag) {\n"
            "    negative(%0)\n"
            "  } else {\n"
            "    @helper(%0)\n"
            "  };\n"
            "  %1 = fn (%u: Tensor[(4), float32]) -> Tensor[(4), float32] {\n"
            "    exp(%u)\n"
            "  };\n"
            "  %2 = %1(%x);\n"
            "  %3 = (%0, %2);\n"
            "  %3.1\n"
            "}\n");
}

TEST(Printer, ScalarConstantsOfEveryDtype) {
  auto scalar = [](DType dtype, double value) {
    NDArray a(dtype, {});
    a.set_from_double(0, value);
    return print_expr(make_constant(a));
  };
  EXPECT_EQ(scalar(DType::kFloat32, 2), "2f");
  EXPECT_EQ(scalar(DType::kFloat32, 0.1f), "0.1f");
  EXPECT_EQ(scalar(DType::kFloat32, -1e-5f), "-1e-05f");
  EXPECT_EQ(scalar(DType::kInt32, 3), "3");
  EXPECT_EQ(scalar(DType::kInt32, -3), "-3");
  EXPECT_EQ(scalar(DType::kInt64, 3), "3i64");
  EXPECT_EQ(scalar(DType::kInt8, -3), "-3i8");
  EXPECT_EQ(scalar(DType::kUInt8, 200), "200u8");
  EXPECT_EQ(scalar(DType::kFloat64, 0.1), "0.1f64");
  EXPECT_EQ(scalar(DType::kFloat64, 1 + 1e-12), "1.000000000001f64");
  EXPECT_EQ(scalar(DType::kFloat64, -INFINITY), "-inff64");
  EXPECT_EQ(scalar(DType::kInt16, -300), "-300i16");
  EXPECT_EQ(scalar(DType::kUInt16, 65535), "65535u16");
  EXPECT_EQ(scalar(DType::kUInt32, 4294967295.0), "4294967295u32");
  EXPECT_EQ(scalar(DType::kUInt64, 18446744073709551615.0), "18446744073709551615u64");
  EXPECT_EQ(scalar(DType::kFloat16, 2), "2f16");
  EXPECT_EQ(scalar(DType::kFloat16, 0.1), "0.1f16");
  EXPECT_EQ(scalar(DType::kBFloat16, 2), "2bf16");
  EXPECT_EQ(scalar(DType::kBool, 1), "True");
  EXPECT_EQ(scalar(DType::kBool, 0), "False");
  EXPECT_EQ(scalar(DType::kFloat32, std::nan("")), "nanf");
  EXPECT_EQ(scalar(DType::kFloat32, -INFINITY), "-inff");
  EXPECT_EQ(scalar(DType::kFloat16, INFINITY), "inff16");
  EXPECT_EQ(scalar(DType::kFloat32, -0.0), "-0f");
}

TEST(Printer, NaNWithPayloadAndLargeTensorsUseBase64) {
  NDArray odd(DType::kFloat32, {});
  uint32_t bits = 0x7fc00001u;
  std::memcpy(odd.data(), &bits, 4);
  EXPECT_EQ(print_expr(make_constant(odd)), "float32{b64\"AQDAfw==\"}");
  NDArray small(DType::kInt64, {2, 2});
  for (int i = 0; i < 4; ++i) small.set_from_double(i, i - 1);
  EXPECT_EQ(print_expr(make_constant(small)), "Tensor[(2, 2), int64]{-1, 0, 1, 2}");
  NDArray large(DType::kUInt8, {17});
  for (int i = 0; i < 17; ++i) large.set_from_double(i, 65);
  EXPECT_EQ(print_expr(make_constant(large)), "Tensor[(17), uint8]{b64\"QUFBQUFBQUFBQUFBQUFBQUE=\"}");
}

TEST(Printer, AttributesOnlyWhereNotDefaultInDeclaredOrder) {
  Var x = make_var("x", tensor_type({2, 4}, DType::kFloat32));
  EXPECT_EQ(print_expr(make_op_call("sum", {x}, {{"keepdims", true}, {"axis", std::vector<int64_t>{1}}})),
            "sum(%x, axis=[1], keepdims=True)");
  EXPECT_EQ(print_expr(make_op_call("sum", {x})), "sum(%x)");
  EXPECT_EQ(print_expr(make_op_call("clip", {x}, {{"a_min", 0.1}, {"a_max", int64_t(6)}})),
            "clip(%x, a_min=0.1, a_max=6.0)");
  EXPECT_EQ(print_expr(make_op_call("nn.softmax", {x}, {{"axis", int64_t(-1)}})), "nn.softmax(%x)");
}

TEST(Printer, DeviceModes) {
  Var x = make_var("x", t4(), {.virtual_device = cpu(0)});
  Call a = make_op_call("negative", {x}, {}, {.virtual_device = cpu(0)});
  Call b = make_op_call("exp", {a}, {}, {.virtual_device = cpu(0)});
  Call c = make_op_call("device_copy", {b}, {{"src", "cpu:0"}, {"dst", "cpu:1"}}, {.virtual_device = cpu(1)});
  Call d = make_op_call("exp", {c}, {}, {.virtual_device = cpu(1)});
  IRModule m = single(make_function({x}, d, t4(), Attrs(), {.virtual_device = cpu(1)}));
  EXPECT_EQ(print_module(m, {.devices = PrintOptions::Devices::kChanged}),
            "def @main(%x: Tensor[(4), float32] @cpu:0) -> Tensor[(4), float32] @cpu:1 {\n"
            "  %0 = negative(%x) @cpu:0;\n"
            "  %1 = exp(%0);\n"
            "  %2 = device_copy(%1, src=\"cpu:0\", dst=\"cpu:1\") @cpu:1;\n"
            "  exp(%2) @cpu:1\n"
            "}\n");
  EXPECT_EQ(print_module(m, {.devices = PrintOptions::Devices::kNone}),
            "def @main(%x: Tensor[(4), float32]) -> Tensor[(4), float32] {\n"
            "  %0 = negative(%x);\n"
            "  %1 = exp(%0);\n"
            "  %2 = device_copy(%1, src=\"cpu:0\", dst=\"cpu:1\");\n"
            "  exp(%2)\n"
            "}\n");
  EXPECT_NE(print_module(m).find("  %1 = exp(%0) @cpu:0;\n"), std::string::npos);
}

TEST(Printer, FullFormDevicesAndDeviceCarryingConstants) {
  const VirtualDevice* partial = VirtualDevice::parse("device=\"cpu:0\", scope=\"global\"");
  Var x = make_var("x", t4(), {.virtual_device = partial});
  Expr body = make_op_call("add", {x, make_scalar_f32(1, {.virtual_device = cpu(1)})});
  EXPECT_EQ(print_module(single(make_function({x}, body))),
            "def @main(%x: Tensor[(4), float32] @{device=\"cpu:0\", scope=\"global\"}) {\n"
            "  %0 = 1f @cpu:1;\n"
            "  add(%x, %0)\n"
            "}\n");
}

TEST(Printer, DistinctVariablesWithOneNameAreRenamedAndNumbersSkipVariableNames) {
  Var a = make_var("x", t4());
  Var b = make_var("x", t4());
  Var zero = make_var("0", t4());
  Var odd = make_var("in put.1", t4());
  Expr sum = make_op_call("add", {make_op_call("add", {a, b}), make_op_call("add", {zero, odd})});
  EXPECT_EQ(print_module(single(make_function({a, b, zero, odd}, sum))),
            "def @main(%x: Tensor[(4), float32],\n"
            "          %x_1: Tensor[(4), float32],\n"
            "          %0: Tensor[(4), float32],\n"
            "          %in_put_1: Tensor[(4), float32]) {\n"
            "  %1 = add(%x, %x_1);\n"
            "  %2 = add(%0, %in_put_1);\n"
            "  add(%1, %2)\n"
            "}\n");
}

TEST(Printer, LetStatesOnlyWhatItsValueDoesNotImply) {
  Var x = make_var("x", t4());
  Var same = make_var("same", Type(), {.virtual_device = cpu(0)});
  Var moved = make_var("moved", t4(), {.virtual_device = cpu(1)});
  Var loose = make_var("loose");
  Expr inner = make_op_call("add", {same, moved}, {}, {.virtual_device = cpu(1)});
  Expr body = make_let(loose, make_op_call("exp", {x}, {}, {.virtual_device = cpu(0)}), inner,
                       {.virtual_device = cpu(1)});
  body = make_let(moved, make_op_call("exp", {x}, {}, {.virtual_device = cpu(0)}), body,
                  {.virtual_device = cpu(1)});
  body = make_let(same, make_op_call("negative", {x}, {}, {.virtual_device = cpu(0)}), body);
  EXPECT_EQ(print_expr(body),
            "let @{} %same = negative(%x) @cpu:0;\n"
            "let %moved: Tensor[(4), float32] @cpu:1 = exp(%x) @cpu:0;\n"
            "let %loose @{} = exp(%x) @cpu:0;\n"
            "add(%same, %moved) @cpu:1");
}

TEST(Printer, FunctionAttributesAndSharedLetsAsBlocks) {
  Var p = make_var("p", t4());
  Function fused = make_function({p}, make_op_call("nn.relu", {p}), t4(), make_attrs({{"Primitive", int64_t(1)}}));
  Var x = make_var("x", t4());
  Var v = make_var("v");
  Let shared = make_let(v, make_call(fused, {x}), make_op_call("exp", {v}));
  Expr body = make_op_call("add", {shared, shared});
  EXPECT_EQ(print_module(single(make_function({x}, body))),
            "def @main(%x: Tensor[(4), float32]) {\n"
            "  %0 = {\n"
            "    %1 = fn (%p: Tensor[(4), float32], Primitive=1) -> Tensor[(4), float32] {\n"
            "      nn.relu(%p)\n"
            "    };\n"
            "    let %v = %1(%x);\n"
            "    exp(%v)\n"
            "  };\n"
            "  add(%0, %0)\n"
            "}\n");
}

TEST(Printer, NodeSharedByBothBranchesIsBoundBeforeTheIf) {
  Var x = make_var("x", t4());
  Var flag = make_var("flag", scalar_type(DType::kBool));
  Call shared = make_op_call("exp", {x});
  Call only_then = make_op_call("negative", {x});
  Expr body = make_if(flag, make_op_call("add", {shared, only_then}), make_op_call("tanh", {shared}));
  EXPECT_EQ(print_expr(body),
            "%0 = exp(%x);\n"
            "if (%flag) {\n"
            "  %1 = negative(%x);\n"
            "  add(%0, %1)\n"
            "} else {\n"
            "  tanh(%0)\n"
            "}");
}

TEST(Printer, EmptyAndSingletonTuples) {
  Var x = make_var("x", t4());
  EXPECT_EQ(print_expr(make_tuple({make_tuple({x}), make_tuple({})})), "%0 = (%x,);\n%1 = ();\n(%0, %1)");
}

}  // namespace printer_test
}  // namespace switchyard
