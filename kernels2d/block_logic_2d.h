// Block logic of the 2D block-based labelers BUF and BKE (BUF/BKE paper, Sec. 5.1-5.2, Alg. 2),
// written once for the CUDA kernels (buf_bke_2d.cu) and the CPU backend (buf_bke_2d_cpu.cpp).
//
// The image is cut into 2x2 blocks; under 8-connectivity all foreground pixels of a block share
// a label (Sec. 4.3). Blocks in the last column of an odd-width image are one pixel wide, those
// in the last row of an odd-height image one pixel high; the bit masks below say which of their
// pixels exist, so no padding is needed. This is kernels3d/block_logic_3d.h with one dimension
// less, and with the same departures from the paper, so that the union-find roots come out in
// the raster order of the components' first pixels and the final numbering needs no sort
// (raster_rank.h):
// - a block's union-find key is the raster index of its first foreground pixel, not of its
//   anchor (top-left) pixel; its parent pointer still lives at the anchor pixel. A block is one
//   piece under 8-connectivity, so its first foreground pixel is the first pixel of its
//   component inside the block, and the smallest key of a component is the component's first
//   pixel;
// - BUF's Initialization, which needs the first foreground pixel for the key, also stores the
//   block's foreground bits, as Sec. 5.3 has the 3D Merge do, so that FinalLabeling reads them
//   instead of the four pixels;
// - BKE's Initialization links a block to the raster-first foreground pixel touching it from a
//   lower neighbour block only when that pixel precedes the block's own key (a pixel on the left
//   in the block's second row may not), so parents always have smaller keys than their children
//   and every tree's root is its smallest key.
// And one optimisation: a block unites with one neighbour per cluster of touching pixels rather
// than with every connected neighbour (neighbours_to_unite).
#pragma once

#include <cstdint>

#include "volccl/detail/host_device.h"
#include "volccl/detail/moments.h"
#include "volccl/detail/raster_rank.h"
#include "volccl/detail/union_find.h"
#include "volccl/types.h"

namespace volccl::kernels2d {

using detail::lowest_bit;
using detail::nonzero_bytes4;

// Marks an empty block's anchor slot; never a pixel index (max_voxel_count < kNoKey).
constexpr std::uint32_t kNoKey = 0xFFFFFFFFu;

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

// --- pixels of one block: bit l = lx + 2 ly, their raster order and the bits 0-3 of Table 1 --

VOLCCL_HD std::uint32_t pixel_offset(const BlockGrid& grid, int l) {
  return (l & 1) + (l >> 1) * grid.nx;
}

// The block's pixels that lie inside the image.
VOLCCL_HD std::uint32_t existing_pixels(const BlockGrid& grid, const Block& block) {
  std::uint32_t bits = 0x1;
  if (2 * block.i + 1 < grid.nx) bits |= bits << 1;
  if (2 * block.j + 1 < grid.ny) bits |= bits << 2;
  return bits;
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

VOLCCL_HD std::uint32_t foreground_pixels(const std::uint8_t* mask, const BlockGrid& grid,
                                          const Block& block) {
  const std::uint32_t existing = existing_pixels(grid, block);
  std::uint32_t foreground = 0;
  for (int row = 0; row < 2; ++row) {
    if (((existing >> (2 * row)) & 1) == 0) break;
    const std::uint8_t* first = mask + block.anchor + row * grid.nx;
    const std::uint32_t bits =
        ((existing >> (2 * row + 1)) & 1) ? nonzero_pair(first) : std::uint32_t{first[0] != 0};
    foreground |= bits << (2 * row);
  }
  return foreground;
}

// The block's key: the raster index of its first foreground pixel (`foreground` != 0).
VOLCCL_HD std::uint32_t first_pixel(const BlockGrid& grid, const Block& block,
                                    std::uint32_t foreground) {
  return block.anchor + pixel_offset(grid, lowest_bit(foreground));
}

// The anchor of the block holding pixel `pixel`.
VOLCCL_HD std::uint32_t anchor_of(const BlockGrid& grid, std::uint32_t pixel) {
  const std::uint32_t y = grid.by_nx.quotient(pixel);
  const std::uint32_t x = pixel - y * grid.nx;
  return pixel - (x & 1) - (y & 1) * grid.nx;
}

// The union-find forest stored in the label image (see union_find.h).
struct LabelForest {
  std::uint32_t* labels;
  BlockGrid grid;
  VOLCCL_HD std::uint32_t* slot(std::uint32_t pixel) const {
    return labels + anchor_of(grid, pixel);
  }
};

// Where a block keeps its info word between kernels: bits 0-3 its foreground pixels, and for
// BKE bits 4-7 the lower neighbours Reduction must still unite with (Sec. 5.2, Table 1). It is
// the top-right pixel, or the bottom-left one in the last column of an odd-width image (Fig. 8).
// A block of one pixel (the bottom-right corner of an image odd in both dimensions) has no room:
// instead of borrowing its neighbour P's bottom-right pixel, which P's own FinalLabeling writes
// while this block would read it, or the paper's extra byte, its word is recomputed from the
// input.
VOLCCL_HD bool info_slot(const BlockGrid& grid, const Block& block, std::uint32_t* index) {
  const std::uint32_t others = existing_pixels(grid, block) & ~1u;
  if (others == 0) return false;
  *index = block.anchor + pixel_offset(grid, lowest_bit(others));
  return true;
}

// Two consecutive label words; one 8-byte access on the GPU where the address allows it.
VOLCCL_HD void store_pair(std::uint32_t* address, std::uint32_t first, std::uint32_t second) {
#if defined(__CUDA_ARCH__)
  if ((reinterpret_cast<std::uintptr_t>(address) & 7) == 0) {
    *reinterpret_cast<uint2*>(address) = make_uint2(first, second);
    return;
  }
#endif
  address[0] = first;
  address[1] = second;
}

VOLCCL_HD void load_pair(const std::uint32_t* address, std::uint32_t* first,
                         std::uint32_t* second) {
#if defined(__CUDA_ARCH__)
  if ((reinterpret_cast<std::uintptr_t>(address) & 7) == 0) {
    const uint2 pair = *reinterpret_cast<const uint2*>(address);
    *first = pair.x;
    *second = pair.y;
    return;
  }
#endif
  *first = address[0];
  *second = address[1];
}

// The anchor word and the info word, stored together where the info word sits next to the
// anchor.
VOLCCL_HD void store_block_words(std::uint32_t* labels, const BlockGrid& grid, const Block& block,
                                 std::uint32_t anchor_word, std::uint32_t info) {
  std::uint32_t slot;
  if (!info_slot(grid, block, &slot)) {
    labels[block.anchor] = anchor_word;
  } else if (slot == block.anchor + 1) {
    store_pair(labels + block.anchor, anchor_word, info);
  } else {
    labels[block.anchor] = anchor_word;
    labels[slot] = info;
  }
}

// --- the 4x4 neighbourhood bitset of Fig. 7: position p = cx + 4 cy, block at cx, cy = 1..2 --

// Positions 8-adjacent to the block's pixel 0 (square position (1,1)), and the pixel itself
// (Fig. 7b); shifted by 1 for the right column and by 4 for the bottom row (Sec. 5.1).
constexpr std::uint32_t kPixelNeighbourhood = 0x777u;
// Positions inside the 4 neighbour blocks with a lower raster index (Fig. 7a): 0 in P, 1-2 in
// Q, 3 in R, 4 and 8 in S.
constexpr std::uint32_t kLowerNeighbourBlocks = 0x11Fu;

// Which of the square positions first-1 .. first+2 along one axis lie in 0..n-1 (first = 2
// block).
VOLCCL_HD std::uint32_t axis_inside(std::uint32_t block, std::uint32_t n) {
  std::uint32_t bits = 0;
  for (std::uint32_t c = 0; c < 4; ++c) {
    if ((c > 0 || block > 0) && 2 * block + c - 1 < n) bits |= 1u << c;
  }
  return bits;
}

VOLCCL_HD std::uint32_t square_inside_image(const BlockGrid& grid, const Block& block) {
  const std::uint32_t xs = axis_inside(block.i, grid.nx);
  const std::uint32_t ys = axis_inside(block.j, grid.ny);
  std::uint32_t square = 0;
  for (int cy = 0; cy < 4; ++cy) {
    if ((ys >> cy) & 1) square |= xs << (4 * cy);
  }
  return square;
}

// Raster index of square position p; the wrap-around of `anchor - 1 - nx` at the image's top
// and left edges cancels for every position inside the image.
VOLCCL_HD std::uint32_t square_pixel(const BlockGrid& grid, const Block& block, int p) {
  return block.anchor - 1 - grid.nx + (p & 3) + (p >> 2) * grid.nx;
}

// Foreground of the 6 positions of the lower neighbour blocks, for a block whose square lies
// inside the image except for its bottom row: the row above read as a word, and the two pixels
// on the left. The row above spans x = 2i-1 .. 2i+2 in row 2j-1, so the aligned words around it
// stay inside rows 2j-1 and 2j.
VOLCCL_HD std::uint32_t lower_square_foreground(const std::uint8_t* mask, const BlockGrid& grid,
                                                const Block& block) {
  const std::uint8_t* corner = mask + square_pixel(grid, block, 0);
  return nonzero_bytes4(corner) | (std::uint32_t{corner[grid.nx] != 0} << 4) |
         (std::uint32_t{corner[2 * grid.nx] != 0} << 8);
}

struct NeighbourPixels {
  std::uint32_t candidates;  // positions 8-adjacent to the block's foreground pixels
  std::uint32_t touching;    // those that are foreground
};

// Foreground pixels of the lower neighbour blocks that touch one of the block's foreground
// pixels, as square positions (Sec. 5.1, after Zavalishin et al.: each pixel is read once
// whatever the number of block pixels it touches).
VOLCCL_HD NeighbourPixels lower_neighbour_pixels(const std::uint8_t* mask, const BlockGrid& grid,
                                                 const Block& block, std::uint32_t foreground) {
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
        mask[square_pixel(grid, block, p)]) {
      touching |= 1u << p;
    }
  }
  return {candidates, touching};
}

// Lower neighbour n = 0..3 in raster order of blocks: P, Q, R above, S on the left (Fig. 2b).
VOLCCL_HD constexpr int neighbour_dx(int n) { return n < 3 ? n - 1 : -1; }
VOLCCL_HD constexpr int neighbour_dy(int n) { return n < 3 ? -1 : 0; }

// The lower neighbour block holding square position p (p in kLowerNeighbourBlocks).
VOLCCL_HD int neighbour_at(int p) {
  if (p >= 4) return 3;  // S: positions 4 and 8
  return p == 0 ? 0 : (p == 3 ? 2 : 1);
}

// The square positions 8-adjacent to `positions`, and the positions themselves: two separable
// one-pixel dilations, masking the bits that would wrap from one row into the next.
VOLCCL_HD std::uint32_t dilate_in_square(std::uint32_t positions) {
  constexpr std::uint32_t kFirstColumn = 0x1111u;  // cx == 0
  constexpr std::uint32_t kLastColumn = 0x8888u;   // cx == 3
  positions |= ((positions << 1) & ~kFirstColumn) | ((positions >> 1) & ~kLastColumn);
  return (positions | (positions << 4) | (positions >> 4)) & 0xFFFFu;
}

// The lower neighbours the block must unite with: one per cluster of 8-adjacent touching
// pixels, the block of the cluster's raster-first pixel. The other blocks of a cluster need no
// Union from this block: two adjacent pixels of a cluster lie in lower neighbour blocks that are
// neighbours of each other, and the thread of the later of the two unites them (by induction
// over the blocks in raster order, with the same rule).
VOLCCL_HD std::uint32_t neighbours_to_unite(const NeighbourPixels& pixels) {
  const std::uint32_t touching = pixels.touching;
  if (touching == 0) return 0;
  // The candidates of every foreground pattern, in every cut of the square at the image's
  // edges, form one 8-connected set (tests/block_logic_2d_test.cpp checks all of them), so when
  // all of them are foreground they are one cluster.
  if (touching == pixels.candidates) return 1u << neighbour_at(lowest_bit(touching));
  std::uint32_t neighbours = 0;
  std::uint32_t remaining = touching;
  while (remaining != 0) {
    const int first = lowest_bit(remaining);
    std::uint32_t cluster = 1u << first;
    for (std::uint32_t grown = dilate_in_square(cluster) & touching; grown != cluster;
         grown = dilate_in_square(cluster) & touching) {
      cluster = grown;
    }
    remaining &= ~cluster;
    neighbours |= 1u << neighbour_at(first);
  }
  return neighbours;
}

VOLCCL_HD std::uint32_t neighbour_anchor(const BlockGrid& grid, const Block& block, int n) {
  return block.anchor + static_cast<std::uint32_t>(2 * neighbour_dx(n)) +
         static_cast<std::uint32_t>(2 * neighbour_dy(n)) * grid.nx;
}

// --- per-block steps: each is one thread of a CUDA kernel, or one call of the CPU loop ---------

// Info word: foreground in bits 0-3, the neighbours P, Q, R, S to unite in bits 4-7 as in Table
// 1. Bit 4 (P) stays 0 there too: when P touches the block, its pixel is the raster-first
// touching one, above the block's key, and Initialization links to it.
constexpr int kNeighbourShift = 4;

// BKE's Initialization for one block: the parent to store at the anchor and the info word.
struct BkeStart {
  std::uint32_t parent;
  std::uint32_t info;
};

VOLCCL_HD BkeStart bke_start(const std::uint8_t* mask, const BlockGrid& grid, const Block& block) {
  const std::uint32_t foreground = foreground_pixels(mask, grid, block);
  if (foreground == 0) return {kNoKey, 0};
  const std::uint32_t key = first_pixel(grid, block, foreground);
  const NeighbourPixels neighbour_pixels = lower_neighbour_pixels(mask, grid, block, foreground);
  const std::uint32_t touching = neighbour_pixels.touching;
  std::uint32_t to_unite = neighbours_to_unite(neighbour_pixels);
  std::uint32_t parent = key;
  if (touching != 0) {
    // The raster-first touching pixel starts the first cluster: linking to it replaces that
    // cluster's Union.
    const int first = lowest_bit(touching);
    const std::uint32_t pixel = square_pixel(grid, block, first);
    if (pixel < key) {
      parent = pixel;
      to_unite &= ~(1u << neighbour_at(first));
    }
  }
  return {parent, foreground | (to_unite << kNeighbourShift)};
}

// The info word of a block, from its slot or, for a one-pixel block, from the input.
VOLCCL_HD std::uint32_t load_info(const std::uint8_t* mask, const std::uint32_t* labels,
                                  const BlockGrid& grid, const Block& block, bool bke) {
  std::uint32_t slot;
  if (info_slot(grid, block, &slot)) return labels[slot];
  return bke ? bke_start(mask, grid, block).info : foreground_pixels(mask, grid, block);
}

// BUF's Initialization (Alg. 2): the key at the anchor, the foreground bits in the info slot.
struct BufInitialize {
  const std::uint8_t* mask;
  std::uint32_t* labels;
  VOLCCL_HD void operator()(const BlockGrid& grid, const Block& block) const {
    const std::uint32_t foreground = foreground_pixels(mask, grid, block);
    const std::uint32_t key = foreground ? first_pixel(grid, block, foreground) : kNoKey;
    store_block_words(labels, grid, block, key, foreground);
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

// BUF's Merge (Alg. 2): Union with the connected lower neighbours, one per cluster.
struct BufMerge {
  const std::uint8_t* mask;
  std::uint32_t* labels;
  VOLCCL_HD void operator()(const BlockGrid& grid, const Block& block) const {
    const std::uint32_t foreground = load_info(mask, labels, grid, block, false);
    if (foreground == 0) return;
    const std::uint32_t neighbours =
        neighbours_to_unite(lower_neighbour_pixels(mask, grid, block, foreground));
    if (neighbours == 0) return;
    unite_with_neighbours(labels, grid, block, first_pixel(grid, block, foreground), neighbours);
  }
};

// BKE's Initialization (Sec. 5.2): the link to the first connected neighbour at the anchor, the
// information word in the info slot.
struct BkeInitialize {
  const std::uint8_t* mask;
  std::uint32_t* labels;
  VOLCCL_HD void operator()(const BlockGrid& grid, const Block& block) const {
    const BkeStart start = bke_start(mask, grid, block);
    store_block_words(labels, grid, block, start.parent, start.info);
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
    unite_with_neighbours(labels, grid, block, first_pixel(grid, block, info & 0xFu), neighbours);
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

// FinalLabeling (Alg. 2): the component's consecutive label to the block's foreground pixels,
// 0 to its background pixels, a row of the block per store where the row has two pixels.
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

  // Writes the block's pixels; returns its label (0 for an empty block) and sets *foreground
  // to its foreground pixels (bit lx + 2 ly), for the statistics gathered alongside.
  VOLCCL_HD std::uint32_t label_block(const BlockGrid& grid, const Block& block,
                                      std::uint32_t* foreground_out) const {
    const std::uint32_t existing = existing_pixels(grid, block);
    std::uint32_t root, info;
    if (existing & 2) {
      load_pair(labels + block.anchor, &root, &info);
    } else {
      root = labels[block.anchor];
      info = load_info(mask, labels, grid, block, bke);
    }
    const std::uint32_t foreground = info & 0xFu;
    const std::uint32_t label =
        foreground ? detail::component_label(root_bitmap, words_before, root) : 0;
    for (int row = 0; row < 2; ++row) {
      if (((existing >> (2 * row)) & 1) == 0) break;
      std::uint32_t* first = labels + block.anchor + row * grid.nx;
      const std::uint32_t left = ((foreground >> (2 * row)) & 1) ? label : 0;
      if ((existing >> (2 * row + 1)) & 1) {
        store_pair(first, left, ((foreground >> (2 * row + 1)) & 1) ? label : 0);
      } else {
        *first = left;
      }
    }
    *foreground_out = foreground & existing;
    return label;
  }
};

VOLCCL_HD std::uint32_t block_foreground(const std::uint8_t* mask, const BlockGrid& grid,
                                         const Block& block) {
  return foreground_pixels(mask, grid, block);
}

// The block's first voxel, the origin of a thread block's relative moments.
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

// The steps above, for the step sequence shared by both dimensions (core/src/buf_bke_steps.h).
struct BufBkeSteps {
  using BufInitialize = kernels2d::BufInitialize;
  using BufMerge = kernels2d::BufMerge;
  using BkeInitialize = kernels2d::BkeInitialize;
  using BkeReduce = kernels2d::BkeReduce;
  using Compress = kernels2d::Compress;
  using FinalLabeling = kernels2d::FinalLabeling;
};

}  // namespace volccl::kernels2d
