// The device queues of hand-made lowered programs: which steps wait for which
// (lower/queue_schedule.h), above all where the memory plan reuses a slot.
#include "lower/queue_schedule.h"

#include <gtest/gtest.h>

namespace switchyard {
namespace queue_schedule_test {

// A program over float32 buffers of `bytes` each, on devices 0 and 1.
struct ProgramBuilder {
  LoweredProgram program;
  MemoryPlan plan;
  std::vector<int> tensor_of_buffer;

  ProgramBuilder() {
    plan.arenas = {{{0, "global"}, 4096, 0}, {{1, "global"}, 4096, 0}};
  }
  // An intermediate buffer at `offset` of its device's arena.
  int intermediate(int device, uint64_t offset, int64_t elements = 16) {
    LoweredBuffer b;
    b.device = device;
    b.type = tensor_type({elements}, DType::kFloat32);
    program.buffers.push_back(b);
    tensor_of_buffer.push_back(int(plan.offsets.size()));
    plan.offsets.push_back(offset);
    return int(program.buffers.size()) - 1;
  }
  int outside(LoweredBuffer::Kind kind, int index, int device) {
    LoweredBuffer b;
    b.kind = kind;
    b.index = index;
    b.device = device;
    b.type = tensor_type({16}, DType::kFloat32);
    program.buffers.push_back(b);
    tensor_of_buffer.push_back(-1);
    return int(program.buffers.size()) - 1;
  }
  int kernel(int device, std::vector<int> inputs, std::vector<int> outputs) {
    LoweredKernelCall call;
    call.device = device;
    program.kernel_calls.push_back(call);
    LoweredStep step;
    step.index = int(program.kernel_calls.size()) - 1;
    step.inputs = std::move(inputs);
    step.outputs = std::move(outputs);
    program.steps.push_back(step);
    return int(program.steps.size()) - 1;
  }
  int copy(int src_device, int dst_device, int from, int to) {
    program.copies.push_back({src_device, dst_device, 64, Span()});
    LoweredStep step;
    step.kind = LoweredStep::Kind::kCopy;
    step.index = int(program.copies.size()) - 1;
    step.inputs = {from};
    step.outputs = {to};
    program.steps.push_back(step);
    return int(program.steps.size()) - 1;
  }
  QueueSchedule schedule() const { return schedule_queues(program, plan, tensor_of_buffer, {true, true}); }
};

std::vector<int> waits_of(const QueueSchedule& s, int step) { return s.waits.at(size_t(step)); }

// cpu:0 computes a, cpu:1 copies it, and cpu:0 then reuses a's slot for c:
// run at once, c's kernel would overwrite a while the copy reads it.
TEST(QueueSchedule, ASlotReusedAfterACopyReadsItWaitsForTheCopy) {
  ProgramBuilder p;
  int x = p.outside(LoweredBuffer::Kind::kInput, 0, 0);
  int a = p.intermediate(0, 0), a_on_1 = p.intermediate(1, 0), b = p.intermediate(0, 64), c = p.intermediate(0, 0);
  int make_a = p.kernel(0, {x}, {a});
  int make_b = p.kernel(0, {a}, {b});
  int copy_a = p.copy(0, 1, a, a_on_1);
  int make_c = p.kernel(0, {b}, {c});  // a's slot, a dead after the copy
  int use_a = p.kernel(1, {a_on_1}, {p.outside(LoweredBuffer::Kind::kOutput, 0, 1)});
  QueueSchedule s = p.schedule();
  ASSERT_TRUE(s.concurrent());
  EXPECT_EQ(s.queue_devices, (std::vector<int>{0, 1}));
  EXPECT_EQ(s.queue_steps[0], (std::vector<int>{make_a, make_b, make_c}));
  EXPECT_EQ(s.queue_steps[1], (std::vector<int>{copy_a, use_a}));
  EXPECT_EQ(waits_of(s, copy_a), std::vector<int>{make_a});       // read after write
  EXPECT_EQ(waits_of(s, make_c), std::vector<int>{copy_a});       // write after read
  EXPECT_EQ(waits_of(s, make_b), std::vector<int>{});             // same queue: program order
  EXPECT_EQ(waits_of(s, use_a), std::vector<int>{});              // same queue as the copy
  EXPECT_GE(s.event_of_step[size_t(make_a)], 0);
  EXPECT_GE(s.event_of_step[size_t(copy_a)], 0);
  EXPECT_EQ(s.event_of_step[size_t(make_b)], -1);
  EXPECT_EQ(s.event_count, 2);
}

// Slots that only partly overlap conflict; the weights and inputs both
// queues read do not order them.
TEST(QueueSchedule, PartlyOverlappingSlotsConflictAndSharedReadsDoNot) {
  ProgramBuilder p;
  int x = p.outside(LoweredBuffer::Kind::kInput, 0, 0);
  int w = p.outside(LoweredBuffer::Kind::kWeight, 0, 0);
  int big = p.intermediate(0, 0, 32);  // bytes [0, 128)
  int big_on_1 = p.intermediate(1, 0, 32);
  int left = p.kernel(1, {x, w}, {p.intermediate(1, 256)});
  int make_big = p.kernel(0, {x, w}, {big});
  int copy_big = p.copy(0, 1, big, big_on_1);
  int tail = p.kernel(0, {x}, {p.intermediate(0, 64)});  // bytes [64, 128) of big's slot
  QueueSchedule s = p.schedule();
  ASSERT_TRUE(s.concurrent());
  EXPECT_EQ(waits_of(s, make_big), std::vector<int>{});
  EXPECT_EQ(waits_of(s, copy_big), std::vector<int>{make_big});
  EXPECT_EQ(waits_of(s, tail), std::vector<int>{copy_big});
  EXPECT_EQ(waits_of(s, left), std::vector<int>{});
}

// Two queues writing the same output (a move, then a kernel) keep their order.
TEST(QueueSchedule, WritesOfOneOutputFromTwoQueuesKeepTheirOrder) {
  ProgramBuilder p;
  int x = p.outside(LoweredBuffer::Kind::kInput, 0, 0);
  int out = p.outside(LoweredBuffer::Kind::kOutput, 0, 1);
  int first = p.kernel(1, {x}, {out});
  int second = p.kernel(0, {x}, {out});
  QueueSchedule s = p.schedule();
  ASSERT_TRUE(s.concurrent());
  EXPECT_EQ(waits_of(s, second), std::vector<int>{first});
}

// Two stages (cpu:0, then cpu:1) whose result is an output on cpu:0: the
// copy back runs on cpu:1's queue, so cpu:0's queue ends with its own stage
// and a pipelined next request starts there without waiting for stage 2.
// A copy between stages still runs on its destination's queue.
TEST(QueueSchedule, ACopyIntoAnOutputRunsOnItsSourcesQueue) {
  ProgramBuilder p;
  int x = p.outside(LoweredBuffer::Kind::kInput, 0, 0);
  int a = p.intermediate(0, 0), a_on_1 = p.intermediate(1, 0), b = p.intermediate(1, 64);
  int out = p.outside(LoweredBuffer::Kind::kOutput, 0, 0);
  int stage1 = p.kernel(0, {x}, {a});
  int hand_over = p.copy(0, 1, a, a_on_1);
  int stage2 = p.kernel(1, {a_on_1}, {b});
  int copy_back = p.copy(1, 0, b, out);
  QueueSchedule s = p.schedule();
  ASSERT_TRUE(s.concurrent());
  EXPECT_EQ(s.queue_steps[0], (std::vector<int>{stage1}));
  EXPECT_EQ(s.queue_steps[1], (std::vector<int>{hand_over, stage2, copy_back}));
  EXPECT_EQ(waits_of(s, hand_over), std::vector<int>{stage1});
  EXPECT_EQ(waits_of(s, copy_back), std::vector<int>{});
}

TEST(QueueSchedule, OneDeviceAnIfOrAnAsynchronousDeviceRunInOrder) {
  ProgramBuilder one;
  int x = one.outside(LoweredBuffer::Kind::kInput, 0, 0);
  one.kernel(0, {x}, {one.intermediate(0, 0)});
  one.kernel(0, {x}, {one.intermediate(0, 64)});
  EXPECT_FALSE(one.schedule().concurrent());
  EXPECT_EQ(one.schedule().why_sequential, "");

  ProgramBuilder branching;
  x = branching.outside(LoweredBuffer::Kind::kInput, 0, 0);
  branching.kernel(0, {x}, {branching.intermediate(0, 0)});
  LoweredStep if_begin;
  if_begin.kind = LoweredStep::Kind::kIfBegin;
  if_begin.inputs = {x};
  branching.program.steps.push_back(if_begin);
  branching.kernel(1, {x}, {branching.intermediate(1, 0)});
  LoweredStep if_end;
  if_end.kind = LoweredStep::Kind::kIfEnd;
  branching.program.steps.push_back(if_end);
  QueueSchedule s = branching.schedule();
  EXPECT_FALSE(s.concurrent());
  EXPECT_NE(s.why_sequential.find("if"), std::string::npos) << s.why_sequential;

  ProgramBuilder gpu;
  x = gpu.outside(LoweredBuffer::Kind::kInput, 0, 0);
  gpu.kernel(0, {x}, {gpu.intermediate(0, 0)});
  gpu.kernel(1, {x}, {gpu.intermediate(1, 0)});
  s = schedule_queues(gpu.program, gpu.plan, gpu.tensor_of_buffer, {true, false});
  EXPECT_FALSE(s.concurrent());
  EXPECT_NE(s.why_sequential.find("GPU"), std::string::npos) << s.why_sequential;
}

}  // namespace queue_schedule_test
}  // namespace switchyard
