// The measured cost model behind `--objective latency` (docs/design.md,
// "Placement by time"): a cost file written by `switchyard profile` holds,
// per operator call identity and device, the median time of that call
// measured in a compiled program, the time of copies between devices, and
// the machine it was measured on. A compile reads it to give every place
// node a time per device.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ir/compilation_config.h"
#include "placement/makespan.h"
#include "ir/module.h"

namespace switchyard {

// What identifies the machine's CPU: a cost file measured elsewhere is refused.
struct MachineIdentity {
  std::string cpu_model;  // /proc/cpuinfo's "model name" (or the architecture)
  std::string isa;        // the vector extensions that decide kernel speed: "avx2 avx512f fma ..."
  static MachineIdentity this_machine();
};

struct ProfiledDevice {
  std::string name;  // "cpu:1"
  std::string kind;  // "cpu"
  int threads = 0;   // the runtime's thread count while measuring
  // A run's time outside its kernels (entry, inputs, outputs), measured
  // with the whole model on this device: the median run less the kernels' medians.
  double overhead_ms = 0;
};

// The other candidate of the latency objective: the whole model on one
// device with every core of the build's devices (a kernel on two cores is
// not half its time on one, so these are measured, not derived).
struct AllCoresProfile {
  std::string device;       // the device it ran on ("cpu:0")
  int threads = 0;          // every core: the sum of the devices' threads
  double run_ms = 0;        // the whole model's median run, for people
  double overhead_ms = 0;   // as ProfiledDevice::overhead_ms
  std::map<std::string, double> operator_ms;  // operator key -> median ms attributed to the call
};

struct CostFile {
  // 2: the all-cores candidate, run overheads and the hand-off between queues.
  static constexpr int kVersion = 2;
  MachineIdentity machine;
  std::string model;                      // the model it was measured on, for people
  std::vector<ProfiledDevice> devices;
  // (operator key, device name) -> median milliseconds attributed to the call.
  std::map<std::pair<std::string, std::string>, double> operator_ms;
  std::map<std::string, std::string> operator_text;  // key -> its canonical text
  // (source, destination) -> copy cost.
  std::map<std::pair<std::string, std::string>, CopyCost> copies;
  // What a value crossing devices costs beyond its copy: the consumer's
  // queue waking on the producer's event (a worker asleep on another core).
  double handoff_ms = 0;
  // The splits `profile` planned from these costs, built and ran beside the
  // whole model on one device with every core, in order. A split that ran
  // slower than predicted had the difference charged to its hand-offs (what
  // a value crossing devices costs in a real run: the layouts it forces on
  // both sides, a cold cache on the other core, the wake-up), so handoff_ms
  // is the measured hand-off plus every charge, and the one-device
  // candidate's times were calibrated to its runs in those turns. A plan with no hand-off
  // (one device on its own cores, or parts that never meet) has nothing to
  // charge: its run and the one-device candidate's, measured in turns,
  // calibrate the times instead (calibrate_to_check). Empty: nothing was
  // checked.
  struct SplitCheck {
    int64_t handoffs = 0;
    double predicted_ms = 0, measured_ms = 0, one_device_ms = 0;
    double charged_ms = 0;  // added to handoff_ms per hand-off
  };
  std::vector<SplitCheck> split_checks;
  // Required in a file (profile always measures it); absent in a CostFile
  // made in code, the split is then the only candidate.
  std::optional<AllCoresProfile> all_cores;
  // Each kernel measured, as fused: the key of its operators' texts joined
  // by " -> " (cost_key_of_text), that text, the device and its median.
  // For people and later cost models; planning reads operator_ms.
  struct Kernel {
    std::string key, operators, device;
    double median_ms = 0;
  };
  std::vector<Kernel> kernels;
};

// The canonical text of an operator call: operator, attributes, argument
// types and result type ("nn.dense(units=4) : (Tensor[(2, 8), float32],
// Tensor[(4, 8), float32]) -> Tensor[(2, 4), float32]"), the same in
// every compile and model; its key is a 64-bit FNV-1a hash of it in hex.
std::string operator_cost_text(const CallNode& call);
std::string operator_cost_key(const CallNode& call);
// The same hash of any canonical text (a fused kernel's operators).
std::string cost_key_of_text(const std::string& text);

std::string cost_file_json(const CostFile& costs);
// Error(kUsage) naming the file and field for malformed input.
CostFile parse_cost_file(const std::string& text, const std::string& path);
CostFile read_cost_file(const std::string& path);
// Scales the times so that both candidates of a check predict what they
// ran in turns: every operator time (and run overhead) on `split_devices`
// by split_measured / split_predicted, and the every-core times by
// one_measured / one_predicted. The profile measured each candidate in a
// run of its own, minutes apart on a shared machine; a check runs them in
// turns, so their ratio is the one to plan by.
void calibrate_to_check(CostFile* costs, const std::vector<std::string>& split_devices, double split_predicted_ms,
                        double split_measured_ms, double one_predicted_ms, double one_measured_ms);

// Error(kUsage) naming what differs when `costs` was measured on another machine.
void check_same_machine(const CostFile& costs, const MachineIdentity& here, const std::string& path);

}  // namespace switchyard
