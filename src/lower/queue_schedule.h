// The steps of a lowered program as one ordered queue per device, run at
// once (each on its own worker), with the events a step waits for.
//
// A kernel runs on its device's queue, a copy and a move on the queue of the
// device they write. Each queue keeps program order. A step waits for the
// latest step of every other queue that it conflicts with in memory: one
// writes what the other reads or writes (read after write, write after read,
// write after write), where memory is what the buffers occupy in the planned
// arenas (two tensors the memory plan gave one slot conflict), the caller's
// inputs and outputs, and the weights. Program order is a linearisation of
// these waits, so every conflicting pair of steps runs in program order and
// the results are those of the sequential entry, bit for bit; and no queue
// can wait for a step that waits for it.
#pragma once

#include <string>
#include <vector>

#include "lower/lower.h"
#include "lower/memory_plan.h"

namespace switchyard {

struct QueueSchedule {
  // Per queue: its device and its steps (indices into LoweredProgram::steps)
  // in program order. One queue (or none) means the program runs in order.
  std::vector<int> queue_devices;
  std::vector<std::vector<int>> queue_steps;
  // Per step: the steps of other queues it waits for, and the event it
  // signals when done (-1: nothing waits for it).
  std::vector<std::vector<int>> waits;
  std::vector<int> event_of_step;
  int event_count = 0;
  // Why the program runs as one queue though it uses several devices ("" when
  // it runs concurrently or uses one device).
  std::string why_sequential;

  bool concurrent() const { return queue_devices.size() > 1; }
};

// More steps than this on several devices run in order: finding the
// conflicts compares every pair of steps.
constexpr size_t kMaxScheduledSteps = 8000;

// `plan` and `tensor_of_buffer` come from plan_memory(memory_problem(program)).
// `synchronous_device[d]` says device d finishes its work before a step
// returns (a CPU); a program with a step on another device, or with an if
// (whose condition the host reads between steps), runs as one queue.
QueueSchedule schedule_queues(const LoweredProgram& program, const MemoryPlan& plan,
                              const std::vector<int>& tensor_of_buffer, const std::vector<bool>& synchronous_device);

}  // namespace switchyard
