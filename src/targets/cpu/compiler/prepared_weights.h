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
#include "targets/code_generators.h"

namespace switchyard {

// The CPU's CodeGenerator::mark_prepared_weights: marks the weights of
// `manifest` (kernels made) that are stored prepared: those read only as
// the weights of primitive-only kernels on CPU devices whose primitives all
// take one layout. Sets their `prepared` and `nbytes`, and in `preparers`
// (one per weight) the primitive that prepares each. Primitives are made
// for the device's thread count at load by default; a load with another
// count whose oneDNN layout differs reorders from the stored one.
void mark_cpu_prepared_weights(const LoweredProgram& program, Manifest& manifest, const CompilationConfig& config,
                               WeightPreparers& preparers);

}  // namespace switchyard
