// Grouping joinable translation units into batches, and a batch's source.
#include "toolchain/unit_batches.h"

#include <algorithm>
#include <map>

namespace switchyard {

namespace {

// At most this many units in a batch: more batches than compilers keep the
// last compile short (the compilers end together) and a changed kernel
// recompiles only its batch; fewer pay the fixed cost less often. The
// fixed cost (a compiler and an assembler started, the prelude parsed) is
// about that of two small kernels, so batches of sixteen end a large
// model's compile sooner than batches of eight (bench/zoo's cold compiles).
constexpr size_t kMostUnitsPerBatch = 16;

// Splits `group` (indices of units, in order) into `count` runs of
// consecutive units whose sources are about equally long, each non-empty.
void split_evenly(const std::vector<TranslationUnit>& units, const std::vector<size_t>& group, size_t count,
                  std::vector<std::vector<size_t>>& batches) {
  double remaining = 0;
  for (size_t u : group) remaining += double(units[u].code.size());
  size_t next = 0;
  for (size_t b = 0; b < count; ++b) {
    const size_t batches_left = count - b;
    const double share = remaining / double(batches_left);
    std::vector<size_t> batch;
    double taken = 0;
    // Leave one unit for each batch after this one; the last takes the rest.
    while (next + batches_left - 1 < group.size()) {
      const double size = double(units[group[next]].code.size());
      if (batches_left > 1 && !batch.empty() && taken + size / 2 > share) break;
      batch.push_back(group[next++]);
      taken += size;
    }
    remaining -= taken;
    batches.push_back(std::move(batch));
  }
}

}  // namespace

std::vector<std::vector<size_t>> plan_unit_batches(const std::vector<TranslationUnit>& units, int parallel_compiles) {
  // Joinable units by their flags, in the order each set of flags first comes.
  std::map<std::vector<std::string>, size_t> group_of_flags;
  std::vector<std::vector<size_t>> groups;
  std::vector<std::vector<size_t>> batches;
  for (size_t u = 0; u < units.size(); ++u) {
    if (!units[u].joinable) {
      batches.push_back({u});
      continue;
    }
    auto [it, added] = group_of_flags.emplace(units[u].flags, groups.size());
    if (added) groups.emplace_back();
    groups[it->second].push_back(u);
  }
  const size_t parallel = size_t(std::max(parallel_compiles, 1));
  for (const std::vector<size_t>& group : groups) {
    // Enough batches for the size limit, a multiple of the compilers running at once.
    size_t count = (group.size() + kMostUnitsPerBatch - 1) / kMostUnitsPerBatch;
    count = std::min(group.size(), (count + parallel - 1) / parallel * parallel);
    split_evenly(units, group, count, batches);
  }
  std::sort(batches.begin(), batches.end(),
            [](const std::vector<size_t>& a, const std::vector<size_t>& b) { return a.front() < b.front(); });
  return batches;
}

std::string batch_source(const std::vector<TranslationUnit>& units, const std::vector<size_t>& members) {
  std::string source = "// Generated translation units compiled as one; each is also in its own file:\n";
  for (size_t u : members) source += "//   " + units[u].name + ".cc\n";
  for (size_t u : members) {
    source += "\n#line 1 \"" + units[u].name + ".cc\"\n";
    source += units[u].code;
    if (!units[u].code.empty() && units[u].code.back() != '\n') source += '\n';
  }
  return source;
}

}  // namespace switchyard
