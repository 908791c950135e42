// Which heavy operators a build runs as generated loops: a convolution,
// pool or matrix product that no library primitive took (a dtype or
// attribute oneDNN refuses) runs as plain loops, often tens of times slower
// than the primitive, and the user otherwise learns it only from the
// latency. The build warns, naming the node, when such an operator carries
// a noticeable share of the model's work.
#pragma once

#include <string>
#include <vector>

#include "ir/expr.h"
#include "lower/lower.h"

namespace switchyard {

// The share of the model's estimated floating-point work above which a
// window or product operator in a generated loop is warned about.
constexpr double kCostlyLoopFraction = 0.05;

// The name the build's warnings about costly loops are reported under
// (DiagnosticSink::Diagnostic::pass): the command line keeps them with a
// cached artifact, which would hold the same loops.
inline constexpr const char* kCostlyLoopCheck = "CostlyLoopCheck";

// An estimate of the arithmetic of one operator call from its types and
// attributes: 2 * multiply-adds for nn.conv2d, nn.dense, matmul and
// nn.batch_matmul; one operation per window element read for the pools;
// one per result element for everything else (element-wise work, layout
// changes), which only weighs the total.
double estimated_flops(const CallNode& call);

// Whether `call` (or the operator named `op`) is a convolution, pool or
// matrix product: an operator a library primitive runs far faster than a
// generated loop.
bool is_window_or_product(const CallNode& call);
bool is_window_or_product_op(const std::string& op);

// One rendered warning ("SPAN: warning: ...", from render_diagnostic) for
// each window or product operator that runs in a kernel generated as loops
// and carries more than `fraction` of the estimated work of every kernel
// call in `program`, largest first. Run after generate_kernels.
std::vector<std::string> costly_loop_warnings(const LoweredProgram& program,
                                              double fraction = kCostlyLoopFraction);

}  // namespace switchyard
