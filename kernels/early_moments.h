// The Early statistics' steps that the backends share (LE/TM paper Sec. III-A..C), written once
// for every kind of union-find node: a 2x2 or 2x2x2 block of BUF and BKE, a pixel of LE and TM.
// The per-node functions (block_moments, block_index, block_index_of, block_foreground and
// node_slot) are found by argument-dependent lookup in kernels2d or kernels3d. The transfer of
// every node's moments to its root differs by backend: block_moments.cuh on the GPU,
// kernels2d/le_tm_statistics_2d_cpu.h on the CPU. Internal; plain C++.
#pragma once

#include <cstdint>

#include "runtime/host_device.h"
#include "runtime/moments.h"
#include "runtime/raster_rank.h"
#include "volccl/statistics.h"

namespace volccl::detail {

// The label-image slot that holds a node's parent key: a block's anchor voxel (kernels2d
// overloads it for a pixel, whose own slot it is).
template <class Block>
VOLCCL_HD std::uint32_t node_slot(const Block& block) {
  return block.anchor;
}

// Every node starts with its own voxels' moments, as the Prelabel kernel initializes the
// property arrays (Sec. III-A, Eq. 3); a node without voxels with none.
// (The GPU stores a warp's records together: block_moments.cuh.)
struct EarlyInitialize {
  const std::uint8_t* mask;
  ComponentMoments* nodes;

  template <class Grid, class Block>
  VOLCCL_HD Moments moments(const Grid& grid, const Block& block) const {
    const std::uint32_t foreground = block_foreground(mask, grid, block);
    return foreground != 0 ? block_moments(block, foreground) : no_moments();
  }

  template <class Grid, class Block>
  VOLCCL_HD void operator()(const Grid& grid, const Block& block) const {
    store(nodes[block_index(grid, block)], moments(grid, block));
  }
};

// After the ranking and before the final labeling overwrites the roots' keys: each root's
// moments go to its label's row (the compaction of Sec. III-D's Sequential Relabeling). The key
// is read first: a word per node, and the 128-byte record only for the roots.
struct EarlyGather {
  const std::uint32_t* labels;
  const ComponentMoments* nodes;
  const std::uint32_t* root_bitmap;
  const std::uint32_t* words_before;
  ComponentMoments* table;
  template <class Grid, class Block>
  VOLCCL_HD void operator()(const Grid& grid, const Block& block) const {
    const std::uint32_t node = block_index(grid, block);
    const std::uint32_t key = labels[node_slot(block)];
    if (block_index_of(grid, key) != node || nodes[node].count == 0) return;
    store(table[component_label(root_bitmap, words_before, key) - 1], moments_of(nodes[node]));
  }
};

}  // namespace volccl::detail
