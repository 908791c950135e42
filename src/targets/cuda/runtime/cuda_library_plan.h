// How a PrimitiveSpec maps onto cuBLASLt's and cuDNN's calls, worked out
// from the spec alone: the compiler asks whether a spec maps at all
// (cuda_library_makes) on a machine without a GPU, and the primitive
// (cuda_library_primitive.cc) makes its descriptors from the same plan.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "runtime/primitive_spec.h"

namespace switchyard {

// A column-major matrix as cuBLASLt reads it, and whether the product
// transposes it.
struct CudaLibraryMatrix {
  bool transposed = false;
  int64_t rows = 0, columns = 0, leading = 0;
  int64_t batch_stride = 0;  // elements between the batch's matrices; 0: one matrix for all
};

// D = A·B as cuBLASLt computes it, column-major: the spec's row-major
// dst = src·weights is dstᵀ = weightsᵀ·srcᵀ, so cuBLASLt's A is the
// weights, its B the source and its D the destination, each as read
// transposed.
struct CudaMatmulPlan {
  int64_t batch = 1;
  CudaLibraryMatrix a, b, d;  // C, when summed, is laid out as D
  bool bias = false, relu = false;
  int sum_input = -1;  // the kernel input added as C (beta = 1), or -1
  // The bytes every matrix's address is a multiple of, given 16-byte aligned
  // buffers: less where a batch's stride is not a multiple of 16 bytes.
  uint32_t alignment = 16;
};

// A convolution or pool as cuDNN's 4-d NCHW descriptors take it.
struct CudaWindowPlan {
  std::array<int, 4> src_dims{}, src_strides{}, dst_dims{}, dst_strides{};
  std::array<int, 4> filter_dims{};  // K, C per group, R, S (convolutions)
  int groups = 1;
  std::array<int, 2> padding{}, strides{}, dilation{}, window{};  // cuDNN's: dilation 1 is dense
  bool bias = false, relu = false;
  int sum_input = -1;  // the kernel input added before the activation, or -1
};

// The plans, or nullopt with `why` saying what does not map.
std::optional<CudaMatmulPlan> plan_cuda_matmul(const PrimitiveSpec& spec, std::string& why);
std::optional<CudaWindowPlan> plan_cuda_window(const PrimitiveSpec& spec, std::string& why);

}  // namespace switchyard
