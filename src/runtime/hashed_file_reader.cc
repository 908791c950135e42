#include "runtime/hashed_file_reader.h"

#include <algorithm>
#include <vector>

#include "runtime/runtime_error.h"

namespace switchyard {

namespace {
// Hashed while still in the cache it was just read into.
constexpr uint64_t kPiece = uint64_t(1) << 20;
}  // namespace

HashedFileReader::HashedFileReader(const std::string& path)
    : path_(path), file_(std::fopen(path.c_str(), "rb"), &std::fclose) {
  if (!file_) throw RuntimeError("cannot open " + path);
}

void HashedFileReader::read(uint64_t begin, uint64_t end, void* destination) {
  hash_until(begin);
  auto* out = static_cast<unsigned char*>(destination);
  while (position_ < end) {
    size_t piece = size_t(std::min(kPiece, end - position_));
    if (std::fread(out, 1, piece, file_.get()) != piece)
      throw RuntimeError("cannot read bytes [" + std::to_string(begin) + ", " + std::to_string(end) + ") of " + path_);
    digest_.update(out, piece);
    out += piece;
    position_ += piece;
  }
}

void HashedFileReader::hash_until(uint64_t position) {
  if (position < position_) throw RuntimeError(path_ + ": ranges read out of order");
  std::vector<unsigned char> skipped(size_t(std::min(kPiece, position - position_)));
  while (position_ < position) {
    size_t piece = size_t(std::min<uint64_t>(skipped.size(), position - position_));
    if (std::fread(skipped.data(), 1, piece, file_.get()) != piece)
      throw RuntimeError("cannot read " + path_ + " up to byte " + std::to_string(position));
    digest_.update(skipped.data(), piece);
    position_ += piece;
  }
}

std::string HashedFileReader::finish(uint64_t size) {
  hash_until(size);
  if (std::fgetc(file_.get()) != EOF) throw RuntimeError(path_ + " grew while it was read");
  return digest_.hex();
}

}  // namespace switchyard
