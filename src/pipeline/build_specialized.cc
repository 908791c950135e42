// The specialised build: one program per combination of dimension values,
// weights.bin stored once, and the manifest the runtime dispatches by.
#include "pipeline/build_specialized.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <future>
#include <set>
#include <thread>

#include "analysis/chunkable_dims.h"
#include "artifact/artifact_writer.h"
#include "ir/type.h"
#include "runtime/file_write.h"
#include "runtime/manifest.h"
#include "runtime/specialized_manifest.h"
#include "support/error.h"
#include "transform/infer_type.h"
#include "transform/pass.h"
#include "transform/specialize.h"

namespace switchyard {
namespace {

// The dimension variables of @main's parameters, in order of first appearance.
std::vector<const DimVar*> parameter_dim_vars(const Function& main) {
  std::vector<const DimVar*> vars;
  for (const Var& p : main->params)
    if (const TensorTypeNode* t = as_tensor(p->checked_type()))
      for (const DimExpr& d : t->dims)
        for (const DimVar* v : d.variables())
          if (std::find(vars.begin(), vars.end(), v) == vars.end()) vars.push_back(v);
  return vars;
}

SymbolicTensor symbolic_tensor(const std::string& name, const TensorTypeNode& t) {
  SymbolicTensor tensor{name, t.dtype, {}};
  for (const DimExpr& d : t.dims) {
    ManifestDim dim;
    if (std::optional<int64_t> value = d.constant())
      dim.value = *value;
    else
      dim.symbol = dim_to_string(d);
    tensor.shape.push_back(dim);
  }
  return tensor;
}

// The result's tensors in the order the manifest lists outputs (a tuple flattened).
void flatten_tensor_types(const Type& type, std::vector<const TensorTypeNode*>& out) {
  if (const TensorTypeNode* t = as_tensor(type)) return out.push_back(t);
  if (const TupleTypeNode* tuple = as_tuple(type))
    for (const Type& field : tuple->fields) flatten_tensor_types(field, out);
}

// Whether two programs wrote the same weights.bin, by the size and the
// checksum each program's manifest records (the writer sums the bytes as it
// writes them, and every load checks the file against that sum), rather than
// reading both files back to compare them.
// XXH3-128 of two files our own compiler wrote from one model: an accidental
// match of different bytes is a 2^-128 chance, and the load would refuse it.
bool same_weights(const std::string& dir_a, const Manifest& a, const std::string& dir_b, const Manifest& b) {
  return a.hashes.weights_bin == b.hashes.weights_bin && !a.hashes.weights_bin.empty() &&
         std::filesystem::file_size(dir_a + "/weights.bin") == std::filesystem::file_size(dir_b + "/weights.bin");
}

// Builds each program into dir/NAME, as many at once as the machine has
// cores: most of a build waits on the C++ compiler's processes and on
// writing weights, so two builds on two cores take little longer than one.
// One after another under pass instruments, which may not be reentrant (a
// Python callback). Each build still compiles two units at a time, and finds
// what the builds before it compiled in the object cache.
std::vector<BuildReport> build_programs(const std::vector<IRModule>& programs, const std::vector<std::string>& names,
                                        const BuildOptions& options, const std::string& dir) {
  const PassContext& context = PassContext::current();
  const size_t at_once = context.instruments.empty() ? std::max(1u, std::thread::hardware_concurrency()) : 1;
  std::vector<BuildReport> reports;
  if (at_once == 1 || programs.size() == 1) {  // on the caller's thread, as any build
    for (size_t p = 0; p < programs.size(); ++p)
      reports.push_back(build_artifact(programs[p], options, dir + "/" + names[p]));
    return reports;
  }
  for (size_t first = 0; first < programs.size(); first += at_once) {
    std::vector<std::future<BuildReport>> builds;
    for (size_t p = first; p < std::min(programs.size(), first + at_once); ++p)
      builds.push_back(std::async(std::launch::async, [&, p] {
        PassContext::Scope scope(context);  // the caller's options, on this thread
        return build_artifact(programs[p], options, dir + "/" + names[p]);
      }));
    // Every build ends before the first failure is rethrown.
    for (std::future<BuildReport>& build : builds) build.wait();
    for (std::future<BuildReport>& build : builds) reports.push_back(build.get());
  }
  return reports;
}

}  // namespace

DimValues parse_dim_values(const std::string& text) {
  auto bad = [&](const std::string& why) {
    return Error(ErrorKind::kUsage, "--specialize " + text + ": " + why + " (expected NAME=V1,V2,..., e.g. n=1,8,32)");
  };
  size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0) throw bad("no dimension name");
  DimValues dim{text.substr(0, eq), {}};
  std::string rest = text.substr(eq + 1);
  if (rest.empty()) throw bad("no values");
  size_t start = 0;
  while (start <= rest.size()) {
    size_t comma = rest.find(',', start);
    std::string item = rest.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (item.empty() || item.find_first_not_of("0123456789") != std::string::npos || item.size() > 12)
      throw bad("'" + item + "' is not a non-negative integer");
    int64_t value = std::stoll(item);
    if (std::find(dim.values.begin(), dim.values.end(), value) != dim.values.end())
      throw bad(item + " is given twice");
    dim.values.push_back(value);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return dim;
}

SpecializedBuildReport build_specialized_artifact(const IRModule& mod, const std::vector<DimValues>& dims,
                                                  const BuildOptions& options, const std::string& output_dir) {
  auto start = std::chrono::steady_clock::now();
  IRModule typed = infer_type(mod);
  const Function& main = typed.lookup("main");

  // Every variable of @main's parameters gets values, and nothing else does.
  std::vector<const DimVar*> vars = parameter_dim_vars(main);
  std::string var_names;
  for (const DimVar* v : vars) var_names += (var_names.empty() ? "" : ", ") + v->name;
  std::set<std::string> given;
  for (const DimValues& d : dims) {
    if (!given.insert(d.name).second) throw Error(ErrorKind::kUsage, "--specialize names dimension " + d.name + " twice");
    bool known = false;
    for (const DimVar* v : vars) known = known || v->name == d.name;
    if (!known)
      throw Error(ErrorKind::kUsage, "--specialize " + d.name + ": @main's inputs have no dimension " + d.name +
                                         (vars.empty() ? std::string(" (every input shape is static)")
                                                       : " (their symbolic dimensions: " + var_names + ")"));
  }
  for (const DimVar* v : vars)
    if (!given.count(v->name))
      throw Error(ErrorKind::kUsage, "dimension " + v->name + " of @main's inputs is symbolic and --specialize gives "
                                         "it no values (--specialize " + v->name + "=1,8)");

  // The signature the runtime checks each program against.
  SpecializedManifest manifest;
  manifest.format_version = kArtifactFormatVersion;
  manifest.switchyard_version = kSwitchyardVersion;
  for (const DimValues& d : dims) manifest.dims.push_back(d.name);
  for (const Var& p : main->params)
    if (const TensorTypeNode* t = as_tensor(p->checked_type())) manifest.inputs.push_back(symbolic_tensor(p->name_hint, *t));
  std::vector<const TensorTypeNode*> results;
  flatten_tensor_types(main->body->checked_type(), results);
  // Which dimensions runs may take other values of, in chunks of the compiled ones.
  for (const DimValues& d : dims)
    for (const DimVar* v : vars)
      if (v->name == d.name) {
        ChunkableDim c = chunkable_dim(main, v);
        manifest.chunking.push_back({c.dim, c.input_axes, c.output_axes, c.refusal});
      }

  // The cross product, the first dimension outermost.
  std::vector<std::vector<int64_t>> combinations = {{}};
  for (const DimValues& d : dims) {
    std::vector<std::vector<int64_t>> next;
    for (const std::vector<int64_t>& prefix : combinations)
      for (int64_t value : d.values) {
        next.push_back(prefix);
        next.back().push_back(value);
      }
    combinations = std::move(next);
  }

  check_replaceable(output_dir);
  StagingDirectory staging(output_dir);
  SpecializedBuildReport report;
  std::vector<IRModule> programs;
  for (const std::vector<int64_t>& values : combinations) {
    DimBindings bindings;
    for (size_t d = 0; d < dims.size(); ++d) bindings[dims[d].name] = values[d];
    manifest.specializations.push_back({values, false});
    report.names.push_back(specialization_name(manifest, manifest.specializations.size() - 1));
    programs.push_back(specialize(typed, bindings));
  }
  // One search for the compiler, not one per program (it asks the compiler,
  // reads its cache and sweeps the cache's leftovers each time).
  BuildOptions each = options;
  if (!each.toolchain.valid()) {
    std::promise<Toolchain> found;
    found.set_value(Toolchain::find(options.cxx, options.cache_dir));
    each.toolchain = found.get_future().share();
  }
  report.programs = build_programs(programs, report.names, each, staging.path());

  // The outputs' names come from the first program, which flattened the result the same way.
  Manifest first = read_manifest_file(staging.path() + "/" + report.names[0] + "/manifest.json");
  if (first.outputs.size() != results.size())
    throw Error(ErrorKind::kBackend, "the specialised programs have " + std::to_string(first.outputs.size()) +
                                         " outputs but @main's result has " + std::to_string(results.size()) +
                                         " tensors");
  for (size_t i = 0; i < results.size(); ++i) manifest.outputs.push_back(symbolic_tensor(first.outputs[i].name, *results[i]));

  // weights.bin once: the first program's at the top, every same one dropped.
  const std::string first_dir = staging.path() + "/" + report.names[0];
  for (size_t s = 0; s < report.names.size(); ++s) {
    const std::string own_dir = staging.path() + "/" + report.names[s];
    bool same = s == 0 || same_weights(own_dir, read_manifest_file(own_dir + "/manifest.json"), first_dir, first);
    if (same && s > 0) std::filesystem::remove(own_dir + "/weights.bin");
    manifest.specializations[s].shared_weights = same;
    report.shared_weights += same;
  }
  std::filesystem::rename(first_dir + "/weights.bin", staging.path() + "/weights.bin");
  for (size_t d = 0; d < manifest.chunking.size(); ++d) report.chunking.push_back(chunking_text(manifest, d));
  write_whole_file(staging.path() + "/manifest.json", format_specialized_manifest(manifest));
  staging.commit();
  report.total_milliseconds =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return report;
}

}  // namespace switchyard
