#include "targets/cuda/runtime/cuda_library_loader.h"

#include <dlfcn.h>

#include "runtime/runtime_error.h"

namespace switchyard {

CudaLibraryLoad::CudaLibraryLoad(const char* title, const char* file) : title_(title), file_(file) {
  handle_ = dlopen(file, RTLD_NOW | RTLD_LOCAL);
  if (!handle_) {
    const char* why = dlerror();
    error_ = std::string("it is not installed (") + (why ? why : file) + ")";
  }
}

void* CudaLibraryLoad::lookup(const char* symbol) {
  if (!error_.empty()) return nullptr;
  void* address = dlsym(handle_, symbol);
  if (!address) error_ = std::string(file_) + " has no " + symbol + " (an older " + title_ + "?)";
  return address;
}

void CudaLibraryLoad::require(const std::string& device) const {
  if (!error_.empty()) throw RuntimeError(device + ": " + title_ + " cannot be used: " + error_);
}

}  // namespace switchyard
