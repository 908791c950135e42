// `switchyard profile`: measures the cost file behind `--objective latency`
// (docs/design.md, "Placement by time"). The model is compiled once per
// candidate device, that device the default of the build, and run with the
// per-kernel timing `run --profile` prints; each kernel's median time is
// split equally among the operator calls it computes (found by the spans
// its fused span names), and each call's share is recorded under its
// operator key (placement/cost_model.h) for the device the kernel ran on.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <unistd.h>

#include "driver/commands.h"
#include "driver/driver_util.h"
#include "ir/functor.h"
#include "op/placement_ops.h"
#include "pipeline/build.h"
#include "placement/cost_model.h"
#include "runtime/artifact.h"
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

// Inputs of the manifest's shapes: floats from a fixed seed, other types zero.
std::map<std::string, NDArray> made_up_inputs(const Manifest& manifest) {
  std::map<std::string, NDArray> inputs;
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> value(-1, 1);
  for (const ManifestTensor& t : manifest.inputs) {
    NDArray a(t.dtype, t.shape);
    std::memset(a.data(), 0, a.nbytes());
    if (t.dtype == DType::kFloat32)
      for (int64_t i = 0; i < a.numel(); ++i) a.as<float>()[i] = value(rng);
    inputs.emplace(t.name, std::move(a));
  }
  return inputs;
}

// Median time of each kernel (by manifest index) over `repeat` runs after a warm-up.
std::vector<double> kernel_medians(const std::string& dir, int threads, int repeat, Manifest* manifest) {
  try {
    LoadOptions load;
    load.threads = threads;
    std::shared_ptr<Artifact> artifact = Artifact::load(dir, load);
    *manifest = artifact->manifest();
    std::map<std::string, NDArray> inputs = made_up_inputs(*manifest);
    std::vector<std::vector<double>> times(manifest->kernels.size());
    for (int i = 0; i <= repeat; ++i) {
      RunResult result = artifact->run(inputs, RunOptions{});
      if (i == 0) continue;
      std::vector<double> run(manifest->kernels.size(), 0);
      for (const KernelRecord& k : result.stats.kernels) run[size_t(k.index)] += double(k.elapsed_ns) / 1e6;
      for (size_t k = 0; k < run.size(); ++k) times[k].push_back(run[k]);
    }
    std::vector<double> out;
    for (const auto& t : times) out.push_back(median(t));
    return out;
  } catch (const RuntimeError& e) {
    throw Error(ErrorKind::kRuntime, std::string("profiling ") + dir + ": " + e.what());
  }
}

// Host-memory copies (every CPU device's): latency and time per byte, a
// least-squares line through the medians of a few sizes.
CopyCost measure_host_copies() {
  std::vector<double> sizes, medians;
  for (size_t bytes : {size_t(64) << 10, size_t(1) << 20, size_t(8) << 20}) {
    std::vector<char> source(bytes, 1), destination(bytes);
    std::vector<double> times;
    for (int i = 0; i < 15; ++i) {
      auto start = std::chrono::steady_clock::now();
      std::memcpy(destination.data(), source.data(), bytes);
      times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
      source[size_t(i)] = destination[bytes - 1 - size_t(i)];  // keeps the copy observable
    }
    sizes.push_back(double(bytes));
    medians.push_back(median(times));
  }
  double mean_x = 0, mean_y = 0;
  for (size_t i = 0; i < sizes.size(); ++i) mean_x += sizes[i] / 3, mean_y += medians[i] / 3;
  double sxy = 0, sxx = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    sxy += (sizes[i] - mean_x) * (medians[i] - mean_y);
    sxx += (sizes[i] - mean_x) * (sizes[i] - mean_x);
  }
  CopyCost cost;
  cost.ms_per_byte = std::max(0.0, sxy / sxx);
  cost.latency_ms = std::max(0.0, mean_y - cost.ms_per_byte * mean_x);
  return cost;
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

void run_profile(const ProfileFlags& f) {
  if (f.devices.empty()) throw Error(ErrorKind::kUsage, "profile needs at least one --device");
  std::map<std::string, int> threads;
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
  }
  IRModule mod = load_model(f.model);
  IRModule typed = infer_type(mod);
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
  for (const std::string& d : f.devices) {
    const std::string name = VirtualDevice::parse(d)->device_name();
    costs.devices.push_back({name, "cpu", threads[name]});
    BuildOptions options;
    options.config = CompilationConfig::parse(all_devices, d);
    options.diagnostics = stderr_diagnostics();
    std::string dir = (scratch / name).string();
    build_artifact(mod, options, dir);
    Manifest manifest;
    std::vector<double> kernel_ms = kernel_medians(dir, threads[name], f.repeat, &manifest);
    double unattributed = attribute_kernel_times(manifest, kernel_ms, calls, name, &costs, &samples);
    std::cout << name << " (" << threads[name] << " threads): " << manifest.kernels.size() << " kernels";
    if (unattributed > 0) std::cout << ", " << unattributed << " ms in kernels no operator call's span names";
    std::cout << "\n";
  }
  for (const auto& [key_device, list] : samples) costs.operator_ms[key_device] = median(list);
  CopyCost copy = measure_host_copies();
  for (const ProfiledDevice& a : costs.devices)
    for (const ProfiledDevice& b : costs.devices)
      if (a.name != b.name) costs.copies[{a.name, b.name}] = copy;
  write_text_file_atomically(f.output, cost_file_json(costs));
  std::cout << "wrote " << f.output << ": " << costs.operator_text.size() << " operators on " << costs.devices.size()
            << " devices; copies " << copy.latency_ms << " ms + " << copy.ms_per_byte * 1e6 << " ms/MB\n";
}

}  // namespace

void add_profile_command(CLI::App& app) {
  auto flags = std::make_shared<ProfileFlags>();
  CLI::App* cmd = app.add_subcommand(
      "profile",
      "Measure the cost file `compile --objective latency --costs FILE` reads: the model is compiled for\n"
      "each --device in turn (the build's default) and run; each operator call's median time there, the\n"
      "copies between the devices and this machine's CPU are recorded (docs/design.md, Placement by time).\n"
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
