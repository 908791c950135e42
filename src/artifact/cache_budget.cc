#include "artifact/cache_budget.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <vector>

#include "artifact/lock_file.h"
#include "support/error.h"

namespace switchyard {

namespace fs = std::filesystem;

namespace {

constexpr const char* kBudgetVariable = "SY_ARTIFACT_CACHE_MAX";

// An entry's folder is named by its key's SHA-256; anything else in the
// folder (a compile's temporary, a lock file) is not an entry.
bool entry_name(const std::string& name) {
  return name.size() == 64 && std::all_of(name.begin(), name.end(), [](char c) {
           return std::isdigit(static_cast<unsigned char>(c)) || (c >= 'a' && c <= 'f');
         });
}

struct Entry {
  fs::path path;
  fs::file_time_type used;
  uintmax_t bytes = 0;
};

uintmax_t folder_bytes(const fs::path& folder) {
  uintmax_t bytes = 0;
  std::error_code error;
  for (const fs::directory_entry& file : fs::directory_iterator(folder, error)) {
    std::error_code size_error;
    if (file.is_regular_file(size_error)) {
      uintmax_t size = file.file_size(size_error);
      if (!size_error) bytes += size;
    }
  }
  return bytes;
}

}  // namespace

bool parse_cache_size(const std::string& text, uintmax_t* bytes) {
  size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  if (digits == 0 || digits > 15) return false;
  std::string unit = text.substr(digits);
  int shift = 0;
  if (unit == "K" || unit == "k") shift = 10;
  else if (unit == "M" || unit == "m") shift = 20;
  else if (unit == "G" || unit == "g") shift = 30;
  else if (unit == "T" || unit == "t") shift = 40;
  else if (!unit.empty()) return false;
  uintmax_t count = std::stoull(text.substr(0, digits));
  if (shift > 0 && count > (UINTMAX_MAX >> shift)) return false;
  *bytes = count << shift;
  return true;
}

uintmax_t artifact_cache_budget() {
  const char* value = std::getenv(kBudgetVariable);
  if (!value) return kDefaultArtifactCacheBytes;
  uintmax_t bytes = 0;
  if (!parse_cache_size(value, &bytes))
    throw Error(ErrorKind::kUsage, std::string(kBudgetVariable) + "='" + std::string(value).substr(0, 40) +
                                       "' is not a size: give bytes, or a number with K, M, G or T (\"8G\")");
  return bytes;
}

void mark_entry_used(const std::string& entry_dir) {
  std::error_code error;
  fs::last_write_time(entry_dir, fs::file_time_type::clock::now(), error);
}

void trim_artifact_cache(const std::string& artifacts_dir, uintmax_t budget, const std::string& keep_entry) {
  std::vector<Entry> entries;
  uintmax_t total = 0;
  std::error_code error;
  const fs::path kept = fs::path(keep_entry).lexically_normal();
  for (const fs::directory_entry& e : fs::directory_iterator(artifacts_dir, error)) {
    std::error_code entry_error;
    if (!entry_name(e.path().filename().string()) || !e.is_directory(entry_error)) continue;
    Entry entry{e.path(), fs::last_write_time(e.path(), entry_error), folder_bytes(e.path())};
    if (entry_error) continue;
    total += entry.bytes;
    if (entry.path.lexically_normal() != kept) entries.push_back(std::move(entry));
  }
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.used < b.used; });
  for (const Entry& entry : entries) {
    if (total <= budget) break;
    try {
      LockFile lock(entry.path.string() + ".lock");
      std::error_code remove_error;
      fs::remove_all(entry.path, remove_error);
      if (!remove_error) total -= entry.bytes;
    } catch (const Error&) {
      // Another compile's lock could not be taken: the entry stays this time.
    }
  }
}

}  // namespace switchyard
