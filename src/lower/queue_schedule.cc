// Per-device queues of a lowered program and the waits between them (see
// queue_schedule.h).
#include "lower/queue_schedule.h"

#include <algorithm>
#include <map>

namespace switchyard {

namespace {

// Memory one step reads or writes: bytes [begin, end) of one space (an
// arena, an input, an output or the weights of one device).
struct Access {
  int64_t space = 0;
  uint64_t begin = 0, end = 0;
  bool write = false;
};

enum SpaceKind : int64_t { kArenaSpace, kInputSpace, kOutputSpace, kWeightSpace };

int64_t space_id(SpaceKind kind, int index) { return (int64_t(kind) << 32) | int64_t(uint32_t(index)); }

class AccessFinder {
 public:
  AccessFinder(const LoweredProgram& program, const MemoryPlan& plan, const std::vector<int>& tensor_of_buffer)
      : program_(program), plan_(plan), tensor_of_buffer_(tensor_of_buffer) {}

  std::vector<Access> of_step(const LoweredStep& step) const {
    std::vector<Access> accesses;
    for (int b : step.inputs) accesses.push_back(of_buffer(b, /*write=*/false));
    for (int b : step.outputs) accesses.push_back(of_buffer(b, /*write=*/true));
    return accesses;
  }

 private:
  Access of_buffer(int b, bool write) const {
    const LoweredBuffer& buffer = program_.buffers[size_t(b)];
    switch (buffer.kind) {
      case LoweredBuffer::Kind::kInput:
        return {space_id(kInputSpace, buffer.index), 0, 1, write};
      case LoweredBuffer::Kind::kOutput:
        return {space_id(kOutputSpace, buffer.index), 0, 1, write};
      case LoweredBuffer::Kind::kWeight:
        return {space_id(kWeightSpace, buffer.index), 0, 1, write};
      case LoweredBuffer::Kind::kIntermediate:
        break;
    }
    int tensor = tensor_of_buffer_[size_t(b)];
    uint64_t offset = plan_.offsets.at(size_t(tensor));
    // The whole aligned slot, and at least one byte: an empty tensor still orders its steps.
    return {space_id(kArenaSpace, arena_index(buffer)), offset, offset + std::max<uint64_t>(align_to_arena(buffer.bytes()), 1),
            write};
  }

  int arena_index(const LoweredBuffer& buffer) const {
    for (size_t a = 0; a < plan_.arenas.size(); ++a)
      if (plan_.arenas[a].key.device == buffer.device && plan_.arenas[a].key.scope == buffer.scope) return int(a);
    return -1;
  }

  const LoweredProgram& program_;
  const MemoryPlan& plan_;
  const std::vector<int>& tensor_of_buffer_;
};

bool conflict(const std::vector<Access>& earlier, const std::vector<Access>& later) {
  for (const Access& a : earlier)
    for (const Access& b : later)
      if ((a.write || b.write) && a.space == b.space && a.begin < b.end && b.begin < a.end) return true;
  return false;
}

// The device whose queue runs `step`; -1 for an if's steps.
int queue_device(const LoweredProgram& program, const LoweredStep& step) {
  switch (step.kind) {
    case LoweredStep::Kind::kKernel:
      return program.kernel_calls[size_t(step.index)].device;
    case LoweredStep::Kind::kCopy: {
      // A copy into a program output runs on its source's queue: on the
      // destination's, the first device would wait there for the last
      // stage of the request, and a pipelined request behind it with it.
      const LoweredCopy& copy = program.copies[size_t(step.index)];
      bool into_output = !step.outputs.empty() &&
                         program.buffers[size_t(step.outputs[0])].kind == LoweredBuffer::Kind::kOutput;
      return into_output ? copy.src_device : copy.dst_device;
    }
    case LoweredStep::Kind::kMove:
      return program.buffers[size_t(step.outputs[0])].device;
    default:
      return -1;
  }
}

// Why the program must run as one queue, or "".
std::string why_sequential(const LoweredProgram& program, const std::vector<int>& step_devices,
                           const std::vector<bool>& synchronous_device) {
  for (size_t s = 0; s < program.steps.size(); ++s) {
    if (step_devices[s] < 0) return "it branches (an if's condition is read on the host between steps)";
    if (size_t(step_devices[s]) >= synchronous_device.size() || !synchronous_device[size_t(step_devices[s])])
      return "a step runs on a device that finishes its work after the step returns (a GPU)";
  }
  if (program.steps.size() > kMaxScheduledSteps)
    return "it has more than " + std::to_string(kMaxScheduledSteps) + " steps";
  return "";
}

}  // namespace

QueueSchedule schedule_queues(const LoweredProgram& program, const MemoryPlan& plan,
                              const std::vector<int>& tensor_of_buffer, const std::vector<bool>& synchronous_device) {
  const size_t n = program.steps.size();
  QueueSchedule schedule;
  schedule.waits.assign(n, {});
  schedule.event_of_step.assign(n, -1);
  std::vector<int> step_devices(n);
  std::map<int, int> queue_of_device;  // ascending device order
  for (size_t s = 0; s < n; ++s) {
    step_devices[s] = queue_device(program, program.steps[s]);
    queue_of_device.emplace(step_devices[s], 0);
  }
  if (queue_of_device.size() < 2) return schedule;
  schedule.why_sequential = why_sequential(program, step_devices, synchronous_device);
  if (!schedule.why_sequential.empty()) return schedule;

  for (auto& [device, queue] : queue_of_device) {
    queue = int(schedule.queue_devices.size());
    schedule.queue_devices.push_back(device);
  }
  schedule.queue_steps.assign(schedule.queue_devices.size(), {});
  AccessFinder finder(program, plan, tensor_of_buffer);
  std::vector<std::vector<Access>> accesses(n);
  std::vector<int> queue_of_step(n);
  for (size_t s = 0; s < n; ++s) {
    accesses[s] = finder.of_step(program.steps[s]);
    queue_of_step[s] = queue_of_device.at(step_devices[s]);
    schedule.queue_steps[size_t(queue_of_step[s])].push_back(int(s));
  }
  // For each step, the latest conflicting step of each other queue: its
  // queue's order covers the earlier ones.
  for (size_t later = 0; later < n; ++later) {
    std::vector<int> latest(schedule.queue_devices.size(), -1);
    for (size_t earlier = 0; earlier < later; ++earlier) {
      int queue = queue_of_step[earlier];
      if (queue != queue_of_step[later] && conflict(accesses[earlier], accesses[later])) latest[size_t(queue)] = int(earlier);
    }
    for (int step : latest) {
      if (step < 0) continue;
      schedule.waits[later].push_back(step);
      if (schedule.event_of_step[size_t(step)] < 0) schedule.event_of_step[size_t(step)] = schedule.event_count++;
    }
  }
  return schedule;
}

}  // namespace switchyard
