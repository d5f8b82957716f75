// The device half of raster_rank.h (RootRanking in cuda_support.cuh): an exclusive prefix sum of
// the bitmap words' population counts, with CUB, one element past the end so that the last
// entry is the component count.
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <cub/device/device_scan.cuh>

#include "cuda_support.cuh"
#include "volccl/detail/host_device.h"
#include "volccl/detail/raster_rank.h"

namespace volccl::detail {
namespace {

struct WordPopulation {
  const std::uint32_t* bitmap;
  std::uint64_t words;
  VOLCCL_HD std::uint32_t operator()(std::uint64_t w) const {
    return w < words ? popcount(bitmap[w]) : 0u;
  }
};

auto population_counts(const std::uint32_t* bitmap, std::uint64_t words) {
  return thrust::make_transform_iterator(thrust::counting_iterator<std::uint64_t>(0),
                                         WordPopulation{bitmap, words});
}

std::size_t scan_temp_bytes(std::uint64_t words) {
  std::size_t bytes = 0;
  VOLCCL_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, population_counts(nullptr, words),
                                                  static_cast<std::uint32_t*>(nullptr),
                                                  static_cast<std::int64_t>(words + 1)));
  return bytes;
}

// Bytes of the scan's temporary storage for `words`, asked of CUB once per size and device in
// each host thread: CUB's query costs the host microseconds, a visible share on small images.
std::size_t cached_scan_temp_bytes(std::uint64_t words) {
  struct Entry {
    int device = -1;
    std::uint64_t words = 0;
    std::size_t bytes = 0;
  };
  thread_local Entry last;
  int device = 0;
  VOLCCL_CUDA_CHECK(cudaGetDevice(&device));
  if (last.device != device || last.words != words) last = {device, words, scan_temp_bytes(words)};
  return last.bytes;
}

// Pinned host memory for the component count, allocated once per host thread: a copy to
// pageable memory would make the driver stage it and wait.
class PinnedCount {
 public:
  PinnedCount() { VOLCCL_CUDA_CHECK(cudaMallocHost(&count_, sizeof(std::uint32_t))); }
  ~PinnedCount() { cudaFreeHost(count_); }
  PinnedCount(const PinnedCount&) = delete;
  PinnedCount& operator=(const PinnedCount&) = delete;
  std::uint32_t* get() const { return count_; }

 private:
  std::uint32_t* count_ = nullptr;
};

std::uint32_t* pinned_count() {
  thread_local PinnedCount count;
  return count.get();
}

// The scan's temporary storage first, rounded up to 256 bytes so that the bitmap after it keeps
// the alignment cudaMallocAsync gives.
std::size_t aligned_scan_temp_bytes(std::uint64_t words) {
  return (cached_scan_temp_bytes(words) + 255) / 256 * 256;
}

}  // namespace

RootRanking::RootRanking(std::uint64_t voxel_count, cudaStream_t stream)
    : words_(rank_words(voxel_count)),
      stream_(stream),
      scan_temp_bytes_(aligned_scan_temp_bytes(words_)),
      storage_(scan_temp_bytes_ + (2 * words_ + 1) * sizeof(std::uint32_t), stream,
               "the root bitmap and ranks"),
      bitmap_(reinterpret_cast<std::uint32_t*>(storage_.data() + scan_temp_bytes_)),
      words_before_(bitmap_ + words_),
      host_count_(pinned_count()) {}

void RootRanking::clear() {
  VOLCCL_CUDA_CHECK(cudaMemsetAsync(bitmap_, 0, words_ * sizeof(std::uint32_t), stream_));
}

void RootRanking::scan() {
  std::size_t temp_bytes = scan_temp_bytes_;
  VOLCCL_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(storage_.data(), temp_bytes,
                                                  population_counts(bitmap_, words_), words_before_,
                                                  static_cast<std::int64_t>(words_ + 1), stream_));
}

void RootRanking::copy_count() {
  VOLCCL_CUDA_CHECK(cudaMemcpyAsync(host_count_, words_before_ + words_, sizeof(std::uint32_t),
                                    cudaMemcpyDeviceToHost, stream_));
}

}  // namespace volccl::detail
