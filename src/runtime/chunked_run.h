// Runs of a specialised artifact at a value of a symbolic dimension that no
// program was compiled for: the value as a sum of compiled ones (n = 11 as
// 8 + 1 + 1 + 1 when n=1,8 were compiled), each a run of its program on a
// slice of the inputs writing a slice of the outputs. The compiler records
// which dimensions this is exact for, and along which axes
// (SpecializedManifest::chunking, analysis/chunkable_dims.h); others are
// refused as before, with the reason.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "runtime/specialized_manifest.h"

namespace switchyard {

struct ChunkStep {
  size_t program = 0;            // the specialisation that runs it
  int64_t start = 0, count = 0;  // the entries [start, start + count) of the dimension
};

struct ChunkPlan {
  size_t dim = 0;     // index into SpecializedManifest::dims
  int64_t total = 0;  // the run's value of it
  std::vector<ChunkStep> steps;  // largest first, covering [0, total) in order
};

// How a run of a specialised artifact goes: the program that takes
// `input_shapes` as they are (choose_specialization), or, when none does,
// the fewest program runs that add up to the run's value of a chunkable
// dimension, the other dimensions matching those programs exactly. Throws
// choose_specialization's RuntimeError, followed by why no dimension could be
// chunked, when neither works.
struct RunPlan {
  size_t program = 0;  // without chunks
  std::optional<ChunkPlan> chunks;
};
RunPlan plan_run(const SpecializedManifest& manifest,
                 const std::vector<std::vector<std::vector<int64_t>>>& program_inputs,
                 const std::vector<std::vector<int64_t>>& input_shapes);
// plan_run's chunks alone: nullopt when one program takes the shapes.
std::optional<ChunkPlan> plan_chunks(const SpecializedManifest& manifest,
                                     const std::vector<std::vector<std::vector<int64_t>>>& program_inputs,
                                     const std::vector<std::vector<int64_t>>& input_shapes);

// A program's tensor shape scaled from the `count` entries it was compiled
// for to `entries` along `axis` (-1: unchanged).
std::vector<int64_t> scaled_shape(std::vector<int64_t> shape, int axis, int64_t count, int64_t entries);

// Copies indices [begin, begin + length) along `axis` of a row-major tensor
// of `shape` into the contiguous `slice`, or back.
void gather_slice(const void* whole, const std::vector<int64_t>& shape, int axis, int64_t begin, int64_t length,
                  int element_bytes, void* slice);
void scatter_slice(const void* slice, const std::vector<int64_t>& shape, int axis, int64_t begin, int64_t length,
                   int element_bytes, void* whole);
// Whether indices [begin, begin + length) along `axis` are one run of bytes,
// and its offset in bytes.
bool slice_is_contiguous(const std::vector<int64_t>& shape, int axis);
int64_t slice_offset_bytes(const std::vector<int64_t>& shape, int axis, int64_t begin, int element_bytes);

}  // namespace switchyard
