// `switchyard run`: loads an artifact, runs it on .npy inputs, writes and
// summarises the outputs, and reports run times (per kernel and copy with
// --profile), ending with one machine-readable `latency_ms` line.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>

#include "driver/commands.h"
#include "driver/driver_util.h"
#include "driver/measured_times.h"
#include "driver/kernel_report.h"
#include "interp/value.h"
#include "runtime/artifact.h"
#include "runtime/npy.h"
#include "runtime/runtime_error.h"
#include "support/error.h"
#include "toolchain/interrupt.h"

namespace switchyard {

namespace {

struct RunFlags {
  std::string artifact_dir;
  std::vector<std::string> inputs;  // NAME=FILE.npy
  std::string output_dir = ".";
  int repeat = 1;
  int threads = 0;
  std::vector<std::string> cores;  // DEVICE=CORES
  bool in_order = false;
  uint64_t max_model_bytes = kDefaultMaxModelBytes;
  bool profile = false;
};

double milliseconds(int64_t nanoseconds) { return double(nanoseconds) / 1e6; }

// Order statistics of the counted runs. p90 is the nearest rank (the
// smallest time at least 90% of runs reach), so it is always a measured run;
// bench/peers/ computes its peers' figures the same way.
struct LatencySummary {
  double median = 0, min = 0, p90 = 0;
};

LatencySummary summarise_latency(std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  const size_t n = ms.size();
  LatencySummary s;
  s.min = ms.front();
  s.median = n % 2 ? ms[n / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2;
  s.p90 = ms[size_t(std::ceil(0.9 * double(n))) - 1];
  return s;
}

std::string format_ms(double ms) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f ms", ms);
  return text;
}

// Mean time per run of each kernel and copy, and per device; beside the
// build's prediction where it was planned for latency.
void print_profile(const Manifest& manifest, const std::vector<RunStats>& runs, double median_run_ms) {
  const double count = double(runs.size());
  std::vector<double> kernel_ms(manifest.kernels.size(), 0), copy_ms(manifest.copies.size(), 0);
  for (const RunStats& run : runs) {
    for (const KernelRecord& k : run.kernels) kernel_ms[size_t(k.index)] += milliseconds(k.elapsed_ns) / count;
    for (const CopyRecord& c : run.copies) copy_ms[size_t(c.index)] += milliseconds(c.elapsed_ns) / count;
  }
  const DeviceTimes devices = mean_device_times(manifest, runs);
  char line[512];
  std::cout << "profile (mean per run over " << runs.size() << (runs.size() == 1 ? " run" : " runs") << "):\n";
  std::snprintf(line, sizeof line, "  %-10s %-12s %12s  %s\n", "kernel", "device", "time", "runs as: name (span)");
  std::cout << line;
  for (size_t i = 0; i < manifest.kernels.size(); ++i) {
    const ManifestKernel& k = manifest.kernels[i];
    std::snprintf(line, sizeof line, "  %-10zu %-12s %12s  ", i, manifest.devices[size_t(k.device)].name.c_str(),
                  format_ms(kernel_ms[i]).c_str());
    std::cout << line << kernel_execution_text(kernel_execution(manifest, k)) << ": " << k.name << " (" << k.span
              << ")\n";
  }
  for (size_t i = 0; i < manifest.copies.size(); ++i) {
    const ManifestCopy& c = manifest.copies[i];
    std::string route = manifest.devices[size_t(c.src_device)].name + "->" + manifest.devices[size_t(c.dst_device)].name;
    std::snprintf(line, sizeof line, "  copy %-5zu %-12s %12s  %llu bytes (%s)\n", i, route.c_str(),
                  format_ms(copy_ms[i]).c_str(), static_cast<unsigned long long>(c.bytes), c.span.c_str());
    std::cout << line;
  }
  for (size_t d = 0; d < manifest.devices.size(); ++d)
    std::cout << "  " << manifest.devices[d].name << ": kernels " << format_ms(devices.kernel_ms[d])
              << ", copies into it " << format_ms(devices.copy_ms[d]) << "\n";
  if (manifest.prediction) std::cout << prediction_text(*manifest.prediction, manifest, &devices, median_run_ms);
}

// A signal stops the command between runs, before any output is written
// (main reports it and exits 128 + the signal); one that comes while the
// outputs are being written lets them finish, each written whole or not at all.
void stop_if_interrupted() {
  if (interrupting_signal()) throw Error(ErrorKind::kRuntime, interruption_message("run", "no output was written"));
}

// --threads sizes the pool that devices without cores of their own share; a
// device pinned to cores (the build's or the run's --cores) runs one thread
// per core whatever it says. Said, so that a run that asked for more threads
// and got none is not a mystery.
void note_threads_not_taken(int threads, const Manifest& manifest) {
  if (threads <= 0) return;
  for (size_t i = 0; i < manifest.devices.size(); ++i) {
    const ManifestDevice& d = manifest.devices[i];
    bool has_kernels = false;
    for (const ManifestKernel& k : manifest.kernels) has_kernels = has_kernels || k.device == int(i);
    if (d.threads <= 0 || d.threads == threads || d.cores.empty() || !has_kernels) continue;
    std::string cores;
    for (int core : d.cores) cores += (cores.empty() ? "" : ",") + std::to_string(core);
    std::cerr << "note: --threads " << threads << " is the shared pool's; " << d.name << " runs its own "
              << d.threads << (d.threads == 1 ? " thread" : " threads") << " on core" << (d.cores.size() == 1 ? " " : "s ")
              << cores << " (its core set: --cores " << d.name << "=LIST gives it others)\n";
  }
}

void run_artifact(const RunFlags& f) {
  install_interrupt_handlers();
  std::map<std::string, NDArray> inputs = read_npy_inputs(f.inputs);
  std::shared_ptr<Artifact> artifact;
  const Artifact* program = nullptr;  // the artifact, or its specialisation that runs the inputs
  std::vector<RunStats> runs;      // counted runs only
  std::vector<double> latency_ms;  // wall time of each counted Artifact::run call
  RunResult result;
  double load_ms = 0, first_run_ms = 0;  // what a process pays before its steady state
  try {
    LoadOptions load;
    load.threads = f.threads;
    load.cores = cores_from_flags(f.cores);
    load.max_model_bytes = f.max_model_bytes;
    auto load_start = std::chrono::steady_clock::now();
    artifact = Artifact::load(f.artifact_dir, load);
    program = artifact.get();
    note_threads_not_taken(f.threads, artifact->manifest());
    std::map<std::string, DType> expected;
    for (const ManifestTensor& input : artifact->manifest().inputs) expected[input.name] = input.dtype;
    adopt_bfloat16_bits(inputs, expected);
    load_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - load_start).count();
    // A specialised artifact runs the program the inputs' shapes pick, or
    // itself in chunks of compiled values (a missing input is left to run()
    // to name).
    bool all_given = true;
    std::vector<std::vector<int64_t>> shapes;
    for (const ManifestTensor& input : artifact->manifest().inputs) {
      auto it = inputs.find(input.name);
      all_given = all_given && it != inputs.end();
      if (it != inputs.end()) shapes.push_back(it->second.shape());
    }
    if (all_given && !artifact->runs_in_chunks(shapes)) program = &artifact->program_for(shapes);
    RunOptions options;  // stats on: they carry each run's time
    options.in_order = f.in_order;
    // With several runs the first one is a warm-up (first touch of the arenas
    // and weights, thread-pool start), which is not what a steady caller pays.
    const int warm_up = f.repeat > 1 ? 1 : 0;
    for (int i = 0; i < f.repeat; ++i) {
      auto start = std::chrono::steady_clock::now();
      stop_if_interrupted();
      result = program->run(inputs, options);
      auto elapsed = std::chrono::steady_clock::now() - start;
      if (i == 0) first_run_ms = std::chrono::duration<double, std::milli>(elapsed).count();
      if (i < warm_up) continue;
      runs.push_back(result.stats);
      latency_ms.push_back(std::chrono::duration<double, std::milli>(elapsed).count());
    }
  } catch (const RuntimeError& e) {
    throw Error(ErrorKind::kRuntime, e.what());
  }

  stop_if_interrupted();
  const Manifest& manifest = program->manifest();
  std::filesystem::path dir(f.output_dir);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error(ErrorKind::kUsage, "cannot create the output directory " + f.output_dir + ": " + ec.message());
  std::vector<std::string> names;
  for (const ManifestTensor& output : manifest.outputs) names.push_back(output.name);
  std::vector<OutputFiles> files = output_files(names);
  for (size_t i = 0; i < result.outputs.size(); ++i) {
    write_output_files(dir, files[i], result.outputs[i]);
    const VirtualDevice* device = VirtualDevice::parse(manifest.devices[size_t(manifest.outputs[i].device)].name);
    std::cout << output_label(names[i], files[i]) << ": " << value_summary(Value::make_tensor(result.outputs[i], device)) << "  "
              << tensor_statistics(result.outputs[i]) << "\n";
  }

  double total = 0, fastest = 0;
  for (const RunStats& run : runs) {
    total += milliseconds(run.total_ns);
    fastest = fastest == 0 ? milliseconds(run.total_ns) : std::min(fastest, milliseconds(run.total_ns));
  }
  std::cout << "time per run: mean " << format_ms(total / double(runs.size())) << ", min " << format_ms(fastest)
            << " over " << runs.size() << (runs.size() == 1 ? " run" : " runs")
            << (size_t(f.repeat) > runs.size() ? " after 1 warm-up" : "") << "\n";
  const LatencySummary latency = summarise_latency(latency_ms);
  if (f.profile) print_profile(manifest, runs, latency.median);

  char line[160];
  std::snprintf(line, sizeof line, "startup_ms load=%.3f first_run=%.3f\n", load_ms, first_run_ms);
  std::cout << line;
  std::snprintf(line, sizeof line, "latency_ms median=%.3f min=%.3f p90=%.3f runs=%zu\n", latency.median, latency.min,
                latency.p90, latency_ms.size());
  std::cout << line;
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto flags = std::make_shared<RunFlags>();
  CLI::App* cmd = app.add_subcommand(
      "run",
      "Run a compiled artifact on .npy inputs given by name; each output (a tuple result flattened in\n"
      "order) is written to DIR/output_<i>.npy and summarised, then the time per run is printed; an output with a\n"
      "name of its own in the manifest (an ONNX graph's) is also DIR/NAME.npy, characters other than letters,\n"
      "digits and _ as _. A specialised artifact (compile --specialize) runs the program the inputs'\n"
      "shapes pick, and refuses shapes none takes, naming the input dimension.\n"
      "With --repeat N > 1 the first run is a warm-up left out of every figure, so N-1 runs are counted.\n"
      "Before it, `startup_ms load=<ms> first_run=<ms>` times loading the artifact and the first run.\n"
      "The last line is always `latency_ms median=<ms> min=<ms> p90=<ms> runs=<counted>`: the wall time of\n"
      "each whole run call (p90 by nearest rank), for scripts such as bench/peers/run_peers.py.\n"
      "Example: switchyard run mlp.art --input x=x.npy --input w1=w1.npy --input b1=b1.npy \\\n"
      "           --input w2=w2.npy --input b2=b2.npy --output-dir out --repeat 100 --profile");
  cmd->add_option("artifact", flags->artifact_dir, "artifact directory written by `switchyard compile`")->required();
  cmd->add_option("-i,--input", flags->inputs, "an input as NAME=FILE.npy (repeat for each input)");
  cmd->add_option("-o,--output-dir", flags->output_dir, "where the outputs' .npy files are written (default: .)");
  cmd->add_option("--repeat", flags->repeat, "run this many times, the first as a warm-up when N > 1 (default: 1)")
      ->check(CLI::Range(1, 1000000));
  cmd->add_option("--threads", flags->threads,
                  "threads of the shared CPU pool (default: one per core); a device with cores of its own "
                  "(--cores) runs one thread per core")
      ->check(CLI::Range(0, 4096));
  cmd->add_option("--cores", flags->cores,
                  "a CPU device's cores, DEVICE=CORES (cpu:1=2-3), in place of the artifact's (repeatable)");
  cmd->add_flag("--in-order", flags->in_order,
                "run every step in program order on one thread, even where the devices could run at once");
  cmd->add_option("--max-model-bytes", flags->max_model_bytes,
                  "refuse a model.so (or device image) larger than this, before hashing it (default: " +
                      std::to_string(kDefaultMaxModelBytes) + ", 1 GiB)")
      ->check(CLI::Range(uint64_t(1), uint64_t(1) << 62));
  cmd->add_flag("--profile", flags->profile, "print the time of each kernel and copy, and per device");
  cmd->callback([flags] { run_artifact(*flags); });
}

}  // namespace switchyard
