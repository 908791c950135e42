// What runs of an artifact measured per device, set beside what the build
// predicted (`--objective latency` records its prediction in the manifest):
// for `run --profile` and `inspect ART --measure N`.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "runtime/artifact.h"
#include "runtime/manifest.h"
#include "runtime/ndarray.h"

namespace switchyard {

// Per manifest device, the mean time per run of its kernels and of the
// copies into it.
struct DeviceTimes {
  std::vector<double> kernel_ms, copy_ms;
};
DeviceTimes mean_device_times(const Manifest& manifest, const std::vector<RunStats>& runs);

// "predicted by --objective latency: run 0.191 ms (measured 0.205 ms)\n
//    cpu:0: compute 0.186 ms (measured 0.190 ms), copies into it 0.000 ms (measured 0.000 ms)\n ...
//    critical path: ...\n    one device with every core: ...\n". Without
// `measured` (nullptr) the predictions alone.
std::string prediction_text(const ManifestPrediction& prediction, const Manifest& manifest, const DeviceTimes* measured,
                            double measured_run_ms);

// Inputs of the manifest's shapes: floats from a fixed seed, other types zero.
std::map<std::string, NDArray> made_up_inputs(const Manifest& manifest);

}  // namespace switchyard
