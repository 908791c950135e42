// Lowering: the planned, fused entry function becomes a flat program of
// steps (kernel calls, device copies, moves, if) over buffers, each buffer a
// tensor on one device. Memory planning and the AOT entry function both read
// this form; neither looks at the IR again.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "codegen/kernel.h"
#include "ir/compilation_config.h"
#include "ir/module.h"
#include "lower/memory_plan.h"

namespace switchyard {

struct LoweredBuffer {
  enum class Kind : uint8_t {
    kIntermediate,  // planned into an arena
    kInput,         // SyRunArgs::inputs[index]
    kOutput,        // SyRunArgs::outputs[index]
    kWeight,        // LoweredProgram::weights[index], inside its device's weight block
  };
  Kind kind = Kind::kIntermediate;
  int index = -1;  // for inputs, outputs and weights
  int device = 0;  // index into the build's devices
  std::string scope = "global";
  TensorType type;
  std::string label;  // what it holds, for comments: "%x", "nn.relu(%1) @cpu:0"
  Span span;
  // A oneDNN format ("nChw8c", "nhwc") when only oneDNN primitives read and
  // write it (the IR value's layout, from PlanLayouts), with its padded size
  // (apply_layouts); empty: dense row-major.
  std::string layout;
  uint64_t layout_bytes = 0;
  uint64_t bytes() const { return layout.empty() ? uint64_t(type->nbytes()) : layout_bytes; }
};

struct LoweredStep {
  enum class Kind : uint8_t {
    kKernel,   // runs kernel call `index` (LoweredProgram::kernel_calls)
    kCopy,     // copies inputs[0] to outputs[0] across devices: copy `index`
    kMove,     // copies inputs[0] (from byte `offset`) to outputs[0] on one device (if results, repeated outputs, slices)
    kIfBegin,  // branches on the bool in inputs[0]; the then-steps follow
    kElse,     // the else-steps follow
    kIfEnd,
  };
  Kind kind = Kind::kKernel;
  int index = -1;
  std::vector<int> inputs;   // buffers read
  std::vector<int> outputs;  // buffers written
  // For kernels: inputs whose storage outputs[0] may take over (element-wise
  // kernels only; the memory planner decides).
  std::vector<int> in_place_candidates;
  Span span;
  // For moves: where in inputs[0] the bytes copied to outputs[0] start (a
  // contiguous slice; 0 for a whole buffer).
  uint64_t offset = 0;
};

// One call site of a kernel, in manifest "kernels" order.
struct LoweredKernelCall {
  Function primitive;     // the fused function it runs, or null for:
  Call operator_call;     // an operator call fusion left alone (a one-operator kernel)
  int device = 0;
  Span span;              // the call's span
  std::string base_name;  // readable: the operators inside, e.g. "fused_nn_dense_add"
  int source = -1;        // index into LoweredProgram::kernel_sources, set by generate_kernels
  // The source's primitive with the layouts of this call's buffers (apply_layouts).
  std::optional<PrimitiveSpec> dnnl_primitive;
};

struct LoweredCopy {
  int src_device = 0;
  int dst_device = 0;
  uint64_t bytes = 0;
  Span span;
};

struct LoweredWeight {
  NDArray data;
  int device = 0;
  std::string name;  // unique: "const_0", ...
  Span span;
};

struct LoweredProgram {
  std::string entry;
  std::vector<LoweredBuffer> buffers;
  std::vector<LoweredStep> steps;
  std::vector<LoweredKernelCall> kernel_calls;
  std::vector<KernelSource> kernel_sources;  // distinct kernels, filled by generate_kernels
  std::vector<LoweredCopy> copies;
  std::vector<LoweredWeight> weights;  // a constant used on two devices appears twice
  std::vector<int> inputs;             // buffer of each entry parameter
  std::vector<std::string> input_names;
  std::vector<int> outputs;            // buffer of each output (the result, tuples flattened)
  std::vector<std::string> output_names;  // ir/output_names.h
};

// Lowers `entry` of a module that passed check_lowerable. Global functions
// are expanded at each call. Throws Error(kBackend) naming the node when a
// value lives on a device the config lacks.
LoweredProgram lower_entry(const IRModule& mod, const std::string& entry, const CompilationConfig& config);

// How a kernel was generated, for the manifest: "dnnl" when it calls
// oneDNN, "cuda_library" when it calls cuBLASLt or cuDNN, "loops" otherwise.
std::string kernel_kind(const KernelSource& kernel);

// Generates the code of every kernel call for its device's target (an
// operator call outside primitive functions becomes a one-operator
// primitive function first), sharing one kernel among calls with the same
// kernel IR (or, for kernels not built as kernel IR, code) and target, and
// naming each kernel after its operators and a hash of that identity.
// Throws Error(kBackend) for a target without a code generator, or from the
// generator.
void generate_kernels(LoweredProgram& program, const CompilationConfig& config);

// Gives the host buffers that copies move to or from a device the host
// cannot address (a GPU) the memory scope "pinned" (page-locked memory),
// unless the model gave them another scope than "global". Run before memory
// planning: arenas are per (device, scope).
void plan_pinned_buffers(LoweredProgram& program, const CompilationConfig& config);

// Gives each window primitive (a oneDNN convolution or pool alone) the
// layouts of the buffers it reads as source or residual and writes, and each
// laid-out buffer its padded size. Throws Error(kBackend) naming the value
// when a buffer has a layout (from the IR, PlanLayouts or a hand-written
// module) that is not an intermediate 4-d float32 tensor read and written
// only that way. Run after generate_kernels, before memory planning.
void apply_layouts(LoweredProgram& program);
// Leaves a primitive-only kernel's output free to take over only the
// residual its sum post-op adds (never a buffer the primitive reads);
// apply_layouts calls it.
void restrict_primitive_in_place(LoweredProgram& program);

// Asks for the runtime's own kernels in each call with constant weights they
// compute faster than oneDNN: the Winograd convolution
// (targets/cpu/runtime/winograd_convolution.h: 3x3, stride 1, blocked activations) and
// the packed matmul (targets/cpu/runtime/packed_matmul.h). Run after apply_layouts.
void choose_primitive_algorithms(LoweredProgram& program);

// Fuses each oneDNN 1x1 convolution whose result only the depthwise
// convolution of the next step reads (MobileNetV2's expand and depthwise
// 3x3) into one primitive with a depthwise post-op, where oneDNN runs that
// as one kernel on this CPU (made for default_thread_count() threads); the
// buffer between them is then no step's. Its weights and bias must be
// weights or inputs. Run after choose_primitive_algorithms, before memory
// planning.
void fuse_depthwise_convolutions(LoweredProgram& program);

// The liveness problem of the program's intermediate buffers: one arena per
// (device, scope) in ascending order, live ranges in step order (an if's two
// branches in sequence, which only overestimates), in-place candidates of
// kernels whose code allows it. `tensor_of_buffer` receives each buffer's
// tensor index, -1 for buffers outside the arenas.
MemoryProblem memory_problem(const LoweredProgram& program, std::vector<int>* tensor_of_buffer);

}  // namespace switchyard
