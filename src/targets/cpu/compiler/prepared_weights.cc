#include "targets/cpu/compiler/prepared_weights.h"

#include <map>

#include "runtime/runtime_error.h"
#include "runtime/thread_pool.h"
#include "support/error.h"
#include "targets/cpu/runtime/dnnl_primitive.h"

namespace switchyard {

namespace {

// Whether weight buffer `buffer` is read by anything but primitive-only CPU
// kernels, each reading it as its primitive's weights and nowhere else.
bool read_otherwise(const LoweredProgram& program, const CompilationConfig& config, int buffer) {
  for (int output : program.outputs)
    if (output == buffer) return true;
  for (const LoweredStep& step : program.steps) {
    int uses = 0, weights_position = -1;
    for (size_t i = 0; i < step.inputs.size(); ++i)
      if (step.inputs[i] == buffer) {
        ++uses;
        weights_position = int(i);
      }
    if (uses == 0) continue;
    if (step.kind != LoweredStep::Kind::kKernel || uses > 1) return true;
    const LoweredKernelCall& call = program.kernel_calls[size_t(step.index)];
    const KernelSource& source = program.kernel_sources.at(size_t(call.source));
    if (!source.library_only() || config.devices[size_t(call.device)]->kind() != DeviceKind::kCPU) return true;
    const PrimitiveSpec& spec = call.dnnl_primitive ? *call.dnnl_primitive : *source.primitive;
    // The primitive may read the input once more: a sum or binary post-op
    // adding the weights themselves.
    if (spec.weights_input != weights_position || spec.src_input == weights_position ||
        spec.bias_input == weights_position)
      return true;
    for (const PrimitivePostOp& post : spec.post_ops)
      if (post.kind != PrimitivePostOp::Kind::kEltwise && post.input == weights_position) return true;
  }
  return false;
}

}  // namespace

void mark_cpu_prepared_weights(const LoweredProgram& program, Manifest& manifest, const CompilationConfig& config,
                               WeightPreparers& preparers) {
  std::vector<int> buffer_of_weight(manifest.weights.size(), -1);
  for (size_t b = 0; b < program.buffers.size(); ++b)
    if (program.buffers[b].kind == LoweredBuffer::Kind::kWeight)
      buffer_of_weight.at(size_t(program.buffers[b].index)) = int(b);
  std::vector<bool> refused(manifest.weights.size(), false);
  std::map<std::pair<int, int>, std::shared_ptr<const DnnlPrimitive>> made;  // (primitive, device)
  for (const ManifestKernel& kernel : manifest.kernels) {
    if (kernel.weights < 0) continue;
    const size_t w = size_t(kernel.weights);
    if (refused[w]) continue;
    if (buffer_of_weight[w] < 0 || read_otherwise(program, config, buffer_of_weight[w])) {
      refused[w] = true;
      continue;
    }
    std::shared_ptr<const DnnlPrimitive>& primitive = made[{kernel.primitive, kernel.device}];
    if (!primitive) {
      const int threads = manifest.devices[size_t(kernel.device)].threads;
      try {
        primitive = std::make_shared<DnnlPrimitive>(manifest.primitives[size_t(kernel.primitive)],
                                                    threads > 0 ? threads : default_thread_count());
      } catch (const RuntimeError& e) {
        throw Error(ErrorKind::kBackend, "kernel '" + kernel.name + "' (" + kernel.span + "): " + e.what());
      }
    }
    const std::string layout = primitive->prepared_weights_layout();
    ManifestWeight& weight = manifest.weights[w];
    if (layout.empty() || (preparers[w] && weight.prepared != layout)) {
      refused[w] = true;
      continue;
    }
    weight.prepared = layout;
    weight.nbytes = primitive->prepared_weights_bytes();
    preparers[w].prepare = [primitive](const void* plain, void* prepared) {
      primitive->prepare_weights_into(plain, prepared);
    };
    preparers[w].granule = primitive->prepared_weights_granule();
    if (preparers[w].granule > 0)
      preparers[w].prepare_range = [primitive](const void* plain, uint64_t begin, uint64_t end, void* prepared) {
        primitive->prepare_weights_range(plain, size_t(begin), size_t(end), prepared);
      };
  }
  for (size_t w = 0; w < manifest.weights.size(); ++w)
    if (refused[w] && preparers[w]) {
      manifest.weights[w].prepared.clear();
      preparers[w] = {};
    }
}

}  // namespace switchyard
