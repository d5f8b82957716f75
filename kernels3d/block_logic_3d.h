// Block geometry of the 3D block-based labelers BUF and BKE (BUF/BKE paper, Sec. 5.3) at
// 26-connectivity: the volume cut into 2x2x2 blocks and each block's 4x4x4 neighbourhood (Fig. 9),
// for the CUDA kernels (buf_bke_3d.cu) and the CPU backend (buf_bke_3d_cpu.cpp). The union-find
// forest and the steps are kernels/block_forest.h's, the same as in 2D: Dim3 below gives them
// this geometry.
//
// Blocks on the far faces of odd-sized volumes are cut short; the bit masks below say which of
// their voxels exist, so no padding is needed.
#pragma once

#include <cstdint>

#include "kernels/block_forest.h"
#include "runtime/host_device.h"
#include "runtime/moments.h"
#include "volccl/types.h"

namespace volccl::kernels3d {

using kernels::kNoKey;

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

// --- the 4x4x4 neighbourhood bitset of Fig. 9: position p = cx + 4 cy + 16 cz, block at 1..2 --

// Positions 26-adjacent to the block's voxel 0 (cube position (1,1,1)); shifted for the others.
constexpr std::uint64_t kVoxelNeighbourhood = 0x0000077707770777ull;
// Positions inside the 13 neighbour blocks with a lower raster index: the z = 0 layer, and in
// layers 1-2 the row y = 0 and the voxels x = 0 of rows 1-2.
constexpr std::uint64_t kLowerNeighbourBlocks = 0x0000011F011FFFFFull;

// 2x2x2 blocks and their neighbourhood, for kernels/block_forest.h.
struct Dim3 {
  using Grid = BlockGrid;
  using Block = kernels3d::Block;
  using Positions = std::uint64_t;  // the cube of Fig. 9
  // Voxel l = lx + 2 ly + 4 lz. The info word's bits 8-20 are the 13 lower neighbours to unite
  // (Sec. 5.3's "information integer").
  static constexpr int kBlockVoxels = 8;
  // The block's words and labels are accessed one 4-byte word at a time, as the 3D kernels were
  // written; 2D's 8-byte pairs have not been tried here.
  static constexpr bool kWordPairs = false;

  static VOLCCL_HD std::uint32_t voxel_offset(const BlockGrid& grid, int l) {
    return (l & 1) + ((l >> 1) & 1) * grid.row + (l >> 2) * grid.slice;
  }

  // The block's voxels that lie inside the volume.
  static VOLCCL_HD std::uint32_t existing(const BlockGrid& grid, const Block& block) {
    std::uint32_t bits = 0x01;
    if (2 * block.i + 1 < grid.nx) bits |= bits << 1;
    if (2 * block.j + 1 < grid.ny) bits |= bits << 2;
    if (2 * block.k + 1 < grid.nz) bits |= bits << 4;
    return bits;
  }

  static VOLCCL_HD std::uint32_t foreground(const std::uint8_t* mask, const BlockGrid& grid,
                                            const Block& block) {
    const std::uint32_t present = existing(grid, block);
    std::uint32_t foreground = 0;
    for (int l = 0; l < 8; ++l) {
      if (((present >> l) & 1) && mask[block.anchor + voxel_offset(grid, l)]) {
        foreground |= 1u << l;
      }
    }
    return foreground;
  }

  // The anchor of the block holding voxel `voxel`.
  static VOLCCL_HD std::uint32_t anchor_of(const BlockGrid& grid, std::uint32_t voxel) {
    const std::uint32_t row_index = grid.by_nx.quotient(voxel);
    const std::uint32_t x = voxel - row_index * grid.nx;
    const std::uint32_t z = grid.by_ny.quotient(row_index);
    const std::uint32_t y = row_index - z * grid.ny;
    return voxel - (x & 1) - (y & 1) * grid.row - (z & 1) * grid.slice;
  }

  // Raster index of cube position p; the wrap-around of `anchor - 1 - row - slice` at the
  // volume's low faces cancels for every position inside the volume.
  static VOLCCL_HD std::uint32_t position_voxel(const BlockGrid& grid, const Block& block, int p) {
    return block.anchor - 1 - grid.row - grid.slice + (p & 3) + ((p >> 2) & 3) * grid.row +
           (p >> 4) * grid.slice;
  }

  static VOLCCL_HD std::uint64_t cube_inside_volume(const BlockGrid& grid, const Block& block) {
    const std::uint32_t xs = kernels::axis_inside(block.i, grid.nx);
    const std::uint32_t ys = kernels::axis_inside(block.j, grid.ny);
    const std::uint32_t zs = kernels::axis_inside(block.k, grid.nz);
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

  // Foreground of all 28 positions of the lower neighbour blocks, for a block whose cube lies
  // inside the volume away from its last slice: six rows of four voxels read as words, and four
  // single voxels. Far cheaper in instructions than 28 byte reads.
  static VOLCCL_HD std::uint64_t lower_cube_foreground(const std::uint8_t* mask,
                                                       const BlockGrid& grid, const Block& block) {
    const std::uint8_t* corner = mask + position_voxel(grid, block, 0);
    std::uint64_t foreground = 0;
    for (int cy = 0; cy < 4; ++cy) {  // layer 0: the nine blocks below
      foreground |= std::uint64_t{detail::nonzero_bytes4(corner + cy * grid.row)} << (4 * cy);
    }
    for (int cz = 1; cz < 3; ++cz) {  // layers 1-2: the row above, and the column on the left
      const std::uint8_t* layer = corner + cz * grid.slice;
      foreground |= std::uint64_t{detail::nonzero_bytes4(layer)} << (16 * cz);
      foreground |= std::uint64_t{layer[grid.row] != 0} << (16 * cz + 4);
      foreground |= std::uint64_t{layer[2 * grid.row] != 0} << (16 * cz + 8);
    }
    return foreground;
  }

  // Foreground voxels of the lower neighbour blocks that touch one of the block's foreground
  // voxels, as cube positions. Each voxel is read once whatever the number of block voxels it
  // touches (Sec. 5.1, after Zavalishin et al.). At the volume's faces the loop over the cube is
  // unrolled and its reads predicated, so they are independent and in flight together instead of
  // one after another.
  static VOLCCL_HD kernels::NeighbourPositions<std::uint64_t> lower_neighbours(
      const std::uint8_t* mask, const BlockGrid& grid, const Block& block,
      std::uint32_t foreground) {
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
          mask[position_voxel(grid, block, p)]) {
        touching |= 1ull << p;
      }
    }
    return {candidates, touching};
  }

  // Lower neighbour n = 0..12 in raster order of blocks: n < 9 the layer below (dz = -1), 9..11
  // the row above (dz = 0, dy = -1), 12 the block on the left.
  static VOLCCL_HD constexpr int neighbour_dx(int n) {
    return n < 9 ? n % 3 - 1 : (n < 12 ? n - 10 : -1);
  }
  static VOLCCL_HD constexpr int neighbour_dy(int n) {
    return n < 9 ? n / 3 - 1 : (n < 12 ? -1 : 0);
  }
  static VOLCCL_HD constexpr int neighbour_dz(int n) { return n < 9 ? -1 : 0; }

  // The lower neighbour block holding cube position p (p in kLowerNeighbourBlocks).
  static VOLCCL_HD int neighbour_at(int p) {
    const int cx = p & 3, cy = (p >> 2) & 3, cz = p >> 4;
    const int dx = cx == 0 ? -1 : (cx == 3 ? 1 : 0);
    const int dy = cy == 0 ? -1 : (cy == 3 ? 1 : 0);
    if (cz == 0) return (dy + 1) * 3 + dx + 1;
    return dy < 0 ? 10 + dx : 12;
  }

  // The cube positions 26-adjacent to `positions`, and the positions themselves: three separable
  // one-voxel dilations, masking the bits that would wrap from one row (or layer) into the next.
  static VOLCCL_HD std::uint64_t dilate(std::uint64_t positions) {
    constexpr std::uint64_t kFirstColumn = 0x1111111111111111ull;  // cx == 0
    constexpr std::uint64_t kLastColumn = 0x8888888888888888ull;   // cx == 3
    constexpr std::uint64_t kFirstRow = 0x000F000F000F000Full;     // cy == 0
    constexpr std::uint64_t kLastRow = 0xF000F000F000F000ull;      // cy == 3
    positions |= ((positions << 1) & ~kFirstColumn) | ((positions >> 1) & ~kLastColumn);
    positions |= ((positions << 4) & ~kFirstRow) | ((positions >> 4) & ~kLastRow);
    return positions | (positions << 16) | (positions >> 16);
  }

  static VOLCCL_HD std::uint32_t neighbour_anchor(const BlockGrid& grid, const Block& block,
                                                  int n) {
    return block.anchor + static_cast<std::uint32_t>(2 * neighbour_dx(n)) +
           static_cast<std::uint32_t>(2 * neighbour_dy(n)) * grid.row +
           static_cast<std::uint32_t>(2 * neighbour_dz(n)) * grid.slice;
  }
};

using BufInitialize = kernels::BufInitialize<Dim3>;
using BufMerge = kernels::BufMerge<Dim3>;
using BkeInitialize = kernels::BkeInitialize<Dim3>;
using BkeReduce = kernels::BkeReduce<Dim3>;
using Compress = kernels::Compress<Dim3>;
using FinalLabeling = kernels::FinalLabeling<Dim3>;
using BufBkeSteps = kernels::BufBkeSteps<Dim3>;

// The block's key (kernels/block_forest.h), for the forest statistics.
VOLCCL_HD std::uint32_t first_voxel(const BlockGrid& grid, const Block& block,
                                    std::uint32_t foreground) {
  return kernels::first_voxel<Dim3>(grid, block, foreground);
}

// --- the blocks as union-find nodes of the statistics (kernels/early_moments.h) ---------------

VOLCCL_HD std::uint32_t block_foreground(const std::uint8_t* mask, const BlockGrid& grid,
                                         const Block& block) {
  return Dim3::foreground(mask, grid, block);
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

}  // namespace volccl::kernels3d
