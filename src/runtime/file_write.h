// Writing a whole file so that a failure says why and leaves nothing behind:
// a full disk reads "No space left on device" with the file's path, not a
// bare "cannot write" or an "Input/output error" naming no file.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace switchyard {

// Writes one file piece by piece. Any failure (open, write, close) throws
// RuntimeError "cannot write PATH: REASON" and removes the partial file; so
// does destruction before finish().
class FileWriter {
 public:
  explicit FileWriter(std::string path);
  FileWriter(const FileWriter&) = delete;
  FileWriter& operator=(const FileWriter&) = delete;
  ~FileWriter();

  void write(const void* data, size_t size);
  void write_zeros(size_t count);
  // Flushes and closes; the file is complete once this returns.
  void finish();

 private:
  [[noreturn]] void fail(int error);
  void remove_partial();

  std::string path_;
  int fd_ = -1;
  bool regular_ = false;
};

// `bytes` as the whole of the file at `path`, through FileWriter.
void write_whole_file(const std::string& path, std::string_view bytes);

}  // namespace switchyard
