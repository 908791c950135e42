// A file's digest remembered by what the kernel says about the file, so
// that the artifact cache's key for an unchanged model costs one stat, not
// a reading of all its bytes (VGG-16's 553 MB).
//
// A record holds the file's device, inode, size, modification and change
// times (nanoseconds) with the digest read from it. The change time is the
// safeguard: every write, truncation, rename onto the path or utimes() call
// sets it to the current time, and no call sets it back, so a file with the
// record's identity has the bytes that were read. A record is written only
// for a file last changed well before its reading began and unchanged when
// it ended: a write in the same timestamp tick as the last change (which
// would leave the times as they were) cannot have happened since.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace switchyard {

struct RememberedDigest {
  std::string digest;        // file_digest's, "" when the file is unreadable
  bool found = false;        // whether `pattern` occurs in the bytes
  bool remembered = false;   // taken from a record, the file unread
};

// How long before its reading a file must have last changed for its digest
// to be recorded: more than any file system's timestamp granularity (FAT's
// is two seconds), so a later write cannot leave the times as they were.
constexpr int64_t kSettledNanoseconds = int64_t(3) * 1000 * 1000 * 1000;

// The digest of the regular file at `path` and whether `pattern` occurs in
// it (file_digest.h), from the record in `memo_dir` when one matches the
// file as it is now; else read, and recorded there when the file last
// changed more than `settled_ns` before. A missing, malformed or unwritable
// record only costs a reading.
RememberedDigest remembered_file_digest(const std::string& memo_dir, const std::string& path,
                                        std::string_view pattern = {}, int64_t settled_ns = kSettledNanoseconds);

}  // namespace switchyard
