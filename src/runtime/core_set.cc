// Parsing and checking core sets (see core_set.h).
#include "runtime/core_set.h"

#include <sched.h>

#include <algorithm>
#include <cctype>

#include "runtime/runtime_error.h"

namespace switchyard {

namespace {

// A core number at text[*at...]: digits only, at most kMaxCore.
int read_core(const std::string& text, size_t* at, const std::string& device) {
  size_t begin = *at;
  int64_t value = 0;
  while (*at < text.size() && std::isdigit(static_cast<unsigned char>(text[*at])) && value <= kMaxCore)
    value = value * 10 + (text[(*at)++] - '0');
  if (*at == begin)
    throw RuntimeError("core set '" + text + "' of " + device + ": expected a core number at character " +
                       std::to_string(begin + 1) + " (e.g. 0-3,6)");
  if (value > kMaxCore)
    throw RuntimeError("core set '" + text + "' of " + device + ": the core at character " + std::to_string(begin + 1) +
                       " is above the highest core a set may name (" + std::to_string(kMaxCore) + ")");
  return int(value);
}

}  // namespace

std::vector<int> parse_core_set(const std::string& text, const std::string& device) {
  std::vector<int> cores;
  size_t at = 0;
  for (;;) {
    int first = read_core(text, &at, device), last = first;
    if (at < text.size() && text[at] == '-') {
      ++at;
      last = read_core(text, &at, device);
      if (last < first)
        throw RuntimeError("core set '" + text + "' of " + device + ": range " + std::to_string(first) + "-" +
                           std::to_string(last) + " runs backwards");
    }
    for (int core = first; core <= last; ++core) {
      if (std::find(cores.begin(), cores.end(), core) != cores.end())
        throw RuntimeError("core set '" + text + "' of " + device + " names core " + std::to_string(core) + " twice");
      cores.push_back(core);
    }
    if (at >= text.size() || text[at] != ',') break;
    ++at;
  }
  if (at != text.size())
    throw RuntimeError("core set '" + text + "' of " + device + ": unexpected '" + text.substr(at, 1) +
                       "' at character " + std::to_string(at + 1) + " (e.g. 0-3,6)");
  std::sort(cores.begin(), cores.end());
  return cores;
}

std::pair<std::string, std::vector<int>> parse_device_cores(const std::string& flag) {
  size_t equals = flag.find('=');
  if (equals == std::string::npos || equals == 0)
    throw RuntimeError("'" + flag + "': expected DEVICE=CORES, e.g. cpu:0=0-3");
  std::string device = flag.substr(0, equals);
  return {device, parse_core_set(flag.substr(equals + 1), device)};
}

std::string core_set_text(const std::vector<int>& cores) {
  std::string text;
  for (size_t i = 0; i < cores.size();) {
    size_t j = i;
    while (j + 1 < cores.size() && cores[j + 1] == cores[j] + 1) ++j;
    text += (text.empty() ? "" : ",") + std::to_string(cores[i]) + (j > i ? "-" + std::to_string(cores[j]) : "");
    i = j + 1;
  }
  return text;
}

std::string overlapping_cores(const std::vector<std::pair<std::string, std::vector<int>>>& device_cores) {
  for (size_t a = 0; a < device_cores.size(); ++a)
    for (size_t b = a + 1; b < device_cores.size(); ++b)
      for (int core : device_cores[a].second)
        if (std::find(device_cores[b].second.begin(), device_cores[b].second.end(), core) !=
            device_cores[b].second.end())
          return "core " + std::to_string(core) + " is in the core sets of both " + device_cores[a].first + " and " +
                 device_cores[b].first + " (devices that run at once need cores of their own)";
  return "";
}

std::string cores_not_allowed(const std::string& device, const std::vector<int>& cores) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return "";  // nothing to check against
  std::vector<int> usable;
  for (int core = 0; core < CPU_SETSIZE; ++core)
    if (CPU_ISSET(core, &allowed)) usable.push_back(core);
  for (int core : cores)
    if (core >= CPU_SETSIZE || !CPU_ISSET(core, &allowed))
      return device + ": core " + std::to_string(core) + " is not a core this process may run on (cores " +
             core_set_text(usable) + ")";
  return "";
}

}  // namespace switchyard
