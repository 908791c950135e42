#include "backend/artifact_cache.h"

#define XXH_INLINE_ALL
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "backend/artifact_writer.h"
#include "backend/compiler_probe.h"
#include "backend/toolchain.h"
#include "backend/verified_cache.h"
#include "runtime/dnnl_primitive.h"
#include "runtime/file_write.h"
#include "runtime/sha256.h"

namespace switchyard {

namespace fs = std::filesystem;

namespace {

constexpr const char* kFilesList = ".files";      // name size mtime, one file a line
constexpr const char* kSummaryFile = ".summary";  // the compile's summary line

std::string hex(const unsigned char* bytes, size_t n) {
  static const char digits[] = "0123456789abcdef";
  std::string text;
  for (size_t i = 0; i < n; ++i) text += {digits[bytes[i] >> 4], digits[bytes[i] & 15]};
  return text;
}

// Bytes of an ONNX tensor's external-data entry: the key "location" of a
// StringStringEntryProto (field 1, 8 bytes). A model holding them reads
// other files, which the key does not cover: it is not cached. (A name that
// happens to contain these bytes only costs the cache.)
constexpr char kExternalDataKey[] = "\n\x08location";

// XXH3-128 of the file's bytes; "" when unreadable or, for an ONNX file,
// when it refers to external data. Read in chunks: faulting in a mapping of
// ResNet-50's 100 MB took this VM 50-60 ms, reading it from the page cache
// a fraction of that.
std::string file_digest(const std::string& path) {
  const bool onnx = fs::path(path).extension() == ".onnx";
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  struct stat info {};
  std::string digest;
  if (fstat(fd, &info) == 0 && S_ISREG(info.st_mode)) {
    constexpr size_t kChunk = 1 << 20;
    // A chunk keeps the key's length less one byte of the previous one, so
    // a key split between two chunks is found.
    constexpr size_t kCarry = sizeof kExternalDataKey - 2;
    std::vector<char> buffer(kCarry + kChunk);
    XXH3_state_t* state = XXH3_createState();
    XXH3_128bits_reset(state);
    bool external = false, failed = false;
    size_t carried = 0;
    for (;;) {
      ssize_t got = ::read(fd, buffer.data() + carried, kChunk);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {
        failed = got < 0;
        break;
      }
      XXH3_128bits_update(state, buffer.data() + carried, size_t(got));
      size_t held = carried + size_t(got);
      external = external || (onnx && memmem(buffer.data(), held, kExternalDataKey, sizeof kExternalDataKey - 1));
      carried = std::min(kCarry, held);
      std::memmove(buffer.data(), buffer.data() + held - carried, carried);
    }
    if (!failed && !external) {
      XXH128_canonical_t canonical;
      XXH128_canonicalFromHash(&canonical, XXH3_128bits_digest(state));
      digest = hex(canonical.digest, sizeof canonical.digest);
    }
    XXH3_freeState(state);
  }
  close(fd);
  return digest;
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
        identity += hex(reinterpret_cast<const unsigned char*>(desc), n->n_descsz) + "\n";
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

std::string stamp(const fs::path& path) {
  struct stat info {};
  if (stat(path.c_str(), &info) != 0) return "";
  return std::to_string(info.st_size) + " " + std::to_string(info.st_mtim.tv_sec) + "." +
         std::to_string(info.st_mtim.tv_nsec);
}

// Every regular file under `dir`, as paths relative to it, the lists left out.
std::vector<std::string> artifact_files(const fs::path& dir) {
  std::vector<std::string> files;
  for (const fs::directory_entry& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) {
      std::string name = fs::relative(e.path(), dir).string();
      if (name != kFilesList && name != kSummaryFile) files.push_back(name);
    }
  return files;
}

// A hard link, or a copy where the two are on different file systems.
void link_or_copy(const fs::path& from, const fs::path& to) {
  fs::create_directories(to.parent_path());
  std::error_code error;
  fs::create_hard_link(from, to, error);
  if (error) fs::copy_file(from, to, fs::copy_options::overwrite_existing);
}

}  // namespace

std::optional<ArtifactCache> ArtifactCache::open(const std::string& cache_dir, const std::string& model_path,
                                                 const std::string& flags) {
  std::string build;
  dl_iterate_phdr(add_object_identity, &build);
  std::string digest = file_digest(model_path);
  if (digest.empty() || build.find("unidentified") != std::string::npos) return std::nullopt;
  // oneDNN's instruction set (ONEDNN_MAX_CPU_ISA may lower it) decides the
  // planned layouts and the weights' prepared layouts.
  std::string key = "switchyard artifact 1\n" + build + "model " + fs::path(model_path).extension().string() + " " +
                    digest + "\nflags " + flags + "\ncompiler " + compiler_identity(Toolchain::compiler_name("")) +
                    "\nonednn isa " + std::to_string(dnnl_effective_isa()) + "\n";
  ArtifactCache cache;
  std::string root = cache_dir.empty() ? Toolchain::default_cache_directory() : cache_dir;
  // What a compile killed while it kept its artifact left.
  remove_orphaned_temporaries(root + "/artifacts");
  cache.directory_ = root + "/artifacts/" + sha256_hex(key.data(), key.size());
  return cache;
}

std::optional<std::string> ArtifactCache::take(const std::string& output_dir) const {
  std::ifstream list(directory_ + "/" + kFilesList), summary_file(directory_ + "/" + kSummaryFile);
  std::string summary;
  if (!list || !std::getline(summary_file, summary)) return std::nullopt;
  std::vector<std::string> names;
  for (std::string line; std::getline(list, line);) {
    // "NAME\tSIZE MTIME": the file must be as it was kept.
    size_t tab = line.find('\t');
    if (tab == std::string::npos || stamp(fs::path(directory_) / line.substr(0, tab)) != line.substr(tab + 1)) {
      std::error_code ignored;
      fs::remove_all(directory_, ignored);
      return std::nullopt;
    }
    names.push_back(line.substr(0, tab));
  }
  if (names.empty()) return std::nullopt;
  check_replaceable(output_dir);
  StagingDirectory staging(output_dir);
  try {
    for (const std::string& name : names) link_or_copy(fs::path(directory_) / name, fs::path(staging.path()) / name);
  } catch (const fs::filesystem_error&) {
    return std::nullopt;  // the entry went (another compile replaced it): compile
  }
  staging.commit();
  return summary;
}

void ArtifactCache::keep(const std::string& output_dir, const std::string& summary) const {
  const std::string temporary = cache_temporary_name(directory_);
  std::error_code error;
  try {
    fs::create_directories(temporary);
    std::string list;
    for (const std::string& name : artifact_files(output_dir)) {
      fs::path kept = fs::path(temporary) / name;
      link_or_copy(fs::path(output_dir) / name, kept);
      list += name + "\t" + stamp(kept) + "\n";
    }
    write_whole_file(temporary + "/" + kFilesList, list);
    write_whole_file(temporary + "/" + kSummaryFile, summary + "\n");
    fs::remove_all(directory_, error);
    fs::rename(temporary, directory_, error);
  } catch (const std::exception&) {
  }
  fs::remove_all(temporary, error);
}

}  // namespace switchyard
