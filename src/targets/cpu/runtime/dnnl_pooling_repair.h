// Where oneDNN's float32 pools depart from the rules of docs/operators.md
// ("Edge cases"), the few outputs concerned are computed again as the
// reference interpreter computes them. oneDNN starts a max-pool window at
// the lowest float, not -inf, so a window of -inf (or with no element in
// the data) gives -3.4e38; and it sums an average pool's window in float,
// so huge values overflow to inf where the rule's double sum does not.
// Only outputs that can be such a case (a max of exactly the lowest float,
// an average that is not finite) are recomputed, from the source, so the
// common case costs one pass over the result; and oneDNN's max skips a NaN,
// which the rule lets win, so a max pool also scans its source for NaN and
// recomputes every output when it finds one.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include "runtime/primitive_spec.h"
#include "runtime/thread_pool.h"

namespace switchyard {

// Repairs `dst` (laid out as `dst_layout`), the result of the pooling
// `spec` on `src` (as `src_layout`). The pool must have no post-ops: they
// would have changed the values this looks for. Its scans run on
// `parallel_for`.
void repair_pooling_outputs(const PrimitiveSpec& spec, const dnnl::memory::desc& src_layout, const float* src,
                            const dnnl::memory::desc& dst_layout, float* dst, const ParallelFor& parallel_for);

}  // namespace switchyard
