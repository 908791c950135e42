// The CPU device (runtime/device.h's Device for host memory and the
// thread pool).
#pragma once

#include <memory>

#include "runtime/device.h"
#include "runtime/thread_pool.h"

namespace switchyard {

// A CPU device: host memory from the aligned heap, parallel work on a thread
// pool (shared with other CPU devices, or its own share of the cores).
class CpuDevice final : public Device {
 public:
  CpuDevice(int id, std::shared_ptr<ThreadPool> pool);
  ~CpuDevice() override;

  bool host_accessible() const override { return true; }
  void* allocate(size_t bytes) override;
  void free(void* pointer) override;
  void copy_from_host(void* device_destination, const void* host_source, size_t bytes) override;
  void copy_to_host(void* host_destination, const void* device_source, size_t bytes) override;
  void copy_within(void* destination, const void* source, size_t bytes) override;
  void synchronize() override {}
  void parallel_for(int64_t n, int64_t grain, const ParallelBody& body) override;
  int num_threads() const override { return pool_->num_threads(); }
  std::string cannot_run_cpu_features(const std::vector<std::string>& cpu_features) const override;

 private:
  std::shared_ptr<ThreadPool> pool_;
};

}  // namespace switchyard
