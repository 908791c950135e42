// Records of file digests keyed by device, inode and pattern, checked
// against the file's size and times.
#include "artifact/file_digest_memo.h"

#include <sys/stat.h>
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "artifact/file_digest.h"
#include "runtime/file_write.h"
#include "runtime/sha256.h"
#include "toolchain/verified_cache.h"

namespace switchyard {

namespace {

namespace fs = std::filesystem;

constexpr const char* kRecordHeader = "switchyard digest record 1";

struct FileIdentity {
  uint64_t device = 0, inode = 0, size = 0;
  int64_t modified_ns = 0, changed_ns = 0;
  bool operator==(const FileIdentity&) const = default;
};

int64_t nanoseconds(const timespec& t) { return int64_t(t.tv_sec) * 1000000000 + t.tv_nsec; }

std::optional<FileIdentity> identity_of(const std::string& path) {
  struct stat info {};
  if (stat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) return std::nullopt;
  return FileIdentity{uint64_t(info.st_dev), uint64_t(info.st_ino), uint64_t(info.st_size),
                      nanoseconds(info.st_mtim), nanoseconds(info.st_ctim)};
}

int64_t now_ns() {
  timespec now {};
  clock_gettime(CLOCK_REALTIME, &now);
  return nanoseconds(now);
}

// The record's file: one per inode and pattern (hard links share bytes).
std::string record_path(const std::string& memo_dir, const FileIdentity& file, std::string_view pattern) {
  std::string key = std::to_string(file.device) + " " + std::to_string(file.inode) + " " + std::string(pattern);
  return memo_dir + "/" + sha256_hex(key.data(), key.size()).substr(0, 32);
}

std::string record_text(const FileIdentity& file, const RememberedDigest& digest) {
  std::ostringstream text;
  text << kRecordHeader << "\n"
       << file.device << " " << file.inode << " " << file.size << " " << file.modified_ns << " " << file.changed_ns
       << " " << int(digest.found) << " " << digest.digest << "\n";
  return text.str();
}

// The record's digest when it describes `file` exactly.
std::optional<RememberedDigest> read_record(const std::string& path, const FileIdentity& file) {
  std::ifstream record(path);
  std::string header, line;
  if (!record || !std::getline(record, header) || header != kRecordHeader || !std::getline(record, line))
    return std::nullopt;
  std::istringstream fields(line);
  FileIdentity kept;
  int found = -1;
  RememberedDigest digest;
  fields >> kept.device >> kept.inode >> kept.size >> kept.modified_ns >> kept.changed_ns >> found >> digest.digest;
  if (!fields || !(kept == file) || (found != 0 && found != 1) || digest.digest.size() != 32) return std::nullopt;
  digest.found = found == 1;
  digest.remembered = true;
  return digest;
}

void write_record(const std::string& memo_dir, const std::string& path, const std::string& text) {
  std::error_code error;
  fs::create_directories(memo_dir, error);
  const std::string temporary = cache_temporary_name(path);
  try {
    write_whole_file(temporary, text);
    fs::rename(temporary, path, error);
  } catch (const std::exception&) {
  }
  fs::remove(temporary, error);
}

}  // namespace

RememberedDigest remembered_file_digest(const std::string& memo_dir, const std::string& path,
                                        std::string_view pattern, int64_t settled_ns) {
  const int64_t start = now_ns();
  std::optional<FileIdentity> before = identity_of(path);
  if (!before) return {};
  const std::string record = record_path(memo_dir, *before, pattern);
  if (std::optional<RememberedDigest> kept = read_record(record, *before)) return *kept;
  RememberedDigest digest;
  digest.digest = file_digest(path, pattern, &digest.found);
  // Recorded only for bytes that cannot have changed while they were read.
  const bool settled = std::max(before->modified_ns, before->changed_ns) + settled_ns < start;
  if (!digest.digest.empty() && settled && identity_of(path) == before) {
    remove_orphaned_temporaries(memo_dir);
    write_record(memo_dir, record, record_text(*before, digest));
  }
  return digest;
}

}  // namespace switchyard
