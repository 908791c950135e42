// Element loops: one parallel loop over an output with every producer of
// the group inlined (no intermediate buffers). The loop runs over the flat
// offset when no read needs coordinates recovered by division, otherwise
// over rows with a contiguous, vectorisable inner loop (a split at the root
// writes each piece with its own loop). oneDNN anchors run their unfused
// epilogue through the same loop (lower_element_loop).
#include <algorithm>
#include <unordered_map>

#include "codegen/channel_concatenation.h"
#include "codegen/element_lowering.h"
#include "codegen/group_kernel.h"
#include "codegen/row_loop.h"
#include "ir/functor.h"
#include "ir/layout.h"
#include "op/handles.h"
#include "op/movement_attrs.h"
#include "op/registry.h"
#include "op/relation_helpers.h"
#include "op/shape_rules.h"

namespace switchyard {

namespace {

int64_t numel_of(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// The index of the element a flat loop at `i` or a row loop at (row, j) writes.
struct LoopShape {
  bool flat = true;
  size_t inner_dim = 0;  // row loops: the last dimension with extent > 1
  int64_t inner = 1;
  int64_t rows = 1;
};

}  // namespace

namespace {

namespace ki = kernel_ir;

// Builds the kernel IR of one output's element loop and says whether it
// runs over the flat offset.
struct ElementLoopBuilder {
  const CpuKernel& k;
  ki::Kernel& kernel;
  int counter = 0;  // numbers locals across the kernel

  ElementLowering lowering(std::vector<ki::Stmt>& out, int& numbering) const { return k.lowering(out, numbering); }

  // `output_base`: where in `output` the loop's first element goes;
  // `arguments`: what the loop's body reads from its call (see
  // kernel_ir::ParallelArguments).
  bool build(const std::string& loop_name, const std::string& comment, const std::vector<int64_t>& shape,
             const std::string& output, const LoweredValueAt& value, const std::string& layout = "",
             const ki::Expr& output_base = ki::index(0), ki::ParallelArguments arguments = {}) {
    if (!layout.empty()) {
      if (!ki::is_index(output_base, 0) || !arguments.empty()) throw Error(ErrorKind::kBackend, "a laid-out loop writes its whole output", k.function->span());
      // A row holds all of a pixel's channels (nhwc) or one block of them.
      const Layout laid_out = Layout::of(layout);
      int64_t block = laid_out.channels_last() && shape.size() == 4 ? shape[1] : laid_out.channel_block;
      if (shape.size() != 4 || block <= 0 || shape[1] % block != 0)
        throw Error(ErrorKind::kBackend, "no element loop reads and writes the layout '" + layout + "' of a tensor " +
                                             shape_str(shape) +
                                             " (nhwc, or channel blocks that divide the channels, of 4-d tensors)",
                    k.function->span());
      int64_t rows = shape[0] * (shape[1] / block) * shape[2] * shape[3];
      int64_t grain = std::max<int64_t>(1, kElementGrain / block);
      std::vector<ki::Stmt> body;
      if (rows > 0) body = laid_out_loop(shape, block, output, value);
      std::string described = laid_out.channels_last() ? " (channels last)" : " (" + layout + ": blocks of channels)";
      kernel.body.push_back(ki::parallel(loop_name, rows, grain, std::move(body), comment + described));
      return false;
    }
    LoopShape loop;
    int64_t count = numel_of(shape);
    if (shape.size() > 1) {
      // Try the flat loop on scratch statements; keep it if no read divides.
      std::vector<ki::Stmt> trial;
      int trial_counter = 0;
      ElementLowering probe = lowering(trial, trial_counter);
      value(probe, IndexAt::at_offset(ki::var("i")));
      loop.flat = !probe.divided();
    }
    if (!loop.flat) {
      for (size_t d = 0; d < shape.size(); ++d)
        if (shape[d] != 1) loop.inner_dim = d;
      loop.inner = shape[loop.inner_dim];
      loop.rows = loop.inner == 0 ? 0 : count / loop.inner;
    }
    int64_t iterations = loop.flat ? count : loop.rows;
    int64_t grain = loop.flat ? kElementGrain : std::max<int64_t>(1, kElementGrain / std::max<int64_t>(loop.inner, 1));
    std::vector<ki::Stmt> body;
    if (iterations > 0)
      body = loop.flat ? flat_loop(output, value, output_base) : row_loop(shape, loop, output, value, output_base);
    kernel.body.push_back(ki::parallel(loop_name, iterations, grain, std::move(body), comment, std::move(arguments)));
    return loop.flat;
  }

  std::vector<ki::Stmt> flat_loop(const std::string& output, const LoweredValueAt& value, const ki::Expr& output_base) {
    std::vector<ki::Stmt> inner;
    ElementLowering l = lowering(inner, counter);
    ki::Expr i = ki::var("i");
    ki::Expr result = value(l, IndexAt::at_offset(i));
    inner.push_back(ki::store(output, ki::add(i, output_base), result));
    return {ki::for_loop("i", ki::var("begin"), ki::var("end"), ki::LoopKind::kSimd, std::move(inner))};
  }

  // A row per pixel (nhwc) or per pixel and block of channels (nChw16c),
  // its `block` channels contiguous in the inner loop. Reads of the operands
  // laid out like the output take the element's physical offset; broadcast
  // ones its (n, c, h, w) coordinates.
  std::vector<ki::Stmt> laid_out_loop(const std::vector<int64_t>& shape, int64_t block, const std::string& output,
                                      const LoweredValueAt& value) {
    ki::Expr row = ki::var("row");
    std::vector<ki::Expr> position =
        coordinates_of(IndexAt::at_offset(row), {shape[0], shape[1] / block, shape[2], shape[3]}, nullptr);
    const char* names[] = {"i0", "ib", "i2", "i3"};
    std::vector<ki::Expr> position_vars;
    for (size_t d = 0; d < 4; ++d)
      position_vars.push_back(ki::is_index(position[d], 0) ? position[d] : ki::var(names[d]));
    ki::Expr in_block = ki::var("i1");
    ki::Expr channel =
        ki::is_index(position_vars[1], 0) ? in_block : ki::add(ki::mul(position_vars[1], block), in_block);
    ki::Expr offset = ki::add(ki::mul(row, block), in_block);
    std::vector<ki::Stmt> inner;
    ElementLowering l = lowering(inner, counter);
    ki::Expr result = value(l, IndexAt::at(offset, {position_vars[0], channel, position_vars[2], position_vars[3]}));
    inner.push_back(ki::store(output, offset, result));
    // The row's coordinates are read by broadcast operands.
    std::vector<std::pair<std::string, ki::Expr>> row_coordinates;
    for (size_t d = 0; d < 4; ++d) row_coordinates.emplace_back(names[d], position[d]);
    return {loop_over_rows(row_coordinates,
                           ki::for_loop("i1", ki::index(0), ki::index(block), ki::LoopKind::kSimd, std::move(inner)))};
  }

  std::vector<ki::Stmt> row_loop(const std::vector<int64_t>& shape, const LoopShape& loop, const std::string& output,
                                 const LoweredValueAt& value, const ki::Expr& output_base) {
    std::vector<int64_t> outer(shape.begin(), shape.begin() + int64_t(loop.inner_dim));
    ki::Expr row = ki::var("row");
    std::vector<ki::Expr> row_coords = coordinates_of(IndexAt::at_offset(row), outer, nullptr);
    std::vector<ki::Expr> coords(shape.size(), ki::index(0));
    for (size_t d = 0; d < outer.size(); ++d)
      if (!ki::is_index(row_coords[d], 0)) coords[d] = ki::var("i" + std::to_string(d));
    std::string j = "i" + std::to_string(loop.inner_dim);
    coords[loop.inner_dim] = ki::var(j);
    ki::Expr offset = ki::add(ki::mul(row, loop.inner), ki::var(j));
    std::vector<ki::Stmt> inner;
    ElementLowering l = lowering(inner, counter);
    ki::Expr result = value(l, IndexAt::at(offset, coords));
    inner.push_back(ki::store(output, ki::add(offset, output_base), result));
    std::vector<std::pair<std::string, ki::Expr>> row_coordinates;
    for (size_t d = 0; d < outer.size(); ++d)
      if (coords[d]->kind == ki::ExprKind::kVar) row_coordinates.emplace_back(coords[d]->name, row_coords[d]);
    return {loop_over_rows(row_coordinates,
                           ki::for_loop(j, ki::index(0), ki::index(loop.inner), ki::LoopKind::kSimd, std::move(inner)))};
  }
};

}  // namespace

namespace {

// Each piece of a split is its own loop reading the input at an offset
// along the split axis.
void lower_split(const CpuKernel& k, ElementLoopBuilder& builder) {
  const CallNode& split = *k.root;
  const Expr& input = split.args[0];
  const std::vector<int64_t>& in_shape = shape_of(input);
  const SplitAttrs attrs = split_attrs(*split.attrs);
  const std::string& name = ops::split()->name;
  int64_t axis = normalize_axis(attrs.axis, int64_t(in_shape.size()), name);
  std::vector<int64_t> sizes = split_sizes(in_shape[size_t(axis)], sections_value(attrs), name);
  bool leading = true;  // every dimension before the axis has extent 1
  int64_t axis_stride = 1;
  for (int64_t d = 0; d < int64_t(in_shape.size()); ++d) {
    if (d < axis) leading = leading && in_shape[size_t(d)] == 1;
    if (d > axis) axis_stride *= in_shape[size_t(d)];
  }
  int64_t begin = 0;
  for (size_t piece = 0; piece < sizes.size(); ++piece) {
    std::vector<int64_t> shape = in_shape;
    shape[size_t(axis)] = sizes[piece];
    LoweredValueAt value = [&, begin, shape](ElementLowering& lowering, const IndexAt& at) {
      if (leading && at.offset)
        return lowering.lower(input, IndexAt::at_offset(ki::add(at.offset, begin * axis_stride)));
      std::vector<ki::Expr> coords = coordinates_of(at, shape, lowering.division_tracker());
      coords[size_t(axis)] = ki::add(coords[size_t(axis)], begin);
      return lowering.lower(input, IndexAt::at_coords(std::move(coords)));
    };
    builder.build("split_piece_" + std::to_string(piece),
                  "split piece " + std::to_string(piece) + ": elements " + std::to_string(begin) + " to " +
                      std::to_string(begin + sizes[piece]) + " of axis " + std::to_string(axis),
                  shape, k.output(piece), value);
    begin += sizes[piece];
  }
}

// The concatenation in `k` that the kernel's result reads element for
// element (it is the root, or only element-wise and broadcast operators of
// the result's shape lie between them), along an axis with every dimension
// before it of extent 1, so each of its parts is one contiguous run of the
// result: each part can be its own loop over that run, reading its input
// alone, with no per-element test of which part an element is in. Null
// otherwise (a kernel with a layout, two concatenations, one read at other
// elements).
const CallNode* concatenation_by_parts(const CpuKernel& k) {
  if (!k.layout.empty() || k.outputs.size() != 1) return nullptr;
  const CallNode* found = nullptr;
  int count = 0;
  post_order_visit(k.function->body, [&](const Expr& e) {
    const CallNode* c = as<CallNode>(e);
    const OpNode* op = c ? as<OpNode>(c->op) : nullptr;
    if (op && op == ops::concatenate()) {
      found = c;
      ++count;
    }
  });
  if (count != 1 || !as<TupleNode>(found->args[0])) return nullptr;
  const std::vector<int64_t>& shape = shape_of(Expr(found));
  if (shape != k.outputs[0]->shape || shape.empty()) return nullptr;
  int64_t axis = normalize_axis(concatenate_attrs(*found->attrs).axis, int64_t(shape.size()), ops::concatenate()->name);
  for (int64_t d = 0; d < axis; ++d)
    if (shape[size_t(d)] != 1) return nullptr;
  // Every path from the root down to the concatenation keeps the element.
  std::unordered_map<const ExprNode*, bool> reaches;  // whether a node's operands include the concatenation
  bool in_place = true;
  post_order_visit(k.function->body, [&](const Expr& e) {
    bool r = e.get() == found;
    if (const CallNode* c = as<CallNode>(e); c && !r) {
      for (const Expr& arg : c->args) r = r || reaches[arg.get()];
      const OpNode* op = as<OpNode>(c->op);
      if (r)
        in_place = in_place && op &&
                   (op->def->pattern == OpPattern::kElementwise || op->def->pattern == OpPattern::kBroadcast) &&
                   shape_of(e) == shape &&
                   std::all_of(c->args.begin(), c->args.end(),
                               [&](const Expr& arg) { return !reaches[arg.get()] || shape_of(arg) == shape; });
    } else if (!r && !is<VarNode>(e) && !is<ConstantNode>(e) && !is<OpNode>(e) && !is<CallNode>(e)) {
      for_each_child(e, [&](const Expr& child) { in_place = in_place && !reaches[child.get()]; });
    }
    reaches[e.get()] = r;
  });
  return in_place && reaches[k.function->body.get()] ? found : nullptr;
}

// Each part of the concatenation `concat` (see concatenation_by_parts)
// writes its run of the result with a loop of its own. Where the part lies
// and which input it reads are the loop's arguments, so the parts that read
// an input alone (the common case: DenseNet's concatenations of up to 60
// feature maps) share one function: generated code stays one part long.
void lower_concatenation_by_parts(const CpuKernel& k, const CallNode& concat, ElementLoopBuilder& builder) {
  const std::vector<int64_t>& shape = shape_of(Expr(&concat));
  size_t axis = size_t(normalize_axis(concatenate_attrs(*concat.attrs).axis, int64_t(shape.size()), ops::concatenate()->name));
  int64_t axis_stride = 1;
  for (size_t d = axis + 1; d < shape.size(); ++d) axis_stride *= shape[d];
  const std::vector<Expr>& fields = as<TupleNode>(concat.args[0])->fields;
  const ki::Expr part_begin = ki::var("part_begin"), part_base = ki::var("part_base");
  Expr root(k.root);
  int64_t begin = 0;
  for (size_t part = 0; part < fields.size(); ++part) {
    std::vector<int64_t> part_shape = shape;
    part_shape[axis] = shape_of(fields[part])[axis];
    if (part_shape[axis] == 0) continue;
    int64_t base = begin * axis_stride;
    ki::ParallelArguments arguments{{{"part_begin", ki::index(begin)}, {"part_base", ki::index(base)}}, {}};
    const ExprNode* input = nullptr;  // a parameter the part reads alone
    for (size_t i = 0; i < k.function->params.size(); ++i)
      if (k.function->params[i].get() == fields[part].get()) {
        input = fields[part].get();
        arguments.buffers.push_back({"part_input", k.input(i)});
      }
    LoweredValueAt value = [&, part, part_shape, input](ElementLowering& lowering, const IndexAt& at) {
      lowering.within_concatenation_part(&concat, part, {part_begin, part_base});
      if (input) lowering.bind_argument_buffer(input, "part_input");
      if (at.offset && !at.has_coords) return lowering.lower(root, IndexAt::at_offset(ki::add(at.offset, part_base)));
      std::vector<ki::Expr> coords = coordinates_of(at, part_shape, lowering.division_tracker());
      coords[axis] = ki::add(coords[axis], part_begin);
      return lowering.lower(root, at.offset ? IndexAt::at(ki::add(at.offset, part_base), std::move(coords))
                                            : IndexAt::at_coords(std::move(coords)));
    };
    builder.counter = 0;  // each part's function numbers its own locals, so equal parts print alike
    builder.build("concatenation_part_" + std::to_string(part),
                  "Part " + std::to_string(part) + " of the concatenation: elements " + std::to_string(begin) +
                      " to " + std::to_string(begin + part_shape[axis]) + " of axis " + std::to_string(axis) +
                      ", producers inlined",
                  part_shape, k.output(0), value, "", part_base, std::move(arguments));
    begin += part_shape[axis];
  }
}

// Whether output 0 may share storage with an input of its type: every read
// of such an input is at the output element's own offset, which holds when
// no operator moves elements around.
bool reads_in_place(const CpuKernel& k) {
  if (k.outputs.size() != 1) return false;
  bool moves = false;
  post_order_visit(k.function->body, [&](const Expr& e) {
    const CallNode* c = as<CallNode>(e);
    const OpNode* op = c ? as<OpNode>(c->op) : nullptr;
    if (!op) return;
    moves = moves || op == ops::take() || op == ops::concatenate() || op == ops::transpose() ||
            op == ops::strided_slice();
  });
  return !moves;
}

}  // namespace

bool lower_element_loop(const CpuKernel& k, ki::Kernel& kernel, const std::string& loop_name,
                        const std::string& comment, const std::vector<int64_t>& shape, const std::string& output,
                        const LoweredValueAt& value, const std::string& layout) {
  ElementLoopBuilder builder{k, kernel};
  return builder.build(loop_name, comment, shape, output, value, layout);
}

ki::Kernel lower_elementwise_kernel(const CpuKernel& k) {
  ki::Kernel kernel = k.kernel_ir_buffers();
  if (k.result_is_empty()) return kernel;
  ElementLoopBuilder builder{k, kernel};
  if (as<OpNode>(k.root->op) == ops::split()) {
    lower_split(k, builder);
    return kernel;
  }
  if (!k.layout.empty())
    if (std::optional<ChannelConcatenation> concatenation = channel_concatenation(*k.function.get())) {
      lower_channel_concatenation(k, *concatenation, kernel);
      return kernel;
    }
  if (const CallNode* concat = concatenation_by_parts(k)) {
    lower_concatenation_by_parts(k, *concat, builder);
    return kernel;
  }
  Expr root(k.root);
  bool flat = builder.build(
      "compute", "Every element of the result, producers inlined", k.outputs[0]->shape, k.output(0),
      [&](ElementLowering& lowering, const IndexAt& at) { return lowering.lower(root, at); }, k.layout);
  kernel.outputs_may_alias_inputs = reads_in_place(k) && flat;
  return kernel;
}

}  // namespace switchyard
