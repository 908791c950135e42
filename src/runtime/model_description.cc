// model.so's description of its manifest and the field-by-field comparison
// that names the first difference.
#include "runtime/model_description.h"

#include <optional>

#include "runtime/clipped_text.h"
#include "runtime/manifest_json.h"
#include "runtime/runtime_error.h"
#include "switchyard/model_abi.h"

namespace switchyard {
namespace {

using json = nlohmann::json;

json description_json(const Manifest& manifest) {
  // json's objects are sorted, so key order is irrelevant to the comparison.
  json document(manifest_json(manifest));
  // All but model.so's own hash, which cannot be inside model.so: the loader
  // checks it against model.so's bytes before it opens the library.
  document["hashes"].erase("model.so");
  return document;
}

// Where the two differ and how each side reads, e.g. {"arenas[0].bytes",
// "is 256", "for 512"}.
struct Difference {
  std::string path;
  std::string in_manifest;
  std::string in_model;
};

std::string value_text(const json& value) { return clipped_text(value.dump(), 80); }

std::string entries(size_t n) { return std::to_string(n) + (n == 1 ? " entry" : " entries"); }

// A list whose elements are records (devices, kernels, ...) is compared entry
// by entry; a list of numbers or names (a shape) is one value.
bool is_list_of_records(const json& value) {
  return value.is_array() && !value.empty() && (value.front().is_object() || value.front().is_array());
}

std::optional<Difference> first_difference(const json* in_manifest, const json* in_model, const std::string& path) {
  if (in_manifest && in_model && in_manifest->is_object() && in_model->is_object()) {
    // Both objects' keys merged in sorted order, so the first difference is deterministic.
    auto a = in_manifest->begin(), b = in_model->begin();
    while (a != in_manifest->end() || b != in_model->end()) {
      bool take_a = b == in_model->end() || (a != in_manifest->end() && a.key() <= b.key());
      bool take_b = a == in_manifest->end() || (b != in_model->end() && b.key() <= a.key());
      const std::string& key = take_a ? a.key() : b.key();
      std::string at = path.empty() ? key : path + "." + key;
      if (auto d = first_difference(take_a ? &*a : nullptr, take_b ? &*b : nullptr, at)) return d;
      if (take_a) ++a;
      if (take_b) ++b;
    }
    return std::nullopt;
  }
  if (in_manifest && in_model && (is_list_of_records(*in_manifest) || is_list_of_records(*in_model)) &&
      in_manifest->is_array() && in_model->is_array()) {
    if (in_manifest->size() != in_model->size())
      return Difference{path, "has " + entries(in_manifest->size()), "for " + entries(in_model->size())};
    for (size_t i = 0; i < in_manifest->size(); ++i)
      if (auto d = first_difference(&(*in_manifest)[i], &(*in_model)[i], path + "[" + std::to_string(i) + "]"))
        return d;
    return std::nullopt;
  }
  if (in_manifest && in_model && *in_manifest == *in_model) return std::nullopt;
  return Difference{path, in_manifest ? "is " + value_text(*in_manifest) : "is missing",
                    in_model ? "for " + value_text(*in_model) : "without it"};
}

}  // namespace

// ASCII only (ensure_ascii), so the code generator can quote it in any source.
std::string model_description(const Manifest& manifest) {
  return description_json(manifest).dump(-1, ' ', /*ensure_ascii=*/true);
}

void check_manifest_matches_model(const Manifest& manifest, std::string_view description,
                                  const std::string& manifest_path, const std::string& model_path) {
  json built_for;
  try {
    built_for = json::parse(description);
  } catch (const json::exception& e) {
    throw RuntimeError(model_path + ": its description (" SY_MODEL_DESCRIPTION_SYMBOL ") is not valid JSON: " +
                       e.what());
  }
  if (!built_for.is_object())
    throw RuntimeError(model_path + ": its description (" SY_MODEL_DESCRIPTION_SYMBOL ") is not a JSON object");
  json expected = description_json(manifest);
  if (std::optional<Difference> d = first_difference(&expected, &built_for, ""))
    throw RuntimeError(manifest_path + ": " + d->path + " " + d->in_manifest + " but " + model_path +
                       " was built " + d->in_model);
}

}  // namespace switchyard
