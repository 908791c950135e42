// NumPy .npy reading and writing (see npy.h for the dtype mapping).
#include "runtime/npy.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <optional>
#include <stdexcept>

#include "runtime/clipped_text.h"
#include "runtime/file_write.h"
#include "runtime/regular_file.h"
#include "runtime/runtime_error.h"
#include "runtime/tensor_size.h"

namespace switchyard {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;

[[noreturn]] void npy_fail(const std::string& path, const std::string& reason) {
  throw std::runtime_error(path + ": " + reason);
}

// The NumPy type string (without byte order) of each dtype.
const char* type_code(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return "f4";
    case DType::kFloat16: return "f2";
    case DType::kBFloat16: return "u2";  // raw bits; NumPy has no bfloat16
    case DType::kInt8: return "i1";
    case DType::kInt32: return "i4";
    case DType::kInt64: return "i8";
    case DType::kUInt8: return "u1";
    case DType::kBool: return "b1";
    case DType::kFloat64: return "f8";
    case DType::kInt16: return "i2";
    case DType::kUInt16: return "u2";
    case DType::kUInt32: return "u4";
    case DType::kUInt64: return "u8";
  }
  return "";
}

std::string descr_of(DType dtype) {
  return std::string(dtype_bytes(dtype) == 1 ? "|" : "<") + type_code(dtype);
}

std::optional<DType> dtype_of_descr(const std::string& descr, const std::string& path) {
  if (descr.size() < 2) return std::nullopt;
  char order = descr[0];
  std::string code = descr.substr(1);
  std::optional<DType> found;
  for (DType t : kAllDTypes)  // '<u2' is uint16: bfloat16's raw bits read back as uint16
    if (code == type_code(t) && t != DType::kBFloat16) found = t;
  if (code == "?") found = DType::kBool;
  if (!found) return std::nullopt;
  bool single_byte = dtype_bytes(*found) == 1;
  if (order == '>' && !single_byte) npy_fail(path, "big-endian data ('" + descr + "') is not supported; save it little-endian");
  if (order != '<' && order != '|' && order != '=' && !(single_byte && order == '>')) return std::nullopt;
  return found;
}

// A value of the header dictionary: a string, a bool, or a tuple of ints.
struct HeaderValue {
  enum class Kind { kString, kBool, kInts } kind = Kind::kString;
  std::string text;
  bool flag = false;
  std::vector<int64_t> ints;
};

// A parser of the Python literal the header holds, e.g.
// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
class HeaderParser {
 public:
  HeaderParser(const std::string& text, const std::string& path) : text_(text), path_(path) {}

  std::vector<std::pair<std::string, HeaderValue>> parse_dict() {
    std::vector<std::pair<std::string, HeaderValue>> entries;
    expect('{');
    while (!peek_is('}')) {
      HeaderValue key = parse_value();
      if (key.kind != HeaderValue::Kind::kString) fail("a dictionary key is not a string");
      expect(':');
      entries.emplace_back(key.text, parse_value());
      if (!peek_is('}')) expect(',');
    }
    expect('}');
    return entries;
  }

 private:
  [[noreturn]] void fail(const std::string& what) {
    npy_fail(path_, "malformed header (" + what + "): " + clipped_text(text_));
  }

  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n')) ++pos_;
  }
  bool peek_is(char c) {
    skip_space();
    return pos_ < text_.size() && text_[pos_] == c;
  }
  void expect(char c) {
    if (!peek_is(c)) fail(std::string("expected '") + c + "'");
    ++pos_;
  }
  int64_t parse_int() {
    skip_space();
    size_t start = pos_;
    int64_t value = 0;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      if (value > (std::numeric_limits<int64_t>::max() - 9) / 10) fail("a dimension is too large");
      value = value * 10 + (text_[pos_++] - '0');
    }
    if (pos_ == start) fail("expected a non-negative integer");
    if (pos_ < text_.size() && text_[pos_] == 'L') ++pos_;  // Python 2 long suffix
    return value;
  }
  HeaderValue parse_value() {
    skip_space();
    if (pos_ >= text_.size()) fail("unexpected end");
    HeaderValue v;
    char c = text_[pos_];
    if (c == '\'' || c == '"') {
      size_t end = text_.find(c, pos_ + 1);
      if (end == std::string::npos) fail("unterminated string");
      v.text = text_.substr(pos_ + 1, end - pos_ - 1);
      pos_ = end + 1;
    } else if (text_.compare(pos_, 4, "True") == 0 || text_.compare(pos_, 5, "False") == 0) {
      v.kind = HeaderValue::Kind::kBool;
      v.flag = c == 'T';
      pos_ += v.flag ? 4 : 5;
    } else if (c == '(') {
      v.kind = HeaderValue::Kind::kInts;
      ++pos_;
      while (!peek_is(')')) {
        v.ints.push_back(parse_int());
        if (!peek_is(')')) expect(',');
      }
      ++pos_;
    } else if (c == '[') {
      npy_fail(path_, "structured dtypes are not supported");
    } else {
      fail(std::string("unexpected '") + c + "'");
    }
    return v;
  }

  const std::string& text_;
  const std::string& path_;
  size_t pos_ = 0;
};

uint32_t read_le(const std::string& bytes, size_t at, size_t width) {
  uint32_t v = 0;
  for (size_t i = 0; i < width; ++i) v |= uint32_t(uint8_t(bytes[at + i])) << (8 * i);
  return v;
}

}  // namespace

NDArray read_npy(const std::string& path) {
  // Only a regular file (regular_file.h): its size is known before reading,
  // so the header can be checked against it and nothing is read past what
  // the header declares; a device or a pipe may never end (--input x=/dev/zero).
  RegularFile file(path, "inputs are read only from .npy files");
  uint64_t file_size = file.size();

  std::string prefix(size_t(std::min<uint64_t>(file_size, kMagicSize + 2 + 4)), '\0');
  file.read_at(prefix.data(), prefix.size(), 0);
  if (prefix.size() < kMagicSize || prefix.compare(0, kMagicSize, kMagic, kMagicSize) != 0)
    npy_fail(path, "not a .npy file (bad magic)");
  if (prefix.size() < kMagicSize + 4) npy_fail(path, "truncated header");
  int major = uint8_t(prefix[6]), minor = uint8_t(prefix[7]);
  size_t length_width = major == 1 ? 2 : (major == 2 || major == 3) ? 4 : 0;
  if (length_width == 0)
    npy_fail(path, "unsupported .npy format version " + std::to_string(major) + "." + std::to_string(minor));
  size_t header_start = kMagicSize + 2 + length_width;
  if (file_size < header_start) npy_fail(path, "truncated header");
  size_t header_length = read_le(prefix, kMagicSize + 2, length_width);
  if (file_size < header_start + header_length) npy_fail(path, "truncated header");
  std::string header(header_length, '\0');
  file.read_at(header.data(), header.size(), header_start);

  std::optional<std::string> descr;
  std::optional<bool> fortran_order;
  std::optional<std::vector<int64_t>> shape;
  for (auto& [key, value] : HeaderParser(header, path).parse_dict()) {
    if (key == "descr" && value.kind == HeaderValue::Kind::kString) descr = value.text;
    else if (key == "fortran_order" && value.kind == HeaderValue::Kind::kBool) fortran_order = value.flag;
    else if (key == "shape" && value.kind == HeaderValue::Kind::kInts) shape = value.ints;
    else npy_fail(path, "malformed header (unexpected entry '" + clipped_text(key) + "'): " + clipped_text(header));
  }
  if (!descr || !fortran_order || !shape)
    npy_fail(path, "malformed header (needs 'descr', 'fortran_order' and 'shape'): " + clipped_text(header));
  std::optional<DType> dtype = dtype_of_descr(*descr, path);
  if (!dtype)
    npy_fail(path, "unsupported dtype '" + clipped_text(*descr) +
                       "' (supported: '<f4', '<f2', '<u2' as bfloat16 bits, '|i1', '<i4', '<i8', '|u1', '|b1')");
  if (*fortran_order && shape->size() > 1)
    npy_fail(path, "Fortran-order arrays are not supported; save a C-order array (numpy.ascontiguousarray)");

  std::string shape_text = clipped_text(shape_to_string(*shape));
  std::optional<int64_t> nbytes = checked_nbytes(*shape, *dtype);
  if (!nbytes) npy_fail(path, "shape " + shape_text + " is too large: its size in bytes overflows int64");
  size_t data_start = header_start + header_length;
  uint64_t expected = uint64_t(*nbytes);
  uint64_t present = file_size - data_start;
  if (present < expected)
    npy_fail(path, "truncated data: shape " + shape_text + " of " + dtype_name(*dtype) + " needs " +
                       std::to_string(expected) + " bytes, the file has " + std::to_string(present));
  if (present > expected)
    npy_fail(path, "data size mismatch: shape " + shape_text + " of " + dtype_name(*dtype) + " needs " +
                       std::to_string(expected) + " bytes, the file has " + std::to_string(present));
  NDArray array;
  try {
    array = NDArray(*dtype, *shape);
  } catch (const RuntimeError& e) {
    npy_fail(path, e.what());
  }
  file.read_at(array.data(), size_t(expected), data_start);
  if (*dtype == DType::kBool)  // any nonzero byte is true; keep the canonical 0/1
    for (uint64_t i = 0; i < expected; ++i) array.as<uint8_t>()[i] = array.as<uint8_t>()[i] != 0;
  return array;
}

void write_npy(const std::string& path, const NDArray& array) {
  if (!array.defined()) npy_fail(path, "cannot write an undefined array");
  std::string shape = "(";
  for (size_t i = 0; i < array.shape().size(); ++i)
    shape += std::to_string(array.shape()[i]) + (array.shape().size() == 1 ? "," : i + 1 < array.shape().size() ? ", " : "");
  shape += ")";
  std::string header = "{'descr': '" + descr_of(array.dtype()) + "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Version 1.0 has a 2-byte header length; longer headers need 2.0. The
  // data starts on a 64-byte boundary, as NumPy writes it.
  size_t length_width = header.size() + 1 + kMagicSize + 4 + 64 < 65536 ? 2 : 4;
  size_t prefix = kMagicSize + 2 + length_width;
  size_t padded = (prefix + header.size() + 1 + 63) / 64 * 64;
  header.append(padded - prefix - header.size() - 1, ' ');
  header.push_back('\n');

  std::string out(kMagic, kMagicSize);
  out.push_back(char(length_width == 2 ? 1 : 2));
  out.push_back(0);
  for (size_t i = 0; i < length_width; ++i) out.push_back(char((header.size() >> (8 * i)) & 0xff));
  out += header;

  static std::atomic<uint64_t> counter{0};
  std::string temporary = path + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
  {
    FileWriter file(temporary);
    file.write(out.data(), out.size());
    file.write(array.data(), array.nbytes());
    file.finish();
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    int error = errno;
    std::remove(temporary.c_str());
    npy_fail(path, std::string("cannot rename the written file into place: ") + std::strerror(error));
  }
}

}  // namespace switchyard
