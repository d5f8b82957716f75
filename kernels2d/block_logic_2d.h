// Block geometry of the 2D block-based labelers BUF and BKE (BUF/BKE paper, Sec. 5.1-5.2, Alg. 2)
// at 8-connectivity: the image cut into 2x2 blocks and each block's 4x4 neighbourhood (Fig. 7),
// for the CUDA kernels (buf_bke_2d.cu) and the CPU backend (buf_bke_2d_cpu.cpp). The union-find
// forest and the steps are kernels/block_forest.h's, the same as in 3D: Dim2 below gives them
// this geometry.
//
// Blocks in the last column of an odd-width image are one pixel wide, those in the last row of an
// odd-height image one pixel high; the bit masks below say which of their pixels exist, so no
// padding is needed. Against the paper, BUF's Initialization also stores the block's foreground
// bits, as Sec. 5.3 has the 3D Merge do, so that FinalLabeling reads them instead of the four
// pixels; and BKE's Initialization links a block to the raster-first touching pixel only when it
// precedes the block's key (a pixel on the left in the block's second row may not).
#pragma once

#include <cstdint>

#include "kernels/block_forest.h"
#include "runtime/host_device.h"
#include "runtime/moments.h"
#include "volccl/types.h"

namespace volccl::kernels2d {

using kernels::kNoKey;

// The image and its grid of 2x2 blocks. Pixel indices fit in 32 bits (volccl::validate).
struct BlockGrid {
  std::uint32_t nx = 1, ny = 1;  // nx is also the pixels per row
  std::uint32_t blocks_x = 1, blocks_y = 1;
  detail::Divisor by_nx;
};

inline BlockGrid make_block_grid(Extent3 extent) {
  BlockGrid grid;
  grid.nx = static_cast<std::uint32_t>(extent.x);
  grid.ny = static_cast<std::uint32_t>(extent.y);
  grid.blocks_x = (grid.nx + 1) / 2;
  grid.blocks_y = (grid.ny + 1) / 2;
  grid.by_nx = detail::Divisor(grid.nx, extent.voxel_count());
  return grid;
}

struct Block {
  std::uint32_t i, j;    // block coordinates
  std::uint32_t anchor;  // raster index of pixel (2i, 2j)
};

VOLCCL_HD Block block_at(const BlockGrid& grid, std::uint32_t i, std::uint32_t j) {
  return {i, j, 2 * j * grid.nx + 2 * i};
}

// Bits 0 and 1 set when bytes[0] and bytes[1] are non-zero; one 16-bit load on the GPU where
// the address allows it (a block's top row always, its bottom row when the width is even).
VOLCCL_HD std::uint32_t nonzero_pair(const std::uint8_t* bytes) {
#if defined(__CUDA_ARCH__)
  if ((reinterpret_cast<std::uintptr_t>(bytes) & 1) == 0) {
    const std::uint32_t pair = *reinterpret_cast<const std::uint16_t*>(bytes);
    return std::uint32_t{(pair & 0xFFu) != 0} | (std::uint32_t{(pair >> 8) != 0} << 1);
  }
#endif
  return std::uint32_t{bytes[0] != 0} | (std::uint32_t{bytes[1] != 0} << 1);
}

// --- the 4x4 neighbourhood bitset of Fig. 7: position p = cx + 4 cy, block at cx, cy = 1..2 --

// Positions 8-adjacent to the block's pixel 0 (square position (1,1)), and the pixel itself
// (Fig. 7b); shifted by 1 for the right column and by 4 for the bottom row (Sec. 5.1).
constexpr std::uint32_t kPixelNeighbourhood = 0x777u;
// Positions inside the 4 neighbour blocks with a lower raster index (Fig. 7a): 0 in P, 1-2 in
// Q, 3 in R, 4 and 8 in S.
constexpr std::uint32_t kLowerNeighbourBlocks = 0x11Fu;

// 2x2 blocks and their neighbourhood, for kernels/block_forest.h.
struct Dim2 {
  using Grid = BlockGrid;
  using Block = kernels2d::Block;
  using Positions = std::uint32_t;  // the square of Fig. 7
  // Pixel l = lx + 2 ly. The info word's bits 4-7 are the neighbours P, Q, R, S to unite, as in
  // Table 1; bit 4 (P) stays 0 there too: when P touches the block, its pixel is the raster-first
  // touching one, above the block's key, and Initialization links to it.
  static constexpr int kBlockVoxels = 4;
  // A block's anchor and info words, and a row of its labels, in one 8-byte access.
  static constexpr bool kWordPairs = true;

  static VOLCCL_HD std::uint32_t voxel_offset(const BlockGrid& grid, int l) {
    return (l & 1) + (l >> 1) * grid.nx;
  }

  // The block's pixels that lie inside the image.
  static VOLCCL_HD std::uint32_t existing(const BlockGrid& grid, const Block& block) {
    std::uint32_t bits = 0x1;
    if (2 * block.i + 1 < grid.nx) bits |= bits << 1;
    if (2 * block.j + 1 < grid.ny) bits |= bits << 2;
    return bits;
  }

  static VOLCCL_HD std::uint32_t foreground(const std::uint8_t* mask, const BlockGrid& grid,
                                            const Block& block) {
    const std::uint32_t present = existing(grid, block);
    std::uint32_t foreground = 0;
    for (int row = 0; row < 2; ++row) {
      if (((present >> (2 * row)) & 1) == 0) break;
      const std::uint8_t* first = mask + block.anchor + row * grid.nx;
      const std::uint32_t bits =
          ((present >> (2 * row + 1)) & 1) ? nonzero_pair(first) : std::uint32_t{first[0] != 0};
      foreground |= bits << (2 * row);
    }
    return foreground;
  }

  // The anchor of the block holding pixel `pixel`.
  static VOLCCL_HD std::uint32_t anchor_of(const BlockGrid& grid, std::uint32_t pixel) {
    const std::uint32_t y = grid.by_nx.quotient(pixel);
    const std::uint32_t x = pixel - y * grid.nx;
    return pixel - (x & 1) - (y & 1) * grid.nx;
  }

  // Raster index of square position p; the wrap-around of `anchor - 1 - nx` at the image's top
  // and left edges cancels for every position inside the image.
  static VOLCCL_HD std::uint32_t position_voxel(const BlockGrid& grid, const Block& block, int p) {
    return block.anchor - 1 - grid.nx + (p & 3) + (p >> 2) * grid.nx;
  }

  static VOLCCL_HD std::uint32_t square_inside_image(const BlockGrid& grid, const Block& block) {
    const std::uint32_t xs = kernels::axis_inside(block.i, grid.nx);
    const std::uint32_t ys = kernels::axis_inside(block.j, grid.ny);
    std::uint32_t square = 0;
    for (int cy = 0; cy < 4; ++cy) {
      if ((ys >> cy) & 1) square |= xs << (4 * cy);
    }
    return square;
  }

  // Foreground of the 6 positions of the lower neighbour blocks, for a block whose square lies
  // inside the image except for its bottom row: the row above read as a word, and the two pixels
  // on the left. The row above spans x = 2i-1 .. 2i+2 in row 2j-1, so the aligned words around
  // it stay inside rows 2j-1 and 2j.
  static VOLCCL_HD std::uint32_t lower_square_foreground(const std::uint8_t* mask,
                                                         const BlockGrid& grid,
                                                         const Block& block) {
    const std::uint8_t* corner = mask + position_voxel(grid, block, 0);
    return detail::nonzero_bytes4(corner) | (std::uint32_t{corner[grid.nx] != 0} << 4) |
           (std::uint32_t{corner[2 * grid.nx] != 0} << 8);
  }

  // Foreground pixels of the lower neighbour blocks that touch one of the block's foreground
  // pixels, as square positions (Sec. 5.1, after Zavalishin et al.: each pixel is read once
  // whatever the number of block pixels it touches).
  static VOLCCL_HD kernels::NeighbourPositions<std::uint32_t> lower_neighbours(
      const std::uint8_t* mask, const BlockGrid& grid, const Block& block,
      std::uint32_t foreground) {
    std::uint32_t candidates = 0;
    for (int l = 0; l < 4; ++l) {
      if ((foreground >> l) & 1) candidates |= kPixelNeighbourhood << ((l & 1) + 4 * (l >> 1));
    }
    candidates &= kLowerNeighbourBlocks;
    const bool interior =
        block.i > 0 && block.j > 0 && 2 * block.i + 2 < grid.nx && 2 * block.j + 1 < grid.ny;
    if (interior) {
      return {candidates, candidates & lower_square_foreground(mask, grid, block)};
    }
    candidates &= square_inside_image(grid, block);
    std::uint32_t touching = 0;
    VOLCCL_UNROLL
    for (int p = 0; p < 9; ++p) {
      if (((kLowerNeighbourBlocks >> p) & 1) && ((candidates >> p) & 1) &&
          mask[position_voxel(grid, block, p)]) {
        touching |= 1u << p;
      }
    }
    return {candidates, touching};
  }

  // Lower neighbour n = 0..3 in raster order of blocks: P, Q, R above, S on the left (Fig. 2b).
  static VOLCCL_HD constexpr int neighbour_dx(int n) { return n < 3 ? n - 1 : -1; }
  static VOLCCL_HD constexpr int neighbour_dy(int n) { return n < 3 ? -1 : 0; }

  // The lower neighbour block holding square position p (p in kLowerNeighbourBlocks).
  static VOLCCL_HD int neighbour_at(int p) {
    if (p >= 4) return 3;  // S: positions 4 and 8
    return p == 0 ? 0 : (p == 3 ? 2 : 1);
  }

  // The square positions 8-adjacent to `positions`, and the positions themselves: two separable
  // one-pixel dilations, masking the bits that would wrap from one row into the next.
  static VOLCCL_HD std::uint32_t dilate(std::uint32_t positions) {
    constexpr std::uint32_t kFirstColumn = 0x1111u;  // cx == 0
    constexpr std::uint32_t kLastColumn = 0x8888u;   // cx == 3
    positions |= ((positions << 1) & ~kFirstColumn) | ((positions >> 1) & ~kLastColumn);
    return (positions | (positions << 4) | (positions >> 4)) & 0xFFFFu;
  }

  static VOLCCL_HD std::uint32_t neighbour_anchor(const BlockGrid& grid, const Block& block,
                                                  int n) {
    return block.anchor + static_cast<std::uint32_t>(2 * neighbour_dx(n)) +
           static_cast<std::uint32_t>(2 * neighbour_dy(n)) * grid.nx;
  }
};

using BufInitialize = kernels::BufInitialize<Dim2>;
using BufMerge = kernels::BufMerge<Dim2>;
using BkeInitialize = kernels::BkeInitialize<Dim2>;
using BkeReduce = kernels::BkeReduce<Dim2>;
using Compress = kernels::Compress<Dim2>;
using FinalLabeling = kernels::FinalLabeling<Dim2>;
using BufBkeSteps = kernels::BufBkeSteps<Dim2>;

// --- the blocks as union-find nodes of the statistics (kernels/early_moments.h) ---------------

VOLCCL_HD std::uint32_t block_foreground(const std::uint8_t* mask, const BlockGrid& grid,
                                         const Block& block) {
  return Dim2::foreground(mask, grid, block);
}

// The block's first pixel, the origin of a thread block's relative moments.
VOLCCL_HD detail::Origin block_origin(const Block& block) {
  return {2ull * block.i, 2ull * block.j, 0};
}

// Blocks numbered in raster order, and the number of the block holding pixel `pixel`: the
// union-find nodes of the Early statistics.
VOLCCL_HD std::uint32_t block_index(const BlockGrid& grid, const Block& block) {
  return block.i + grid.blocks_x * block.j;
}

VOLCCL_HD std::uint32_t block_index_of(const BlockGrid& grid, std::uint32_t pixel) {
  const std::uint32_t y = grid.by_nx.quotient(pixel);
  const std::uint32_t x = pixel - y * grid.nx;
  return (x >> 1) + grid.blocks_x * (y >> 1);
}

// The moments of a block's foreground pixels (bit lx + 2 ly), its rows as runs.
VOLCCL_HD detail::Moments block_moments(const Block& block, std::uint32_t foreground) {
  detail::Moments m = detail::no_moments();
  for (int row = 0; row < 2; ++row) {
    const std::uint32_t pair = (foreground >> (2 * row)) & 3u;
    if (pair == 0) continue;
    detail::merge(m, detail::run_moments(2 * block.i + (pair == 2u ? 1 : 0), pair == 3u ? 2 : 1,
                                         2 * block.j + row, 0));
  }
  return m;
}

}  // namespace volccl::kernels2d
