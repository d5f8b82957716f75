// The per-lane logic of RUF's statistics pass (ruf_statistics_3d.cu), written for the GPU's
// kernel and the CPU tests that check its closed forms and packing (tests/ruf_logic_3d_test.cpp).
//
// A warp takes one slice of a region of 2 words x 16 rows: lane l takes word l % 2 of row l / 2,
// and offers each segment of its word's foreground (a run's voxels in the word) with its sums
// relative to the slice, packed into four words that a warp reduction adds without a carry from
// one field into the next.
#pragma once

#include <cstdint>

#include "kernels3d/ruf_logic_3d.h"
#include "runtime/host_device.h"
#include "runtime/moments.h"

namespace volccl::kernels3d {

constexpr std::uint32_t kSliceWords = 2;  // along x: 64 voxels
constexpr std::uint32_t kSliceRows = 16;  // along y

// A segment of a word's foreground: a run's voxels in the word. Length 0: none left.
struct Segment {
  int first;
  std::uint32_t length;
};

// The lowest segment of `left` (the foreground not yet taken), removed from it: it ends before
// the next background voxel or the next run's start (`starts`; in a mask only the first).
VOLCCL_HD Segment take_segment(std::uint32_t& left, std::uint32_t foreground,
                               std::uint32_t starts) {
  if (left == 0) return {0, 0};
  const int first = lowest_bit(left);
  const std::uint32_t after = ~(foreground >> first) | ((starts >> first) & ~1u);
  const std::uint32_t length =
      after == 0 ? kWordVoxels - first : static_cast<std::uint32_t>(lowest_bit(after));
  left &= ~(bits_through(first + static_cast<int>(length) - 1) & ~bits_through(first - 1));
  return {first, length};
}

// Sums relative to the slice (x < 64, y < 16; at most 1024 voxels a warp), packed so that the
// sums over a warp cannot carry from one field into the next: count < 2^11 and sum x < 2^16;
// sum y < 2^14 and sum yy < 2^18; sum xx < 2^22; sum xy < 2^20.
struct PackedSegmentSums {
  std::uint32_t count_x;  // count | sum x << 11
  std::uint32_t y_yy;     // sum y | sum yy << 14
  std::uint32_t xx, xy;
  std::uint32_t min_x, max_x;
};

// The voxels x0 .. x0 + n - 1 of row y of the slice: sum of i and i^2 over i < n in closed form.
VOLCCL_HD PackedSegmentSums segment_sums(std::uint32_t x0, std::uint32_t n, std::uint32_t y) {
  const std::uint32_t sum_i = n * (n - 1) / 2;
  const std::uint32_t sum_ii = (n - 1) * n * (2 * n - 1) / 6;
  const std::uint32_t sum_x = n * x0 + sum_i;
  return {n | sum_x << 11,
          n * y | (n * y * y) << 14,
          n * x0 * x0 + 2 * x0 * sum_i + sum_ii,
          sum_x * y,
          x0,
          x0 + n - 1};
}

// Adds the sums of a later segment of the same root: the fields add as the warp's reduction
// adds them; the box's x ends at the later segment.
VOLCCL_HD void fold(PackedSegmentSums& into, const PackedSegmentSums& later) {
  into.count_x += later.count_x;
  into.y_yy += later.y_yy;
  into.xx += later.xx;
  into.xy += later.xy;
  into.max_x = later.max_x;
}

// A group's sums as moments relative to the region, whose slice z they are in; rows min_y ..
// max_y of the slice hold its voxels.
VOLCCL_HD detail::Moments slice_moments(const PackedSegmentSums& sums, std::uint32_t min_y,
                                        std::uint32_t max_y, std::uint32_t z) {
  const std::uint32_t n = sums.count_x & 0x7FFu, sum_x = sums.count_x >> 11;
  const std::uint32_t sum_y = sums.y_yy & 0x3FFFu, sum_yy = sums.y_yy >> 14;
  detail::Moments m;
  m.count = n;
  m.sum[0] = sum_x;
  m.sum[1] = sum_y;
  m.sum[2] = n * z;
  m.sum_products[0] = sums.xx;
  m.sum_products[1] = sum_yy;
  m.sum_products[2] = n * z * z;
  m.sum_products[3] = sums.xy;
  m.sum_products[4] = z * sum_x;
  m.sum_products[5] = z * sum_y;
  m.min[0] = sums.min_x;
  m.max[0] = sums.max_x;
  m.min[1] = min_y;
  m.max[1] = max_y;
  m.min[2] = m.max[2] = z;
  return m;
}

}  // namespace volccl::kernels3d
