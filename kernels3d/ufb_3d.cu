// CUDA backend of UFB, the 3D union-find over 2x1x1 (6-connectivity) or 2x2x1 (18) blocks
// (ufb_logic_3d.h): one thread per block, a warp per segment of 32 blocks of a row, one kernel
// per step, then the raster-order ranking of the root pairs (core/src/raster_rank.cu).
#include <cstdint>

#include "cuda_backends.h"
#include "cuda_support.cuh"
#include "kernels3d/ufb_logic_3d.h"

namespace volccl::detail {
namespace {

using kernels3d::PairBlock;
using kernels3d::PairGrid;

// Thread blocks of kLaunchRows = 4 rows of blocks (cuda_support.cuh): 8 and 16 rows measured no
// faster (bench/NOTES.md, UFB).
constexpr std::uint32_t kWarp = 32;
static_assert(kernels3d::kBlocksPerSegment == kWarp, "a segment is a warp's blocks");

// The block of this thread: a warp (blockDim.x == 32) covers one segment of a row of blocks.
template <int Connectivity>
__device__ bool block_of_thread(const PairGrid& grid, std::uint32_t first_slice, PairBlock* block) {
  const std::uint32_t i = blockIdx.x * kWarp + threadIdx.x;
  const std::uint32_t j = blockIdx.y * blockDim.y + threadIdx.y;
  *block = kernels3d::pair_block_at<Connectivity>(grid, i, j, first_slice + blockIdx.z);
  return i < grid.pairs_x && j < grid.blocks_y;
}

// Initialization: the lanes of a warp vote which blocks touch their left neighbour and which
// have a foreground top row; each block finds its run's smallest key from the two votes.
template <int Connectivity>
__global__ void initialize(const std::uint8_t* mask, PairGrid grid, std::uint32_t first_slice,
                           kernels3d::UfbInitialize<Connectivity> step) {
  PairBlock block;
  const bool inside = block_of_thread<Connectivity>(grid, first_slice, &block);
  const std::uint32_t foreground =
      inside ? kernels3d::block_foreground<Connectivity>(mask, grid, block) : 0;
  const std::uint32_t lane = threadIdx.x;
  const bool linked =
      lane > 0 && kernels3d::touches_left<Connectivity>(mask, grid, block, foreground);
  const std::uint32_t linked_lanes = __ballot_sync(0xFFFFFFFFu, linked);
  const std::uint32_t top_lanes = __ballot_sync(0xFFFFFFFFu, (foreground & 3u) != 0);
  if (inside)
    step(grid, block, foreground, lane, kernels3d::run_minimum(linked_lanes, top_lanes, lane));
}

template <int Connectivity, class Step>
__global__ void for_each_block(PairGrid grid, std::uint32_t first_slice, Step step) {
  PairBlock block;
  if (block_of_thread<Connectivity>(grid, first_slice, &block)) step(grid, block);
}

template <class Launch>
void launch_over_slices(const PairGrid& grid, Launch launch) {
  launch_in_slabs(grid.pairs_x, grid.blocks_y, grid.nz, launch);
}

template <int Connectivity>
LabelResult label_ufb(const std::uint8_t* mask, Extent3 extent, std::uint32_t* labels,
                      const LabelOptions& options, cudaStream_t stream_handle) {
  DeviceLabeling labeling(extent, options, stream_handle);
  const cudaStream_t stream = labeling.stream();
  const PairGrid grid = kernels3d::make_pair_grid(extent, Connectivity);
  DeviceBuffer<std::uint32_t> parents(kernels3d::pair_count(grid), stream,
                                      "the union-find nodes of ufb (one per pair of voxels)");
  const auto launch_per_block = [&](const auto& step) {
    launch_over_slices(grid, [&](dim3 blocks, dim3 threads, std::uint32_t first) {
      for_each_block<Connectivity><<<blocks, threads, 0, stream>>>(grid, first, step);
    });
  };

  launch_over_slices(grid, [&](dim3 blocks, dim3 threads, std::uint32_t first) {
    initialize<Connectivity><<<blocks, threads, 0, stream>>>(
        mask, grid, first, kernels3d::UfbInitialize<Connectivity>{parents.data()});
  });
  labeling.end_step(&StepTimings::initialization_ms);
  launch_per_block(kernels3d::UfbMerge<Connectivity>{mask, parents.data()});
  labeling.end_step(&StepTimings::merge_ms);
  launch_per_block(kernels3d::UfbCompress<Connectivity>{parents.data(), labeling.root_bitmap()});
  labeling.end_step(&StepTimings::compression_ms);
  labeling.rank();
  launch_per_block(kernels3d::UfbFinalLabeling<Connectivity>{
      mask, labels, parents.data(), labeling.root_bitmap(), labeling.words_before()});
  labeling.end_step(&StepTimings::final_labeling_ms);
  return labeling.finish();
}

}  // namespace

LabelResult label_ufb_3d_cuda(const std::uint8_t* mask, Extent3 extent, std::uint32_t* labels,
                              const LabelOptions& options, void* stream) {
  const auto cuda_stream = static_cast<cudaStream_t>(stream);
  return options.connectivity == 6 ? label_ufb<6>(mask, extent, labels, options, cuda_stream)
                                   : label_ufb<18>(mask, extent, labels, options, cuda_stream);
}

}  // namespace volccl::detail
