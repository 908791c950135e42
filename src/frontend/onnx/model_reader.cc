// ONNX file reading with the weights left in place (see model_reader.h).
#include "frontend/onnx/model_reader.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <optional>

#include "support/error.h"

namespace switchyard {

class MappedFile {
 public:
  MappedFile(const void* data, size_t size) : data_(data), size_(size) {}
  ~MappedFile() {
    if (size_ > 0) munmap(const_cast<void*>(data_), size_);
  }
  std::string_view bytes() const { return {static_cast<const char*>(data_), size_}; }

 private:
  const void* data_;
  size_t size_;
};

namespace {

// Field numbers in onnx.proto: ModelProto.graph, GraphProto.initializer,
// TensorProto.raw_data.
constexpr uint32_t kModelGraph = 7;
constexpr uint32_t kGraphInitializer = 5;
constexpr uint32_t kTensorRawData = 9;
constexpr uint32_t kLengthDelimited = 2;

// A minimal protobuf wire-format cursor; any malformation returns nullopt
// and the caller falls back to protobuf's own parser, which reports it.
class WireCursor {
 public:
  explicit WireCursor(std::string_view bytes) : bytes_(bytes) {}
  bool done() const { return at_ == bytes_.size(); }
  size_t position() const { return at_; }

  std::optional<uint64_t> varint() {
    uint64_t value = 0;
    for (int shift = 0; shift < 64 && at_ < bytes_.size(); shift += 7) {
      uint8_t b = uint8_t(bytes_[at_++]);
      value |= uint64_t(b & 0x7f) << shift;
      if (!(b & 0x80)) return value;
    }
    return std::nullopt;
  }

  // Skips the value of a field of `wire_type`; for length-delimited fields
  // sets `payload` to the bytes. False when malformed.
  bool skip_value(uint32_t wire_type, std::string_view* payload = nullptr) {
    switch (wire_type) {
      case 0: return varint().has_value();
      case 1: return advance(8);
      case 5: return advance(4);
      case kLengthDelimited: {
        std::optional<uint64_t> length = varint();
        if (!length || *length > bytes_.size() - at_) return false;
        if (payload) *payload = bytes_.substr(at_, size_t(*length));
        at_ += size_t(*length);
        return true;
      }
      default: return false;  // groups: not used by ONNX
    }
  }

 private:
  bool advance(size_t n) {
    if (n > bytes_.size() - at_) return false;
    at_ += n;
    return true;
  }
  std::string_view bytes_;
  size_t at_ = 0;
};

void append_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(char(v | 0x80));
    v >>= 7;
  }
  out.push_back(char(v));
}

// Copies `message` field by field into `out`; each length-delimited field
// number `nested` is rewritten by `rewrite` (which appends its new payload).
// False when the bytes are malformed.
template <typename Rewrite>
bool rewrite_message(std::string_view message, uint32_t nested, std::string& out, Rewrite rewrite) {
  WireCursor cursor(message);
  while (!cursor.done()) {
    size_t start = cursor.position();
    std::optional<uint64_t> tag = cursor.varint();
    if (!tag) return false;
    uint32_t field = uint32_t(*tag >> 3), wire_type = uint32_t(*tag & 7);
    std::string_view payload;
    if (!cursor.skip_value(wire_type, &payload)) return false;
    if (field == nested && wire_type == kLengthDelimited) {
      std::string rewritten;
      if (!rewrite(payload, rewritten)) return false;
      append_varint(out, *tag);
      append_varint(out, rewritten.size());
      out += rewritten;
    } else {
      out.append(message.substr(start, cursor.position() - start));
    }
  }
  return true;
}

// The model's bytes without the initializers' raw_data, and those in order.
bool strip_initializer_data(std::string_view model, std::string& skeleton, std::vector<std::string_view>& raw) {
  return rewrite_message(model, kModelGraph, skeleton, [&](std::string_view graph, std::string& graph_out) {
    return rewrite_message(graph, kGraphInitializer, graph_out, [&](std::string_view tensor, std::string& tensor_out) {
      std::string_view data;
      bool ok = rewrite_message(tensor, kTensorRawData, tensor_out, [&](std::string_view bytes, std::string&) {
        data = bytes;
        return true;
      });
      raw.push_back(data);  // the empty raw_data left behind is cleared after parsing
      return ok;
    });
  });
}

}  // namespace

OnnxModelFile read_onnx_bytes(std::string_view bytes, const std::string& source) {
  OnnxModelFile file;
  std::string skeleton;
  std::vector<std::string_view> raw;
  bool stripped = strip_initializer_data(bytes, skeleton, raw);
  bool parsed = stripped ? file.model.ParseFromString(skeleton)
                         : file.model.ParseFromArray(bytes.data(), int(std::min<size_t>(bytes.size(), INT32_MAX)));
  if (!parsed || (!stripped && bytes.size() > size_t(INT32_MAX)))
    throw Error(ErrorKind::kParse,
                source + ": not an ONNX model (the file does not parse as an ONNX protobuf; is it truncated?)");
  if (stripped && raw.size() == size_t(file.model.graph().initializer_size())) {
    for (int i = 0; i < file.model.graph().initializer_size(); ++i)
      file.model.mutable_graph()->mutable_initializer(i)->clear_raw_data();
    file.initializer_raw_data = std::move(raw);
  }
  return file;
}

OnnxModelFile read_onnx_file(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st {};
  if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    if (fd >= 0) close(fd);
    throw Error(ErrorKind::kUsage, "cannot read " + path + ": " + (fd < 0 ? std::strerror(errno) : "not a regular file"));
  }
  size_t size = size_t(st.st_size);
  void* data = size == 0 ? nullptr : mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
  close(fd);
  if (data == MAP_FAILED) throw Error(ErrorKind::kUsage, "cannot map " + path + ": " + std::strerror(errno));
  auto mapping = std::make_shared<const MappedFile>(data, size);
  OnnxModelFile file = read_onnx_bytes(mapping->bytes(), path);
  file.mapping = mapping;
  return file;
}

}  // namespace switchyard
