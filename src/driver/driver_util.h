// Helpers shared by the subcommands: reading files, writing outputs whole
// (never a partial file), and building a CompilationConfig from flags.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "ir/compilation_config.h"
#include "ir/module.h"
#include "placement/placement_rules.h"
#include "placement/plan_devices.h"
#include "runtime/ndarray.h"

namespace switchyard {

// The whole file, or Error(kUsage) naming it.
std::string read_text_file(const std::string& path);
// Writes through a temporary file and a rename, so a failure leaves nothing.
void write_text_file_atomically(const std::string& path, const std::string& text);

// The model file every command takes (text IR or ONNX) and the shapes that
// fix an ONNX model's symbolic input dimensions.
struct ModelFlags {
  std::string file;
  std::vector<std::string> input_shapes;  // NAME=1x3x224x224
};
// Adds the positional file and --input-shape (repeatable).
void add_model_flags(CLI::App* cmd, ModelFlags* flags);
// Parses or imports the file; Error(kUsage) naming a malformed --input-shape.
IRModule load_model(const ModelFlags& flags);

struct DeviceFlags {
  std::string devices;  // "cpu:0,cpu:1"
  std::string default_device;
  std::string host_device;
};
// From the flags, or else from the module's own device list; nullopt when
// neither names any device.
std::optional<CompilationConfig> config_from_flags(const DeviceFlags& flags, const IRModule& mod);
// Parses --place rules against the build's devices; Error(kUsage) when rules
// are given without devices.
// Core sets by device from `--cores DEVICE=CORES` flags (runtime/core_set.h).
// Throws Error(kUsage) for a malformed flag or a device given twice.
std::map<std::string, std::vector<int>> cores_from_flags(const std::vector<std::string>& flags);

std::vector<PlacementRule> rules_from_flags(const std::vector<std::string>& rules,
                                            const std::optional<CompilationConfig>& config);
// Applies the rules, types the result and plans devices, printing the
// planner's warnings to standard error (explain, inspect).
PlanResult plan_with_rules(const IRModule& mod, const CompilationConfig& config,
                           const std::vector<PlacementRule>& rules,
                           const std::optional<LatencyObjective>& latency = std::nullopt);

// --objective bytes|latency and --costs FILE.
struct ObjectiveFlags {
  std::string objective = "bytes";
  std::string costs;
};
void add_objective_flags(CLI::App* cmd, ObjectiveFlags* flags);
// The latency objective with its cost file read and checked against this
// machine; nullopt for bytes. Error(kUsage) for latency without --costs,
// --costs without latency, or a cost file from another machine.
std::optional<LatencyObjective> objective_from_flags(const ObjectiveFlags& flags);
// A sink that prints each pass warning on standard error as it arrives.
std::shared_ptr<DiagnosticSink> stderr_diagnostics();
// Adds --devices/--default/--host to a subcommand.
void add_device_flags(CLI::App* cmd, DeviceFlags* flags);

// Reads --input NAME=FILE.npy values by name; Error(kUsage) naming a
// malformed or repeated spec, or an unreadable file.
std::map<std::string, NDArray> read_npy_inputs(const std::vector<std::string>& specs);
// .npy has no bfloat16: its bits travel as '<u2', which reads as uint16.
// Each uint16 input whose `expected` dtype (by name) is bfloat16 becomes
// the bfloat16 array of those bits.
void adopt_bfloat16_bits(std::map<std::string, NDArray>& inputs, const std::map<std::string, DType>& expected);
// "min=-1.5 max=3 mean=0.75" (every dtype read as double), "empty" for no elements.
std::string tensor_statistics(const NDArray& array);

// The .npy files of each output named `names` (docs/onnx.md): output_<i>.npy
// always (by position, as scripts expect), and for an output with a name of
// its own also NAME.npy, the name with every character but letters, digits
// and '_' made '_', and _<i> appended where another file has that name:
// "logits:0" -> "logits_0.npy". `named` is empty when the name is output_<i>.
struct OutputFiles {
  std::string positional;
  std::string named;
};
std::vector<OutputFiles> output_files(const std::vector<std::string>& names);
// Writes `array` to DIR/positional and gives it the name DIR/named too (a
// hard link, else a copy); Error(kUsage) naming the file it cannot write.
void write_output_files(const std::filesystem::path& dir, const OutputFiles& files, const NDArray& array);
// What `run` and `run-ir` print before an output's summary: its name, and
// its files where it has a name of its own: "logits:0 (logits_0.npy, output_0.npy)".
std::string output_label(const std::string& name, const OutputFiles& files);

}  // namespace switchyard
