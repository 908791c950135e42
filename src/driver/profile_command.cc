// `switchyard profile`: measures the cost file behind `--objective latency`
// (docs/design.md, "Placement by time"). The model is compiled once per
// candidate device, that device the default of the build, and run with the
// per-kernel timing `run --profile` prints; each kernel's median time is
// split equally among the operator calls it computes (found by the spans
// its fused span names), and each call's share is recorded under its
// operator key (placement/cost_model.h) for the device the kernel ran on.
// The first device's artifact runs again with every core's threads (the
// one-device candidate), the artifacts taking turns run by run; two threads on the devices' cores hand
// buffers over as the queues do (the hand-off and the copies). Last, the
// split those costs plan is built and run (check_splits).
#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <numeric>
#include <random>
#include <set>
#include <thread>
#include <sched.h>
#include <unistd.h>

#include "driver/commands.h"
#include "driver/core_share.h"
#include "driver/driver_util.h"
#include "driver/measured_times.h"
#include "ir/functor.h"
#include "op/placement_ops.h"
#include "pipeline/build.h"
#include "placement/cost_model.h"
#include "placement/latency_placement.h"
#include "placement/plan_devices.h"
#include "runtime/artifact.h"
#include "runtime/core_set.h"
#include "runtime/device_queues.h"
#include "runtime/runtime_error.h"
#include "runtime/thread_pool.h"
#include "support/error.h"
#include "transform/infer_type.h"

namespace switchyard {

namespace {

struct ProfileFlags {
  ModelFlags model;
  std::vector<std::string> devices;
  std::vector<std::string> cores;  // DEVICE=LIST: only the thread count is used here
  int threads = 0;
  int repeat = 20;
  std::string output;
};

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n == 0 ? 0 : n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// The parts of a manifest kernel's span text: "fused(a, b)" or "a".
std::vector<std::string> span_parts(const std::string& span) {
  if (!span.starts_with("fused(") || !span.ends_with(")")) return {span};
  std::vector<std::string> parts;
  std::string inner = span.substr(6, span.size() - 7);
  for (size_t begin = 0; begin <= inner.size();) {
    size_t end = inner.find(", ", begin);
    if (end == std::string::npos) end = inner.size();
    parts.push_back(inner.substr(begin, end - begin));
    begin = end + 2;
  }
  return parts;
}

// The number of cores in "0-3,8" (for --cores DEVICE=LIST).
int count_cores(const std::string& list, const std::string& flag) {
  int count = 0;
  size_t begin = 0;
  while (begin < list.size()) {
    size_t end = std::min(list.find(',', begin), list.size());
    std::string item = list.substr(begin, end - begin);
    size_t dash = item.find('-');
    try {
      int first = std::stoi(item.substr(0, dash));
      int last = dash == std::string::npos ? first : std::stoi(item.substr(dash + 1));
      if (last < first || first < 0) throw std::invalid_argument(item);
      count += last - first + 1;
    } catch (const std::exception&) {
      throw Error(ErrorKind::kUsage, "malformed --cores '" + flag + "': expected DEVICE=0-3,8");
    }
    begin = end + 1;
  }
  if (count == 0) throw Error(ErrorKind::kUsage, "malformed --cores '" + flag + "': no cores");
  return count;
}

double sum(const std::vector<double>& values) { return std::accumulate(values.begin(), values.end(), 0.0); }

struct Measured {
  std::vector<double> kernel_ms;  // median per kernel (by manifest index)
  double run_ms = 0;              // median whole run
  double overhead_ms = 0;         // the run less its kernels' medians (never below 0)
};

// Each artifact (a directory and its thread count) run `repeat` times, the
// artifacts taking turns of a few runs, so a shared machine's
// changing load touches every candidate alike: per artifact the median time
// of each kernel and of the whole run.
std::vector<Measured> measure_in_turns(const std::vector<std::pair<std::string, int>>& artifacts, int repeat,
                                       std::vector<Manifest>* manifests) {
  struct Loaded {
    std::shared_ptr<Artifact> artifact;
    std::map<std::string, NDArray> inputs;
    std::vector<std::vector<double>> times;  // per kernel
    std::vector<double> runs;
  };
  std::vector<Loaded> loaded;
  size_t current = 0;
  try {
    for (const auto& [dir, threads] : artifacts) {
      LoadOptions load;
      load.threads = threads;
      Loaded l;
      l.artifact = Artifact::load(dir, load);
      manifests->push_back(l.artifact->manifest());
      l.inputs = made_up_inputs(manifests->back());
      l.times.resize(manifests->back().kernels.size());
      loaded.push_back(std::move(l));
    }
    // Turns of a few runs, the first untimed: a team of threads another
    // thread count left asleep is woken before the timing starts.
    constexpr int kRunsPerTurn = 5;
    for (int done = 0; done < repeat; done += kRunsPerTurn)
      for (current = 0; current < loaded.size(); ++current) {
        Loaded& l = loaded[current];
        for (int i = 0; i <= std::min(kRunsPerTurn, repeat - done); ++i) {
          auto start = std::chrono::steady_clock::now();
          RunResult result = l.artifact->run(l.inputs, RunOptions{});
          double took = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
          if (i == 0) continue;
          l.runs.push_back(took);
          std::vector<double> run(l.times.size(), 0);
          for (const KernelRecord& k : result.stats.kernels) run[size_t(k.index)] += double(k.elapsed_ns) / 1e6;
          for (size_t k = 0; k < run.size(); ++k) l.times[k].push_back(run[k]);
        }
      }
  } catch (const RuntimeError& e) {
    const std::string& dir = artifacts[std::min(current, artifacts.size() - 1)].first;
    throw Error(ErrorKind::kRuntime, std::string("profiling ") + dir + ": " + e.what());
  }
  std::vector<Measured> out;
  for (const Loaded& l : loaded) {
    Measured m;
    for (const auto& t : l.times) m.kernel_ms.push_back(median(t));
    m.run_ms = median(l.runs);
    double kernels = 0;
    for (double ms : m.kernel_ms) kernels += ms;
    m.overhead_ms = std::max(0.0, m.run_ms - kernels);
    out.push_back(std::move(m));
  }
  return out;
}

// A least-squares line through (bytes, ms) points: latency and time per byte.
CopyCost fit_line(const std::vector<double>& sizes, const std::vector<double>& ms) {
  const double n = double(sizes.size());
  double mean_x = 0, mean_y = 0;
  for (size_t i = 0; i < sizes.size(); ++i) mean_x += sizes[i] / n, mean_y += ms[i] / n;
  double sxy = 0, sxx = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    sxy += (sizes[i] - mean_x) * (ms[i] - mean_y);
    sxx += (sizes[i] - mean_x) * (sizes[i] - mean_x);
  }
  CopyCost cost;
  cost.ms_per_byte = std::max(0.0, sxy / sxx);
  cost.latency_ms = std::max(0.0, mean_y - cost.ms_per_byte * mean_x);
  return cost;
}

struct Handoff {
  double handoff_ms = 0;  // from one queue's signal to the waiting queue running again
  CopyCost copy;          // a copy on the destination's core of data just written on the source's
};

// As the runtime hands a value between device queues: a thread on the
// source device's cores writes a buffer and signals a RunEvents event; a
// thread on the destination's, waiting on it (spinning, then asleep, as a
// queue does), wakes and copies the buffer, whose lines are in the other
// core's cache. Medians of each size; the copies fit a line.
Handoff measure_handoff(const std::vector<int>& source_cores, const std::vector<int>& destination_cores) {
  const std::vector<size_t> sizes = {size_t(64) << 10, size_t(1) << 20, size_t(8) << 20};
  const int rounds = 15;  // per size
  const int total = rounds * int(sizes.size());
  std::vector<char> source(sizes.back()), destination(sizes.back());
  std::vector<double> signalled(static_cast<size_t>(total)), woke(signalled), copied(signalled);
  RunEvents written(total), done(total);
  auto now_ms = [] { return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count(); };
  std::string failure, consumer_failure;
  std::thread producer([&] {
    try {
      pin_calling_thread(source_cores);
    } catch (const RuntimeError& e) {
      failure = e.what();
    }
    for (int i = 0; i < total; ++i) {
      std::memset(source.data(), i & 0x7f, sizes[size_t(i / rounds)]);
      signalled[size_t(i)] = now_ms();
      written.signal(i);
      done.wait(i);
    }
  });
  std::thread consumer([&] {
    try {
      pin_calling_thread(destination_cores);
    } catch (const RuntimeError& e) {
      consumer_failure = e.what();
    }
    for (int i = 0; i < total; ++i) {
      written.wait(i);
      woke[size_t(i)] = now_ms();
      std::memcpy(destination.data(), source.data(), sizes[size_t(i / rounds)]);
      copied[size_t(i)] = now_ms();
      done.signal(i);
    }
  });
  producer.join();
  consumer.join();
  if (failure.empty()) failure = consumer_failure;
  if (!failure.empty()) throw Error(ErrorKind::kUsage, "--cores: " + failure);
  std::vector<double> waits, x, y;
  for (size_t s = 0; s < sizes.size(); ++s) {
    std::vector<double> copies;
    for (int r = 1; r < rounds; ++r) {  // the first of each size warms up
      size_t i = s * size_t(rounds) + size_t(r);
      waits.push_back(woke[i] - signalled[i]);
      copies.push_back(copied[i] - woke[i]);
    }
    x.push_back(double(sizes[s]));
    y.push_back(median(copies));
  }
  return {std::max(0.0, median(waits)), fit_line(x, y)};
}

// Operator calls by span text (as a compile's placement sees them).
std::map<std::string, std::vector<const CallNode*>> calls_by_span(const IRModule& typed) {
  std::map<std::string, std::vector<const CallNode*>> out;
  for (const auto& [name, function] : typed.functions())
    post_order_visit(function, [&](const Expr& e) {
      const CallNode* call = as<CallNode>(e);
      const OpNode* op = call ? as<OpNode>(call->op) : nullptr;
      if (op && op != device_copy_op() && op != on_device_op() && call->span().defined())
        out[call->span().to_string()].push_back(call);
    });
  return out;
}

using CallsBySpan = std::map<std::string, std::vector<const CallNode*>>;
using Samples = std::map<std::pair<std::string, std::string>, std::vector<double>>;  // (key, device) -> per call

// Splits each kernel's time equally among the calls its span names, adds
// each call's share to the samples of its key on the device the kernel ran
// on (a wish may put it elsewhere than `device`), and gives calls in no
// kernel a time of 0 on `device`; records each kernel whole too. Returns the
// time of kernels that name no call.
double attribute_kernel_times(const Manifest& manifest, const std::vector<double>& kernel_ms, const CallsBySpan& calls,
                              const std::string& device, CostFile* costs, Samples* samples) {
  std::map<std::pair<const CallNode*, std::string>, double> call_ms;
  std::set<const CallNode*> in_a_kernel;
  double unattributed = 0;
  for (size_t k = 0; k < manifest.kernels.size(); ++k) {
    std::vector<const CallNode*> members;
    for (const std::string& part : span_parts(manifest.kernels[k].span))
      if (auto it = calls.find(part); it != calls.end()) members.insert(members.end(), it->second.begin(), it->second.end());
    if (members.empty()) unattributed += kernel_ms[k];
    const std::string& ran_on = manifest.devices.at(size_t(manifest.kernels[k].device)).name;
    std::string chain;
    for (const CallNode* call : members) chain += (chain.empty() ? "" : " -> ") + operator_cost_text(*call);
    if (!chain.empty()) costs->kernels.push_back({cost_key_of_text(chain), chain, ran_on, kernel_ms[k]});
    for (const CallNode* call : members) {
      call_ms[{call, ran_on}] += kernel_ms[k] / double(members.size());
      in_a_kernel.insert(call);
    }
  }
  for (const auto& [span, list] : calls)
    for (const CallNode* call : list)
      if (!in_a_kernel.count(call)) call_ms[{call, device}] = 0;  // folded or simplified away: it costs nothing
  for (const auto& [call_device, ms] : call_ms) {
    std::string key = operator_cost_key(*call_device.first);
    costs->operator_text[key] = operator_cost_text(*call_device.first);
    (*samples)[{key, call_device.second}].push_back(ms);
  }
  return unattributed;
}

// Scales one device's times per operator key (`ms`: key -> ms) so that the
// model's calls, priced as planning prices them (each call its key's
// median), sum to the device's measured kernel time `kernels_ms`. A key's
// median under-prices calls of that key that run slower (the first block of
// a tower, whose inputs are cold in cache), and kernels no call's span names
// (the layout reorders the build inserted) price nothing: a whole model on
// the device was predicted short of the very run it was measured from (two
// towers on both cores: 0.868 ms of a 0.933 ms run, which chose that device
// over a split that ran faster). Scaled, a whole model on the device is
// predicted as its run: its kernels plus its overhead.
void scale_to_kernel_time(const CallsBySpan& calls, double kernels_ms,
                          const std::function<double*(const std::string& key)>& ms_of_key) {
  double priced = 0;
  for (const auto& [span, list] : calls)
    for (const CallNode* call : list)
      if (double* ms = ms_of_key(operator_cost_key(*call))) priced += *ms;
  if (priced <= 0 || kernels_ms <= 0) return;
  const double factor = kernels_ms / priced;
  std::set<std::string> done;
  for (const auto& [span, list] : calls)
    for (const CallNode* call : list) {
      const std::string key = operator_cost_key(*call);
      if (double* ms = ms_of_key(key); ms && done.insert(key).second) *ms *= factor;
    }
}

// The splits a latency compile would plan from `costs`, checked by running
// them: each is built and run in turns with `one_device` (the first device's
// artifact with every core's threads). A split slower than predicted has
// the difference charged to its hand-offs (costs->handoff_ms grows by it
// per hand-off; the planner's hand-off is a two-thread microbenchmark that
// sees neither the layouts a crossing forces on both sides nor the caches
// it leaves cold). The one-device candidate's times are calibrated to its
// runs in those turns (calibrate_to_check): its profile run is one sample
// of a shared machine, and a spell where two threads ran no faster than one
// made GoogLeNet's profile pick a split that ran 1.9x its one-device build.
// Planning runs again until the plan is one device, a split holds its
// prediction within a tenth and ran no slower than one device in the same
// turns, or kSplitChecks splits were run. A plan with no hand-off (the
// whole model on one core of its own) has nothing to charge: its check
// calibrates both candidates' times and plans once more. Each check is
// recorded in the cost file.
constexpr int kSplitChecks = 3;

// The devices `plan` puts a node on, by name.
std::vector<std::string> devices_used(const PlanResult& plan) {
  std::vector<std::string> names;
  for (const VirtualDevice* d : plan.solution.device)
    if (d && std::find(names.begin(), names.end(), d->device_name()) == names.end()) names.push_back(d->device_name());
  return names;
}

void check_splits(const IRModule& mod, const CompilationConfig& config,
                  const std::map<std::string, std::vector<int>>& cores, const std::pair<std::string, int>& one_device,
                  int repeat, const std::filesystem::path& scratch, CostFile* costs) {
  const IRModule typed = infer_type(mod);
  bool calibrated = false;
  for (int round = 0; round < kSplitChecks; ++round) {
    LatencyObjective objective{std::make_shared<CostFile>(*costs), "the costs being measured"};
    PlanResult plan = plan_devices(typed, config, objective);
    const LatencyChoice& choice = *plan.choice;
    if (choice.one_device || (choice.handoffs == 0 && calibrated)) {
      std::cout << "split check: " << (calibrated ? "calibrated to the runs in turns, " : "") << "these costs plan "
                << (choice.one_device ? "one device with every core" : "no hand-off") << "\n";
      return;
    }
    BuildOptions options;
    options.config = config;
    objective.one_device = false;
    options.latency = objective;
    options.device_cores = cores;
    options.diagnostics = stderr_diagnostics();
    const std::string dir = (scratch / ("split" + std::to_string(round))).string();
    build_artifact(mod, options, dir);
    std::vector<Manifest> manifests;
    std::vector<Measured> measured = measure_in_turns({{dir, 0}, one_device}, repeat, &manifests);
    CostFile::SplitCheck check{choice.handoffs, choice.split_ms, measured[0].run_ms, measured[1].run_ms, 0};
    if (check.handoffs == 0) {
      calibrate_to_check(costs, devices_used(plan), check.predicted_ms, check.measured_ms, choice.one_device_ms,
                         check.one_device_ms);
      calibrated = true;
    } else {
      if (check.measured_ms > check.predicted_ms)
        check.charged_ms = (check.measured_ms - check.predicted_ms) / double(check.handoffs);
      calibrate_to_check(costs, {}, 0, 0, choice.one_device_ms, check.one_device_ms);
    }
    costs->handoff_ms += check.charged_ms;
    costs->split_checks.push_back(check);
    std::cout << "split check " << round + 1 << ": " << check.handoffs << " hand-offs, predicted "
              << check.predicted_ms << " ms, ran " << check.measured_ms << " ms (one device with every core "
              << check.one_device_ms << " ms";
    std::cout << ", predicted " << choice.one_device_ms << "; "
              << (check.handoffs == 0 ? "times" : "its times") << " calibrated to these runs)";
    if (check.charged_ms > 0) std::cout << "; hand-off charged " << check.charged_ms << " ms more";
    std::cout << "\n";
    if (check.handoffs > 0 && check.measured_ms <= 1.1 * check.predicted_ms && check.measured_ms <= check.one_device_ms)
      return;
  }
}

// How long the core-share probe computes on each core, alone and together.
constexpr std::chrono::milliseconds kCoreShareWindow{40};

// The cores the devices run on (their --cores), else every core this process may run on.
std::vector<int> cores_to_probe(const std::vector<int>& device_cores) {
  if (!device_cores.empty()) return device_cores;
  std::vector<int> cores;
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return cores;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &allowed)) cores.push_back(c);
  return cores;
}

// The probe before and after the measurements: a line, and a warning when
// the cores did not run at once at either time.
void report_core_share(const std::vector<CoreShare>& shares) {
  const CoreShare* shared = &shares.front();
  const CoreShare* uneven = &shares.front();
  for (const CoreShare& s : shares) {
    if (s.least() < shared->least()) shared = &s;
    if (s.slowest_alone() < uneven->slowest_alone()) uneven = &s;
  }
  std::cout << "core share before and after measuring: " << shares.front().text() << "; " << shares.back().text()
            << "\n";
  if (shared->least() < kLeastCoreShare)
    std::cerr << "warning: while profiling, " << shared->text()
              << " when all compute (two of them one physical core at the time, or a load beside them): the "
                 "costs assume the devices' cores run at once, so a latency build from this file may choose "
                 "fewer devices than it should; profile again when the cores are free\n";
  if (uneven->slowest_alone() < kLeastCoreShare)
    std::cerr << "warning: while profiling, " << uneven->alone_text()
              << " (another load on it): the devices' kernels were measured at speeds they will not run at; "
                 "profile again when the cores are free\n";
}

void run_profile(const ProfileFlags& f) {
  if (f.devices.empty()) throw Error(ErrorKind::kUsage, "profile needs at least one --device");
  std::map<std::string, int> threads;
  std::map<std::string, std::vector<int>> cores;
  for (const std::string& d : f.devices) {
    const VirtualDevice* device = VirtualDevice::parse(d);
    if (device_kind_name(device->kind()) != std::string("cpu"))
      throw Error(ErrorKind::kUsage, "profile measures CPU devices only; --device " + d + " is not one");
    threads[device->device_name()] = f.threads > 0 ? f.threads : default_thread_count();
  }
  for (const std::string& c : f.cores) {
    size_t eq = c.find('=');
    if (eq == std::string::npos || !threads.count(c.substr(0, eq)))
      throw Error(ErrorKind::kUsage, "malformed --cores '" + c + "': expected DEVICE=0-3 for a --device");
    threads[c.substr(0, eq)] = count_cores(c.substr(eq + 1), c);
    try {
      cores[c.substr(0, eq)] = parse_device_cores(c).second;
    } catch (const RuntimeError& e) {
      throw Error(ErrorKind::kUsage, "malformed --cores '" + c + "': " + e.what());
    }
  }
  // Refused before minutes of measuring, as the split check's build would refuse it.
  const std::vector<std::pair<std::string, std::vector<int>>> core_sets(cores.begin(), cores.end());
  if (std::string why = overlapping_cores(core_sets); !why.empty()) throw Error(ErrorKind::kUsage, "--cores: " + why);
  // The other candidate: the first device with every core the devices have
  // (every core of the machine's pool when some device has no core set).
  std::vector<int> every_core;
  for (const auto& [device, list] : cores) every_core.insert(every_core.end(), list.begin(), list.end());
  std::sort(every_core.begin(), every_core.end());
  every_core.erase(std::unique(every_core.begin(), every_core.end()), every_core.end());
  const int all_threads = f.threads > 0 ? f.threads * int(f.devices.size())
                          : cores.size() == f.devices.size() ? int(every_core.size())
                                                             : default_thread_count();
  IRModule mod = load_model(f.model);
  IRModule typed = infer_type(mod);
  const std::vector<int> probed = cores_to_probe(every_core);
  std::vector<CoreShare> shares;
  if (probed.size() > 1) shares.push_back(measure_core_share(probed, kCoreShareWindow));
  auto calls = calls_by_span(typed);
  std::string all_devices;
  for (const std::string& d : f.devices) all_devices += (all_devices.empty() ? "" : ",") + d;

  CostFile costs;
  costs.machine = MachineIdentity::this_machine();
  costs.model = f.model.file;
  Samples samples;
  // The per-device artifacts, removed however the command ends.
  struct Scratch {
    std::filesystem::path path = std::filesystem::temp_directory_path() /
                                 ("switchyard-profile-" + std::to_string(::getpid()));
    ~Scratch() {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  } scratch_dir;
  const std::filesystem::path& scratch = scratch_dir.path;
  // Every device's artifact, and the first one's again with every core's threads.
  std::vector<std::pair<std::string, int>> artifacts;
  for (const std::string& d : f.devices) {
    const std::string name = VirtualDevice::parse(d)->device_name();
    BuildOptions options;
    options.config = CompilationConfig::parse(all_devices, d);
    options.diagnostics = stderr_diagnostics();
    std::string dir = (scratch / name).string();
    build_artifact(mod, options, dir);
    artifacts.push_back({dir, threads[name]});
  }
  artifacts.push_back({artifacts.front().first, all_threads});
  std::vector<Manifest> manifests;
  std::vector<Measured> measured = measure_in_turns(artifacts, f.repeat, &manifests);
  for (size_t i = 0; i < f.devices.size(); ++i) {
    const std::string name = VirtualDevice::parse(f.devices[i])->device_name();
    costs.devices.push_back({name, "cpu", threads[name], measured[i].overhead_ms});
    double unattributed = attribute_kernel_times(manifests[i], measured[i].kernel_ms, calls, name, &costs, &samples);
    std::cout << name << " (" << threads[name] << " threads): " << manifests[i].kernels.size() << " kernels, run "
              << measured[i].run_ms << " ms";
    if (unattributed > 0) std::cout << ", " << unattributed << " ms in kernels no operator call's span names";
    std::cout << "\n";
  }
  for (const auto& [key_device, list] : samples) costs.operator_ms[key_device] = median(list);
  for (size_t i = 0; i < f.devices.size(); ++i) {
    const std::string name = VirtualDevice::parse(f.devices[i])->device_name();
    scale_to_kernel_time(calls, sum(measured[i].kernel_ms), [&](const std::string& key) {
      auto it = costs.operator_ms.find({key, name});
      return it == costs.operator_ms.end() ? nullptr : &it->second;
    });
  }
  {
    AllCoresProfile all;
    all.device = costs.devices.front().name;
    all.threads = all_threads;
    const Measured& m = measured.back();
    CostFile kernels_elsewhere;
    Samples all_samples;
    attribute_kernel_times(manifests.back(), m.kernel_ms, calls, all.device, &kernels_elsewhere, &all_samples);
    for (const auto& [key_device, list] : all_samples)
      if (key_device.second == all.device) all.operator_ms[key_device.first] = median(list);
    scale_to_kernel_time(calls, sum(m.kernel_ms), [&](const std::string& key) {
      auto it = all.operator_ms.find(key);
      return it == all.operator_ms.end() ? nullptr : &it->second;
    });
    all.run_ms = m.run_ms;
    all.overhead_ms = m.overhead_ms;
    std::cout << all.device << " with every core (" << all_threads << " threads): run " << all.run_ms << " ms\n";
    costs.all_cores = std::move(all);
  }
  CopyCost host = {};
  for (const ProfiledDevice& a : costs.devices)
    for (const ProfiledDevice& b : costs.devices) {
      if (a.name == b.name) continue;
      Handoff h = measure_handoff(cores[a.name], cores[b.name]);
      costs.copies[{a.name, b.name}] = h.copy;
      costs.handoff_ms = std::max(costs.handoff_ms, h.handoff_ms);
      host = h.copy;
    }
  check_splits(mod, CompilationConfig::parse(all_devices, f.devices.front()), cores, artifacts.back(), f.repeat,
               scratch, &costs);
  if (probed.size() > 1) {
    shares.push_back(measure_core_share(probed, kCoreShareWindow));
    report_core_share(shares);
  }
  write_text_file_atomically(f.output, cost_file_json(costs));
  std::cout << "wrote " << f.output << ": " << costs.operator_text.size() << " operators on " << costs.devices.size()
            << " devices; copies " << host.latency_ms << " ms + " << host.ms_per_byte * 1e6 << " ms/MB; hand-off "
            << costs.handoff_ms << " ms\n";
}

}  // namespace

void add_profile_command(CLI::App& app) {
  auto flags = std::make_shared<ProfileFlags>();
  CLI::App* cmd = app.add_subcommand(
      "profile",
      "Measure the cost file `compile --objective latency --costs FILE` reads: the model is compiled for\n"
      "each --device in turn (the build's default) and run; each operator call's median time there, each\n"
      "run's time outside its kernels, the same on the first device with every core (the other candidate),\n"
      "the copies and the hand-off between the devices' queues, and this machine's CPU are recorded.\n"
      "Then the split these costs plan is built and run beside one device with every core; what it ran\n"
      "beyond its prediction is charged to its hand-offs, and planning runs again (at most three splits;\n"
      "docs/design.md, Placement by time).\n"
      "Example: switchyard profile resnet18.onnx --device cpu:0 --device cpu:1 -o costs.json");
  add_model_flags(cmd, &flags->model);
  cmd->add_option("--device", flags->devices, "a candidate device (repeatable; CPU devices)")->required();
  cmd->add_option("--cores", flags->cores,
                  "DEVICE=0-3: the cores a device will run on; only their count is used here, as the "
                  "device's thread count while measuring (repeatable)");
  cmd->add_option("--threads", flags->threads, "threads per device while measuring (default: one per core)")
      ->check(CLI::Range(0, 4096));
  cmd->add_option("--repeat", flags->repeat, "timed runs per device after one warm-up (default 20)")
      ->check(CLI::Range(1, 100000));
  cmd->add_option("-o,--output", flags->output, "the cost file to write")->required();
  cmd->callback([flags] { run_profile(*flags); });
}

}  // namespace switchyard
