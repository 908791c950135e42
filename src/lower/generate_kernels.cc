// Kernel generation for every kernel call of a lowered program, by target.
#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>

#include "ir/structural_equal.h"
#include "kernel_ir/hash.h"
#include "lower/lower.h"
#include "runtime/primitive_json.h"
#include "runtime/sha256.h"
#include "support/error.h"
#include "targets/code_generators.h"

namespace switchyard {

namespace {

// The code generator of a device's target.
KernelSource generate_for_target(const LoweredKernelCall& call, const VirtualDevice* device,
                                 const std::string& name, const std::vector<bool>& constant_inputs) {
  const Target* target = device->target();
  const CodeGenerator* generator = code_generator_for(target->kind());
  if (!generator)
    throw Error(ErrorKind::kBackend,
                "no code generator for target '" + target->str() + "' (device " + device->device_name() +
                    "): its device kind has no code generator",
                call.span);
  KernelSource source = generator->generate(call.primitive, name, constant_inputs);
  source.target = target->str();
  return source;
}

// An operator call that fusion left alone, as a one-operator primitive function.
Function wrap_operator_call(const Call& call) {
  const VirtualDevice* device = call->virtual_device();
  std::vector<Var> params;
  std::vector<Expr> args;
  std::vector<Type> param_types;
  for (size_t i = 0; i < call->args.size(); ++i) {
    const Type& type = call->args[i]->checked_type();
    params.push_back(make_var(std::string("p").append(std::to_string(i)), type, {device, call->span(), type}));
    args.push_back(params.back());
    param_types.push_back(type);
  }
  Expr body = make_call(call->op, args, call->attrs, {device, call->span(), call->checked_type()});
  return make_function(params, body, call->checked_type(), make_attrs({{"Primitive", int64_t(1)}}),
                       {device, call->span(), func_type(param_types, call->checked_type())});
}

std::string hex(size_t value) {
  static const char* digits = "0123456789abcdef";
  std::string out(16, '0');
  for (size_t i = 16; i-- > 0; value >>= 4) out[i] = digits[value & 15];
  return out;
}

// A kernel built as kernel IR is that IR (structure, no spans) on its
// target: generated once, then rendered once under a name from its hash.
int add_kernel_ir_source(LoweredProgram& program, std::unordered_map<size_t, std::vector<int>>& by_kernel_ir,
                         KernelSource draft, const std::string& base_name) {
  size_t identity = kernel_ir::hash_mix(kernel_ir::hash(*draft.kernel_ir), std::hash<std::string>()(draft.target));
  std::vector<int>& same = by_kernel_ir[identity];
  for (int known : same) {
    const KernelSource& k = program.kernel_sources[size_t(known)];
    if (k.target == draft.target && kernel_ir::equal(*k.kernel_ir, *draft.kernel_ir)) return known;
  }
  draft.name = base_name + "_" + hex(identity);
  // Distinct kernels whose hashes collide still get distinct names.
  if (!same.empty()) draft.name += "_" + std::to_string(same.size());
  // Printed for its target (generate_for_target accepted it).
  code_generator_for(Target::get(draft.target)->kind())->render(draft);
  same.push_back(int(program.kernel_sources.size()));
  program.kernel_sources.push_back(std::move(draft));
  return same.back();
}

// A library primitive alone (no code, no kernel IR) is identified by its
// spec and target, and generated again under a name from that hash.
int add_primitive_source(LoweredProgram& program, std::map<std::string, int>& by_content, const LoweredKernelCall& call,
                         const VirtualDevice* device, const std::vector<bool>& constant, const KernelSource& draft) {
  std::string identity = "target: " + draft.target + "\nprimitive: " + primitive_spec_text(draft.primitive.value());
  std::string hash = sha256_hex(identity.data(), identity.size());
  auto [it, inserted] = by_content.emplace(hash, int(program.kernel_sources.size()));
  if (inserted) {
    program.kernel_sources.push_back(
        generate_for_target(call, device, call.base_name + "_" + hash.substr(0, 12), constant));
    program.kernel_sources.back().target = draft.target;
  }
  return it->second;
}

}  // namespace

std::string kernel_kind(const KernelSource& kernel) {
  if (!kernel.primitive) return "loops";
  return runs_on_cpu(kernel) ? "dnnl" : "cuda_library";
}

void generate_kernels(LoweredProgram& program, const CompilationConfig& config) {
  // A function called at several places is generated once per device; calls
  // that compute the same thing (the same primitive up to spans and devices)
  // for the same target share one kernel, so a model's repeated layers
  // compile once; calls whose kernel IR (or, for a library primitive alone,
  // primitive spec) and target are identical share one too.
  // Which inputs are weights is part of a kernel's identity: oneDNN kernels
  // cache weights reordered into their preferred layout only for those.
  std::vector<std::vector<bool>> constant_inputs(program.kernel_calls.size());
  for (const LoweredStep& step : program.steps)
    if (step.kind == LoweredStep::Kind::kKernel)
      for (int b : step.inputs)
        constant_inputs[size_t(step.index)].push_back(program.buffers[size_t(b)].kind ==
                                                      LoweredBuffer::Kind::kWeight);
  // The layout an element-wise kernel is generated for is part of its
  // identity too (spans and devices are not).
  using Known = std::tuple<Function, std::vector<bool>, int, std::string>;
  std::map<std::tuple<const FunctionNode*, int, std::vector<bool>>, int> by_function;
  std::unordered_map<size_t, std::vector<Known>> by_structure;
  std::map<std::string, int> by_content;  // sha256 of primitive spec and target
  std::unordered_map<size_t, std::vector<int>> by_kernel_ir;  // kernel IR hash and target
  const StructuralEqualOptions identity{.compare_devices = false, .compare_spans = false};
  for (size_t index = 0; index < program.kernel_calls.size(); ++index) {
    LoweredKernelCall& call = program.kernel_calls[index];
    const std::vector<bool>& constant = constant_inputs[index];
    if (!call.primitive) call.primitive = wrap_operator_call(call.operator_call);
    auto key = std::make_tuple(call.primitive.get(), call.device, constant);
    if (auto it = by_function.find(key); it != by_function.end()) {
      call.source = it->second;
      continue;
    }
    const VirtualDevice* device = config.devices.at(size_t(call.device));
    const std::string& target = device->target()->str();
    const std::string& layout = call.primitive->virtual_device()->layout();
    std::vector<Known>& same_hash =
        by_structure[structural_hash(call.primitive, identity) ^ std::hash<std::string>()(target)];
    auto same = std::find_if(same_hash.begin(), same_hash.end(), [&](const Known& known) {
      return program.kernel_sources[size_t(std::get<2>(known))].target == target && std::get<1>(known) == constant &&
             std::get<3>(known) == layout && structural_equal(std::get<0>(known), call.primitive, identity);
    });
    if (same != same_hash.end()) {
      call.source = std::get<2>(*same);
      by_function.emplace(key, call.source);
      continue;
    }
    // Named after what it computes, so an unchanged kernel keeps its name
    // (and its cached object) across builds and models.
    KernelSource draft = generate_for_target(call, device, "sy_kernel", constant);
    int source = draft.kernel_ir ? add_kernel_ir_source(program, by_kernel_ir, std::move(draft), call.base_name)
                                 : add_primitive_source(program, by_content, call, device, constant, draft);
    call.source = source;
    by_function.emplace(key, source);
    same_hash.emplace_back(call.primitive, constant, source, layout);
  }
}

}  // namespace switchyard
