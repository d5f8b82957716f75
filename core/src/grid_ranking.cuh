// The raster-order ranking of raster_rank.h inside one cooperative kernel, for the labelers that
// run all their steps in a single launch (grid-wide barriers between the steps instead of kernel
// boundaries): the root bitmap cleared, then, once every root is marked, each word's rank. It
// replaces RootRanking's memset and CUB scan, two launches and their host calls, which cost more
// than the work itself on a 2048^2 image. Internal; included only by .cu files.
#pragma once

#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

#include "cuda_support.cuh"
#include "volccl/detail/host_device.h"

namespace volccl::detail {

// Thread blocks of the single-launch kernels: 1-D, this many threads.
constexpr std::uint32_t kGridThreads = 128;

// Where the in-kernel ranking keeps its results and partial sums, in device memory.
struct GridRanking {
  std::uint32_t* bitmap;        // rank_words(voxels) words, one bit per voxel
  std::uint32_t* words_before;  // words + 1 entries; the last is the component count
  std::uint32_t* cta_counts;    // one per thread block of the launch
  std::uint64_t words;
};

// The bitmap words thread block `blockIdx.x` ranks: a contiguous share.
struct WordShare {
  std::uint64_t begin, end;
};

__device__ inline WordShare word_share(std::uint64_t words) {
  const std::uint64_t per_block = (words + gridDim.x - 1) / gridDim.x;
  const std::uint64_t begin = min(words, blockIdx.x * per_block);
  return {begin, min(words, begin + per_block)};
}

// Every thread of the grid calls it before the roots are marked (a grid barrier between).
__device__ inline void clear_root_bitmap(const GridRanking& ranking) {
  const std::uint64_t stride = std::uint64_t{gridDim.x} * blockDim.x;
  for (std::uint64_t w = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; w < ranking.words;
       w += stride) {
    ranking.bitmap[w] = 0;
  }
}

// Every thread of the grid calls it after every root is marked and a grid barrier: each block
// counts the roots of its share of the words, the blocks wait for each other, then each block
// adds the counts of the blocks before it and scans its share tile by tile. The last block also
// writes the total after the last word. blockDim.x must be kGridThreads.
__device__ inline void rank_root_bitmap(const GridRanking& ranking,
                                        cooperative_groups::grid_group& grid) {
  using Reduce = cub::BlockReduce<std::uint32_t, kGridThreads>;
  using Scan = cub::BlockScan<std::uint32_t, kGridThreads>;
  __shared__ union {
    typename Reduce::TempStorage reduce;
    typename Scan::TempStorage scan;
  } temp;
  __shared__ std::uint32_t offset;

  const WordShare share = word_share(ranking.words);
  std::uint32_t count = 0;
  for (std::uint64_t w = share.begin + threadIdx.x; w < share.end; w += kGridThreads) {
    count += popcount(ranking.bitmap[w]);
  }
  count = Reduce(temp.reduce).Sum(count);
  if (threadIdx.x == 0) ranking.cta_counts[blockIdx.x] = count;
  grid.sync();

  std::uint32_t before = 0;
  for (std::uint32_t b = threadIdx.x; b < blockIdx.x; b += kGridThreads) {
    before += ranking.cta_counts[b];
  }
  __syncthreads();  // temp.reduce is reused
  before = Reduce(temp.reduce).Sum(before);
  if (threadIdx.x == 0) offset = before;
  __syncthreads();

  for (std::uint64_t tile = share.begin; tile < share.end; tile += kGridThreads) {
    const std::uint64_t w = tile + threadIdx.x;
    const std::uint32_t word_count = w < share.end ? popcount(ranking.bitmap[w]) : 0;
    std::uint32_t prefix = 0, tile_total = 0;
    Scan(temp.scan).ExclusiveSum(word_count, prefix, tile_total);
    if (w < share.end) ranking.words_before[w] = offset + prefix;
    __syncthreads();  // everyone has read `offset` and temp.scan
    if (threadIdx.x == 0) offset += tile_total;
    __syncthreads();
  }
  if (blockIdx.x == gridDim.x - 1 && threadIdx.x == 0) {
    ranking.words_before[ranking.words] = offset;
  }
}

// The largest grid of `kernel` (kGridThreads threads per block) whose blocks are all resident
// at once, as a cooperative launch needs; 0 when the device cannot launch cooperatively.
int cooperative_grid_limit(const void* kernel);

}  // namespace volccl::detail
