// Constants written as meta[Constant][i] references (see elided_constants.h).
#include "text/elided_constants.h"

#include "ir/type.h"
#include "text/literals.h"

namespace switchyard {

std::string ElidedConstants::text(const ConstantNode* constant) {
  const NDArray& data = constant->data;
  if (show_weights_ || data.numel() <= kMaxInlineElements) return constant_text(data);
  size_t number = numbers_.emplace(constant, numbers_.size()).first->second;
  return "meta[Constant][" + std::to_string(number) + "] /* " +
         type_to_string(tensor_type(data.shape(), data.dtype())) + " */";
}

std::string ElidedConstants::header() const {
  if (numbers_.empty()) return "";
  return "# meta[Constant][i]: constants over " + std::to_string(kMaxInlineElements) +
         " elements are elided; this text does not parse back (print with show_weights=True, or "
         "--show-weights, for the full text)\n";
}

}  // namespace switchyard
