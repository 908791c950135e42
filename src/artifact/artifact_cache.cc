#include "artifact/artifact_cache.h"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <set>
#include <sstream>
#include <vector>

#include "artifact/artifact_writer.h"
#include "artifact/cache_budget.h"
#include "artifact/file_digest.h"
#include "artifact/file_digest_memo.h"
#include "artifact/lock_file.h"
#include "runtime/clipped_text.h"
#include "runtime/file_write.h"
#include "runtime/sha256.h"
#include "targets/target_description.h"
#include "toolchain/compiler_probe.h"
#include "toolchain/toolchain.h"
#include "toolchain/verified_cache.h"

namespace switchyard {

namespace fs = std::filesystem;

namespace {

constexpr const char* kFilesList = ".files";      // the header, then name size hash, one file a line
constexpr const char* kSummaryFile = ".summary";  // the compile's summary, and its warnings
constexpr const char* kListHeader = "switchyard artifact entry 3";

// Files above this size (weights.bin of a large model) are checked by their
// size, inode and modification time, not by reading them: a handed-back
// artifact's manifest.json is hashed, and it pins weights.bin's checksum,
// which every load of the artifact checks. So a corrupted weights.bin whose
// time was put back fails to load; it never runs.
constexpr uintmax_t kLargestHashedFile = uintmax_t(64) << 20;

bool checked_by_identity(const std::string& name, uintmax_t size) {
  return size > kLargestHashedFile && name != "manifest.json";
}
constexpr const char* kLockSuffix = ".lock";      // KEY.lock, beside the entry

// Bytes of an ONNX tensor's external-data entry: the key "location" of a
// StringStringEntryProto (field 1, 8 bytes). A model holding them reads
// other files, which the key does not cover: it is not cached. (A name that
// happens to contain these bytes only costs the cache.)
constexpr char kExternalDataKey[] = "\n\x08location";
constexpr const char* kDigestsFolder = "digests";  // file_digest_memo.h's records

// What to look for in the model file: external data, in an ONNX file.
std::string_view external_data_key(const std::string& model_path) {
  if (fs::path(model_path).extension() != ".onnx") return {};
  return std::string_view(kExternalDataKey, sizeof kExternalDataKey - 1);
}

// The GNU build ID of each loaded object, or its path, size and time when it
// has none: any rebuilt or upgraded part of the compiler changes the key.
int add_object_identity(dl_phdr_info* info, size_t, void* out) {
  std::string& identity = *static_cast<std::string*>(out);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& header = info->dlpi_phdr[i];
    if (header.p_type != PT_NOTE) continue;
    const char* note = reinterpret_cast<const char*>(info->dlpi_addr + header.p_vaddr);
    const char* end = note + header.p_memsz;
    while (note + sizeof(ElfW(Nhdr)) <= end) {
      const auto* n = reinterpret_cast<const ElfW(Nhdr)*>(note);
      const char* name = note + sizeof(ElfW(Nhdr));
      const char* desc = name + ((n->n_namesz + 3) & ~3u);
      if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0) {
        identity += hex_digits(reinterpret_cast<const unsigned char*>(desc), n->n_descsz) + "\n";
        return 0;
      }
      note = desc + ((n->n_descsz + 3) & ~3u);
    }
  }
  std::string path = info->dlpi_name && *info->dlpi_name ? info->dlpi_name : "/proc/self/exe";
  struct stat file {};
  if (stat(path.c_str(), &file) != 0) {
    identity += "unidentified " + path + "\n";
    return 0;
  }
  identity += path + " " + std::to_string(file.st_size) + " " + std::to_string(file.st_mtim.tv_sec) + "." +
              std::to_string(file.st_mtim.tv_nsec) + "\n";
  return 0;
}

// The entry's list, one file a line after its header:
// "NAME\tSIZE\tXXH3-128\tINODE\tMTIME_NS", the digest "-" for a file
// checked by its identity alone (kLargestHashedFile).
struct KeptFile {
  std::string name;
  uintmax_t size = 0;
  std::string digest;
  uintmax_t inode = 0;
  uintmax_t modified_ns = 0;
};

bool decimal(const std::string& text) {
  return !text.empty() && text.size() < 20 && std::all_of(text.begin(), text.end(), ::isdigit);
}

// A name the list may hold: one plain file inside the entry, never a path.
bool plain_file_name(const std::string& name) {
  return !name.empty() && name[0] != '.' && name.find('/') == std::string::npos &&
         name.find('\0') == std::string::npos && name.size() <= 255;
}

// The entry's files, or nullopt with `problem` saying what is wrong.
std::optional<std::vector<KeptFile>> read_file_list(const std::string& path, std::string* problem) {
  std::ifstream list(path);
  std::string line;
  if (!list || !std::getline(list, line) || line != kListHeader) {
    *problem = "its file list " + path + " is missing or from another version";
    return std::nullopt;
  }
  std::vector<KeptFile> files;
  std::set<std::string> names;
  while (std::getline(list, line)) {
    std::istringstream fields(line);
    KeptFile file;
    std::string size, inode, modified;
    bool parsed = std::getline(fields, file.name, '\t') && std::getline(fields, size, '\t') &&
                  std::getline(fields, file.digest, '\t') && std::getline(fields, inode, '\t') &&
                  std::getline(fields, modified) && decimal(size) && decimal(inode) && decimal(modified) &&
                  (file.digest.size() == 32 || file.digest == "-");
    if (!parsed || !plain_file_name(file.name) || !names.insert(file.name).second) {
      *problem = "its file list " + path + " has a malformed line or a name that is not one plain file: \"" +
                 clipped_text(line, 80) + "\"";
      return std::nullopt;
    }
    file.size = std::stoull(size);
    file.inode = std::stoull(inode);
    file.modified_ns = std::stoull(modified);
    files.push_back(std::move(file));
  }
  if (files.empty()) *problem = "its file list " + path + " names no file";
  return files.empty() ? std::nullopt : std::optional(files);
}

// A file's inode and modification time in nanoseconds; nullopt when it
// is not a regular file.
std::optional<std::pair<uintmax_t, uintmax_t>> inode_and_time(const fs::path& path) {
  struct stat info {};
  if (lstat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) return std::nullopt;
  return std::pair{uintmax_t(info.st_ino),
                   uintmax_t(info.st_mtim.tv_sec) * 1000000000u + uintmax_t(info.st_mtim.tv_nsec)};
}

// A hard link, or a copy where the two are on different file systems.
void link_or_copy(const fs::path& from, const fs::path& to) {
  std::error_code error;
  fs::create_hard_link(from, to, error);
  if (error) fs::copy_file(from, to, fs::copy_options::overwrite_existing);
}

// Links the kept `file` of `entry` into `staging` and checks what was
// linked; "" when it is intact, else what is wrong.
std::string hand_back(const fs::path& entry, const KeptFile& file, const fs::path& staging) {
  std::error_code error;
  std::optional<std::pair<uintmax_t, uintmax_t>> identity = inode_and_time(entry / file.name);
  if (!identity) return file.name + " is missing or not a regular file";
  if (fs::file_size(entry / file.name, error) != file.size || error)
    return file.name + " is not the size its list records";
  if (file.digest == "-" && *identity != std::pair{file.inode, file.modified_ns})
    return file.name + " is not the file its list records (another inode, or written since)";
  try {
    link_or_copy(entry / file.name, staging / file.name);
  } catch (const fs::filesystem_error& e) {
    return std::string("cannot link ") + file.name + ": " + e.what();
  }
  // The bytes handed back, hashed: a link shares them with the entry.
  if (file.digest != "-" && file_digest((staging / file.name).string()) != file.digest)
    return file.name + "'s content does not match its recorded XXH3-128";
  if (file.digest == "-" && fs::file_size(staging / file.name, error) != file.size)
    return file.name + " was not handed back whole";
  return "";
}

// The list of `staging`'s files, each linked into `entry` and hashed there
// (or, above kLargestHashedFile, identified); nullopt when the staging
// directory holds anything but plain files.
std::optional<std::string> link_file_list(const fs::path& staging, const fs::path& entry) {
  std::vector<fs::path> files;
  for (const fs::directory_entry& e : fs::directory_iterator(staging)) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  std::string list = std::string(kListHeader) + "\n";
  for (const fs::path& from : files) {
    std::string name = from.filename().string();
    if (!fs::is_regular_file(fs::symlink_status(from)) || !plain_file_name(name)) return std::nullopt;
    link_or_copy(from, entry / name);
    const uintmax_t size = fs::file_size(entry / name);
    std::string digest = checked_by_identity(name, size) ? "-" : file_digest((entry / name).string());
    std::optional<std::pair<uintmax_t, uintmax_t>> identity = inode_and_time(entry / name);
    if (digest.empty() || !identity) return std::nullopt;
    list += name + "\t" + std::to_string(size) + "\t" + digest + "\t" + std::to_string(identity->first) + "\t" +
            std::to_string(identity->second) + "\n";
  }
  return list;
}

}  // namespace

std::optional<ArtifactCache> ArtifactCache::open(const std::string& cache_dir, const std::string& model_path,
                                                 const std::string& flags) {
  std::string build;
  dl_iterate_phdr(add_object_identity, &build);
  if (build.find("unidentified") != std::string::npos) return std::nullopt;
  std::string root = cache_dir.empty() ? Toolchain::default_cache_directory() : cache_dir;
  // Read once for both the key and the search for external data, and
  // remembered by the file's identity: an unchanged model is not read again.
  RememberedDigest model = remembered_file_digest(root + "/" + kDigestsFolder, model_path, external_data_key(model_path));
  const std::string& digest = model.digest;
  if (digest.empty()) return std::nullopt;
  std::string key = "switchyard artifact 2\n" + build + "model " + fs::path(model_path).extension().string() + " " +
                    digest + "\nflags " + flags + "\ncompiler " + compiler_identity(Toolchain::compiler_name("")) +
                    "\n";
  // What each target's artifact depends on of this machine (the CPU's: oneDNN's instruction set).
  for (const TargetDescription* target : target_descriptions()) key += target->artifact_facts();
  ArtifactCache cache;
  cache.budget_ = artifact_cache_budget();  // a malformed SY_ARTIFACT_CACHE_MAX fails before the compile
  // What a compile killed while it kept its artifact left.
  remove_orphaned_temporaries(root + "/artifacts");
  cache.directory_ = root + "/artifacts/" + sha256_hex(key.data(), key.size());
  cache.model_path_ = model_path;
  cache.model_digest_ = digest;
  cache.model_digests_ = root + "/" + kDigestsFolder;
  return cache;
}

std::optional<std::string> ArtifactCache::take(const std::string& output_dir, std::string* problem) const {
  problem->clear();
  std::error_code error;
  if (!fs::exists(fs::symlink_status(directory_, error))) return std::nullopt;
  check_replaceable(output_dir);
  StagingDirectory staging(output_dir);
  std::string summary;
  {
    LockFile lock(directory_ + kLockSuffix);
    std::ifstream summary_file(directory_ + "/" + kSummaryFile);
    std::optional<std::vector<KeptFile>> files = read_file_list(directory_ + "/" + kFilesList, problem);
    summary.assign(std::istreambuf_iterator<char>(summary_file), std::istreambuf_iterator<char>());
    if (!summary.empty() && summary.back() == '\n') summary.pop_back();
    if (files && summary.empty()) *problem = std::string("its ") + kSummaryFile + " is missing";
    for (size_t i = 0; files && problem->empty() && i < files->size(); ++i)
      *problem = hand_back(directory_, (*files)[i], staging.path());
    if (!problem->empty()) {
      *problem = "dropped the cached artifact " + directory_ + ": " + *problem;
      fs::remove_all(directory_, error);
      return std::nullopt;
    }
    mark_entry_used(directory_);
  }
  staging.commit();
  return summary;
}

void ArtifactCache::keep(const std::string& staging_dir, const std::string& summary) const {
  if (budget_ == 0) return;
  // The model file may have been rewritten while it compiled (then it is
  // read again: its identity changed). An ONNX model that may refer to
  // external data reads other files, which its digest does not cover: its
  // artifact is not kept, so no entry exists for such bytes.
  RememberedDigest model = remembered_file_digest(model_digests_, model_path_, external_data_key(model_path_));
  if (model.digest != model_digest_ || model.found) return;
  const std::string temporary = cache_temporary_name(directory_);
  std::error_code error;
  try {
    fs::create_directories(temporary);
    if (std::optional<std::string> list = link_file_list(staging_dir, temporary)) {
      write_whole_file(temporary + "/" + kFilesList, *list);
      write_whole_file(temporary + "/" + kSummaryFile, summary + "\n");
      LockFile lock(directory_ + kLockSuffix);
      fs::remove_all(directory_, error);
      fs::rename(temporary, directory_, error);
    }
  } catch (const std::exception&) {
  }
  fs::remove_all(temporary, error);
  trim_artifact_cache(fs::path(directory_).parent_path().string(), budget_, directory_);
}

}  // namespace switchyard
