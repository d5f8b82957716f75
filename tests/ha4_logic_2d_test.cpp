// The bit-level segment operators of HA4 (kernels2d/ha4_logic_2d.h) against counts made pixel
// by pixel, for 32- and 64-bit chunks: the distance operators, the lane a run's label comes
// from, and one union per pair of touching runs of two rows.
#include <gtest/gtest.h>

#include <algorithm>
#include <bitset>
#include <cstdint>
#include <random>
#include <vector>

#include "kernels2d/ha4_logic_2d.h"

namespace volccl::test {
namespace {

using kernels2d::ha4::kChunkPixels;
using kernels2d::ha4::RowChunk;

template <class Mask>
bool bit(Mask pixels, int position) {
  return position >= 0 && position < static_cast<int>(kChunkPixels<Mask>) &&
         ((pixels >> position) & 1) != 0;
}

// Masks with short and long runs, all-background and all-foreground ones among them.
template <class Mask>
std::vector<Mask> sample_masks() {
  std::vector<Mask> masks = {0,
                             static_cast<Mask>(~Mask{0}),
                             static_cast<Mask>(~Mask{0} / 3),
                             static_cast<Mask>(~Mask{0} / 3 * 2),
                             1,
                             static_cast<Mask>(Mask{1} << (kChunkPixels<Mask> - 1))};
  std::mt19937_64 random(7);
  for (int i = 0; i < 400; ++i) {
    Mask mask = static_cast<Mask>(random());
    if (i % 3 == 1) mask &= static_cast<Mask>(random());  // sparse
    if (i % 3 == 2) mask |= static_cast<Mask>(random());  // dense
    masks.push_back(mask);
  }
  return masks;
}

struct Run {
  int start, end;  // inclusive; start -1 for a run reaching the chunk from the left
};

// The runs of a chunk whose pixel -1 is `left`.
template <class Mask>
std::vector<Run> runs_of(Mask pixels, bool left) {
  std::vector<Run> runs;
  for (int x = -1; x < static_cast<int>(kChunkPixels<Mask>); ++x) {
    if (!(x < 0 ? left : bit(pixels, x))) continue;
    if (runs.empty() || runs.back().end != x - 1) {
      runs.push_back({x, x});
    } else {
      runs.back().end = x;
    }
  }
  return runs;
}

template <class Mask>
class Ha4Logic : public ::testing::Test {};
using MaskTypes = ::testing::Types<std::uint32_t, std::uint64_t>;
TYPED_TEST_SUITE(Ha4Logic, MaskTypes);

TYPED_TEST(Ha4Logic, DistanceOperatorsCountTheRun) {
  using Mask = TypeParam;
  for (const Mask pixels : sample_masks<Mask>()) {
    for (int position = 0; position <= static_cast<int>(kChunkPixels<Mask>); ++position) {
      std::uint32_t before = 0;
      while (bit(pixels, position - 1 - static_cast<int>(before))) ++before;
      ASSERT_EQ(kernels2d::ha4::start_distance(pixels, position), before)
          << std::hex << pixels << std::dec << " at " << position;
      if (!bit(pixels, position)) continue;
      std::uint32_t to_end = 0;
      while (bit(pixels, position + static_cast<int>(to_end))) ++to_end;
      ASSERT_EQ(kernels2d::ha4::end_distance(pixels, position), to_end)
          << std::hex << pixels << std::dec << " at " << position;
    }
  }
}

// Every lane with foreground takes its label from a lane that holds its run's start, and no lane
// holds two run starts.
TYPED_TEST(Ha4Logic, StartLaneHoldsTheRunStart) {
  using Mask = TypeParam;
  constexpr int kPerLane = kernels2d::ha4::kPixelsPerLane<Mask>;
  for (const Mask pixels : sample_masks<Mask>()) {
    const Mask starts = kernels2d::ha4::piece_starts(pixels);
    for (int lane = 0; lane < 32; ++lane) {
      int lane_starts = 0;
      for (int i = 0; i < kPerLane; ++i) lane_starts += bit(starts, lane * kPerLane + i);
      ASSERT_LE(lane_starts, 1);
      for (int i = 0; i < kPerLane; ++i) {
        int run_start = lane * kPerLane + i;
        if (!bit(pixels, run_start)) continue;
        while (bit(pixels, run_start - 1)) --run_start;
        ASSERT_EQ(kernels2d::ha4::start_lane(pixels, lane), run_start / kPerLane)
            << std::hex << pixels << std::dec << " lane " << lane;
      }
    }
  }
}

// union_positions holds one position per pair of runs of the two rows that touch (overlap for
// 4-connectivity, also diagonally for 8) and whose union falls in the chunk, at max(s, s'): pairs
// that meet only at pixel -1 belong to the chunk before.
template <int Connectivity, class Mask>
void expect_one_union_per_touching_pair() {
  const std::vector<Mask> masks = sample_masks<Mask>();
  for (std::size_t i = 0; i + 1 < masks.size(); ++i) {
    for (const bool row_left : {false, true}) {
      for (const bool up_left : {false, true}) {
        RowChunk<Mask> row{masks[i], 0, {row_left, 0}};
        RowChunk<Mask> up{masks[i + 1], 0, {up_left, 0}};
        int pairs = 0;
        for (const Run& a : runs_of(row.pixels, row_left)) {
          for (const Run& b : runs_of(up.pixels, up_left)) {
            const int reach = Connectivity == 8 ? 1 : 0;
            const bool touching = b.start <= a.end + reach && a.start <= b.end + reach;
            pairs += touching && std::max(a.start, b.start) >= 0;
          }
        }
        const Mask positions = kernels2d::ha4::union_positions<Connectivity>(row, up);
        ASSERT_EQ(std::bitset<64>(positions).count(), static_cast<std::size_t>(pairs))
            << Connectivity << "-connectivity, rows " << std::hex << row.pixels << " and "
            << up.pixels << std::dec << ", left " << row_left << up_left;
      }
    }
  }
}

TYPED_TEST(Ha4Logic, OneUnionPerTouchingPairOfRuns) {
  expect_one_union_per_touching_pair<4, TypeParam>();
  expect_one_union_per_touching_pair<8, TypeParam>();
}

}  // namespace
}  // namespace volccl::test
