// Converters of ONNX operators that reorder elements by indices computed at
// run time: ReverseSequence (10), a GatherElements along the time axis of
// the source positions where(t < length, length - 1 - t, t).
#include "frontend/onnx/converters.h"

namespace switchyard {

namespace {

// ReverseSequence: the first sequence_lens[b] steps of each batch element b
// reversed. A length past the time axis, or negative, fails the run (as
// GatherElements' run-time indices do) instead of reading another element.
void convert_reverse_sequence(NodeContext& c) {
  const std::vector<int64_t>& shape = c.input_shape(0);
  int64_t rank = int64_t(shape.size());
  if (rank < 2) c.fail("the input must have rank 2 or more, got " + std::to_string(rank));
  int64_t batch_axis = c.attr_int("batch_axis", 1), time_axis = c.attr_int("time_axis", 0);
  if (!((batch_axis == 0 && time_axis == 1) || (batch_axis == 1 && time_axis == 0)))
    c.fail("batch_axis and time_axis must be 0 and 1 in either order, got " + std::to_string(batch_axis) + " and " +
           std::to_string(time_axis));
  const std::vector<int64_t>& lengths_shape = c.input_shape(1);
  if (!dtype_is_int(c.input_dtype(1)) || lengths_shape.size() != 1 || lengths_shape[0] != shape[size_t(batch_axis)])
    c.fail("sequence_lens must be (batch) integers, got " + type_to_string(c.input(1)->checked_type()));
  int64_t steps = shape[size_t(time_axis)], batch = shape[size_t(batch_axis)];
  // Time positions and lengths as (time, batch) or (batch, time), with the
  // remaining axes as ones.
  std::vector<int64_t> time_shape(size_t(rank), 1), length_shape(size_t(rank), 1);
  time_shape[size_t(time_axis)] = steps;
  length_shape[size_t(batch_axis)] = batch;
  std::vector<int64_t> positions(static_cast<size_t>(steps));
  for (int64_t t = 0; t < steps; ++t) positions[size_t(t)] = t;
  Expr time = c.constant(int64_vector(positions).reshaped(time_shape));
  Expr length = reshape_to(c, cast_to(c, c.input(1), DType::kInt64), length_shape);
  Expr reversed = c.call("subtract", {c.call("subtract", {length, c.scalar(1, DType::kInt64)}), time});
  Expr source = c.call("where", {c.call("less", {time, length}), reversed, time});
  // A negative length: an index GatherElements finds outside the axis.
  Expr invalid = c.scalar(double(-steps - 1), DType::kInt64);
  source = c.call("where", {c.call("less", {length, c.scalar(0, DType::kInt64)}), invalid, source});
  source = c.call("broadcast_to", {source}, {{"shape", shape}});
  set_single_output(c, gather_elements(c, c.input(0), source, time_axis));
}

}  // namespace

void register_reorder_converters() { add_onnx_converter("ReverseSequence", {10}, {{10, convert_reverse_sequence}}); }

}  // namespace switchyard
