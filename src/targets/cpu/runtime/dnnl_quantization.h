// The int8 side of a oneDNN primitive (PrimitiveQuantization in
// runtime/primitive_spec.h): the element types of its buffers, its output
// scales and zero points as oneDNN's attributes, and the zero points'
// arguments of a call. oneDNN 2.6 takes the zero points at run time only
// (DNNL_RUNTIME_S32_VAL) in its int8 convolutions.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>
#include <unordered_map>

#include "runtime/primitive_spec.h"

namespace switchyard {

struct DnnlElementTypes {
  dnnl::memory::data_type src, weights, dst;
};

// float32 throughout for a float primitive. Throws RuntimeError for what the
// runtime does not run quantized: a pool or reorder, the runtime's own
// kernels, post-ops other than element-wise ones.
DnnlElementTypes dnnl_element_types(const PrimitiveSpec& spec);

// Sets the output scales (per output channel: dimension 1 of a
// convolution's destination, the last of a matmul's) and the zero points.
void set_quantization_attributes(const PrimitiveSpec& spec, dnnl::primitive_attr& attr);

// The zero points' arguments of a call, read from `spec` (which outlives it).
void add_zero_point_arguments(const PrimitiveSpec& spec, const dnnl::engine& engine,
                              std::unordered_map<int, dnnl::memory>& arguments);

}  // namespace switchyard
