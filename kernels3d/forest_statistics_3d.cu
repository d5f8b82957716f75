// BUF's and BKE's Late statistics from their block forest (forest_statistics_logic_3d.h), for
// volumes of many components of a few voxels. There the Late pass over the label image
// (core/src/moments_late.cu) spends its time per lane and per region (loads of masks and labels,
// rounds, a shared table, a flush, a claim per row; bench/NOTES.md S-13 to S-23), not per
// component. Here a thread takes a 2x2x2 block, sums are popcounts of foreground bytes, and each
// component's row is written once, whole, by its root block; the few far blocks add to it by
// atomics in FinalLabeling, which reads their slots anyway. No table to clear, no claims.
#include <cstdint>

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

// A thread block takes a tile of 32 x kTileRows blocks of one layer (the 3D labelers' launch
// shape). It copies the tile's slots and those of the blocks around it that its roots' windows
// reach (one column on each side, one row before and after, and the next layer) into shared
// memory, coalesced; then lists its roots, and its warps take the roots 32 at a time. At 5 %
// density a tile of 128 blocks holds ~24 roots: one warp does the windows, the sums and the rows
// of all of them, where a warp per 32 blocks did them for ~6 lanes each and issued 1.85x as many
// instructions (NOTES S-27).
constexpr std::uint32_t kTileRows = kLaunchRows;
constexpr std::uint32_t kTileColumns = 32;
constexpr std::uint32_t kTileThreads = kTileColumns * kTileRows;

struct SharedTile {
  kernels3d::BlockSlots slots[2][kTileRows + 2][kTileColumns + 2];  // [dz][row + 1][column + 1]
  std::uint8_t roots[kTileRows][kTileColumns];  // the columns of each row's roots
  std::uint32_t root_count[kTileRows];
};

// The window rows of the root at (column, row) of the tile, from shared memory.
struct TileWindowRows {
  const SharedTile& tile;
  std::uint32_t column, row;
  __device__ kernels3d::WindowRow operator()(int dy, int dz) const {
    const auto& slots = tile.slots[dz][row + 1 + dy];
    return {{slots[column], slots[column + 1], slots[column + 2]}};
  }
};

// Row r of the tile, dz-major (0 and kTileRows + 1: the rows before and after the tile's, then
// the next layer's), that warp w copies in turn q: first its own row of the tile, w + 1, so that
// it finds its roots in registers; then two of the eight others.
__device__ __forceinline__ std::uint32_t copied_row(std::uint32_t w, std::uint32_t q) {
  static_assert(kTileRows == 4, "four warps copy the 12 rows, three each");
  if (q == 0) return w + 1;
  if (q == 1) return w == 0 ? 0 : w + kTileRows;
  return w + 2 * kTileRows;
}

// The tile's slots and its neighbourhood's, kNoKey outside the volume: 2 x (kTileRows + 2) rows of
// 34 blocks, 32 blocks at a time and lanes 0 and 1 the last two, all loads issued before any
// store. Where every block read keeps its info word next to its anchor slot (`pairs`: all but the
// last column of blocks of a volume odd in x), one 8-byte load a block. Every thread takes part;
// returns the slots of the thread's own block.
__device__ kernels3d::BlockSlots copy_tile(const BlockForest& forest, std::uint32_t first_i,
                                           std::uint32_t first_j, std::uint32_t k, bool pairs,
                                           SharedTile& tile) {
  constexpr std::uint32_t kRowsPerWarp = 3;
  const BlockGrid& grid = forest.grid;
  const std::uint32_t lane = threadIdx.x, warp = threadIdx.y;
  const auto read = [&](std::uint32_t i, std::uint32_t j, std::uint32_t kk, bool row_inside) {
    const Block block{i, j, kk, 2 * kk * grid.slice + 2 * j * grid.row + 2 * i};
    const bool inside = row_inside && i < grid.blocks_x;
    if (pairs) {
      const uint2 pair =
          *reinterpret_cast<const uint2*>(forest.labels + (inside ? block.anchor : 0));
      return inside ? kernels3d::BlockSlots{pair.x, pair.y & 0xFFu}
                    : kernels3d::BlockSlots{kNoKey, 0};
    }
    return kernels3d::read_block(forest.mask, forest.labels, block.anchor,
                                 kernels3d::info_offset(grid, block), inside);
  };
  kernels3d::BlockSlots main[kRowsPerWarp], last[kRowsPerWarp];
  VOLCCL_UNROLL
  for (std::uint32_t q = 0; q < kRowsPerWarp; ++q) {
    const std::uint32_t r = copied_row(warp, q);
    const std::uint32_t dz = r / (kTileRows + 2), j = first_j + r % (kTileRows + 2) - 1;
    // Row and column -1 wrap to 2^32 - 1: outside, as any beyond the grid.
    const bool row_inside = j < grid.blocks_y && k + dz < grid.blocks_z;
    main[q] = read(first_i + lane - 1, j, k + dz, row_inside);
    last[q] = read(first_i + 31 + lane, j, k + dz, row_inside && lane < 2);
  }
  VOLCCL_UNROLL
  for (std::uint32_t q = 0; q < kRowsPerWarp; ++q) {
    const std::uint32_t r = copied_row(warp, q);
    auto& slots = tile.slots[r / (kTileRows + 2)][r % (kTileRows + 2)];
    slots[lane] = main[q];
    if (lane < 2) slots[32 + lane] = last[q];
  }
  // The thread's own block is column lane + 1 of row warp + 1: lane + 1 of main[0] is its
  // right-hand neighbour's, and lane 31's is last[0] of lane 0.
  const std::uint32_t slot = __shfl_down_sync(kFullWarp, main[0].slot, 1);
  const std::uint32_t foreground = __shfl_down_sync(kFullWarp, main[0].foreground, 1);
  const std::uint32_t last_slot = __shfl_sync(kFullWarp, last[0].slot, 0);
  const std::uint32_t last_foreground = __shfl_sync(kFullWarp, last[0].foreground, 0);
  return lane == 31 ? kernels3d::BlockSlots{last_slot, last_foreground}
                    : kernels3d::BlockSlots{slot, foreground};
}

// Each root block stores its component's row from the blocks of its window.
__global__ void __launch_bounds__(kTileThreads)
    store_root_rows(BlockForest forest, std::uint32_t first_layer, ComponentMoments* rows) {
  __shared__ SharedTile tile;
  wait_for_previous_kernel();
  const BlockGrid& grid = forest.grid;
  const std::uint32_t first_i = blockIdx.x * kTileColumns, first_j = blockIdx.y * kTileRows;
  const std::uint32_t k = first_layer + blockIdx.z;
  const std::uint32_t lane = threadIdx.x, row = threadIdx.y;
  // The columns read, first_i - 1 to first_i + 32, all keep their info word next to their slot
  // unless the volume is odd in x and the last column is among them.
  const kernels3d::BlockSlots own = copy_tile(
      forest, first_i, first_j, k, grid.nx % 2 == 0 || first_i + 32 < grid.blocks_x - 1, tile);

  // List the row's roots: a root's slot holds its own key.
  const Block block = kernels3d::block_at(grid, first_i + lane, first_j + row, k);
  const bool root =
      own.slot != kNoKey && own.slot == kernels3d::first_voxel(grid, block, own.foreground);
  const unsigned roots = __ballot_sync(kFullWarp, root);
  if (root) tile.roots[row][__popc(roots & ((1u << lane) - 1))] = static_cast<std::uint8_t>(lane);
  if (lane == 0) tile.root_count[row] = __popc(roots);
  __syncthreads();

  // The tile's roots in row order, warp w taking roots 32 w.., 32 (w + warps)..
  std::uint32_t before[kTileRows + 1] = {0};
  VOLCCL_UNROLL
  for (std::uint32_t r = 0; r < kTileRows; ++r) before[r + 1] = before[r] + tile.root_count[r];
  for (std::uint32_t base = row * 32; base < before[kTileRows]; base += kTileThreads) {
    const std::uint32_t n = base + lane;
    const bool active = n < before[kTileRows];
    std::uint32_t root_row = 0, first_of_row = 0;
    VOLCCL_UNROLL
    for (std::uint32_t r = 1; r < kTileRows; ++r) {
      if (n >= before[r]) {
        root_row = r;
        first_of_row = before[r];
      }
    }
    const std::uint32_t column = active ? tile.roots[root_row][n - first_of_row] : 0;
    const std::uint32_t key = tile.slots[0][root_row + 1][column + 1].slot;
    const kernels3d::PackedWindowSums sums = kernels3d::window_sums(
        active ? key : kernels3d::kNoComponent, TileWindowRows{tile, column, root_row},
        [](std::uint32_t members) { return __reduce_or_sync(kFullWarp, members); });
    if (!active) continue;
    const std::uint32_t label = component_label(forest.root_bitmap, forest.words_before, key);
    store_row(rows + label - 1,
              kernels3d::window_moments(
                  sums, kernels3d::block_at(grid, first_i + column, first_j + root_row, k)));
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
  const std::uint32_t k = first_layer + blockIdx.z;
  const Block block = kernels3d::block_at(grid, i, j, k);
  bool far = false;
  std::uint32_t foreground = 0, label = 0;
  if (i < grid.blocks_x && j < grid.blocks_y) {
    const std::uint32_t parent = forest.labels[block.anchor];  // before the labels replace it
    label = labeling.label_block(grid, block, &foreground);
    far = label != 0 && !kernels3d::in_window(kernels3d::block_of(grid, parent), block);
  }
  const unsigned far_lanes = __ballot_sync(kFullWarp, far);
  if (!far) return;
  // Mostly one far block a warp: no match needed.
  const unsigned group = __popc(far_lanes) == 1 ? far_lanes : __match_any_sync(far_lanes, label);
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
  add_atomically(rows[label - 1], kernels3d::absolute_moments(sums, 2 * first_i, 2 * j, 2 * k));
}

}  // namespace

cuda::DeviceMoments forest_moments(const BlockForest& forest, std::uint32_t count,
                                   cudaStream_t stream) {
  cuda::DeviceMoments table = cuda::DeviceMoments::unwritten(count, stream);
  ComponentMoments* rows = table.data();
  const BlockGrid& grid = forest.grid;
  launch_in_slabs(grid.blocks_x, grid.blocks_y, grid.blocks_z,
                  [&](dim3 blocks, dim3 threads, std::uint32_t first) {
                    launch_after_previous(store_root_rows, blocks, threads, stream, forest, first,
                                          rows);
                  });
  return table;
}

void label_adding_far_blocks(const BlockForest& forest, const kernels3d::FinalLabeling& labeling,
                             const cuda::DeviceMoments& table, cudaStream_t stream) {
  const BlockGrid& grid = forest.grid;
  ComponentMoments* rows = table.data();
  launch_in_slabs(grid.blocks_x, grid.blocks_y, grid.blocks_z,
                  [&](dim3 blocks, dim3 threads, std::uint32_t first) {
                    launch_after_previous(label_and_add_far_blocks, blocks, threads, stream, forest,
                                          labeling, first, rows);
                  });
}

}  // namespace volccl::detail
