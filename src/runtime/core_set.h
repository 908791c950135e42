// Core sets of CPU devices (`--cores cpu:0=0-3`, a manifest device's
// "cores"): the CPUs a device's queue worker and its OpenMP team run on.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace switchyard {

// The highest core number a set may name (CPU_SETSIZE - 1).
constexpr int kMaxCore = 1023;

// "0-3,6" -> {0, 1, 2, 3, 6}, ascending. Throws RuntimeError naming
// `device` for malformed text, a range that runs backwards, a core above
// kMaxCore or one named twice.
std::vector<int> parse_core_set(const std::string& text, const std::string& device);

// "cpu:1=2-3" -> {"cpu:1", {2, 3}}. Throws RuntimeError for text without
// '=' or a malformed set.
std::pair<std::string, std::vector<int>> parse_device_cores(const std::string& flag);

// {0, 1, 2, 3, 6} -> "0-3,6".
std::string core_set_text(const std::vector<int>& cores);

// "" when no core is in two devices' sets, else which core and devices.
std::string overlapping_cores(const std::vector<std::pair<std::string, std::vector<int>>>& device_cores);

// "" when this process may run on every core of `cores` (its affinity
// mask), else the first that it may not, naming `device`.
std::string cores_not_allowed(const std::string& device, const std::vector<int>& cores);

}  // namespace switchyard
