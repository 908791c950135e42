// What model.so says it was built for, and the check that a manifest agrees.
//
// The AOT code generator embeds model_description(manifest) in model.so
// (sy_model_description in include/switchyard/model_abi.h). The runtime loads
// an artifact only when its manifest matches that text field by field, so no
// field of manifest.json is free: an edited one (an arena shrunk, an output
// reshaped, two weights' names swapped) is refused, naming the field, before
// model.so runs on it. weights.bin's checksum is part of the description,
// so weights.bin cannot be swapped for another together with that field;
// model.so's own hash, the one field left out (it cannot be known before
// model.so is built), is checked against model.so's bytes before it is opened.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "runtime/manifest.h"

namespace switchyard {

// The longest description the runtime reads; a real one is a few hundred
// bytes per kernel, so this is far beyond any model yet far below memory.
constexpr size_t kMaxModelDescriptionBytes = size_t(64) << 20;

// Compact JSON of `manifest` without hashes["model.so"]; its format_version
// versions the description too.
std::string model_description(const Manifest& manifest);

// Throws RuntimeError naming the first field where `manifest` differs from
// `description`, e.g. "m/manifest.json: outputs[0].shape is [8,9] but
// m/model.so was built for [72]", or saying that the description is not JSON.
void check_manifest_matches_model(const Manifest& manifest, std::string_view description,
                                  const std::string& manifest_path, const std::string& model_path);

}  // namespace switchyard
