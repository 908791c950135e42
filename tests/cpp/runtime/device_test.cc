// CPU devices: aligned, tracked allocation; copies between devices; parallel work.
#include "runtime/device.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "runtime/runtime_error.h"
#include "targets/cpu/runtime/cpu_device.h"

namespace switchyard {
namespace device_test {

TEST(CpuDevice, AllocationsAreAlignedAndTracked) {
  CpuDevice device(3, std::make_shared<ThreadPool>(1));
  EXPECT_EQ(device.name(), "cpu:3");
  EXPECT_EQ(device.kind(), "cpu");
  EXPECT_EQ(device.id(), 3);
  EXPECT_TRUE(device.host_accessible());

  void* a = device.allocate(100);  // rounded to 128
  void* b = device.allocate(64);
  void* empty = device.allocate(0);  // still a distinct block
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % kDeviceAlignment, 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b) % kDeviceAlignment, 0u);
  ASSERT_NE(empty, nullptr);
  EXPECT_NE(empty, a);
  std::memset(a, 7, 100);
  DeviceMemoryStats stats = device.memory_stats();
  EXPECT_EQ(stats.bytes_in_use, 128u + 64u + 64u);
  EXPECT_EQ(stats.live_allocations, 3u);

  device.free(a);
  device.free(nullptr);
  stats = device.memory_stats();
  EXPECT_EQ(stats.bytes_in_use, 128u);
  EXPECT_EQ(stats.peak_bytes, 256u);
  EXPECT_EQ(stats.live_allocations, 2u);

  int not_from_device = 0;
  EXPECT_THROW(device.free(&not_from_device), RuntimeError);
  EXPECT_THROW(device.free(a), RuntimeError);  // already freed
  device.free(b);
  device.free(empty);
  EXPECT_EQ(device.memory_stats().bytes_in_use, 0u);
  EXPECT_EQ(device.memory_stats().peak_bytes, 256u);
}

// The CPU device answers for the features a manifest device requires (the
// artifact prefixes where): those it lacks are named, unknown ones too.
TEST(CpuDevice, NamesTheCpuFeaturesItLacks) {
  CpuDevice device(0, std::make_shared<ThreadPool>(1));
  EXPECT_EQ(device.cannot_run_cpu_features({}), "");
  EXPECT_EQ(device.cannot_run_cpu_features({"warp_drive", "time_travel"}),
            "model.so was compiled for CPU features this machine lacks: warp_drive, time_travel; compile the model "
            "on (or for) this machine");
}

TEST(CpuDevice, ImpossibleAllocationIsAnError) {
  CpuDevice device(0, std::make_shared<ThreadPool>(1));
  try {
    device.allocate(size_t(1) << 62);
    FAIL() << "allocated 4 EiB";
  } catch (const RuntimeError& e) {
    EXPECT_EQ(
        std::string(e.what()).rfind("cpu:0: out of memory allocating 4611686018427387904 bytes (the machine has ", 0),
        0u)
        << e.what();
  }
  EXPECT_THROW(device.allocate(SIZE_MAX), RuntimeError);
  EXPECT_EQ(device.memory_stats().bytes_in_use, 0u);
}

TEST(CpuDevice, BuffersFreeThemselvesAndMove) {
  CpuDevice device(0, std::make_shared<ThreadPool>(1));
  {
    DeviceBuffer first(device, 1000);
    EXPECT_EQ(first.bytes(), 1000u);
    EXPECT_EQ(device.memory_stats().bytes_in_use, 1024u);
    DeviceBuffer second = std::move(first);
    EXPECT_EQ(first.data(), nullptr);
    EXPECT_EQ(second.device(), &device);
    DeviceBuffer third(device, 10);
    third = std::move(second);  // frees third's own block
    EXPECT_EQ(device.memory_stats().bytes_in_use, 1024u);
  }
  EXPECT_EQ(device.memory_stats().bytes_in_use, 0u);
}

TEST(CpuDevice, CopiesBetweenDevicesAreRecordedAtTheDestination) {
  auto pool = std::make_shared<ThreadPool>(1);
  CpuDevice source(0, pool), destination(1, pool);
  DeviceBuffer from(source, 256), to(destination, 256);
  std::vector<uint8_t> pattern(256);
  for (size_t i = 0; i < pattern.size(); ++i) pattern[i] = uint8_t(i * 3);
  source.copy_from_host(from.data(), pattern.data(), pattern.size());
  copy_between_devices(destination, to.data(), source, from.data(), 256);
  copy_between_devices(destination, to.data(), source, from.data(), 0);
  std::vector<uint8_t> back(256);
  destination.copy_to_host(back.data(), to.data(), back.size());
  EXPECT_EQ(back, pattern);
  EXPECT_EQ(destination.memory_stats().copies_in, 2u);
  EXPECT_EQ(destination.memory_stats().bytes_copied_in, 256u);
  EXPECT_EQ(source.memory_stats().copies_in, 0u);
}

TEST(CpuDevice, ParallelWorkRunsOnTheDevicesPool) {
  CpuDevice device(0, std::make_shared<ThreadPool>(3));
  EXPECT_EQ(device.num_threads(), 3);
  std::vector<std::atomic<int>> hits(1000);
  device.parallel_for(1000, 10, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) hits[size_t(i)]++;
  });
  for (const auto& hit : hits) EXPECT_EQ(hit.load(), 1);
}

// What only a device that runs its own code offers is a clear error on a
// CPU, naming it; filling words is plain host memory.
TEST(CpuDevice, RunsNoDeviceImagesAndHasNoLibraryOfItsOwn) {
  CpuDevice device(2, std::make_shared<ThreadPool>(1));
  auto message_of = [](const std::function<void()>& call) {
    try {
      call();
    } catch (const RuntimeError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message_of([&] { device.load_functions({1, 2, 3}, {"f"}); }), "cpu:2 runs no device images");
  EXPECT_EQ(message_of([&] { device.launch(nullptr, 1, 1, nullptr, 0); }), "cpu:2 launches no device functions");
  EXPECT_FALSE(device.has_own_library());
  EXPECT_NE(message_of([&] { device.make_library_primitive(PrimitiveSpec{}); }).find("cpu:2 has no library of its own"),
            std::string::npos);
  EXPECT_EQ(device.make_pinned_host_memory(device), nullptr);
  EXPECT_EQ(device.cannot_run_compute_capability(0), "");
  EXPECT_NE(device.cannot_run_compute_capability(80).find("cpu:2 is not a GPU"), std::string::npos);
  std::vector<uint32_t> words(4, 7);
  device.set_words(words.data() + 1, 0, 2);
  EXPECT_EQ(words, (std::vector<uint32_t>{7, 0, 0, 7}));
}

}  // namespace device_test
}  // namespace switchyard
