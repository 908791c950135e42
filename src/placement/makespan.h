// The predicted run time of a placed program: each device runs its queue of
// steps in program order, concurrently with the other devices; a step starts
// when its device is free and its inputs are there; a value read on another
// device than its producer's is copied once per destination, the copy being
// an item of the destination's queue (enqueued just before its first reader)
// that takes latency + bytes / bandwidth. The makespan is when the last
// queue drains. See docs/design.md, "Placement by time".
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace switchyard {

constexpr double kCannotRun = std::numeric_limits<double>::infinity();

struct CopyCost {
  double latency_ms = 0;
  double ms_per_byte = 0;
  double time(int64_t bytes) const { return latency_ms + double(bytes) * ms_per_byte; }
};

struct ScheduleInput {
  int producer = -1;  // the step that produces it
  int value = -1;     // the value's id (one copy per value and destination)
  int64_t bytes = 0;
};

struct ScheduleProblem {
  int num_devices = 0;
  int num_values = 0;
  // Per step: its time on each device (kCannotRun where
  // the device cannot run it), and the values it reads.
  std::vector<std::vector<double>> compute;
  std::vector<std::vector<ScheduleInput>> inputs;
  std::vector<std::vector<CopyCost>> copy;  // [source device][destination device]
  // Program order: producers before consumers (empty: by index).
  std::vector<int> order;

  int num_steps() const { return int(compute.size()); }
  int step_at(int position) const { return order.empty() ? position : order[size_t(position)]; }
};

// Step-by-step simulation, so a greedy planner can ask "when would this
// step finish on device d" without committing it.
class ScheduleSimulator {
 public:
  explicit ScheduleSimulator(const ScheduleProblem& problem);
  void reset();
  // When `step` would finish on `device`, given the steps placed so far.
  double finish_if(int step, int device) const;
  // Places `step` on `device` (after every step before it in program order).
  void place(int step, int device);
  double makespan() const;
  // When `device`'s queue drains, given the steps placed so far.
  double queue_end(int device) const { return queue_end_[size_t(device)]; }
  // When `value`'s copy to `device` arrived; negative when none was made.
  double copied_at(int value, int device) const {
    return copy_finish_[size_t(value) * size_t(p_.num_devices) + size_t(device)];
  }

  // After placing every step: per step its start and finish; per device its
  // compute and copy time; which item each step waited for last (-1: none,
  // else the step whose result, copied or not, or whose queue slot it waited for).
  const std::vector<double>& start() const { return start_; }
  const std::vector<double>& finish() const { return finish_; }
  const std::vector<double>& compute_time() const { return compute_time_; }
  const std::vector<double>& copy_time() const { return copy_time_; }
  const std::vector<int>& waited_for() const { return waited_for_; }
  int device_of(int step) const { return device_[size_t(step)]; }

 private:
  const ScheduleProblem& p_;
  std::vector<double> queue_end_;      // per device
  std::vector<int> queue_last_;        // per device: the step that ends its queue
  std::vector<double> copy_finish_;    // per value x device: when its copy arrived (< 0: none)
  std::vector<double> start_, finish_, compute_time_, copy_time_;
  std::vector<int> device_, waited_for_;
};

struct ScheduleSummary {
  double makespan = 0;
  std::vector<double> compute_ms, copy_ms;  // per device
  std::vector<int> critical_path;           // steps, first to last
};

// The makespan of a full assignment (device per step).
double simulate_makespan(const ScheduleProblem& problem, const std::vector<int>& device);
// The same, with per-device times and the critical path: from the step that
// finishes last back through what each step waited for.
ScheduleSummary summarise_schedule(const ScheduleProblem& problem, const std::vector<int>& device);

}  // namespace switchyard
