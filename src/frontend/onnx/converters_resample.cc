// Converters of ONNX's resampling and padding operators: Pad, Resize, Tile
// and ConvTranspose.
#include "frontend/onnx/converters.h"

namespace switchyard {

void register_resample_converters() {}

}  // namespace switchyard
