// A tiny model written by hand against model_abi.h, and the artifact writer
// for it, so runtime tests need no compiler. It shows the shape of what the
// code generator produces:
//
//   kernel 0 "fused_relu_add" on cpu:0:  t = relu(x) + w       (t in arena 0, on cpu:0)
//   copy 0 cpu:0 -> cpu:1:                t' = t               (t' in arena 1, on cpu:1)
//   kernel 1 "multiply" on cpu:1:         y = t' * s           (s broadcast along rows)
//
// x: float32 (kRows, kCols) input on cpu:0; w: float32 (kRows, kCols) weight
// on cpu:0; s: float32 (kCols) weight on cpu:1; y: float32 (kRows, kCols)
// output on cpu:1.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/manifest.h"
#include "runtime/ndarray.h"

namespace switchyard::testing {

constexpr int64_t kHandModelRows = 8;
constexpr int64_t kHandModelCols = 16;
constexpr uint64_t kHandModelTensorBytes = kHandModelRows * kHandModelCols * sizeof(float);

// The model's C++ source, describing itself as built for `manifest` (whose
// weights hash must be set, as hand_model_manifest() sets it). Macros select
// broken variants for error tests:
// HAND_MODEL_ABI_VERSION (what sy_model_abi_version returns),
// HAND_MODEL_MULTIPLY_DEVICE (where kernel 1 runs its loop),
// HAND_MODEL_RUN_STATUS (what sy_model_run returns),
// HAND_MODEL_WITHOUT_DESCRIPTION (no sy_model_description, as before ABI 3),
// HAND_MODEL_QUEUES (also the two devices' steps as queues that run at once,
// sy_model_run_queue and sy_model_schedule), HAND_MODEL_SIGNALLED_EVENT
// (the event cpu:0's queue signals; 0, the one cpu:1's waits for).
std::string hand_model_source(const Manifest& manifest);

// Compiles C++ `source` into the shared library `so_path` with the system
// compiler (c++ -O2 -shared -fPIC -I<repo>/include `extra_flags`). Throws
// std::runtime_error with the compiler's output on failure.
void compile_model(const std::string& source, const std::string& so_path, const std::string& extra_flags = "");

// The manifest of the hand model, weights laid out by layout_weights, with
// the hash of hand_model_weights(); model.so's hash is left for write_artifact.
Manifest hand_model_manifest();
// weights.bin for `manifest`: w[i] = 0.25 * (i % 7) - 0.5, s[j] = 1 + j / 8.
std::vector<uint8_t> hand_model_weights(const Manifest& manifest);
// An input with a mix of signs, varied by `seed`.
NDArray hand_model_input(int seed);
// y computed directly in the test.
NDArray hand_model_reference(const NDArray& x);

// Writes an artifact directory: model.so (copied from `so_path`), weights.bin
// and manifest.json with both hashes filled in. Replaces `dir`.
void write_artifact(const std::string& dir, const std::string& so_path, Manifest manifest,
                    const std::vector<uint8_t>& weights_bin);

// A fresh scratch directory under the build tree, unique to this process.
std::string scratch_dir(const std::string& name);

}  // namespace switchyard::testing
