// One CPU kernel under construction, shared by the generators of each kind
// of fused group, which build it as kernel IR: element-wise loops
// (elementwise.cc), reductions (reduction.cc), normalisations
// (normalization.cc), oneDNN anchors (library_anchor.cc) and plain-loop
// anchors for dtypes oneDNN lacks (direct_anchor.cc). codegen_cpu.cc prepares
// the function, dispatches and renders the kernel.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "codegen/element_lowering.h"
#include "codegen/kernel.h"
#include "codegen/kernel_code.h"
#include "ir/expr.h"
#include "kernel_ir/kernel.h"
#include "runtime/primitive_spec.h"

namespace switchyard {

struct CpuKernel {
  std::string name;                  // the C symbol
  Function function;                 // tensor parameters only (tuples flattened)
  const CallNode* master = nullptr;  // the anchor or reduction, if any
  const CallNode* root = nullptr;    // the body: the call producing the result
  std::vector<bool> constant_inputs;  // by parameter: a weight, unchanged between runs
  std::vector<TensorType> outputs;   // the result, flattened
  // The oneDNN primitive it runs through services->run_primitive, if any;
  // `library_only` when that is all it does (it then has no code: the entry
  // function asks the runtime to run the primitive directly).
  std::optional<PrimitiveSpec> primitive;
  bool library_only = false;
  const AnchorLibrary* library = nullptr;  // what `primitive` runs on (the target's)
  // The layout an element-wise kernel reads and writes its tensors of the
  // result's shape in (PlanLayouts' choice; "" is dense row-major).
  std::string layout;

  // Buffer names of parameter i and output j.
  std::string input(size_t i) const;
  std::string output(size_t j) const;
  // The buffer of the master's argument `arg`, a parameter (one parameter
  // may be several arguments: batch_norm(%x, %s, %s, %s, %v)).
  std::string operand(size_t arg) const;
  DType output_dtype(size_t j = 0) const { return outputs.at(j)->dtype; }

  bool has_epilogue() const { return root != master; }

  // The kernel IR of this kernel's parameters and outputs, no statements yet.
  kernel_ir::Kernel kernel_ir_buffers() const;
  // An element lowering appending to `out` that reads every parameter from its buffer.
  ElementLowering lowering(std::vector<kernel_ir::Stmt>& out, int& numbering) const;
  // Appends the store of the result element `at` into output 0: the
  // epilogue applied to the master's `value` there.
  void lower_store_result(std::vector<kernel_ir::Stmt>& out, int& numbering, const kernel_ir::Expr& value,
                          const IndexAt& at) const;
  bool result_is_empty() const;
};

// Chunks of element loops hold at least this many elements.
constexpr int64_t kElementGrain = 1 << 13;

// Appends to `kernel` a parallel loop over every element of a tensor of
// `shape`, storing value(lowering, index) into buffer `output`. Loops over a
// flat offset when that needs no division to find coordinates, otherwise
// over rows with a contiguous inner loop; in `layout` (nhwc, channel
// blocks) over its rows, every tensor of `shape` read and written in it.
// Returns whether it looped over the flat offset.
using LoweredValueAt = std::function<kernel_ir::Expr(ElementLowering&, const IndexAt&)>;
bool lower_element_loop(const CpuKernel& k, kernel_ir::Kernel& kernel, const std::string& loop_name,
                        const std::string& comment, const std::vector<int64_t>& shape, const std::string& output,
                        const LoweredValueAt& value, const std::string& layout = "");

// The kernel IR of an element-wise group (no master): a loop per output.
kernel_ir::Kernel lower_elementwise_kernel(const CpuKernel& k);
// The kernel IR of a reduction (sum, mean, max) with its prologue and epilogue.
kernel_ir::Kernel lower_reduction_kernel(const CpuKernel& k);
// The kernel IR of nn.softmax, nn.layer_norm or nn.batch_norm with its epilogue.
kernel_ir::Kernel lower_normalization_kernel(const CpuKernel& k);
// The kernel IR of cumsum or topk_indices with its epilogue (scan.cc).
kernel_ir::Kernel lower_scan_kernel(const CpuKernel& k);

// A tensor seen as (outer, length, inner) around one axis, and the kernel IR
// of the per-axis kernels over it (normalization.cc): a parallel loop's
// rows are the (outer, inner) pairs, each a line of `length` elements
// `inner` apart.
struct AxisView {
  int64_t outer = 1, length = 1, inner = 1;
};
AxisView axis_view(const std::vector<int64_t>& shape, int64_t axis);
// The offset of the first element of row `row` (a variable).
kernel_ir::Expr row_start(const AxisView& v);
// The loop over rows `begin` to `end`, `body` after naming `base`, row_start.
kernel_ir::Stmt over_rows(const AxisView& v, std::vector<kernel_ir::Stmt> body);
// Rows per parallel chunk for rows of `length` elements.
int64_t row_grain(int64_t length);
// Float32 products, convolution and pooling through a oneDNN primitive
// (k.primitive): the kernel IR that runs it and then the epilogue it does not
// fuse; nullopt when the primitive is the whole kernel (k.library_only) or
// oneDNN does not make it (then it is a plain-loop anchor).
std::optional<kernel_ir::Kernel> lower_dnnl_kernel(CpuKernel& k);
// The same anchors as plain loops, any dtype.
kernel_ir::Kernel lower_direct_kernel(const CpuKernel& k);
// A kernel of one layout_convert of a float32 parameter as a oneDNN reorder
// (k.primitive, k.library_only): its layouts are its buffers' (apply_layouts).
// False where the kernel is anything else or the library makes no reorder:
// it is then a copy loop.
bool lower_layout_conversion(CpuKernel& k);
// Whether oneDNN computes this anchor call (float32, supported attributes).
bool dnnl_handles(const CallNode& anchor);


}  // namespace switchyard
