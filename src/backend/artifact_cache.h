// Whole artifacts kept by what decides every byte of them, so that compiling
// an unchanged model again with the same flags takes the time of hashing the
// model file (ResNet-50: 0.04 s against 0.4-0.9 s of import and writing 100
// MB of weights). The key is the model file's bytes (XXH3-128), the compile's
// flags, this compiler's own build (the GNU build ID, or else the size and
// time, of every object this process has loaded: the switchyard binary,
// oneDNN, protobuf...) and the C++ compiler and CPU it compiles for
// (compiler_probe.h). An entry is the artifact's files hard-linked into
// cache_dir/artifacts/KEY/ (copied across file systems), with each file's
// size and modification time: a file changed since (an artifact edited in
// place shares its entry's files) makes the entry a miss, and the runtime
// checks every file's hash at load anyway.
#pragma once

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

  // When the entry holds an unchanged artifact: puts it at `output_dir`
  // (replacing it, as a compile does) and returns the summary line its
  // compile printed. nullopt on a miss.
  std::optional<std::string> take(const std::string& output_dir) const;
  // Keeps the artifact just written at `output_dir` and its summary line;
  // a cache that cannot be written is left as it was.
  void keep(const std::string& output_dir, const std::string& summary) const;

  const std::string& directory() const { return directory_; }

 private:
  std::string directory_;  // cache_dir/artifacts/KEY
};

}  // namespace switchyard
