// Block logic of the 3D block-based labelers BUF and BKE (BUF/BKE paper, Sec. 5.3), written
// once for the CUDA kernels (buf_bke_3d.cu) and the CPU backend (buf_bke_3d_cpu.cpp).
//
// The volume is cut into 2x2x2 blocks; under 26-connectivity all foreground voxels of a block
// share a label (Sec. 4.3). Blocks on the far faces of odd-sized volumes are cut short; the
// bit masks below say which of their voxels exist, so no padding is needed.
//
// Two departures from the paper, both so that the union-find roots come out in the raster order
// of the components' first voxels and the final numbering needs no sort (raster_rank.h):
// - a block's union-find key is the raster index of its first foreground voxel, not of its
//   anchor (top-left-front) voxel; its parent pointer still lives at the anchor voxel;
// - BUF's Initialization, which needs the first foreground voxel for the key, also stores the
//   block's foreground byte that Sec. 5.3 has Merge store.
// BKE's Initialization links a block to the raster-first foreground voxel touching it from a
// lower neighbour block when that voxel precedes the block's own key, so parents always have
// smaller keys than their children and every tree's root is its smallest key.
// And one optimisation: a block unites with one neighbour per cluster of touching voxels rather
// than with every connected neighbour (neighbours_to_unite).
#pragma once

#include <cstdint>

#include "volccl/detail/host_device.h"
#include "volccl/detail/moments.h"
#include "volccl/detail/raster_rank.h"
#include "volccl/detail/union_find.h"
#include "volccl/types.h"

namespace volccl::kernels3d {

using detail::lowest_bit;
using detail::nonzero_bytes4;

// Marks an empty block's anchor slot; never a voxel index (max_voxel_count < kNoKey).
constexpr std::uint32_t kNoKey = 0xFFFFFFFFu;

// The volume and its grid of 2x2x2 blocks. Voxel indices fit in 32 bits (volccl::validate).
struct BlockGrid {
  std::uint32_t nx = 1, ny = 1, nz = 1;
  std::uint32_t blocks_x = 1, blocks_y = 1, blocks_z = 1;
  std::uint32_t row = 1;    // voxels per row: nx
  std::uint32_t slice = 1;  // voxels per slice: nx * ny
  detail::Divisor by_nx, by_ny;
};

inline BlockGrid make_block_grid(Extent3 extent) {
  BlockGrid grid;
  grid.nx = static_cast<std::uint32_t>(extent.x);
  grid.ny = static_cast<std::uint32_t>(extent.y);
  grid.nz = static_cast<std::uint32_t>(extent.z);
  grid.blocks_x = (grid.nx + 1) / 2;
  grid.blocks_y = (grid.ny + 1) / 2;
  grid.blocks_z = (grid.nz + 1) / 2;
  grid.row = grid.nx;
  grid.slice = grid.nx * grid.ny;
  grid.by_nx = detail::Divisor(grid.nx, extent.voxel_count());
  grid.by_ny = detail::Divisor(grid.ny, extent.voxel_count() / grid.nx);
  return grid;
}

struct Block {
  std::uint32_t i, j, k;  // block coordinates
  std::uint32_t anchor;   // raster index of voxel (2i, 2j, 2k)
};

VOLCCL_HD Block block_at(const BlockGrid& grid, std::uint32_t i, std::uint32_t j, std::uint32_t k) {
  return {i, j, k, 2 * k * grid.slice + 2 * j * grid.row + 2 * i};
}

// --- voxels of one block: bit l = lx + 2 ly + 4 lz, which is also their raster order ---------

VOLCCL_HD std::uint32_t voxel_offset(const BlockGrid& grid, int l) {
  return (l & 1) + ((l >> 1) & 1) * grid.row + (l >> 2) * grid.slice;
}

// The block's voxels that lie inside the volume.
VOLCCL_HD std::uint32_t existing_voxels(const BlockGrid& grid, const Block& block) {
  std::uint32_t bits = 0x01;
  if (2 * block.i + 1 < grid.nx) bits |= bits << 1;
  if (2 * block.j + 1 < grid.ny) bits |= bits << 2;
  if (2 * block.k + 1 < grid.nz) bits |= bits << 4;
  return bits;
}

VOLCCL_HD std::uint32_t foreground_voxels(const std::uint8_t* mask, const BlockGrid& grid,
                                          const Block& block) {
  const std::uint32_t existing = existing_voxels(grid, block);
  std::uint32_t foreground = 0;
  for (int l = 0; l < 8; ++l) {
    if (((existing >> l) & 1) && mask[block.anchor + voxel_offset(grid, l)]) {
      foreground |= 1u << l;
    }
  }
  return foreground;
}

// The block's key: the raster index of its first foreground voxel (`foreground` != 0).
VOLCCL_HD std::uint32_t first_voxel(const BlockGrid& grid, const Block& block,
                                    std::uint32_t foreground) {
  return block.anchor + voxel_offset(grid, lowest_bit(foreground));
}

// The anchor of the block holding voxel `voxel`.
VOLCCL_HD std::uint32_t anchor_of(const BlockGrid& grid, std::uint32_t voxel) {
  const std::uint32_t row_index = grid.by_nx.quotient(voxel);
  const std::uint32_t x = voxel - row_index * grid.nx;
  const std::uint32_t z = grid.by_ny.quotient(row_index);
  const std::uint32_t y = row_index - z * grid.ny;
  return voxel - (x & 1) - (y & 1) * grid.row - (z & 1) * grid.slice;
}

// The union-find forest stored in the label image (see union_find.h).
struct LabelForest {
  std::uint32_t* labels;
  BlockGrid grid;
  VOLCCL_HD std::uint32_t* slot(std::uint32_t voxel) const {
    return labels + anchor_of(grid, voxel);
  }
};

// Where a block keeps its info word between kernels: bits 0-7 its foreground voxels, and for
// BKE bits 8-20 the lower neighbours Reduction must still unite with (Sec. 5.2, Table 1; Sec.
// 5.3's "information integer"). It is the block's first voxel after the anchor, as Fig. 8 uses
// the top-right pixel and falls back to the bottom-left one in odd-sized images. Only a block
// of one voxel (the far corner of a volume odd in every dimension) has no room: its word is
// recomputed from the input instead of allocating the paper's extra byte.
VOLCCL_HD bool info_slot(const BlockGrid& grid, const Block& block, std::uint32_t* index) {
  const std::uint32_t others = existing_voxels(grid, block) & ~1u;
  if (others == 0) return false;
  *index = block.anchor + voxel_offset(grid, lowest_bit(others));
  return true;
}

// --- the 4x4x4 neighbourhood bitset of Fig. 9: position p = cx + 4 cy + 16 cz, block at 1..2 --

// Positions 26-adjacent to the block's voxel 0 (cube position (1,1,1)); shifted for the others.
constexpr std::uint64_t kVoxelNeighbourhood = 0x0000077707770777ull;
// Positions inside the 13 neighbour blocks with a lower raster index: the z = 0 layer, and in
// layers 1-2 the row y = 0 and the voxels x = 0 of rows 1-2.
constexpr std::uint64_t kLowerNeighbourBlocks = 0x0000011F011FFFFFull;

VOLCCL_HD std::uint32_t cube_offset(const BlockGrid& grid, int p) {
  return (p & 3) + ((p >> 2) & 3) * grid.row + (p >> 4) * grid.slice;
}

// Which of the cube positions first-1 .. first+2 along one axis lie in 0..n-1 (first = 2 block).
VOLCCL_HD std::uint32_t axis_inside(std::uint32_t block, std::uint32_t n) {
  std::uint32_t bits = 0;
  for (std::uint32_t c = 0; c < 4; ++c) {
    if ((c > 0 || block > 0) && 2 * block + c - 1 < n) bits |= 1u << c;
  }
  return bits;
}

VOLCCL_HD std::uint64_t cube_inside_volume(const BlockGrid& grid, const Block& block) {
  const std::uint32_t xs = axis_inside(block.i, grid.nx);
  const std::uint32_t ys = axis_inside(block.j, grid.ny);
  const std::uint32_t zs = axis_inside(block.k, grid.nz);
  std::uint64_t layer = 0;
  for (int cy = 0; cy < 4; ++cy) {
    if ((ys >> cy) & 1) layer |= static_cast<std::uint64_t>(xs) << (4 * cy);
  }
  std::uint64_t cube = 0;
  for (int cz = 0; cz < 4; ++cz) {
    if ((zs >> cz) & 1) cube |= layer << (16 * cz);
  }
  return cube;
}

// Raster index of cube position p; the wrap-around of `anchor - 1 - row - slice` at the volume's
// low faces cancels for every position inside the volume.
VOLCCL_HD std::uint32_t cube_voxel(const BlockGrid& grid, const Block& block, int p) {
  return block.anchor - 1 - grid.row - grid.slice + cube_offset(grid, p);
}

// Foreground voxels of the lower neighbour blocks that touch one of the block's foreground
// voxels, as cube positions. Each voxel is read once whatever the number of block voxels it
// touches (Sec. 5.1, after Zavalishin et al.). The loop over the cube is unrolled and its reads
// predicated, so they are independent and in flight together instead of one after another.
// Foreground of all 28 positions of the lower neighbour blocks, for a block whose cube lies
// inside the volume away from its last slice: six rows of four voxels read as words, and four
// single voxels. Far cheaper in instructions than 28 byte reads.
VOLCCL_HD std::uint64_t lower_cube_foreground(const std::uint8_t* mask, const BlockGrid& grid,
                                              const Block& block) {
  const std::uint8_t* corner = mask + cube_voxel(grid, block, 0);
  std::uint64_t foreground = 0;
  for (int cy = 0; cy < 4; ++cy) {  // layer 0: the nine blocks below
    foreground |= std::uint64_t{nonzero_bytes4(corner + cy * grid.row)} << (4 * cy);
  }
  for (int cz = 1; cz < 3; ++cz) {  // layers 1-2: the row above, and the column on the left
    const std::uint8_t* layer = corner + cz * grid.slice;
    foreground |= std::uint64_t{nonzero_bytes4(layer)} << (16 * cz);
    foreground |= std::uint64_t{layer[grid.row] != 0} << (16 * cz + 4);
    foreground |= std::uint64_t{layer[2 * grid.row] != 0} << (16 * cz + 8);
  }
  return foreground;
}

struct NeighbourVoxels {
  std::uint64_t candidates;
  std::uint64_t touching;
};

VOLCCL_HD NeighbourVoxels lower_neighbour_voxels(const std::uint8_t* mask, const BlockGrid& grid,
                                                 const Block& block, std::uint32_t foreground) {
  std::uint64_t candidates = 0;
  for (int l = 0; l < 8; ++l) {
    if ((foreground >> l) & 1) {
      candidates |= kVoxelNeighbourhood << ((l & 1) + 4 * ((l >> 1) & 1) + 16 * (l >> 2));
    }
  }
  candidates &= kLowerNeighbourBlocks;
  const bool interior = block.i > 0 && block.j > 0 && block.k > 0 && 2 * block.i + 2 < grid.nx &&
                        2 * block.j + 2 < grid.ny && 2 * block.k + 2 < grid.nz;
  if (interior) {
    return {candidates, candidates & lower_cube_foreground(mask, grid, block)};
  }
  candidates &= cube_inside_volume(grid, block);
  std::uint64_t touching = 0;
  VOLCCL_UNROLL
  for (int p = 0; p < 48; ++p) {
    if (((kLowerNeighbourBlocks >> p) & 1) && ((candidates >> p) & 1) &&
        mask[cube_voxel(grid, block, p)]) {
      touching |= 1ull << p;
    }
  }
  return {candidates, touching};
}

// Lower neighbour n = 0..12 in raster order of blocks: n < 9 the layer below (dz = -1), 9..11
// the row above (dz = 0, dy = -1), 12 the block on the left.
VOLCCL_HD constexpr int neighbour_dx(int n) { return n < 9 ? n % 3 - 1 : (n < 12 ? n - 10 : -1); }
VOLCCL_HD constexpr int neighbour_dy(int n) { return n < 9 ? n / 3 - 1 : (n < 12 ? -1 : 0); }
VOLCCL_HD constexpr int neighbour_dz(int n) { return n < 9 ? -1 : 0; }

// The lower neighbour block holding cube position p (p in kLowerNeighbourBlocks).
VOLCCL_HD int neighbour_at(int p) {
  const int cx = p & 3, cy = (p >> 2) & 3, cz = p >> 4;
  const int dx = cx == 0 ? -1 : (cx == 3 ? 1 : 0);
  const int dy = cy == 0 ? -1 : (cy == 3 ? 1 : 0);
  if (cz == 0) return (dy + 1) * 3 + dx + 1;
  return dy < 0 ? 10 + dx : 12;
}

// The cube positions 26-adjacent to `positions`, and the positions themselves: three separable
// one-voxel dilations, masking the bits that would wrap from one row (or layer) into the next.
VOLCCL_HD std::uint64_t dilate_in_cube(std::uint64_t positions) {
  constexpr std::uint64_t kFirstColumn = 0x1111111111111111ull;  // cx == 0
  constexpr std::uint64_t kLastColumn = 0x8888888888888888ull;   // cx == 3
  constexpr std::uint64_t kFirstRow = 0x000F000F000F000Full;     // cy == 0
  constexpr std::uint64_t kLastRow = 0xF000F000F000F000ull;      // cy == 3
  positions |= ((positions << 1) & ~kFirstColumn) | ((positions >> 1) & ~kLastColumn);
  positions |= ((positions << 4) & ~kFirstRow) | ((positions >> 4) & ~kLastRow);
  return positions | (positions << 16) | (positions >> 16);
}

// The lower neighbours the block must unite with: one per cluster of 26-adjacent touching
// voxels, the block of the cluster's raster-first voxel. The other blocks of a cluster need no
// Union from this block: two adjacent voxels of a cluster lie in lower neighbour blocks that are
// neighbours of each other, and the thread of the later of the two unites them (by induction
// over the blocks in raster order, with the same rule). On random volumes this removes most of
// Merge's unions, whose Find walks dominate its time.
VOLCCL_HD std::uint32_t neighbours_to_unite(const NeighbourVoxels& voxels) {
  const std::uint64_t touching = voxels.touching;
  if (touching == 0) return 0;
  // The candidates of every foreground pattern, in every cut of the cube at the volume's faces,
  // form one 26-connected set (tests/block_logic_3d_test.cpp checks all of them), so when all of
  // them are foreground, as inside any blob, they are one cluster.
  if (touching == voxels.candidates) return 1u << neighbour_at(lowest_bit(touching));
  std::uint32_t neighbours = 0;
  std::uint64_t remaining = touching;
  while (remaining != 0) {
    const int first = lowest_bit(remaining);
    std::uint64_t cluster = 1ull << first;
    for (std::uint64_t grown = dilate_in_cube(cluster) & touching; grown != cluster;
         grown = dilate_in_cube(cluster) & touching) {
      cluster = grown;
    }
    remaining &= ~cluster;
    neighbours |= 1u << neighbour_at(first);
  }
  return neighbours;
}

VOLCCL_HD std::uint32_t neighbour_anchor(const BlockGrid& grid, const Block& block, int n) {
  return block.anchor + static_cast<std::uint32_t>(2 * neighbour_dx(n)) +
         static_cast<std::uint32_t>(2 * neighbour_dy(n)) * grid.row +
         static_cast<std::uint32_t>(2 * neighbour_dz(n)) * grid.slice;
}

// --- per-block steps: each is one thread of a CUDA kernel, or one call of the CPU loop ---------

constexpr int kNeighbourShift = 8;  // info word: foreground in bits 0-7, neighbours above

// BKE's Initialization for one block: the parent to store at the anchor and the info word.
struct BkeStart {
  std::uint32_t parent;
  std::uint32_t info;
};

VOLCCL_HD BkeStart bke_start(const std::uint8_t* mask, const BlockGrid& grid, const Block& block) {
  const std::uint32_t foreground = foreground_voxels(mask, grid, block);
  if (foreground == 0) return {kNoKey, 0};
  const std::uint32_t key = first_voxel(grid, block, foreground);
  const NeighbourVoxels neighbour_voxels = lower_neighbour_voxels(mask, grid, block, foreground);
  const std::uint64_t touching = neighbour_voxels.touching;
  std::uint32_t to_unite = neighbours_to_unite(neighbour_voxels);
  std::uint32_t parent = key;
  if (touching != 0) {
    // The raster-first touching voxel starts the first cluster: linking to it replaces that
    // cluster's Union.
    const int first = lowest_bit(touching);
    const std::uint32_t voxel = cube_voxel(grid, block, first);
    if (voxel < key) {
      parent = voxel;
      to_unite &= ~(1u << neighbour_at(first));
    }
  }
  return {parent, foreground | (to_unite << kNeighbourShift)};
}

// The info word of a block, from its slot or, for a one-voxel block, from the input.
VOLCCL_HD std::uint32_t load_info(const std::uint8_t* mask, const std::uint32_t* labels,
                                  const BlockGrid& grid, const Block& block, bool bke) {
  std::uint32_t slot;
  if (info_slot(grid, block, &slot)) return labels[slot];
  return bke ? bke_start(mask, grid, block).info : foreground_voxels(mask, grid, block);
}

struct BufInitialize {
  const std::uint8_t* mask;
  std::uint32_t* labels;
  VOLCCL_HD void operator()(const BlockGrid& grid, const Block& block) const {
    const std::uint32_t foreground = foreground_voxels(mask, grid, block);
    labels[block.anchor] = foreground ? first_voxel(grid, block, foreground) : kNoKey;
    std::uint32_t slot;
    if (info_slot(grid, block, &slot)) labels[slot] = foreground;
  }
};

// Unites a block with its lower neighbours selected in `neighbours`, each Union starting from
// the root the previous one left.
VOLCCL_HD void unite_with_neighbours(std::uint32_t* labels, const BlockGrid& grid,
                                     const Block& block, std::uint32_t key,
                                     std::uint32_t neighbours) {
  const LabelForest forest{labels, grid};
  while (neighbours != 0) {
    const int n = lowest_bit(neighbours);
    neighbours &= neighbours - 1;
    key = detail::unite(forest, key, neighbour_anchor(grid, block, n));
  }
}

// BUF's Merge (Alg. 2 in 3D): Union with the connected lower neighbours, one per cluster.
struct BufMerge {
  const std::uint8_t* mask;
  std::uint32_t* labels;
  VOLCCL_HD void operator()(const BlockGrid& grid, const Block& block) const {
    const std::uint32_t foreground = load_info(mask, labels, grid, block, false);
    if (foreground == 0) return;
    const std::uint32_t neighbours =
        neighbours_to_unite(lower_neighbour_voxels(mask, grid, block, foreground));
    if (neighbours == 0) return;
    unite_with_neighbours(labels, grid, block, first_voxel(grid, block, foreground), neighbours);
  }
};

struct BkeInitialize {
  const std::uint8_t* mask;
  std::uint32_t* labels;
  VOLCCL_HD void operator()(const BlockGrid& grid, const Block& block) const {
    const BkeStart start = bke_start(mask, grid, block);
    labels[block.anchor] = start.parent;
    std::uint32_t slot;
    if (info_slot(grid, block, &slot)) labels[slot] = start.info;
  }
};

// BKE's Reduction: Union with the connected neighbours Initialization did not link to.
struct BkeReduce {
  const std::uint8_t* mask;
  std::uint32_t* labels;
  VOLCCL_HD void operator()(const BlockGrid& grid, const Block& block) const {
    const std::uint32_t info = load_info(mask, labels, grid, block, true);
    const std::uint32_t neighbours = info >> kNeighbourShift;
    if (neighbours == 0) return;
    unite_with_neighbours(labels, grid, block, first_voxel(grid, block, info & 0xFFu), neighbours);
  }
};

// Compression (Compress or InlineCompress for the IC variants). With a bitmap, also marks the
// roots for the raster-order ranking: that must be the last Compression, after every Union.
struct Compress {
  std::uint32_t* labels;
  bool inline_compression;
  std::uint32_t* root_bitmap;  // nullptr: do not mark
  VOLCCL_HD void operator()(const BlockGrid& grid, const Block& block) const {
    std::uint32_t* slot = labels + block.anchor;
    if (detail::load_relaxed(slot) == kNoKey) return;
    const LabelForest forest{labels, grid};
    const std::uint32_t root =
        inline_compression ? detail::compress_inline(forest, slot) : detail::compress(forest, slot);
    if (root_bitmap != nullptr && anchor_of(grid, root) == block.anchor) {
      detail::mark_component_start(root_bitmap, root);
    }
  }
};

// FinalLabeling: the component's consecutive label to the block's foreground voxels, 0 to its
// background voxels.
struct FinalLabeling {
  const std::uint8_t* mask;
  std::uint32_t* labels;
  const std::uint32_t* root_bitmap;
  const std::uint32_t* words_before;
  bool bke;
  VOLCCL_HD void operator()(const BlockGrid& grid, const Block& block) const {
    std::uint32_t foreground;
    label_block(grid, block, &foreground);
  }

  // Writes the block's voxels; returns its label (0 for an empty block) and sets *foreground
  // to its foreground voxels (bit lx + 2 ly + 4 lz), for the statistics gathered alongside.
  VOLCCL_HD std::uint32_t label_block(const BlockGrid& grid, const Block& block,
                                      std::uint32_t* foreground_out) const {
    const std::uint32_t foreground = load_info(mask, labels, grid, block, bke) & 0xFFu;
    const std::uint32_t label =
        foreground ? detail::component_label(root_bitmap, words_before, labels[block.anchor]) : 0;
    const std::uint32_t existing = existing_voxels(grid, block);
    for (int l = 0; l < 8; ++l) {
      if ((existing >> l) & 1) {
        labels[block.anchor + voxel_offset(grid, l)] = ((foreground >> l) & 1) ? label : 0;
      }
    }
    *foreground_out = foreground & existing;
    return label;
  }
};

VOLCCL_HD std::uint32_t block_foreground(const std::uint8_t* mask, const BlockGrid& grid,
                                         const Block& block) {
  return foreground_voxels(mask, grid, block);
}

// The block's first voxel, the origin of a thread block's relative moments.
VOLCCL_HD detail::Origin block_origin(const Block& block) {
  return {2ull * block.i, 2ull * block.j, 2ull * block.k};
}

// Blocks numbered in raster order, and the number of the block holding voxel `voxel`: the
// union-find nodes of the Early statistics.
VOLCCL_HD std::uint32_t block_index(const BlockGrid& grid, const Block& block) {
  return block.i + grid.blocks_x * (block.j + grid.blocks_y * block.k);
}

// The block holding voxel `voxel`.
VOLCCL_HD Block block_of(const BlockGrid& grid, std::uint32_t voxel) {
  const std::uint32_t row_index = grid.by_nx.quotient(voxel);
  const std::uint32_t x = voxel - row_index * grid.nx;
  const std::uint32_t z = grid.by_ny.quotient(row_index);
  const std::uint32_t y = row_index - z * grid.ny;
  return block_at(grid, x >> 1, y >> 1, z >> 1);
}

VOLCCL_HD std::uint32_t block_index_of(const BlockGrid& grid, std::uint32_t voxel) {
  return block_index(grid, block_of(grid, voxel));
}

// The moments of a block's foreground voxels (bit lx + 2 ly + 4 lz), its rows as runs.
VOLCCL_HD detail::Moments block_moments(const Block& block, std::uint32_t foreground) {
  detail::Moments m = detail::no_moments();
  for (int row = 0; row < 4; ++row) {
    const std::uint32_t pair = (foreground >> (2 * row)) & 3u;
    if (pair == 0) continue;
    detail::merge(m, detail::run_moments(2 * block.i + (pair == 2u ? 1 : 0), pair == 3u ? 2 : 1,
                                         2 * block.j + (row & 1), 2 * block.k + (row >> 1)));
  }
  return m;
}

// The steps above, for the step sequence shared by both dimensions (core/src/buf_bke_steps.h).
struct BufBkeSteps {
  using BufInitialize = kernels3d::BufInitialize;
  using BufMerge = kernels3d::BufMerge;
  using BkeInitialize = kernels3d::BkeInitialize;
  using BkeReduce = kernels3d::BkeReduce;
  using Compress = kernels3d::Compress;
  using FinalLabeling = kernels3d::FinalLabeling;
};

}  // namespace volccl::kernels3d
