/* The Switchyard runtime's C API: load a compiled artifact directory and run it.
 *
 * Every function returns SY_OK (0) or an error status; on error,
 * sy_last_error() returns the message for the calling thread. Nothing throws
 * across this boundary. A loaded artifact may be run from many threads at once.
 *
 *   SyArtifact* model;
 *   if (sy_artifact_load("out/model", &model) != SY_OK) puts(sy_last_error());
 *   SyTensor x = {x_data, SY_DTYPE_FLOAT32, 2, x_shape};
 *   SyTensor y = {y_data, SY_DTYPE_FLOAT32, 2, y_shape};
 *   sy_artifact_run(model, &x, 1, &y, 1);
 *   SyRequest* pending;  // or start it, do something else, and wait
 *   sy_artifact_run_async(model, &x, 1, &y, 1, &pending);
 *   sy_request_wait(pending);
 *   sy_artifact_free(model);
 */
#ifndef SWITCHYARD_RUNTIME_H_
#define SWITCHYARD_RUNTIME_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
  SY_OK = 0,
  SY_ERROR_INVALID_ARGUMENT = 1, /* a null pointer, an index out of range, a bad dtype code */
  SY_ERROR_RUNTIME = 2,          /* loading or running failed; see sy_last_error() */
  SY_ERROR_OUT_OF_MEMORY = 3
};

/* Element types, numbered as the runtime's DType. */
typedef enum SyDType {
  SY_DTYPE_FLOAT32 = 0,
  SY_DTYPE_FLOAT16 = 1,
  SY_DTYPE_BFLOAT16 = 2,
  SY_DTYPE_INT8 = 3,
  SY_DTYPE_INT32 = 4,
  SY_DTYPE_INT64 = 5,
  SY_DTYPE_UINT8 = 6,
  SY_DTYPE_BOOL = 7,
  SY_DTYPE_FLOAT64 = 8,
  SY_DTYPE_INT16 = 9,
  SY_DTYPE_UINT16 = 10,
  SY_DTYPE_UINT32 = 11,
  SY_DTYPE_UINT64 = 12
} SyDType;

/* A dense, row-major host buffer. `data` needs only its element alignment. */
typedef struct SyTensor {
  void* data;
  int dtype; /* an SyDType */
  int ndim;
  const int64_t* shape;
} SyTensor;

typedef struct SyArtifact SyArtifact;

/* The message of this thread's last failed call ("" if none). Valid until the
 * thread's next failing call. */
const char* sy_last_error(void);

/* Loads an artifact directory (model.so, weights.bin, manifest.json). */
int sy_artifact_load(const char* directory, SyArtifact** artifact);
/* The same, with the size of the CPU thread pool (0: hardware concurrency). */
int sy_artifact_load_with_threads(const char* directory, int num_threads, SyArtifact** artifact);
/* Frees an artifact; null is accepted. */
int sy_artifact_free(SyArtifact* artifact);

int sy_artifact_num_inputs(const SyArtifact* artifact, int* count);
int sy_artifact_num_outputs(const SyArtifact* artifact, int* count);
/* The returned strings and shapes live as long as the artifact. */
int sy_artifact_input_name(const SyArtifact* artifact, int index, const char** name);
int sy_artifact_input_dtype(const SyArtifact* artifact, int index, int* dtype);
int sy_artifact_input_shape(const SyArtifact* artifact, int index, int* ndim, const int64_t** shape);
int sy_artifact_output_name(const SyArtifact* artifact, int index, const char** name);
int sy_artifact_output_dtype(const SyArtifact* artifact, int index, int* dtype);
int sy_artifact_output_shape(const SyArtifact* artifact, int index, int* ndim, const int64_t** shape);
/* In a specialised artifact (switchyard compile --specialize n=1,8) the shapes
 * above hold -1 where a dimension is symbolic; this gives output `index`'s
 * shape for a run on `inputs` (only their shapes are read): a compiled
 * program's, or that of a run in chunks of them (n=11 as 8+1+1+1, where the
 * compiler proved the dimension's entries independent; docs/artifact.md), or
 * fails naming the input dimension neither takes. The shape lives as long as
 * the artifact. */
int sy_artifact_output_shape_for(const SyArtifact* artifact, const SyTensor* inputs, int num_inputs, int index,
                                 int* ndim, const int64_t** shape);

/* Runs on `inputs` (manifest order) and writes each result into the caller's
 * buffer in `outputs`; every dtype and shape must match the manifest (a
 * specialised artifact's program for the inputs' shapes). */
int sy_artifact_run(const SyArtifact* artifact, const SyTensor* inputs, int num_inputs, const SyTensor* outputs,
                    int num_outputs);

/* A run in flight, from sy_artifact_run_async until sy_request_wait. */
typedef struct SyRequest SyRequest;

/* Starts a run as sy_artifact_run does and returns at once with `*request`
 * (a bad tensor fails here, with no request). The buffers must stay valid,
 * and the outputs unread, until sy_request_wait returns. Where the model's
 * devices run at once, consecutive requests pipeline: one device works on
 * request k+1 while the next works on request k. With the artifact's most
 * requests in flight (2 per device queue, at least 2), first waits for one to
 * end. sy_artifact_free waits for the requests in flight to end; they can
 * still be waited for afterwards. */
int sy_artifact_run_async(const SyArtifact* artifact, const SyTensor* inputs, int num_inputs,
                          const SyTensor* outputs, int num_outputs, SyRequest** request);
/* Waits for the run to end, frees `request` and returns the run's status
 * (its message in sy_last_error()). Every request must be waited for once. */
int sy_request_wait(SyRequest* request);

/* dtype name ("float32", ...) or null for an unknown code. */
const char* sy_dtype_name(int dtype);

#ifdef __cplusplus
}
#endif

#endif /* SWITCHYARD_RUNTIME_H_ */
