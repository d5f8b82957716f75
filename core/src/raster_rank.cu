// The device half of raster_rank.h: an exclusive prefix sum of the bitmap words' population
// counts, with CUB, one element past the end so that the last entry is the component count.
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <cub/device/device_scan.cuh>

#include "cuda_support.cuh"
#include "volccl/detail/host_device.h"

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

}  // namespace

std::size_t rank_scan_temp_bytes(std::uint64_t words) {
  std::size_t bytes = 0;
  VOLCCL_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, population_counts(nullptr, words),
                                                  static_cast<std::uint32_t*>(nullptr),
                                                  static_cast<std::int64_t>(words + 1)));
  return bytes;
}

void rank_scan(const std::uint32_t* bitmap, std::uint32_t* words_before, std::uint64_t words,
               void* temp, std::size_t temp_bytes, cudaStream_t stream) {
  VOLCCL_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp, temp_bytes,
                                                  population_counts(bitmap, words), words_before,
                                                  static_cast<std::int64_t>(words + 1), stream));
}

}  // namespace volccl::detail
