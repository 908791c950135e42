// Strict reading of JSON objects for the artifact's files: every field
// typed and present, unknown fields rejected, each error naming the file and
// the field's JSON path ("manifest.json: kernels[3].device: ...").
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "runtime/dtype.h"
#include "runtime/runtime_error.h"

namespace switchyard::json_fields {

using json = nlohmann::json;

[[noreturn]] inline void fail(const std::string& source, const std::string& path, const std::string& message) {
  throw RuntimeError(source + ": " + (path.empty() ? "" : path + ": ") + message);
}

inline std::string member_path(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}
inline std::string element_path(const std::string& path, size_t index) { return path + "[" + std::to_string(index) + "]"; }

// A short rendering of an unexpected value for messages. Arrays and objects
// are described by their size, never serialised: a deeply nested value
// would overflow the stack and a huge one the message.
inline std::string describe(const json& value) {
  if (value.is_array() || value.is_object())
    return std::string(value.type_name()) + " of " + std::to_string(value.size()) +
           (value.is_array() ? " elements" : " fields");
  std::string text = value.dump();
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return std::string(value.type_name()) + " " + text;
}

// Reads one JSON object field by field, then rejects any field not read.
class ObjectReader {
 public:
  ObjectReader(const json& object, std::string path, const std::string& source)
      : object_(object), path_(std::move(path)), source_(source) {
    if (!object_.is_object())
      fail(source_, path_.empty() ? "the top level" : path_, "expected an object, got " + describe(object_));
  }

  const std::string& source() const { return source_; }
  std::string path(const char* key) const { return member_path(path_, key); }

  const json* optional(const char* key) {
    read_.insert(key);
    auto it = object_.find(key);
    return it == object_.end() ? nullptr : &*it;
  }

  const json& required(const char* key) {
    const json* value = optional(key);
    if (!value) fail(source_, path(key), "missing field");
    return *value;
  }

  std::string string(const char* key) {
    const json& value = required(key);
    if (!value.is_string()) fail(source_, path(key), "expected a string, got " + describe(value));
    return value.get<std::string>();
  }

  std::string nonempty_string(const char* key) {
    std::string text = string(key);
    if (text.empty()) fail(source_, path(key), "must not be empty");
    return text;
  }

  bool boolean(const char* key) {
    const json& value = required(key);
    if (!value.is_boolean()) fail(source_, path(key), "expected true or false, got " + describe(value));
    return value.get<bool>();
  }

  int64_t integer(const char* key, int64_t min, int64_t max) {
    return read_integer(required(key), path(key), min, max);
  }

  int64_t read_integer(const json& value, const std::string& at, int64_t min, int64_t max) const {
    if (!value.is_number_integer()) fail(source_, at, "expected an integer, got " + describe(value));
    if (value.is_number_unsigned() && value.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()))
      fail(source_, at, "integer out of range");
    int64_t number = value.get<int64_t>();
    if (number < min || number > max)
      fail(source_, at,
           "expected an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "], got " +
               std::to_string(number));
    return number;
  }

  // A finite number >= 0 (a time in milliseconds).
  double nonnegative_number(const char* key) {
    const json& value = required(key);
    if (!value.is_number() || !std::isfinite(value.get<double>()) || value.get<double>() < 0)
      fail(source_, path(key), "expected a finite number >= 0, got " + describe(value));
    return value.get<double>();
  }

  uint64_t byte_count(const char* key) { return uint64_t(integer(key, 0, std::numeric_limits<int64_t>::max())); }

  int device_index(const char* key) { return int(integer(key, 0, std::numeric_limits<int>::max())); }

  DType dtype(const char* key) {
    std::string name = string(key);
    std::optional<DType> parsed = parse_dtype(name);
    if (!parsed) fail(source_, path(key), "unknown dtype '" + name + "'");
    return *parsed;
  }

  std::vector<int64_t> shape(const char* key) {
    const json& value = required(key);
    if (!value.is_array()) fail(source_, path(key), "expected an array of dimensions, got " + describe(value));
    std::vector<int64_t> dims;
    for (size_t i = 0; i < value.size(); ++i)
      dims.push_back(read_integer(value[i], element_path(path(key), i), 0, std::numeric_limits<int64_t>::max()));
    return dims;
  }

  const json& array(const char* key) {
    const json& value = required(key);
    if (!value.is_array()) fail(source_, path(key), "expected an array, got " + describe(value));
    return value;
  }

  void finish() const {
    for (auto it = object_.begin(); it != object_.end(); ++it)
      if (!read_.count(it.key())) fail(source_, path(it.key().c_str()), "unknown field");
  }

 private:
  const json& object_;
  std::string path_;
  const std::string& source_;
  std::set<std::string> read_;
};

template <typename T, typename ReadOne>
std::vector<T> read_list(ObjectReader& parent, const char* key, ReadOne read_one) {
  const json& list = parent.array(key);
  std::vector<T> items;
  for (size_t i = 0; i < list.size(); ++i) {
    ObjectReader reader(list[i], element_path(parent.path(key), i), parent.source());
    items.push_back(read_one(reader));
    reader.finish();
  }
  return items;
}

}  // namespace switchyard::json_fields
