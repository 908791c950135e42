// Per-device times of runs, beside the build's prediction.
#include "driver/measured_times.h"

#include <cstring>
#include <random>

#include "placement/latency_placement.h"

namespace switchyard {

DeviceTimes mean_device_times(const Manifest& manifest, const std::vector<RunStats>& runs) {
  DeviceTimes out{std::vector<double>(manifest.devices.size(), 0), std::vector<double>(manifest.devices.size(), 0)};
  const double count = double(runs.size());
  for (const RunStats& run : runs) {
    for (const KernelRecord& k : run.kernels) out.kernel_ms[size_t(k.device)] += double(k.elapsed_ns) / 1e6 / count;
    for (const CopyRecord& c : run.copies) out.copy_ms[size_t(c.dst_device)] += double(c.elapsed_ns) / 1e6 / count;
  }
  return out;
}

std::string prediction_text(const ManifestPrediction& prediction, const Manifest& manifest, const DeviceTimes* measured,
                            double measured_run_ms) {
  auto beside = [&](double ms) { return measured ? " (measured " + ms_text(ms) + ")" : std::string(); };
  std::string out = "  predicted by --objective latency: run " + ms_text(prediction.run_ms) + beside(measured_run_ms) + "\n";
  for (const ManifestPredictedDevice& d : prediction.devices) {
    size_t index = 0;
    while (index < manifest.devices.size() && manifest.devices[index].name != d.device) ++index;
    const bool shown = measured && index < manifest.devices.size();  // a valid manifest names only its own devices
    out += "    " + d.device + ": compute " + ms_text(d.compute_ms) + (shown ? beside(measured->kernel_ms[index]) : "") +
           ", copies into it " + ms_text(d.copies_ms) + (shown ? beside(measured->copy_ms[index]) : "") + "\n";
  }
  out += "  " + critical_path_text(prediction.critical_path) + "\n";
  if (!prediction.choice.empty()) out += "    " + prediction.choice + "\n";
  return out;
}

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

}  // namespace switchyard
