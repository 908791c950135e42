// The error the runtime throws: the runtime links nothing of the compiler, so
// it cannot use switchyard::Error; messages name the file, field or input.
#pragma once

#include <stdexcept>
#include <string>

namespace switchyard {

class RuntimeError : public std::runtime_error {
 public:
  explicit RuntimeError(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace switchyard
