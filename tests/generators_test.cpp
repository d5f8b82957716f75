// The synthetic volumes have the properties the labeling tests and benchmarks rely on.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <set>
#include <vector>

#include <gtest/gtest.h>

#include "reference_labeler.h"
#include "volccl/data/generators.h"
#include "volccl/error.h"

namespace volccl::test {
namespace {

using data::Volume;

std::uint64_t foreground_count(const Volume& volume) {
  return static_cast<std::uint64_t>(
      std::count(volume.voxels.begin(), volume.voxels.end(), std::uint8_t{1}));
}

// FNV-1a: pins the random volumes, which must be the same with every compiler and library.
std::uint64_t fingerprint(const Volume& volume) {
  std::uint64_t hash = 0xcbf29ce484222325ull;
  for (std::uint8_t voxel : volume.voxels) hash = (hash ^ voxel) * 0x100000001b3ull;
  return hash;
}

// The expected values were also computed from numpy's MT19937 with legacy seeding, an
// implementation independent of the C++ standard library.
TEST(RandomGranular, IsTheSameOnEveryPlatform) {
  EXPECT_EQ(fingerprint(data::random_granular({50, 40, 30}, 0.37, 3, 12345)),
            0xe30460cd4e3c0c5dull);
  EXPECT_EQ(fingerprint(data::random_granular({200, 100, 1}, 0.5, 1, 2024)), 0x786e38ae7df2a7cdull);
}

TEST(RandomGranular, SeedsGiveDifferentVolumes) {
  EXPECT_NE(data::random_granular({32, 32, 32}, 0.5, 1, 1).voxels,
            data::random_granular({32, 32, 32}, 0.5, 1, 2).voxels);
}

TEST(RandomGranular, DensityZeroIsEmptyAndOneIsFull) {
  const Extent3 extent{17, 9, 5};
  EXPECT_EQ(foreground_count(data::random_granular(extent, 0.0, 1, 3)), 0u);
  EXPECT_EQ(foreground_count(data::random_granular(extent, 1.0, 2, 3)), extent.voxel_count());
}

TEST(RandomGranular, ForegroundFractionFollowsTheDensity) {
  for (double density : {0.1, 0.3, 0.5, 0.9}) {
    const Volume volume = data::random_granular({64, 64, 64}, density, 1, 99);
    const double fraction =
        static_cast<double>(foreground_count(volume)) / volume.extent.voxel_count();
    EXPECT_NEAR(fraction, density, 0.01);
  }
}

// Every cell of granularity^3 voxels (granularity^2 in 2D), including those cut by the
// volume's edge, is all foreground or all background.
TEST(RandomGranular, CellsAreUniform) {
  const unsigned granularity = 4;
  for (const Extent3& extent : {Extent3{30, 21, 11}, Extent3{30, 21, 1}}) {
    const Volume volume = data::random_granular(extent, 0.5, granularity, 5);
    for (std::uint64_t z = 0; z < extent.z; ++z) {
      for (std::uint64_t y = 0; y < extent.y; ++y) {
        for (std::uint64_t x = 0; x < extent.x; ++x) {
          const std::uint64_t corner_x = x / granularity * granularity;
          const std::uint64_t corner_y = y / granularity * granularity;
          const std::uint64_t corner_z = z / granularity * granularity;
          ASSERT_EQ(volume.voxels[(z * extent.y + y) * extent.x + x],
                    volume.voxels[(corner_z * extent.y + corner_y) * extent.x + corner_x])
              << extent.to_string() << " at " << x << "," << y << "," << z;
        }
      }
    }
  }
}

TEST(RandomGranular, RejectsBadArguments) {
  EXPECT_THROW(data::random_granular({8, 8, 8}, 0.5, 0, 1), InvalidArgument);
  EXPECT_THROW(data::random_granular({8, 8, 8}, 1.5, 1, 1), InvalidArgument);
  EXPECT_THROW(data::random_granular({8, 8, 8}, -0.1, 1, 1), InvalidArgument);
}

// The curve visits 8^order grid points exactly once, so its segments never overlap and it
// has (8^order - 1) * spacing + 1 voxels, all in one 6-connected component.
TEST(Hilbert, IsOneSixConnectedCurve) {
  const std::uint64_t side = 128;
  for (unsigned order = 1; order <= 7; ++order) {
    const Volume volume = data::hilbert(order, side);
    ASSERT_EQ(volume.extent, (Extent3{side, side, side}));
    const std::uint64_t spacing = side >> order;
    const std::uint64_t points = std::uint64_t{1} << (3 * order);
    EXPECT_EQ(foreground_count(volume), (points - 1) * spacing + 1) << "order " << order;
    EXPECT_EQ(reference_label(volume.voxels, volume.extent, 6).component_count, 1u)
        << "order " << order;
  }
}

TEST(Hilbert, RejectsBadOrdersAndSides) {
  EXPECT_THROW(data::hilbert(0, 128), InvalidArgument);
  EXPECT_THROW(data::hilbert(8, 128), InvalidArgument);
  EXPECT_THROW(data::hilbert(2, 100), InvalidArgument);
  EXPECT_THROW(data::hilbert(1, 1), InvalidArgument);
}

TEST(Spiral, IsOneSixConnectedSnake) {
  for (const Extent3& extent :
       {Extent3{64, 64, 8}, Extent3{33, 17, 9}, Extent3{1, 40, 3}, Extent3{40, 1, 3},
        Extent3{2, 2, 2}, Extent3{1, 1, 1}, Extent3{8, 8, 1}, Extent3{128, 128, 4}}) {
    const Volume volume = data::spiral(extent);
    EXPECT_EQ(reference_label(volume.voxels, extent, 6).component_count, 1u) << extent.to_string();
  }
}

// With its one-voxel gaps the spiral covers about half of each drawn slice.
TEST(Spiral, FillsAboutHalfOfEachEvenSlice) {
  const Volume volume = data::spiral({101, 101, 1});
  const double fraction = static_cast<double>(foreground_count(volume)) / (101 * 101);
  EXPECT_NEAR(fraction, 0.5, 0.02);
}

TEST(Checkerboard, IsOneComponentAt26AndSingleVoxelsAt6) {
  const Extent3 extent{9, 8, 7};
  const Volume volume = data::checkerboard(extent);
  EXPECT_EQ(volume.voxels[0], 1);
  EXPECT_EQ(volume.voxels[1], 0);
  EXPECT_EQ(reference_label(volume.voxels, extent, 26).component_count, 1u);
  EXPECT_EQ(reference_label(volume.voxels, extent, 6).component_count, foreground_count(volume));
}

// With gap 2 no two shells touch, even at 26-connectivity: every component lies on one shell,
// and the shells 0, 3, ..., 15 that fit whole in 31^3 are one component each. (Farther
// shells are cut by the volume's faces, the outermost into its eight corners.)
TEST(Shells, AreSeparateComponents) {
  const Extent3 extent{31, 31, 31};
  const Volume volume = data::shells(extent, 2);
  const ReferenceLabels components = reference_label(volume.voxels, extent, 26);
  std::map<std::uint32_t, long> shell_of_component;
  std::set<std::uint32_t> components_of_whole_shells;
  std::uint64_t voxel = 0;
  for (int z = 0; z < 31; ++z) {
    for (int y = 0; y < 31; ++y) {
      for (int x = 0; x < 31; ++x, ++voxel) {
        const std::uint32_t component = components.labels[voxel];
        if (component == 0) continue;
        const long shell = std::lround(std::hypot(x - 15, y - 15, z - 15));
        EXPECT_EQ(shell % 3, 0) << x << "," << y << "," << z;
        const auto entry = shell_of_component.emplace(component, shell).first;
        ASSERT_EQ(entry->second, shell) << "component " << component << " spans two shells";
        if (shell <= 15) components_of_whole_shells.insert(component);
      }
    }
  }
  EXPECT_EQ(components_of_whole_shells.size(), 6u);
  EXPECT_EQ(volume.voxels[(15 * 31 + 15) * 31 + 15], 1) << "the centre is shell 0";
  EXPECT_EQ(foreground_count(data::shells(extent, 0)), extent.voxel_count());
}

}  // namespace
}  // namespace volccl::test
