// `switchyard compile`: a text-IR model to an artifact directory.
#include <chrono>
#include <cstdio>
#include <future>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>
#include <set>

#include "artifact/artifact_cache.h"
#include "driver/commands.h"
#include "driver/driver_util.h"
#include "lower/costly_loops.h"
#include "pipeline/build.h"
#include "pipeline/build_specialized.h"
#include "support/error.h"
#include "targets/code_generators.h"
#include "toolchain/interrupt.h"
#include "transform/infer_type.h"

namespace switchyard {

namespace {

struct CompileFlags {
  ModelFlags model;
  std::string output_dir;
  DeviceFlags devices;
  std::vector<std::string> rules;
  std::vector<std::string> layout_rules;
  std::vector<std::string> cores;
  int opt_level = 2;
  std::optional<int64_t> max_folded_bytes;  // FoldConstant.max_bytes
  bool emit_source = false;
  bool check_each = false;
  std::vector<std::string> print_after;
  bool time = false;
  bool rebuild = false;
  ObjectiveFlags objective;
  std::vector<std::string> specialize;  // NAME=V1,V2,... (repeatable: the cross product)
};

// Every flag that changes the artifact, as the artifact cache's key holds them.
std::string cache_key_flags(const CompileFlags& f) {
  std::string text = "devices=" + f.devices.devices + "\ndefault=" + f.devices.default_device +
                     "\nhost=" + f.devices.host_device + "\nopt-level=" + std::to_string(f.opt_level) +
                     "\ncheck-each=" + std::to_string(f.check_each) + "\n";
  for (const std::string& shape : f.model.input_shapes) text += "input-shape=" + shape + "\n";
  for (const std::string& rule : f.rules) text += "place=" + rule + "\n";
  for (const std::string& rule : f.layout_rules) text += "layout=" + rule + "\n";
  for (const std::string& cores : f.cores) text += "cores=" + cores + "\n";
  if (f.max_folded_bytes) text += "max-folded-bytes=" + std::to_string(*f.max_folded_bytes) + "\n";
  // The plan depends on every measured time, so the whole cost file is part of the key.
  if (f.objective.objective == "latency") text += "objective=latency\ncosts=" + read_text_file(f.objective.costs) + "\n";
  return text;
}

double milliseconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// With --objective latency: the plan's predicted time per device and
// critical path (planning again is quick beside a compile).
void print_prediction(const IRModule& mod, const CompilationConfig& config, const std::vector<PlacementRule>& rules,
                      const LatencyObjective& latency) {
  PlanResult plan = plan_devices(infer_type(apply_placement_rules(mod, rules).module), config, latency);
  std::cout << predicted_times_text(predict_times(plan.graph, config, *plan.latency, plan.solution.device), plan.graph,
                                    config)
            << latency_choice_text(*plan.choice);
}

void run_compile(const CompileFlags& f) {
  install_interrupt_handlers();  // a signal stops the compilers and leaves no partial artifact
  auto start = std::chrono::steady_clock::now();
  // A bad --objective/--costs is reported before anything else (the cache key reads the cost file).
  std::optional<LatencyObjective> latency = objective_from_flags(f.objective);
  // --emit-source and --print-after ask for what only a compile makes.
  std::optional<ArtifactCache> cache;
  // A specialised build is kept in no artifact cache (its programs' kernels are in the object cache).
  if (!f.emit_source && f.print_after.empty() && f.specialize.empty()) cache = ArtifactCache::open("", f.model.file, cache_key_flags(f));
  if (cache && !f.rebuild) {
    std::string problem;
    if (std::optional<std::string> kept = cache->take(f.output_dir, &problem)) {
      // The summary line, then the warnings about the artifact's own kernels its compile printed.
      size_t end = kept->find('\n');
      std::cout << "wrote " << f.output_dir << ": " << kept->substr(0, end) << "; from the artifact cache, nothing compiled\n";
      if (end != std::string::npos) std::cerr << kept->substr(end + 1) << "\n";
      if (latency) {
        IRModule mod = load_model(f.model);
        CompilationConfig config = config_from_flags(f.devices, mod).value_or(CompilationConfig::parse("cpu:0"));
        print_prediction(mod, config, rules_from_flags(f.rules, config), *latency);
      }
      if (f.time)
        std::printf("stage                       time (ms)\n%-26s %10.3f\n", "artifact cache", milliseconds_since(start));
      return;
    }
    if (!problem.empty()) std::cerr << "note: " << problem << "\n";
  }
  // The compiler is asked what it is while the model is read.
  std::shared_future<Toolchain> toolchain = std::async(std::launch::async, [] { return Toolchain::find("", ""); });
  IRModule mod = load_model(f.model);
  double load_milliseconds = milliseconds_since(start);
  BuildOptions options;
  options.toolchain = toolchain;
  // Without --devices or devices named in the module, everything runs on cpu:0.
  options.config = config_from_flags(f.devices, mod).value_or(CompilationConfig::parse("cpu:0"));
  options.rules = rules_from_flags(f.rules, options.config);
  options.latency = latency;
  options.device_cores = cores_from_flags(f.cores);
  for (const std::string& rule : f.layout_rules) options.layout_rules.push_back(parse_layout_rule(rule));
  options.opt_level = f.opt_level;
  if (f.max_folded_bytes) options.pass_config["FoldConstant.max_bytes"] = AttrValue(*f.max_folded_bytes);
  options.emit_source = f.emit_source;
  options.check_invariants = f.check_each;
  options.print_after = std::set<std::string>(f.print_after.begin(), f.print_after.end());
  options.print_to = &std::cerr;
  options.diagnostics = stderr_diagnostics();
  // What a later compile would not say again (a pass's warnings) or cannot
  // check (device images such as a GPU's cubins, made by a toolkit outside
  // the key) is not cached;
  // the warnings about costly loops are the artifact's own, kept with its
  // summary and printed again on a hit. The artifact is kept from the
  // build's own staging directory, before it is put in place: a compile
  // into the same folder may replace it right after.
  bool device_images = false;
  for (const VirtualDevice* device : options.config.devices) {
    const CodeGenerator* generator = code_generator_for(device->kind());
    device_images |= generator && generator->compile_image;
  }
  if (!f.specialize.empty()) {
    std::vector<DimValues> dims;
    for (const std::string& text : f.specialize) dims.push_back(parse_dim_values(text));
    SpecializedBuildReport report = build_specialized_artifact(mod, dims, options, f.output_dir);
    for (size_t i = 0; i < report.programs.size(); ++i) {
      for (const std::string& note : report.programs[i].notes) std::cerr << "note: " << note << "\n";
      std::cout << "  " << report.names[i] << ": " << report.programs[i].summary() << "\n";
      if (f.time) std::cout << report.programs[i].timing_table();
    }
    char line[160];
    std::snprintf(line, sizeof line, "%zu programs, %d sharing one weights.bin, in %.0f ms (reading the model %.0f ms)",
                  report.programs.size(), report.shared_weights, report.total_milliseconds, load_milliseconds);
    std::cout << "wrote " << f.output_dir << ": " << line << "\n";
    for (const std::string& chunking : report.chunking) std::cout << "  " << chunking << "\n";
    return;
  }
  if (cache && !device_images)
    options.before_commit = [&](const std::string& staging_dir, const BuildReport& report) {
      std::string kept = report.model_summary();
      for (const DiagnosticSink::Diagnostic& d : options.diagnostics->diagnostics()) {
        if (d.pass != kCostlyLoopCheck) return;
        kept += "\n" + d.text;
      }
      cache->keep(staging_dir, kept);
    };
  BuildReport report = build_artifact(mod, options, f.output_dir);
  // Reading the model (parsing or importing it) is part of the compile's time.
  report.stages.insert(report.stages.begin(), {f.model.file.ends_with(".onnx") ? "import" : "parse", load_milliseconds});
  for (const std::string& note : report.notes) std::cerr << "note: " << note << "\n";
  std::cout << "wrote " << f.output_dir << ": " << report.summary() << "\n";
  if (latency) print_prediction(mod, options.config, options.rules, *latency);
  if (f.time) std::cout << report.timing_table();
}

}  // namespace

void add_compile_command(CLI::App& app) {
  auto flags = std::make_shared<CompileFlags>();
  CLI::App* cmd = app.add_subcommand(
      "compile",
      "Compile a text-IR model into an artifact directory (model.so, weights.bin, manifest.json)\n"
      "that `switchyard run` executes. Generated objects, and whole artifacts by the model file's\n"
      "content and the flags, are cached in $XDG_CACHE_HOME/switchyard (or ~/.cache/switchyard);\n"
      "the artifacts kept there take at most SY_ARTIFACT_CACHE_MAX (default 8G; least recently\n"
      "used go first; 0 keeps none). SY_CXX names the C++ compiler.\n"
      "Example: switchyard compile examples/mlp_two_devices.sy -o mlp.art --devices cpu:0,cpu:1\n"
      "         switchyard compile resnet18_dynamic.onnx --input-shape input=n<=8x3x224x224 --specialize n=1,8 -o r18.art");
  add_model_flags(cmd, &flags->model);
  cmd->add_option("-o,--output", flags->output_dir, "the artifact directory to write (replaced when it exists)")
      ->required();
  add_device_flags(cmd, &flags->devices);
  cmd->add_option("--place", flags->rules, "placement rule op:NAME=DEVICE or node:GLOB=DEVICE (repeatable)");
  add_objective_flags(cmd, &flags->objective);
  cmd->add_option("--cores", flags->cores,
                  "a CPU device's cores, DEVICE=CORES (cpu:1=2-3 or cpu:0=0,2): its queue runs on them, on as many "
                  "threads unless the manifest says otherwise, at once with the other devices' (repeatable)");
  cmd->add_option("--layout", flags->layout_rules,
                  "layout pin node:GLOB=FORMAT (nhwc, nChw8c, nChw16c) for the results of the kernels whose "
                  "node matches, kept between oneDNN primitives (repeatable)");
  cmd->add_option("--opt-level", flags->opt_level, "optimisation level: passes above it are skipped (default 2)")
      ->check(CLI::Range(0, 3));
  cmd->add_option("--max-folded-bytes", flags->max_folded_bytes,
                  "the largest constant folding may make that is larger than the constants it reads "
                  "(default 64 MiB); a larger one stays a kernel, computed at run time")
      ->check(CLI::Range(int64_t(0), std::numeric_limits<int64_t>::max()));
  cmd->add_flag("--emit-source", flags->emit_source, "keep the generated C++ in DIR/src/");
  cmd->add_flag("--check-each", flags->check_each,
                "run the invariant checker after every pass, and verify the lowered program after each lowering stage");
  cmd->add_option("--print-after", flags->print_after,
                  "print the IR after this pass (InferType ... FuseOps, PlanLayouts), or the lowered program after "
                  "this lowering stage (lower, generate-kernels, layouts, pinned-buffers, memory-plan), or 'all', "
                  "on stderr (repeatable; the artifact cache is not used)");
  cmd->add_option("--specialize", flags->specialize,
                  "NAME=V1,V2,...: compile one program per value of the symbolic input dimension NAME into one "
                  "artifact, which runs the program the inputs' shapes pick; repeated, one per combination "
                  "(--specialize n=1,4 --specialize s=16,128: four programs)");
  cmd->add_flag("--time", flags->time, "print the time of each stage and pass");
  cmd->add_flag("--rebuild", flags->rebuild,
                "compile even when the artifact cache holds this compile's artifact (kernels stay cached)");
  cmd->callback([flags] { run_compile(*flags); });
}

}  // namespace switchyard
