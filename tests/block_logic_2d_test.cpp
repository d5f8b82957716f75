// Properties of the 2D block logic (kernels2d/block_logic_2d.h, kernels/block_forest.h) that the
// labelers rely on and that the labeling tests could miss because they hold only for rare
// configurations.
#include <gtest/gtest.h>

#include <cstdint>

#include "kernels2d/block_logic_2d.h"

namespace volccl::test {
namespace {

using kernels2d::Dim2;
using kernels2d::kLowerNeighbourBlocks;
using kernels2d::kPixelNeighbourhood;

// Square positions whose coordinates along x and y lie in the given ranges.
std::uint32_t square_box(const int low[2], const int high[2]) {
  std::uint32_t box = 0;
  for (int p = 0; p < 16; ++p) {
    const int c[2] = {p & 3, p >> 2};
    if (low[0] <= c[0] && c[0] <= high[0] && low[1] <= c[1] && c[1] <= high[1]) box |= 1u << p;
  }
  return box;
}

bool connected(std::uint32_t positions) {
  std::uint32_t reached = positions & (~positions + 1);  // the lowest position
  for (std::uint32_t grown = Dim2::dilate(reached) & positions; grown != reached;
       grown = Dim2::dilate(reached) & positions) {
    reached = grown;
  }
  return reached == positions;
}

// neighbours_to_unite takes all candidates for one cluster when all are foreground. That holds
// if the candidates of every foreground pattern are 8-connected in every cut of the square that
// the image's edges make: low edges remove position 0 along an axis, far edges position 3, and
// a block one pixel wide or high positions 2 and 3.
TEST(BlockLogic2d, CandidatePositionsAreAlwaysConnected) {
  int cases = 0;
  for (int cut = 0; cut < 6 * 6; ++cut) {
    int low[2], high[2];
    for (int axis = 0, code = cut; axis < 2; ++axis, code /= 6) {
      low[axis] = code % 2;
      high[axis] = 1 + (code / 2) % 3;
    }
    const std::uint32_t box = square_box(low, high);
    for (std::uint32_t foreground = 1; foreground < 16; ++foreground) {
      std::uint32_t candidates = 0;
      bool exists = true;
      for (int l = 0; l < 4; ++l) {
        if (((foreground >> l) & 1) == 0) continue;
        const int shift = (l & 1) + 4 * (l >> 1);
        exists = exists && ((box >> (5 + shift)) & 1);  // the block's pixel lies in the cut
        candidates |= kPixelNeighbourhood << shift;
      }
      candidates &= kLowerNeighbourBlocks & box;
      if (!exists || candidates == 0) continue;
      ++cases;
      ASSERT_TRUE(connected(candidates)) << "foreground " << foreground << ", cut " << cut;
    }
  }
  EXPECT_EQ(cases, 187);
}

// The lower neighbour blocks of Fig. 7a: P holds position 0, Q 1-2, R 3, S 4 and 8.
TEST(BlockLogic2d, NeighbourOfEachLowerPosition) {
  const int expected[16] = {0, 1, 1, 2, 3, -1, -1, -1, 3, -1, -1, -1, -1, -1, -1, -1};
  for (int p = 0; p < 16; ++p) {
    if ((kLowerNeighbourBlocks >> p) & 1) {
      EXPECT_EQ(Dim2::neighbour_at(p), expected[p]) << "position " << p;
    } else {
      EXPECT_EQ(expected[p], -1) << "position " << p;
    }
  }
}

}  // namespace
}  // namespace volccl::test
