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

}  // namespace

RootRanking::RootRanking(std::uint64_t voxel_count, cudaStream_t stream)
    : words_(rank_words(voxel_count)),
      stream_(stream),
      bitmap_(words_, stream, "the root bitmap"),
      words_before_(words_ + 1, stream, "the root ranks"),
      scan_temp_(scan_temp_bytes(words_), stream, "the scan's temporary storage") {}

void RootRanking::clear() {
  VOLCCL_CUDA_CHECK(cudaMemsetAsync(bitmap_.data(), 0, bitmap_.bytes(), stream_));
}

void RootRanking::scan() {
  std::size_t temp_bytes = scan_temp_.size();
  VOLCCL_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(
      scan_temp_.data(), temp_bytes, population_counts(bitmap_.data(), words_),
      words_before_.data(), static_cast<std::int64_t>(words_ + 1), stream_));
}

void RootRanking::copy_count(std::uint32_t* host_count) {
  VOLCCL_CUDA_CHECK(cudaMemcpyAsync(host_count, words_before_.data() + words_,
                                    sizeof(std::uint32_t), cudaMemcpyDeviceToHost, stream_));
}

}  // namespace volccl::detail
