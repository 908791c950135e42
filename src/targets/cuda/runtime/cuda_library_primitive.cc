// The CUDA library path, built when a toolkit is found (its headers give the
// entry points' exact types; the libraries are still only dlopen'd). Every
// descriptor and algorithm is made by the constructor; execute sets the
// per-call pointers and stream under a lock, because cuDNN's handle carries
// its stream and cuBLASLt's descriptor its bias pointer.
#include "targets/cuda/runtime/cuda_library_primitive.h"

#include <cublasLt.h>
#include <cudnn.h>

#include <mutex>

#include "targets/cuda/runtime/cuda_driver.h"
#include "targets/cuda/runtime/cuda_library_loader.h"
#include "targets/cuda/runtime/cuda_library_plan.h"
#include "runtime/primitive_json.h"
#include "runtime/runtime_error.h"

namespace switchyard {
namespace {

// Workspace a cuBLASLt algorithm may ask for; its heuristics choose among those that fit.
constexpr uint64_t kMatmulWorkspaceLimit = 32u << 20;

struct CublasLt : CudaLibraryLoad {
  decltype(&cublasLtCreate) create;
  decltype(&cublasLtDestroy) destroy;
  decltype(&cublasLtGetStatusString) status_string;
  decltype(&cublasLtMatmulDescCreate) desc_create;
  decltype(&cublasLtMatmulDescDestroy) desc_destroy;
  decltype(&cublasLtMatmulDescSetAttribute) desc_set;
  decltype(&cublasLtMatrixLayoutCreate) layout_create;
  decltype(&cublasLtMatrixLayoutDestroy) layout_destroy;
  decltype(&cublasLtMatrixLayoutSetAttribute) layout_set;
  decltype(&cublasLtMatmulPreferenceCreate) preference_create;
  decltype(&cublasLtMatmulPreferenceDestroy) preference_destroy;
  decltype(&cublasLtMatmulPreferenceSetAttribute) preference_set;
  decltype(&cublasLtMatmulAlgoGetHeuristic) heuristic;
  decltype(&cublasLtMatmul) matmul;

  CublasLt() : CudaLibraryLoad("cuBLASLt", "libcublasLt.so.13") {
    resolve(create, "cublasLtCreate");
    resolve(destroy, "cublasLtDestroy");
    resolve(status_string, "cublasLtGetStatusString");
    resolve(desc_create, "cublasLtMatmulDescCreate");
    resolve(desc_destroy, "cublasLtMatmulDescDestroy");
    resolve(desc_set, "cublasLtMatmulDescSetAttribute");
    resolve(layout_create, "cublasLtMatrixLayoutCreate");
    resolve(layout_destroy, "cublasLtMatrixLayoutDestroy");
    resolve(layout_set, "cublasLtMatrixLayoutSetAttribute");
    resolve(preference_create, "cublasLtMatmulPreferenceCreate");
    resolve(preference_destroy, "cublasLtMatmulPreferenceDestroy");
    resolve(preference_set, "cublasLtMatmulPreferenceSetAttribute");
    resolve(heuristic, "cublasLtMatmulAlgoGetHeuristic");
    resolve(matmul, "cublasLtMatmul");
  }
};

struct Cudnn : CudaLibraryLoad {
  decltype(&cudnnCreate) create;
  decltype(&cudnnDestroy) destroy;
  decltype(&cudnnGetErrorString) error_string;
  decltype(&cudnnSetStream) set_stream;
  decltype(&cudnnCreateTensorDescriptor) tensor_create;
  decltype(&cudnnSetTensorNdDescriptor) tensor_set;
  decltype(&cudnnDestroyTensorDescriptor) tensor_destroy;
  decltype(&cudnnCreateFilterDescriptor) filter_create;
  decltype(&cudnnSetFilterNdDescriptor) filter_set;
  decltype(&cudnnDestroyFilterDescriptor) filter_destroy;
  decltype(&cudnnCreateConvolutionDescriptor) convolution_create;
  decltype(&cudnnSetConvolutionNdDescriptor) convolution_set;
  decltype(&cudnnSetConvolutionGroupCount) convolution_groups;
  decltype(&cudnnSetConvolutionMathType) convolution_math;
  decltype(&cudnnDestroyConvolutionDescriptor) convolution_destroy;
  decltype(&cudnnCreateActivationDescriptor) activation_create;
  decltype(&cudnnSetActivationDescriptor) activation_set;
  decltype(&cudnnDestroyActivationDescriptor) activation_destroy;
  decltype(&cudnnCreatePoolingDescriptor) pooling_create;
  decltype(&cudnnSetPoolingNdDescriptor) pooling_set;
  decltype(&cudnnDestroyPoolingDescriptor) pooling_destroy;
  decltype(&cudnnGetConvolutionForwardAlgorithm_v7) find_algorithm;
  decltype(&cudnnGetConvolutionForwardWorkspaceSize) workspace_size;
  decltype(&cudnnConvolutionForward) convolution;
  decltype(&cudnnConvolutionBiasActivationForward) convolution_bias_activation;
  decltype(&cudnnAddTensor) add_tensor;
  decltype(&cudnnActivationForward) activation;
  decltype(&cudnnPoolingForward) pooling;

  Cudnn() : CudaLibraryLoad("cuDNN", "libcudnn.so.9") {
    resolve(create, "cudnnCreate");
    resolve(destroy, "cudnnDestroy");
    resolve(error_string, "cudnnGetErrorString");
    resolve(set_stream, "cudnnSetStream");
    resolve(tensor_create, "cudnnCreateTensorDescriptor");
    resolve(tensor_set, "cudnnSetTensorNdDescriptor");
    resolve(tensor_destroy, "cudnnDestroyTensorDescriptor");
    resolve(filter_create, "cudnnCreateFilterDescriptor");
    resolve(filter_set, "cudnnSetFilterNdDescriptor");
    resolve(filter_destroy, "cudnnDestroyFilterDescriptor");
    resolve(convolution_create, "cudnnCreateConvolutionDescriptor");
    resolve(convolution_set, "cudnnSetConvolutionNdDescriptor");
    resolve(convolution_groups, "cudnnSetConvolutionGroupCount");
    resolve(convolution_math, "cudnnSetConvolutionMathType");
    resolve(convolution_destroy, "cudnnDestroyConvolutionDescriptor");
    resolve(activation_create, "cudnnCreateActivationDescriptor");
    resolve(activation_set, "cudnnSetActivationDescriptor");
    resolve(activation_destroy, "cudnnDestroyActivationDescriptor");
    resolve(pooling_create, "cudnnCreatePoolingDescriptor");
    resolve(pooling_set, "cudnnSetPoolingNdDescriptor");
    resolve(pooling_destroy, "cudnnDestroyPoolingDescriptor");
    resolve(find_algorithm, "cudnnGetConvolutionForwardAlgorithm_v7");
    resolve(workspace_size, "cudnnGetConvolutionForwardWorkspaceSize");
    resolve(convolution, "cudnnConvolutionForward");
    resolve(convolution_bias_activation, "cudnnConvolutionBiasActivationForward");
    resolve(add_tensor, "cudnnAddTensor");
    resolve(activation, "cudnnActivationForward");
    resolve(pooling, "cudnnPoolingForward");
  }
};

const CublasLt& cublaslt(const std::string& device) {
  static const CublasLt library;
  library.require(device);
  return library;
}

const Cudnn& cudnn(const std::string& device) {
  static const Cudnn library;
  library.require(device);
  return library;
}

}  // namespace

struct CudaLibraryPrimitive::Impl {
  PrimitiveSpec spec;
  std::string where;  // "cuda:0: the matmul primitive", for errors
  size_t workspace_bytes = 0;
  mutable std::mutex enqueue;

  // cuBLASLt
  const CublasLt* lt = nullptr;
  CudaMatmulPlan matmul;
  cublasLtHandle_t lt_handle = nullptr;
  cublasLtMatmulDesc_t operation = nullptr;
  cublasLtMatrixLayout_t a_layout = nullptr, b_layout = nullptr, d_layout = nullptr;
  cublasLtMatmulAlgo_t algorithm{};

  // cuDNN
  const Cudnn* dnn = nullptr;
  CudaWindowPlan window;
  cudnnHandle_t dnn_handle = nullptr;
  cudnnTensorDescriptor_t src = nullptr, dst = nullptr, bias = nullptr;
  cudnnFilterDescriptor_t filter = nullptr;
  cudnnConvolutionDescriptor_t convolution = nullptr;
  cudnnActivationDescriptor_t activation = nullptr;
  cudnnPoolingDescriptor_t pooling = nullptr;
  cudnnConvolutionFwdAlgo_t convolution_algorithm{};
  bool fused_bias_activation = false;

  void check(cublasStatus_t status, const char* call) const {
    if (status != CUBLAS_STATUS_SUCCESS)
      throw RuntimeError(where + ": " + call + " failed: " + lt->status_string(status) + " (spec " +
                         primitive_spec_text(spec).substr(0, 200) + ")");
  }
  void check(cudnnStatus_t status, const char* call) const {
    if (status != CUDNN_STATUS_SUCCESS)
      throw RuntimeError(where + ": " + call + " failed: " + dnn->error_string(status) + " (spec " +
                         primitive_spec_text(spec).substr(0, 200) + ")");
  }

  cublasLtMatrixLayout_t layout(const CudaLibraryMatrix& m) {
    cublasLtMatrixLayout_t made = nullptr;
    check(lt->layout_create(&made, CUDA_R_32F, uint64_t(m.rows), uint64_t(m.columns), m.leading),
          "cublasLtMatrixLayoutCreate");
    if (matmul.batch > 1) {
      int32_t count = int32_t(matmul.batch);
      int64_t stride = m.batch_stride;
      check(lt->layout_set(made, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)),
            "cublasLtMatrixLayoutSetAttribute(BATCH_COUNT)");
      check(lt->layout_set(made, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof(stride)),
            "cublasLtMatrixLayoutSetAttribute(STRIDED_BATCH_OFFSET)");
    }
    return made;
  }

  void make_matmul(const std::string& device) {
    lt = &cublaslt(device);
    check(lt->create(&lt_handle), "cublasLtCreate");
    // 32-bit float compute: no TF32, so results match the CPU's to float rounding.
    check(lt->desc_create(&operation, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate");
    cublasOperation_t transa = matmul.a.transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasOperation_t transb = matmul.b.transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasLtEpilogue_t epilogue = matmul.bias ? (matmul.relu ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_BIAS)
                                              : (matmul.relu ? CUBLASLT_EPILOGUE_RELU : CUBLASLT_EPILOGUE_DEFAULT);
    check(lt->desc_set(operation, CUBLASLT_MATMUL_DESC_TRANSA, &transa, sizeof(transa)),
          "cublasLtMatmulDescSetAttribute(TRANSA)");
    check(lt->desc_set(operation, CUBLASLT_MATMUL_DESC_TRANSB, &transb, sizeof(transb)),
          "cublasLtMatmulDescSetAttribute(TRANSB)");
    check(lt->desc_set(operation, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue)),
          "cublasLtMatmulDescSetAttribute(EPILOGUE)");
    a_layout = layout(matmul.a);
    b_layout = layout(matmul.b);
    d_layout = layout(matmul.d);
    cublasLtMatmulPreference_t preference = nullptr;
    check(lt->preference_create(&preference), "cublasLtMatmulPreferenceCreate");
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    cublasStatus_t status = CUBLAS_STATUS_SUCCESS;
    for (auto attribute : {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                           CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES})
      if (status == CUBLAS_STATUS_SUCCESS)
        status = lt->preference_set(preference, attribute, &matmul.alignment, sizeof(matmul.alignment));
    if (status == CUBLAS_STATUS_SUCCESS)
      status = lt->preference_set(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &kMatmulWorkspaceLimit,
                                  sizeof(kMatmulWorkspaceLimit));
    if (status == CUBLAS_STATUS_SUCCESS)
      status =
          lt->heuristic(lt_handle, operation, a_layout, b_layout, d_layout, d_layout, preference, 1, &result, &found);
    lt->preference_destroy(preference);
    check(status, "cublasLtMatmulAlgoGetHeuristic");
    if (found == 0 || result.state != CUBLAS_STATUS_SUCCESS)
      throw RuntimeError(where + ": cuBLASLt has no algorithm for " + primitive_spec_text(spec).substr(0, 200));
    algorithm = result.algo;
    workspace_bytes = result.workspaceSize;
  }

  cudnnTensorDescriptor_t tensor(const int* dims, const int* strides) {
    cudnnTensorDescriptor_t made = nullptr;
    check(dnn->tensor_create(&made), "cudnnCreateTensorDescriptor");
    check(dnn->tensor_set(made, CUDNN_DATA_FLOAT, 4, dims, strides), "cudnnSetTensorNdDescriptor");
    return made;
  }

  void make_window(const std::string& device) {
    dnn = &cudnn(device);
    check(dnn->create(&dnn_handle), "cudnnCreate");
    src = tensor(window.src_dims.data(), window.src_strides.data());
    dst = tensor(window.dst_dims.data(), window.dst_strides.data());
    if (spec.kind == PrimitiveKind::kPooling) {
      cudnnPoolingMode_t mode = spec.algorithm == "pooling_max" ? CUDNN_POOLING_MAX
                                : spec.algorithm == "pooling_avg_include_padding"
                                    ? CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING
                                    : CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING;
      check(dnn->pooling_create(&pooling), "cudnnCreatePoolingDescriptor");
      check(dnn->pooling_set(pooling, mode, CUDNN_PROPAGATE_NAN, 2, window.window.data(), window.padding.data(),
                             window.strides.data()),
            "cudnnSetPoolingNdDescriptor");
      return;
    }
    check(dnn->filter_create(&filter), "cudnnCreateFilterDescriptor");
    check(dnn->filter_set(filter, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 4, window.filter_dims.data()),
          "cudnnSetFilterNdDescriptor");
    check(dnn->convolution_create(&convolution), "cudnnCreateConvolutionDescriptor");
    check(dnn->convolution_set(convolution, 2, window.padding.data(), window.strides.data(), window.dilation.data(),
                               CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
          "cudnnSetConvolutionNdDescriptor");
    check(dnn->convolution_groups(convolution, window.groups), "cudnnSetConvolutionGroupCount");
    // FMA only: no TF32 tensor cores, so results match the CPU's to float rounding.
    check(dnn->convolution_math(convolution, CUDNN_FMA_MATH), "cudnnSetConvolutionMathType");
    if (window.bias) {
      std::array<int, 4> dims{1, window.filter_dims[0], 1, 1}, strides{window.filter_dims[0], 1, 1, 1};
      bias = tensor(dims.data(), strides.data());
    }
    if (window.relu) {
      check(dnn->activation_create(&activation), "cudnnCreateActivationDescriptor");
      check(dnn->activation_set(activation, CUDNN_ACTIVATION_RELU, CUDNN_PROPAGATE_NAN, 0),
            "cudnnSetActivationDescriptor");
    }
    // One fused call when there is a bias and more; without an activation
    // it is the identity, which cuDNN runs with one algorithm only.
    fused_bias_activation = window.bias && (window.relu || window.sum_input >= 0);
    if (fused_bias_activation && !window.relu) {
      check(dnn->activation_create(&activation), "cudnnCreateActivationDescriptor");
      check(dnn->activation_set(activation, CUDNN_ACTIVATION_IDENTITY, CUDNN_PROPAGATE_NAN, 0),
            "cudnnSetActivationDescriptor");
      convolution_algorithm = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
    } else {
      cudnnConvolutionFwdAlgoPerf_t found[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
      int count = 0;
      check(dnn->find_algorithm(dnn_handle, src, filter, convolution, dst, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &count,
                                found),
            "cudnnGetConvolutionForwardAlgorithm_v7");
      int chosen = -1;
      for (int i = 0; i < count && chosen < 0; ++i)
        if (found[i].status == CUDNN_STATUS_SUCCESS && found[i].mathType == CUDNN_FMA_MATH) chosen = i;
      for (int i = 0; i < count && chosen < 0; ++i)
        if (found[i].status == CUDNN_STATUS_SUCCESS && found[i].mathType == CUDNN_DEFAULT_MATH) chosen = i;
      if (chosen < 0)
        throw RuntimeError(where + ": cuDNN has no float convolution algorithm for " +
                           primitive_spec_text(spec).substr(0, 200));
      convolution_algorithm = found[chosen].algo;
    }
    check(dnn->workspace_size(dnn_handle, src, filter, convolution, dst, convolution_algorithm, &workspace_bytes),
          "cudnnGetConvolutionForwardWorkspaceSize");
  }

  void run_window(const void* const* inputs, void* const* outputs, void* workspace) const {
    const float one = 1, zero = 0;
    const void* x = inputs[spec.src_input];
    void* y = outputs[0];
    if (spec.kind == PrimitiveKind::kPooling) {
      check(dnn->pooling(dnn_handle, pooling, &one, src, x, &zero, dst, y), "cudnnPoolingForward");
      return;
    }
    const void* w = inputs[spec.weights_input];
    const void* residual = window.sum_input >= 0 ? inputs[window.sum_input] : nullptr;
    if (fused_bias_activation) {
      // y = act(conv(x) + alpha2·z + bias); z is y, unread, without a residual.
      const float alpha2 = residual ? 1 : 0;
      check(dnn->convolution_bias_activation(dnn_handle, &one, src, x, filter, w, convolution, convolution_algorithm,
                                             workspace, workspace_bytes, &alpha2, dst, residual ? residual : y, bias,
                                             inputs[spec.bias_input], activation, dst, y),
            "cudnnConvolutionBiasActivationForward");
      return;
    }
    // No bias here. A residual already in y (the output took its buffer) is
    // kept by beta = 1; another is added after.
    const float beta = residual == y ? 1 : 0;
    check(dnn->convolution(dnn_handle, &one, src, x, filter, w, convolution, convolution_algorithm, workspace,
                           workspace_bytes, &beta, dst, y),
          "cudnnConvolutionForward");
    if (window.bias)
      check(dnn->add_tensor(dnn_handle, &one, bias, inputs[spec.bias_input], &one, dst, y), "cudnnAddTensor");
    if (residual && residual != y)
      check(dnn->add_tensor(dnn_handle, &one, dst, residual, &one, dst, y), "cudnnAddTensor");
    if (window.relu)
      check(dnn->activation(dnn_handle, activation, &one, dst, y, &zero, dst, y), "cudnnActivationForward");
  }

  ~Impl() {
    if (lt) {
      if (a_layout) lt->layout_destroy(a_layout);
      if (b_layout) lt->layout_destroy(b_layout);
      if (d_layout) lt->layout_destroy(d_layout);
      if (operation) lt->desc_destroy(operation);
      if (lt_handle) lt->destroy(lt_handle);
    }
    if (dnn) {
      for (cudnnTensorDescriptor_t t : {src, dst, bias})
        if (t) dnn->tensor_destroy(t);
      if (filter) dnn->filter_destroy(filter);
      if (convolution) dnn->convolution_destroy(convolution);
      if (activation) dnn->activation_destroy(activation);
      if (pooling) dnn->pooling_destroy(pooling);
      if (dnn_handle) dnn->destroy(dnn_handle);
    }
  }
};

CudaLibraryPrimitive::CudaLibraryPrimitive(const PrimitiveSpec& spec, const CudaGpu& gpu)
    : impl_(std::make_unique<Impl>()) {
  Impl& p = *impl_;
  p.spec = spec;
  p.where = gpu.name() + ": the " + primitive_kind_name(spec.kind) + " primitive";
  std::string why;
  if (spec.kind == PrimitiveKind::kMatmul) {
    std::optional<CudaMatmulPlan> plan = plan_cuda_matmul(spec, why);
    if (!plan) throw RuntimeError(p.where + " cannot run with cuBLASLt: " + why);
    p.matmul = *plan;
    p.make_matmul(gpu.name());
  } else {
    std::optional<CudaWindowPlan> plan = plan_cuda_window(spec, why);
    if (!plan) throw RuntimeError(p.where + " cannot run with cuDNN: " + why);
    p.window = *plan;
    p.make_window(gpu.name());
  }
}

CudaLibraryPrimitive::~CudaLibraryPrimitive() = default;

void require_cuda_library(PrimitiveKind kind, const std::string& device) {
  if (kind == PrimitiveKind::kMatmul)
    cublaslt(device);
  else
    cudnn(device);
}

const PrimitiveSpec& CudaLibraryPrimitive::spec() const { return impl_->spec; }
size_t CudaLibraryPrimitive::workspace_bytes() const { return impl_->workspace_bytes; }

std::shared_ptr<const PreparedWeights> CudaLibraryPrimitive::prepare_weights(const void*) const { return nullptr; }

void CudaLibraryPrimitive::execute(const void* const* inputs, void* const* outputs, const PreparedWeights*,
                                   void* workspace, void* stream) const {
  const Impl& p = *impl_;
  std::lock_guard<std::mutex> lock(p.enqueue);
  if (p.spec.kind != PrimitiveKind::kMatmul) {
    p.check(p.dnn->set_stream(p.dnn_handle, static_cast<cudaStream_t>(stream)), "cudnnSetStream");
    p.run_window(inputs, outputs, workspace);
    return;
  }
  const CudaMatmulPlan& plan = p.matmul;
  const void* a = inputs[p.spec.weights_input];
  const void* b = inputs[p.spec.src_input];
  void* d = outputs[0];
  const void* c = plan.sum_input >= 0 ? inputs[plan.sum_input] : d;
  for (const void* matrix : {a, b, c, const_cast<const void*>(d)})
    if (reinterpret_cast<uintptr_t>(matrix) % plan.alignment != 0)
      throw RuntimeError(p.where + ": an operand at " + std::to_string(reinterpret_cast<uintptr_t>(matrix)) +
                         " is not " + std::to_string(plan.alignment) + "-byte aligned, as cuBLASLt was told");
  if (plan.bias) {
    const void* bias = inputs[p.spec.bias_input];
    p.check(p.lt->desc_set(p.operation, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)),
            "cublasLtMatmulDescSetAttribute(BIAS_POINTER)");
  }
  const float alpha = 1, beta = plan.sum_input >= 0 ? 1 : 0;
  p.check(p.lt->matmul(p.lt_handle, p.operation, &alpha, a, p.a_layout, b, p.b_layout, &beta, c, p.d_layout, d,
                       p.d_layout, &p.algorithm, workspace, p.workspace_bytes, static_cast<cudaStream_t>(stream)),
          "cublasLtMatmul");
}

}  // namespace switchyard
