// The reference labeler is the oracle of the other tests, so it is checked on its own against
// cases small enough to work out by hand.
#include <cstdlib>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "reference_labeler.h"

namespace volccl::test {
namespace {

// Two voxels at the centre of a 3x3x3 volume and at each of its 26 neighbours: connected when
// the neighbour's city-block distance is within what the connectivity allows.
TEST(ReferenceLabeler, NeighbourhoodsOf6And18And26) {
  const Extent3 extent{3, 3, 3};
  const int centre = 13;
  for (int neighbour = 0; neighbour < 27; ++neighbour) {
    if (neighbour == centre) continue;
    std::vector<std::uint8_t> mask(27, 0);
    mask[centre] = mask[neighbour] = 1;
    const int distance =
        std::abs(neighbour % 3 - 1) + std::abs(neighbour / 3 % 3 - 1) + std::abs(neighbour / 9 - 1);
    EXPECT_EQ(reference_label(mask, extent, 6).component_count, distance <= 1 ? 1u : 2u);
    EXPECT_EQ(reference_label(mask, extent, 18).component_count, distance <= 2 ? 1u : 2u);
    EXPECT_EQ(reference_label(mask, extent, 26).component_count, 1u);
  }
}

TEST(ReferenceLabeler, NeighbourhoodsOf4And8) {
  const Extent3 extent{3, 3, 1};
  std::vector<std::uint8_t> diagonal{1, 0, 0,  //
                                     0, 1, 0,  //
                                     0, 0, 0};
  EXPECT_EQ(reference_label(diagonal, extent, 4).component_count, 2u);
  EXPECT_EQ(reference_label(diagonal, extent, 8).component_count, 1u);
}

// Components are numbered in raster order of their first voxel: the U's arms meet late, but
// the U's first voxel comes before the lone voxel's.
TEST(ReferenceLabeler, NumbersInRasterOrderOfFirstVoxel) {
  const Extent3 extent{5, 3, 1};
  const std::vector<std::uint8_t> mask{1, 0, 1, 0, 1,  //
                                       1, 0, 1, 0, 0,  //
                                       1, 1, 1, 0, 1};
  const std::vector<std::uint32_t> expected{1, 0, 1, 0, 2,  //
                                            1, 0, 1, 0, 0,  //
                                            1, 1, 1, 0, 3};
  const ReferenceLabels labels = reference_label(mask, extent, 4);
  EXPECT_EQ(labels.component_count, 3u);
  EXPECT_EQ(labels.labels, expected);
}

// A connection through z only: slices 0 and 2 hold separate pieces joined in slice 1.
TEST(ReferenceLabeler, FollowsConnectionsAcrossSlices) {
  const Extent3 extent{2, 2, 3};
  const std::vector<std::uint8_t> mask{1, 0, 0, 0,  //
                                       0, 0, 0, 1,  //
                                       0, 0, 1, 0};
  EXPECT_EQ(reference_label(mask, extent, 6).component_count, 3u);
  EXPECT_EQ(reference_label(mask, extent, 18).component_count, 2u);
  const ReferenceLabels labels = reference_label(mask, extent, 26);
  EXPECT_EQ(labels.component_count, 1u);
  EXPECT_EQ(labels.labels, (std::vector<std::uint32_t>{1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0}));
}

TEST(ReferenceLabeler, RejectsUnknownConnectivity) {
  const std::vector<std::uint8_t> mask(8, 1);
  EXPECT_THROW(reference_label(mask, {2, 2, 2}, 10), std::invalid_argument);
  EXPECT_THROW(reference_label(mask, {2, 2, 2}, 8), std::invalid_argument);
}

}  // namespace
}  // namespace volccl::test
