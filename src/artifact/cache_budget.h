// How much disk the cache of whole artifacts (artifact_cache.h) may hold,
// and the trimming that keeps it there. Without a bound, every model and
// flag set ever compiled stays: a zoo compiled at nine opsets kept 44 GB.
// Entries go least recently used first; the one just kept always stays.
#pragma once

#include <cstdint>
#include <string>

namespace switchyard {

// The default budget: a zoo of large models (VGG-16's artifact is 0.7 GB).
constexpr uintmax_t kDefaultArtifactCacheBytes = uintmax_t(8) << 30;

// The budget in bytes from SY_ARTIFACT_CACHE_MAX ("8G", "512M", "64K" or a
// count of bytes; "0" keeps no artifact), else the default. Throws Error
// (kUsage) naming the variable when its value is not such a size.
uintmax_t artifact_cache_budget();

// Parses a size as SY_ARTIFACT_CACHE_MAX takes it; false when malformed.
bool parse_cache_size(const std::string& text, uintmax_t* bytes);

// Marks the entry folder as used now (its last-use time orders eviction).
void mark_entry_used(const std::string& entry_dir);

// Removes whole entries of `artifacts_dir`, least recently used first, until
// the entries' files take at most `budget` bytes, never `keep_entry`. Each
// entry is removed under its lock (KEY.lock), in turn with the compiles that
// read or write it. Best effort: a folder it cannot read or remove is left.
void trim_artifact_cache(const std::string& artifacts_dir, uintmax_t budget, const std::string& keep_entry);

}  // namespace switchyard
