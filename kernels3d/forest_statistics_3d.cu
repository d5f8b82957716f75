// BUF's and BKE's Late statistics from their block forest (forest_statistics_logic_3d.h), for
// volumes of many components of a few voxels. There the Late pass over the label image
// (runtime/late_moments.cu) spends its time per lane and per region (loads of masks and labels,
// rounds, a shared table, a flush, a claim per row; bench/notes/statistics.md), not per
// component. Here each component's root block sums the blocks of its window (popcounts of their
// foreground bytes) and its row is written once, whole; the few far blocks add to it by atomics
// in FinalLabeling, which reads their slots anyway. No table to clear, no claims.
#include <cstdint>

#include "kernels3d/forest_statistics_3d.h"
#include "kernels3d/forest_statistics_logic_3d.h"
#include "runtime/cuda_support.cuh"
#include "runtime/moments.cuh"
#include "runtime/raster_rank.h"

namespace volccl::detail {
namespace {

using kernels3d::Block;
using kernels3d::BlockGrid;
using kernels3d::kNoKey;
using kernels3d::RelativeSums;

// A warp takes a tile of 32 x 4 blocks of one layer, as its own thread block. It copies the
// tile's slots and those of the blocks around it that its roots' windows reach (one column on
// each side, one row before and after, and the next layer) into shared memory, lists the tile's
// roots, and measures them 32 at a time. In sparse noise a tile holds a few dozen roots: one warp
// does the windows, the sums and the rows of all of them, where a warp per 32 blocks left most of
// its lanes idle and issued many more instructions. A thread block of four warps, one of them
// measuring while three had exited, left few measuring warps on an SM; one-warp thread blocks
// keep every slot busy (bench/notes/statistics.md).
constexpr std::uint32_t kTileRows = kLaunchRows;  // launch_in_slabs' grid is the tiles'
constexpr std::uint32_t kTileColumns = 32;
constexpr std::uint32_t kCopiedRows = 2 * (kTileRows + 2);  // [dz][row + 1]
constexpr std::uint32_t kCopiedColumns = kTileColumns + 2;  // [column + 1]
// Rows are staged 16 at a time, so that 32 thread blocks fit an SM's shared memory.
constexpr unsigned kStagedRows = 16;

struct SharedTile {
  kernels3d::BlockSlots slots[2][kTileRows + 2][kCopiedColumns];  // [dz][row + 1][column + 1]
  std::uint8_t roots[kTileRows * kTileColumns];  // row * 32 + column, in raster order
  RowStaging<kStagedRows> staging;
};

// The window rows of the root at (column, row) of the tile, from shared memory. The slots hold
// the info word whole where the warp copied them as they are: the foreground is its low byte.
struct TileWindowRows {
  const SharedTile& tile;
  std::uint32_t column, row;
  __device__ kernels3d::WindowRow operator()(int dy, int dz) const {
    const auto* slots = &tile.slots[dz][row + 1 + dy][column];
    kernels3d::WindowRow window;
    VOLCCL_UNROLL
    for (int c = 0; c < 3; ++c) window.block[c] = {slots[c].slot, slots[c].foreground & 0xFFu};
    return window;
  }
};

// The tile's slots and its neighbourhood's, kNoKey outside the volume. Where every block read
// keeps its info word next to its anchor slot (kPairs: all but the last column of blocks of a
// volume odd in x), one 8-byte copy a block, all in flight at once (copy_async_8). With the read
// chosen per load, each load waited for the one before it, and those waits dominated the kernel.
template <bool kPairs>
__device__ void copy_tile(const BlockForest& forest, std::uint32_t first_i, std::uint32_t first_j,
                          std::uint32_t k, SharedTile& tile) {
  const BlockGrid& grid = forest.grid;
  constexpr std::uint32_t kSlots = kCopiedRows * kCopiedColumns;
  for (std::uint32_t s = threadIdx.x; s < kSlots; s += 32) {
    const std::uint32_t r = s / kCopiedColumns, c = s % kCopiedColumns;
    // Row and column -1 wrap to 2^32 - 1: outside, as any beyond the grid.
    const std::uint32_t i = first_i + c - 1, j = first_j + r % (kTileRows + 2) - 1;
    const std::uint32_t kk = k + r / (kTileRows + 2);
    const bool inside = i < grid.blocks_x && j < grid.blocks_y && kk < grid.blocks_z;
    const Block block{i, j, kk, 2 * kk * grid.slice + 2 * j * grid.row + 2 * i};
    kernels3d::BlockSlots& slot = (&tile.slots[0][0][0])[s];
    if (!kPairs) {
      slot = kernels3d::read_block(forest.mask, forest.labels, block.anchor,
                                   kernels3d::info_offset(grid, block), inside);
    } else if (inside) {
      copy_async_8(&slot, forest.labels + block.anchor);
    } else {
      slot = {kNoKey, 0};
    }
  }
  wait_for_async_copies();
  __syncwarp();
}

// Each root block stores its component's row from the blocks of its window.
__global__ void __launch_bounds__(32)
    store_root_rows(BlockForest forest, std::uint32_t first_layer, ComponentMoments* rows) {
  __shared__ SharedTile tile;
  wait_for_previous_kernel();
  const BlockGrid& grid = forest.grid;
  const std::uint32_t first_i = blockIdx.x * kTileColumns, first_j = blockIdx.y * kTileRows;
  const std::uint32_t k = first_layer + blockIdx.z;
  const std::uint32_t lane = threadIdx.x;
  // The columns read, first_i - 1 to first_i + 32, all keep their info word next to their slot
  // unless the volume is odd in x and the last column is among them.
  if (grid.nx % 2 == 0 || first_i + 32 < grid.blocks_x - 1) {
    copy_tile<true>(forest, first_i, first_j, k, tile);
  } else {
    copy_tile<false>(forest, first_i, first_j, k, tile);
  }

  // List the roots: a root's slot holds its own key.
  std::uint32_t root_count = 0;
  VOLCCL_UNROLL
  for (std::uint32_t row = 0; row < kTileRows; ++row) {
    const kernels3d::BlockSlots own = tile.slots[0][row + 1][lane + 1];
    const Block block = kernels3d::block_at(grid, first_i + lane, first_j + row, k);
    const bool root = own.slot != kNoKey &&
                      own.slot == kernels3d::first_voxel(grid, block, own.foreground & 0xFFu);
    const unsigned roots = __ballot_sync(kFullWarp, root);
    if (root) {
      tile.roots[root_count + __popc(roots & ((1u << lane) - 1))] =
          static_cast<std::uint8_t>(row * kTileColumns + lane);
    }
    root_count += __popc(roots);
  }
  __syncwarp();

  for (std::uint32_t base = 0; base < root_count; base += 32) {
    const bool active = base + lane < root_count;
    const std::uint32_t position = active ? tile.roots[base + lane] : 0;
    const std::uint32_t row = position / kTileColumns, column = position % kTileColumns;
    const std::uint32_t key = tile.slots[0][row + 1][column + 1].slot;
    const kernels3d::PackedWindowSums sums = kernels3d::window_sums(
        active ? key : kernels3d::kNoComponent, TileWindowRows{tile, column, row},
        [](std::uint32_t members) { return __reduce_or_sync(kFullWarp, members); });
    const std::uint32_t label =
        active ? component_label(forest.root_bitmap, forest.words_before, key) : 1;
    store_rows_of_warp(rows, active, label - 1,
                       kernels3d::window_moments(
                           sums, kernels3d::block_at(grid, first_i + column, first_j + row, k)),
                       tile.staging);
  }
}

// Layers a warp labels in turn in label_and_add_far_blocks.
constexpr std::uint32_t kFarLayers = 32;

// FinalLabeling, and each far block adds itself to its component's row, stored by then. A warp
// spans 32 consecutive blocks of one row of blocks, in kFarLayers layers one after the other: the
// far blocks of one component in a layer are summed first, relative to the warp's first block,
// and one lane adds them. A large component is nearly all far blocks, and a warp's groups of
// them all added to one row made the row's atomics the bottleneck (a large ball in salt noise,
// bench/notes/statistics.md). So a warp holds the sums of
// one component in shared memory and adds every later group of that component to them, large or
// small (a component's edges make small groups). A group larger than the one that made the warp
// take the component (the first such group of a layer) takes its place, and the held sums go to
// their row then, or after the last layer. Salt noise's groups of one or two blocks keep to their
// own atomics.
__global__ void label_and_add_far_blocks(BlockForest forest, kernels3d::FinalLabeling labeling,
                                         std::uint32_t first_stack, ComponentMoments* rows) {
  __shared__ detail::Moments held_sums[kLaunchRows];
  wait_for_previous_kernel();
  const BlockGrid& grid = forest.grid;
  const std::uint32_t lane = threadIdx.x;
  const std::uint32_t first_i = blockIdx.x * blockDim.x;
  const std::uint32_t i = first_i + lane;
  const std::uint32_t j = blockIdx.y * blockDim.y + threadIdx.y;
  const std::uint32_t first_k = (first_stack + blockIdx.z) * kFarLayers;
  const std::uint32_t end_k = min(first_k + kFarLayers, grid.blocks_z);
  const bool column_inside = i < grid.blocks_x && j < grid.blocks_y;
  detail::Moments& held = held_sums[threadIdx.y];
  // The same in every lane: the held component's label (0 while none) and its largest group.
  std::uint32_t held_label = 0;
  int held_size = 0;
  for (std::uint32_t k = first_k; k < end_k; ++k) {
    const Block block = kernels3d::block_at(grid, i, j, k);
    bool far = false;
    std::uint32_t foreground = 0, label = 0;
    if (column_inside) {
      const std::uint32_t parent = forest.labels[block.anchor];  // before the labels replace it
      label = labeling.label_block(grid, block, &foreground);
      far = label != 0 && !kernels3d::in_window(kernels3d::block_of(grid, parent), block);
    }
    const unsigned far_lanes = __ballot_sync(kFullWarp, far);
    if (far_lanes == 0) continue;
    bool chosen = false;
    int size = 0;
    if (far) {
      // Mostly one far block a warp: no match needed.
      const unsigned group =
          __popc(far_lanes) == 1 ? far_lanes : __match_any_sync(far_lanes, label);
      RelativeSums sums = kernels3d::no_relative_sums();
      kernels3d::add_block(sums, foreground, 2 * static_cast<int>(lane), 0, 0);
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
      const bool leader = lane == static_cast<unsigned>(__ffs(static_cast<int>(group)) - 1);
      size = __popc(group);
      const bool merged = leader && label == held_label;
      // The first group larger than the held one takes its place.
      const unsigned larger = __ballot_sync(far_lanes, leader && !merged && size > held_size);
      chosen = larger != 0 && lane == static_cast<unsigned>(__ffs(static_cast<int>(larger)) - 1);
      detail::Moments absolute{};
      if (leader) {
        absolute = kernels3d::absolute_moments(sums, 2 * first_i, 2 * j, 2 * k);
        if (merged) {
          detail::merge(held, absolute);  // the layer's only group of that component
        } else if (!chosen) {
          add_atomically(rows[label - 1], absolute);
        }
      }
      __syncwarp(far_lanes);
      if (chosen) {
        if (held_label != 0) add_atomically(rows[held_label - 1], held);
        held = absolute;
      }
    }
    const unsigned chosen_lane = __ballot_sync(kFullWarp, chosen);
    if (chosen_lane != 0) {
      const int from = __ffs(static_cast<int>(chosen_lane)) - 1;
      held_label = __shfl_sync(kFullWarp, label, from);
      held_size = __shfl_sync(kFullWarp, size, from);
    }
    __syncwarp();
  }
  if (held_label != 0 && lane == 0) add_atomically(rows[held_label - 1], held);
}

}  // namespace

cuda::DeviceMoments forest_moments(const BlockForest& forest, std::uint32_t count,
                                   cudaStream_t stream) {
  cuda::DeviceMoments table = cuda::DeviceMoments::unwritten(count, stream);
  ComponentMoments* rows = table.data();
  const BlockGrid& grid = forest.grid;
  launch_in_slabs(
      grid.blocks_x, grid.blocks_y, grid.blocks_z, [&](dim3 tiles, dim3, std::uint32_t first) {
        launch_after_previous(store_root_rows, tiles, dim3(32), stream, forest, first, rows);
      });
  return table;
}

void label_adding_far_blocks(const BlockForest& forest, const kernels3d::FinalLabeling& labeling,
                             const cuda::DeviceMoments& table, cudaStream_t stream) {
  const BlockGrid& grid = forest.grid;
  ComponentMoments* rows = table.data();
  const std::uint32_t stacks = (grid.blocks_z + kFarLayers - 1) / kFarLayers;
  launch_in_slabs(grid.blocks_x, grid.blocks_y, stacks,
                  [&](dim3 blocks, dim3 threads, std::uint32_t first_stack) {
                    launch_after_previous(label_and_add_far_blocks, blocks, threads, stream, forest,
                                          labeling, first_stack, rows);
                  });
}

}  // namespace volccl::detail
