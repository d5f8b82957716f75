// Block logic of UFB, the 3D union-find over blocks for 6- and 18-connectivity, written once for
// the CUDA kernels (ufb_3d.cu) and the CPU backend (ufb_3d_cpu.cpp).
//
// Why blocks: BUF (BUF/BKE paper Sec. 5.1, 5.3) makes its union-find nodes 2x2x2 blocks, which
// are one piece only under 26-connectivity (Sec. 4.3). A 2x2x1 block is one piece under 18
// (every two of its four voxels share a face or an edge), and under 6 too unless its foreground
// is one of its two diagonals. UFB runs BUF's steps over those blocks, and the contacts inside a
// block need no Union at all.
//
// The nodes are x-pairs of voxels: pair (px, y, z) holds voxels (2 px, y, z) and (2 px + 1, y, z)
// and its key is (z ny + y) pairs_x + px, so keys follow the raster order of the voxels. A block
// is the pair of its top row over the pair of its bottom row. Under 18 the block's key is its
// first pair with a foreground voxel (the bottom pair then hangs under the top one); under 6 each
// pair is a node of its own, and Initialization links the two when they touch. Parents live in a
// node array of their own, one slot per pair, indexed by key, so Find needs no arithmetic (BUF
// keys by the first voxel and divides to find the anchor). Union links the larger root under the
// smaller, so the root of every component is the pair of its first voxel in raster order, and
// ranking the root keys (raster_rank.h) gives the numbering of ITK and scipy: pair keys number at
// most as many as voxels, so the voxel-sized root bitmap holds them.
//
// Two savings as in UF (uf_logic_3d.h): Initialization links every node to the smallest key of
// its run within a warp's segment of 32 blocks, so runs need no Union (under 18 runs of touching
// blocks along x; under 6 runs of touching columns of the segment's two rows, which also take
// in the contacts between the two rows); and Merge makes one Union per lower node that a node
// touches, skipping those already joined through contacts made before it: under 18 one per
// cluster of connected foreground voxels of the lower blocks (Sec. 5.1's clusters, grown through
// every foreground voxel of the lower blocks in the block's window), under 6 by UF's rule and two
// squares (pairs_to_unite_under_6).
#pragma once

#include <cstdint>

#include "runtime/host_device.h"
#include "runtime/raster_rank.h"
#include "runtime/union_find.h"
#include "volccl/types.h"

namespace volccl::kernels3d {

using detail::highest_bit;
using detail::lowest_bit;

constexpr std::uint32_t kNoPair = 0xFFFFFFFFu;  // the slot of a pair without foreground
// A warp's stretch of a row of blocks: runs are linked to their smallest key within it.
constexpr std::uint32_t kBlocksPerSegment = 32;

// Rows of voxels in a block (2x2x1) at both connectivities.
constexpr std::uint32_t kBlockRows = 2;

struct PairGrid {
  std::uint32_t nx = 1, ny = 1, nz = 1;
  std::uint32_t row = 1, slice = 1;  // voxels: nx, nx * ny
  std::uint32_t pairs_x = 1;         // (nx + 1) / 2: pairs in a row, and blocks in a row
  std::uint32_t pair_slice = 1;      // pairs in a slice: pairs_x * ny
  std::uint32_t blocks_y = 1;        // rows of blocks in a slice
  // Blocks whose first voxel lies in words_first..words_last read Merge's window as words
  // (window_rows_readable).
  std::uint32_t words_first = 1, words_last = 0;
};

inline PairGrid make_pair_grid(Extent3 extent) {
  PairGrid grid;
  grid.nx = static_cast<std::uint32_t>(extent.x);
  grid.ny = static_cast<std::uint32_t>(extent.y);
  grid.nz = static_cast<std::uint32_t>(extent.z);
  grid.row = grid.nx;
  grid.slice = grid.nx * grid.ny;
  grid.pairs_x = (grid.nx + 1) / 2;
  grid.pair_slice = grid.pairs_x * grid.ny;
  grid.blocks_y = (grid.ny + kBlockRows - 1) / kBlockRows;
  // From the window's first row (z - 1, y - 1, x - 1) to 8 bytes past the aligned start of its
  // last (z, y + 1, x - 1), which begins row - 1 voxels after the block's first voxel.
  const std::uint64_t voxels = std::uint64_t{grid.slice} * grid.nz;
  grid.words_first = 1 + grid.row + grid.slice;
  grid.words_last = static_cast<std::uint32_t>(voxels >= grid.row + 7u ? voxels - grid.row - 7 : 0);
  return grid;
}

// The number of slots of the node array: one per pair.
inline std::uint64_t pair_count(const PairGrid& grid) {
  return std::uint64_t{grid.pair_slice} * grid.nz;
}

struct PairBlock {
  std::uint32_t i, y, z;  // block column, its first voxel row, its slice
  std::uint32_t pair;     // key of its top pair
  std::uint32_t voxel;    // raster index of its first voxel (2 i, y, z)
};

VOLCCL_HD PairBlock pair_block_at(const PairGrid& grid, std::uint32_t i, std::uint32_t j,
                                  std::uint32_t z) {
  const std::uint32_t y = j * kBlockRows;
  return {i, y, z, z * grid.pair_slice + y * grid.pairs_x + i,
          z * grid.slice + y * grid.row + 2 * i};
}

// Which of the block's voxels exist: bit lx + 2 ly.
VOLCCL_HD std::uint32_t existing_voxels(const PairGrid& grid, const PairBlock& block) {
  std::uint32_t bits = 2 * block.i + 1 < grid.nx ? 3u : 1u;
  if (block.y + 1 < grid.ny) bits |= bits << 2;
  return bits;
}

// The block's foreground voxels: bit lx + 2 ly.
VOLCCL_HD std::uint32_t block_foreground(const std::uint8_t* mask, const PairGrid& grid,
                                         const PairBlock& block) {
  const std::uint32_t existing = existing_voxels(grid, block);
  std::uint32_t foreground = 0;
  for (std::uint32_t l = 0; l < 2 * kBlockRows; ++l) {
    if (((existing >> l) & 1) && mask[block.voxel + (l & 1) + (l >> 1) * grid.row] != 0) {
      foreground |= 1u << l;
    }
  }
  return foreground;
}

// Under 18, the block's key: its top pair, or its bottom pair when the top row is background.
VOLCCL_HD std::uint32_t block_key(const PairGrid& grid, const PairBlock& block,
                                  std::uint32_t foreground) {
  return (foreground & 3u) != 0 ? block.pair : block.pair + grid.pairs_x;
}

// Under 18, whether the block touches its left neighbour: a foreground voxel of its left column
// next to a foreground voxel of the neighbour's right column (the two rows of both columns all
// touch, by a face or an edge).
VOLCCL_HD bool touches_left(const std::uint8_t* mask, const PairGrid& grid, const PairBlock& block,
                            std::uint32_t foreground) {
  if (block.i == 0 || (foreground & 5u) == 0) return false;
  bool left = mask[block.voxel - 1] != 0;
  if (block.y + 1 < grid.ny) left = left || mask[block.voxel - 1 + grid.row] != 0;
  return left;
}

// Lanes 0..lane of a segment.
VOLCCL_HD std::uint32_t lanes_up_to(std::uint32_t lane) {
  return lane >= 31 ? 0xFFFFFFFFu : (2u << lane) - 1;
}

// The lane whose key is the smallest of `lane`'s run of touching blocks in a segment, given a
// bit per lane of the segment: `linked` (the block touches its left neighbour, lane 0 never),
// `top` (the block's top row has foreground). A run's smallest key is its first top pair, since
// top pairs of a row of blocks precede its bottom pairs; without one, the run's first block.
struct RunMinimum {
  std::uint32_t lane;
  bool top;
};

VOLCCL_HD RunMinimum run_minimum(std::uint32_t linked, std::uint32_t top, std::uint32_t lane) {
  const std::uint32_t starts = ~linked;
  const std::uint32_t up_to_lane = lanes_up_to(lane);
  const auto first = static_cast<std::uint32_t>(highest_bit(starts & up_to_lane));
  const std::uint32_t next_starts = starts & ~up_to_lane;
  const std::uint32_t run =
      (next_starts == 0 ? 0xFFFFFFFFu : (next_starts & (~next_starts + 1)) - 1) &
      ~((1u << first) - 1);
  const std::uint32_t run_top = top & run;
  if (run_top != 0) return {static_cast<std::uint32_t>(lowest_bit(run_top)), true};
  return {first, false};
}

// The union-find forest over pairs: a pair's parent is stored in its own slot.
struct PairForest {
  std::uint32_t* parents;
  VOLCCL_HD std::uint32_t* slot(std::uint32_t key) const { return parents + key; }
};

// --- Initialization ----------------------------------------------------------------------------

// Under 18: writes the parents of the block's pairs: the run's smallest key for the block's key
// pair, the key for a bottom pair below a top pair with foreground, kNoPair for pairs of
// background.
struct UfbInitialize18 {
  std::uint32_t* parents;
  VOLCCL_HD void operator()(const PairGrid& grid, const PairBlock& block, std::uint32_t foreground,
                            std::uint32_t lane, RunMinimum minimum) const {
    const std::uint32_t run_key =
        block.pair - lane + minimum.lane + (minimum.top ? 0 : grid.pairs_x);
    const bool top = (foreground & 3u) != 0;
    parents[block.pair] = top ? run_key : kNoPair;
    if (block.y + 1 < grid.ny) {
      parents[block.pair + grid.pairs_x] =
          (foreground & 12u) == 0 ? kNoPair : (top ? block.pair : run_key);
    }
  }
};

// Under 6 a 2x2x1 block is one piece unless its foreground is one of the two diagonals, so its
// nodes are its pairs, linked when they touch. Initialization links them by runs over the
// segment's two rows: a column's voxels share a face, and two neighbouring columns touch exactly
// when one row has foreground in both, so the pieces of the two rows are runs of linked columns.
// Inside a block both columns are in one run unless the block is split (both columns have
// foreground and no row has both: a diagonal); so a run is a stretch of lanes, each linked to the
// one before, that begins at a lane's first piece (its only piece, or the first column of a split
// block) or at a split block's second column, and ends at a split block's first column or at the
// lane before the next unlinked one. That takes 32-bit lane masks (four votes), where columns
// would take 64-bit masks. Every pair points at its run's smallest key:
// the top pair of its first piece with a top voxel, or without one the bottom pair of its first
// piece.

// The lane's votes (bit per lane of the segment): `linked`, the block's first column touches the
// left neighbour's second column (never at lane 0); `split`, a diagonal block; `tops`, the first
// piece (the whole block unless split) has a top voxel; `split_tops`, a split block's second
// column has its top voxel.
struct SegmentPieces {
  std::uint32_t linked = 0, split = 0, tops = 0, split_tops = 0;
};

// One lane's bits of SegmentPieces; `left`: the left neighbour's foreground, 0 at lane 0.
struct BlockPieces {
  bool linked, split, top, split_top;
};

VOLCCL_HD BlockPieces block_pieces(std::uint32_t foreground, std::uint32_t left) {
  const bool linked = (foreground & (left >> 1) & 5u) != 0;
  const bool joined = (foreground & (foreground >> 1) & 5u) != 0;
  const bool split = (foreground & 5u) != 0 && (foreground & 10u) != 0 && !joined;
  return {linked, split, (foreground & (split ? 1u : 3u)) != 0, split && (foreground & 2u) != 0};
}

// The votes of a segment of `lanes` blocks taken one block at a time (the CPU backend's warp).
inline SegmentPieces segment_pieces(const std::uint32_t* foreground, std::uint32_t lanes) {
  SegmentPieces votes;
  for (std::uint32_t lane = 0; lane < lanes; ++lane) {
    const BlockPieces block = block_pieces(foreground[lane], lane > 0 ? foreground[lane - 1] : 0u);
    votes.linked |= std::uint32_t{block.linked} << lane;
    votes.split |= std::uint32_t{block.split} << lane;
    votes.tops |= std::uint32_t{block.top} << lane;
    votes.split_tops |= std::uint32_t{block.split_top} << lane;
  }
  return votes;
}

// Lanes first..last of a segment (none when last < first).
VOLCCL_HD std::uint32_t lanes_between(std::uint32_t first, std::uint32_t last) {
  return last < first ? 0u : lanes_up_to(last) & ~((1u << first) - 1);
}

// The smallest key of a run whose first pieces lie in lanes first..last and which, when
// `after_split`, begins at the second column of lane `split_lane` (a split block); without a top
// voxel, the bottom pair of the run's first lane.
VOLCCL_HD RunMinimum run_minimum_of(const SegmentPieces& votes, std::uint32_t split_lane,
                                    bool after_split, std::uint32_t first, std::uint32_t last) {
  if (after_split && ((votes.split_tops >> split_lane) & 1u) != 0) return {split_lane, true};
  const std::uint32_t tops = votes.tops & lanes_between(first, last);
  if (tops != 0) return {static_cast<std::uint32_t>(lowest_bit(tops)), true};
  return {after_split ? split_lane : first, false};
}

// The smallest keys of the runs of the lane's first piece and (for a split block) of its second
// column; for other blocks the second is the first.
struct PieceRunMinima {
  RunMinimum first, second;
};

VOLCCL_HD PieceRunMinima piece_run_minima(const SegmentPieces& votes, std::uint32_t lane) {
  // Lanes whose first piece begins a run's first pieces: unlinked, or after a split lane (the
  // run then begins at the split lane's second column unless the lane is unlinked too).
  const std::uint32_t begins = ~votes.linked | votes.split << 1;
  // Lanes whose first piece (split) or last piece (the next lane unlinked) ends a run; lane 31
  // always.
  const std::uint32_t ends = votes.split | ~(votes.linked >> 1);
  const std::uint32_t up_to_lane = lanes_up_to(lane);
  const auto begin = static_cast<std::uint32_t>(highest_bit(begins & up_to_lane));
  const bool after_split = ((votes.linked >> begin) & 1u) != 0;
  const auto end = static_cast<std::uint32_t>(lowest_bit(ends & ~(up_to_lane >> 1)));
  const RunMinimum first = run_minimum_of(votes, begin - 1, after_split, begin, end);
  if (((votes.split >> lane) & 1u) == 0) return {first, first};
  // The second column's run: the lanes after it up to the next split lane or unlinked lane.
  const std::uint32_t later = ~up_to_lane;
  const std::uint32_t second_ends =
      (votes.split & later) | (~(votes.linked >> 1) & ~(up_to_lane >> 1));
  const auto second_end = static_cast<std::uint32_t>(lowest_bit(second_ends));
  return {first, run_minimum_of(votes, lane, true, lane + 1, second_end)};
}

// Under 6: writes the parents of the block's pairs, each its run's smallest key (kNoPair for a
// pair of background). A split block's top pair is in its first piece when the top voxel is in
// the first column, and its bottom pair in the other.
struct UfbInitialize6 {
  std::uint32_t* parents;
  VOLCCL_HD void operator()(const PairGrid& grid, const PairBlock& block, std::uint32_t foreground,
                            std::uint32_t lane, const SegmentPieces& votes) const {
    const PieceRunMinima minima = piece_run_minima(votes, lane);
    const bool top_in_first = (foreground & 1u) != 0 || ((votes.split >> lane) & 1u) == 0;
    const std::uint32_t first_pair = block.pair - lane;
    const auto run_key = [&](std::uint32_t row_bits, bool in_first) {
      if (row_bits == 0) return kNoPair;
      const RunMinimum minimum = in_first ? minima.first : minima.second;
      return first_pair + minimum.lane + (minimum.top ? 0 : grid.pairs_x);
    };
    parents[block.pair] = run_key(foreground & 3u, top_in_first);
    if (block.y + 1 < grid.ny) {
      const bool bottom_in_first = ((votes.split >> lane) & 1u) == 0 || !top_in_first;
      parents[block.pair + grid.pairs_x] = run_key(foreground >> 2, bottom_in_first);
    }
  }
};

// --- Merge: the block's window -----------------------------------------------------------------
//
// The voxels around a block as a 32-bit set: bit cx + 4 cy + 16 layer is voxel
// (2 i - 1 + cx, y - 1 + cy, z - 1 + layer), cx and cy in 0..3. Layer 1 is the block's slice;
// the block's voxels are cx 1-2, cy 1-2.

constexpr std::uint32_t kFirstColumn = 0x11111111u;      // cx == 0
constexpr std::uint32_t kLastColumn = 0x88888888u;       // cx == 3
constexpr std::uint32_t kFirstRow = 0x000F000Fu;         // cy == 0
constexpr std::uint32_t kLastRow = 0xF000F000u;          // cy == 3
constexpr std::uint32_t kLeftBlockVoxels = 0x01100000u;  // cx 0, cy 1-2, layer 1

// Voxels of the lower neighbour blocks (those before the block in raster order) that Merge
// reads: under 18 the whole slice below as far as the window reaches, the row above, and the
// left neighbour; under 6 the face neighbours of the block's voxels among them and the voxels
// that close a square with them (cx 0-2 of the row above and of the slice below's rows cy 1-2,
// cx 1-2 of its row cy 0, and the left neighbour's column).
template <int Connectivity>
VOLCCL_HD constexpr std::uint32_t lower_window() {
  return Connectivity == 6 ? 0x01170776u : 0x011FFFFFu;
}

// Rows of the window in the slice below (they reach one further under 18).
template <int Connectivity>
VOLCCL_HD constexpr std::uint32_t window_rows() {
  return Connectivity == 6 ? 3 : 4;
}

// The window positions of the block's voxels (bit lx + 2 ly).
VOLCCL_HD std::uint32_t block_positions(std::uint32_t foreground) {
  return ((foreground & 3u) << 21) | (((foreground >> 2) & 3u) << 25);
}

VOLCCL_HD std::uint32_t block_voxels_of(std::uint32_t positions) {
  return ((positions >> 21) & 3u) | (((positions >> 25) & 3u) << 2);
}

VOLCCL_HD std::uint32_t shifted_along_x(std::uint32_t positions) {
  return ((positions << 1) & ~kFirstColumn) | ((positions >> 1) & ~kLastColumn);
}

VOLCCL_HD std::uint32_t shifted_along_y(std::uint32_t positions) {
  return ((positions << 4) & ~kFirstRow) | ((positions >> 4) & ~kLastRow);
}

VOLCCL_HD std::uint32_t other_layer(std::uint32_t positions) {
  return (positions << 16) | (positions >> 16);
}

// The positions adjacent to `positions` under the connectivity, and the positions themselves:
// under 6 the face neighbours; under 18 the 3x3 square in the same slice and the cross of five
// in the other.
template <int Connectivity>
VOLCCL_HD std::uint32_t dilate(std::uint32_t positions) {
  const std::uint32_t cross = positions | shifted_along_x(positions) | shifted_along_y(positions);
  if (Connectivity == 6) return cross | other_layer(positions);
  const std::uint32_t row = positions | shifted_along_x(positions);
  return row | shifted_along_y(row) | other_layer(cross);
}

// Which window positions lie inside the volume.
template <int Connectivity>
VOLCCL_HD std::uint32_t window_inside_volume(const PairGrid& grid, const PairBlock& block) {
  std::uint32_t xs = 0;
  for (std::uint32_t cx = 0; cx < 4; ++cx) {
    if ((cx > 0 || block.i > 0) && 2 * block.i + cx - 1 < grid.nx) xs |= 1u << cx;
  }
  std::uint32_t layer = 0;
  for (std::uint32_t cy = 0; cy < window_rows<Connectivity>(); ++cy) {
    if ((cy > 0 || block.y > 0) && block.y + cy - 1 < grid.ny) layer |= xs << (4 * cy);
  }
  return (block.z > 0 ? layer : 0u) | (layer << 16);
}

// Whether the whole window lies inside the volume.
template <int Connectivity>
VOLCCL_HD bool window_is_interior(const PairGrid& grid, const PairBlock& block) {
  return block.i > 0 && 2 * block.i + 2 < grid.nx && block.y > 0 && block.z > 0 &&
         block.y + window_rows<Connectivity>() - 1 <= grid.ny;
}

// Whether window_foreground may read the window's rows as words: the reads of nonzero_bytes4
// stay inside the mask (make_pair_grid). That holds for almost every block, those at the volume's
// x faces too: the positions there that wrap around to the next or the previous row are dropped
// by `wanted`. Reading those blocks' windows a byte at a time kept a lane or two busy while the
// rest of their warp waited, in many of Merge's warps (bench/notes/union-find-3d.md).
VOLCCL_HD bool window_rows_readable(const PairGrid& grid, const PairBlock& block) {
  return block.voxel >= grid.words_first && block.voxel <= grid.words_last;
}

// Foreground of the window positions in `wanted`, which lie inside the volume.
template <int Connectivity>
VOLCCL_HD std::uint32_t window_foreground(const std::uint8_t* mask, const PairGrid& grid,
                                          const PairBlock& block, std::uint32_t wanted) {
  // The wrap-around at the volume's low faces cancels for every position inside the volume.
  const std::uint32_t corner = block.voxel - 1 - grid.row - grid.slice;
  if (window_rows_readable(grid, block)) {
    // Whole rows of four voxels as words: far fewer instructions than a byte per position.
    std::uint32_t foreground = 0;
    for (std::uint32_t cy = 0; cy < window_rows<Connectivity>(); ++cy) {
      foreground |= detail::nonzero_bytes4(mask + corner + cy * grid.row) << (4 * cy);
    }
    for (std::uint32_t cy = 0; cy <= kBlockRows; ++cy) {
      foreground |= detail::nonzero_bytes4(mask + corner + grid.slice + cy * grid.row)
                    << (16 + 4 * cy);
    }
    return foreground & wanted;
  }
  std::uint32_t foreground = 0;
  VOLCCL_UNROLL
  for (std::uint32_t p = 0; p < 32; ++p) {
    if (((wanted >> p) & 1) &&
        mask[corner + (p & 3) + ((p >> 2) & 3) * grid.row + (p >> 4) * grid.slice] != 0) {
      foreground |= 1u << p;
    }
  }
  return foreground;
}

// The key of the pair holding window position p.
VOLCCL_HD std::uint32_t window_key(const PairGrid& grid, const PairBlock& block, int p) {
  const int cx = p & 3, cy = (p >> 2) & 3, layer = p >> 4;
  const int dx = cx == 0 ? -1 : (cx == 3 ? 1 : 0);
  return block.pair + static_cast<std::uint32_t>(dx) +
         static_cast<std::uint32_t>(cy - 1) * grid.pairs_x +
         static_cast<std::uint32_t>(layer - 1) * grid.pair_slice;
}

// The connected part of `positions` that holds `seed`, grown until it holds all of `wanted` or
// stops growing.
template <int Connectivity>
VOLCCL_HD std::uint32_t cluster_of(std::uint32_t seed, std::uint32_t positions,
                                   std::uint32_t wanted) {
  std::uint32_t cluster = seed;
  while ((wanted & ~cluster) != 0) {
    const std::uint32_t grown = dilate<Connectivity>(cluster) & positions;
    if (grown == cluster) break;
    cluster = grown;
  }
  return cluster;
}

// Under 6: the window positions of the lower pairs that the block's pairs must be united with.
// The contacts are pair to pair: the top pair with the pair above it (bit 16 + cx), each pair
// with the pair behind it (4 + cx, 8 + cx) and, at a segment's first lane (inside a segment
// Initialization linked them), with the left neighbour's pair of its row (20, 24). A contact needs
// no Union when it is joined through contacts earlier in the order (slice, row of blocks; left,
// above, behind the top pair, behind the bottom pair; column), so by induction every contact is
// joined once Merge is over:
// - the pair touches the left neighbour's pair of its row, which touches the pair above (behind)
//   it at the column next to ours, itself linked to the pair above (behind) us (UF's rule);
// - behind the top pair: a column of it has foreground above, behind and above behind (the pair
//   above reaches the pair behind through the contact behind of the row of blocks before);
// - behind the bottom pair: a column of it has foreground in the top pair, behind the top pair
//   and behind itself (the two pairs of the block, and the two behind it, are linked).
// Inside a coarse blob only the first column of each run and the top of the blob make Unions.
VOLCCL_HD std::uint32_t pairs_to_unite_under_6(std::uint32_t window, bool segment_start) {
  constexpr std::uint32_t kOwnColumns = 6u, kLeftLink = 3u;  // cx 1-2; cx 0-1
  const std::uint32_t top = (window >> 20) & 7u, bottom = (window >> 24) & 7u;
  const std::uint32_t above = (window >> 16) & 7u, behind_above = window & 7u;
  const std::uint32_t behind_top = (window >> 4) & 7u, behind_bottom = (window >> 8) & 7u;
  const bool top_left = (top & kLeftLink) == kLeftLink;
  const bool bottom_left = (bottom & kLeftLink) == kLeftLink;
  const auto first = [](std::uint32_t columns) { return columns & (~columns + 1); };
  std::uint32_t positions = 0;
  if (segment_start && top_left) positions |= 1u << 20;
  if (segment_start && bottom_left) positions |= 1u << 24;
  const std::uint32_t up = top & above & kOwnColumns;
  if (up != 0 && !(top_left && (above & kLeftLink) == kLeftLink)) positions |= first(up) << 16;
  const std::uint32_t back = top & behind_top & kOwnColumns;
  if (back != 0 && !(top_left && (behind_top & kLeftLink) == kLeftLink) &&
      (back & above & behind_above) == 0) {
    positions |= first(back) << 4;
  }
  const std::uint32_t back_bottom = bottom & behind_bottom & kOwnColumns;
  if (back_bottom != 0 && !(bottom_left && (behind_bottom & kLeftLink) == kLeftLink) &&
      (back_bottom & top & behind_top) == 0) {
    positions |= first(back_bottom) << 8;
  }
  return positions;
}

// Merge (Alg. 2 over the blocks). Under 6, the Unions of pairs_to_unite_under_6, each from the
// block's pair of the contact's row. Under 18 a block is one node, and gets one Union per cluster
// of the lower blocks' foreground voxels in the window that touches the block: two adjacent
// foreground voxels of lower blocks lie in blocks that touch, both before this one, and those are
// united by the thread of the later one (by induction over the blocks in raster order), so a
// cluster needs one Union, with any of its voxels' pairs. The cluster of the left neighbour needs
// none when Initialization put the two blocks in one run (a segment's lane other than 0 that
// touches its left neighbour); when every candidate position is foreground (inside any blob)
// they are one cluster (tests/ufb_logic_3d_test.cpp checks every foreground pattern and cut of
// the window).
template <int Connectivity>
struct UfbMerge {
  const std::uint8_t* mask;
  std::uint32_t* parents;

  VOLCCL_HD void operator()(const PairGrid& grid, const PairBlock& block) const {
    constexpr std::uint32_t kOwn = 0x06600000u;
    constexpr std::uint32_t kLower = lower_window<Connectivity>();
    const bool interior = window_is_interior<Connectivity>(grid, block);
    const std::uint32_t inside =
        interior ? 0xFFFFFFFFu : window_inside_volume<Connectivity>(grid, block);
    const std::uint32_t window =
        window_foreground<Connectivity>(mask, grid, block, (kLower | kOwn) & inside);
    const std::uint32_t own = window & kOwn;
    if (own == 0) return;
    const PairForest forest{parents};
    const bool segment_start = block.i % kBlocksPerSegment == 0;
    if (Connectivity == 6) {
      std::uint32_t positions = pairs_to_unite_under_6(window, segment_start);
      while (positions != 0) {
        const int p = lowest_bit(positions);
        positions &= positions - 1;
        const std::uint32_t pair = block.pair + (((p >> 2) & 3) == 2 ? grid.pairs_x : 0u);
        detail::unite(forest, pair, window_key(grid, block, p));
      }
      return;
    }
    const std::uint32_t candidates = dilate<Connectivity>(own) & kLower & inside;
    const std::uint32_t touching = candidates & window;
    if (touching == 0) return;
    const bool in_run = !segment_start && (touching & kLeftBlockVoxels) != 0;
    std::uint32_t node = block_key(grid, block, block_voxels_of(own));
    if (touching == candidates) {
      if (!in_run) detail::unite(forest, node, window_key(grid, block, lowest_bit(touching)));
      return;
    }
    const std::uint32_t lower = window & kLower;
    std::uint32_t remaining = touching;
    if (in_run) {
      remaining &= ~cluster_of<Connectivity>(touching & kLeftBlockVoxels, lower, remaining);
    }
    while (remaining != 0) {
      const int p = lowest_bit(remaining);
      remaining &= ~cluster_of<Connectivity>(1u << p, lower, remaining);
      node = detail::unite(forest, node, window_key(grid, block, p));
    }
  }
};

// --- Root marking and FinalLabeling ------------------------------------------------------------
//
// No Compression pass: after Merge a root is a pair whose slot holds its own key, which one
// streaming read of the slots finds (UfbRoots), and FinalLabeling walks each block's key to its
// root, the trees being shallow after Merge's path halving. A Compression pass would walk the
// same paths and write the slots back, one more pass over the node array
// (bench/notes/union-find-3d.md).

// The block's pairs that are roots: bit 0 the top pair, bit 1 the bottom pair (under 18 never
// both: a bottom pair below a top pair with foreground hangs under it).
struct UfbRoots {
  const std::uint32_t* parents;
  VOLCCL_HD std::uint32_t operator()(const PairGrid& grid, const PairBlock& block) const {
    std::uint32_t roots = parents[block.pair] == block.pair ? 1u : 0u;
    if (block.y + 1 < grid.ny) {
      const std::uint32_t bottom = block.pair + grid.pairs_x;
      if (parents[bottom] == bottom) roots |= 2u;
    }
    return roots;
  }
};

// FinalLabeling: the component's consecutive label to the block's foreground voxels, 0 to its
// background voxels, from the mask and the roots of the block's pairs: under 18 the block's key
// pair for both rows, under 6 each pair for its row (the two may be apart on a diagonal). The
// kernel issues the loads of several blocks before it walks any of them (first_parents, then
// labels_of, then store); the CPU takes a block at a time.
template <int Connectivity>
struct UfbFinalLabeling {
  const std::uint8_t* mask;
  std::uint32_t* labels;
  std::uint32_t* parents;  // read only: the forest walked to the roots
  const std::uint32_t* root_bitmap;
  const std::uint32_t* words_before;

  // The parents to walk from, kNoPair for background: under 6 those of the top and the bottom
  // pair; under 18 that of the key pair in *top (the top pair's slot is read beside the mask, not
  // after it: it is the key whenever it holds a parent).
  VOLCCL_HD void first_parents(const PairGrid& grid, const PairBlock& block, std::uint32_t* top,
                               std::uint32_t* bottom) const {
    *top = parents[block.pair];
    *bottom = kNoPair;
    if (block.y + 1 >= grid.ny) return;
    if (Connectivity == 6) {
      *bottom = parents[block.pair + grid.pairs_x];
    } else if (*top == kNoPair) {
      *top = parents[block.pair + grid.pairs_x];
    }
  }

  VOLCCL_HD std::uint32_t label_of(std::uint32_t parent) const {
    if (parent == kNoPair) return 0;
    const std::uint32_t root = detail::find_root(PairForest{parents}, parent);
    return detail::component_label(root_bitmap, words_before, root);
  }

  // The labels of the top and bottom rows from first_parents.
  VOLCCL_HD void labels_of(std::uint32_t top, std::uint32_t bottom, std::uint32_t* top_label,
                           std::uint32_t* bottom_label) const {
    *top_label = label_of(top);
    *bottom_label = Connectivity == 6 ? label_of(bottom) : *top_label;
  }

  VOLCCL_HD void store(const PairGrid& grid, const PairBlock& block, std::uint32_t foreground,
                       std::uint32_t top_label, std::uint32_t bottom_label) const {
    const bool whole_pairs = 2 * block.i + 1 < grid.nx;
    for (std::uint32_t ly = 0; ly < kBlockRows; ++ly) {
      if (ly > 0 && block.y + ly >= grid.ny) break;
      const std::uint32_t index = block.voxel + ly * grid.row;
      const std::uint32_t label = ly == 0 ? top_label : bottom_label;
      const std::uint32_t first = (foreground >> (2 * ly)) & 1 ? label : 0;
      const std::uint32_t second = (foreground >> (2 * ly + 1)) & 1 ? label : 0;
#if defined(__CUDA_ARCH__)
      // One 8-byte store for an aligned pair: this step is bound by memory.
      if (whole_pairs && index % 2 == 0) {
        *reinterpret_cast<uint2*>(labels + index) = {first, second};
        continue;
      }
#endif
      labels[index] = first;
      if (whole_pairs) labels[index + 1] = second;
    }
  }

  VOLCCL_HD void operator()(const PairGrid& grid, const PairBlock& block) const {
    std::uint32_t top, bottom, top_label, bottom_label;
    first_parents(grid, block, &top, &bottom);
    labels_of(top, bottom, &top_label, &bottom_label);
    store(grid, block, block_foreground(mask, grid, block), top_label, bottom_label);
  }
};

}  // namespace volccl::kernels3d
