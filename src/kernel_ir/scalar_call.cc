// Structural identity of the kernel IR's operator nodes.
#include "kernel_ir/scalar_call.h"

#include <functional>
#include <string>

#include "kernel_ir/hash.h"

namespace switchyard {

size_t scalar_call_hash(const ScalarCall& c) {
  size_t h = std::hash<std::string>()(c.op->name);
  h = kernel_ir::hash_mix(h, attrs_hash(c.attrs));
  for (DType d : c.arg_dtypes) h = kernel_ir::hash_mix(h, size_t(d));
  return kernel_ir::hash_mix(h, size_t(c.result_dtype));
}

bool scalar_call_equal(const ScalarCall& a, const ScalarCall& b) {
  return a.op == b.op && attrs_equal(a.attrs, b.attrs) && a.arg_dtypes == b.arg_dtypes &&
         a.result_dtype == b.result_dtype;
}

}  // namespace switchyard
