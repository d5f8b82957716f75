// The CPU backend's arrays on 2 MiB pages (runtime/page_array.h): aligned, whole, movable, and
// allocated so that a labeling's arrays fit again where the last labeling's were.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <utility>
#include <vector>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "runtime/page_array.h"

namespace volccl::test {
namespace {

using detail::kHugePage;
using detail::PageArray;

bool on_huge_page(const void* address) {
  return reinterpret_cast<std::uintptr_t>(address) % kHugePage == 0;
}

TEST(PageArray, LargeArraysStartOnAHugePageAndHoldEveryElement) {
  const std::size_t large = 2 * kHugePage / sizeof(std::uint32_t);
  for (std::size_t count : {large - 1, large, large + 1, 3 * large + 7}) {
    PageArray<std::uint32_t> array(count);
    ASSERT_NE(array.get(), nullptr);
    if (count >= large) {
      EXPECT_TRUE(on_huge_page(array.get())) << count << " elements";
    }
    for (std::size_t i = 0; i < count; ++i) array[i] = static_cast<std::uint32_t>(i * 2654435761u);
    for (std::size_t i = 0; i < count; i += 4093) {
      ASSERT_EQ(array[i], static_cast<std::uint32_t>(i * 2654435761u)) << i << " of " << count;
    }
    EXPECT_EQ(array[count - 1], static_cast<std::uint32_t>((count - 1) * 2654435761u));
  }
}

TEST(PageArray, EmptyAndSmallArraysAreUsable) {
  PageArray<std::uint64_t> empty(0);
  EXPECT_NE(empty.get(), nullptr);
  PageArray<std::uint8_t> bytes(3);
  bytes[0] = 1;
  bytes[2] = 3;
  EXPECT_EQ(bytes[0] + bytes[2], 4);
}

TEST(PageArray, MovesHandOverTheArray) {
  PageArray<std::uint32_t> first(3 * kHugePage / sizeof(std::uint32_t));
  first[5] = 55;
  const std::uint32_t* const address = first.get();
  PageArray<std::uint32_t> second(std::move(first));
  EXPECT_EQ(first.get(), nullptr);
  EXPECT_EQ(second.get(), address);
  EXPECT_EQ(second[5], 55u);
  PageArray<std::uint32_t> third(16);
  third = std::move(second);
  EXPECT_EQ(third.get(), address);
  EXPECT_EQ(third[5], 55u);
}

#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__)
// A labeling allocates two large arrays with small ones between them, and frees them all. Where
// the heap is neither trimmed nor mapped (as the benchmarks run NumPy and cc3d), the next
// labeling's arrays must land where the last one's were: when the padding of an aligned
// allocation was a chunk of its own, the small arrays settled in it, and the heap grew by a large
// array on every call. Exits with 0 where every round's arrays lie where the second round's did.
[[noreturn]] void allocate_as_labelings_do_and_exit() {
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  const std::size_t mebibyte = std::size_t{1} << 20;
  std::vector<const void*> second_round;
  bool same = true;
  for (int round = 0; round < 6; ++round) {
    PageArray<std::uint64_t> bits(35 * mebibyte / sizeof(std::uint64_t));
    void* const offsets = std::malloc(mebibyte);
    PageArray<std::uint32_t> parents(50 * mebibyte / sizeof(std::uint32_t));
    void* const roots = std::malloc(3 * mebibyte / 2);
    const std::vector<const void*> addresses{bits.get(), parents.get()};
    std::free(offsets);
    std::free(roots);
    if (round == 1) second_round = addresses;
    if (round > 1 && addresses != second_round) same = false;
  }
  std::exit(same ? 0 : 1);
}
#endif

// In a child process, as malloc's settings are the process's.
TEST(PageArray, ALabelingsArraysFitAgainWhereTheLastOnesWere) {
#if !defined(__GLIBC__)
  GTEST_SKIP() << "the heap's settings that this test sets are glibc's";
#elif defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer's allocator holds freed blocks back, in place of glibc's heap";
#else
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(allocate_as_labelings_do_and_exit(), ::testing::ExitedWithCode(0), "");
#endif
}

}  // namespace
}  // namespace volccl::test
