// The kernel IR: structural identity (spans and comments do not count, every
// field does), what the C++ renderer prints from its fields, a hand-built
// kernel compiled and run, and kernels of the element-wise generator keyed
// by their IR.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "codegen/kernel.h"
#include "ir/compilation_config.h"
#include "lower/lower.h"
#include "targets/cpu/compiler/codegen_cpu.h"
#include "targets/cpu/compiler/cpu_render.h"
#include "kernel_cases.h"
#include "kernel_ir/kernel.h"
#include "op/registry.h"
#include "text/parser.h"
#include "transform/fuse_ops.h"
#include "transform/infer_type.h"

namespace switchyard::testing {
namespace kernel_ir_test {

namespace ki = kernel_ir;

ScalarCall scalar(const std::string& op, size_t arity, Span span = Span()) {
  return {as<OpNode>(op_get(op)), Attrs(), std::vector<DType>(arity, DType::kFloat32), DType::kFloat32, span};
}

struct Spec {
  int vector_width = 0;
  int64_t grain = 1024;
  DType dtype = DType::kFloat32;
  std::string comment = "relu of x plus y";
  Span span;
};

// out0[i] = relu(x[i]) + y[i] over 100 elements, with an unused buffer.
ki::Kernel relu_plus(const Spec& spec = {}) {
  ki::Expr i = ki::var("i");
  std::vector<ki::Stmt> inner = {
      ki::let("x_0", spec.dtype, ki::load("in0_x", spec.dtype, i)),
      ki::let("relu_1", DType::kFloat32, ki::call(scalar("nn.relu", 1, spec.span), {ki::var("x_0", spec.dtype)}),
              spec.comment),
      ki::let("add_2", DType::kFloat32,
              ki::call(scalar("add", 2, spec.span),
                       {ki::var("relu_1", DType::kFloat32), ki::load("in1_y", DType::kFloat32, i)})),
      ki::store("out0", i, ki::var("add_2", DType::kFloat32)),
  };
  ki::Kernel k;
  k.buffers = {{"in0_x", spec.dtype, ki::BufferRole::kInput, 0, true, {100}, "", "%x"},
               {"in1_y", DType::kFloat32, ki::BufferRole::kInput, 1, true, {100}, "", "%y"},
               {"in2_unused", DType::kFloat32, ki::BufferRole::kInput, 2, true, {3}, "", "%unused"},
               {"out0", DType::kFloat32, ki::BufferRole::kOutput, 0, false, {100}, "", spec.comment}};
  k.body = {ki::parallel("compute", 100, spec.grain,
                         {ki::for_loop("i", ki::var("begin"), ki::var("end"), ki::LoopKind::kSimd, std::move(inner),
                                       spec.vector_width)},
                         spec.comment)};
  k.comment = spec.comment;
  k.span = spec.span;
  return k;
}

TEST(KernelIr, IdentityIgnoresCommentsAndSpans) {
  ki::Kernel a = relu_plus();
  ki::Kernel b = relu_plus({.comment = "another comment", .span = Span("model.sy", 3, 4)});
  EXPECT_TRUE(ki::equal(a, b));
  EXPECT_EQ(ki::hash(a), ki::hash(b));
}

TEST(KernelIr, EveryFieldIsPartOfTheIdentity) {
  ki::Kernel base = relu_plus();
  std::vector<ki::Kernel> different = {relu_plus({.vector_width = 8}), relu_plus({.grain = 1}),
                                       relu_plus({.dtype = DType::kFloat16})};
  different.push_back(base);
  different.back().buffers[2].shape = {4};
  different.push_back(base);
  different.back().outputs_may_alias_inputs = true;
  different.push_back(base);
  different.back().buffers[0].layout = "nChw8c";
  for (const ki::Kernel& k : different) {
    EXPECT_FALSE(ki::equal(base, k));
    EXPECT_NE(ki::hash(base), ki::hash(k));
  }
}

TEST(KernelIr, ExpressionsCompareByStructure) {
  ki::Expr a = ki::add(ki::mul(ki::var("row"), 4), ki::var("j"));
  ki::Expr b = ki::add(ki::mul(ki::var("row"), 4), ki::var("j"));
  EXPECT_TRUE(ki::equal(a, b));
  EXPECT_EQ(a->hash, b->hash);
  EXPECT_FALSE(ki::equal(a, ki::add(ki::mul(ki::var("row"), 5), ki::var("j"))));
  EXPECT_TRUE(ki::equal(ki::float_value(DType::kFloat32, NAN), ki::float_value(DType::kFloat32, NAN)));
  EXPECT_FALSE(ki::equal(ki::float_value(DType::kFloat32, 0.0), ki::float_value(DType::kFloat32, -0.0)));
  // Folding: x + 0, x * 1 and x * 0 need no nodes.
  ki::Expr x = ki::var("x");
  EXPECT_EQ(ki::add(x, 0), x);
  EXPECT_EQ(ki::mul(x, 1), x);
  EXPECT_TRUE(ki::is_index(ki::mul(x, 0), 0));
}

TEST(KernelIr, TheRendererPrintsLoopsFromTheirFields) {
  std::string code = render_cpu_kernel(relu_plus({.vector_width = 8}), "relu_plus");
  EXPECT_NE(code.find("extern \"C\" void relu_plus(const void* const* inputs, void* const* outputs, "
                      "const SyRuntimeServices* services, int device_index)"),
            std::string::npos)
      << code;
  EXPECT_NE(code.find("#pragma omp simd simdlen(8)\n  for (int64_t i = begin; i < end; ++i) {"), std::string::npos)
      << code;
  EXPECT_NE(code.find("services->parallel_for(services->ctx, device_index, 100, 1024, compute, &buffers);"),
            std::string::npos)
      << code;
  EXPECT_NE(code.find("const float* __restrict in0_x = buffers.in0_x;"), std::string::npos) << code;
  // The loop declares the buffers its loads and stores name, not the others.
  EXPECT_EQ(code.find("= buffers.in2_unused"), std::string::npos) << code;
  EXPECT_NE(code.find("const float relu_1 = "), std::string::npos) << code;
  EXPECT_NE(code.find(";  // relu of x plus y\n"), std::string::npos) << code;
  EXPECT_NE(code.find("out0[i] = add_2;"), std::string::npos) << code;
  ki::Kernel aliasing = relu_plus();
  aliasing.outputs_may_alias_inputs = true;
  EXPECT_EQ(render_cpu_kernel(aliasing, "k").find("__restrict"), std::string::npos);
}

TEST(KernelIr, IndexArithmeticIsParenthesizedOnlyWherePrecedenceNeedsIt) {
  ki::Expr row = ki::var("row");
  ki::Expr offset = ki::add(ki::mul(row, 4), ki::var("j"));
  ki::Expr coordinate = ki::binary(ki::BinaryOp::kMod, ki::binary(ki::BinaryOp::kDiv, offset, ki::index(3)),
                                   ki::index(5));
  ki::Kernel k;
  k.buffers = {{"out0", DType::kInt64, ki::BufferRole::kOutput, 0, false, {8}, "", ""}};
  k.body = {ki::parallel("index", 1, 1,
                         {ki::store("out0", ki::binary(ki::BinaryOp::kSub, ki::var("j"), ki::add(row, 1)),
                                    ki::select(ki::binary(ki::BinaryOp::kLess, coordinate, ki::index(0)), ki::index(0),
                                               ki::select(ki::binary(ki::BinaryOp::kGreater, row, ki::index(7)),
                                                          ki::index(7), coordinate)))},
                         "indices")};
  std::string code = render_cpu_kernel(k, "k");
  EXPECT_NE(code.find("out0[j - (row + 1)] = ((row * 4 + j) / 3) % 5 < 0 ? 0 : (row > 7 ? 7 : ((row * 4 + j) / 3) % 5);"),
            std::string::npos)
      << code;
}

// out0[base + i] = exp(in[i]) + 1 for i in [0, 2), `in` and `base` the
// loop's arguments (exp: a helper of the kernel's own, so its function is
// the kernel's, not shared with other kernels).
ki::Stmt add_one_at(const std::string& name, const std::string& input, int64_t base) {
  ki::Expr i = ki::var("i");
  ki::Expr value = ki::call(scalar("add", 2), {ki::call(scalar("exp", 1), {ki::load("part_input", DType::kFloat32, i)}),
                                               ki::float_value(DType::kFloat32, 1.0)});
  return ki::parallel(name, 2, 1,
                      {ki::for_loop("i", ki::var("begin"), ki::var("end"), ki::LoopKind::kSerial,
                                    {ki::store("out0", ki::add(i, ki::var("base")), value)})},
                      name, {{{"base", ki::index(base)}}, {{"part_input", input}}});
}

TEST(KernelIr, LoopsThatDifferInTheirArgumentsAloneShareAFunction) {
  ki::Kernel k;
  k.buffers = {{"in0_a", DType::kFloat32, ki::BufferRole::kInput, 0, true, {2}, "", ""},
               {"in1_b", DType::kFloat32, ki::BufferRole::kInput, 1, true, {2}, "", ""},
               {"out0", DType::kFloat32, ki::BufferRole::kOutput, 0, false, {4}, "", ""}};
  k.body = {add_one_at("first", "in0_a", 0), add_one_at("second", "in1_b", 2)};
  // The arguments are part of a loop's identity.
  EXPECT_FALSE(ki::equal(k.body[0], add_one_at("first", "in0_a", 1)));
  EXPECT_FALSE(ki::equal(k.body[0], add_one_at("first", "in1_b", 0)));
  EXPECT_NE(k.body[0]->hash, add_one_at("first", "in0_a", 1)->hash);
  std::string code = render_cpu_kernel(k, "k");
  EXPECT_EQ(code.find("void second("), std::string::npos) << code;
  for (const char* line : {"void first(void* closure, int64_t begin, int64_t end)",
                           "first_arguments first_call{&buffers, buffers.in0_a, 0};",
                           "first_arguments second_call{&buffers, buffers.in1_b, 2};",
                           "services->parallel_for(services->ctx, device_index, 2, 1, first, &second_call);"})
    EXPECT_NE(code.find(line), std::string::npos) << line << "\n" << code;
  // Bound, the arguments are substituted: what a renderer giving each loop
  // its own function prints.
  ki::Stmt bound = ki::bind_arguments(k.body[1]);
  EXPECT_TRUE(bound->arguments.empty());
  std::set<std::string> loads, names;
  ki::visit_exprs(bound->body, [&](const ki::Expr& e) {
    if (e->kind == ki::ExprKind::kLoad) loads.insert(e->name);
    if (e->kind == ki::ExprKind::kVar) names.insert(e->name);
  });
  EXPECT_EQ(loads, std::set<std::string>{"in1_b"});
  EXPECT_EQ(names.count("base"), 0u);
  EXPECT_TRUE(ki::equal(bound->body[0]->body[0]->index, ki::add(ki::var("i"), ki::index(2))));
}

// out0[base + i] = in[i] * scale[i] for i in [0, 2) through a local named
// `local`: `in` and `base` the loop's arguments, `scale` read by the
// kernel's own name (DenseNet's per-channel scale).
ki::Stmt scale_at(const std::string& name, const std::string& input, const std::string& scale,
                  const std::string& local, int64_t base, const std::string& op = "multiply") {
  ki::Expr i = ki::var("i");
  return ki::parallel(
      name, 2, 1,
      {ki::for_loop("i", ki::var("begin"), ki::var("end"), ki::LoopKind::kSimd,
                    {ki::let(local, DType::kFloat32,
                             ki::call(scalar(op, 2), {ki::load("part_input", DType::kFloat32, i),
                                                      ki::load(scale, DType::kFloat32, i)}),
                             "at " + name),
                     ki::store("out0", ki::add(i, ki::var("base")), ki::var(local, DType::kFloat32))})},
      name, {{{"base", ki::index(base)}}, {{"part_input", input}}});
}

// The shared loop functions (sy_shared::sy_loop_...) `code` defines.
std::set<std::string> shared_loop_names(const std::string& code) {
  std::set<std::string> names;
  const std::string definition = "static void ";
  for (size_t at = code.find(definition + "sy_loop_"); at != std::string::npos;
       at = code.find(definition + "sy_loop_", at + 1))
    names.insert(code.substr(at + definition.size(), code.find('(', at) - at - definition.size()));
  return names;
}

ki::Buffer float_buffer(const std::string& name, ki::BufferRole role, int slot, int64_t elements) {
  return {name, DType::kFloat32, role, slot, role == ki::BufferRole::kInput, {elements}, "", ""};
}

TEST(KernelIr, LoopsOfDifferentKernelsWithTheSameCodeShareOneFunction) {
  // Kernel a: two parts of one scale; kernel b: buffers, locals and
  // comments named otherwise, the same code; kernel c: another operator.
  ki::Kernel a, b, c;
  a.buffers = {float_buffer("in0_a", ki::BufferRole::kInput, 0, 2), float_buffer("in1_s", ki::BufferRole::kInput, 1, 2),
               float_buffer("out0", ki::BufferRole::kOutput, 0, 4)};
  a.body = {scale_at("first", "in0_a", "in1_s", "p1_0", 0), scale_at("second", "in0_a", "in1_s", "p1_0", 2)};
  b.buffers = {float_buffer("in0_x", ki::BufferRole::kInput, 0, 2), float_buffer("in1_y", ki::BufferRole::kInput, 1, 2),
               float_buffer("in2_t", ki::BufferRole::kInput, 2, 2), float_buffer("out0", ki::BufferRole::kOutput, 0, 3)};
  b.body = {scale_at("part", "in1_y", "in2_t", "p2_0", 1)};
  c.buffers = b.buffers;
  c.body = {scale_at("part", "in1_y", "in2_t", "p2_0", 1, "add")};
  KernelSource sa{.name = "shares_a", .code = render_cpu_kernel(a, "shares_a")};
  KernelSource sb{.name = "shares_b", .code = render_cpu_kernel(b, "shares_b")};
  std::set<std::string> loops_a = shared_loop_names(sa.code), loops_b = shared_loop_names(sb.code);
  ASSERT_EQ(loops_a.size(), 1u) << sa.code;
  EXPECT_EQ(loops_b, loops_a) << sb.code;
  EXPECT_NE(shared_loop_names(render_cpu_kernel(c, "c")), loops_a);
  const std::string function = "sy_shared::" + *loops_a.begin();
  for (const std::string& line : {function + "_arguments first_call{buffers.in0_a, buffers.in1_s, buffers.out0, 0};",
                                  function + "_arguments second_call{buffers.in0_a, buffers.in1_s, buffers.out0, 2};"})
    EXPECT_NE(sa.code.find(line), std::string::npos) << line << "\n" << sa.code;
  EXPECT_NE(sb.code.find(function + "_arguments part_call{buffers.in1_y, buffers.in2_t, buffers.out0, 1};"),
            std::string::npos) << sb.code;
  EXPECT_EQ(sb.code.find("p2_0"), std::string::npos) << sb.code;  // the local is v0, in a and b alike

  // Both in one library (its units joined, the guard keeping one
  // definition), each kernel computing its own.
  for (KernelSource* source : {&sa, &sb}) {
    for (int i = 0; i < (source == &sa ? 2 : 3); ++i)
      source->inputs.push_back(TensorType(as_tensor(tensor_type({2}, DType::kFloat32))));
    source->outputs.push_back(TensorType(as_tensor(tensor_type({source == &sa ? 4 : 3}, DType::kFloat32))));
  }
  std::shared_ptr<KernelLibrary> library = KernelLibrary::build({sa, sb}, "shared_loops");
  NDArray x(DType::kFloat32, {2}), s(DType::kFloat32, {2}), unused(DType::kFloat32, {2});
  x.as<float>()[0] = 1.5f, x.as<float>()[1] = -2.0f, s.as<float>()[0] = 3.0f, s.as<float>()[1] = 0.25f;
  NDArray out_a = run_kernel(*library, sa, {x, s}, TestServices(2)).at(0);
  NDArray out_b = run_kernel(*library, sb, {unused, x, s}, TestServices(2)).at(0);
  for (int64_t i = 0; i < 2; ++i) {
    const float product = x.as<float>()[i] * s.as<float>()[i];
    EXPECT_EQ(out_a.as<float>()[i], product);
    EXPECT_EQ(out_a.as<float>()[2 + i], product);
    EXPECT_EQ(out_b.as<float>()[1 + i], product);
  }
}

TEST(KernelIr, AnEmptyKernelSaysSo) {
  ki::Kernel k = relu_plus();
  k.body.clear();
  EXPECT_NE(render_cpu_kernel(k, "k").find("// The result is empty: nothing to compute."), std::string::npos);
  k = relu_plus();
  k.body = {ki::parallel("compute", 0, 1, {}, "Every element")};
  EXPECT_NE(render_cpu_kernel(k, "k").find("// Every element: no elements"), std::string::npos);
}

TEST(KernelIr, AHandBuiltKernelCompilesAndRuns) {
  KernelSource source;
  source.name = "relu_plus_by_hand";
  source.code = render_cpu_kernel(relu_plus(), source.name);
  for (std::vector<int64_t> shape : {std::vector<int64_t>{100}, {100}, {3}})
    source.inputs.push_back(TensorType(as_tensor(tensor_type(shape, DType::kFloat32))));
  source.outputs.push_back(TensorType(as_tensor(tensor_type({100}, DType::kFloat32))));
  NDArray x(DType::kFloat32, {100}), y(DType::kFloat32, {100}), unused(DType::kFloat32, {3});
  for (int64_t i = 0; i < 100; ++i) {
    x.as<float>()[i] = float(i % 7) - 3.0f;
    y.as<float>()[i] = 0.5f * float(i);
  }
  std::shared_ptr<KernelLibrary> library = KernelLibrary::build({source}, "kernel_ir");
  NDArray out = run_kernel(*library, source, {x, y, unused}, TestServices(2)).at(0);
  for (int64_t i = 0; i < 100; ++i)
    EXPECT_EQ(out.as<float>()[i], std::max(x.as<float>()[i], 0.0f) + y.as<float>()[i]) << i;
}

Function fused_primitive(const std::string& text, const std::string& file) {
  IRModule fused = FuseOps()(infer_type(parse_module(text, file)));
  return downcast<FunctionNode>(as<CallNode>(fused.lookup("main")->body)->op);
}

// The kernel of `text` generated from two files where it stands at
// different lines: the kernel IR is the same, though the span comments in
// the code differ. Returns the first.
KernelSource same_kernel_ir_at_two_places(const std::string& text) {
  KernelSource a = generate_cpu_kernel(fused_primitive(text, "a.sy"), "k");
  KernelSource b = generate_cpu_kernel(fused_primitive("\n\n" + text, "b.sy"), "k");
  EXPECT_TRUE(a.kernel_ir && b.kernel_ir);
  if (!a.kernel_ir || !b.kernel_ir) return a;
  EXPECT_NE(a.code, b.code);
  EXPECT_TRUE(ki::equal(*a.kernel_ir, *b.kernel_ir));
  EXPECT_EQ(ki::hash(*a.kernel_ir), ki::hash(*b.kernel_ir));
  return a;
}

TEST(KernelIr, ElementwiseKernelsAreKeyedByTheirIrNotTheirSpans) {
  const std::string text = "def @main(%x: Tensor[(4, 5), float32], %y: Tensor[(5), float32]) {\n"
                           "  %0 = add(%x, %y);\n  nn.relu(%0)\n}\n";
  KernelSource a = same_kernel_ir_at_two_places(text);
  ASSERT_TRUE(a.kernel_ir);
  KernelSource c =
      generate_cpu_kernel(fused_primitive(text.substr(0, text.find("nn.relu")) + "  sigmoid(%0)\n}\n", "a.sy"), "k");
  ASSERT_TRUE(c.kernel_ir);
  EXPECT_FALSE(ki::equal(*a.kernel_ir, *c.kernel_ir));
}

// A kernel over `buffers` whose one parallel loop `function` runs `body`
// for each `var` in [0, count), serially within a chunk.
ki::Kernel in_one_loop(std::vector<ki::Buffer> buffers, const std::string& function, int64_t count,
                       const std::string& var, std::vector<ki::Stmt> body) {
  ki::Kernel k;
  k.buffers = std::move(buffers);
  k.body = {ki::parallel(function, count, 1,
                         {ki::for_loop(var, ki::var("begin"), ki::var("end"), ki::LoopKind::kSerial, std::move(body))},
                         function)};
  return k;
}

// out0[r] = the double sum of the 8 elements of row r of x (4 x 8), the
// tile of `lanes` rows' sums kept in a local array.
ki::Kernel row_sums(ki::Reduction lanes = ki::Reduction::kSum, ki::Precision precision = ki::Precision::kAccumulator) {
  ki::Expr r = ki::var("r"), a = ki::var("a");
  ki::Expr acc = ki::var("acc", DType::kFloat32);
  if (precision == ki::Precision::kAccumulator) acc = ki::in_accumulator(acc);
  ki::Expr x = ki::load("in0_x", DType::kFloat32, ki::add(ki::mul(r, 8), a));
  std::vector<ki::Stmt> row = {
      ki::declare("acc", ki::in_accumulator(ki::float_value(DType::kFloat32, 0.0))),
      ki::simd_reduction("a", ki::index(0), ki::index(8), lanes, "acc",
                         {ki::assign("acc", ki::binary(ki::BinaryOp::kAdd, acc, x))}),
      ki::declare_array("partial", DType::kFloat32, precision, 2),
      ki::assign_element("partial", ki::index(0), acc),
      ki::store("out0", r, ki::cast(DType::kFloat32, ki::element("partial", DType::kFloat32, ki::index(0)))),
  };
  return in_one_loop({{"in0_x", DType::kFloat32, ki::BufferRole::kInput, 0, true, {4, 8}, "", "%x"},
                      {"out0", DType::kFloat32, ki::BufferRole::kOutput, 0, false, {4}, "", ""}},
                     "reduce", 4, "r", std::move(row));
}

TEST(KernelIr, AccumulatorsAndReductionsArePartOfTheIdentity) {
  ki::Kernel base = row_sums();
  EXPECT_TRUE(ki::equal(base, row_sums()));
  EXPECT_EQ(ki::hash(base), ki::hash(row_sums()));
  for (const ki::Kernel& k : {row_sums(ki::Reduction::kMax), row_sums(ki::Reduction::kSum, ki::Precision::kCompute)}) {
    EXPECT_FALSE(ki::equal(base, k));
    EXPECT_NE(ki::hash(base), ki::hash(k));
  }
  EXPECT_FALSE(ki::equal(ki::var("acc"), ki::in_accumulator(ki::var("acc"))));
  EXPECT_FALSE(ki::equal(ki::var("acc"), ki::element("acc", DType::kInt64, ki::index(0))));
  EXPECT_FALSE(ki::equal(std::vector<ki::Stmt>{ki::declare_array("t", DType::kFloat32, ki::Precision::kCompute, 4)},
                         {ki::declare_array("t", DType::kFloat32, ki::Precision::kCompute, 8)}));
}

// Fails for each of `expected` that `code` does not hold.
void expect_code_holds(const std::string& code, const std::vector<std::string>& expected) {
  for (const std::string& text : expected) EXPECT_NE(code.find(text), std::string::npos) << text << "\n" << code;
}

TEST(KernelIr, TheRendererPrintsAccumulatorsInTheirWideTypes) {
  expect_code_holds(render_cpu_kernel(row_sums(), "k"),
                    {"double acc = 0.0;\n",
                     "#pragma omp simd reduction(+ : acc)\n    for (int64_t a = 0; a < 8; ++a) {",
                     "acc += in0_x[r * 8 + a];", "double partial[2];", "out0[r] = float(partial[0]);"});
  expect_code_holds(render_cpu_kernel(row_sums(ki::Reduction::kMax), "k"), {"reduction(max : acc)"});
  // Integer accumulators wrap in uint64; a cast to float16 rounds.
  ki::Expr total = ki::in_accumulator(ki::var("total", DType::kInt32));
  ki::Expr one = ki::in_accumulator(ki::int_value(DType::kInt32, 1));
  EXPECT_EQ(render_cpu_index(ki::binary(ki::BinaryOp::kAdd, total, one)), "total + uint64_t(1)");
  ki::Expr rest = ki::binary(ki::BinaryOp::kSub, ki::index(300), ki::var("first"));
  EXPECT_EQ(render_cpu_index(ki::binary(ki::BinaryOp::kMin, ki::index(256), rest)),
            "sy_min(256, 300 - first)");
  ki::Expr v = ki::var("v", DType::kFloat32);
  EXPECT_EQ(render_cpu_index(ki::select(ki::binary(ki::BinaryOp::kOr, ki::binary(ki::BinaryOp::kNotEqual, v, v),
                                                   ki::binary(ki::BinaryOp::kLessEqual, ki::var("x"), v)),
                                        v, ki::var("x"))),
            "v != v || x <= v ? v : x");
  EXPECT_EQ(render_cpu_index(ki::cast(DType::kFloat16, v)), "sy_half_to_float(sy_float_to_half(float(v)))");
}

TEST(KernelIr, AHandBuiltReductionCompilesAndRuns) {
  KernelSource source;
  source.name = "row_sums_by_hand";
  source.code = render_cpu_kernel(row_sums(), source.name);
  source.inputs.push_back(TensorType(as_tensor(tensor_type({4, 8}, DType::kFloat32))));
  source.outputs.push_back(TensorType(as_tensor(tensor_type({4}, DType::kFloat32))));
  NDArray x(DType::kFloat32, {4, 8});
  for (int64_t i = 0; i < 32; ++i) x.as<float>()[i] = 0.25f * float(i);
  std::shared_ptr<KernelLibrary> library = KernelLibrary::build({source}, "kernel_ir_reduction");
  NDArray out = run_kernel(*library, source, {x}, TestServices(2)).at(0);
  for (int64_t r = 0; r < 4; ++r) {
    float expected = 0;
    for (int64_t a = 0; a < 8; ++a) expected += x.as<float>()[r * 8 + a];
    EXPECT_EQ(out.as<float>()[r], expected) << r;
  }
}

// A reduction with its prologue and epilogue is kernel IR too: two at
// different places are one kernel, and the tile of a kept trailing axis is
// a local array of double accumulators.
TEST(KernelIr, ReductionsAreBuiltAsKernelIr) {
  const std::string text = "def @main(%x: Tensor[(6, 5, 300), float32]) {\n"
                           "  %0 = exp(%x);\n  %1 = sum(%0, axis=[1]);\n  nn.relu(%1)\n}\n";
  KernelSource a = same_kernel_ir_at_two_places(text);
  expect_code_holds(a.code, {"double acc[256];", "const int64_t width = sy_min(256, 300 - first);",
                             "acc[j] += exp_"});
  KernelSource per_row = generate_cpu_kernel(
      fused_primitive("def @main(%x: Tensor[(6, 5), int32]) {\n  sum(%x, axis=[1])\n}\n", "c.sy"), "k");
  ASSERT_TRUE(per_row.kernel_ir);
  expect_code_holds(per_row.code,
                    {"uint64_t acc = uint64_t(0);", "#pragma omp simd reduction(+ : acc)", "acc += uint64_t(x_"});
}

// Normalisations are kernel IR: softmax's row maximum and sums are simd
// reductions, a row longer than a block sums block by block, and
// batch_norm's moving statistics are copies.
TEST(KernelIr, NormalisationsAreBuiltAsKernelIr) {
  KernelSource softmax = generate_cpu_kernel(
      fused_primitive("def @main(%x: Tensor[(3, 2000), float32]) {\n  nn.softmax(%x)\n}\n", "s.sy"), "k");
  ASSERT_TRUE(softmax.kernel_ir);
  expect_code_holds(softmax.code, {"#pragma omp simd reduction(max : row_max)", "float sum_block = 0.0f;",
                                   "#pragma omp simd reduction(+ : sum_block)", "sum += sum_block;",
                                   "const int64_t block_end = sy_min(block + 1024, 2000);",
                                   "const float e = sy_exp("});
  KernelSource batch_norm = generate_cpu_kernel(
      fused_primitive("def @main(%x: Tensor[(2, 3, 4), float32], %g: Tensor[(3), float32], %b: Tensor[(3), float32], "
                      "%m: Tensor[(3), float32], %v: Tensor[(3), float32]) {\n"
                      "  nn.batch_norm(%x, %g, %b, %m, %v, axis=1)\n}\n",
                      "b.sy"),
      "k");
  ASSERT_TRUE(batch_norm.kernel_ir);
  expect_code_holds(batch_norm.code, {"std::memcpy(buffers.out1, buffers.in3_m, 12);"});
  ki::Stmt copy = ki::copy("out1", "in3_m", 3);
  EXPECT_TRUE(ki::equal(copy, ki::copy("out1", "in3_m", 3, "another comment")));
  EXPECT_FALSE(ki::equal(copy, ki::copy("out1", "in4_v", 3)));
  EXPECT_FALSE(ki::equal(copy, ki::copy("out1", "in3_m", 4)));
}

// A oneDNN anchor whose epilogue runs as a loop is kernel IR: a statement
// runs the primitive, whose spec is part of the identity, into a scratch
// buffer when the epilogue changes the dtype.
TEST(KernelIr, ADnnlEpilogueLoopIsKernelIr) {
  auto dense_cast = [](int64_t units) {
    std::string w = "%w: Tensor[(" + std::to_string(units) + ", 8), float32]";
    return generate_cpu_kernel(fused_primitive("def @main(%x: Tensor[(3, 8), float32], " + w + ") {\n"
                                               "  %0 = nn.dense(%x, %w);\n  cast(%0, dtype=\"int32\")\n}\n",
                                               "d.sy"),
                               "k");
  };
  KernelSource source = dense_cast(16);
  ASSERT_TRUE(source.kernel_ir && source.primitive);
  const ki::Kernel& kernel = *source.kernel_ir;
  ASSERT_EQ(kernel.body.size(), 2u);
  EXPECT_EQ(kernel.body[0]->kind, ki::StmtKind::kRunPrimitive);
  EXPECT_EQ(kernel.body[0]->name, "anchor");
  EXPECT_EQ(kernel.buffers.back().role, ki::BufferRole::kScratch);
  expect_code_holds(source.code, {"std::unique_ptr<float[]> anchor_storage(new float[48]);",
                                  "void* const primitive_outputs[] = {buffers.anchor};", "void epilogue("});
  KernelSource wider = dense_cast(32);
  ASSERT_TRUE(wider.kernel_ir);
  EXPECT_FALSE(ki::equal(kernel.body[0], wider.kernel_ir->body[0]));
}

// The statements under `stmts` of `kind`, depth first.
std::vector<const ki::StmtNode*> find_stmts(const std::vector<ki::Stmt>& stmts, ki::StmtKind kind) {
  std::vector<const ki::StmtNode*> found;
  for (const ki::Stmt& s : stmts) {
    if (s->kind == kind) found.push_back(s.get());
    for (const std::vector<ki::Stmt>* nested : {&s->body, &s->orelse})
      for (const ki::StmtNode* n : find_stmts(*nested, kind)) found.push_back(n);
  }
  return found;
}

// out0[i] = x[i] converted to int64 where 0 <= i - 1 < 4, else -7: a
// bounds test (&&) and a cast from float to integer, which saturates.
ki::Kernel bounded_casts() {
  ki::Expr i = ki::var("i"), j = ki::var("j");
  ki::Expr inside = ki::binary(ki::BinaryOp::kAnd, ki::binary(ki::BinaryOp::kLessEqual, ki::index(0), j),
                               ki::binary(ki::BinaryOp::kLess, j, ki::index(4)));
  std::vector<ki::Stmt> body = {
      ki::let("j", DType::kInt64, ki::add(i, -1)),
      ki::if_then_else(inside, {ki::store("out0", i, ki::cast(DType::kInt64, ki::load("in0_x", DType::kFloat32, i)))},
                       {ki::store("out0", i, ki::int_value(DType::kInt64, -7))}),
  };
  return in_one_loop({{"in0_x", DType::kFloat32, ki::BufferRole::kInput, 0, true, {6}, "", "%x"},
                      {"out0", DType::kInt64, ki::BufferRole::kOutput, 0, false, {6}, "", ""}},
                     "bounded", 6, "i", std::move(body));
}

TEST(KernelIr, TheRendererPrintsBoundsTestsAndSaturatingCasts) {
  ki::Expr a = ki::var("a"), b = ki::var("b");
  ki::Expr both = ki::binary(ki::BinaryOp::kAnd, ki::binary(ki::BinaryOp::kLess, a, ki::index(3)),
                             ki::binary(ki::BinaryOp::kLessEqual, ki::index(0), b));
  EXPECT_EQ(render_cpu_index(ki::binary(ki::BinaryOp::kAnd, both, ki::binary(ki::BinaryOp::kLess, b, ki::index(5)))),
            "a < 3 && 0 <= b && b < 5");
  // && inside || keeps its parentheses, as a reader (and -Wparentheses) wants.
  EXPECT_EQ(render_cpu_index(ki::binary(ki::BinaryOp::kOr, both, ki::binary(ki::BinaryOp::kNotEqual, a, b))),
            "(a < 3 && 0 <= b) || a != b");
  EXPECT_FALSE(ki::equal(both, ki::binary(ki::BinaryOp::kOr, both->operands[0], both->operands[1])));
  ki::Expr m = ki::var("m", DType::kFloat32);
  EXPECT_EQ(render_cpu_index(ki::cast(DType::kInt32, m)), "int32_t(sy_float_to_int64(m))");
  EXPECT_EQ(render_cpu_index(ki::cast(DType::kInt32, ki::var("n", DType::kInt64))), "int32_t(n)");
  expect_code_holds(render_cpu_kernel(bounded_casts(), "k"),
                    {"if (0 <= j && j < 4) {", "out0[i] = int64_t(sy_float_to_int64(in0_x[i]));", "} else {"});
}

TEST(KernelIr, BoundsTestsAndSaturatingCastsCompileAndRun) {
  KernelSource source;
  source.name = "bounded_casts_by_hand";
  source.code = render_cpu_kernel(bounded_casts(), source.name);
  source.inputs.push_back(TensorType(as_tensor(tensor_type({6}, DType::kFloat32))));
  source.outputs.push_back(TensorType(as_tensor(tensor_type({6}, DType::kInt64))));
  NDArray x(DType::kFloat32, {6});
  const float values[] = {1.0f, -1e30f, NAN, -2.7f, 3.9f, 5.0f};
  for (int64_t i = 0; i < 6; ++i) x.as<float>()[i] = values[i];
  std::shared_ptr<KernelLibrary> library = KernelLibrary::build({source}, "kernel_ir_bounded_casts");
  NDArray out = run_kernel(*library, source, {x}, TestServices(2)).at(0);
  const int64_t expected[] = {-7, INT64_MIN, 0, -2, 3, -7};
  for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(out.as<int64_t>()[i], expected[i]) << i;
}

// A call computed in double says so in the IR (its precision), so a
// renderer for another language need not rely on C++'s promotion: only
// float32-typed operands held in double may make one.
TEST(KernelIr, ACallInDoubleIsMarkedInTheIr) {
  ki::Expr v = ki::in_accumulator(ki::var("v", DType::kFloat32));
  ki::Expr in_double = ki::call(scalar("sqrt", 1), {v}, ki::Precision::kAccumulator);
  ki::Expr in_float = ki::call(scalar("sqrt", 1), {v});
  EXPECT_EQ(in_double->precision, ki::Precision::kAccumulator);
  EXPECT_FALSE(ki::equal(in_double, in_float));
  EXPECT_NE(in_double->hash, in_float->hash);
  EXPECT_THROW(ki::call(scalar("sqrt", 1), {ki::var("v", DType::kFloat32)}, ki::Precision::kAccumulator),
               std::logic_error);
  EXPECT_THROW(ki::in_accumulator(in_float), std::logic_error);
  // A select holds what its branches hold.
  EXPECT_EQ(ki::select(ki::binary(ki::BinaryOp::kLess, ki::var("a"), ki::index(0)), v, v)->precision,
            ki::Precision::kAccumulator);

  // batch_norm's 1 / sqrt(variance + epsilon) is such a call.
  KernelSource batch_norm = generate_cpu_kernel(
      fused_primitive("def @main(%x: Tensor[(2, 3, 4), float16], %g: Tensor[(3), float16], %b: Tensor[(3), float16], "
                      "%m: Tensor[(3), float16], %v: Tensor[(3), float16]) {\n"
                      "  nn.batch_norm(%x, %g, %b, %m, %v, axis=1)\n}\n",
                      "b.sy"),
      "k");
  ASSERT_TRUE(batch_norm.kernel_ir);
  std::vector<ki::Expr> calls;
  ki::visit_exprs(batch_norm.kernel_ir->body, [&](const ki::Expr& e) {
    if (e->kind == ki::ExprKind::kCall) calls.push_back(e);
  });
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0]->call->op->name, "sqrt");
  EXPECT_EQ(calls[0]->precision, ki::Precision::kAccumulator);
  for (const ki::Expr& operand : calls[0]->operands) EXPECT_EQ(operand->precision, ki::Precision::kAccumulator);
  expect_code_holds(batch_norm.code, {"double inv_std = 1.0 / (sy_sqrt((double(sy_half_to_float(in4_v[c])) + "});
}

// The plain-loop anchors (dtypes oneDNN lacks) are kernel IR: two at
// different places are one kernel; a product or window sums in the wide
// accumulator type; a window's padding narrows each tap's range of columns.
TEST(KernelIr, PlainLoopAnchorsAreBuiltAsKernelIr) {
  KernelSource conv = same_kernel_ir_at_two_places(
      "def @main(%x: Tensor[(1, 4, 6, 6), int32], %w: Tensor[(2, 2, 3, 3), int32]) {\n"
      "  %0 = nn.conv2d(%x, %w, groups=2, padding=[1, 1]);\n  nn.relu(%0)\n}\n");
  ASSERT_TRUE(conv.kernel_ir);
  EXPECT_FALSE(conv.primitive);
  std::vector<const ki::StmtNode*> ifs = find_stmts(conv.kernel_ir->body, ki::StmtKind::kIf);
  ASSERT_EQ(ifs.size(), 1u);
  EXPECT_EQ(ifs[0]->value->binary, ki::BinaryOp::kAnd);
  std::vector<const ki::StmtNode*> declares = find_stmts(conv.kernel_ir->body, ki::StmtKind::kDeclare);
  ASSERT_EQ(declares.size(), 1u);
  EXPECT_EQ(declares[0]->precision, ki::Precision::kAccumulator);
  // A row of accumulators (6 columns, rows 8 apart); the padding cuts each tap's column range, and
  // the middle columns add a window row's taps in order in one statement.
  expect_code_holds(conv.code, {"uint64_t acc[8];", "if (0 <= ih && ih < 6) {", "#pragma omp simd",
                                "for (int64_t ow = 1; ow < 5; ++ow) {",
                                "acc[ow - first] = acc[ow - first] + uint64_t(x0) * uint64_t(w0_0) + uint64_t(x1) * "
                                "uint64_t(w1_0) + uint64_t(x2) * uint64_t(w2_0);",
                                "const int32_t result = int32_t(int64_t(acc[ow - first + b * 8]));"});
  KernelSource dense = same_kernel_ir_at_two_places(
      "def @main(%x: Tensor[(3, 8), float16], %w: Tensor[(4, 8), float16]) {\n  nn.dense(%x, %w)\n}\n");
  expect_code_holds(dense.code, {"double acc = 0.0;", "acc += double(sy_half_to_float(in0_x[a_base + kk])) * "});
  KernelSource pool = same_kernel_ir_at_two_places(
      "def @main(%x: Tensor[(1, 2, 5, 5), int32]) {\n"
      "  nn.avg_pool2d(%x, pool_size=[3, 3], padding=[1, 1], count_include_pad=True)\n}\n");
  expect_code_holds(pool.code, {"if (ih < 6) {", "count[ow - first] += 1;",
                                "int32_t(sy_float_to_int64(count[ow - first] != 0 ? (sum[ow - first] / "
                                "double(count[ow - first])) : 0.0))"});
}

// A concatenate of three parts is a declared local and an if / else if /
// else chain in the IR itself; a broadcast read makes a row loop whose
// inner loop is simd.
TEST(KernelIr, TheElementLoweringBuildsBranchesAndLoopsAsStatements) {
  KernelSource source = generate_cpu_kernel(
      fused_primitive("def @main(%a: Tensor[(2, 3), float32], %b: Tensor[(2, 5), float32], "
                      "%c: Tensor[(2, 1), float32], %d: Tensor[(9), float32]) {\n"
                      "  %0 = (%a, %b, %c);\n  %1 = concatenate(%0, axis=1);\n  add(%1, %d)\n}\n",
                      "concat.sy"),
      "k");
  ASSERT_TRUE(source.kernel_ir);
  const ki::Kernel& kernel = *source.kernel_ir;
  ASSERT_EQ(kernel.body.size(), 1u);
  EXPECT_EQ(kernel.body[0]->kind, ki::StmtKind::kParallel);
  EXPECT_FALSE(kernel.outputs_may_alias_inputs);  // concatenate moves elements
  EXPECT_EQ(find_stmts(kernel.body, ki::StmtKind::kDeclare).size(), 1u);
  std::vector<const ki::StmtNode*> ifs = find_stmts(kernel.body, ki::StmtKind::kIf);
  ASSERT_EQ(ifs.size(), 2u);  // the else of the first is the second
  ASSERT_EQ(ifs[0]->orelse.size(), 1u);
  EXPECT_EQ(ifs[0]->orelse[0].get(), ifs[1]);
  EXPECT_EQ(find_stmts(kernel.body, ki::StmtKind::kAssign).size(), 3u);
  std::vector<const ki::StmtNode*> loops = find_stmts(kernel.body, ki::StmtKind::kFor);
  ASSERT_EQ(loops.size(), 2u);
  EXPECT_EQ(loops[0]->name, "row");
  EXPECT_EQ(loops[1]->loop, ki::LoopKind::kSimd);
  EXPECT_NE(source.code.find("} else if ("), std::string::npos) << source.code;
}

// Two primitives that differ only in index-only operators (a reshape there
// and back) loop identically: generate_kernels keeps one kernel for both,
// named after the kernel IR's hash.
TEST(KernelIr, CallsWithTheSameKernelIrShareOneKernel) {
  Function plain = fused_primitive("def @main(%x: Tensor[(4, 5), float32]) {\n  nn.relu(%x)\n}\n", "a.sy");
  Function reshaped = fused_primitive(
      "def @main(%x: Tensor[(4, 5), float32]) {\n  %0 = reshape(%x, newshape=[20]);\n  %1 = nn.relu(%0);\n"
      "  reshape(%1, newshape=[4, 5])\n}\n",
      "b.sy");
  CompilationConfig config = CompilationConfig::parse("cpu:0");
  LoweredProgram program;
  for (const Function& f : {plain, reshaped, plain}) {
    LoweredKernelCall call;
    call.primitive = f;
    call.base_name = "fused_nn_relu";
    program.kernel_calls.push_back(call);
  }
  generate_kernels(program, config);
  ASSERT_EQ(program.kernel_sources.size(), 1u);
  for (const LoweredKernelCall& call : program.kernel_calls) EXPECT_EQ(call.source, 0);
  const KernelSource& source = program.kernel_sources[0];
  EXPECT_EQ(source.name.size(), std::string("fused_nn_relu_").size() + 16) << source.name;
  EXPECT_NE(source.code.find("extern \"C\" void " + source.name + "("), std::string::npos) << source.code;
}

}  // namespace kernel_ir_test
}  // namespace switchyard::testing
