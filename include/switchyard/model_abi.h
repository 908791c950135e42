/* The contract between a generated model.so and the Switchyard runtime.
 *
 * The backend generates C++ that includes only this header; the runtime
 * dlopens model.so and calls sy_model_run. Nothing of the compiler is linked
 * into either. Bump SY_MODEL_ABI_VERSION on any change to these structs.
 */
#ifndef SWITCHYARD_MODEL_ABI_H_
#define SWITCHYARD_MODEL_ABI_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SY_MODEL_ABI_VERSION 8

/* Faults a kernel reports through kernel_fault, one bit each: the cases its
 * operators' documentation (docs/operators.md, "Edge cases") defines as
 * errors. The kernel finishes (a faulting element gets 0) and the run fails. */
#define SY_FAULT_INTEGER_DIVISION_BY_ZERO 1
#define SY_FAULT_NEGATIVE_INTEGER_EXPONENT 2
#define SY_FAULT_INDEX_OUT_OF_RANGE 4

/* A body of a parallel loop over [begin, end). */
typedef void (*SyParallelBody)(void* closure, int64_t begin, int64_t end);

/* Services the runtime offers to generated code. `ctx` is opaque to the model. */
typedef struct SyRuntimeServices {
  void* ctx;
  /* Runs body over [0, n) split into chunks of at least `grain` on the
   * threads of device `device_index` (manifest order); returns when done. */
  void (*parallel_for)(void* ctx, int device_index, int64_t n, int64_t grain, SyParallelBody body,
                       void* closure);
  /* Copies `bytes` from a buffer on device `src_device` to one on `dst_device`. */
  void (*device_copy)(void* ctx, int copy_index, int dst_device, void* dst, int src_device, const void* src,
                      size_t bytes);
  /* Brackets kernel `kernel_index` (manifest "kernels" order), for profiling
   * and for recording where each kernel ran. */
  void (*kernel_begin)(void* ctx, int kernel_index);
  void (*kernel_end)(void* ctx, int kernel_index);
  /* Runs the oneDNN primitive of the open kernel (its manifest "primitive")
   * on device `device_index` over the kernel's own inputs and outputs. */
  void (*run_primitive)(void* ctx, int device_index, const void* const* inputs, void* const* outputs);
  /* Reports the SY_FAULT_* bits the open kernel's elements raised; the run
   * then fails with an error naming the kernel and each fault. */
  void (*kernel_fault)(void* ctx, int faults);
  /* (version 5) Queues function `function` (an index into the open kernel's
   * manifest "functions") of the open kernel's device image (its cubin) on
   * device `device_index`'s stream: `grid` blocks of `block` threads, whose
   * one parameter holds the `buffer_count` device addresses in `buffers`
   * (the kernel's buffers in order) and, when the manifest says the kernel
   * may fault, the runtime's fault word for it. Returns before the work
   * ends: a later copy off the device, or the end of the run, waits for it. */
  void (*launch_kernel)(void* ctx, int device_index, int function, int64_t grid, int block,
                        const void* const* buffers, int buffer_count);
  /* (version 5) Copies `bytes` between two buffers of device `device_index`
   * whose memory the host cannot address (a GPU's), in order with its other
   * work: a move within one device (an output that is also an input). */
  void (*device_move)(void* ctx, int device_index, void* dst, const void* src, size_t bytes);
  /* (version 8) For queues that run at once (sy_model_run_queue): marks
   * event `event` (< SyModelSchedule::event_count) of this run done, after
   * the step that signals it. */
  void (*signal_event)(void* ctx, int event);
  /* (version 8) Returns 0 once event `event` of this run is done (every
   * write of the step that signals it is then visible), or non-zero as soon
   * as the run has failed: the queue then returns at once. */
  int (*wait_event)(void* ctx, int event);
} SyRuntimeServices;

/* Everything one run needs. Arrays are indexed as in the manifest. */
typedef struct SyRunArgs {
  void* const* arenas;             /* one workspace arena per manifest "arenas" entry */
  const void* const* weights;      /* base of each device's weight block, by device index */
  const void* const* inputs;       /* one buffer per manifest input, on that input's device */
  void* const* outputs;            /* one buffer per manifest output, on that output's device */
  const SyRuntimeServices* services;
} SyRunArgs;

/* Exported by model.so. Returns 0 on success, non-zero on failure. */
typedef int (*SyModelRunFn)(const SyRunArgs* args);
#define SY_MODEL_RUN_SYMBOL "sy_model_run"
/* (version 8) How model.so's steps split into queues, one per device, that
 * run at once: sy_model_run_queue(args, q) for each q in [0, queue_count)
 * on its own thread (queue q's steps run on device queue_devices[q]), all
 * with the same args, make one run; the queues order their conflicting
 * steps through the run's `event_count` events (signal_event, wait_event).
 * queue_count 0: the model runs only in order, through sy_model_run, which
 * every model exports and which runs all steps in program order. */
typedef struct SyModelSchedule {
  int queue_count;
  const int* queue_devices;
  int event_count;
} SyModelSchedule;
typedef const SyModelSchedule* (*SyModelScheduleFn)(void);
#define SY_MODEL_SCHEDULE_SYMBOL "sy_model_schedule"
/* Returns 0 on success, non-zero when a wait found the run failed. */
typedef int (*SyModelRunQueueFn)(const SyRunArgs* args, int queue);
#define SY_MODEL_RUN_QUEUE_SYMBOL "sy_model_run_queue"
/* Exported by model.so: returns SY_MODEL_ABI_VERSION it was built against. */
typedef int (*SyModelAbiVersionFn)(void);
#define SY_MODEL_ABI_VERSION_SYMBOL "sy_model_abi_version"
/* Exported by model.so (version 3): what it was built for, as NUL-terminated
 * JSON text (runtime/model_description.h): its manifest without model.so's own
 * hash (from version 7 with weights.bin's checksum, which version 6 left
 * out). The runtime loads the artifact only when the manifest matches it. */
typedef const char* (*SyModelDescriptionFn)(void);
#define SY_MODEL_DESCRIPTION_SYMBOL "sy_model_description"

#ifdef __cplusplus
}
#endif

#endif /* SWITCHYARD_MODEL_ABI_H_ */
