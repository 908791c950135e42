// A build's report as text (see build_report.h).
#include "pipeline/build_report.h"

#include <cstdio>

namespace switchyard {

namespace {

std::string bytes_text(uint64_t bytes) {
  char text[32];
  if (bytes >= (uint64_t(1) << 20)) {
    std::snprintf(text, sizeof text, "%.1f MiB", double(bytes) / double(1 << 20));
  } else if (bytes >= 1024) {
    std::snprintf(text, sizeof text, "%.1f KiB", double(bytes) / 1024.0);
  } else {
    std::snprintf(text, sizeof text, "%llu B", static_cast<unsigned long long>(bytes));
  }
  return text;
}

}  // namespace

double BuildReport::total_milliseconds() const {
  double total = 0;
  for (const BuildStage& s : stages) total += s.milliseconds;
  return total;
}

std::string BuildReport::summary() const {
  return model_summary() + "; " + std::to_string(objects_compiled) + " compiled, " + std::to_string(objects_cached) +
         " cached" + (link_cached ? ", link cached" : "");
}

std::string BuildReport::model_summary() const {
  std::string text = std::to_string(kernel_calls) + " kernel calls (" + std::to_string(distinct_kernels) +
                     " distinct, " + std::to_string(primitive_only_kernels) + " of them a library call alone), " +
                     std::to_string(copies) + (copies == 1 ? " copy" : " copies") + "; memory";
  for (size_t i = 0; i < memory.size(); ++i)
    text += std::string(i ? "," : "") + " " + memory[i].device + " " + bytes_text(memory[i].planned_bytes) +
            " (lower bound " + bytes_text(memory[i].lower_bound_bytes) + ")";
  return text;
}

std::string BuildReport::timing_table() const {
  std::string out = "stage                       time (ms)\n";
  char line[160];
  for (const BuildStage& s : stages) {
    std::snprintf(line, sizeof line, "%-26s %10.3f\n", s.name.c_str(), s.milliseconds);
    out += line;
    if (s.name != "passes") continue;
    for (const TimingInstrument::Entry& p : passes) {
      std::snprintf(line, sizeof line, "  %-24s %10.3f\n", p.pass.c_str(), p.milliseconds);
      out += line;
    }
  }
  std::snprintf(line, sizeof line, "%-26s %10.3f\n", "total", total_milliseconds());
  return out + line;
}

}  // namespace switchyard
