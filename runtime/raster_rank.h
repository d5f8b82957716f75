// Consecutive labels in raster order from union-find roots, without a sort.
//
// Each root's key is the raster index of its component's first voxel (see union_find.h). The
// roots set their key's bit in a bitmap with one bit per voxel; an exclusive prefix sum of the
// words' population counts (CUB on the GPU) then gives every root its rank, and the label of a
// component is its rank + 1: the numbering of ITK's ConnectedComponentImageFilter,
// scipy.ndimage.label and cc3d.
#pragma once

#include <cstdint>

#include "runtime/host_device.h"

namespace volccl::detail {

constexpr std::uint64_t rank_words(std::uint64_t voxel_count) { return (voxel_count + 31) / 32; }

VOLCCL_HD void mark_component_start(std::uint32_t* bitmap, std::uint32_t root_key) {
  atomic_or(&bitmap[root_key >> 5], 1u << (root_key & 31));
}

// Marks the roots among 32 consecutive keys at once: bit k of `roots` for key first_key + k. A
// warp's keys in a row span at most two words: two atomics instead of one per root.
VOLCCL_HD void mark_component_starts(std::uint32_t* bitmap, std::uint32_t first_key,
                                     std::uint32_t roots) {
  if (roots == 0) return;
  const std::uint32_t shift = first_key & 31;
  atomic_or(&bitmap[first_key >> 5], roots << shift);
  if (shift != 0 && (roots >> (32 - shift)) != 0) {
    atomic_or(&bitmap[(first_key >> 5) + 1], roots >> (32 - shift));
  }
}

// `words_before[w]`: set bits in bitmap words 0..w-1.
VOLCCL_HD std::uint32_t component_label(const std::uint32_t* bitmap,
                                        const std::uint32_t* words_before, std::uint32_t root_key) {
  const std::uint32_t word = root_key >> 5;
  const std::uint32_t below = bitmap[word] & ((1u << (root_key & 31)) - 1u);
  return words_before[word] + popcount(below) + 1;
}

}  // namespace volccl::detail
