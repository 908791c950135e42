// Planning a run in chunks, and moving the slices.
#include "runtime/chunked_run.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <map>
#include <string>

#include "runtime/runtime_error.h"

namespace switchyard {
namespace {

// A value no DP table should be built for: chunking is for batches, not buffers.
constexpr int64_t kMaxChunkedValue = int64_t(1) << 22;

int64_t product(const std::vector<int64_t>& shape, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to; ++i) p *= shape[i];
  return p;
}

// The run's value of the dimension as program `s` (compiled for `value`)
// would see it, or -1 when the run's shapes differ from the program's
// anywhere else.
int64_t run_value_for(const DimChunking& chunking, const std::vector<std::vector<int64_t>>& program,
                      const std::vector<std::vector<int64_t>>& run, int64_t value) {
  int64_t total = -1;
  for (size_t i = 0; i < run.size(); ++i) {
    if (program[i].size() != run[i].size()) return -1;
    const int axis = chunking.input_axes[i];
    for (size_t d = 0; d < run[i].size(); ++d)
      if (int(d) != axis && program[i][d] != run[i][d]) return -1;
    if (axis < 0) continue;
    const int64_t compiled = program[i][size_t(axis)];
    if (value <= 0 || compiled % value != 0 || compiled == 0) return -1;
    const int64_t block = compiled / value;
    if (run[i][size_t(axis)] % block != 0) return -1;
    const int64_t here = run[i][size_t(axis)] / block;
    if (total >= 0 && here != total) return -1;
    total = here;
  }
  return total;
}

// The fewest values (each usable again) adding up to `total`, largest first; empty when none do.
std::vector<int64_t> fewest_parts(const std::vector<int64_t>& values, int64_t total) {
  std::vector<int32_t> count(size_t(total) + 1, -1);
  std::vector<int64_t> last(size_t(total) + 1, 0);
  count[0] = 0;
  for (int64_t t = 1; t <= total; ++t)
    for (int64_t v : values)
      if (v <= t && count[size_t(t - v)] >= 0 && (count[size_t(t)] < 0 || count[size_t(t - v)] + 1 < count[size_t(t)])) {
        count[size_t(t)] = count[size_t(t - v)] + 1;
        last[size_t(t)] = v;
      }
  std::vector<int64_t> parts;
  if (count[size_t(total)] < 0) return parts;
  for (int64_t t = total; t > 0; t -= last[size_t(t)]) parts.push_back(last[size_t(t)]);
  std::sort(parts.rbegin(), parts.rend());
  return parts;
}

// The bound a dimension's text states for a plain variable ("n<=32"), if any.
std::optional<int64_t> stated_bound(const std::string& symbol) {
  size_t at = symbol.find("<=");
  if (at == std::string::npos || symbol.find('*') != std::string::npos) return std::nullopt;
  try {
    return std::stoll(symbol.substr(at + 2));
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// Refuses a run whose inputs exceed a dimension's stated bound: chunks could
// run it, but the model was declared for no more.
void check_bounds(const SpecializedManifest& manifest, const std::vector<std::vector<int64_t>>& input_shapes) {
  for (size_t i = 0; i < manifest.inputs.size() && i < input_shapes.size(); ++i) {
    const SymbolicTensor& input = manifest.inputs[i];
    for (size_t d = 0; d < input.shape.size() && d < input_shapes[i].size(); ++d) {
      std::optional<int64_t> bound = stated_bound(input.shape[d].symbol);
      if (bound && input_shapes[i][d] > *bound)
        throw RuntimeError("input '" + input.name + "' dimension " + std::to_string(d) + " (" + input.shape[d].symbol +
                           ") is " + std::to_string(input_shapes[i][d]) + ", above its bound " +
                           std::to_string(*bound));
    }
  }
}

}  // namespace

std::optional<ChunkPlan> plan_chunks(const SpecializedManifest& manifest,
                                     const std::vector<std::vector<std::vector<int64_t>>>& program_inputs,
                                     const std::vector<std::vector<int64_t>>& input_shapes) {
  return plan_run(manifest, program_inputs, input_shapes).chunks;
}

RunPlan plan_run(const SpecializedManifest& manifest,
                 const std::vector<std::vector<std::vector<int64_t>>>& program_inputs,
                 const std::vector<std::vector<int64_t>>& input_shapes) {
  std::string error;
  try {
    return {choose_specialization(manifest, program_inputs, input_shapes), std::nullopt};
  } catch (const RuntimeError& e) {
    error = e.what();
  }
  check_shared_dims_agree(manifest, input_shapes);  // no chunks mend that
  check_bounds(manifest, input_shapes);
  std::string why_not;
  for (size_t d = 0; d < manifest.chunking.size(); ++d) {
    const DimChunking& chunking = manifest.chunking[d];
    if (!chunking.chunkable()) {
      why_not += "; " + chunking.dim + " cannot run in chunks: " + chunking.refusal;
      continue;
    }
    // The programs whose other dimensions are the run's, by their value of this one.
    std::map<int64_t, size_t> programs;
    int64_t total = -1;
    for (size_t s = 0; s < program_inputs.size(); ++s) {
      const int64_t value = manifest.specializations[s].values[d];
      const int64_t here = run_value_for(chunking, program_inputs[s], input_shapes, value);
      if (here <= 0 || (total >= 0 && here != total)) continue;
      total = here;
      programs.emplace(value, s);
    }
    if (programs.empty()) continue;
    std::vector<int64_t> values;
    std::string listed;
    for (const auto& [value, program] : programs) {
      values.push_back(value);
      listed += (listed.empty() ? "" : ", ") + std::to_string(value);
    }
    std::vector<int64_t> parts = total <= kMaxChunkedValue ? fewest_parts(values, total) : std::vector<int64_t>{};
    if (parts.empty()) {
      why_not += "; " + chunking.dim + "=" + std::to_string(total) + " cannot run in chunks: it is not a sum of " +
                 listed;
      continue;
    }
    ChunkPlan plan{d, total, {}};
    int64_t start = 0;
    for (int64_t part : parts) {
      plan.steps.push_back({programs.at(part), start, part});
      start += part;
    }
    return {0, std::move(plan)};
  }
  throw RuntimeError(error + why_not);
}

std::vector<int64_t> scaled_shape(std::vector<int64_t> shape, int axis, int64_t count, int64_t entries) {
  if (axis >= 0) shape[size_t(axis)] = shape[size_t(axis)] / count * entries;
  return shape;
}

bool slice_is_contiguous(const std::vector<int64_t>& shape, int axis) { return product(shape, 0, size_t(axis)) == 1; }

int64_t slice_offset_bytes(const std::vector<int64_t>& shape, int axis, int64_t begin, int element_bytes) {
  return begin * product(shape, size_t(axis) + 1, shape.size()) * element_bytes;
}

namespace {

// One memcpy per index of the axes before `axis`: the slice's run there.
void copy_slice(const std::vector<int64_t>& shape, int axis, int64_t begin, int64_t length, int element_bytes,
                char* whole, char* slice, bool into_slice) {
  const int64_t outer = product(shape, 0, size_t(axis));
  const int64_t inner = product(shape, size_t(axis) + 1, shape.size()) * element_bytes;
  for (int64_t o = 0; o < outer; ++o) {
    char* in_whole = whole + (o * shape[size_t(axis)] + begin) * inner;
    char* in_slice = slice + o * length * inner;
    if (into_slice)
      std::memcpy(in_slice, in_whole, size_t(length * inner));
    else
      std::memcpy(in_whole, in_slice, size_t(length * inner));
  }
}

}  // namespace

void gather_slice(const void* whole, const std::vector<int64_t>& shape, int axis, int64_t begin, int64_t length,
                  int element_bytes, void* slice) {
  copy_slice(shape, axis, begin, length, element_bytes, const_cast<char*>(static_cast<const char*>(whole)),
             static_cast<char*>(slice), true);
}

void scatter_slice(const void* slice, const std::vector<int64_t>& shape, int axis, int64_t begin, int64_t length,
                   int element_bytes, void* whole) {
  copy_slice(shape, axis, begin, length, element_bytes, static_cast<char*>(whole),
             const_cast<char*>(static_cast<const char*>(slice)), false);
}

}  // namespace switchyard
