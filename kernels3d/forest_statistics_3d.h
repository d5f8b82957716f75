// The Late statistics of BUF and BKE from their block forest (forest_statistics_3d.cu), called by
// their CUDA labeler (buf_bke_3d.cu) between the ranking and FinalLabeling. Internal; included
// only by .cu files.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels3d/block_logic_3d.h"
#include "volccl/cuda.h"

namespace volccl::detail {

// Whether the forest's pass beats the Late pass over the label image: with components of a few
// voxels each, where the latter's shared table and 128-byte row per piece cost most
// (bench/notes/statistics.md). One component per 64 voxels or more: far blocks, added by
// atomics, are then few.
inline bool forest_moments_pay(std::uint64_t voxels, std::uint32_t count) {
  return count >= voxels / 64;
}

// What the pass reads: the forest in the label image (each block's anchor slot its root's key,
// its info slot its foreground byte), the input for blocks of one voxel, and the ranking.
struct BlockForest {
  kernels3d::BlockGrid grid;
  const std::uint8_t* mask;
  const std::uint32_t* labels;
  const std::uint32_t* root_bitmap;
  const std::uint32_t* words_before;
};

// The `count` components' rows, each stored whole by its root block from the blocks of its
// window, enqueued on `stream`.
cuda::DeviceMoments forest_moments(const BlockForest& forest, std::uint32_t count,
                                   cudaStream_t stream);

// FinalLabeling (`labeling`), which also adds each far block to its row of `table`, enqueued on
// `stream` after forest_moments: it overwrites the forest.
void label_adding_far_blocks(const BlockForest& forest, const kernels3d::FinalLabeling& labeling,
                             const cuda::DeviceMoments& table, cudaStream_t stream);

}  // namespace volccl::detail
