// Constant weights stored in weights.bin already in the layout their
// primitives read (Winograd-transformed, packed in panels, or in oneDNN's
// blocking), so that a load reads them where the file is mapped: preparing
// ResNet-50's ~140 MB at load was most of its load time, and half of that
// the kernel zeroing fresh pages for them.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ir/compilation_config.h"
#include "lower/lower.h"
#include "runtime/manifest.h"
#include "targets/cpu/runtime/dnnl_primitive.h"

namespace switchyard {

// By manifest weight: the primitive that prepares it, or null for a weight
// stored as it is.
using WeightPreparers = std::vector<std::shared_ptr<const DnnlPrimitive>>;

// Marks the weights of `manifest` (kernels made, not yet laid out) that are
// stored prepared: those read only as the weights of primitive-only kernels
// on CPU devices whose primitives all take one layout. Sets their
// `prepared` and `nbytes`, lays the weights out again (layout_weights) and
// returns who prepares them. Primitives are made
// for the device's thread count at load by default; a load with another
// count whose oneDNN layout differs reorders from the stored one.
WeightPreparers mark_prepared_weights(const LoweredProgram& program, Manifest& manifest,
                                      const CompilationConfig& config);

}  // namespace switchyard
