// Hash-checked cache entries, written atomically (see verified_cache.h).
#include "toolchain/verified_cache.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>

#include "runtime/file_write.h"
#include "runtime/runtime_error.h"
#include "runtime/sha256.h"
#include "support/error.h"
#include "toolchain/process.h"

namespace switchyard {

namespace fs = std::filesystem;

namespace {

constexpr char kTemporaryMarker[] = ".tmp-";
constexpr auto kOrphanAge = std::chrono::minutes(10);

std::string hash_path(const std::string& path) { return path + ".sha256"; }

// The recorded hash, or "" when the hash file is missing or malformed.
std::string recorded_hash(const std::string& path) {
  std::ifstream in(hash_path(path));
  std::string hash;
  in >> hash;
  return hash.size() == 64 ? hash : "";
}

// "" when the file cannot be read (another process may have just removed it).
std::string content_hash(const std::string& path) {
  try {
    return sha256_file_hex(path);
  } catch (const std::exception&) {
    return "";
  }
}

// remove_all: what stands where an entry belongs may be a directory (a crash,
// a copy, a user left it), and a non-empty one that stayed would fail every
// later store of the entry.
void remove_entry(const std::string& path) {
  std::error_code ignored;
  fs::remove_all(path, ignored);
  fs::remove_all(hash_path(path), ignored);
}

// Renames `from` to `to`, first removing a directory or other non-file that
// holds `to`'s place (rename cannot replace it).
void rename_over(const std::string& from, const std::string& to, std::error_code& error) {
  std::error_code ignored;
  fs::file_status there = fs::symlink_status(to, ignored);
  if (fs::exists(there) && !fs::is_regular_file(there)) fs::remove_all(to, ignored);
  fs::rename(from, to, error);
}

// The PID in "NAME.tmp-PID-N", or 0.
pid_t writer_of(const std::string& name) {
  size_t marker = name.rfind(kTemporaryMarker);
  if (marker == std::string::npos) return 0;
  try {
    return pid_t(std::stol(name.substr(marker + sizeof kTemporaryMarker - 1)));
  } catch (const std::exception&) {
    return 0;
  }
}

}  // namespace

bool verified_cache_entry(const std::string& path, std::string* problem) {
  problem->clear();
  std::error_code error;
  if (!fs::exists(path, error)) return false;
  uintmax_t size = fs::file_size(path, error);
  std::string recorded = recorded_hash(path);
  if (error) *problem = "cannot read its size: " + error.message();
  else if (size == 0) *problem = "it is empty";
  else if (recorded.empty()) *problem = "its hash file " + hash_path(path) + " is missing or malformed";
  else if (content_hash(path) != recorded) *problem = "its content does not match its recorded SHA-256";
  if (problem->empty()) return true;
  remove_entry(path);
  return false;
}

void store_cache_entry(const std::string& temporary, const std::string& path) {
  std::error_code error;
  std::string hash_temporary = cache_temporary_name(hash_path(path));
  auto fail = [&](const std::string& why) {
    std::error_code ignored;
    fs::remove(temporary, ignored);
    fs::remove(hash_temporary, ignored);
    throw Error(ErrorKind::kBackend, "cannot store the cache entry " + path + ": " + why);
  };
  uintmax_t size = fs::file_size(temporary, error);
  if (error) fail("cannot read the written file's size: " + error.message());
  if (size == 0) fail("the compiler wrote an empty file");
  std::string hash = content_hash(temporary);
  if (hash.empty()) fail("cannot read the written file " + temporary);
  try {
    write_whole_file(hash_temporary, hash + "\n");
  } catch (const RuntimeError& e) {
    fail(e.what());
  }
  // The hash first, then the file: a reader in between finds no file (and
  // builds its own) or an old one that fails the new hash, and what it
  // removes then is at most the hash, never the file this process is about
  // to link.
  rename_over(hash_temporary, hash_path(path), error);
  if (error) fail("cannot rename " + hash_temporary + " into place: " + error.message());
  rename_over(temporary, path, error);
  if (error) fail("cannot rename " + temporary + " into place: " + error.message());
}

std::string cache_temporary_name(const std::string& path) {
  static std::atomic<uint64_t> counter{0};
  return path + kTemporaryMarker + std::to_string(getpid()) + "-" + std::to_string(counter++);
}

void remove_orphaned_temporaries(const std::string& dir) {
  std::error_code error;
  auto now = fs::file_time_type::clock::now();
  for (fs::directory_iterator it(dir, error), end; !error && it != end; it.increment(error)) {
    std::string name = it->path().filename().string();
    pid_t writer = writer_of(name);
    if (!process_is_gone(writer)) continue;
    std::error_code ignored;
    auto written = fs::last_write_time(it->path(), ignored);
    if (!ignored && now - written >= kOrphanAge) fs::remove_all(it->path(), ignored);
  }
}

}  // namespace switchyard
