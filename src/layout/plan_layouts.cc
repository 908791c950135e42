// PlanLayouts: which values stay in a library's blocked layout between
// primitives, and which layout each set of them gets. What a primitive is
// and which layouts it prefers, the pass asks the value's target
// (targets/target_description.h).
#include "layout/plan_layouts.h"

#include <algorithm>
#include <functional>
#include <map>
#include <numeric>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "codegen/channel_concatenation.h"
#include "codegen/kernel.h"
#include "ir/functor.h"
#include "ir/layout.h"
#include "ir/structural_equal.h"
#include "layout/layout_rewrite.h"
#include "op/placement_ops.h"
#include "op/registry.h"
#include "placement/placement_rules.h"
#include "support/error.h"
#include "targets/target_description.h"

namespace switchyard {

namespace {

// What a kernel that runs one oneDNN convolution or pool alone reads as
// activations, by parameter index.
struct WindowPrimitive {
  int src_input = -1;
  std::vector<int> sum_inputs;  // residuals its sum post-ops add
  // A grouped convolution's input and output channels per group (its 5-d
  // weights' dims 2 and 1); 0 for any other primitive. One each is a
  // depthwise convolution.
  int64_t group_inputs = 0;
  int64_t group_outputs = 0;
  bool grouped() const { return group_inputs > 0; }
  bool depthwise() const { return group_inputs == 1 && group_outputs == 1; }
  bool converts = false;        // a layout conversion (a reorder): it reads one layout and writes another
  // Faster writing its primitives' layout even where only dense readers
  // read its result (TargetDescription::faster_writing_a_layout).
  bool faster_in_layout = false;
  // Its source or result goes through permuted strides (a transpose fused
  // into the primitive): a layout would name another element order, so
  // that value stays dense.
  bool reads_permuted = false, writes_permuted = false;
  // A convolution followed by a generated element-wise loop over its result
  // (an epilogue no post-op took): the loop reads the parameters of the
  // result's shape element for element, as an element-wise kernel does.
  bool anchored = false;
  bool reads_as_activation(int input) const {
    return (input == src_input && !reads_permuted) ||
           std::find(sum_inputs.begin(), sum_inputs.end(), input) != sum_inputs.end();
  }
};

// The window primitive of each fused function, asked of its device's target
// once per structure (spans and devices aside), target and constant inputs,
// as kernel generation will make it.
class WindowPrimitives {
 public:
  std::optional<WindowPrimitive> of(const FunctionNode* fn, const VirtualDevice* device,
                                    const std::vector<bool>& constant) {
    const StructuralEqualOptions identity{.compare_devices = false, .compare_spans = false};
    Function function(fn);
    std::vector<Known>& same = by_structure_[structural_hash(function, identity) ^
                                             std::hash<const Target*>()(device->target())];
    for (const Known& known : same)
      if (known.target == device->target() && known.constant == constant &&
          structural_equal(known.function, function, identity))
        return known.window;
    same.push_back({function, device->target(), constant, generate(function, device, constant)});
    return same.back().window;
  }

 private:
  struct Known {
    Function function;
    const Target* target;
    std::vector<bool> constant;
    std::optional<WindowPrimitive> window;
  };

  static std::optional<WindowPrimitive> generate(const Function& fn, const VirtualDevice* device,
                                                 const std::vector<bool>& constant) {
    const TargetDescription* target = target_description_for(device->kind());
    std::optional<PrimitiveSpec> primitive = target ? target->library_primitive(fn, constant) : std::nullopt;
    bool anchored = false;
    if (!primitive && target) {
      primitive = target->anchored_convolution(fn, constant);
      anchored = primitive.has_value();
    }
    if (!primitive || primitive->kind == PrimitiveKind::kMatmul) return std::nullopt;
    const PrimitiveSpec& spec = *primitive;
    WindowPrimitive window;
    window.anchored = anchored;
    window.converts = spec.kind == PrimitiveKind::kReorder;
    window.src_input = spec.src_input;
    for (const PrimitivePostOp& post : spec.post_ops)
      if (post.kind == PrimitivePostOp::Kind::kSum) window.sum_inputs.push_back(post.input);
    window.reads_permuted = strides_permuted(spec.src);
    window.writes_permuted = strides_permuted(spec.dst);
    window.faster_in_layout = !anchored && target->faster_writing_a_layout && spec.weights_input >= 0 &&
                              size_t(spec.weights_input) < constant.size() && constant[size_t(spec.weights_input)] &&
                              target->faster_writing_a_layout(spec);
    if (spec.kind == PrimitiveKind::kConvolution && spec.weights.dims.size() == 5) {
      window.group_outputs = spec.weights.dims[1];
      window.group_inputs = spec.weights.dims[2];
    }
    return window;
  }

  std::unordered_map<size_t, std::vector<Known>> by_structure_;
};

// What reads a value, for a refused layout rule: "the kernel nn.conv2d ->
// add at model.sy:4:3".
std::string reader_name(const Expr& reader) {
  std::string what = "a " + std::string(expr_kind_name(reader->kind()));
  if (const CallNode* call = as<CallNode>(reader)) {
    if (const OpNode* op = as<OpNode>(call->op)) what = "'" + op->name + "'";
    if (as<FunctionNode>(call->op)) what = "the kernel " + operator_chain(downcast<FunctionNode>(call->op));
  }
  return what + (reader->span().defined() ? " at " + reader->span().to_string() : "");
}

bool is_float32_image(const Type& type) {
  const TensorTypeNode* tensor = as_tensor(type);
  return tensor && tensor->ndim() == 4 && tensor->dtype == DType::kFloat32;
}

// An 8-bit image, as int8 convolutions read and write: it may keep a layout
// between them and the loops beside them, but no conversion is inserted for
// one (the reorders PlanLayouts inserts are float32 only).
bool is_8bit_image(const Type& type) {
  const TensorTypeNode* tensor = as_tensor(type);
  return tensor && tensor->ndim() == 4 && (tensor->dtype == DType::kUInt8 || tensor->dtype == DType::kInt8);
}

// The parameters of an element-wise fused function that it reads element
// for element: those of its result's shape, 4-d float32 or 8-bit images
// (a QDQ model's quantize and dequantize loops). Its loop
// can run over them in channels-last order (each read at the element's own
// offset, all laid out alike), the other parameters broadcast and are read
// by the element's coordinates. Nullopt for any other function: one with an
// operator that is not element-wise or broadcast, or a constant of the
// result's shape, or no such parameter.
std::optional<std::vector<int>> elementwise_activations(const FunctionNode& fn) {
  if (!is_float32_image(fn.body->checked_type()) && !is_8bit_image(fn.body->checked_type())) return std::nullopt;
  const std::vector<int64_t>& shape = as_tensor(fn.body->checked_type())->shape;
  bool elementwise = true;
  post_order_visit(fn.body, [&](const Expr& e) {
    if (const CallNode* call = as<CallNode>(e)) {
      const OpNode* op = as<OpNode>(call->op);
      elementwise = elementwise && op &&
                    (op->def->pattern == OpPattern::kElementwise || op->def->pattern == OpPattern::kBroadcast);
    } else if (const ConstantNode* constant = as<ConstantNode>(e)) {
      elementwise = elementwise && constant->data.shape() != shape;
    } else if (!is<VarNode>(e) && !is<OpNode>(e)) {
      elementwise = false;
    }
  });
  if (!elementwise) return std::nullopt;
  std::vector<int> activations;
  for (size_t i = 0; i < fn.params.size(); ++i) {
    const TensorTypeNode* type = as_tensor(fn.params[i]->checked_type());
    if (!type) return std::nullopt;
    if (type->shape != shape) continue;
    if (type->dtype != DType::kFloat32 && type->dtype != DType::kUInt8 && type->dtype != DType::kInt8) return std::nullopt;
    activations.push_back(int(i));
  }
  if (activations.empty()) return std::nullopt;
  return activations;
}

// The parameters an anchored convolution's loop reads element for element:
// those of its result's shape (a residual), each a 4-d float32 or 8-bit
// image, and the primitive's source when it has that shape too (lowering
// checks every value of the result's shape in the loop's layout). Nullopt
// when its result is no such image, a constant of its shape is inlined, or
// an operator after the anchor moves elements (a transpose: its loop reads
// the anchor's result at other coordinates than it writes, which one layout
// for both cannot say).
std::optional<std::vector<int>> anchored_loop_activations(const FunctionNode& fn) {
  const Type& result = fn.body->checked_type();
  if (!is_float32_image(result) && !is_8bit_image(result)) return std::nullopt;
  const std::vector<int64_t>& shape = as_tensor(result)->shape;
  bool constant_of_shape = false, moves_elements = false;
  std::unordered_set<const ExprNode*> after_anchor;  // the anchor and what reads it
  post_order_visit(fn.body, [&](const Expr& e) {
    if (const ConstantNode* constant = as<ConstantNode>(e)) constant_of_shape |= constant->data.shape() == shape;
    const CallNode* call = as<CallNode>(e);
    const OpNode* op = call ? as<OpNode>(call->op) : nullptr;
    if (!op) return;
    if (op->def->pattern == OpPattern::kAnchor) {
      after_anchor.insert(call);
      return;
    }
    bool reads_anchor = false;
    for (const Expr& arg : call->args) reads_anchor |= after_anchor.count(arg.get()) > 0;
    if (!reads_anchor) return;
    after_anchor.insert(call);
    moves_elements |= op->def->pattern != OpPattern::kElementwise && op->def->pattern != OpPattern::kBroadcast;
  });
  if (constant_of_shape || moves_elements) return std::nullopt;
  std::vector<int> activations;
  for (size_t i = 0; i < fn.params.size(); ++i) {
    const Type& type = fn.params[i]->checked_type();
    const TensorTypeNode* tensor = as_tensor(type);
    if (!tensor) return std::nullopt;
    if (tensor->shape != shape) continue;
    if (!is_float32_image(type) && !is_8bit_image(type)) return std::nullopt;
    activations.push_back(int(i));
  }
  return activations;
}

class LayoutPlanner {
 public:
  // `matches` counts the kernel results each rule matched.
  LayoutPlanner(int channel_block, bool channels_last, const std::vector<LayoutRule>& rules,
                std::vector<int>* matches)
      : blocked_("nChw" + std::to_string(channel_block) + "c"),
        channels_last_(channels_last),
        rules_(rules),
        matches_(matches) {}

  Function plan(const Function& given) {
    Function fn = given;
    analyse(fn);
    if (std::optional<Function> converted = with_conversions(fn)) {
      fn = *converted;
      analyse(fn);
      // A conversion whose source and result both stayed dense would copy
      // dense to dense: the readers it serves take the source itself.
      if (std::optional<Function> fewer = without_dense_conversions(fn)) {
        fn = *fewer;
        analyse(fn);
      }
    }
    pin_matched_values();
    if (std::none_of(candidate_.begin(), candidate_.end(), [](const auto& c) { return c.second; })) return fn;
    LayoutRewriter rewriter;
    rewriter.layouts = layouts_of_candidates();
    return downcast<FunctionNode>(rewriter.mutate(fn));
  }

 private:
  // Which values may take a layout, from scratch.
  void analyse(const Function& fn) {
    kernel_results_.clear();
    bound_.clear();
    window_of_.clear();
    elementwise_of_.clear();
    anchored_src_.clear();
    copies_.clear();
    demoted_.clear();
    demoted_because_.clear();
    find_window_calls(fn);
    do find_candidates(fn);
    while (demote_elementwise_in_unfit_sets());
  }

  // Where a value is read: argument (or tuple field) `index` of `reader`,
  // or the function's result (`index` -1), through the expression `as`.
  struct Use {
    const ExprNode* reader;
    int index;
    const ExprNode* as;
    bool activation;  // a window primitive's source or residual, which may take a layout
    bool loop_read;   // what a loop kernel reads element for element (demoted or not)
  };

  // The uses of each value; a value also used where no conversion can be
  // put (a branch of an if) has none listed.
  std::unordered_map<const ExprNode*, std::vector<Use>> uses_of(const Function& fn) const {
    std::unordered_map<const ExprNode*, std::vector<Use>> uses;
    std::unordered_set<const ExprNode*> unconvertible;
    post_order_visit(fn, [&](const Expr& e) {
      if (const CallNode* call = as<CallNode>(e)) {
        const WindowPrimitive* window = window_of(call);
        for (size_t i = 0; i < call->args.size(); ++i)
          uses[resolve(call->args[i])].push_back({call, int(i), call->args[i].get(),
                                                  window && !window->converts && window->reads_as_activation(int(i)),
                                                  !window && may_read_in_layout(call, int(i))});
      } else if (const TupleNode* tuple = as<TupleNode>(e)) {
        for (size_t i = 0; i < tuple->fields.size(); ++i)
          uses[resolve(tuple->fields[i])].push_back({tuple, int(i), tuple->fields[i].get(), false, false});
      } else if (e->kind() != ExprKind::kLet && e->kind() != ExprKind::kFunction) {
        for_each_child(e, [&](const Expr& child) { unconvertible.insert(resolve(child)); });
      }
    });
    uses[resolve(fn->body)].push_back({fn.get(), -1, fn->body.get(), false, false});
    for (const ExprNode* node : unconvertible) uses.erase(node);
    return uses;
  }

  // The fewest layout conversions: a window primitive's result that a loop
  // (or the model's result) also reads stays in its primitives' layout, and
  // one conversion gives those readers the dense value (else the primitive
  // would write it dense and each primitive reading it convert it back), as
  // does one that only such readers read where the primitive runs faster
  // writing a layout (a Winograd convolution at a model's end); a
  // dense value two or more primitives on one device read is converted once
  // for them all (else each converts it). Nullopt where none pays.
  std::optional<Function> with_conversions(const Function& fn) {
    std::vector<Conversion> conversions;
    std::map<std::pair<const ExprNode*, int>, size_t> redirected;  // (reader, index) -> conversion
    auto convert = [&](const std::vector<Use>& uses, const VirtualDevice* device) {
      // One expression converted for them all, so the conversion is in scope for each.
      for (const Use& use : uses)
        if (use.as != uses.front().as) return;
      conversions.push_back({uses.front().as, device->with_layout("")});
      for (const Use& use : uses) redirected[{use.reader, use.index}] = conversions.size() - 1;
    };
    for (const auto& [value, uses] : uses_of(fn)) {
      if (auto it = candidate_.find(value); it != candidate_.end() && it->second) continue;
      if (value->kind() == ExprKind::kConstant || !is_float32_image(value->checked_type())) continue;
      std::vector<Use> dense;
      std::map<const VirtualDevice*, std::vector<Use>> activations_by_device;
      for (const Use& use : uses) {
        if (use.activation)
          activations_by_device[use.reader->virtual_device()->with_layout("")].push_back(use);
        else
          dense.push_back(use);
      }
      // A loop kernel's result (element-wise, an anchored convolution's) that readers which
      // cannot take a layout read is converted once for them too, where what the kernel reads
      // comes from kernels that may write a layout: else the kernel runs dense and makes what it
      // reads dense, and so on up a chain of them (a QDQ network's residual stream, all of it
      // dense for the one dense read of the classifier at its end).
      const WindowPrimitive* producer = window_of(value);
      if (producer && !producer->converts && !dense.empty() &&
          (!activations_by_device.empty() || producer->faster_in_layout)) {
        convert(dense, value->virtual_device());
        continue;
      }
      std::vector<Use> neither;  // read by no window primitive or loop kernel that could take the layout
      for (const Use& use : dense)
        if (!use.loop_read) neither.push_back(use);
      if (elementwise_of_.count(value) && reads_laid_out_producers(static_cast<const CallNode*>(value)) &&
          !neither.empty()) {
        convert(neither, value->virtual_device());
        continue;
      }
      for (const auto& [device, activations] : activations_by_device)
        if (activations.size() >= 2) convert(activations, device);
    }
    if (conversions.empty()) return std::nullopt;
    return downcast<FunctionNode>(ConversionInserter(std::move(conversions), std::move(redirected)).rewrite(fn));
  }

  std::optional<Function> without_dense_conversions(const Function& fn) const {
    struct Dropper : ExprMutator {
      std::unordered_set<const ExprNode*> drop;
      Expr visit_call(const Call& c) override {
        Expr rebuilt = ExprMutator::visit_call(c);
        return drop.count(c.get()) ? downcast<CallNode>(rebuilt)->args[0] : rebuilt;
      }
    } dropper;
    post_order_visit(fn, [&](const Expr& e) {
      const CallNode* call = as<CallNode>(e);
      const FunctionNode* callee = call ? as<FunctionNode>(call->op) : nullptr;
      const CallNode* body = callee ? as<CallNode>(callee->body) : nullptr;
      if (!body || as<OpNode>(body->op) != ops::layout_convert() || call->args.size() != 1) return;
      auto laid_out = [&](const ExprNode* node) {
        auto it = candidate_.find(node);
        return it != candidate_.end() && it->second;
      };
      if (!laid_out(resolve(call->args[0])) && !laid_out(call)) dropper.drop.insert(call);
    });
    if (dropper.drop.empty()) return std::nullopt;
    return downcast<FunctionNode>(dropper.mutate(fn));
  }

  // The value a let variable or a let stands for (through chains of them).
  const ExprNode* resolve(const Expr& e) const { return resolve(e.get()); }
  const ExprNode* resolve(const ExprNode* node) const {
    for (auto it = bound_.find(node); it != bound_.end(); it = bound_.find(node)) node = it->second;
    return node;
  }

  // The calls of fused functions on a CPU device that run one oneDNN
  // convolution or pool alone. A function called twice is left out: its
  // parameters could not take two calls' layouts.
  void find_window_calls(const Function& fn) {
    std::vector<const CallNode*> calls;
    std::unordered_map<const FunctionNode*, int> times_called;
    post_order_visit(fn, [&](const Expr& e) {
      // A let variable stands for its value, a let for its body.
      if (const LetNode* let = as<LetNode>(e)) {
        bound_[let->var.get()] = let->value.get();
        bound_[let] = let->body.get();
      }
      if (const CallNode* copy = as_device_copy(e); copy && copies_bytes_as_they_lie(*copy)) {
        copies_.insert(copy);
        elementwise_of_.emplace(copy, std::vector<int>{0});
        return;
      }
      const CallNode* call = as<CallNode>(e);
      const FunctionNode* callee = call ? as<FunctionNode>(call->op) : nullptr;
      if (!callee || !callee->is_primitive()) return;
      ++times_called[callee];
      calls.push_back(call);
    });
    kernel_results_ = calls;
    for (const CallNode* call : calls) {
      const FunctionNode* callee = as<FunctionNode>(call->op);
      const VirtualDevice* device = call->virtual_device();
      const bool eight_bit = is_8bit_image(call->checked_type());
      if (times_called[callee] > 1 || device->kind() != DeviceKind::kCPU || !device->target() ||
          (!is_float32_image(call->checked_type()) && !eight_bit))
        continue;
      std::vector<bool> constant;
      bool tensors_only = true;
      for (size_t i = 0; i < call->args.size() && i < callee->params.size(); ++i) {
        tensors_only = tensors_only && as_tensor(callee->params[i]->checked_type());
        constant.push_back(resolve(call->args[i])->kind() == ExprKind::kConstant);
      }
      // A tuple parameter would shift the kernel's flattened input indices.
      if (!tensors_only || call->args.size() != callee->params.size()) continue;
      std::optional<WindowPrimitive> window = primitives_.of(callee, device, constant);
      if (window && window->anchored) {
        if (std::optional<std::vector<int>> loop_reads = anchored_loop_activations(*callee)) {
          elementwise_of_.emplace(call, std::move(*loop_reads));
          anchored_src_.emplace(call, window->src_input);
        }
      } else if (window)
        window_of_.emplace(call, std::move(*window));
      else if (std::optional<std::vector<int>> activations = elementwise_activations(*callee))
        elementwise_of_.emplace(call, std::move(*activations));
      else if (std::optional<ChannelConcatenation> concatenation = channel_concatenation(*callee))
        elementwise_of_.emplace(call, std::move(concatenation->part_params));
    }
  }

  // Whether a device copy moves its value's bytes as they lie, so the value
  // may keep its layout on both sides: a copy between two CPU devices of a
  // 4-d float32 or 8-bit image (CPU devices share memory and one layout
  // vocabulary; a GPU's primitives read plain tensors).
  static bool copies_bytes_as_they_lie(const CallNode& copy) {
    if (copy.args.size() != 1 || (!is_float32_image(copy.checked_type()) && !is_8bit_image(copy.checked_type())))
      return false;
    const DeviceCopyAttrs ends = device_copy_attrs(copy);
    return ends.src && ends.dst && ends.src->kind() == DeviceKind::kCPU && ends.dst->kind() == DeviceKind::kCPU &&
           copy.virtual_device()->kind() == DeviceKind::kCPU;
  }

  // Whether a loop kernel (element-wise, a channel concatenation, an
  // anchored convolution) reads argument `input` element for element, or as
  // its primitive's source, demoted or not.
  bool may_read_in_layout(const CallNode* call, int input) const {
    if (auto src = anchored_src_.find(call); src != anchored_src_.end() && src->second == input) return true;
    auto it = elementwise_of_.find(call);
    return it != elementwise_of_.end() && std::find(it->second.begin(), it->second.end(), input) != it->second.end();
  }

  // Whether every value loop kernel `call` reads element for element (or as
  // its primitive's source) comes from a kernel that may write a layout,
  // and one of them from a primitive (a window primitive alone or an
  // anchored convolution): then converting its result for its dense readers
  // may let it, and what it reads, keep the primitive's layout. (Behind
  // loops alone, such as a model input's quantization, it would not pay.)
  bool reads_laid_out_producers(const CallNode* call) const {
    std::vector<int> reads = elementwise_of_.at(call);
    if (auto src = anchored_src_.find(call); src != anchored_src_.end()) reads.push_back(src->second);
    bool from_primitive = false;
    for (int input : reads) {
      const ExprNode* value = resolve(call->args.at(size_t(input)));
      const WindowPrimitive* window = window_of(value);
      const bool primitive = (window && !window->converts) || anchored_src_.count(value);
      if (!primitive && !elementwise_of_.count(value)) return false;
      from_primitive = from_primitive || primitive;
    }
    return from_primitive;
  }

  // Whether a call reads argument `input` as an activation it may take in a
  // layout: a window primitive's source or residual, or what an element-wise
  // kernel (not demoted) reads element for element.
  bool reads_as_activation(const CallNode* call, int input) const {
    if (const WindowPrimitive* window = window_of(call)) return window->reads_as_activation(input);
    if (auto src = anchored_src_.find(call); src != anchored_src_.end() && src->second == input && !demoted_.count(call))
      return true;
    auto it = elementwise_of_.find(call);
    return it != elementwise_of_.end() && !demoted_.count(call) &&
           std::find(it->second.begin(), it->second.end(), input) != it->second.end();
  }

  const WindowPrimitive* window_of(const ExprNode* node) const {
    auto it = window_of_.find(node);
    return it == window_of_.end() ? nullptr : &it->second;
  }

  // A window call's result is a candidate while every use reads it as a
  // window primitive's source or residual: any other use (a loop kernel, a
  // copy, a tuple, a branch, the function's result) keeps it dense.
  // An element-wise kernel's result is one too while it reads only
  // candidates element for element and its result stays one (it reads and
  // writes one layout); one that reads or writes a dense value is demoted,
  // and keeps what it reads dense.
  void find_candidates(const Function& fn) {
    candidate_.clear();
    dense_because_.clear();
    for (const auto& [call, window] : window_of_) {
      candidate_[call] = !window.writes_permuted;
      if (window.writes_permuted)
        dense_because_[call] = "its primitive writes it through permuted strides (a transpose fused into it)";
    }
    for (const auto& [call, activations] : elementwise_of_)
      if (!demoted_.count(call)) candidate_[call] = true;
    // The first reader that keeps a candidate dense is kept, for a refused rule.
    auto keep_dense = [&](const Expr& e, const Expr& reader) {
      auto it = candidate_.find(resolve(e));
      if (it == candidate_.end() || !it->second) return;
      it->second = false;
      dense_because_[it->first] = "it is read by " + reader_name(reader);
    };
    post_order_visit(fn, [&](const Expr& e) {
      if (const CallNode* call = as<CallNode>(e)) {
        for (size_t i = 0; i < call->args.size(); ++i)
          if (!reads_as_activation(call, int(i))) keep_dense(call->args[i], e);
      } else if (e->kind() != ExprKind::kLet && e->kind() != ExprKind::kFunction) {
        // Tuples, projections and branches: a let is its body, used where
        // the let is; a fused function is closed, and this one's result
        // is below.
        for_each_child(e, [&](const Expr& child) { keep_dense(child, e); });
      }
    });
    if (auto it = candidate_.find(resolve(fn->body)); it != candidate_.end() && it->second) {
      it->second = false;
      dense_because_[it->first] = "it is the function's result, which is dense row-major";
    }
    for (bool changed = true; changed;) {
      changed = false;
      for (const auto& [node, activations] : elementwise_of_) {
        const CallNode* call = static_cast<const CallNode*>(node);
        if (demoted_.count(call)) continue;
        bool dense = !candidate_.at(call);
        for (int input : activations) {
          auto it = candidate_.find(resolve(call->args.at(size_t(input))));
          dense = dense || it == candidate_.end() || !it->second;
        }
        if (!dense) continue;
        demoted_.insert(call);
        changed = true;
        if (candidate_.at(call)) {
          candidate_.at(call) = false;
          dense_because_[call] = "it is computed by " + reader_name(Expr(call)) + ", which reads a dense value";
        }
        for (int input : activations) keep_dense(call->args.at(size_t(input)), Expr(call));
        // A demoted anchored convolution's primitive reads its source dense.
        if (auto src = anchored_src_.find(call); src != anchored_src_.end())
          keep_dense(call->args.at(size_t(src->second)), Expr(call));
      }
    }
  }

  // The sets of candidates that calls read and write together, as their roots.
  std::unordered_map<const ExprNode*, const ExprNode*> candidate_sets() const {
    std::unordered_map<const ExprNode*, const ExprNode*> root;
    for (const auto& [node, is_candidate] : candidate_)
      if (is_candidate) root[node] = node;
    auto find = [&](const ExprNode* node) {
      while (root[node] != node) node = root[node] = root[root[node]];
      return node;
    };
    for (const auto& [call, window] : window_of_) {
      std::vector<const ExprNode*> joined = candidate_activations(static_cast<const CallNode*>(call), window);
      for (const ExprNode* node : joined) root[find(node)] = find(joined.front());
    }
    for (const auto& [node, activations] : elementwise_of_) {
      const CallNode* call = static_cast<const CallNode*>(node);
      if (demoted_.count(call)) continue;
      for (int input : activations) root[find(resolve(call->args.at(size_t(input))))] = find(call);
      if (auto src = anchored_src_.find(call); src != anchored_src_.end())
        if (auto it = candidate_.find(resolve(call->args.at(size_t(src->second)))); it != candidate_.end() && it->second)
          root[find(it->first)] = find(call);
    }
    for (auto& [node, parent] : root) parent = find(node);
    return root;
  }

  // The format of each set of candidates, by its root: a pinning rule's,
  // else channels last where a grouped convolution whose groups are not
  // whole channel blocks touches the set (oneDNN has only its reference
  // loops for those in blocks, some 100x slower, and jit ones in channels
  // last), else channel blocks where a depthwise convolution touches it
  // (oneDNN's depthwise kernels are written for blocks) or channels last is
  // off, else channels last.
  std::unordered_map<const ExprNode*, std::string> formats_of_sets(
      const std::unordered_map<const ExprNode*, const ExprNode*>& set) const {
    std::unordered_map<const ExprNode*, std::string> format;
    for (const auto& [node, root] : set)
      if (root == node) format[root] = channels_last_ ? "nhwc" : blocked_;
    // oneDNN's int8 convolutions compute in channels last (given channel
    // blocks they reorder to it and back inside each call).
    std::unordered_set<const ExprNode*> eight_bit;
    for (const auto& [node, root] : set)
      if (is_8bit_image(node->checked_type())) eight_bit.insert(root);
    auto touched_by = [&](const std::function<bool(const WindowPrimitive&)>& which, const std::string& chosen) {
      for (const auto& [call, window] : window_of_)
        if (which(window))
          for (const ExprNode* node : candidate_activations(static_cast<const CallNode*>(call), window))
            format[set.at(node)] = chosen;
    };
    const int64_t block = Layout::of(blocked_).channel_block;
    touched_by([](const WindowPrimitive& w) { return w.depthwise(); }, blocked_);
    touched_by(
        [&](const WindowPrimitive& w) {
          return w.grouped() && !w.depthwise() && (w.group_inputs % block != 0 || w.group_outputs % block != 0);
        },
        "nhwc");
    for (const ExprNode* root : eight_bit) format[root] = "nhwc";
    for (const LayoutRule& rule : rules_)
      for (const CallNode* call : kernel_results_)
        if (span_matches(call->span(), rule.pattern) && set.count(call)) format[set.at(call)] = rule.format;
    return format;
  }

  // Element-wise loops run over channels last, or over channel blocks that
  // divide the result's channels (padding would need to be kept zero): one
  // in a set whose blocks do not divide its channels is demoted. Returns
  // whether any was.
  bool demote_elementwise_in_unfit_sets() {
    std::unordered_map<const ExprNode*, const ExprNode*> set = candidate_sets();
    std::unordered_map<const ExprNode*, std::string> format = formats_of_sets(set);
    bool demoted = false;
    for (const auto& [node, activations] : elementwise_of_) {
      const CallNode* call = static_cast<const CallNode*>(node);
      // A copy moves padded blocks as they lie; only loops must stay off the padding.
      if (demoted_.count(call) || !set.count(call) || copies_.count(call)) continue;
      // A channel concatenation's parts too: each writes whole blocks of the result.
      int64_t channels = as_tensor(call->checked_type())->shape[1];
      int b = Layout::of(format.at(set.at(call))).channel_block;
      bool whole_blocks = b == 0 || channels % b == 0;
      for (int input : activations)
        whole_blocks = whole_blocks && (b == 0 || as_tensor(call->args.at(size_t(input))->checked_type())->shape[1] % b == 0);
      if (auto src = anchored_src_.find(call); src != anchored_src_.end())
        whole_blocks = whole_blocks &&
                       (b == 0 || as_tensor(call->args.at(size_t(src->second))->checked_type())->shape[1] % b == 0);
      if (whole_blocks) continue;
      demoted_.insert(call);
      demoted_because_[call] = "it is computed by " + reader_name(Expr(call)) +
                               ", an element-wise kernel, whose loops read and write channels last or channel "
                               "blocks that divide its " + std::to_string(channels) +
                               " channels, and its values must take blocks of " + std::to_string(b);
      demoted = true;
    }
    return demoted;
  }

  // The rule pinning each kernel result that a rule matches (the last one
  // that does); every such result must be a candidate.
  void pin_matched_values() {
    for (size_t r = 0; r < rules_.size(); ++r)
      for (const CallNode* call : kernel_results_) {
        if (!span_matches(call->span(), rules_[r].pattern)) continue;
        ++(*matches_)[r];
        if (auto it = candidate_.find(call); it == candidate_.end() || !it->second)
          throw Error(ErrorKind::kPlacement,
                      "layout rule '" + rules_[r].text + "' pins a value that cannot have a layout: " +
                          (it != candidate_.end()        ? dense_because_.at(call)
                           : demoted_because_.count(call) ? demoted_because_.at(call)
                               : "it is not the 4-d float32 or 8-bit result of a oneDNN convolution or pool "
                                 "alone, of a convolution with an element-wise loop after it, or of an "
                                 "element-wise kernel between them, on a CPU"),
                      call->span());
        pins_.emplace_back(call, &rules_[r]);
      }
  }

  // The activations a window call reads and writes that are candidates and
  // share its layout (a conversion's source has its own).
  std::vector<const ExprNode*> candidate_activations(const CallNode* call, const WindowPrimitive& window) const {
    std::vector<const ExprNode*> out;
    auto add = [&](const ExprNode* node) {
      if (auto it = candidate_.find(node); it != candidate_.end() && it->second) out.push_back(node);
    };
    if (!window.converts) add(resolve(call->args.at(size_t(window.src_input))));
    add(call);
    for (int input : window.sum_inputs) add(resolve(call->args.at(size_t(input))));
    return out;
  }

  // One layout per set of candidates that window calls join.
  std::unordered_map<const ExprNode*, std::string> layouts_of_candidates() {
    std::unordered_map<const ExprNode*, const ExprNode*> set = candidate_sets();
    // Two rules must agree on one set.
    std::unordered_map<const ExprNode*, std::pair<const LayoutRule*, const CallNode*>> pinned;
    for (const auto& [call, rule] : pins_) {
      auto [it, first] = pinned.try_emplace(set.at(call), rule, call);
      const auto& [other_rule, other_call] = it->second;
      if (!first && other_rule->format != rule->format)
        throw Error(ErrorKind::kPlacement,
                    "layout rules '" + other_rule->text + "' and '" + rule->text +
                        "' pin values that must share one layout, since oneDNN primitives read or write them "
                        "together: the results of " + reader_name(Expr(other_call)) + " and of " +
                        reader_name(Expr(call)),
                    call->span());
    }
    std::unordered_map<const ExprNode*, std::string> format = formats_of_sets(set);
    std::unordered_map<const ExprNode*, std::string> layouts;
    for (const auto& [node, is_candidate] : candidate_)
      if (is_candidate) layouts[node] = format.at(set.at(node));
    // Let variables take their value's layout; fused functions their
    // result's and their parameters' their arguments'.
    for (const auto& [bound, value] : bound_)
      if (auto it = layouts.find(resolve(bound)); it != layouts.end() && bound->kind() == ExprKind::kVar)
        layouts[bound] = it->second;
    auto lay_out_callee = [&](const CallNode* call) {
      const FunctionNode* callee = as<FunctionNode>(call->op);
      if (!callee) return;  // a device copy: its call alone takes the layout
      if (auto it = layouts.find(call); it != layouts.end()) layouts[callee] = it->second;
      for (size_t i = 0; i < call->args.size(); ++i)
        if (auto it = layouts.find(resolve(call->args[i])); it != layouts.end() && reads_as_activation(call, int(i)))
          layouts[callee->params[i].get()] = it->second;
    };
    for (const auto& [node, window] : window_of_) lay_out_callee(static_cast<const CallNode*>(node));
    for (const auto& [node, activations] : elementwise_of_)
      if (!demoted_.count(static_cast<const CallNode*>(node))) lay_out_callee(static_cast<const CallNode*>(node));
    return layouts;
  }

  std::string blocked_;
  bool channels_last_;
  const std::vector<LayoutRule>& rules_;
  std::vector<int>* matches_;
  WindowPrimitives primitives_;
  std::vector<const CallNode*> kernel_results_;  // every call of a fused function
  std::unordered_map<const ExprNode*, std::string> dense_because_;
  std::vector<std::pair<const CallNode*, const LayoutRule*>> pins_;  // in rule order
  std::unordered_map<const ExprNode*, const ExprNode*> bound_;  // let variable -> value, let -> body
  std::unordered_map<const ExprNode*, WindowPrimitive> window_of_;
  // Element-wise kernels, by the parameters they read element for element
  // (a channel concatenation: its parts), and those demoted to dense.
  std::unordered_map<const ExprNode*, std::vector<int>> elementwise_of_;
  std::unordered_set<const ExprNode*> demoted_;
  // Anchored convolutions (also in elementwise_of_, by what their loop
  // reads), by the parameter their primitive reads as its source: it joins
  // their set when it is a candidate, else the primitive converts it.
  std::unordered_map<const ExprNode*, int> anchored_src_;
  // Device copies between CPU devices (also in elementwise_of_, reading
  // argument 0): each reads and writes one layout, as a memcpy of its bytes.
  std::unordered_set<const ExprNode*> copies_;
  std::unordered_map<const ExprNode*, std::string> demoted_because_;  // for a refused pin, where not dense_because_
  std::unordered_map<const ExprNode*, bool> candidate_;
};

}  // namespace

LayoutRule parse_layout_rule(const std::string& text) {
  const std::string expected = "node:GLOB=FORMAT";
  auto bad = [&](const std::string& why) {
    return Error(ErrorKind::kUsage, "malformed layout rule '" + text + "': " + why + " (expected " + expected + ")");
  };
  auto [kind, pattern, format] = split_rule(text, "layout rule", expected);
  if (kind != "node") throw bad("unknown rule kind '" + kind + "'");
  LayoutRule rule{pattern, format, text};
  if (!Layout::parse(format) || format.empty())
    throw bad("'" + format + "' is not a layout (" + kLayoutSpellings + ")");
  try {
    target_description_for(DeviceKind::kCPU)->check_layout(rule.format);
  } catch (const std::exception& e) {
    throw bad(e.what());
  }
  return rule;
}

Pass PlanLayouts(int channel_block, bool channels_last, std::vector<LayoutRule> rules) {
  return make_module_pass({"PlanLayouts", 0, {}}, [=](const IRModule& mod, const PassContext&) {
    std::vector<int> matches(rules.size(), 0);
    IRModule out = map_functions(mod, [&](const std::string&, const Function& fn) {
      return LayoutPlanner(channel_block, channels_last, rules, &matches).plan(fn);
    });
    for (size_t r = 0; r < rules.size(); ++r)
      if (matches[r] == 0)
        throw Error(ErrorKind::kUsage, "layout rule '" + rules[r].text + "' matches no kernel's result");
    return out;
  });
}

Pass PlanLayouts(std::vector<LayoutRule> rules) {
  const TargetDescription* cpu = target_description_for(DeviceKind::kCPU);
  return PlanLayouts(cpu->channel_block(), cpu->prefers_channels_last(), std::move(rules));
}

}  // namespace switchyard
