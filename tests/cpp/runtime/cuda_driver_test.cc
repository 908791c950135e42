// The CUDA driver is loaded only when a GPU is asked for: without one (this
// machine, CI) asking fails with a message naming the device and what is
// missing, and nothing else in the runtime notices.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include "targets/cuda/runtime/cuda_driver.h"
#include "runtime/runtime_error.h"

namespace switchyard::testing {
namespace cuda_driver_test {

bool driver_installed() {
  void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (library) dlclose(library);
  return library != nullptr;
}

TEST(CudaDriver, WithoutTheDriverOpeningAGpuNamesItAndTheMissingDriver) {
  if (driver_installed()) GTEST_SKIP() << "libcuda.so.1 is installed here: the missing-driver error is not checked";
  for (int ordinal : {0, 1}) {
    try {
      CudaGpu::open(ordinal);
      FAIL() << "opened a GPU without a driver";
    } catch (const RuntimeError& e) {
      std::string expected = "cuda:" + std::to_string(ordinal) +
                             ": no GPU can be used: the CUDA driver is not installed (libcuda.so.1";
      EXPECT_EQ(std::string(e.what()).rfind(expected, 0), 0u) << e.what();
    }
  }
}

TEST(CudaDriver, WithTheDriverAMissingGpuIsNamed) {
  if (!driver_installed()) GTEST_SKIP() << "no libcuda.so.1 here: there is no GPU to open";
  try {
    CudaGpu::open(1000);
    FAIL() << "opened cuda:1000";
  } catch (const RuntimeError& e) {
    std::string what = e.what();
    // No such GPU, or (a driver without GPUs) the driver did not start.
    EXPECT_EQ(what.rfind("cuda:1000: no ", 0), 0u) << what;
  }
}

}  // namespace cuda_driver_test
}  // namespace switchyard::testing
