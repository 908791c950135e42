// A manifest as a JSON document, in the field order docs/artifact.md shows:
// what format_manifest prints and what model.so's description is made from.
#pragma once

#include <nlohmann/json.hpp>

#include "runtime/manifest.h"

namespace switchyard {

using ordered_json = nlohmann::ordered_json;

// Every field of `manifest`, optional ones only when set (no validation).
ordered_json manifest_json(const Manifest& manifest);

}  // namespace switchyard
