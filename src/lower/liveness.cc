// From a lowered program to the memory planner's liveness problem.
#include <algorithm>
#include <climits>
#include <map>

#include "lower/lower.h"

namespace switchyard {

MemoryProblem memory_problem(const LoweredProgram& program, std::vector<int>* tensor_of_buffer) {
  // Each buffer's first and last step; buffers no step touches (replaced by
  // an if's result) get no space.
  std::vector<std::pair<int, int>> touched(program.buffers.size(), {INT_MAX, -1});
  for (size_t s = 0; s < program.steps.size(); ++s)
    for (const std::vector<int>* buffers : {&program.steps[s].inputs, &program.steps[s].outputs})
      for (int b : *buffers) {
        touched[size_t(b)].first = std::min(touched[size_t(b)].first, int(s));
        touched[size_t(b)].second = std::max(touched[size_t(b)].second, int(s));
      }
  auto planned = [&](size_t b) {
    return program.buffers[b].kind == LoweredBuffer::Kind::kIntermediate && touched[b].second >= 0;
  };

  MemoryProblem problem;
  std::map<std::pair<int, std::string>, int> arena_of;  // sorted: arenas by device, then scope
  for (size_t b = 0; b < program.buffers.size(); ++b)
    if (planned(b)) arena_of.emplace(std::make_pair(program.buffers[b].device, program.buffers[b].scope), 0);
  for (auto& [key, index] : arena_of) {
    index = int(problem.arenas.size());
    problem.arenas.push_back({key.first, key.second});
  }

  tensor_of_buffer->assign(program.buffers.size(), -1);
  for (size_t b = 0; b < program.buffers.size(); ++b) {
    if (!planned(b)) continue;
    (*tensor_of_buffer)[b] = int(problem.tensors.size());
    PlannedTensor t;
    t.arena = arena_of.at({program.buffers[b].device, program.buffers[b].scope});
    t.bytes = program.buffers[b].bytes();
    t.first_step = touched[b].first;
    t.last_step = touched[b].second;
    problem.tensors.push_back(t);
  }

  for (const LoweredStep& step : program.steps) {
    if (step.kind != LoweredStep::Kind::kKernel || step.outputs.empty()) continue;
    int source = program.kernel_calls[size_t(step.index)].source;
    if (source < 0) continue;
    const KernelSource& kernel = program.kernel_sources[size_t(source)];
    // restrict_primitive_in_place left a primitive-only kernel only its sum's residual.
    if (!kernel.elementwise_in_place_safe && !kernel.library_only()) continue;
    int output = (*tensor_of_buffer)[size_t(step.outputs[0])];
    if (output < 0) continue;
    for (int b : step.in_place_candidates)
      if (int t = (*tensor_of_buffer)[size_t(b)]; t >= 0) problem.tensors[size_t(output)].in_place_candidates.push_back(t);
  }
  return problem;
}

}  // namespace switchyard
