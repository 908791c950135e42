// Constants the printer writes as references instead of their data, as TVM
// writes meta[relay.Constant][i]: a printed ResNet-18 is otherwise 62 MB of
// base64 weights. Elided text is for reading; it does not parse back.
#pragma once

#include <string>
#include <unordered_map>

#include "ir/expr.h"

namespace switchyard {

class ElidedConstants {
 public:
  // With `show_weights`, every constant is written in full.
  explicit ElidedConstants(bool show_weights) : show_weights_(show_weights) {}

  // The constant's text: constant_text of its data, or, for one of more than
  // kMaxInlineElements elements, "meta[Constant][i] /* Tensor[(64), float32] */"
  // numbered in order of first printing (one number per node).
  std::string text(const ConstantNode* constant);

  // The comment line that starts an elided text, or "" when nothing was elided.
  std::string header() const;

 private:
  bool show_weights_;
  std::unordered_map<const ConstantNode*, size_t> numbers_;
};

}  // namespace switchyard
