// ONNX TensorProto to NDArray (see onnx_tensor.h).
#include "frontend/onnx/onnx_tensor.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <limits>
#include <optional>
#include <set>

#include "runtime/clipped_text.h"
#include "runtime/regular_file.h"
#include "runtime/runtime_error.h"
#include "runtime/tensor_size.h"
#include "support/error.h"

namespace switchyard {

namespace {

using sy_onnx::TensorProto;

[[noreturn]] void tensor_fail(const TensorProto& t, const std::string& message) {
  throw Error(ErrorKind::kParse, "tensor '" + clipped_text(t.name()) + "': " + message);
}

// The array of a tensor whose data is present: one larger than memory is
// refused naming the tensor (NDArray's own message names only its shape).
NDArray allocate(const TensorProto& t, DType dtype, const std::vector<int64_t>& shape) {
  try {
    return NDArray(dtype, shape);
  } catch (const RuntimeError& e) {
    tensor_fail(t, e.what());
  }
}

// The number of elements, refusing negative dims and counts that overflow.
int64_t element_count(const TensorProto& t) {
  int64_t count = 1;
  for (int64_t d : t.dims()) {
    if (d < 0) tensor_fail(t, "negative dimension " + std::to_string(d));
    if (d != 0 && count > std::numeric_limits<int64_t>::max() / d) tensor_fail(t, "element count overflows int64");
    count *= d;
  }
  return count;
}

// A relative path inside the model's directory, never above it.
std::filesystem::path external_path(const TensorProto& t, const std::string& location, const std::string& model_dir) {
  std::filesystem::path rel(location);
  std::string quoted = "'" + clipped_text(location) + "'";
  if (location.empty()) tensor_fail(t, "external data without a location");
  // The system would read the path only up to its first NUL byte.
  if (location.find('\0') != std::string::npos)
    tensor_fail(t, "external data location " + quoted + " holds a NUL byte (refused)");
  if (rel.is_absolute()) tensor_fail(t, "external data location " + quoted + " is an absolute path (refused)");
  for (const auto& part : rel)
    if (part == "..") tensor_fail(t, "external data location " + quoted + " leaves the model's directory (refused)");
  return std::filesystem::path(model_dir) / rel;
}

// A byte count of external data as ONNX's loader reads it: decimal digits
// only (no sign, space or "0x": "0x40" would otherwise read as 0 and the
// importer take the wrong bytes), within int64.
int64_t external_number(const TensorProto& t, const std::string& key, const std::string& value) {
  std::string quoted = "'" + clipped_text(value) + "'";
  bool digits = !value.empty() && std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (!digits) tensor_fail(t, "external data " + key + " " + quoted + " is not a decimal number of bytes");
  int64_t number = 0;
  auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), number);
  if (error != std::errc() || end != value.data() + value.size())
    tensor_fail(t, "external data " + key + " " + quoted + " is out of range (at most " +
                       std::to_string(std::numeric_limits<int64_t>::max()) + ")");
  return number;
}

NDArray read_external(const TensorProto& t, const std::string& model_dir, DType dtype,
                      const std::vector<int64_t>& shape) {
  std::string location;
  std::optional<int64_t> offset, length;
  std::set<std::string> seen;
  for (const auto& entry : t.external_data()) {
    const std::string& key = entry.key();
    if (key != "location" && key != "offset" && key != "length") continue;  // "checksum", ...: not ours to check
    if (!seen.insert(key).second) tensor_fail(t, "external data " + key + " is given twice");
    if (key == "location") location = entry.value();
    else if (key == "offset") offset = external_number(t, key, entry.value());
    else length = external_number(t, key, entry.value());
  }
  std::filesystem::path path = external_path(t, location, model_dir);
  std::optional<int64_t> bytes = checked_nbytes(shape, dtype);
  if (!bytes) tensor_fail(t, "size in bytes overflows int64");
  int64_t expected = *bytes;
  if (length && *length != expected)
    tensor_fail(t, "external data length " + std::to_string(*length) + " does not match its dims (" +
                       std::to_string(expected) + " bytes)");
  std::optional<RegularFile> file;
  try {
    file.emplace(path.string());
    // The span must lie inside the file, checked before the array is allocated.
    int64_t file_size = int64_t(file->size()), begin = offset.value_or(0);
    if (begin > file_size || file_size - begin < expected)
      tensor_fail(t, "external data file " + clipped_text(path.string()) + " is too short for " +
                         std::to_string(expected) + " bytes at offset " + std::to_string(begin) + " (it has " +
                         std::to_string(file_size) + ")");
    NDArray out = allocate(t, dtype, shape);
    file->read_at(out.data(), size_t(expected), uint64_t(begin));
    return out;
  } catch (const RuntimeError& e) {
    tensor_fail(t, std::string("external data ") + e.what());
  }
}

// Checks that a typed repeated field holds `count` values.
template <typename Field>
void check_typed(const TensorProto& t, const Field& field, int64_t count, const char* field_name) {
  if (int64_t(field.size()) != count)
    tensor_fail(t, std::string(field_name) + " holds " + std::to_string(field.size()) + " values for " +
                       std::to_string(count) + " elements");
}

// Copies a checked typed repeated field, converting each element with `store`.
template <typename Field, typename Store>
void copy_typed(const Field& field, int64_t count, Store store) {
  for (int64_t i = 0; i < count; ++i) store(i, field.Get(int(i)));
}

}  // namespace

std::optional<DType> dtype_from_onnx(int onnx_type) {
  switch (onnx_type) {
    case TensorProto::FLOAT: return DType::kFloat32;
    case TensorProto::FLOAT16: return DType::kFloat16;
    case TensorProto::BFLOAT16: return DType::kBFloat16;
    case TensorProto::INT8: return DType::kInt8;
    case TensorProto::INT32: return DType::kInt32;
    case TensorProto::INT64: return DType::kInt64;
    case TensorProto::UINT8: return DType::kUInt8;
    case TensorProto::BOOL: return DType::kBool;
    case TensorProto::DOUBLE: return DType::kFloat64;
    case TensorProto::INT16: return DType::kInt16;
    case TensorProto::UINT16: return DType::kUInt16;
    case TensorProto::UINT32: return DType::kUInt32;
    case TensorProto::UINT64: return DType::kUInt64;
    default: return std::nullopt;
  }
}

std::string onnx_type_name(int onnx_type) {
  if (TensorProto::DataType_IsValid(onnx_type))
    return TensorProto::DataType_Name(static_cast<TensorProto::DataType>(onnx_type));
  // Types newer than the schema Switchyard is built with (ONNX 1.14 to 1.16).
  static const char* const kNewer[] = {"FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ",
                                        "UINT4", "INT4", "FLOAT4E2M1"};
  if (onnx_type >= 17 && onnx_type < 17 + int(std::size(kNewer))) return kNewer[onnx_type - 17];
  return "type " + std::to_string(onnx_type);
}

NDArray tensor_from_onnx(const TensorProto& t, const std::string& model_dir, std::string_view raw_data,
                         std::shared_ptr<const void> raw_data_owner) {
  std::optional<DType> dtype = dtype_from_onnx(t.data_type());
  if (!dtype) tensor_fail(t, "element type " + onnx_type_name(t.data_type()) + " is not supported");
  int64_t count = element_count(t);
  std::vector<int64_t> shape(t.dims().begin(), t.dims().end());
  // Every size is checked against the data present before the array is
  // allocated: a few bytes of model never make the importer allocate more.
  if (t.data_location() == TensorProto::EXTERNAL) return read_external(t, model_dir, *dtype, shape);
  std::optional<int64_t> bytes = checked_nbytes(shape, *dtype);
  if (!bytes) tensor_fail(t, "size in bytes overflows int64");
  uint64_t nbytes = uint64_t(*bytes);
  if (t.has_raw_data()) raw_data = t.raw_data();
  if (t.has_raw_data() || !raw_data.empty()) {
    if (raw_data.size() != nbytes)
      tensor_fail(t, "raw_data holds " + std::to_string(raw_data.size()) + " bytes for " + std::to_string(nbytes) +
                         " expected");
    if (raw_data_owner && !t.has_raw_data())
      return NDArray::deferred_copy(*dtype, shape, raw_data.data(), std::move(raw_data_owner));
    NDArray out = allocate(t, *dtype, shape);
    if (nbytes > 0) std::memcpy(out.data(), raw_data.data(), nbytes);
    return out;
  }
  switch (*dtype) {
    case DType::kFloat32: check_typed(t, t.float_data(), count, "float_data"); break;
    case DType::kInt64: check_typed(t, t.int64_data(), count, "int64_data"); break;
    case DType::kFloat64: check_typed(t, t.double_data(), count, "double_data"); break;
    case DType::kUInt32: case DType::kUInt64: check_typed(t, t.uint64_data(), count, "uint64_data"); break;
    default: check_typed(t, t.int32_data(), count, "int32_data"); break;  // the 16-bit floats' bits too
  }
  NDArray out = allocate(t, *dtype, shape);
  switch (*dtype) {
    case DType::kFloat32:
      copy_typed(t.float_data(), count, [&](int64_t i, float v) { out.as<float>()[i] = v; });
      break;
    case DType::kInt64:
      copy_typed(t.int64_data(), count, [&](int64_t i, int64_t v) { out.as<int64_t>()[i] = v; });
      break;
    case DType::kFloat16:
    case DType::kBFloat16:  // the 16 bits of each value, held in int32_data
      copy_typed(t.int32_data(), count, [&](int64_t i, int32_t v) { out.as<uint16_t>()[i] = uint16_t(v); });
      break;
    case DType::kFloat64:
      copy_typed(t.double_data(), count, [&](int64_t i, double v) { out.as<double>()[i] = v; });
      break;
    case DType::kUInt32:
    case DType::kUInt64:  // one value per uint64_data entry; uint32's may hold more than the type does
      copy_typed(t.uint64_data(), count, [&](int64_t i, uint64_t v) {
        if (*dtype == DType::kUInt32 && v > UINT32_MAX)
          tensor_fail(t, "uint64_data holds " + std::to_string(v) + " at element " + std::to_string(i) +
                             ", outside the range of UINT32");
        if (*dtype == DType::kUInt32) out.as<uint32_t>()[i] = uint32_t(v);
        else out.as<uint64_t>()[i] = v;
      });
      break;
    case DType::kInt8:
    case DType::kUInt8:
    case DType::kInt16:
    case DType::kUInt16:  // one value per int32_data entry, which may hold more than the type does
      copy_typed(t.int32_data(), count, [&](int64_t i, int32_t v) {
        int32_t low = 0, high = 0;
        switch (*dtype) {
          case DType::kInt8: low = INT8_MIN, high = INT8_MAX; break;
          case DType::kInt16: low = INT16_MIN, high = INT16_MAX; break;
          case DType::kUInt16: high = UINT16_MAX; break;
          default: high = UINT8_MAX; break;
        }
        if (v < low || v > high)
          tensor_fail(t, "int32_data holds " + std::to_string(v) + " at element " + std::to_string(i) +
                             ", outside the range of " + onnx_type_name(t.data_type()));
        out.set_from_double(i, v);
      });
      break;
    default:  // int32, bool: one value per int32_data entry
      copy_typed(t.int32_data(), count, [&](int64_t i, int32_t v) { out.set_from_double(i, v); });
      break;
  }
  return out;
}

}  // namespace switchyard
