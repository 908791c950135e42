// A primitive's buffer (PrimitiveTensor: dims with strides, or one of the
// blocked formats the planner names) as oneDNN's memory descriptor.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>
#include <string>

#include "runtime/primitive_spec.h"

namespace switchyard {

// oneDNN's tag for a blocked format the planner names ("nChw8c",
// "nChw16c", "nhwc"); throws RuntimeError for any other.
dnnl::memory::format_tag dnnl_format_named(const std::string& name);

// The layout of a kernel's buffer, of `type` (float32 unless an int8
// primitive's). Throws RuntimeError for a format it does not know.
dnnl::memory::desc dnnl_buffer_desc(const PrimitiveTensor& tensor,
                                    dnnl::memory::data_type type = dnnl::memory::data_type::f32);

// Dense strides of `dims`, the last dimension innermost.
dnnl::memory::dims dnnl_dense_strides(const dnnl::memory::dims& dims);

}  // namespace switchyard
