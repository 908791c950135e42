// Reading and writing NumPy .npy files (format versions 1.0, 2.0 and 3.0),
// little-endian and C order only.
//
// dtypes: float32 '<f4', float16 '<f2', int8 '|i1', int32 '<i4', int64 '<i8',
// uint8 '|u1', bool '|b1'. NumPy has no bfloat16, so a bfloat16 tensor is
// written as its raw 16-bit patterns, '<u2' (view it in NumPy with
// `a.view(ml_dtypes.bfloat16)`); Switchyard has no uint16, so reading '<u2'
// gives bfloat16 and every dtype round-trips.
#pragma once

#include <string>

#include "runtime/ndarray.h"

namespace switchyard {

// Throws std::runtime_error naming the path and the reason: unreadable file,
// bad magic, unsupported version, malformed header, unsupported dtype,
// big-endian or Fortran-order data, truncated data or trailing bytes.
NDArray read_npy(const std::string& path);

// Writes to a temporary file beside `path`, then renames it over `path`, so
// a failure never leaves a partial file. Throws std::runtime_error naming the
// path and the reason.
void write_npy(const std::string& path, const NDArray& array);

}  // namespace switchyard
