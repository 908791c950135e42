// The compiler pipeline, one stage after another, each timed: read
// build_artifact top to bottom (the IR passes are default_pipeline, above
// it). Everything each stage does lives in the layers below.
#include "pipeline/build.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <iostream>
#include <map>

#include "analysis/symbolic_use.h"
#include "artifact/artifact_writer.h"
#include "layout/plan_layouts.h"
#include "lower/aot_codegen.h"
#include "lower/costly_loops.h"
#include "lower/lower.h"
#include "lower/lower_check.h"
#include "lower/lowered_printer.h"
#include "lower/lowered_verifier.h"
#include "lower/memory_plan.h"
#include "pipeline/pass_table.h"
#include "runtime/runtime_error.h"
#include "runtime/sha256.h"
#include "support/error.h"
#include "targets/code_generators.h"
#include "toolchain/toolchain.h"
#include "transform/dead_code_elimination.h"
#include "transform/eliminate_common_subexpr.h"
#include "transform/fold_constant.h"
#include "transform/fuse_ops.h"
#include "transform/infer_type.h"
#include "transform/infer_type_pass.h"
#include "transform/quantize_chains.h"
#include "transform/quantized_convolutions.h"
#include "transform/simplify_expr.h"
#include "transform/to_graph_normal_form.h"

namespace switchyard {

namespace {

constexpr const char* kEntry = "main";
constexpr const char* kEntryUnitName = "sy_model_entry";
constexpr const char* kDescriptionUnitName = "sy_model_description";

// The stages of one build: times each, and after a lowering stage verifies
// the lowered program and prints it when asked (neither counted in the
// stage's time).
class Stages {
 public:
  Stages(BuildReport* report, const BuildOptions& options)
      : report_(report), options_(options), start_(std::chrono::steady_clock::now()) {
    const char* env = std::getenv("SY_VERIFY_LOWERED");  // set by the test suite
    verify_ = options.verify_lowered || options.check_invariants || (env && *env && std::string(env) != "0");
#ifndef NDEBUG
    verify_ = true;
#endif
  }
  void done(const char* stage) {
    auto now = std::chrono::steady_clock::now();
    report_->stages.push_back({stage, std::chrono::duration<double, std::milli>(now - start_).count()});
    start_ = now;
  }
  void lowered(const char* stage, const LoweredProgram& program, LoweredMemory memory = {}) {
    done(stage);
    if (verify_) verify_lowered_program(program, options_.config, stage);
    if (options_.print_after.count(stage) || options_.print_after.count("all"))
      output() << "// after " << stage << "\n" << print_lowered_program(program, options_.config, memory) << "\n";
    start_ = std::chrono::steady_clock::now();
  }
  std::ostream& output() const { return options_.print_to ? *options_.print_to : std::cerr; }

 private:
  BuildReport* report_;
  const BuildOptions& options_;
  bool verify_ = false;
  std::chrono::steady_clock::time_point start_;
};

// The stage names print_after may hold, checked before any work.
void check_print_after(const std::set<std::string>& names) {
  std::vector<std::string> known = printable_stages();
  for (const std::string& name : names) {
    if (name == "all" || std::find(known.begin(), known.end(), name) != known.end()) continue;
    std::string list;
    for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
    throw Error(ErrorKind::kUsage, "--print-after: unknown stage '" + name + "' (known: all, " + list + ")");
  }
}

// The flags of a device's target, as its kind's code generator says.
std::vector<std::string> target_flags(const VirtualDevice* device) {
  return code_generator_for(device->kind())->compile_flags(device->target());
}

// Compiles each kernel of a device that runs device images (a cuda
// device's cubins) through the kernel cache, before the manifest that
// records their hashes.
void compile_device_images(LoweredProgram& program, const CompilationConfig& config, const std::string& cache_dir,
                           ToolchainStats* stats) {
  std::vector<bool> done(program.kernel_sources.size(), false);
  for (const LoweredKernelCall& call : program.kernel_calls) {
    KernelSource& kernel = program.kernel_sources[size_t(call.source)];
    const VirtualDevice* device = config.devices[size_t(call.device)];
    const CodeGenerator* generator = code_generator_for(device->kind());
    // A library primitive alone (cuBLASLt, cuDNN) has no code to compile.
    if (done[size_t(call.source)] || !generator->compile_image || kernel.library_only()) continue;
    done[size_t(call.source)] = true;
    bool cached = false;
    try {
      kernel.image = generator->compile_image(kernel, device->target(), cache_dir, &cached);
    } catch (const Error& e) {
      // Say which device and which part of the model wanted the kernel.
      throw Error(e.kind(), device->device_name() + ": " + e.message(), e.span().defined() ? e.span() : kernel.span);
    }
    ++(cached ? stats->objects_cached : stats->objects_compiled);
  }
}

// The device images beside model.so, one file per kernel, and their code
// in `source_dir` (kept with --emit-source).
void write_device_images(const LoweredProgram& program, const Manifest& manifest, const std::string& dir,
                         const std::string& source_dir) {
  for (size_t k = 0; k < program.kernel_calls.size(); ++k) {
    const KernelSource& kernel = program.kernel_sources[size_t(program.kernel_calls[k].source)];
    if (kernel.image.empty()) continue;
    std::ofstream(source_dir + "/" + kernel.name + ".cu") << kernel.code;
    std::filesystem::path path = std::filesystem::path(dir) / manifest.kernels[k].image;
    std::error_code error;
    std::filesystem::create_directories(path.parent_path(), error);
    std::ofstream file(path, std::ios::binary);
    file.write(reinterpret_cast<const char*>(kernel.image.data()), std::streamsize(kernel.image.size()));
    if (!file || error) throw Error(ErrorKind::kBackend, "cannot write the device image " + path.string());
  }
}

// Every kernel with code in its own translation unit, compiled for its
// device's target, and the entry function for the host's. (A kernel that is
// a oneDNN primitive alone has no code: the runtime runs it; a device
// image is not C++ for model.so.) Kernels' units may be joined: the
// toolchain compiles them several to a compiler process.
std::vector<TranslationUnit> translation_units(const LoweredProgram& program, const std::string& entry_source,
                                               const CompilationConfig& config) {
  std::vector<TranslationUnit> units;
  std::vector<bool> added(program.kernel_sources.size(), false);
  for (const LoweredKernelCall& call : program.kernel_calls) {
    const KernelSource& kernel = program.kernel_sources[size_t(call.source)];
    if (added[size_t(call.source)] || kernel.library_only() || !kernel.image.empty()) continue;
    added[size_t(call.source)] = true;
    units.push_back({kernel.name, kernel.code, target_flags(config.devices[size_t(call.device)]), true});
  }
  const VirtualDevice* host = config.host_device ? config.host_device : config.devices.at(0);
  // The entry is straight-line calls with no loop to optimise: at -O1 the
  // compiler takes half the time of -O3 on it (ResNet-50's: 0.10 s, 0.22 s).
  std::vector<std::string> entry_flags = target_flags(host);
  std::replace(entry_flags.begin(), entry_flags.end(), std::string("-O3"), std::string("-O1"));
  units.push_back({kEntryUnitName, entry_source, entry_flags});
  return units;
}

// The unit returning model.so's description: one string, which the compiler
// need not optimise.
TranslationUnit description_unit(const Manifest& manifest, const CompilationConfig& config) {
  const VirtualDevice* host = config.host_device ? config.host_device : config.devices.at(0);
  std::vector<std::string> flags = target_flags(host);
  std::replace(flags.begin(), flags.end(), std::string("-O3"), std::string("-O0"));
  return {kDescriptionUnitName, generate_description_source(manifest), flags};
}

void add_compile_stats(ToolchainStats& total, const ToolchainStats& more) {
  total.objects_compiled += more.objects_compiled;
  total.objects_cached += more.objects_cached;
  total.compiler_invocations += more.compiler_invocations;
  total.notes.insert(total.notes.end(), more.notes.begin(), more.notes.end());
}

void write_manifest(Manifest& manifest, const std::string& dir) {
  try {
    manifest.hashes.model_so = sha256_file_hex(dir + "/model.so");
    write_manifest_file(manifest, dir + "/manifest.json");
  } catch (const RuntimeError& e) {
    throw Error(ErrorKind::kBackend, std::string("writing the manifest failed: ") + e.what());
  }
}

// What each device's kernels need of the machine that runs them (a CPU's
// features, a GPU's compute capability), as its kind's code generator says;
// checked at load.
void add_device_requirements(Manifest& manifest, const CompilationConfig& config, const Toolchain& toolchain) {
  for (size_t d = 0; d < config.devices.size(); ++d) {
    const VirtualDevice* device = config.devices[d];
    code_generator_for(device->kind())->record_requirements(device->target(), toolchain, manifest.devices[d]);
  }
}

void fill_report(BuildReport& report, const LoweredProgram& program, const MemoryPlan& memory,
                 const ToolchainStats& stats, const CompilationConfig& config) {
  for (size_t d = 0; d < config.devices.size(); ++d)
    report.memory.push_back({config.devices[d]->device_name(), memory.planned_bytes(int(d)),
                             memory.lower_bound_bytes(int(d))});
  report.kernel_calls = int(program.kernel_calls.size());
  report.distinct_kernels = int(program.kernel_sources.size());
  for (const KernelSource& k : program.kernel_sources) report.primitive_only_kernels += k.library_only();
  report.copies = int(program.copies.size());
  report.objects_compiled = stats.objects_compiled;
  report.objects_cached = stats.objects_cached;
  report.link_cached = stats.link_cached;
  report.compiler_invocations = stats.compiler_invocations;
  report.notes = stats.notes;
}

// The passes' context: the build's opt level, pass choices and
// configuration, and its instruments (timing; the invariant checker and the
// IR printer when asked).
PassContext pass_context(const BuildOptions& options, std::shared_ptr<TimingInstrument> timing,
                         std::shared_ptr<InvariantChecker> checker, std::ostream& print_to) {
  PassContext context;
  context.opt_level = options.opt_level;
  context.disabled_passes = options.disabled_passes;
  context.enabled_passes = options.enabled_passes;
  context.config = options.pass_config;
  context.diagnostics = options.diagnostics;
  context.instruments.push_back(std::move(timing));
  if (options.check_invariants) context.instruments.push_back(std::move(checker));
  if (!options.print_after.empty())
    context.instruments.push_back(
        std::make_shared<PrintIRInstrument>(std::set<std::string>{}, options.print_after, print_to));
  return context;
}

// The checks before any work: the devices, the output folder and the
// stages to print.
void check_build_options(const BuildOptions& options, const std::string& output_dir) {
  if (options.config.devices.empty()) throw Error(ErrorKind::kUsage, "a build needs at least one device");
  check_replaceable(output_dir);
  if (!options.print_after.empty()) check_print_after(options.print_after);
}

// Optimise and place: the default pipeline, InferType and PlanDevices (with
// the rules) through FuseOps, then PlanLayouts (with the pins), which keeps
// values between oneDNN convolutions and pools in oneDNN's layouts. Each
// pass is timed into `timings`; the checker blames the pass that breaks a rule.
IRModule run_passes(const IRModule& mod, const BuildOptions& options, std::shared_ptr<InvariantChecker> checker,
                    std::ostream& print_to, std::vector<TimingInstrument::Entry>& timings) {
  auto timing = std::make_shared<TimingInstrument>();
  PassContext context = pass_context(options, timing, std::move(checker), print_to);
  IRModule planned;
  {
    PassContext::Scope scope(context);
    planned = default_pipeline({options.config, options.rules, options.latency})(mod, context);
    planned = PlanLayouts(options.layout_rules)(planned, context);
  }
  timings = timing->entries();
  return planned;
}

// Warns, naming the node, about each convolution, pool or product no
// library took that carries much of the work.
void warn_about_costly_loops(const LoweredProgram& program, DiagnosticSink& diagnostics) {
  for (std::string& warning : costly_loop_warnings(program)) diagnostics.report({kCostlyLoopCheck, std::move(warning)});
}

// Writes and hashes weights.bin into `dir` on a thread of its own: the
// kernels and the entry do not need it (only model.so's description holds
// its checksum). The caller changes neither `program` nor `manifest` until
// the result is taken.
std::future<std::string> start_writing_weights(const LoweredProgram& program, const Manifest& manifest,
                                               const WeightPreparers& preparers, const std::string& dir) {
  return std::async(std::launch::async, [&program, &manifest, &preparers, path = dir + "/weights.bin"] {
    return write_weights_file(program, manifest, preparers, path);
  });
}

// Compiles model.so's description on a thread of its own once weights.bin
// is summed (its checksum is part of it), beside the kernels and the entry:
// a batch of compiles ends with one compiler idle. Until the object is
// taken only that thread touches `manifest`.
std::future<std::string> start_compiling_description(const Toolchain& toolchain, Manifest& manifest,
                                                     std::future<std::string>& weights_hash,
                                                     const CompilationConfig& config, const std::string& source_dir,
                                                     ToolchainStats* stats) {
  return std::async(std::launch::async, [&toolchain, &manifest, &weights_hash, &config, source_dir, stats] {
    manifest.hashes.weights_bin = weights_hash.get();
    return toolchain.compile({description_unit(manifest, config)}, source_dir, stats).front();
  });
}

constexpr const char* kPlanLayoutsStage = "PlanLayouts";
constexpr const char* kLoweringStages[] = {"lower", "generate-kernels", "layouts", "pinned-buffers", "memory-plan"};

}  // namespace

// The IR passes before lowering, in order.
Pass default_pipeline(const PipelineOptions& options) {
  return Sequential(
      {
          InferType(),                 // every node gets its type
          plan_devices_pass(options),  // every node gets its device; copies where values cross
          ToGraphNormalForm(),         // let-bound values become dataflow edges, so they fuse
          SimplifyExpr(),              // algebraic identities, layer normalisation folded
          FuseQDQ(),                   // QDQ convolutions as int8 operators, before their weights fold
          SimplifyQuantizeChains(),    // quantize steps that change nothing dropped
          FoldConstant(),              // constant sub-expressions evaluated
          EliminateCommonSubexpr(),    // equal computations shared
          DeadCodeElimination(),       // unused bindings dropped
          FuseOps(),                   // operator calls grouped into kernels
      },
      "DefaultPipeline");
}

std::vector<std::string> printable_stages() {
  std::vector<std::string> names;
  const Pass passes = default_pipeline({CompilationConfig::parse("cpu:0"), {}});
  for (const Pass& pass : passes.children()) names.push_back(pass.name());
  names.push_back(kPlanLayoutsStage);
  names.insert(names.end(), std::begin(kLoweringStages), std::end(kLoweringStages));
  return names;
}

// The latency objective's choice between the split and one device with
// every core is made before the passes, because the cores follow it: the
// chosen device then gets every device's cores (the threads it was measured
// with), the others none. The pipeline's planning keeps the decision.
// The plan's prediction is kept for the manifest.
struct LatencyDecision {
  BuildOptions options;
  std::optional<ManifestPrediction> prediction;
};

ManifestPrediction prediction_of(const PlanResult& plan, const CompilationConfig& config) {
  PredictedTimes times = predict_times(plan.graph, config, *plan.latency, plan.solution.device);
  ManifestPrediction out;
  out.run_ms = times.makespan_ms;
  for (size_t d = 0; d < config.devices.size(); ++d)
    out.devices.push_back({config.devices[d]->device_name(), times.compute_ms[d], times.copy_ms[d]});
  out.critical_path = critical_path_entries(times, plan.graph);
  out.choice = latency_choice_text(*plan.choice);
  if (!out.choice.empty() && out.choice.back() == '\n') out.choice.pop_back();
  return out;
}

LatencyDecision decide_latency_candidate(const IRModule& mod, const BuildOptions& given) {
  if (!given.latency || given.latency->one_device) return {given, std::nullopt};
  LatencyDecision decision{given, std::nullopt};
  BuildOptions& options = decision.options;
  PlanResult plan = plan_devices(infer_type(apply_placement_rules(mod, options.rules).module), options.config, options.latency);
  decision.prediction = prediction_of(plan, options.config);
  options.latency->one_device = plan.choice->one_device;
  if (plan.choice->one_device && !options.device_cores.empty()) {
    std::vector<int> every_core;
    for (const auto& [device, cores] : options.device_cores) every_core.insert(every_core.end(), cores.begin(), cores.end());
    std::sort(every_core.begin(), every_core.end());
    every_core.erase(std::unique(every_core.begin(), every_core.end()), every_core.end());
    options.device_cores = {{plan.choice->device, every_core}};
  }
  return decision;
}

// Only the devices the artifact has (every device of the build, today).
void record_prediction(Manifest& manifest, std::optional<ManifestPrediction> prediction) {
  if (!prediction) return;
  std::erase_if(prediction->devices, [&](const ManifestPredictedDevice& d) {
    return std::none_of(manifest.devices.begin(), manifest.devices.end(), [&](const ManifestDevice& m) { return m.name == d.device; });
  });
  manifest.prediction = std::move(prediction);
}

BuildReport build_artifact(const IRModule& mod, const BuildOptions& given, const std::string& output_dir) {
  const LatencyDecision decision = decide_latency_candidate(mod, given);
  const BuildOptions& options = decision.options;
  BuildReport report;
  report.output_dir = output_dir;
  Stages stages(&report, options);

  // Fail before any work when the devices, the output, the stages to print
  // or the compiler are unusable, or a shape is symbolic (nothing after
  // InferType takes one yet).
  check_build_options(options, output_dir);
  refuse_symbolic_use(mod, ErrorKind::kBackend, "cannot compile", static_shape_remedy(mod));
  Toolchain toolchain =
      options.toolchain.valid() ? options.toolchain.get() : Toolchain::find(options.cxx, options.cache_dir);
  stages.done("find-compiler");

  // Optimise and place: the IR passes, each timed, then PlanLayouts.
  auto checker = std::make_shared<InvariantChecker>();
  IRModule planned = run_passes(mod, options, checker, stages.output(), report.passes);
  stages.done("passes");

  // Check that everything the entry reaches is placed and compilable.
  check_lowerable(planned, kEntry, options.check_invariants ? checker.get() : nullptr);
  stages.done("lower-check");

  // Lower the entry to kernel calls, copies and moves over buffers.
  LoweredProgram program = lower_entry(planned, kEntry, options.config);
  stages.lowered("lower", program);

  // Generate each fused function's kernel for its device's target.
  generate_kernels(program, options.config);
  stages.lowered("generate-kernels", program);

  // Warn about the heavy loops no library took.
  warn_about_costly_loops(program, *options.diagnostics);

  // Compile the kernels of devices that run device images (cuda: cubins, cached).
  ToolchainStats stats;
  compile_device_images(program, options.config, toolchain.cache_dir(), &stats);
  stages.done("compile-device-images");

  // Give window primitives and buffers the layouts PlanLayouts chose, pick
  // the runtime's own convolution and matmul where they are faster, and fuse
  // a 1x1 convolution into the depthwise convolution after it.
  apply_layouts(program);
  choose_primitive_algorithms(program);
  fuse_depthwise_convolutions(program);
  stages.lowered("layouts", program);

  // Page-lock the host buffers that cross to a GPU.
  plan_pinned_buffers(program, options.config);
  stages.lowered("pinned-buffers", program);

  // Plan each device's arenas from the buffers' live ranges.
  std::vector<int> tensor_of_buffer;
  MemoryPlan memory = plan_memory(memory_problem(program, &tensor_of_buffer));
  stages.lowered("memory-plan", program, {&memory, &tensor_of_buffer});

  // Describe the artifact: devices, inputs, outputs, weights, arenas, kernels, copies.
  Manifest manifest = make_manifest(program, memory, options.config);
  const WeightPreparers preparers = mark_prepared_weights(program, manifest, options.config);
  add_device_requirements(manifest, options.config, toolchain);
  record_prediction(manifest, decision.prediction);
  try {
    apply_device_cores(manifest.devices, options.device_cores);
  } catch (const RuntimeError& e) {
    throw Error(ErrorKind::kUsage, std::string("--cores: ") + e.what());
  }
  stages.done("manifest");

  // weights.bin, written and hashed while the kernels and the entry compile
  // (declared after `staging`, it ends before the staging directory goes).
  StagingDirectory staging(output_dir);
  std::future<std::string> weights_hash = start_writing_weights(program, manifest, preparers, staging.path());

  // Generate the entry function that runs the steps in order.
  std::string entry_source = generate_entry_source(program, memory, tensor_of_buffer, manifest);
  stages.done("aot-entry");

  // Compile (two at a time, cached by content) and link model.so; its
  // description, which holds weights.bin's checksum, beside the rest.
  const std::string source_dir = staging.path() + "/src";
  std::filesystem::create_directory(source_dir);
  ToolchainStats description_stats;
  std::future<std::string> description_object = start_compiling_description(
      toolchain, manifest, weights_hash, options.config, source_dir, &description_stats);
  std::vector<std::string> objects =
      toolchain.compile(translation_units(program, entry_source, options.config), source_dir, &stats);
  stages.done("compile");
  objects.push_back(description_object.get());
  add_compile_stats(stats, description_stats);
  stages.done("compile-description");  // waits for weights.bin
  toolchain.link(objects, staging.path() + "/model.so", &stats);
  stages.done("link");
  write_device_images(program, manifest, staging.path(), source_dir);
  stages.done("write-device-images");

  // Write the manifest: the artifact is complete.
  write_manifest(manifest, staging.path());
  if (!options.emit_source) std::filesystem::remove_all(source_dir);

  // Report it, let the caller keep it (the artifact cache), and put it in place.
  fill_report(report, program, memory, stats, options.config);
  if (options.before_commit) options.before_commit(staging.path(), report);
  staging.commit();
  stages.done("write-artifact");
  return report;
}

}  // namespace switchyard
