// The AOT entry function: one C++ translation unit defining
//   extern "C" int sy_model_run(const SyRunArgs* args);
//   extern "C" int sy_model_run_queue(const SyRunArgs* args, int queue);
//   extern "C" const SyModelSchedule* sy_model_schedule(void);
//   extern "C" int sy_model_abi_version(void);
// that runs a lowered program's steps in order (sy_model_run), or each
// device's steps as a queue of its own that waits for the others' steps it
// conflicts with (lower/queue_schedule.h), on the planned arenas, the
// weights, the inputs and the outputs (include/switchyard/model_abi.h).
#pragma once

#include <string>
#include <vector>

#include "lower/lower.h"
#include "lower/memory_plan.h"
#include "runtime/manifest.h"

namespace switchyard {

// `plan` and `tensor_of_buffer` come from plan_memory(memory_problem(program));
// `manifest` gives the devices, the weights' layout (weights in
// program.weights order) and the arenas (in plan order). The code brackets
// kernel i with services->kernel_begin/kernel_end(i), passes copy i to
// services->device_copy, and reads an if condition as a bool on the host.
std::string generate_entry_source(const LoweredProgram& program, const MemoryPlan& plan,
                                  const std::vector<int>& tensor_of_buffer, const Manifest& manifest);

// The translation unit defining
//   extern "C" const char* sy_model_description(void);
// which returns model_description(manifest). It is a unit of its own because
// the description holds weights.bin's checksum, known only once weights.bin
// is written: the build compiles it then, while the kernels and the entry,
// which need no checksum, compile from the start.
std::string generate_description_source(const Manifest& manifest);

}  // namespace switchyard
