// The union-find forest of the block-based labelers BUF and BKE (BUF/BKE paper Sec. 5, Alg. 2)
// and their per-block steps, written once for 2x2 blocks (kernels2d/block_logic_2d.h) and 2x2x2
// blocks (kernels3d/block_logic_3d.h), for the CUDA kernels and the CPU backend alike. Under 8-
// and 26-connectivity all foreground voxels of a block share a label (Sec. 4.3), so the steps are
// the same in both dimensions; only the block's geometry and its neighbourhood differ. A
// dimension's traits struct D (kernels2d::Dim2, kernels3d::Dim3) gives them at compile time, as
// types, constants and static functions that inline as before:
// - Grid and Block: the image's grid of blocks, and a block with its `anchor` voxel;
// - Positions: a bitset over the 4^d positions of a block's neighbourhood;
// - kBlockVoxels: 4 or 8. Bit l of a foreground word is the block's voxel l in raster order
//   (l = lx + 2 ly + 4 lz), so bits 2r and 2r + 1 are a row of the block;
// - kWordPairs: whether two adjacent label words are read and written as one 8-byte access where
//   aligned (the 2D kernels), or one by one;
// - voxel_offset(grid, l), existing(grid, block), foreground(mask, grid, block) and
//   anchor_of(grid, voxel): the block's voxels, those inside the image, the foreground ones, and
//   the anchor of any voxel's block;
// - lower_neighbours(mask, grid, block, foreground), position_voxel(grid, block, p),
//   neighbour_at(p), dilate(positions) and neighbour_anchor(grid, block, n): the neighbourhood.
//
// Departures from the paper, so that the roots come out in the raster order of the components'
// first voxels and the final numbering needs no sort (raster_rank.h):
// - a block's union-find key is the raster index of its first foreground voxel, not of its anchor;
//   its parent pointer still lives at the anchor. A block is one piece, so its first foreground
//   voxel is its component's first voxel inside the block, and a component's smallest key is the
//   component's first voxel;
// - BUF's Initialization, which needs the first foreground voxel for the key, also stores the
//   block's foreground bits, which Sec. 5.3 has Merge store and FinalLabeling then reads;
// - BKE's Initialization links a block to the raster-first foreground voxel touching it from a
//   lower neighbour block only when that voxel precedes the block's own key, so parents always
//   have smaller keys than their children and every tree's root is its smallest key.
// And a block unites with one lower neighbour per cluster of touching voxels rather than with
// every connected one (neighbours_to_unite).
#pragma once

#include <cstdint>

#include "runtime/host_device.h"
#include "runtime/raster_rank.h"
#include "runtime/union_find.h"

namespace volccl::kernels {

// Marks an empty block's anchor slot; never a voxel index (max_voxel_count < kNoKey).
constexpr std::uint32_t kNoKey = 0xFFFFFFFFu;

// The info word's low kBlockVoxels bits: the block's foreground voxels. Above them, for BKE, the
// lower neighbours that Reduction must still unite with (Sec. 5.2, Table 1).
template <class D>
constexpr std::uint32_t kForegroundBits = (1u << D::kBlockVoxels) - 1;

// Which of the positions first-1 .. first+2 around a block along one axis lie in 0..n-1 (first =
// 2 block).
VOLCCL_HD std::uint32_t axis_inside(std::uint32_t block, std::uint32_t n) {
  std::uint32_t bits = 0;
  for (std::uint32_t c = 0; c < 4; ++c) {
    if ((c > 0 || block > 0) && 2 * block + c - 1 < n) bits |= 1u << c;
  }
  return bits;
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

// The block's key: the raster index of its first foreground voxel (`foreground` != 0).
template <class D>
VOLCCL_HD std::uint32_t first_voxel(const typename D::Grid& grid, const typename D::Block& block,
                                    std::uint32_t foreground) {
  return block.anchor + D::voxel_offset(grid, detail::lowest_bit(foreground));
}

// The union-find forest stored in the label image (see union_find.h).
template <class D>
struct LabelForest {
  std::uint32_t* labels;
  typename D::Grid grid;
  VOLCCL_HD std::uint32_t* slot(std::uint32_t voxel) const {
    return labels + D::anchor_of(grid, voxel);
  }
};

// Where a block keeps its info word between kernels: its first voxel after the anchor, as Fig. 8
// uses the top-right pixel and falls back to the bottom-left one in odd-sized images. A block of
// one voxel (the far corner of an image odd in every dimension) has no room: instead of borrowing
// a neighbour's voxel, which that neighbour's FinalLabeling writes while this block would read
// it, or the paper's extra byte, its word is recomputed from the input.
template <class D>
VOLCCL_HD bool info_slot(const typename D::Grid& grid, const typename D::Block& block,
                         std::uint32_t* index) {
  const std::uint32_t others = D::existing(grid, block) & ~1u;
  if (others == 0) return false;
  *index = block.anchor + D::voxel_offset(grid, detail::lowest_bit(others));
  return true;
}

// The anchor word and the info word: where D pairs words, one store where they are adjacent.
template <class D>
VOLCCL_HD void store_block_words(std::uint32_t* labels, const typename D::Grid& grid,
                                 const typename D::Block& block, std::uint32_t anchor_word,
                                 std::uint32_t info) {
  std::uint32_t slot;
  if constexpr (D::kWordPairs) {
    if (!info_slot<D>(grid, block, &slot)) {
      labels[block.anchor] = anchor_word;
    } else if (slot == block.anchor + 1) {
      store_pair(labels + block.anchor, anchor_word, info);
    } else {
      labels[block.anchor] = anchor_word;
      labels[slot] = info;
    }
  } else {
    labels[block.anchor] = anchor_word;
    if (info_slot<D>(grid, block, &slot)) labels[slot] = info;
  }
}

// The neighbourhood positions of the lower neighbour blocks that touch one of the block's
// foreground voxels (`candidates`), and those of them that are foreground (`touching`).
template <class Positions>
struct NeighbourPositions {
  Positions candidates;
  Positions touching;
};

// The lower neighbours the block must unite with: one per cluster of adjacent touching voxels,
// the block of the cluster's raster-first voxel. The other blocks of a cluster need no Union from
// this block: two adjacent voxels of a cluster lie in lower neighbour blocks that are neighbours
// of each other, and the thread of the later of the two unites them (by induction over the blocks
// in raster order, with the same rule).
template <class D>
VOLCCL_HD std::uint32_t neighbours_to_unite(
    const NeighbourPositions<typename D::Positions>& voxels) {
  using Positions = typename D::Positions;
  const Positions touching = voxels.touching;
  if (touching == 0) return 0;
  // The candidates of every foreground pattern, in every cut of the neighbourhood at the image's
  // edges, form one connected set (tests/block_logic_2d_test.cpp and block_logic_3d_test.cpp
  // check all of them), so when all of them are foreground, as inside any blob, they are one
  // cluster.
  if (touching == voxels.candidates) return 1u << D::neighbour_at(detail::lowest_bit(touching));
  std::uint32_t neighbours = 0;
  Positions remaining = touching;
  while (remaining != 0) {
    const int first = detail::lowest_bit(remaining);
    Positions cluster = Positions{1} << first;
    for (Positions grown = D::dilate(cluster) & touching; grown != cluster;
         grown = D::dilate(cluster) & touching) {
      cluster = grown;
    }
    remaining &= ~cluster;
    neighbours |= 1u << D::neighbour_at(first);
  }
  return neighbours;
}

// --- per-block steps: each is one thread of a CUDA kernel, or one call of the CPU loop ---------

// BKE's Initialization for one block: the parent to store at the anchor and the info word.
struct BkeStart {
  std::uint32_t parent;
  std::uint32_t info;
};

template <class D>
VOLCCL_HD BkeStart bke_start(const std::uint8_t* mask, const typename D::Grid& grid,
                             const typename D::Block& block) {
  const std::uint32_t foreground = D::foreground(mask, grid, block);
  if (foreground == 0) return {kNoKey, 0};
  const std::uint32_t key = first_voxel<D>(grid, block, foreground);
  const NeighbourPositions<typename D::Positions> neighbour_voxels =
      D::lower_neighbours(mask, grid, block, foreground);
  const typename D::Positions touching = neighbour_voxels.touching;
  std::uint32_t to_unite = neighbours_to_unite<D>(neighbour_voxels);
  std::uint32_t parent = key;
  if (touching != 0) {
    // The raster-first touching voxel starts the first cluster: linking to it replaces that
    // cluster's Union.
    const int first = detail::lowest_bit(touching);
    const std::uint32_t voxel = D::position_voxel(grid, block, first);
    if (voxel < key) {
      parent = voxel;
      to_unite &= ~(1u << D::neighbour_at(first));
    }
  }
  return {parent, foreground | (to_unite << D::kBlockVoxels)};
}

// The info word of a block, from its slot or, for a one-voxel block, from the input.
template <class D>
VOLCCL_HD std::uint32_t load_info(const std::uint8_t* mask, const std::uint32_t* labels,
                                  const typename D::Grid& grid, const typename D::Block& block,
                                  bool bke) {
  std::uint32_t slot;
  if (info_slot<D>(grid, block, &slot)) return labels[slot];
  return bke ? bke_start<D>(mask, grid, block).info : D::foreground(mask, grid, block);
}

// Unites a block with its lower neighbours selected in `neighbours`, each Union starting from the
// root the previous one left.
template <class D>
VOLCCL_HD void unite_with_neighbours(std::uint32_t* labels, const typename D::Grid& grid,
                                     const typename D::Block& block, std::uint32_t key,
                                     std::uint32_t neighbours) {
  const LabelForest<D> forest{labels, grid};
  while (neighbours != 0) {
    const int n = detail::lowest_bit(neighbours);
    neighbours &= neighbours - 1;
    key = detail::unite(forest, key, D::neighbour_anchor(grid, block, n));
  }
}

// BUF's Initialization (Alg. 2): the key at the anchor, the foreground bits in the info slot.
template <class D>
struct BufInitialize {
  const std::uint8_t* mask;
  std::uint32_t* labels;
  VOLCCL_HD void operator()(const typename D::Grid& grid, const typename D::Block& block) const {
    const std::uint32_t foreground = D::foreground(mask, grid, block);
    const std::uint32_t key = foreground ? first_voxel<D>(grid, block, foreground) : kNoKey;
    store_block_words<D>(labels, grid, block, key, foreground);
  }
};

// BUF's Merge (Alg. 2): Union with the connected lower neighbours, one per cluster.
template <class D>
struct BufMerge {
  const std::uint8_t* mask;
  std::uint32_t* labels;
  VOLCCL_HD void operator()(const typename D::Grid& grid, const typename D::Block& block) const {
    const std::uint32_t foreground = load_info<D>(mask, labels, grid, block, false);
    if (foreground == 0) return;
    const std::uint32_t neighbours =
        neighbours_to_unite<D>(D::lower_neighbours(mask, grid, block, foreground));
    if (neighbours == 0) return;
    unite_with_neighbours<D>(labels, grid, block, first_voxel<D>(grid, block, foreground),
                             neighbours);
  }
};

// BKE's Initialization (Sec. 5.2): the link to the first connected neighbour at the anchor, the
// info word in the info slot.
template <class D>
struct BkeInitialize {
  const std::uint8_t* mask;
  std::uint32_t* labels;
  VOLCCL_HD void operator()(const typename D::Grid& grid, const typename D::Block& block) const {
    const BkeStart start = bke_start<D>(mask, grid, block);
    store_block_words<D>(labels, grid, block, start.parent, start.info);
  }
};

// BKE's Reduction: Union with the connected neighbours Initialization did not link to.
template <class D>
struct BkeReduce {
  const std::uint8_t* mask;
  std::uint32_t* labels;
  VOLCCL_HD void operator()(const typename D::Grid& grid, const typename D::Block& block) const {
    const std::uint32_t info = load_info<D>(mask, labels, grid, block, true);
    const std::uint32_t neighbours = info >> D::kBlockVoxels;
    if (neighbours == 0) return;
    unite_with_neighbours<D>(labels, grid, block,
                             first_voxel<D>(grid, block, info & kForegroundBits<D>), neighbours);
  }
};

// Compression (Compress or InlineCompress for the IC variants). With a bitmap, also marks the
// roots for the raster-order ranking: that must be the last Compression, after every Union.
template <class D>
struct Compress {
  std::uint32_t* labels;
  bool inline_compression;
  std::uint32_t* root_bitmap;  // nullptr: do not mark
  VOLCCL_HD void operator()(const typename D::Grid& grid, const typename D::Block& block) const {
    std::uint32_t* slot = labels + block.anchor;
    if (detail::load_relaxed(slot) == kNoKey) return;
    const LabelForest<D> forest{labels, grid};
    const std::uint32_t root =
        inline_compression ? detail::compress_inline(forest, slot) : detail::compress(forest, slot);
    if (root_bitmap != nullptr && D::anchor_of(grid, root) == block.anchor) {
      detail::mark_component_start(root_bitmap, root);
    }
  }
};

// FinalLabeling (Alg. 2): the component's consecutive label to the block's foreground voxels, 0
// to its background voxels: a row of the block a store where D pairs words, else a voxel a store.
template <class D>
struct FinalLabeling {
  const std::uint8_t* mask;
  std::uint32_t* labels;
  const std::uint32_t* root_bitmap;
  const std::uint32_t* words_before;
  bool bke;
  VOLCCL_HD void operator()(const typename D::Grid& grid, const typename D::Block& block) const {
    std::uint32_t foreground;
    label_block(grid, block, &foreground);
  }

  // Writes the block's voxels; returns its label (0 for an empty block) and sets *foreground to
  // its foreground voxels (bit l as in D), for the statistics gathered alongside.
  VOLCCL_HD std::uint32_t label_block(const typename D::Grid& grid, const typename D::Block& block,
                                      std::uint32_t* foreground_out) const {
    const std::uint32_t existing = D::existing(grid, block);
    // Where D pairs words, the root is read with the info word, in one load where the info word
    // follows the anchor (voxel 1 exists); else only once the block is known to be foreground.
    std::uint32_t root = 0, info;
    if constexpr (D::kWordPairs) {
      if (existing & 2) {
        load_pair(labels + block.anchor, &root, &info);
      } else {
        root = labels[block.anchor];
        info = load_info<D>(mask, labels, grid, block, bke);
      }
    } else {
      info = load_info<D>(mask, labels, grid, block, bke);
    }
    const std::uint32_t foreground = info & kForegroundBits<D>;
    const std::uint32_t label =
        foreground ? detail::component_label(root_bitmap, words_before,
                                             D::kWordPairs ? root : labels[block.anchor])
                   : 0;
    if constexpr (D::kWordPairs) {
      // Row `row` is voxels 2 row and 2 row + 1: one 8-byte store where it has both.
      for (int row = 0; row < D::kBlockVoxels / 2; ++row) {
        if (((existing >> (2 * row)) & 1) == 0) break;  // no row after a missing one
        std::uint32_t* first = labels + block.anchor + D::voxel_offset(grid, 2 * row);
        const std::uint32_t left = ((foreground >> (2 * row)) & 1) ? label : 0;
        if ((existing >> (2 * row + 1)) & 1) {
          store_pair(first, left, ((foreground >> (2 * row + 1)) & 1) ? label : 0);
        } else {
          *first = left;
        }
      }
    } else {
      for (int l = 0; l < D::kBlockVoxels; ++l) {
        if ((existing >> l) & 1) {
          labels[block.anchor + D::voxel_offset(grid, l)] = ((foreground >> l) & 1) ? label : 0;
        }
      }
    }
    *foreground_out = foreground & existing;
    return label;
  }
};

// The steps above, for the step sequence shared by both dimensions (buf_bke_steps.h).
template <class D>
struct BufBkeSteps {
  using BufInitialize = kernels::BufInitialize<D>;
  using BufMerge = kernels::BufMerge<D>;
  using BkeInitialize = kernels::BkeInitialize<D>;
  using BkeReduce = kernels::BkeReduce<D>;
  using Compress = kernels::Compress<D>;
  using FinalLabeling = kernels::FinalLabeling<D>;
};

}  // namespace volccl::kernels
