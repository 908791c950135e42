#include "lower/costly_loops.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "ir/functor.h"
#include "op/handles.h"
#include "op/linear_attrs.h"
#include "op/registry.h"
#include "op/window_attrs.h"
#include "support/error.h"

namespace switchyard {

namespace {

const std::string& op_name(const CallNode& call) {
  static const std::string none;
  const OpNode* op = as<OpNode>(call.op);
  return op ? op->name : none;
}

const TensorTypeNode* tensor_of(const Expr& e) { return e->checked_type().defined() ? as_tensor(e->checked_type()) : nullptr; }

double result_elements(const CallNode& call) {
  const TensorTypeNode* t = as_tensor(call.checked_type());
  return t ? double(t->numel()) : 0.0;
}

// The multiply-adds per result element of a product or convolution.
double reduction_length(const CallNode& call) {
  const OpNode* op = ops::called_op(call);
  const TensorTypeNode* a = tensor_of(call.args.at(0));
  if (!a || a->ndim() == 0) return 0;
  if (op == ops::conv2d()) {
    const TensorTypeNode* w = tensor_of(call.args.at(1));
    return w && w->ndim() == 4 ? double(w->shape[1] * w->shape[2] * w->shape[3]) : 0;
  }
  if (op == ops::batch_matmul() && linear_attrs(*call.attrs).transpose_a) return a->ndim() == 3 ? double(a->shape[1]) : 0;
  return double(a->shape.back());  // dense, matmul (1-D `a` included), batch_matmul
}

double window_elements(const CallNode& call) {
  WindowAttrs w = window_attrs(call);
  return double(w.pool_h) * double(w.pool_w);
}

std::string shape_text(const Expr& e) {
  const TensorTypeNode* t = tensor_of(e);
  if (!t) return "?";
  std::string text;
  for (size_t i = 0; i < t->shape.size(); ++i) text += (i ? "x" : "") + std::to_string(t->shape[i]);
  return (text.empty() ? "scalar" : text) + " " + dtype_name(t->dtype);
}

// "nn.conv2d 1x8x32x32 float16 -> 1x16x32x32 float16, groups=2": what a
// reader needs to see why no library took it.
std::string describe(const CallNode& call) {
  const OpNode* op = ops::called_op(call);
  std::string text = op_name(call) + " " + shape_text(call.args.at(0));
  if (op == ops::conv2d() || ops::is_product(op)) text += " by " + shape_text(call.args.at(1));
  text += " -> " + shape_text(Expr(&call));
  if (!ops::is_window(op)) return text;
  WindowAttrs w = window_attrs(call);
  if (w.groups != 1) text += ", groups=" + std::to_string(w.groups);
  if (w.ceil_mode) text += ", ceil_mode";
  if (w.count_include_pad) text += ", count_include_pad";
  return text;
}

std::string flops_text(double flops) {
  char text[32];
  if (flops >= 1e9) {
    std::snprintf(text, sizeof text, "%.2f GFLOPs", flops / 1e9);
  } else {
    std::snprintf(text, sizeof text, "%.2f MFLOPs", flops / 1e6);
  }
  return text;
}

}  // namespace

bool is_window_or_product_op(const std::string& name) {
  if (!find_op_def(name)) return false;
  const OpNode* op = as<OpNode>(Expr(op_get(name)));
  return ops::is_window(op) || ops::is_product(op);
}

bool is_window_or_product(const CallNode& call) {
  return ops::is_window(ops::called_op(call)) || ops::is_product(ops::called_op(call));
}

double estimated_flops(const CallNode& call) {
  const OpNode* op = ops::called_op(call);
  if (op == ops::conv2d() || ops::is_product(op)) return 2.0 * result_elements(call) * reduction_length(call);
  if (op == ops::max_pool2d() || op == ops::avg_pool2d()) return result_elements(call) * window_elements(call);
  if (op == ops::global_avg_pool2d()) {
    const TensorTypeNode* in = tensor_of(call.args.at(0));
    return in ? double(in->numel()) : 0.0;
  }
  return result_elements(call);
}

std::vector<std::string> costly_loop_warnings(const LoweredProgram& program, double fraction) {
  // Every operator call of every kernel call (a function called at several
  // places counts at each); the loops' window and product operators summed
  // per node, so a node reached twice is named once.
  struct Costly {
    const CallNode* call;
    std::string kernel;
    double flops = 0;
  };
  std::map<const CallNode*, Costly> in_loops;
  double total = 0;
  for (const LoweredKernelCall& kernel_call : program.kernel_calls) {
    if (!kernel_call.primitive || kernel_call.source < 0) continue;
    const KernelSource& source = program.kernel_sources.at(size_t(kernel_call.source));
    const bool loops = kernel_kind(source) == "loops";
    post_order_visit(kernel_call.primitive->body, [&](const Expr& e) {
      const CallNode* call = as<CallNode>(e);
      if (!call || !as<OpNode>(call->op)) return;
      double flops = estimated_flops(*call);
      total += flops;
      if (loops && is_window_or_product(*call)) {
        Costly& costly = in_loops.try_emplace(call, Costly{call, source.name}).first->second;
        costly.flops += flops;
      }
    });
  }
  std::vector<Costly> warned;
  for (const auto& [node, costly] : in_loops)
    if (total > 0 && costly.flops > fraction * total) warned.push_back(costly);
  std::sort(warned.begin(), warned.end(), [](const Costly& a, const Costly& b) { return a.flops > b.flops; });
  std::vector<std::string> warnings;
  for (const Costly& c : warned) {
    char share[16];
    std::snprintf(share, sizeof share, "%.0f%%", 100.0 * c.flops / total);
    warnings.push_back(render_diagnostic(
        c.call->span(), "warning",
        describe(*c.call) + " runs as a generated loop (kernel '" + c.kernel + "'), not a library primitive, and " +
            "carries " + share + " of the model's estimated " + flops_text(total) + ": expect it to be slow"));
  }
  return warnings;
}

}  // namespace switchyard
