// CUDA backend of UFB, the 3D union-find over the pairs of 2x2x1 blocks (ufb_logic_3d.h): a warp
// per segment of 32 blocks of a row, one kernel per step, then the raster-order ranking of the root
// pairs (runtime/raster_rank.cu).
#include <cstdint>

#include "kernels3d/ufb_logic_3d.h"
#include "runtime/cuda_support.cuh"
#include "runtime/labeler.h"

namespace volccl::detail {
namespace {

using kernels3d::PairBlock;
using kernels3d::PairGrid;

// Thread blocks of kLaunchRows = 4 rows of blocks (cuda_support.cuh): 8 and 16 rows were no
// faster (bench/notes/union-find-3d.md). Merge at 18 may take two slices a thread block
// (merge_depth).
constexpr std::uint32_t kWarp = 32;
constexpr std::uint32_t kFullWarp = 0xFFFFFFFFu;
static_assert(kernels3d::kBlocksPerSegment == kWarp, "a segment is a warp's blocks");

// Rows of blocks per thread in the steps bound by memory (Initialization, root marking,
// FinalLabeling): a thread issues the loads of all its rows before it uses any, so that more bytes
// are in flight than one block's 4 (bench/notes/union-find-3d.md). Merge takes one row: with two,
// its Unions diverge more and it ran slower.
constexpr std::uint32_t kRowsPerThread = 2;

// Block row `r` of the thread's `Rows`: a warp covers one segment of a row of blocks
// (blockDim.x == 32), the rows of a thread block follow each other, and the thread block covers
// `Rows` such stretches of rows, one after the other, in each of its slices (blockDim.z).
template <std::uint32_t Rows>
__device__ bool block_of_thread(const PairGrid& grid, std::uint32_t first_slice, std::uint32_t r,
                                PairBlock* block) {
  const std::uint32_t i = blockIdx.x * kWarp + threadIdx.x;
  const std::uint32_t j = (blockIdx.y * Rows + r) * blockDim.y + threadIdx.y;
  const std::uint32_t z = first_slice + blockIdx.z * blockDim.z + threadIdx.z;
  *block = kernels3d::pair_block_at(grid, i, j, z);
  return i < grid.pairs_x && j < grid.blocks_y && z < grid.nz;
}

// Initialization under 18: the lanes of a warp vote which blocks touch their left neighbour and
// which have a foreground top row; each block finds its run's smallest key from the two votes.
// Both Initializations also zero the root ranking (`clear`).
__global__ void initialize_18(const std::uint8_t* mask, PairGrid grid, std::uint32_t first_slice,
                              ClearSpan clear, kernels3d::UfbInitialize18 step) {
  zero_by_grid(clear);
  const std::uint32_t lane = threadIdx.x;
  PairBlock blocks[kRowsPerThread];
  bool inside[kRowsPerThread], linked[kRowsPerThread];
  std::uint32_t foreground[kRowsPerThread];
  VOLCCL_UNROLL
  for (std::uint32_t r = 0; r < kRowsPerThread; ++r) {
    inside[r] = block_of_thread<kRowsPerThread>(grid, first_slice, r, &blocks[r]);
    foreground[r] = inside[r] ? kernels3d::block_foreground(mask, grid, blocks[r]) : 0;
    linked[r] = lane > 0 && kernels3d::touches_left(mask, grid, blocks[r], foreground[r]);
  }
  VOLCCL_UNROLL
  for (std::uint32_t r = 0; r < kRowsPerThread; ++r) {
    const std::uint32_t linked_lanes = __ballot_sync(kFullWarp, linked[r]);
    const std::uint32_t top_lanes = __ballot_sync(kFullWarp, (foreground[r] & 3u) != 0);
    if (inside[r]) {
      step(grid, blocks[r], foreground[r], lane,
           kernels3d::run_minimum(linked_lanes, top_lanes, lane));
    }
  }
}

// Initialization under 6: each lane takes its left neighbour's foreground by a shuffle, then the
// warp votes the segment's pieces (four ballots).
__global__ void initialize_6(const std::uint8_t* mask, PairGrid grid, std::uint32_t first_slice,
                             ClearSpan clear, kernels3d::UfbInitialize6 step) {
  zero_by_grid(clear);
  const std::uint32_t lane = threadIdx.x;
  PairBlock blocks[kRowsPerThread];
  bool inside[kRowsPerThread];
  std::uint32_t foreground[kRowsPerThread];
  VOLCCL_UNROLL
  for (std::uint32_t r = 0; r < kRowsPerThread; ++r) {
    inside[r] = block_of_thread<kRowsPerThread>(grid, first_slice, r, &blocks[r]);
    foreground[r] = inside[r] ? kernels3d::block_foreground(mask, grid, blocks[r]) : 0;
  }
  VOLCCL_UNROLL
  for (std::uint32_t r = 0; r < kRowsPerThread; ++r) {
    const std::uint32_t left = __shfl_up_sync(kFullWarp, foreground[r], 1);
    const kernels3d::BlockPieces pieces =
        kernels3d::block_pieces(foreground[r], lane > 0 ? left : 0u);
    kernels3d::SegmentPieces votes;
    votes.linked = __ballot_sync(kFullWarp, pieces.linked);
    votes.split = __ballot_sync(kFullWarp, pieces.split);
    votes.tops = __ballot_sync(kFullWarp, pieces.top);
    votes.split_tops = __ballot_sync(kFullWarp, pieces.split_top);
    if (inside[r]) step(grid, blocks[r], foreground[r], lane, votes);
  }
}

template <int Connectivity>
__global__ void merge(PairGrid grid, std::uint32_t first_slice,
                      kernels3d::UfbMerge<Connectivity> step) {
  wait_for_previous_kernel();
  PairBlock block;
  if (block_of_thread<1>(grid, first_slice, 0, &block)) step(grid, block);
}

// The roots of a warp's row segment gathered by two votes (top and bottom pairs), set in the
// bitmap by lane 0 with at most four atomics.
__global__ void mark_roots(PairGrid grid, std::uint32_t first_slice, kernels3d::UfbRoots roots,
                           std::uint32_t* root_bitmap) {
  wait_for_previous_kernel();
  PairBlock blocks[kRowsPerThread];
  std::uint32_t root[kRowsPerThread];
  VOLCCL_UNROLL
  for (std::uint32_t r = 0; r < kRowsPerThread; ++r) {
    const bool inside = block_of_thread<kRowsPerThread>(grid, first_slice, r, &blocks[r]);
    root[r] = inside ? roots(grid, blocks[r]) : 0u;
  }
  VOLCCL_UNROLL
  for (std::uint32_t r = 0; r < kRowsPerThread; ++r) {
    const std::uint32_t top = __ballot_sync(kFullWarp, (root[r] & 1u) != 0);
    const std::uint32_t bottom = __ballot_sync(kFullWarp, (root[r] & 2u) != 0);
    if (threadIdx.x == 0) {
      detail::mark_component_starts(root_bitmap, blocks[r].pair, top);
      detail::mark_component_starts(root_bitmap, blocks[r].pair + grid.pairs_x, bottom);
    }
  }
}

// FinalLabeling: every row's mask and first parents are loaded before any walk to a root, and
// every label is known before the first store (a store to the labels could alias the parents).
template <int Connectivity>
__global__ void final_labeling(PairGrid grid, std::uint32_t first_slice,
                               kernels3d::UfbFinalLabeling<Connectivity> step) {
  wait_for_previous_kernel();
  PairBlock blocks[kRowsPerThread];
  bool inside[kRowsPerThread];
  std::uint32_t foreground[kRowsPerThread], top[kRowsPerThread], bottom[kRowsPerThread];
  std::uint32_t top_label[kRowsPerThread], bottom_label[kRowsPerThread];
  VOLCCL_UNROLL
  for (std::uint32_t r = 0; r < kRowsPerThread; ++r) {
    inside[r] = block_of_thread<kRowsPerThread>(grid, first_slice, r, &blocks[r]);
    if (inside[r]) {
      foreground[r] = kernels3d::block_foreground(step.mask, grid, blocks[r]);
      step.first_parents(grid, blocks[r], &top[r], &bottom[r]);
    }
  }
  VOLCCL_UNROLL
  for (std::uint32_t r = 0; r < kRowsPerThread; ++r) {
    if (inside[r]) step.labels_of(top[r], bottom[r], &top_label[r], &bottom_label[r]);
  }
  VOLCCL_UNROLL
  for (std::uint32_t r = 0; r < kRowsPerThread; ++r) {
    if (inside[r]) step.store(grid, blocks[r], foreground[r], top_label[r], bottom_label[r]);
  }
}

// Launches over every block, `Rows` rows of blocks a thread.
template <std::uint32_t Rows, class Launch>
void launch_over_slices(const PairGrid& grid, Launch launch, std::uint32_t depth = 1) {
  launch_in_slabs(grid.pairs_x, (grid.blocks_y + Rows - 1) / Rows, grid.nz, launch, depth);
}

// Slices a thread block of Merge covers. Two under 18 when the device holds the blocks of eight
// slices or more at once: Merge then reads the slice below a block from L1 more often, and
// adjacent slices ran at the same time anyway, so Merge got faster. Where fewer slices fit,
// slices ran nearly one after the other, and two to a thread block made Merge slower (the larger
// volumes), as under 6 (bench/notes/union-find-3d.md).
template <int Connectivity>
std::uint32_t merge_depth(const PairGrid& grid) {
  const std::uint64_t slice_blocks = std::uint64_t{grid.pairs_x} * grid.blocks_y;
  return Connectivity == 18 && 8 * slice_blocks <= device_traits().resident_threads ? 2 : 1;
}

template <int Connectivity>
LabelResult label_ufb(const DeviceLabelCall& call) {
  const std::uint8_t* const mask = call.mask;
  std::uint32_t* const labels = call.labels;
  const PairGrid grid = kernels3d::make_pair_grid(call.extent);
  // The union-find nodes (one per pair of voxels) share the ranking's allocation, which
  // Initialization clears.
  Scratch scratch;
  const std::size_t parents_offset = scratch.reserve<std::uint32_t>(kernels3d::pair_count(grid));
  DeviceLabeling labeling(call, 0, scratch, DeviceLabeling::Clear::by_labeler);
  const cudaStream_t stream = labeling.stream();
  auto* const parents = labeling.scratch<std::uint32_t>(parents_offset);

  launch_over_slices<kRowsPerThread>(grid, [&](dim3 blocks, dim3 threads, std::uint32_t first) {
    const ClearSpan clear = first == 0 ? labeling.clear_span() : ClearSpan{nullptr, 0};
    if (Connectivity == 6) {
      initialize_6<<<blocks, threads, 0, stream>>>(mask, grid, first, clear,
                                                   kernels3d::UfbInitialize6{parents});
    } else {
      initialize_18<<<blocks, threads, 0, stream>>>(mask, grid, first, clear,
                                                    kernels3d::UfbInitialize18{parents});
    }
  });
  labeling.end_step(&StepTimings::initialization_ms);
  launch_over_slices<1>(
      grid,
      [&](dim3 blocks, dim3 threads, std::uint32_t first) {
        launch_after_previous(merge<Connectivity>, blocks, threads, stream, grid, first,
                              kernels3d::UfbMerge<Connectivity>{mask, parents});
      },
      merge_depth<Connectivity>(grid));
  labeling.end_step(&StepTimings::merge_ms);
  launch_over_slices<kRowsPerThread>(grid, [&](dim3 blocks, dim3 threads, std::uint32_t first) {
    launch_after_previous(mark_roots, blocks, threads, stream, grid, first,
                          kernels3d::UfbRoots{parents}, labeling.root_bitmap());
  });
  labeling.end_step(&StepTimings::compression_ms);  // root marking, in Compression's place
  labeling.rank();
  launch_over_slices<kRowsPerThread>(grid, [&](dim3 blocks, dim3 threads, std::uint32_t first) {
    launch_after_previous(
        final_labeling<Connectivity>, blocks, threads, stream, grid, first,
        kernels3d::UfbFinalLabeling<Connectivity>{mask, labels, parents, labeling.root_bitmap(),
                                                  labeling.words_before()});
  });
  labeling.end_step(&StepTimings::final_labeling_ms);
  return labeling.finish();
}

}  // namespace

LabelResult label_ufb_3d_cuda(const DeviceLabelCall& call) {
  return call.options.connectivity == 6 ? label_ufb<6>(call) : label_ufb<18>(call);
}

}  // namespace volccl::detail
