#include "targets/cpu/runtime/dnnl_tensor_desc.h"

#include "runtime/runtime_error.h"

namespace switchyard {

dnnl::memory::format_tag dnnl_format_named(const std::string& name) {
  using Tag = dnnl::memory::format_tag;
  if (name == "nChw8c") return Tag::nChw8c;
  if (name == "nChw16c") return Tag::nChw16c;
  if (name == "nhwc") return Tag::nhwc;
  throw RuntimeError("unknown oneDNN format '" + name + "'");
}

dnnl::memory::desc dnnl_buffer_desc(const PrimitiveTensor& t, dnnl::memory::data_type type) {
  return t.format.empty() ? dnnl::memory::desc(t.dims, type, t.strides)
                          : dnnl::memory::desc(t.dims, type, dnnl_format_named(t.format));
}

dnnl::memory::dims dnnl_dense_strides(const dnnl::memory::dims& dims) {
  dnnl::memory::dims strides(dims.size(), 1);
  for (size_t d = dims.size(); d-- > 1;) strides[d - 1] = strides[d] * dims[d];
  return strides;
}

}  // namespace switchyard
