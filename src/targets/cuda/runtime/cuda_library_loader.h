// A CUDA library (cuBLASLt, cuDNN) opened with dlopen and the entry points a
// primitive calls, each looked up by name. Opening is attempted once per
// process; why it failed is kept, so every GPU that asks later is told, by
// name, what is missing.
#pragma once

#include <string>

namespace switchyard {

class CudaLibraryLoad {
 public:
  // `title` names the library in errors ("cuBLASLt"); `file` is what dlopen
  // is given ("libcublasLt.so.13").
  CudaLibraryLoad(const char* title, const char* file);
  // Looks up `symbol` unless something already failed; a missing one is
  // kept as the reason the library cannot be used.
  template <typename Function>
  void resolve(Function& function, const char* symbol) {
    function = reinterpret_cast<Function>(lookup(symbol));
  }
  // Throws RuntimeError naming `device` and the library when it could not be
  // loaded or lacks an entry point.
  void require(const std::string& device) const;

 private:
  void* lookup(const char* symbol);

  const char* title_;
  const char* file_;
  void* handle_ = nullptr;
  std::string error_;  // why it cannot be used; empty when it can
};

}  // namespace switchyard
