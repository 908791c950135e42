// The text of include/switchyard/model_abi.h, embedded at build time (CMake
// writes model_abi_text.cc from model_abi_text.cc.in), so the toolchain can
// hand generated kernels the header without a source tree: an installed or
// moved compiler still builds models.
#pragma once

#include <string_view>

namespace switchyard {

std::string_view model_abi_header_text();

}  // namespace switchyard
