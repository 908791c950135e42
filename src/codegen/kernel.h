// The contract between kernel generation (codegen/, targets/*/compiler/codegen_*) and the AOT
// stage (lower/aot_codegen): a primitive function (FuseOps output, attribute
// Primitive=1) placed on one device becomes one C++ kernel.
//
// Every kernel has the C signature
//   extern "C" void NAME(const void* const* inputs, void* const* outputs,
//                        const SyRuntimeServices* services, int device_index);
// `inputs` are the primitive function's parameters in order, with tuple-typed
// parameters flattened field by field; `outputs` are the tensors of its result
// (a tuple result flattened in order). Buffers are dense, row-major, 64-byte
// aligned, and never alias one another unless the MemoryPlan says an output
// may reuse an input (element-wise kernels read each input element before
// writing the same output element, so in-place is safe for them).
// Parallel work goes through services->parallel_for with `device_index`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/expr.h"
#include "kernel_ir/kernel.h"
#include "runtime/primitive_spec.h"

namespace switchyard {

// How the entry launches one function of a kernel's device image, through
// services->launch_kernel: `grid` blocks of `block` threads. A target that
// runs device images (CUDA) fills these from its own renderer's launches.
struct ImageLaunch {
  std::string function;  // the image's extern "C" symbol
  int64_t grid = 0;      // blocks
  int block = 0;         // threads per block
};

struct KernelSource {
  std::string name;                 // C symbol, unique within an artifact
  std::string code;                 // a complete C++ translation unit defining it
  std::vector<TensorType> inputs;   // flattened, in call order
  std::vector<TensorType> outputs;  // flattened, in order
  bool elementwise_in_place_safe = false;  // outputs[0] may share inputs[i] of the same type
  // The layout its loops read and write the tensors of its result's shape
  // in ("nhwc"; "" is dense row-major), for an element-wise kernel.
  std::string layout;
  // The inputs of other shapes it reads in that layout: a channel
  // concatenation's parts (codegen/channel_concatenation.h).
  std::vector<int> laid_out_parts;
  Span span;                        // the fused span of the function's nodes
  std::string target;               // the target it was generated for ("cpu", ...)
  // The oneDNN primitive the kernel runs through services->run_primitive.
  // A kernel with a primitive and no code is the primitive alone: the entry
  // function calls run_primitive with the kernel's buffers instead.
  std::optional<PrimitiveSpec> primitive;
  // The kernel IR `code` was rendered from (every kernel with code): with
  // the target, the kernel's identity.
  std::optional<kernel_ir::Kernel> kernel_ir;
  // A kernel for a device that runs device images (CUDA): the functions
  // the entry launches in order, whether they report faults
  // through the word after the buffers, and the compiled image (a cubin)
  // the artifact stores beside model.so.
  std::vector<ImageLaunch> launches;
  bool may_fault = false;
  std::vector<uint8_t> image;
  bool library_only() const { return primitive.has_value() && code.empty(); }
};

// The operators of a primitive function in evaluation order, for comments
// and messages: "nn.conv2d -> add -> nn.relu".
std::string operator_chain(const Function& fn);

// Whether the kernel is for a CPU target (its primitive, if any, oneDNN's).
bool runs_on_cpu(const KernelSource& kernel);

// The library a kernel's anchor calls, as the kernel generator needs to know
// it: oneDNN on a CPU, cuBLASLt and cuDNN on a GPU.
struct AnchorLibrary {
  // Whether it makes a primitive of `spec` (with the epilogue's post-ops
  // where the spec has them): an anchor it refuses becomes loops.
  bool (*makes)(const PrimitiveSpec& spec);
  // Whether the kernel may keep the primitive's result in a scratch buffer
  // (for an epilogue that changes the dtype); without, that anchor is loops.
  bool scratch;
  // Whether it makes the primitive and applies its post-ops inside its own
  // kernel, as it writes each result tile (oneDNN's brgemm), rather than in
  // a pass over the whole result after it, which a generated loop beats.
  bool (*post_ops_in_kernel)(const PrimitiveSpec& spec);
  // Whether it runs `spec` only with its slow reference loops (oneDNN's
  // `ref:` implementations, 10-100x its jit kernels): a post-op that would
  // send a primitive there runs as a loop after it instead.
  bool (*runs_reference)(const PrimitiveSpec& spec);
};
// Each target names its own: onednn_library() (targets/cpu/compiler),
// cuda_libraries() (targets/cuda/compiler).

// The kernel IR (or, for a primitive alone, the spec) of a primitive
// function, its anchor calling `library`; `code` is left for the target's
// renderer. Throws Error(kBackend) naming the operator and span when an
// operator has no kernel.
KernelSource lower_kernel_source(const Function& primitive, const std::string& name,
                                 const std::vector<bool>& constant_inputs, const AnchorLibrary& library);

}  // namespace switchyard
