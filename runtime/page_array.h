// Host arrays on 2 MiB pages, as NumPy asks for its large arrays: on the hosts volccl runs on,
// faulting in a 4 KiB page costs about as much as a labeling's writes to it. Plain C++.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <utility>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace volccl::detail {

constexpr std::size_t kHugePage = std::size_t{1} << 21;

// Asks Linux for 2 MiB pages over the whole huge pages inside [begin, begin + bytes), before
// they are first touched; elsewhere a no-op.
inline void advise_huge_pages(void* begin, std::size_t bytes) {
#if defined(__linux__)
  const auto first = (reinterpret_cast<std::uintptr_t>(begin) + kHugePage - 1) / kHugePage;
  const auto last = (reinterpret_cast<std::uintptr_t>(begin) + bytes) / kHugePage;
  if (last > first) {
    madvise(reinterpret_cast<void*>(first * kHugePage), (last - first) * kHugePage, MADV_HUGEPAGE);
  }
#else
  (void)begin;
  (void)bytes;
#endif
}

// An uninitialized array on 2 MiB pages where Linux grants them. A large one is a single block
// from malloc, aligned within it, not aligned_alloc's: aligned_alloc frees the padding before the
// array as a chunk of its own, where the labeling's small allocations then settle, so that the
// freed array no longer coalesces with its neighbours. Then the next labeling's arrays did not
// fit where the last one's were, and where the heap is not trimmed it grew on every call.
template <typename T>
class PageArray {
 public:
  explicit PageArray(std::size_t count) {
    std::size_t bytes = std::max<std::size_t>(count, 1) * sizeof(T);
    if (bytes >= 2 * kHugePage) {
      bytes = (bytes + kHugePage - 1) / kHugePage * kHugePage;
      block_ = std::malloc(bytes + kHugePage);
      if (block_ == nullptr) throw std::bad_alloc();
      const auto address = reinterpret_cast<std::uintptr_t>(block_);
      data_ = reinterpret_cast<T*>((address + kHugePage - 1) / kHugePage * kHugePage);
      advise_huge_pages(data_, bytes);
    } else {
      block_ = std::malloc(bytes);
      if (block_ == nullptr) throw std::bad_alloc();
      data_ = static_cast<T*>(block_);
    }
  }
  PageArray() = default;
  PageArray(PageArray&& other) noexcept
      : block_(std::exchange(other.block_, nullptr)), data_(std::exchange(other.data_, nullptr)) {}
  PageArray& operator=(PageArray&& other) noexcept {
    std::swap(block_, other.block_);
    std::swap(data_, other.data_);
    return *this;
  }
  ~PageArray() { std::free(block_); }
  T* get() const { return data_; }
  T& operator[](std::size_t i) const { return data_[i]; }

 private:
  void* block_ = nullptr;
  T* data_ = nullptr;
};

}  // namespace volccl::detail
