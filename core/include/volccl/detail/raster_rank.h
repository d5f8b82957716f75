// Consecutive labels in raster order from union-find roots, without a sort.
//
// Each root's key is the raster index of its component's first voxel (see union_find.h). The
// roots set their key's bit in a bitmap with one bit per voxel; an exclusive prefix sum of the
// words' population counts (CUB on the GPU) then gives every root its rank, and the label of a
// component is its rank + 1: the numbering of ITK's ConnectedComponentImageFilter,
// scipy.ndimage.label and cc3d.
#pragma once

#include <cstdint>

#include "volccl/detail/host_device.h"

namespace volccl::detail {

constexpr std::uint64_t rank_words(std::uint64_t voxel_count) { return (voxel_count + 31) / 32; }

VOLCCL_HD void mark_component_start(std::uint32_t* bitmap, std::uint32_t root_key) {
  atomic_or(&bitmap[root_key >> 5], 1u << (root_key & 31));
}

// `words_before[w]`: set bits in bitmap words 0..w-1.
VOLCCL_HD std::uint32_t component_label(const std::uint32_t* bitmap,
                                        const std::uint32_t* words_before, std::uint32_t root_key) {
  const std::uint32_t word = root_key >> 5;
  const std::uint32_t below = bitmap[word] & ((1u << (root_key & 31)) - 1u);
  return words_before[word] + popcount(below) + 1;
}

}  // namespace volccl::detail
