// Shared helpers of the subcommands.
#include "driver/driver_util.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <iostream>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>

#include "frontend/load_model.h"
#include "runtime/core_set.h"
#include "runtime/runtime_error.h"
#include "runtime/file_write.h"
#include "runtime/npy.h"
#include "runtime/runtime_error.h"
#include "support/error.h"
#include "support/identifier.h"
#include "transform/infer_type.h"

namespace switchyard {

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorKind::kUsage, "cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_text_file_atomically(const std::string& path, const std::string& text) {
  std::string tmp = path + ".tmp";
  try {
    write_whole_file(tmp, text);
  } catch (const RuntimeError& e) {
    throw Error(ErrorKind::kUsage, e.what());
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    int error = errno;
    std::remove(tmp.c_str());
    throw Error(ErrorKind::kUsage, "cannot write " + path + ": " + std::strerror(error));
  }
}

void add_model_flags(CLI::App* cmd, ModelFlags* flags) {
  cmd->add_option("file", flags->file, "model: a text-IR file (.sy) or an ONNX file (.onnx)")->required();
  cmd->add_option("--input-shape", flags->input_shapes,
                  "an ONNX input's shape as NAME=1x3x224x224 (repeatable): a number fixes a dimension, ? keeps it "
                  "symbolic, a name (n) names it, n<=32 bounds it; NAME=n,3,224,224 when a name holds an x");
}

IRModule load_model(const ModelFlags& flags) {
  OnnxImportOptions options;
  options.weights_in_place = true;  // each command is one short process
  for (const std::string& spec : flags.input_shapes) {
    // The last '=' that is not a bound's "<=": names may hold '=', shapes "n<=32".
    size_t eq = spec.rfind('=');
    while (eq != std::string::npos && eq > 0 && spec[eq - 1] == '<')
      eq = eq < 2 ? std::string::npos : spec.rfind('=', eq - 2);
    if (eq == std::string::npos || eq == 0)
      throw Error(ErrorKind::kUsage, "--input-shape '" + spec + "' is not NAME=DIMS (e.g. input=1x3x224x224)");
    std::string name = spec.substr(0, eq);
    if (options.input_shapes.count(name)) throw Error(ErrorKind::kUsage, "--input-shape gives '" + name + "' twice");
    options.input_shapes[name] = parse_shape_text(spec.substr(eq + 1));
  }
  std::vector<std::string> notes;
  options.notes = &notes;
  IRModule mod = load_model_file(flags.file, options);
  for (const std::string& note : notes) std::cerr << note << "\n";
  return mod;
}

std::optional<CompilationConfig> config_from_flags(const DeviceFlags& flags, const IRModule& mod) {
  if (!flags.devices.empty())
    return CompilationConfig::parse(flags.devices, flags.default_device, flags.host_device);
  if (!flags.default_device.empty() || !flags.host_device.empty())
    throw Error(ErrorKind::kUsage, "--default and --host need --devices");
  if (!mod.devices().empty()) return CompilationConfig::from_devices(mod.devices());
  return std::nullopt;
}

std::map<std::string, std::vector<int>> cores_from_flags(const std::vector<std::string>& flags) {
  std::map<std::string, std::vector<int>> cores;
  for (const std::string& flag : flags) {
    try {
      auto [device, set] = parse_device_cores(flag);
      if (!cores.emplace(device, set).second) throw Error(ErrorKind::kUsage, "--cores gives " + device + " twice");
    } catch (const RuntimeError& e) {
      throw Error(ErrorKind::kUsage, std::string("--cores: ") + e.what());
    }
  }
  return cores;
}

std::vector<PlacementRule> rules_from_flags(const std::vector<std::string>& rules,
                                            const std::optional<CompilationConfig>& config) {
  std::vector<PlacementRule> out;
  for (const std::string& r : rules) {
    if (!config) throw Error(ErrorKind::kUsage, "--place needs --devices");
    out.push_back(parse_placement_rule(r, *config));
  }
  return out;
}

PlanResult plan_with_rules(const IRModule& mod, const CompilationConfig& config,
                           const std::vector<PlacementRule>& rules, const std::optional<LatencyObjective>& latency) {
  PlanResult plan = plan_devices(infer_type(apply_placement_rules(mod, rules).module), config, latency);
  for (const std::string& warning : plan.warnings) std::cerr << warning << "\n";
  return plan;
}

void add_objective_flags(CLI::App* cmd, ObjectiveFlags* flags) {
  cmd->add_option("--objective", flags->objective,
                  "what device planning minimises: bytes (copied between devices; the default) or latency (the "
                  "predicted run time, from --costs)")
      ->check(CLI::IsMember({"bytes", "latency"}));
  cmd->add_option("--costs", flags->costs, "the cost file `switchyard profile` wrote, for --objective latency");
}

std::optional<LatencyObjective> objective_from_flags(const ObjectiveFlags& flags) {
  if (flags.objective != "latency") {
    if (!flags.costs.empty()) throw Error(ErrorKind::kUsage, "--costs is read only with --objective latency");
    return std::nullopt;
  }
  if (flags.costs.empty())
    throw Error(ErrorKind::kUsage,
                "--objective latency needs --costs FILE (measure one with `switchyard profile MODEL --device cpu:0 "
                "--device cpu:1 -o costs.json`)");
  auto costs = std::make_shared<CostFile>(read_cost_file(flags.costs));
  check_same_machine(*costs, MachineIdentity::this_machine(), flags.costs);
  return LatencyObjective{costs, flags.costs};
}

std::shared_ptr<DiagnosticSink> stderr_diagnostics() {
  return std::make_shared<DiagnosticSink>([](const DiagnosticSink::Diagnostic& d) { std::cerr << d.text << "\n"; });
}

void add_device_flags(CLI::App* cmd, DeviceFlags* flags) {
  cmd->add_option("--devices", flags->devices, "the build's devices, e.g. cpu:0,cpu:1 (a target may follow '=')");
  cmd->add_option("--default", flags->default_device, "device for values nothing constrains (default: the first)");
  cmd->add_option("--host", flags->host_device, "device for control flow and I/O (default: the first CPU; cpu:0 is added when none is listed)");
}

std::map<std::string, NDArray> read_npy_inputs(const std::vector<std::string>& specs) {
  std::map<std::string, NDArray> inputs;
  for (const std::string& spec : specs) {
    size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
      throw Error(ErrorKind::kUsage, "--input expects NAME=FILE.npy, got '" + spec + "'");
    std::string name = spec.substr(0, eq);
    if (inputs.count(name)) throw Error(ErrorKind::kUsage, "input '" + name + "' is given twice");
    try {
      inputs[name] = read_npy(spec.substr(eq + 1));
    } catch (const std::runtime_error& e) {
      throw Error(ErrorKind::kUsage, "input '" + name + "': " + e.what());
    }
  }
  return inputs;
}

void adopt_bfloat16_bits(std::map<std::string, NDArray>& inputs, const std::map<std::string, DType>& expected) {
  for (auto& [name, array] : inputs) {
    auto wanted = expected.find(name);
    if (array.dtype() != DType::kUInt16 || wanted == expected.end() || wanted->second != DType::kBFloat16) continue;
    NDArray bits(DType::kBFloat16, array.shape());
    if (array.nbytes() > 0) std::memcpy(bits.data(), array.data(), array.nbytes());
    array = std::move(bits);
  }
}

std::string tensor_statistics(const NDArray& a) {
  if (a.numel() == 0) return "empty";
  double min = a.get_as_double(0), max = min, sum = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    double v = a.get_as_double(i);
    min = std::fmin(min, v);
    max = std::fmax(max, v);
    sum += v;
  }
  char text[128];
  std::snprintf(text, sizeof text, "min=%.6g max=%.6g mean=%.6g", min, max, sum / double(a.numel()));
  return text;
}

std::vector<OutputFiles> output_files(const std::vector<std::string>& names) {
  std::set<std::string> taken;
  std::vector<OutputFiles> files(names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    files[i].positional = "output_" + std::to_string(i) + ".npy";
    taken.insert(files[i].positional);
  }
  for (size_t i = 0; i < names.size(); ++i) {
    std::string stem = identifier_chars(names[i]);
    if (stem + ".npy" == files[i].positional) continue;
    while (taken.count(stem + ".npy")) stem += "_" + std::to_string(i);
    files[i].named = stem + ".npy";
    taken.insert(files[i].named);
  }
  return files;
}

void write_output_files(const std::filesystem::path& dir, const OutputFiles& files, const NDArray& array) {
  try {
    write_npy((dir / files.positional).string(), array);
  } catch (const std::runtime_error& e) {
    throw Error(ErrorKind::kUsage, e.what());
  }
  if (files.named.empty()) return;
  std::filesystem::path named = dir / files.named;
  std::error_code ec;
  std::filesystem::remove(named, ec);
  std::filesystem::create_hard_link(dir / files.positional, named, ec);
  if (ec) std::filesystem::copy_file(dir / files.positional, named, std::filesystem::copy_options::overwrite_existing, ec);
  if (ec) throw Error(ErrorKind::kUsage, "cannot write " + named.string() + ": " + ec.message());
}

std::string output_label(const std::string& name, const OutputFiles& files) {
  return files.named.empty() ? name : name + " (" + files.named + ", " + files.positional + ")";
}

}  // namespace switchyard
