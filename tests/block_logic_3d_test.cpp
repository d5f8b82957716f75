// Properties of the 3D block logic (kernels3d/block_logic_3d.h, kernels/block_forest.h) that the
// labelers rely on and that the labeling tests could miss because they hold only for rare
// configurations.
#include <gtest/gtest.h>

#include <cstdint>

#include "kernels3d/block_logic_3d.h"

namespace volccl::test {
namespace {

using kernels3d::Dim3;
using kernels3d::kLowerNeighbourBlocks;
using kernels3d::kVoxelNeighbourhood;

// Cube positions whose coordinates along x, y and z lie in the given ranges.
std::uint64_t cube_box(const int low[3], const int high[3]) {
  std::uint64_t box = 0;
  for (int p = 0; p < 64; ++p) {
    const int c[3] = {p & 3, (p >> 2) & 3, p >> 4};
    bool inside = true;
    for (int axis = 0; axis < 3; ++axis) {
      inside = inside && low[axis] <= c[axis] && c[axis] <= high[axis];
    }
    if (inside) box |= 1ull << p;
  }
  return box;
}

bool connected(std::uint64_t positions) {
  std::uint64_t reached = positions & (~positions + 1);  // the lowest position
  for (std::uint64_t grown = Dim3::dilate(reached) & positions; grown != reached;
       grown = Dim3::dilate(reached) & positions) {
    reached = grown;
  }
  return reached == positions;
}

// neighbours_to_unite takes all candidates for one cluster when all are foreground. That holds
// if the candidates of every foreground pattern are 26-connected in every cut of the cube that
// the volume's faces make: low faces remove position 0 along an axis, far faces position 3, and
// a block one voxel wide positions 2 and 3.
TEST(BlockLogic3d, CandidatePositionsAreAlwaysConnected) {
  int cases = 0;
  for (int cut = 0; cut < 6 * 6 * 6; ++cut) {
    int low[3], high[3];
    for (int axis = 0, code = cut; axis < 3; ++axis, code /= 6) {
      low[axis] = code % 2;
      high[axis] = 1 + (code / 2) % 3;
    }
    const std::uint64_t box = cube_box(low, high);
    for (std::uint32_t foreground = 1; foreground < 256; ++foreground) {
      std::uint64_t candidates = 0;
      bool exists = true;
      for (int l = 0; l < 8; ++l) {
        if (((foreground >> l) & 1) == 0) continue;
        const int shift = (l & 1) + 4 * ((l >> 1) & 1) + 16 * (l >> 2);
        exists = exists && ((box >> (21 + shift)) & 1);  // the block's voxel lies in the cut
        candidates |= kVoxelNeighbourhood << shift;
      }
      candidates &= kLowerNeighbourBlocks & box;
      if (!exists || candidates == 0) continue;
      ++cases;
      ASSERT_TRUE(connected(candidates)) << "foreground " << foreground << ", cut " << cut;
    }
  }
  EXPECT_EQ(cases, 15143);
}

}  // namespace
}  // namespace volccl::test
