// Preparing, compiling and checking kernel test cases.
#include "kernel_cases.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

#include "codegen/kernel_code.h"
#include "interp/evaluate.h"
#include "ir/functor.h"
#include "targets/cpu/compiler/codegen_cpu.h"
#include "text/parser.h"
#include "transform/fuse_ops.h"
#include "transform/infer_type.h"

namespace switchyard::testing {

namespace {

NDArray random_array(const TensorTypeNode& type, const KernelCase& spec, std::mt19937& rng) {
  NDArray a(type.dtype, type.shape);
  for (int64_t i = 0; i < a.numel(); ++i) {
    if (dtype_is_float(type.dtype)) {
      a.set_from_double(i, std::uniform_real_distribution<double>(spec.low, spec.high)(rng));
    } else if (type.dtype == DType::kBool) {
      a.set_from_double(i, double(rng() % 2));
    } else {
      int64_t low = dtype_is_unsigned(type.dtype) ? std::max<int64_t>(spec.int_low, 0) : spec.int_low;
      a.set_from_double(i, double(std::uniform_int_distribution<int64_t>(low, spec.int_high)(rng)));
    }
  }
  return a;
}

}  // namespace

PreparedCase prepare_case(const KernelCase& spec, int seed) {
  PreparedCase p;
  p.spec = spec;
  p.module = infer_type(parse_module(spec.text, spec.name + ".sy"));
  const Function& main = p.module.lookup("main");
  std::mt19937 rng(uint32_t(seed) * 7919u + uint32_t(std::hash<std::string>()(spec.name)));
  for (const Var& param : main->params)
    p.inputs[param->name_hint] = random_array(*as_tensor(param->checked_type()), spec, rng);

  IRModule fused = FuseOps()(p.module);
  const CallNode* call = as<CallNode>(fused.lookup("main")->body);
  const FunctionNode* fn = call ? as<FunctionNode>(call->op) : nullptr;
  if (!fn || !fn->is_primitive())
    throw std::runtime_error(spec.name + ": @main did not fuse into a single primitive call");
  p.primitive = Function(fn);
  std::vector<bool> constant_inputs;
  for (const Expr& arg : call->args) {
    if (const VarNode* v = as<VarNode>(arg)) p.kernel_inputs.push_back(p.inputs.at(v->name_hint));
    else if (const ConstantNode* c = as<ConstantNode>(arg)) p.kernel_inputs.push_back(c->data);
    else throw std::runtime_error(spec.name + ": a kernel argument is neither a parameter nor a constant");
    const VarNode* v = as<VarNode>(arg);
    constant_inputs.push_back(is<ConstantNode>(arg) || (v && std::find(spec.weights.begin(), spec.weights.end(),
                                                                        v->name_hint) != spec.weights.end()));
  }
  const AnchorLibrary& library = spec.generated_loops ? no_anchor_library() : onednn_library();
  p.source = generate_cpu_kernel_with(library, p.primitive, "kernel_" + identifier(spec.name), constant_inputs);
  return p;
}

CaseBatch build_cases(const std::vector<KernelCase>& specs, const std::string& label) {
  CaseBatch batch;
  std::vector<KernelSource> sources;
  for (const KernelCase& spec : specs) {
    batch.cases.push_back(prepare_case(spec));
    sources.push_back(batch.cases.back().source);
  }
  batch.library = KernelLibrary::build(sources, label);
  return batch;
}

std::string compare_arrays(const NDArray& actual, const NDArray& expected, double tolerance) {
  if (actual.dtype() != expected.dtype() || actual.shape() != expected.shape())
    return "got " + std::string(dtype_name(actual.dtype())) + actual.shape_string() + ", expected " +
           dtype_name(expected.dtype()) + expected.shape_string();
  size_t bytes = size_t(dtype_bytes(actual.dtype()));
  for (int64_t i = 0; i < actual.numel(); ++i) {
    double a = actual.get_as_double(i), e = expected.get_as_double(i);
    // Integers agree exactly (a double would blur 64-bit values apart by less than 2^11).
    if (!dtype_is_float(actual.dtype()) &&
        std::memcmp(static_cast<const uint8_t*>(actual.data()) + size_t(i) * bytes,
                    static_cast<const uint8_t*>(expected.data()) + size_t(i) * bytes, bytes) != 0)
      return "element " + std::to_string(i) + ": got " + std::to_string(a) + ", expected " + std::to_string(e);
    if (std::isnan(a) && std::isnan(e)) continue;
    if (std::fabs(a - e) <= tolerance * (1 + std::fabs(e))) continue;
    if (std::isinf(e) && a == e) continue;
    return "element " + std::to_string(i) + ": got " + std::to_string(a) + ", expected " + std::to_string(e);
  }
  return "";
}

void expect_matches_interpreter(const CaseBatch& batch, const PreparedCase& prepared, const TestServices& services) {
  SCOPED_TRACE(prepared.spec.name);
  std::vector<NDArray> expected = flatten_value(evaluate(prepared.module, prepared.inputs));
  std::vector<NDArray> actual = run_kernel(*batch.library, prepared.source, prepared.kernel_inputs, services);
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    std::string difference = compare_arrays(actual[i], expected[i], prepared.spec.tolerance);
    EXPECT_EQ(difference, "") << "output " << i << " of " << prepared.spec.name << "\n" << prepared.source.code;
  }
}

}  // namespace switchyard::testing
