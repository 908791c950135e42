// Kernel generation for every kernel call of a lowered program, by target.
#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>

#include "backend/lower.h"
#include "ir/structural_equal.h"
#include "runtime/primitive_json.h"
#include "runtime/sha256.h"
#include "support/error.h"

namespace switchyard {

namespace {

// The code generator of a device's target.
KernelSource generate_for_target(const LoweredKernelCall& call, const VirtualDevice* device,
                                 const std::string& name, const std::vector<bool>& constant_inputs) {
  const Target* target = device->target();
  if (target->kind() != DeviceKind::kCPU)
    throw Error(ErrorKind::kBackend,
                "no code generator for target '" + target->str() + "' (device " + device->device_name() +
                    "): this build generates CPU kernels only",
                call.span);
  return generate_cpu_kernel(call.primitive, name, constant_inputs);
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

}  // namespace

std::string kernel_kind(const KernelSource& kernel) { return kernel.primitive ? "dnnl" : "loops"; }

void generate_kernels(LoweredProgram& program, const CompilationConfig& config) {
  // A function called at several places is generated once per device; calls
  // that compute the same thing (the same primitive up to spans and devices)
  // for the same target share one kernel, so a model's repeated layers
  // compile once; calls whose code and target are identical share one too.
  // Which inputs are weights is part of a kernel's identity: oneDNN kernels
  // cache weights reordered into their preferred layout only for those.
  std::vector<std::vector<bool>> constant_inputs(program.kernel_calls.size());
  for (const LoweredStep& step : program.steps)
    if (step.kind == LoweredStep::Kind::kKernel)
      for (int b : step.inputs)
        constant_inputs[size_t(step.index)].push_back(program.buffers[size_t(b)].kind ==
                                                      LoweredBuffer::Kind::kWeight);
  using Known = std::tuple<Function, std::vector<bool>, int>;
  std::map<std::tuple<const FunctionNode*, int, std::vector<bool>>, int> by_function;
  std::unordered_map<size_t, std::vector<Known>> by_structure;
  std::map<std::string, int> by_content;  // sha256 of code and target
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
    std::vector<Known>& same_hash =
        by_structure[structural_hash(call.primitive, identity) ^ std::hash<std::string>()(target)];
    auto same = std::find_if(same_hash.begin(), same_hash.end(), [&](const Known& known) {
      return program.kernel_sources[size_t(std::get<2>(known))].target == target && std::get<1>(known) == constant &&
             structural_equal(std::get<0>(known), call.primitive, identity);
    });
    if (same != same_hash.end()) {
      call.source = std::get<2>(*same);
      by_function.emplace(key, call.source);
      continue;
    }
    // Named after its content, so an unchanged kernel keeps its name (and
    // its cached object) across builds and models.
    KernelSource draft = generate_for_target(call, device, "sy_kernel", constant);
    std::string identity = draft.code + "\ntarget: " + device->target()->str();
    if (draft.primitive) identity += "\nprimitive: " + primitive_spec_text(*draft.primitive);
    std::string hash = sha256_hex(identity.data(), identity.size());
    auto [it, inserted] = by_content.emplace(hash, int(program.kernel_sources.size()));
    if (inserted) {
      program.kernel_sources.push_back(
          generate_for_target(call, device, call.base_name + "_" + hash.substr(0, 12), constant));
      program.kernel_sources.back().target = target;
    }
    call.source = it->second;
    by_function.emplace(key, it->second);
    same_hash.emplace_back(call.primitive, constant, it->second);
  }
}

}  // namespace switchyard
