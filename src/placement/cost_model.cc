// Cost files: keys of operator calls, reading and writing, and the times
// of a placement graph's nodes.
#include "placement/cost_model.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "support/error.h"

namespace switchyard {

namespace {

using nlohmann::json;

std::string cpuinfo_field(const std::string& text, const std::string& field) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(field, 0) == 0) {
      size_t colon = line.find(':');
      if (colon == std::string::npos) continue;
      size_t begin = line.find_first_not_of(" \t", colon + 1);
      return begin == std::string::npos ? "" : line.substr(begin);
    }
  return "";
}

[[noreturn]] void malformed(const std::string& path, const std::string& what) {
  throw Error(ErrorKind::kUsage, "cost file " + path + ": " + what);
}

}  // namespace

MachineIdentity MachineIdentity::this_machine() {
  std::ifstream in("/proc/cpuinfo");
  std::stringstream text;
  text << in.rdbuf();
  MachineIdentity id;
  id.cpu_model = cpuinfo_field(text.str(), "model name");
  if (id.cpu_model.empty()) id.cpu_model = cpuinfo_field(text.str(), "CPU part");
#if defined(__x86_64__)
  if (id.cpu_model.empty()) id.cpu_model = "x86_64";
  std::string flags = " " + cpuinfo_field(text.str(), "flags") + " ";
  for (const char* ext : {"sse4_2", "avx", "avx2", "fma", "avx512f", "avx512_vnni", "avx512_bf16", "avx512_fp16",
                          "amx_tile", "amx_bf16"})
    if (flags.find(std::string(" ") + ext + " ") != std::string::npos) id.isa += (id.isa.empty() ? "" : " ") + std::string(ext);
#else
  if (id.cpu_model.empty()) id.cpu_model = "unknown";
  id.isa = cpuinfo_field(text.str(), "Features");
#endif
  return id;
}

std::string operator_cost_text(const CallNode& call) {
  const OpNode* op = as<OpNode>(call.op);
  std::string text = op ? op->name : "call";
  if (call.attrs && !call.attrs->entries().empty()) {
    text += "(";
    bool first = true;
    for (const auto& [name, value] : call.attrs->entries()) {
      text += (first ? "" : ", ") + name + "=" + attr_value_to_string(value);
      first = false;
    }
    text += ")";
  }
  text += " : (";
  for (size_t i = 0; i < call.args.size(); ++i) text += (i ? ", " : "") + type_to_string(call.args[i]->checked_type());
  return text + ") -> " + type_to_string(call.checked_type());
}

std::string operator_cost_key(const CallNode& call) { return cost_key_of_text(operator_cost_text(call)); }

std::string cost_key_of_text(const std::string& text) {
  uint64_t hash = 1469598103934665603ull;
  for (unsigned char c : text) hash = (hash ^ c) * 1099511628211ull;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
  return hex;
}

std::string cost_file_json(const CostFile& costs) {
  json j;
  j["format"] = "switchyard-costs";
  j["version"] = CostFile::kVersion;
  j["machine"] = {{"cpu_model", costs.machine.cpu_model}, {"isa", costs.machine.isa}};
  j["model"] = costs.model;
  j["devices"] = json::array();
  for (const ProfiledDevice& d : costs.devices)
    j["devices"].push_back({{"name", d.name}, {"kind", d.kind}, {"threads", d.threads}, {"overhead_ms", d.overhead_ms}});
  j["handoff_ms"] = costs.handoff_ms;
  j["split_checks"] = json::array();
  for (const CostFile::SplitCheck& c : costs.split_checks)
    j["split_checks"].push_back({{"handoffs", c.handoffs},
                                 {"predicted_ms", c.predicted_ms},
                                 {"measured_ms", c.measured_ms},
                                 {"one_device_ms", c.one_device_ms},
                                 {"charged_ms", c.charged_ms}});
  if (costs.all_cores) {
    const AllCoresProfile& a = *costs.all_cores;
    j["all_cores"] = {{"device", a.device},           {"threads", a.threads},
                      {"run_ms", a.run_ms},           {"overhead_ms", a.overhead_ms},
                      {"operator_ms", a.operator_ms}};
  }
  std::map<std::string, json> operators;
  for (const auto& [key_device, ms] : costs.operator_ms) {
    json& entry = operators[key_device.first];
    entry["key"] = key_device.first;
    auto text = costs.operator_text.find(key_device.first);
    entry["operator"] = text == costs.operator_text.end() ? "" : text->second;
    entry["median_ms"][key_device.second] = ms;
  }
  j["operators"] = json::array();
  for (auto& [key, entry] : operators) j["operators"].push_back(std::move(entry));
  j["kernels"] = json::array();
  for (const CostFile::Kernel& k : costs.kernels)
    j["kernels"].push_back({{"key", k.key}, {"operators", k.operators}, {"device", k.device}, {"median_ms", k.median_ms}});
  j["copies"] = json::array();
  for (const auto& [route, cost] : costs.copies)
    j["copies"].push_back({{"source", route.first}, {"destination", route.second}, {"latency_ms", cost.latency_ms},
                           {"ms_per_byte", cost.ms_per_byte}});
  return j.dump(1) + "\n";
}

CostFile parse_cost_file(const std::string& text, const std::string& path) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) malformed(path, "not a JSON object");
  if (j.value("format", "") != "switchyard-costs")
    malformed(path, "field 'format' is not \"switchyard-costs\" (write one with `switchyard profile`)");
  if (j.value("version", 0) != CostFile::kVersion)
    malformed(path, "version " + j.value("version", json()).dump() + ", this build reads version " +
                        std::to_string(CostFile::kVersion) + " (measure it again with `switchyard profile`)");
  CostFile costs;
  try {
    costs.machine.cpu_model = j.at("machine").at("cpu_model").get<std::string>();
    costs.machine.isa = j.at("machine").at("isa").get<std::string>();
    costs.model = j.value("model", "");
    auto time = [&](const json& field, const std::string& what) {
      double value = field.get<double>();
      if (!(value >= 0)) malformed(path, what + " is negative");
      return value;
    };
    for (const json& d : j.at("devices"))
      costs.devices.push_back({d.at("name").get<std::string>(), d.at("kind").get<std::string>(), d.at("threads").get<int>(),
                               time(d.at("overhead_ms"), "devices[].overhead_ms")});
    costs.handoff_ms = time(j.at("handoff_ms"), "handoff_ms");
    if (j.contains("split_checks"))
      for (const json& c : j.at("split_checks"))
        costs.split_checks.push_back({c.at("handoffs").get<int64_t>(), time(c.at("predicted_ms"), "split_checks[].predicted_ms"),
                                      time(c.at("measured_ms"), "split_checks[].measured_ms"),
                                      time(c.at("one_device_ms"), "split_checks[].one_device_ms"),
                                      time(c.at("charged_ms"), "split_checks[].charged_ms")});
    const json& a = j.at("all_cores");
    AllCoresProfile all;
    all.device = a.at("device").get<std::string>();
    if (std::none_of(costs.devices.begin(), costs.devices.end(), [&](const ProfiledDevice& d) { return d.name == all.device; }))
      malformed(path, "all_cores.device '" + all.device + "' is none of the file's devices");
    all.threads = a.at("threads").get<int>();
    if (all.threads < 1) malformed(path, "all_cores.threads is not a positive count");
    all.run_ms = time(a.at("run_ms"), "all_cores.run_ms");
    all.overhead_ms = time(a.at("overhead_ms"), "all_cores.overhead_ms");
    for (const auto& [key, ms] : a.at("operator_ms").items())
      all.operator_ms[key] = time(ms, "all_cores.operator_ms of operator " + key);
    costs.all_cores = std::move(all);
    for (const json& op : j.at("operators")) {
      std::string key = op.at("key").get<std::string>();
      costs.operator_text[key] = op.at("operator").get<std::string>();
      for (const auto& [device, ms] : op.at("median_ms").items()) {
        double value = ms.get<double>();
        if (!(value >= 0)) malformed(path, "operator " + key + " has a negative time on " + device);
        costs.operator_ms[{key, device}] = value;
      }
    }
    if (j.contains("kernels"))
      for (const json& k : j.at("kernels"))
        costs.kernels.push_back({k.at("key").get<std::string>(), k.at("operators").get<std::string>(),
                                 k.at("device").get<std::string>(), k.at("median_ms").get<double>()});
    for (const json& c : j.at("copies")) {
      CopyCost cost{c.at("latency_ms").get<double>(), c.at("ms_per_byte").get<double>()};
      if (!(cost.latency_ms >= 0) || !(cost.ms_per_byte >= 0)) malformed(path, "a copy has a negative cost");
      costs.copies[{c.at("source").get<std::string>(), c.at("destination").get<std::string>()}] = cost;
    }
  } catch (const json::exception& e) {
    malformed(path, std::string("missing or mistyped field: ") + e.what());
  }
  return costs;
}

CostFile read_cost_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(ErrorKind::kUsage, "cannot read the cost file " + path);
  std::stringstream text;
  text << in.rdbuf();
  return parse_cost_file(text.str(), path);
}

void check_same_machine(const CostFile& costs, const MachineIdentity& here, const std::string& path) {
  std::string differs;
  if (costs.machine.cpu_model != here.cpu_model)
    differs += "\n  CPU model: measured on '" + costs.machine.cpu_model + "', this machine is '" + here.cpu_model + "'";
  if (costs.machine.isa != here.isa)
    differs += "\n  ISA: measured with '" + costs.machine.isa + "', this machine has '" + here.isa + "'";
  if (!differs.empty())
    throw Error(ErrorKind::kUsage, "cost file " + path + " was measured on another machine:" + differs +
                                       "\n  measure this one with `switchyard profile`");
}

void calibrate_to_check(CostFile* costs, const std::vector<std::string>& split_devices, double split_predicted_ms,
                        double split_measured_ms, double one_predicted_ms, double one_measured_ms) {
  if (split_predicted_ms > 0 && split_measured_ms > 0) {
    const double scale = split_measured_ms / split_predicted_ms;
    for (auto& [key_device, ms] : costs->operator_ms)
      if (std::count(split_devices.begin(), split_devices.end(), key_device.second)) ms *= scale;
    for (ProfiledDevice& d : costs->devices)
      if (std::count(split_devices.begin(), split_devices.end(), d.name)) d.overhead_ms *= scale;
  }
  if (costs->all_cores && one_predicted_ms > 0 && one_measured_ms > 0) {
    const double scale = one_measured_ms / one_predicted_ms;
    for (auto& [key, ms] : costs->all_cores->operator_ms) ms *= scale;
    costs->all_cores->overhead_ms *= scale;
    costs->all_cores->run_ms = one_measured_ms;
  }
}

}  // namespace switchyard
