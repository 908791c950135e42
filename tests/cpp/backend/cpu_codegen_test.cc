// generate_cpu_kernel's contract: errors name the operator and span, tuple
// parameters are flattened, names and code are deterministic.
#include <gtest/gtest.h>

#include "codegen/kernel.h"
#include "targets/cpu/compiler/codegen_cpu.h"
#include "kernel_cases.h"
#include "op/registry.h"
#include "support/error.h"
#include "transform/infer_type.h"

namespace switchyard::testing {
namespace cpu_codegen_test {

Type f32(std::vector<int64_t> shape) { return tensor_type(std::move(shape), DType::kFloat32); }

Function primitive(std::vector<Var> params, Expr body) {
  Expr typed = infer_expr_type(make_function(std::move(params), std::move(body), Type(),
                                             make_attrs({{"Primitive", int64_t(1)}})));
  return downcast<FunctionNode>(typed);
}

Error generation_error(const Function& fn) {
  try {
    generate_cpu_kernel(fn, "failing");
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kBackend);
    return e;
  }
  ADD_FAILURE() << "generation succeeded";
  return Error(ErrorKind::kUsage, "");
}

TEST(CpuCodegen, AnOperatorWithoutAKernelIsAnErrorWithItsSpan) {
  Var x = make_var("x", f32({4}));
  Span where("model.sy", 7, 3);
  Call copy = make_op_call("device_copy", {x}, {{"src", std::string("cpu:0")}, {"dst", std::string("cpu:1")}},
                           {nullptr, where});
  Error e = generation_error(primitive({x}, copy));
  EXPECT_EQ(e.message(), "no CPU kernel for operator 'device_copy'");
  EXPECT_EQ(e.span(), where);
}

TEST(CpuCodegen, TwoAnchorsInOneKernelAreRefused) {
  Var x = make_var("x", f32({2, 4}));
  Var w = make_var("w", f32({4, 4}));
  Call first = make_op_call("nn.dense", {x, w});
  Call second = make_op_call("nn.dense", {first, w}, {}, {nullptr, Span("model.sy", 9, 1)});
  Error e = generation_error(primitive({x, w}, second));
  EXPECT_NE(e.message().find("at most one anchor or reduction"), std::string::npos) << e.message();
}

TEST(CpuCodegen, IntegerInputsToFloatMathAreRefused) {
  Var x = make_var("x", tensor_type({4}, DType::kInt32));
  Error e = generation_error(primitive({x}, make_op_call("exp", {x})));
  EXPECT_EQ(e.message(), "'exp' needs a floating-point input, got int32");
}

TEST(CpuCodegen, NameIsTheSymbolAndTheCodeIsDeterministic) {
  Var x = make_var("x", f32({4}));
  Function fn = primitive({x}, make_op_call("exp", {x}));
  KernelSource a = generate_cpu_kernel(fn, "kernel_a");
  KernelSource b = generate_cpu_kernel(fn, "kernel_a");
  EXPECT_EQ(a.code, b.code);
  EXPECT_EQ(a.name, "kernel_a");
  EXPECT_NE(a.code.find("extern \"C\" void kernel_a("), std::string::npos) << a.code;
  KernelSource c = generate_cpu_kernel(fn, "kernel_c");
  EXPECT_NE(c.code.find("extern \"C\" void kernel_c("), std::string::npos);
}

TEST(CpuCodegen, TupleParametersAreFlattenedFieldByField) {
  Type pair = tuple_type({f32({2, 3}), f32({2, 2})});
  Var parts = make_var("parts", pair);
  Function fn = primitive({parts}, make_op_call("concatenate", {parts}, {{"axis", int64_t(1)}}));
  KernelSource source = generate_cpu_kernel(fn, "concatenate_fields");
  ASSERT_EQ(source.inputs.size(), 2u);
  EXPECT_EQ(type_to_string(source.outputs.at(0)), "Tensor[(2, 5), float32]");
  std::shared_ptr<KernelLibrary> library = KernelLibrary::build({source}, "codegen");
  NDArray a(DType::kFloat32, {2, 3}), b(DType::kFloat32, {2, 2});
  for (int i = 0; i < 6; ++i) a.as<float>()[i] = float(i);
  for (int i = 0; i < 4; ++i) b.as<float>()[i] = float(10 + i);
  std::vector<NDArray> out = run_kernel(*library, source, {a, b}, TestServices(1));
  std::vector<float> expected = {0, 1, 2, 10, 11, 3, 4, 5, 12, 13};
  for (int i = 0; i < 10; ++i) EXPECT_EQ(out[0].as<float>()[i], expected[size_t(i)]) << i;
}

}  // namespace cpu_codegen_test
}  // namespace switchyard::testing
