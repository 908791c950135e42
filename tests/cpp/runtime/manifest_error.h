// What parse_manifest says of a JSON document, for the manifest tests.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "runtime/manifest.h"
#include "runtime/runtime_error.h"

namespace switchyard::testing {

// The error parsing `document` raises, or "(no error)".
inline std::string manifest_parse_error(const nlohmann::json& document) {
  try {
    parse_manifest(document.dump());
  } catch (const RuntimeError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace switchyard::testing
