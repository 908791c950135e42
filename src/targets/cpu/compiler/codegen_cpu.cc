// The CPU target's code generator: a fused group's kernel IR (one lowering
// for every target, codegen/lower_kernel.cc) with oneDNN as the anchors'
// library, rendered as C++ that the host compiler builds into model.so.
#include "targets/cpu/compiler/codegen_cpu.h"

#include <mutex>
#include <unordered_map>

#include "runtime/primitive_json.h"
#include "support/error.h"
#include "targets/cpu/compiler/cpu_render.h"
#include "targets/cpu/compiler/prepared_weights.h"
#include "targets/cpu/runtime/dnnl_primitive.h"
#include "toolchain/toolchain.h"

namespace switchyard {

namespace {

// oneDNN's answer for each spec, asked once per process: it makes the whole
// primitive (generating its kernel), and PlanLayouts asks of the same
// kernels as kernel generation does.
std::string dnnl_implementation_once(const PrimitiveSpec& spec) {
  static std::mutex mutex;
  static auto* answers = new std::unordered_map<std::string, std::string>();
  std::string key = primitive_spec_text(spec);
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = answers->find(key); it != answers->end()) return it->second;
  }
  std::string implementation = dnnl_implementation(spec);
  std::lock_guard<std::mutex> lock(mutex);
  return answers->emplace(key, implementation).first->second;
}

bool dnnl_makes_once(const PrimitiveSpec& spec) { return !dnnl_implementation_once(spec).empty(); }

// oneDNN's brgemm kernels apply post-ops to each tile they write; its other
// matmuls (GEMM-based) in a pass over the result after.
bool dnnl_post_ops_in_kernel(const PrimitiveSpec& spec) { return dnnl_implementation_once(spec).rfind("brg", 0) == 0; }

}  // namespace

bool dnnl_runs_reference_once(const PrimitiveSpec& spec) {
  return dnnl_is_reference_implementation(dnnl_implementation_once(spec));
}

const AnchorLibrary& onednn_library() {
  static const AnchorLibrary library{dnnl_makes_once, true, dnnl_post_ops_in_kernel, dnnl_runs_reference_once};
  return library;
}

const AnchorLibrary& no_anchor_library() {
  static const AnchorLibrary library{[](const PrimitiveSpec&) { return false; }, false,
                                     [](const PrimitiveSpec&) { return false; }};
  return library;
}

const AnchorLibrary& cpu_anchor_library(const Target* target) {
  std::string libraries = target ? target->option("-libs") : "";
  if (libraries.empty() || libraries == "onednn") return onednn_library();
  if (libraries == "none") return no_anchor_library();
  throw Error(ErrorKind::kUsage, "target '" + target->str() + "': -libs takes 'onednn' or 'none', got '" +
                                     libraries + "'");
}

KernelSource generate_cpu_kernel(const Function& primitive, const std::string& name,
                                 const std::vector<bool>& constant_inputs) {
  const AnchorLibrary& library = cpu_anchor_library(primitive->virtual_device()->target());
  return generate_cpu_kernel_with(library, primitive, name, constant_inputs);
}

KernelSource generate_cpu_kernel_with(const AnchorLibrary& library, const Function& primitive, const std::string& name,
                                      const std::vector<bool>& constant_inputs) {
  KernelSource source = lower_kernel_source(primitive, name, constant_inputs, library);
  if (source.kernel_ir) source.code = render_cpu_kernel(*source.kernel_ir, source.name);
  return source;
}


namespace {

void render_cpu(KernelSource& kernel) { kernel.code = render_cpu_kernel(*kernel.kernel_ir, kernel.name); }

// Its -mcpu option picks the CPU model.
std::vector<std::string> cpu_compile_flags(const Target* target) { return Toolchain::cpu_flags(target->option("-mcpu")); }

void cpu_record_requirements(const Target* target, const Toolchain& toolchain, ManifestDevice& device) {
  device.cpu_features = toolchain.cpu_features(target->option("-mcpu"));
}

}  // namespace

const CodeGenerator& cpu_code_generator() {
  static const CodeGenerator generator{
      DeviceKind::kCPU, generate_cpu_kernel, render_cpu, cpu_compile_flags, nullptr, "", cpu_record_requirements,
      mark_cpu_prepared_weights,
  };
  return generator;
}

}  // namespace switchyard
