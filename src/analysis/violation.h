// A broken invariant: what is wrong and at which node.
#pragma once

#include <optional>
#include <string>

#include "ir/expr.h"

namespace switchyard {

struct Violation {
  std::string message;
  Expr node;
};

}  // namespace switchyard
