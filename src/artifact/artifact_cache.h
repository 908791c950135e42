// Whole artifacts kept by what decides every byte of them, so that compiling
// an unchanged model again with the same flags takes the time of checking
// the artifact handed back. The key is the model file's bytes (XXH3-128,
// remembered by the file's identity: file_digest_memo.h), the compile's
// flags, this compiler's own build (the GNU build
// ID, or else the size and time, of every object this process has loaded:
// the switchyard binary, oneDNN, protobuf...) and the C++ compiler and CPU it
// compiles for (compiler_probe.h).
//
// An entry, cache_dir/artifacts/KEY/, is the artifact's files hard-linked
// (copied across file systems) from the staging directory of the compile
// that made them, before that compile puts them in place: never from its
// output folder, which another compile may have replaced since. Its list
// records each file's size and XXH3-128, and every file handed back is
// hashed against it: a file that differs (an artifact edited in place shares
// its entry's files; a flipped bit; a truncated copy) makes the entry a miss,
// and the entry is dropped so the compile that follows keeps a new one.
// A file over 64 MiB other than the manifest (a large model's weights.bin)
// is checked by its size, inode and modification time instead: the
// manifest, always hashed, holds its checksum, which every load checks.
// Writers and readers of one entry take turns on the lock file KEY.lock.
// The cache is bounded (SY_ARTIFACT_CACHE_MAX, cache_budget.h): keeping an
// entry removes the least recently used others beyond the budget.
// The list names plain files only: a name with a '/', "..", or a leading
// '.' makes the entry a miss, so no entry reaches outside its folder.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace switchyard {

class ArtifactCache {
 public:
  // The entry for compiling the file at `model_path` with `flags` (every
  // flag that changes the artifact, as text); nullopt when this process's
  // build cannot be identified or the file cannot be read.
  static std::optional<ArtifactCache> open(const std::string& cache_dir, const std::string& model_path,
                                           const std::string& flags);

  // When the entry holds an intact artifact: puts it at `output_dir`
  // (replacing it, as a compile does, in turn with other compiles into it)
  // and returns the summary keep() was given (its compile's summary line,
  // and lines after it). nullopt on a miss; `problem` then says why the
  // entry was dropped ("" when it was absent).
  std::optional<std::string> take(const std::string& output_dir, std::string* problem) const;
  // Keeps the finished artifact in `staging_dir`, the caller's own staging
  // directory (StagingDirectory), and its summary (a line, or several).
  // Nothing is kept when
  // the model file changed since open() (its artifact is another key's),
  // when the artifact has anything but plain files, or when the cache
  // cannot be written.
  void keep(const std::string& staging_dir, const std::string& summary) const;

  const std::string& directory() const { return directory_; }

 private:
  std::string directory_;     // cache_dir/artifacts/KEY
  std::string model_path_;
  std::string model_digest_;  // of the model file at open()
  std::string model_digests_;  // the folder of remembered model digests (file_digest_memo.h)
  uintmax_t budget_ = 0;       // bytes the cache may hold (cache_budget.h)
};

}  // namespace switchyard
