// Generated CPU kernels of every element-wise, broadcast and injective
// operator, and of fused chains, compiled and compared with the reference
// interpreter; plus the shape of the generated code (one loop, no
// intermediate buffers), threading and in-place safety.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <regex>

#include "kernel_cases.h"

namespace switchyard::testing {
namespace cpu_elementwise_kernels_test {

std::string main_of(const std::string& params, const std::string& body) {
  return "def @main(" + params + ") {\n" + body + "\n}\n";
}

KernelCase unary(const std::string& op, double low = -2, double high = 2) {
  return {op, main_of("%x: Tensor[(3, 33), float32]", "  " + op + "(%x)"), low, high};
}

KernelCase binary(const std::string& op, const std::string& a, const std::string& b, double low = -2,
                  double high = 2) {
  return {op + "_" + std::to_string(a.size() + b.size()),
          main_of("%a: " + a + ", %b: " + b, "  " + op + "(%a, %b)"), low, high};
}

std::vector<KernelCase> cases() {
  const std::string m = "Tensor[(4, 5), float32]";
  std::vector<KernelCase> c = {
      binary("add", "Tensor[(2, 3, 4), float32]", "Tensor[(3, 1), float32]"),
      binary("subtract", m, "Tensor[(5), float32]"),
      binary("multiply", m, "Tensor[(4, 1), float32]"),
      binary("divide", m, m, 0.5, 2),
      binary("power", m, "Tensor[(1, 5), float32]", 0.5, 2),
      binary("maximum", m, "Tensor[(1, 5), float32]"),
      binary("minimum", "Tensor[(5), float32]", m),
      binary("less", m, "Tensor[(5), float32]"),
      binary("greater", m, m),
      {"equal_int", main_of("%a: Tensor[(3, 4), int32], %b: Tensor[(4), int32]", "  equal(%a, %b)"), -2, 2, -1, 1},
      // Shift amounts 0 to 12: from 8 on, every bit is shifted out.
      {"shifts", main_of("%a: Tensor[(4, 5), uint8], %b: Tensor[(5), uint8]",
                         "  %0 = left_shift(%a, %b);\n  %1 = right_shift(%a, %b);\n  add(%0, %1)"), -2, 2, 0, 12},
      {"shift_by_large",
       main_of("%a: Tensor[(3, 4), uint8]", "  %0 = left_shift(%a, 200u8);\n  %1 = right_shift(%a, 70u8);\n  add(%0, %1)"),
       -2, 2, 100, 255},
      // The wider unsigned types: values and amounts 0 to past the width.
      {"shifts_uint16", main_of("%a: Tensor[(4, 5), uint16], %b: Tensor[(5), uint16]",
                                "  %0 = left_shift(%a, %b);\n  %1 = right_shift(%a, %b);\n  add(%0, %1)"),
       -2, 2, 0, 20},
      {"shifts_uint32", main_of("%a: Tensor[(4, 5), uint32], %b: Tensor[(5), uint32]",
                                "  %0 = left_shift(%a, %b);\n  %1 = right_shift(%a, %b);\n  add(%0, %1)"),
       -2, 2, 0, 40},
      {"shifts_uint64", main_of("%a: Tensor[(4, 5), uint64], %b: Tensor[(5), uint64]",
                                "  %0 = left_shift(%a, %b);\n  %1 = right_shift(%a, %b);\n  add(%0, %1)"),
       -2, 2, 0, 70},
      binary("fmod", m, "Tensor[(5), float32]"),
      {"multiply_scalar", main_of("%x: " + m, "  multiply(%x, 2.5f)")},
      unary("negative"),
      unary("exp"),
      unary("log", 0.1, 3),
      unary("sqrt", 0.1, 3),
      unary("rsqrt", 0.1, 3),
      unary("erf"),
      unary("tanh"),
      unary("sigmoid"),
      unary("abs"),
      unary("sin", -7, 7),
      unary("cos", -7, 7),
      unary("tan", -1.5, 1.5),
      unary("asin", -0.99, 0.99),
      unary("acos", -0.99, 0.99),
      unary("atan", -20, 20),
      unary("sinh", -5, 5),
      unary("cosh", -5, 5),
      unary("asinh", -20, 20),
      unary("acosh", 1, 20),
      unary("atanh", -0.99, 0.99),
      unary("nn.relu"),
      unary("floor", -3, 3),
      unary("ceil", -3, 3),
      unary("round", -3, 3),
      // Exact halves (k / 2), where round goes to even.
      {"round_halves",
       main_of("%x: " + m, "  %0 = multiply(%x, 2f);\n  %1 = floor(%0);\n  %2 = multiply(%1, 0.5f);\n  round(%2)"), -4, 4},
      {"round_half",
       main_of("%x: Tensor[(4, 5), float16]",
               "  %0 = multiply(%x, 4f16);\n  %1 = floor(%0);\n  %2 = multiply(%1, 0.5f16);\n  round(%2)"),
       -3, 3},
      {"clip", main_of("%x: " + m, "  clip(%x, a_min=-0.5, a_max=1)")},
      {"cast_to_int", main_of("%x: " + m, "  cast(%x, dtype=\"int32\")"), -5, 5},
      {"cast_to_float", main_of("%x: Tensor[(4, 5), int32]", "  cast(%x, dtype=\"float32\")")},
      {"cast_to_bool", main_of("%x: Tensor[(4, 5), int32]", "  cast(%x, dtype=\"bool\")"), -2, 2, -1, 1},
      {"cast_to_half", main_of("%x: " + m, "  cast(%x, dtype=\"float16\")")},
      {"cast_wraps", main_of("%x: Tensor[(4, 5), int32]", "  cast(%x, dtype=\"int8\")"), -2, 2, -300, 300},
      {"where", main_of("%c: Tensor[(3, 1), bool], %x: Tensor[(3, 4), float32], %y: Tensor[(4), float32]",
                        "  where(%c, %x, %y)")},
      {"bias_add", main_of("%x: Tensor[(2, 3, 4, 5), float32], %b: Tensor[(3), float32]", "  nn.bias_add(%x, %b)")},
      {"bias_add_last",
       main_of("%x: Tensor[(2, 3), float32], %b: Tensor[(3), float32]", "  nn.bias_add(%x, %b, axis=-1)")},
      {"reshape", main_of("%x: Tensor[(2, 3, 4), float32]", "  reshape(%x, newshape=[4, -1])")},
      {"transpose", main_of("%x: Tensor[(2, 3, 4), float32]", "  transpose(%x, axes=[2, 0, 1])")},
      {"expand_dims", main_of("%x: Tensor[(3, 4), float32]", "  expand_dims(%x, axis=1, num_newaxis=2)")},
      {"squeeze", main_of("%x: Tensor[(3, 1, 4, 1), float32]", "  squeeze(%x)")},
      {"squeeze_axis", main_of("%x: Tensor[(3, 1, 4, 1), float32]", "  squeeze(%x, axis=[1])")},
      {"concatenate", main_of("%a: Tensor[(2, 3), float32], %b: Tensor[(2, 5), float32], %c: Tensor[(2, 1), float32]",
                              "  %0 = (%a, %b, %c);\n  concatenate(%0, axis=1)")},
      {"concatenate_rows",
       main_of("%a: Tensor[(2, 3), float32], %b: Tensor[(1, 3), float32]", "  %0 = (%a, %b);\n  concatenate(%0)")},
      {"split", main_of("%x: Tensor[(6, 4), float32]", "  split(%x, indices_or_sections=3)")},
      {"split_indices", main_of("%x: Tensor[(2, 5), float32]", "  split(%x, indices_or_sections=[1, 3], axis=1)")},
      {"strided_slice",
       main_of("%x: Tensor[(5, 6), float32]", "  strided_slice(%x, begin=[1, -1], end=[4, 0], strides=[1, -2])")},
      {"take_flat", main_of("%x: Tensor[(3, 4), float32], %i: Tensor[(2, 3), int32]", "  take(%x, %i)"), -2, 2, -3, 14},
      {"take_wrap",
       main_of("%x: Tensor[(3, 4), float32], %i: Tensor[(2, 2), int64]", "  take(%x, %i, axis=1, mode=\"wrap\")"), -2,
       2, -9, 9},
      {"take_fast",
       main_of("%x: Tensor[(3, 4), float32], %i: Tensor[(5), int32]", "  take(%x, %i, axis=0, mode=\"fast\")"), -2, 2,
       0, 2},
      {"broadcast_to", main_of("%x: Tensor[(3, 1), float32]", "  broadcast_to(%x, shape=[2, 3, 4])")},
      // Fused chains: every producer inlined into one loop.
      {"chain", main_of("%x: Tensor[(2, 3), float32], %b: Tensor[(3), float32]",
                        "  %0 = add(%x, %b);\n  %1 = transpose(%0);\n  %2 = reshape(%1, newshape=[3, 2]);\n  exp(%2)")},
      {"concatenate_chain",
       main_of("%a: Tensor[(2, 3), float32], %b: Tensor[(2, 5), float32]",
               "  %0 = exp(%a);\n  %1 = (%0, %b);\n  %2 = concatenate(%1, axis=1);\n  nn.relu(%2)")},
      // Batch 1: each part of the concatenation is a loop of its own.
      {"concatenate_by_parts",
       main_of("%a: Tensor[(1, 3, 2, 5), float32], %b: Tensor[(1, 5, 2, 5), float32], %c: Tensor[(1, 1, 2, 5), "
               "float32], %s: Tensor[(9, 1, 1), float32]",
               "  %0 = (%a, %b, %c);\n  %1 = concatenate(%0, axis=1);\n  %2 = multiply(%1, %s);\n"
               "  nn.relu(add(%2, %s))")},
      {"concatenate_by_parts_negative_axis",
       main_of("%a: Tensor[(1, 4, 3), float32], %b: Tensor[(1, 2, 3), float32], %y: Tensor[(3), float32]",
               "  %1 = (%a, %b);\n  %2 = concatenate(%1, axis=-2);\n  %3 = add(%2, %y);\n"
               "  multiply(%3, negative(%y))")},
      {"concatenate_by_parts_last_axis",
       main_of("%a: Tensor[(1, 1, 3), float32], %b: Tensor[(1, 1, 4), float32]",
               "  %0 = (%b, %a, %b);\n  %1 = concatenate(%0, axis=2);\n  sigmoid(%1)")},
      {"concatenate_by_parts_mixed",
       main_of("%a: Tensor[(1, 3, 2, 5), float32], %b: Tensor[(1, 5, 2, 5), float32], %c: Tensor[(1, 2, 2, 5), "
               "float32]",
               "  %0 = (exp(%a), %b, %c);\n  %1 = concatenate(%0, axis=1);\n  nn.relu(%1)")},
      {"concatenate_read_elsewhere",
       main_of("%a: Tensor[(1, 3, 4), float32], %b: Tensor[(1, 3, 4), float32]",
               "  %0 = (%a, %b);\n  %1 = concatenate(%0, axis=1);\n  %2 = transpose(%1, axes=[0, 2, 1]);\n"
               "  exp(%2)")},
      {"concatenate_broadcast",
       main_of("%a: Tensor[(1, 2, 1), float32], %b: Tensor[(1, 3, 1), float32], %y: Tensor[(1, 5, 4), float32]",
               "  %0 = (%a, %b);\n  %1 = concatenate(%0, axis=1);\n  subtract(%1, %y)")},
      {"leaky_relu", main_of("%x: " + m, "  %0 = greater(%x, 0f);\n  %1 = multiply(%x, 0.1f);\n  where(%0, %x, %1)")},
      {"integer_chain",
       main_of("%a: Tensor[(4, 5), int32], %b: Tensor[(5), int32]",
               "  %0 = add(%a, %b);\n  %1 = multiply(%0, %b);\n  divide(%1, %b)"),
       -2, 2, 1, 5},
      {"half_chain",
       main_of("%a: Tensor[(4, 5), float16], %b: Tensor[(5), float16]",
               "  %0 = add(%a, %b);\n  %1 = exp(%0);\n  multiply(%1, %b)"),
       -1, 1, 0, 0, 1e-3},
      {"bfloat16_chain", main_of("%a: Tensor[(4, 5), bfloat16]", "  %0 = multiply(%a, %a);\n  sigmoid(%0)"), -2, 2, 0,
       0, 1e-2},
      // float64 computes in double: a tolerance float math could not meet.
      {"float64_chain",
       main_of("%a: Tensor[(4, 5), float64], %b: Tensor[(5), float64]",
               "  %0 = add(%a, %b);\n  %1 = exp(%0);\n  %2 = divide(%1, %b);\n  %3 = tanh(%2);\n"
               "  %4 = erf(%3);\n  %5 = sin(%4);\n  %6 = multiply(%5, 1e-3f64);\n  %7 = sqrt(abs(%6));\n"
               "  %8 = log(add(%7, 1f64));\n  multiply(%8, 1e6f64)"),
       -2, 2, 0, 0, 1e-14},
      {"float64_casts",
       main_of("%x: Tensor[(4, 5), float64]",
               "  %0 = cast(%x, dtype=\"float32\");\n  %1 = cast(%0, dtype=\"float64\");\n"
               "  %2 = subtract(%x, %1);\n  %3 = cast(multiply(%x, 1e3f64), dtype=\"int64\");\n"
               "  %4 = cast(%3, dtype=\"float64\");\n  %5 = cast(multiply(%x, 1e3f64), dtype=\"uint64\");\n"
               "  %6 = cast(%5, dtype=\"float64\");\n  add(add(%2, %4), %6)"),
       -2, 2, 0, 0, 1e-15},
      {"int16_wraps",
       main_of("%a: Tensor[(4, 5), int16], %b: Tensor[(5), int16]",
               "  %0 = multiply(%a, %b);\n  %1 = add(%0, 30000i16);\n  %2 = divide(%1, %b);\n"
               "  maximum(%2, negative(%a))"),
       -2, 2, 1, 300, 0},
      {"uint16_wraps",
       main_of("%a: Tensor[(4, 5), uint16], %b: Tensor[(5), uint16]",
               "  %0 = subtract(%a, %b);\n  %1 = multiply(%0, %b);\n  %2 = divide(%1, %b);\n  minimum(%2, %a)"),
       -2, 2, 1, 300, 0},
      {"uint32_wraps",
       main_of("%a: Tensor[(4, 5), uint32], %b: Tensor[(5), uint32]",
               "  %0 = subtract(%a, %b);\n  %1 = divide(%0, %b);\n  %2 = less(%a, %b);\n  where(%2, %1, abs(%a))"),
       -2, 2, 1, 300, 0},
      // Differences below zero wrap to values from 2^63 up: uint64's order,
      // division and conversions must treat them as unsigned.
      {"uint64_wraps",
       main_of("%a: Tensor[(4, 5), uint64], %b: Tensor[(5), uint64]",
               "  %0 = subtract(%a, %b);\n  %1 = divide(%0, %b);\n  %2 = maximum(%1, %a);\n"
               "  %3 = add(%2, %b);\n  %4 = cast(%3, dtype=\"float32\");\n  %5 = cast(%4, dtype=\"uint64\");\n"
               "  %6 = less(%a, %b);\n  where(%6, %5, 18446744073709551615u64)"),
       -2, 2, 1, 300, 0},
      // A quantize's clip then cast converts through int32 (cast_in_int32_range);
      // a clip beyond +-2^30 keeps the saturating conversion. Both wrap.
      {"quantize_to_uint8",
       main_of("%x: Tensor[(8, 64), float32]",
               "  %0 = round(divide(%x, 0.37f));\n  %1 = add(%0, 3f);\n"
               "  cast(clip(%1, a_min=0, a_max=255), dtype=\"uint8\")"),
       -400, 400},
      {"clipped_cast_wraps_to_int16",
       main_of("%x: Tensor[(8, 64), float32]",
               "  %0 = multiply(%x, 1000000f);\n  cast(clip(%0, a_min=-1073741824, a_max=1073741824), dtype=\"int16\")"),
       -400, 400},
      {"clipped_cast_beyond_int32",
       main_of("%x: Tensor[(8, 64), float32]",
               "  %0 = multiply(%x, 10000000f);\n  cast(clip(%0, a_min=-3000000000, a_max=3000000000), dtype=\"int32\")"),
       -400, 400},
      {"take_of_computed",
       main_of("%x: Tensor[(3, 4), float32], %i: Tensor[(3), int32]",
               "  %0 = exp(%x);\n  %1 = take(%0, %i, axis=1);\n  negative(%1)"),
       -2, 2, 0, 3},
      {"slice_of_broadcast", main_of("%x: Tensor[(5, 1), float32], %y: Tensor[(6), float32]",
                                     "  %0 = add(%x, %y);\n  %1 = strided_slice(%0, begin=[1], end=[4], axes=[1]);\n"
                                     "  squeeze(expand_dims(%1, axis=0))")},
  };
  return c;
}

// A 10-operator chain big enough to be split across threads.
KernelCase long_chain() {
  return {"long_chain",
          main_of("%x: Tensor[(300, 1000), float32], %y: Tensor[(1000), float32]",
                  "  %0 = add(%x, %y);\n  %1 = multiply(%0, 0.5f);\n  %2 = tanh(%1);\n  %3 = subtract(%2, %y);\n"
                  "  %4 = abs(%3);\n  %5 = sqrt(%4);\n  %6 = negative(%5);\n  %7 = exp(%6);\n"
                  "  %8 = clip(%7, a_min=0.1, a_max=0.9);\n  nn.relu(%8)")};
}

const CaseBatch& batch() {
  static const CaseBatch built = [] {
    std::vector<KernelCase> all = cases();
    all.push_back(long_chain());
    return build_cases(all, "elementwise");
  }();
  return built;
}

const PreparedCase& find_case(const std::string& name) {
  for (const PreparedCase& p : batch().cases)
    if (p.spec.name == name) return p;
  throw std::runtime_error("no case " + name);
}

TEST(CpuElementwiseKernels, EveryOperatorAndChainMatchesTheInterpreter) {
  TestServices serial(1);
  for (const PreparedCase& p : batch().cases) expect_matches_interpreter(batch(), p, serial);
}

TEST(CpuElementwiseKernels, TwoThreadsSplitTheWorkAndAgree) {
  TestServices two(2);
  const PreparedCase& p = find_case("long_chain");
  expect_matches_interpreter(batch(), p, two);
  EXPECT_EQ(two.parallel_calls(), 1);
  EXPECT_EQ(two.most_chunks(), 2);
}

TEST(CpuElementwiseKernels, AZeroDivisorIsReportedAsAFaultAfterTheLoops) {
  const PreparedCase& p = find_case("integer_chain");
  EXPECT_NE(p.source.code.find("int* faults;"), std::string::npos) << p.source.code;
  NDArray a = p.kernel_inputs[0].copy(), b = p.kernel_inputs[1].copy();
  TestServices clean(2);
  run_kernel(*batch().library, p.source, {a, b}, clean);
  EXPECT_EQ(clean.faults(), 0) << "divisors 1..5 raise nothing";
  b.as<int32_t>()[3] = 0;
  TestServices faulting(2);
  std::vector<NDArray> out = run_kernel(*batch().library, p.source, {a, b}, faulting);
  EXPECT_EQ(faulting.faults(), SY_FAULT_INTEGER_DIVISION_BY_ZERO);
  EXPECT_EQ(out[0].as<int32_t>()[3], 0) << "a faulting element reads 0";
  // Kernels that cannot fault keep no fault word and report nothing.
  EXPECT_EQ(find_case("long_chain").source.code.find("faults"), std::string::npos);
}

// A faulting element reads 0, which is also what a shift by 8 or more
// gives: so the match with the interpreter alone would not notice a shift
// computed by dividing by a power of two that wrapped to 0.
TEST(CpuElementwiseKernels, ShiftsByEightOrMoreGiveZeroWithoutAFault) {
  const PreparedCase& p = find_case("shifts");
  NDArray a = p.kernel_inputs[0].copy(), b = p.kernel_inputs[1].copy();
  for (int i = 0; i < 5; ++i) b.as<uint8_t>()[i] = uint8_t(6 + i);  // 6 to 10
  TestServices services(1);
  std::vector<NDArray> out = run_kernel(*batch().library, p.source, {a, b}, services);
  EXPECT_EQ(services.faults(), 0);
  for (int row = 0; row < 4; ++row)
    for (int i = 0; i < 5; ++i) {
      unsigned x = a.as<uint8_t>()[row * 5 + i], by = 6u + unsigned(i);
      unsigned want = by >= 8 ? 0 : (((x << by) & 0xFF) + (x >> by)) & 0xFF;
      EXPECT_EQ(out[0].as<uint8_t>()[row * 5 + i], want) << "x " << x << " by " << by;
    }
}

TEST(CpuElementwiseKernels, Float64ComputesInDoubleAndUint64DividesUnsigned) {
  const std::string& wide = find_case("float64_chain").source.code;
  EXPECT_NE(wide.find("const double exp_"), std::string::npos) << wide;
  EXPECT_NE(wide.find(" * 0.001;"), std::string::npos) << wide;  // a double literal, no f suffix
  EXPECT_EQ(wide.find("const float a_"), std::string::npos) << wide;
  EXPECT_NE(wide.find("inline double sy_exp(double x)"), std::string::npos) << wide;
  const std::string& unsigned_code = find_case("uint64_wraps").source.code;
  EXPECT_NE(unsigned_code.find("sy_divide_uint64("), std::string::npos) << unsigned_code;
  EXPECT_NE(unsigned_code.find("sy_float_to_uint64("), std::string::npos) << unsigned_code;
}

TEST(CpuElementwiseKernels, AClipsCastConvertsThroughInt32OnlyWithinItsRange) {
  for (const char* name : {"quantize_to_uint8", "clipped_cast_wraps_to_int16"}) {
    const std::string& code = find_case(name).source.code;
    EXPECT_NE(code.find("(int32_t(clip_"), std::string::npos) << code;
    EXPECT_EQ(code.find("sy_float_to_int64("), std::string::npos) << code;
  }
  const std::string& beyond = find_case("clipped_cast_beyond_int32").source.code;
  EXPECT_NE(beyond.find("sy_float_to_int64(clip_"), std::string::npos) << beyond;
}

TEST(CpuElementwiseKernels, AChainIsOneLoopWithEveryProducerInlined) {
  const std::string& code = find_case("long_chain").source.code;
  std::regex parallel("parallel_for\\(");
  EXPECT_EQ(std::distance(std::sregex_iterator(code.begin(), code.end(), parallel), std::sregex_iterator()), 1);
  EXPECT_EQ(code.find("new "), std::string::npos) << code;  // no intermediate buffers
  EXPECT_EQ(code.find("std::vector"), std::string::npos) << code;
  EXPECT_NE(code.find("#pragma omp simd"), std::string::npos) << code;
  EXPECT_NE(code.find("const float tanh_"), std::string::npos) << code;   // locals named after operators
  EXPECT_NE(code.find("at long_chain.sy:4:"), std::string::npos) << code;  // and commented with spans
  // The broadcast operand needs coordinates: a row loop with a contiguous inner loop.
  EXPECT_NE(code.find("for (int64_t row = begin; row < end; ++row)"), std::string::npos) << code;
}

TEST(CpuElementwiseKernels, SameShapeChainsLoopOverTheFlatOffset) {
  const std::string& code = find_case("bfloat16_chain").source.code;
  EXPECT_NE(code.find("for (int64_t i = begin; i < end; ++i)"), std::string::npos) << code;
  EXPECT_EQ(code.find("for (int64_t row"), std::string::npos) << code;
}

TEST(CpuElementwiseKernels, InPlaceSafeKernelsMayOverwriteTheirInput) {
  const PreparedCase& p = find_case("leaky_relu");
  ASSERT_TRUE(p.source.elementwise_in_place_safe);
  EXPECT_FALSE(find_case("transpose").source.elementwise_in_place_safe);
  EXPECT_FALSE(find_case("take_flat").source.elementwise_in_place_safe);
  NDArray data = p.kernel_inputs[0].copy();
  std::vector<NDArray> expected = run_kernel(*batch().library, p.source, {data}, TestServices(1));
  const void* in[] = {data.data()};
  void* out[] = {data.data()};
  TestServices serial(1);
  batch().library->kernel(p.source.name)(in, out, serial.get(), 0);
  EXPECT_EQ(compare_arrays(data, expected[0], 0), "");
}

// The vectorisable exp, log, tanh and sigmoid against the C library, over
// special values and a wide sweep.
TEST(CpuElementwiseKernels, FloatMathHelpersAreAccurateEverywhere) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> special = {0.0f, -0.0f, inf, -inf, nan, 1e-40f, -1e-40f, 1e-30f, 88.7f, 88.8f, -87.5f,
                                -103.5f, -120.0f, 0.624f, 0.626f, -0.625f, 9.5f, -9.5f, 1e30f, 1.17549435e-38f};
  struct Checked {
    const char* name;
    double (*reference)(double);
  };
  const Checked functions[] = {{"exp", [](double x) { return std::exp(x); }},
                               {"log", [](double x) { return std::log(x); }},
                               {"tanh", [](double x) { return std::tanh(x); }},
                               {"sigmoid", [](double x) { return 1.0 / (1.0 + std::exp(-x)); }}};
  for (const Checked& f : functions) {
    const PreparedCase& p = find_case(f.name);
    NDArray x(DType::kFloat32, {3, 33});
    for (int64_t i = 0; i < x.numel(); ++i)
      x.as<float>()[i] = i < int64_t(special.size()) ? special[size_t(i)] : float(std::ldexp(1.0, int(i % 40) - 20)) *
                                                                                    (i % 3 == 0 ? -1.0f : 1.5f);
    NDArray y = run_kernel(*batch().library, p.source, {x}, TestServices(1)).at(0);
    for (int64_t i = 0; i < x.numel(); ++i) {
      float in = x.as<float>()[i], got = y.as<float>()[i];
      float want = float(f.reference(double(in)));
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(got)) << f.name << "(" << in << ") = " << got;
        continue;
      }
      if (std::isinf(want)) {
        EXPECT_EQ(got, want) << f.name << "(" << in << ")";
        continue;
      }
      double error = std::fabs(double(got) - double(want));
      // A few ulp, or absolutely tiny where the result is subnormal.
      EXPECT_LE(error, 4e-7 * std::fabs(double(want)) + 1e-37) << f.name << "(" << in << ") = " << got << ", want "
                                                                << want;
    }
  }
}

TEST(CpuElementwiseKernels, AConcatenationReadElementForElementAtBatchOneIsALoopAPart) {
  // Each part reads its own input, with no test of which part an element
  // is in; a concatenation read at other elements, or one whose parts are
  // not contiguous runs of the result, keeps the one loop with its tests.
  for (const char* name : {"concatenate_by_parts", "concatenate_by_parts_negative_axis", "concatenate_by_parts_last_axis",
                           "concatenate_by_parts_mixed"}) {
    SCOPED_TRACE(name);
    const std::string& code = find_case(name).source.code;
    EXPECT_NE(code.find("Part 1 of the concatenation"), std::string::npos) << code;
    EXPECT_EQ(code.find(" if ("), std::string::npos) << code;
  }
  // The parts that read an input alone share one function, called with
  // where the part lies and which input it reads (a function in sy_shared,
  // which other kernels' parts of the same code share too); a part computing
  // its elements (exp, whose helper is the kernel's own), or one of extent 1
  // along the axis (whose coordinate is constant), has its own.
  auto functions = [](const std::string& code) {
    size_t count = 0;
    for (const char* definition : {"\nvoid concatenation_part_", "\n  static void sy_loop_"})
      for (size_t at = code.find(definition); at != std::string::npos; at = code.find(definition, at + 1)) ++count;
    return count;
  };
  EXPECT_EQ(functions(find_case("concatenate_by_parts").source.code), 2u) << find_case("concatenate_by_parts").source.code;
  EXPECT_EQ(functions(find_case("concatenate_by_parts_last_axis").source.code), 1u);
  const std::string& mixed = find_case("concatenate_by_parts_mixed").source.code;
  EXPECT_EQ(functions(mixed), 2u) << mixed;
  EXPECT_NE(mixed.find("_arguments concatenation_part_2_call{buffers.in2_c, buffers.out0, 8, 80};"), std::string::npos)
      << mixed;
  EXPECT_NE(mixed.find("\nvoid concatenation_part_0("), std::string::npos) << mixed;
  for (const char* name : {"concatenate_read_elsewhere", "concatenate_broadcast", "concatenate", "concatenate_chain"}) {
    SCOPED_TRACE(name);
    EXPECT_EQ(find_case(name).source.code.find("of the concatenation"), std::string::npos)
        << find_case(name).source.code;
  }
}

TEST(CpuElementwiseKernels, KernelSourceDescribesItsBuffers) {
  const KernelSource& s = find_case("concatenate").source;
  ASSERT_EQ(s.inputs.size(), 3u);
  EXPECT_EQ(type_to_string(s.inputs[1]), "Tensor[(2, 5), float32]");
  ASSERT_EQ(s.outputs.size(), 1u);
  EXPECT_EQ(type_to_string(s.outputs[0]), "Tensor[(2, 9), float32]");
  EXPECT_EQ(find_case("split").source.outputs.size(), 3u);
  EXPECT_TRUE(s.span.defined());
}

}  // namespace cpu_elementwise_kernels_test
}  // namespace switchyard::testing
