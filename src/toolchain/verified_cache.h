// Entries of the toolchain's caches (compiled objects, linked models), each
// checked by its content hash before use. An entry is two files: the file
// itself and NAME.sha256 holding the SHA-256 of its bytes. Both are written
// under temporary names and renamed into place, and an entry is used only
// when its bytes hash to what was recorded, so a corrupt, truncated or empty
// entry (a full disk, an interrupted copy, a flipped bit) is rebuilt, never
// linked.
#pragma once

#include <string>

namespace switchyard {

// Whether `path` is an entry whose bytes match their recorded hash. One
// that exists but fails the check is removed, so the caller rebuilds it,
// and `problem` says what was wrong ("" when the entry is simply absent).
bool verified_cache_entry(const std::string& path, std::string* problem);

// Makes the finished file `temporary` the entry `path`: records its hash,
// then renames the hash and the file into place, in that order. Error(kBackend) naming the entry when
// `temporary` is empty or cannot be stored; `temporary` is gone either way.
void store_cache_entry(const std::string& temporary, const std::string& path);

// A name beside `path` for a file being written, unique to this process
// and call: "PATH.tmp-PID-N".
std::string cache_temporary_name(const std::string& path);

// Removes the temporary files and folders in `dir` whose writing process no
// longer runs on this machine and which are older than ten minutes (an
// interrupted compile leaves them; the age spares a writer on another
// machine that shares the cache).
void remove_orphaned_temporaries(const std::string& dir);

}  // namespace switchyard
