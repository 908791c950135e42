// PrimitiveSpec as manifest JSON ("primitives" entries), read strictly:
// every field typed, every algorithm one this runtime knows, every count and
// index within bounds, errors naming the field's path.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "runtime/json_fields.h"
#include "runtime/primitive_spec.h"

namespace switchyard {

PrimitiveSpec read_primitive_spec(json_fields::ObjectReader& reader);
nlohmann::ordered_json primitive_spec_json(const PrimitiveSpec& spec);
// Compact JSON text: a primitive's identity in kernel names and cache keys.
std::string primitive_spec_text(const PrimitiveSpec& spec);

}  // namespace switchyard
