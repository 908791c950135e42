// NDArray's deferred copies: bytes left where they are (unaligned, as inside
// a mapped ONNX file) until aligned data is asked for, then copied once.
#include "runtime/ndarray.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "runtime/runtime_error.h"

namespace switchyard {
namespace ndarray_test {

// Six floats starting one byte into a buffer, so they are misaligned.
std::shared_ptr<std::vector<uint8_t>> misaligned_floats() {
  auto buffer = std::make_shared<std::vector<uint8_t>>(1 + 6 * sizeof(float));
  for (int i = 0; i < 6; ++i) {
    float v = 0.5f * float(i) - 1.0f;
    std::memcpy(buffer->data() + 1 + i * sizeof(float), &v, sizeof v);
  }
  return buffer;
}

TEST(NDArray, DeferredCopyReadsInPlaceUntilDataIsAskedFor) {
  auto buffer = misaligned_floats();
  const uint8_t* source = buffer->data() + 1;
  NDArray a = NDArray::deferred_copy(DType::kFloat32, {2, 3}, source, buffer);
  NDArray shared = a.reshaped({3, 2});
  EXPECT_EQ(a.bytes(), source);
  EXPECT_EQ(shared.storage_identity(), a.storage_identity());

  const float* data = a.as<float>();
  EXPECT_NE(static_cast<const void*>(data), static_cast<const void*>(source));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(data) % 64, 0u);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(data[i], 0.5f * float(i) - 1.0f) << i;
  // The copy is made once and seen through every array sharing the storage.
  EXPECT_EQ(a.bytes(), data);
  EXPECT_EQ(shared.data(), data);
  EXPECT_EQ(shared.get_as_double(5), 1.5);
}

TEST(NDArray, DeferredCopyComparesAndCopiesWithoutCopyingItsBytes) {
  auto buffer = misaligned_floats();
  const uint8_t* source = buffer->data() + 1;
  NDArray a = NDArray::deferred_copy(DType::kFloat32, {6}, source, buffer);
  NDArray b(DType::kFloat32, {6});
  std::memcpy(b.data(), source, a.nbytes());
  EXPECT_TRUE(a.bitwise_equal(b));
  NDArray c = a.copy();
  EXPECT_TRUE(c.bitwise_equal(b));
  EXPECT_EQ(a.bytes(), source);  // neither comparing nor copying made it
  b.set_from_double(0, 7);
  EXPECT_FALSE(a.bitwise_equal(b));
}

TEST(NDArray, DeferredCopyKeepsItsOwnerAlive) {
  std::weak_ptr<std::vector<uint8_t>> watch;
  NDArray a;
  {
    auto buffer = misaligned_floats();
    watch = buffer;
    a = NDArray::deferred_copy(DType::kFloat32, {6}, buffer->data() + 1, buffer);
  }
  EXPECT_FALSE(watch.expired());
  EXPECT_EQ(a.as<float>()[1], -0.5f);
  a = NDArray();
  EXPECT_TRUE(watch.expired());
}

TEST(NDArray, DeferredCopyRefusesSizesAsAllocationDoes) {
  auto buffer = misaligned_floats();
  EXPECT_THROW(NDArray::deferred_copy(DType::kFloat32, {-1}, buffer->data(), buffer), std::invalid_argument);
  EXPECT_THROW(NDArray::deferred_copy(DType::kFloat32, {int64_t(1) << 62, 8}, buffer->data(), buffer), std::exception);
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kAddressSpaceIsReserved = true;  // the sanitizers map terabytes of shadow memory
#else
constexpr bool kAddressSpaceIsReserved = false;
#endif

// Caps this process's address space 64 MiB above what it maps now, so a
// 512 MiB array cannot be allocated although the machine has the memory.
void leave_no_room_for_large_arrays() {
  long pages = 0;
  FILE* statm = std::fopen("/proc/self/statm", "r");
  ASSERT_NE(statm, nullptr);
  ASSERT_EQ(std::fscanf(statm, "%ld", &pages), 1);
  std::fclose(statm);
  rlim_t limit = rlim_t(pages) * rlim_t(sysconf(_SC_PAGESIZE)) + (rlim_t(64) << 20);
  rlimit cap{limit, limit};
  ASSERT_EQ(setrlimit(RLIMIT_AS, &cap), 0);
}

// Runs `allocate` in a child whose address space is capped and prints what it threw.
void expect_out_of_memory_naming_the_array(void (*allocate)()) {
  EXPECT_EXIT(
      {
        leave_no_room_for_large_arrays();
        try {
          allocate();
        } catch (const RuntimeError& e) {
          std::fprintf(stderr, "%s\n", e.what());
          std::_Exit(3);
        }
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(3),
      "cannot allocate a float32 array of shape \\(128, 1048576\\): out of memory for its 536870912 bytes \\(512.0 MiB\\)");
}

TEST(NDArray, OutOfMemoryNamesTheArrayWhenAllocatedOrCopied) {
  if (kAddressSpaceIsReserved) GTEST_SKIP() << "a sanitizer build cannot cap its address space";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  expect_out_of_memory_naming_the_array([] { NDArray(DType::kFloat32, {128, 1 << 20}); });
  expect_out_of_memory_naming_the_array([] {
    static const float source = 0;  // never read: the copy fails before it reads
    NDArray::deferred_copy(DType::kFloat32, {128, 1 << 20}, &source, nullptr).data();
  });
}

}  // namespace ndarray_test
}  // namespace switchyard
