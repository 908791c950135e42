#include "codegen/channel_concatenation.h"

#include <string>
#include <unordered_map>

#include "codegen/element_index.h"
#include "codegen/group_kernel.h"
#include "codegen/row_loop.h"
#include "ir/layout.h"
#include "support/error.h"
#include "ir/functor.h"
#include "op/handles.h"
#include "op/movement_attrs.h"
#include "op/registry.h"
#include "op/relation_helpers.h"

namespace switchyard {

namespace {

bool is_float32_image(const Type& type) {
  const TensorTypeNode* tensor = as_tensor(type);
  return tensor && tensor->is_static() && tensor->ndim() == 4 && tensor->dtype == DType::kFloat32;
}

// The one concatenation in `body`, or null.
const CallNode* only_concatenation(const Expr& body) {
  const CallNode* found = nullptr;
  int count = 0;
  post_order_visit(body, [&](const Expr& e) {
    const CallNode* call = as<CallNode>(e);
    if (call && as<OpNode>(call->op) == ops::concatenate()) {
      found = call;
      ++count;
    }
  });
  return count == 1 ? found : nullptr;
}

// Whether every path from the body down to `concat` passes only element-wise
// and broadcast operators of the result's shape, and nothing else in the
// body has that shape (it would be read at the result's dense offset).
bool only_elementwise_above(const Expr& body, const CallNode* concat, const std::vector<int64_t>& shape) {
  std::unordered_map<const ExprNode*, bool> reaches;  // whether a node's operands include the concatenation
  bool fits = true;
  post_order_visit(body, [&](const Expr& e) {
    bool r = e.get() == concat;
    if (const CallNode* call = as<CallNode>(e); call && !r) {
      for (const Expr& arg : call->args) r = r || reaches[arg.get()];
      const OpNode* op = as<OpNode>(call->op);
      if (r)
        fits = fits && op &&
               (op->def->pattern == OpPattern::kElementwise || op->def->pattern == OpPattern::kBroadcast) &&
               shape_of(e) == shape;
      else if (const TensorTypeNode* t = as_tensor(e->checked_type()))
        fits = fits && t->is_static() && t->shape != shape;
    } else if (!r && !is<OpNode>(e) && !is<TupleNode>(e)) {
      const TensorTypeNode* t = as_tensor(e->checked_type());
      fits = fits && (!t || (t->is_static() && t->shape != shape)) && !is<TupleGetItemNode>(e);
    }
    reaches[e.get()] = r;
  });
  return fits && reaches[body.get()];
}

}  // namespace

std::optional<ChannelConcatenation> channel_concatenation(const FunctionNode& fn) {
  if (!is_float32_image(fn.body->checked_type())) return std::nullopt;
  const std::vector<int64_t>& shape = as_tensor(fn.body->checked_type())->shape;
  const CallNode* concat = only_concatenation(fn.body);
  const TupleNode* tuple = concat ? as<TupleNode>(concat->args[0]) : nullptr;
  if (!tuple || tuple->fields.empty()) return std::nullopt;
  if (normalize_axis(concatenate_attrs(*concat->attrs).axis, 4, ops::concatenate()->name) != 1) return std::nullopt;
  // Each part a distinct parameter of the result's batch and image size,
  // read by the concatenation alone.
  std::unordered_map<const ExprNode*, int> uses;
  post_order_visit(fn.body, [&](const Expr& e) {
    for_each_child(e, [&](const Expr& child) {
      if (is<VarNode>(child)) ++uses[child.get()];
    });
  });
  ChannelConcatenation found{concat, {}};
  for (const Expr& field : tuple->fields) {
    int param = -1;
    for (size_t i = 0; i < fn.params.size(); ++i)
      if (fn.params[i].get() == field.get()) param = int(i);
    if (param < 0 || uses[field.get()] != 1 || !is_float32_image(field->checked_type())) return std::nullopt;
    const std::vector<int64_t>& part = as_tensor(field->checked_type())->shape;
    if (part[0] != shape[0] || part[2] != shape[2] || part[3] != shape[3]) return std::nullopt;
    found.part_params.push_back(param);
  }
  if (!only_elementwise_above(fn.body, concat, shape)) return std::nullopt;
  return found;
}

namespace {

namespace ki = kernel_ir;

// The loop body of one part of `channels` channels starting at channel
// `part_begin` (a loop argument): a row per pixel (channels last) or per
// pixel and block of channels, its `inner` channels contiguous in both the
// part and the result.
std::vector<ki::Stmt> part_rows(const CpuKernel& k, const ChannelConcatenation& c, size_t part, int64_t channels,
                                const Layout& layout) {
  const std::vector<int64_t>& shape = k.outputs[0]->shape;
  const bool channels_last = layout.channels_last();
  const int64_t block = channels_last ? channels : layout.channel_block;
  const ki::Expr row = ki::var("row"), j = ki::var("i1"), part_begin = ki::var("part_begin"),
                 result_channels = ki::var("result_channels");
  std::vector<ki::Expr> position =
      coordinates_of(IndexAt::at_offset(row), {shape[0], channels / block, shape[2], shape[3]}, nullptr);
  const char* names[] = {"i0", "ib", "i2", "i3"};
  std::vector<ki::Expr> at;
  for (size_t d = 0; d < 4; ++d) at.push_back(ki::is_index(position[d], 0) ? position[d] : ki::var(names[d]));
  ki::Expr channel = ki::add(part_begin, ki::is_index(at[1], 0) ? j : ki::add(ki::mul(at[1], block), j));
  ki::Expr part_offset = ki::add(ki::mul(row, block), j);
  // Channels last: pixel * C + channel. Blocks: the part's offset, moved
  // past the other parts' blocks of the earlier images and this image's
  // blocks before the part. C is an argument, like the part's first
  // channel, so that parts of concatenations of other widths share code.
  ki::Expr out_offset =
      channels_last
          ? ki::add(ki::add(ki::mul(row, result_channels), part_begin), j)
          : ki::add(part_offset,
                    ki::mul(ki::add(ki::mul(at[0], ki::add(result_channels, -channels)),
                                    part_begin),
                            shape[2] * shape[3]));
  std::vector<ki::Stmt> inner;
  int numbering = 0;  // each part's function numbers its own locals, so equal parts print alike
  ElementLowering lowering = k.lowering(inner, numbering);
  lowering.within_concatenation_part(c.concatenate, part, {part_begin, nullptr, part_offset});
  lowering.bind_argument_buffer(k.function->params[size_t(c.part_params[part])].get(), "part_input");
  ki::Expr value = lowering.lower(Expr(k.root), IndexAt::at_coords({at[0], channel, at[2], at[3]}));
  inner.push_back(ki::store(k.output(0), out_offset, value));
  std::vector<std::pair<std::string, ki::Expr>> row_coordinates;
  for (size_t d = 0; d < 4; ++d) row_coordinates.emplace_back(names[d], position[d]);
  return {loop_over_rows(row_coordinates,
                         ki::for_loop("i1", ki::index(0), ki::index(block), ki::LoopKind::kSimd, std::move(inner)))};
}

}  // namespace

void lower_channel_concatenation(const CpuKernel& k, const ChannelConcatenation& c, ki::Kernel& kernel) {
  const std::vector<int64_t>& shape = k.outputs[0]->shape;
  const Layout layout = Layout::of(k.layout);
  const TupleNode& tuple = *as<TupleNode>(c.concatenate->args[0]);
  int64_t begin = 0;
  for (size_t part = 0; part < tuple.fields.size(); ++part) {
    const int64_t channels = shape_of(tuple.fields[part])[1];
    if (!layout.channels_last() && (layout.channel_block <= 0 || channels % layout.channel_block != 0))
      throw Error(ErrorKind::kBackend,
                  "a channel concatenation in the layout '" + k.layout + "' needs every part's channels in whole "
                  "blocks; part " + std::to_string(part) + " has " + std::to_string(channels),
                  k.function->span());
    const int64_t inner = layout.channels_last() ? channels : layout.channel_block;
    const int64_t rows = channels == 0 ? 0 : shape[0] * (channels / inner) * shape[2] * shape[3];
    if (rows > 0) {
      ki::ParallelArguments arguments{{{"part_begin", ki::index(begin)}, {"result_channels", ki::index(shape[1])}},
                                      {{"part_input", k.input(size_t(c.part_params[part]))}}};
      std::string described = layout.channels_last() ? "channels last" : k.layout + ": blocks of channels";
      kernel.body.push_back(ki::parallel(
          "concatenation_part_" + std::to_string(part), rows, std::max<int64_t>(1, kElementGrain / inner),
          part_rows(k, c, part, channels, layout),
          "Part " + std::to_string(part) + " of the channel concatenation: channels " + std::to_string(begin) +
              " to " + std::to_string(begin + channels) + " (" + described + "), producers inlined",
          std::move(arguments)));
    }
    begin += channels;
  }
}

}  // namespace switchyard
