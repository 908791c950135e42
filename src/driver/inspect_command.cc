// `switchyard inspect`: a summary of a model (its inputs, outputs,
// operators and weights; with --devices, where planning puts them and the
// copies it needs) or of a compiled artifact (devices, kernels, copies,
// arenas, how each kernel runs: which library primitive, or generated
// loops; what --objective latency predicted, and with --measure N what runs
// measure per device beside it).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>

#include "driver/commands.h"
#include "driver/driver_util.h"
#include "driver/kernel_report.h"
#include "driver/measured_times.h"
#include "ir/functor.h"
#include "op/placement_ops.h"
#include "op/registry.h"
#include "runtime/artifact.h"
#include "runtime/manifest.h"
#include "runtime/runtime_error.h"
#include "runtime/specialized_manifest.h"
#include "transform/infer_type.h"

namespace switchyard {

namespace {

struct InspectFlags {
  ModelFlags model;
  DeviceFlags devices;
  std::vector<std::string> rules;
  bool implementations = false;
  int measure = 0;  // runs of an artifact on made-up inputs, timed per device
  ObjectiveFlags objective;
};

std::string mib(uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f MiB", double(bytes) / (1024.0 * 1024.0));
  return text;
}

// One line per kernel, in run order (the indices `run --profile` prints):
// its device, whether a library primitive (which) or generated loops run
// it, its operators (its name when the manifest predates them) and span.
// With `implementations`, also oneDNN's implementation of each primitive.
void print_kernels(const Manifest& m, bool implementations) {
  int library = 0, window_loops = 0, reference = 0;
  std::vector<KernelExecution> executions;
  for (const ManifestKernel& k : m.kernels) {
    executions.push_back(kernel_execution(m, k));
    library += executions.back().library;
    window_loops += !executions.back().window_or_product_ops.empty();
  }
  if (implementations) add_onednn_implementations(m, executions);
  for (const KernelExecution& e : executions) reference += is_reference_implementation(e.implementation);
  std::cout << "  kernels: " << m.kernels.size() << " calls, " << library << " run by a library primitive, "
            << m.kernels.size() - size_t(library) << " as generated loops (" << window_loops
            << " of them a convolution, pool or product no library took)";
  if (implementations) std::cout << "; " << reference << " run by a oneDNN reference implementation";
  std::cout << "\n";
  for (size_t i = 0; i < m.kernels.size(); ++i) {
    const ManifestKernel& k = m.kernels[i];
    char head[96];
    std::snprintf(head, sizeof head, "    %-4zu %-7s ", i, m.devices.at(size_t(k.device)).name.c_str());
    std::cout << head << kernel_execution_text(executions[i]) << ": " << (k.operators.empty() ? k.name : k.operators)
              << " (" << k.span << ")\n";
  }
}

// A specialised artifact: its symbolic signature and each program's size in a line.
void inspect_specialized(const std::string& dir, const SpecializedManifest& s) {
  std::cout << "artifact " << dir << " (format " << s.format_version << ", specialised: " << s.specializations.size()
            << " programs)\n";
  for (const SymbolicTensor& t : s.inputs)
    std::cout << "  input  " << t.name << ": Tensor[" << symbolic_shape_text(t.shape) << ", " << dtype_name(t.dtype) << "]\n";
  for (const SymbolicTensor& t : s.outputs)
    std::cout << "  output " << t.name << ": Tensor[" << symbolic_shape_text(t.shape) << ", " << dtype_name(t.dtype) << "]\n";
  for (size_t i = 0; i < s.specializations.size(); ++i) {
    const std::string name = specialization_name(s, i);
    Manifest m = read_manifest_file((std::filesystem::path(dir) / name / "manifest.json").string());
    uint64_t weights = 0, arenas = 0;
    for (const ManifestWeight& w : m.weights) weights += w.nbytes;
    for (const ManifestArena& a : m.arenas) arenas += a.bytes;
    std::cout << "  specialisation " << name << ": " << m.kernels.size() << " kernels, weights " << mib(weights)
              << (s.specializations[i].shared_weights ? " (the shared weights.bin)" : " (its own weights.bin)")
              << ", arenas " << mib(arenas) << "\n";
  }
  for (size_t d = 0; d < s.chunking.size(); ++d) std::cout << "  " << chunking_text(s, d) << "\n";
  std::cout << "  (switchyard inspect " << dir << "/" << specialization_name(s, 0) << " lists a program's kernels)\n";
}

// `runs` runs after a warm-up, on made-up inputs: per device the mean
// kernel and copy time, and the median run.
void print_measured(const std::string& dir, const Manifest& m, int runs) {
  std::vector<RunStats> stats;
  std::vector<double> run_ms;
  try {
    std::shared_ptr<Artifact> artifact = Artifact::load(dir, LoadOptions{});
    std::map<std::string, NDArray> inputs = made_up_inputs(m);
    for (int i = 0; i <= runs; ++i) {
      auto start = std::chrono::steady_clock::now();
      RunResult result = artifact->run(inputs, RunOptions{});
      if (i == 0) continue;  // the warm-up: first touch of arenas and weights, threads starting
      run_ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
      stats.push_back(std::move(result.stats));
    }
  } catch (const RuntimeError& e) {
    throw Error(ErrorKind::kRuntime, "measuring " + dir + ": " + e.what());
  }
  std::sort(run_ms.begin(), run_ms.end());
  const double median = run_ms[run_ms.size() / 2];
  const DeviceTimes devices = mean_device_times(m, stats);
  if (m.prediction) {
    std::cout << prediction_text(*m.prediction, m, &devices, median);
    return;
  }
  char line[160];
  std::snprintf(line, sizeof line, "  measured over %d runs on made-up inputs: run %.3f ms (median)\n", runs, median);
  std::cout << line;
  for (size_t d = 0; d < m.devices.size(); ++d) {
    std::snprintf(line, sizeof line, "    %s: kernels %.3f ms, copies into it %.3f ms\n", m.devices[d].name.c_str(),
                  devices.kernel_ms[d], devices.copy_ms[d]);
    std::cout << line;
  }
}

void inspect_artifact(const std::string& dir, bool implementations, int measure) {
  const std::string manifest_path = (std::filesystem::path(dir) / "manifest.json").string();
  if (std::optional<SpecializedManifest> s = read_specialized_manifest_file(manifest_path)) {
    if (measure > 0)
      throw Error(ErrorKind::kUsage, "--measure runs one program; " + dir + " is specialised (inspect " + dir +
                                         "/<program> --measure N, or run --profile with inputs of the shape to time)");
    return inspect_specialized(dir, *s);
  }
  Manifest m = read_manifest_file(manifest_path);
  std::cout << "artifact " << dir << " (format " << m.format_version << ", entry @" << m.entry << ")\n";
  auto device = [&](int i) { return m.devices.at(size_t(i)).name; };
  auto type = [](const ManifestTensor& t) { return type_to_string(tensor_type(t.shape, t.dtype)); };
  for (const ManifestTensor& t : m.inputs)
    std::cout << "  input  " << t.name << ": " << type(t) << " on " << device(t.device) << "\n";
  for (const ManifestTensor& t : m.outputs)
    std::cout << "  output " << t.name << ": " << type(t) << " on " << device(t.device) << "\n";
  for (size_t d = 0; d < m.devices.size(); ++d) {
    std::map<std::string, int> kinds;
    for (const ManifestKernel& k : m.kernels)
      if (k.device == int(d)) ++kinds[k.kind];
    uint64_t weights = 0, prepared = 0;
    for (const ManifestWeight& w : m.weights)
      if (w.device == int(d)) (w.prepared.empty() ? weights : prepared) += w.nbytes;
    std::cout << "  device " << m.devices[d].name << ": kernels";
    for (const auto& [kind, n] : kinds) std::cout << " " << kind << "=" << n;
    std::cout << ", weights " << mib(weights + prepared);
    if (prepared > 0) std::cout << " (" << mib(prepared) << " prepared for their primitives)";
    for (const ManifestArena& a : m.arenas)
      if (a.device == int(d))
        std::cout << ", arena " << a.scope << " " << mib(a.bytes) << " (lower bound " << mib(a.lower_bound_bytes) << ")";
    std::cout << "\n";
  }
  uint64_t copied = 0;
  for (const ManifestCopy& c : m.copies) copied += c.bytes;
  std::cout << "  copies: " << m.copies.size() << " (" << copied << " bytes per run)\n";
  for (const ManifestCopy& c : m.copies)
    std::cout << "    " << device(c.src_device) << " -> " << device(c.dst_device) << " " << c.bytes << " bytes (" << c.span << ")\n";
  if (measure > 0) print_measured(dir, m, measure);
  else if (m.prediction) std::cout << prediction_text(*m.prediction, m, nullptr, 0);
  print_kernels(m, implementations);
}

// Counts of operator calls per device ("?" before planning), constants and copies.
void inspect_module(const IRModule& mod, bool planned) {
  const Function& main = mod.lookup("main");
  for (const Var& p : main->params)
    std::cout << "  input  " << p->name_hint << ": " << type_to_string(p->checked_type()) << "\n";
  std::cout << "  output " << type_to_string(main->body->checked_type()) << "\n";
  std::map<std::string, std::map<std::string, int>> ops_per_device;
  int64_t constant_bytes = 0, constants = 0, copies = 0, copied_bytes = 0;
  post_order_visit(main->body, [&](const Expr& e) {
    if (const ConstantNode* c = as<ConstantNode>(e)) {
      ++constants;
      constant_bytes += int64_t(c->data.nbytes());
    }
    const CallNode* call = as<CallNode>(e);
    const OpNode* op = call ? as<OpNode>(call->op) : nullptr;
    if (!op) return;
    if (op == device_copy_op()) {
      ++copies;
      copied_bytes += type_nbytes(call->checked_type());
    }
    std::string device = planned ? e->virtual_device()->device_name() : "model";
    ++ops_per_device[device][op->name];
  });
  for (const auto& [device, ops] : ops_per_device) {
    int total = 0;
    for (const auto& [name, n] : ops) total += n;
    std::cout << "  " << device << ": " << total << " operator calls:";
    for (const auto& [name, n] : ops) std::cout << " " << name << "=" << n;
    std::cout << "\n";
  }
  std::cout << "  constants: " << constants << " (" << mib(uint64_t(constant_bytes)) << ")\n";
  if (planned) std::cout << "  copies: " << copies << " (" << copied_bytes << " bytes per run)\n";
}

void run_inspect(const InspectFlags& f) {
  if (std::filesystem::is_directory(f.model.file)) return inspect_artifact(f.model.file, f.implementations, f.measure);
  if (f.measure > 0) throw Error(ErrorKind::kUsage, "--measure times an artifact; " + f.model.file + " is a model (compile it first)");
  IRModule mod = infer_type(load_model(f.model));
  std::optional<CompilationConfig> config = config_from_flags(f.devices, mod);
  std::cout << "model " << f.model.file << "\n";
  if (!config) return inspect_module(mod, false);
  std::vector<PlacementRule> rules = rules_from_flags(f.rules, config);
  PlanResult plan = plan_with_rules(mod, *config, rules, objective_from_flags(f.objective));
  inspect_module(plan.module, true);
  if (!plan.latency) return;
  std::cout << predicted_times_text(predict_times(plan.graph, *config, *plan.latency, plan.solution.device),
                                    plan.graph, *config)
            << latency_choice_text(*plan.choice);
  // For comparison: the whole model on each device alone, wishes aside.
  for (const VirtualDevice* device : config->devices) {
    std::vector<const VirtualDevice*> alone(plan.graph.nodes.size(), device);
    char line[96];
    std::snprintf(line, sizeof line, "  everything on %s, wishes aside: %.3f ms\n", device->device_name().c_str(),
                  predict_times(plan.graph, *config, *plan.latency, alone).makespan_ms);
    std::cout << line;
  }
}

}  // namespace

void add_inspect_command(CLI::App& app) {
  auto flags = std::make_shared<InspectFlags>();
  CLI::App* cmd = app.add_subcommand(
      "inspect",
      "Summarise a model (.sy or .onnx: inputs, outputs, operators, weights; with --devices, the\n"
      "operators per device and the copies planning inserts) or an artifact directory (devices,\n"
      "copies, arena sizes, and each kernel: whether a library primitive runs it, and which, or\n"
      "generated loops, with its operators and span; built with --objective latency, the predicted time\n"
      "per device and critical path, and with --measure N the measured times beside them; a specialised\n"
      "one's symbolic inputs and outputs and its programs).\n"
      "Example: switchyard inspect resnet18.onnx --devices cpu:0,cpu:1 --place 'node:/layer4/*=cpu:1'");
  add_model_flags(cmd, &flags->model);
  add_device_flags(cmd, &flags->devices);
  cmd->add_option("--place", flags->rules, "placement rule op:NAME=DEVICE or node:GLOB=DEVICE (repeatable)");
  add_objective_flags(cmd, &flags->objective);
  cmd->add_flag("--implementations", flags->implementations,
                "for an artifact: ask this machine's oneDNN which implementation runs each primitive (makes each "
                "one, as a load does), marking its slow reference implementations");
  cmd->add_option("--measure", flags->measure,
                  "for an artifact: run it N times (after a warm-up) on made-up inputs and print each device's "
                  "measured kernel and copy time, beside what --objective latency predicted when it was built")
      ->check(CLI::Range(0, 1000000));
  cmd->callback([flags] { run_inspect(*flags); });
}

}  // namespace switchyard
