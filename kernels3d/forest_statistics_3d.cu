// BUF's and BKE's Late statistics from their block forest (forest_statistics_logic_3d.h), for
// volumes of many components of a few voxels. There the Late pass over the label image
// (core/src/moments_late.cu) spends its time per lane and per region (loads of masks and labels,
// rounds, a shared table, a flush, a claim per row; bench/NOTES.md S-13 to S-23), not per
// component. Here a thread takes a 2x2x2 block, sums are popcounts of foreground bytes, and each
// component's row is written once, whole, by its root block; the few far blocks add to it by
// atomics in FinalLabeling, which reads their slots anyway. No shared memory, no table to clear.
#include <cstdint>
#include <functional>

#include "cuda_support.cuh"
#include "kernels3d/forest_statistics_3d.h"
#include "kernels3d/forest_statistics_logic_3d.h"
#include "moments.cuh"
#include "volccl/detail/raster_rank.h"

namespace volccl::detail {
namespace {

using kernels3d::Block;
using kernels3d::BlockGrid;
using kernels3d::kNoKey;
using kernels3d::RelativeSums;

// A block's slots where every block read has a voxel after its anchor in x, so that its info word
// is the next one: one 8-byte read (anchors are even voxel indices), at voxel 0 when not wanted.
__device__ __forceinline__ kernels3d::BlockSlots read_pair(const std::uint32_t* labels,
                                                           std::uint32_t anchor, bool wanted) {
  const uint2 pair = *reinterpret_cast<const uint2*>(labels + (wanted ? anchor : 0));
  return wanted ? kernels3d::BlockSlots{pair.x, pair.y & 0xFFu} : kernels3d::BlockSlots{kNoKey, 0};
}

// The window rows of the 32 roots-to-be of a warp, which spans 32 consecutive blocks of a row of
// blocks: each lane reads its own column of the row and takes its neighbours' from the lanes
// beside it; lanes 0 and 31 also read the columns just outside the warp's (the other lanes read
// their own again, from L1). Every read coalesced; a row outside the volume is skipped by the
// whole warp. With kPairs, every block read keeps its info word next to its anchor slot (all but
// the last column of blocks of a volume odd in x). Called by all 32 lanes, converged.
template <bool kPairs>
struct WarpWindowRows {
  const BlockForest& forest;
  std::uint32_t i, edge_i, lane, j, k;

  __device__ kernels3d::BlockSlots read(std::uint32_t column, std::uint32_t row_j,
                                        std::uint32_t row_k) const {
    const BlockGrid& grid = forest.grid;
    const Block block{column, row_j, row_k,
                      2 * row_k * grid.slice + 2 * row_j * grid.row + 2 * column};
    const bool inside = column < grid.blocks_x;
    if (kPairs) return read_pair(forest.labels, block.anchor, inside);
    return kernels3d::read_block(forest.mask, forest.labels, block.anchor,
                                 kernels3d::info_offset(grid, block), inside);
  }

  __device__ kernels3d::WindowRow operator()(int dy, int dz) const {
    const BlockGrid& grid = forest.grid;
    if ((dy < 0 && j == 0) || (dy > 0 && j + 1 >= grid.blocks_y) ||
        (dz > 0 && k + 1 >= grid.blocks_z)) {
      return {{{kNoKey, 0}, {kNoKey, 0}, {kNoKey, 0}}};
    }
    const kernels3d::BlockSlots own = read(i, j + dy, k + dz), edge = read(edge_i, j + dy, k + dz);
    kernels3d::WindowRow window{
        {{__shfl_up_sync(kFullWarp, own.slot, 1), __shfl_up_sync(kFullWarp, own.foreground, 1)},
         own,
         {__shfl_down_sync(kFullWarp, own.slot, 1),
          __shfl_down_sync(kFullWarp, own.foreground, 1)}}};
    if (lane == 0) window.block[0] = edge;
    if (lane == 31) window.block[2] = edge;
    return window;
  }
};

// A warp's roots store their rows (store_root_rows).
template <bool kPairs>
__device__ void store_warp_roots(const BlockForest& forest, std::uint32_t i, std::uint32_t j,
                                 std::uint32_t k, ComponentMoments* rows) {
  const BlockGrid& grid = forest.grid;
  const std::uint32_t lane = threadIdx.x;
  // Lane 0's edge is the column before the warp's, lane 31's the one after; the others' their own.
  const std::uint32_t edge_i = lane == 0 ? i - 1 : (lane == 31 ? i + 1 : i);
  const WarpWindowRows<kPairs> window_rows{forest, i, edge_i, lane, j, k};
  const kernels3d::BlockSlots own = window_rows.read(i, j, k);
  const Block block = kernels3d::block_at(grid, i, j, k);
  const bool root =
      own.slot != kNoKey && own.slot == kernels3d::first_voxel(grid, block, own.foreground);
  if (__ballot_sync(kFullWarp, root) == 0) return;
  const kernels3d::PackedWindowSums sums = kernels3d::window_sums(
      root ? own.slot : kernels3d::kNoComponent, window_rows,
      [](std::uint32_t members) { return __reduce_or_sync(kFullWarp, members); });
  if (!root) return;
  const std::uint32_t label = component_label(forest.root_bitmap, forest.words_before, own.slot);
  store_row(rows + label - 1, kernels3d::window_moments(sums, block));
}

// Each root block stores its component's row from the blocks of its window.
__global__ void store_root_rows(BlockForest forest, std::uint32_t first_layer,
                                ComponentMoments* rows) {
  wait_for_previous_kernel();
  const BlockGrid& grid = forest.grid;
  const std::uint32_t first_i = blockIdx.x * blockDim.x;
  const std::uint32_t j = blockIdx.y * blockDim.y + threadIdx.y;
  if (j >= grid.blocks_y) return;  // the whole warp
  // The columns the warp reads, first_i - 1 to first_i + 32, all keep their info word next to
  // their slot unless the volume is odd in x and the last column is among them.
  const bool pairs = grid.nx % 2 == 0 || first_i + 32 < grid.blocks_x - 1;
  const std::uint32_t i = first_i + threadIdx.x, k = first_layer + blockIdx.z;
  if (pairs) {
    store_warp_roots<true>(forest, i, j, k, rows);
  } else {
    store_warp_roots<false>(forest, i, j, k, rows);
  }
}

// FinalLabeling, and each far block adds itself to its component's row, stored by then. A warp
// spans 32 consecutive blocks of one row of blocks: the far blocks of one component in it are
// summed first, relative to the warp's first block, and one lane adds them.
__global__ void label_and_add_far_blocks(BlockForest forest, kernels3d::FinalLabeling labeling,
                                         std::uint32_t first_layer, ComponentMoments* rows) {
  wait_for_previous_kernel();
  const BlockGrid& grid = forest.grid;
  const std::uint32_t first_i = blockIdx.x * blockDim.x;
  const std::uint32_t i = first_i + threadIdx.x;
  const std::uint32_t j = blockIdx.y * blockDim.y + threadIdx.y;
  const Block block = kernels3d::block_at(grid, i, j, first_layer + blockIdx.z);
  bool far = false;
  std::uint32_t foreground = 0, label = 0;
  if (i < grid.blocks_x && j < grid.blocks_y) {
    const std::uint32_t parent = forest.labels[block.anchor];  // before the labels replace it
    label = labeling.label_block(grid, block, &foreground);
    far = label != 0 && !kernels3d::in_window(kernels3d::block_of(grid, parent), block);
  }
  const unsigned far_lanes = __ballot_sync(kFullWarp, far);
  if (!far) return;
  const unsigned group = __match_any_sync(far_lanes, label);
  RelativeSums sums = kernels3d::no_relative_sums();
  kernels3d::add_block(sums, foreground, 2 * static_cast<int>(threadIdx.x), 0, 0);
  if (shares_label(group)) {
    sums.count = __reduce_add_sync(group, sums.count);
    for (int a = 0; a < 3; ++a) {
      sums.sum[a] = __reduce_add_sync(group, sums.sum[a]);
      sums.min[a] = __reduce_min_sync(group, sums.min[a]);
      sums.max[a] = __reduce_max_sync(group, sums.max[a]);
    }
    for (int p = 0; p < 6; ++p) {
      sums.sum_products[p] = __reduce_add_sync(group, sums.sum_products[p]);
    }
  }
  if (threadIdx.x != static_cast<unsigned>(__ffs(static_cast<int>(group)) - 1)) return;
  add_atomically(rows[label - 1],
                 kernels3d::absolute_moments(sums, 2 * first_i, 2 * j, 2 * block.k));
}

}  // namespace

cuda::DeviceMoments forest_moments(const BlockForest& forest,
                                   const kernels3d::FinalLabeling& labeling, std::uint32_t count,
                                   cudaStream_t stream, const std::function<void()>& roots_stored) {
  // Every row has a root, which stores it whole before any far block adds to it.
  cuda::DeviceMoments table = cuda::DeviceMoments::unwritten(count, stream);
  ComponentMoments* rows = table.data();
  const BlockGrid& grid = forest.grid;
  launch_in_slabs(grid.blocks_x, grid.blocks_y, grid.blocks_z,
                  [&](dim3 blocks, dim3 threads, std::uint32_t first) {
                    launch_after_previous(store_root_rows, blocks, threads, stream, forest, first,
                                          rows);
                  });
  roots_stored();
  launch_in_slabs(grid.blocks_x, grid.blocks_y, grid.blocks_z,
                  [&](dim3 blocks, dim3 threads, std::uint32_t first) {
                    launch_after_previous(label_and_add_far_blocks, blocks, threads, stream, forest,
                                          labeling, first, rows);
                  });
  return table;
}

}  // namespace volccl::detail
