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

// float32 throughout for a float primitive; an 8-bit max pool's type in and
// out. Throws RuntimeError for what the runtime does not run quantized: any
// other pool, a reorder, the runtime's own kernels, post-ops other than
// element-wise ones.
DnnlElementTypes dnnl_element_types(const PrimitiveSpec& spec);

// Whether `spec` is a max pool of 8-bit values (its quantization names the
// element type alone); throws RuntimeError for a pool quantized otherwise.
bool is_8bit_max_pool(const PrimitiveSpec& spec);

// Sets the output scales (per output channel: dimension 1 of a
// convolution's destination, the last of a matmul's) and the zero points.
void set_quantization_attributes(const PrimitiveSpec& spec, dnnl::primitive_attr& attr);

// The zero points' arguments of a call, read from `spec` (which outlives it).
void add_zero_point_arguments(const PrimitiveSpec& spec, const dnnl::engine& engine,
                              std::unordered_map<int, dnnl::memory>& arguments);

}  // namespace switchyard
