// The forest pass's per-block logic (kernels3d/forest_statistics_logic_3d.h), which the GPU runs
// only on volumes above 2^25 voxels with many components: BUF's and BKE's steps run here on the
// CPU up to the ranking, then every root's window row and every far block's addition as the two
// kernels make them (the far blocks summed per 32 blocks of a row, relative to the first; the GPU
// may add one component's sums of several layers together before they reach the row, which the
// exact integer sums do not see), against the voxel sums of the reference labeler's labels. Odd
// sizes, one-voxel dimensions, empty and full volumes, checkerboards (diagonal contacts) and random
// densities x granularities.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "kernels3d/block_logic_3d.h"
#include "kernels3d/forest_statistics_logic_3d.h"
#include "reference_labeler.h"
#include "runtime/moments.h"
#include "runtime/raster_rank.h"
#include "test_support.h"
#include "volccl/data/generators.h"

namespace volccl::test {
namespace {

using kernels3d::Block;
using kernels3d::BlockGrid;
using kernels3d::kNoKey;

// BUF's or BKE's forest once its roots are marked, and the ranking's words.
struct Forest {
  BlockGrid grid;
  std::vector<std::uint32_t> labels, bitmap, words_before;
  std::uint32_t count = 0;
};

template <class Step>
void for_each_block(const BlockGrid& grid, const Step& step) {
  for (std::uint32_t k = 0; k < grid.blocks_z; ++k) {
    for (std::uint32_t j = 0; j < grid.blocks_y; ++j) {
      for (std::uint32_t i = 0; i < grid.blocks_x; ++i)
        step(grid, kernels3d::block_at(grid, i, j, k));
    }
  }
}

Forest forest_of(const data::Volume& volume, bool bke) {
  Forest forest;
  forest.grid = kernels3d::make_block_grid(volume.extent);
  forest.labels.assign(volume.extent.voxel_count(), kPoison);
  forest.bitmap.assign((volume.extent.voxel_count() + 31) / 32, 0);
  const std::uint8_t* mask = volume.voxels.data();
  std::uint32_t* labels = forest.labels.data();
  if (bke) {
    for_each_block(forest.grid, kernels3d::BkeInitialize{mask, labels});
    for_each_block(forest.grid, kernels3d::Compress{labels, false, nullptr});
    for_each_block(forest.grid, kernels3d::BkeReduce{mask, labels});
  } else {
    for_each_block(forest.grid, kernels3d::BufInitialize{mask, labels});
    for_each_block(forest.grid, kernels3d::BufMerge{mask, labels});
  }
  for_each_block(forest.grid, kernels3d::Compress{labels, false, forest.bitmap.data()});
  for (std::uint32_t word : forest.bitmap) {
    forest.words_before.push_back(forest.count);
    forest.count += detail::popcount(word);
  }
  return forest;
}

kernels3d::BlockSlots read(const std::uint8_t* mask, const std::uint32_t* labels,
                           const BlockGrid& grid, const Block& block) {
  return kernels3d::read_block(mask, labels, block.anchor, kernels3d::info_offset(grid, block),
                               true);
}

// The window row (dy, dz) of `root`, read block by block.
kernels3d::WindowRow window_row(const std::uint8_t* mask, const std::uint32_t* labels,
                                const BlockGrid& grid, const Block& root, int dy, int dz) {
  kernels3d::WindowRow row{{{kNoKey, 0}, {kNoKey, 0}, {kNoKey, 0}}};
  if ((dy < 0 && root.j == 0) || (dy > 0 && root.j + 1 >= grid.blocks_y) ||
      (dz > 0 && root.k + 1 >= grid.blocks_z)) {
    return row;
  }
  for (int dx = -1; dx <= 1; ++dx) {
    if ((dx < 0 && root.i == 0) || (dx > 0 && root.i + 1 >= grid.blocks_x)) continue;
    row.block[dx + 1] =
        read(mask, labels, grid, kernels3d::block_at(grid, root.i + dx, root.j + dy, root.k + dz));
  }
  return row;
}

// The table the two kernels make: the roots' rows, then the far blocks' additions.
std::vector<ComponentMoments> forest_table(const Forest& forest, const std::uint8_t* mask) {
  std::vector<ComponentMoments> table(forest.count);
  if (!table.empty()) {  // poisoned, so that a row the kernels miss shows
    std::memset(static_cast<void*>(table.data()), 0xAB, table.size() * sizeof(ComponentMoments));
  }
  const std::uint32_t* labels = forest.labels.data();
  const auto label_of = [&](std::uint32_t key) {
    return detail::component_label(forest.bitmap.data(), forest.words_before.data(), key);
  };
  for_each_block(forest.grid, [&](const BlockGrid& grid, const Block& block) {
    const kernels3d::BlockSlots own = read(mask, labels, grid, block);
    const std::uint32_t parent = own.slot;
    if (parent == kNoKey || parent != kernels3d::first_voxel(grid, block, own.foreground)) return;
    const auto row = [&](int dy, int dz) { return window_row(mask, labels, grid, block, dy, dz); };
    const auto alone = [](std::uint32_t members) { return members; };
    detail::store(table.at(label_of(parent) - 1),
                  kernels3d::window_moments(kernels3d::window_sums(parent, row, alone), block));
  });
  // A warp's far blocks: 32 consecutive blocks of a row, summed per component relative to the
  // first block's anchor.
  for_each_block(forest.grid, [&](const BlockGrid& grid, const Block& block) {
    if (block.i % 32 != 0) return;
    std::map<std::uint32_t, kernels3d::RelativeSums> sums;
    for (std::uint32_t lane = 0; lane < 32 && block.i + lane < grid.blocks_x; ++lane) {
      const Block other = kernels3d::block_at(grid, block.i + lane, block.j, block.k);
      const std::uint32_t parent = labels[other.anchor];
      if (parent == kNoKey || kernels3d::in_window(kernels3d::block_of(grid, parent), other)) {
        continue;
      }
      auto found = sums.emplace(parent, kernels3d::no_relative_sums()).first;
      kernels3d::add_block(found->second, read(mask, labels, grid, other).foreground,
                           2 * static_cast<int>(lane), 0, 0);
    }
    for (const auto& [parent, s] : sums) {
      detail::merge(table.at(label_of(parent) - 1),
                    kernels3d::absolute_moments(s, 2 * block.i, 2 * block.j, 2 * block.k));
    }
  });
  return table;
}

::testing::AssertionResult measures_exactly(const data::Volume& volume) {
  const ReferenceLabels reference = reference_label(volume.voxels, volume.extent, 26);
  const std::vector<ComponentMoments> expected =
      voxel_sums(reference.labels, volume.extent, reference.component_count);
  for (bool bke : {false, true}) {
    const Forest forest = forest_of(volume, bke);
    const std::string where = std::string(bke ? "BKE" : "BUF") + " on " + volume.extent.to_string();
    if (forest.count != reference.component_count) {
      return ::testing::AssertionFailure()
             << where << ": " << forest.count << " roots, expected " << reference.component_count;
    }
    if (auto same = tables_equal(expected, forest_table(forest, volume.voxels.data())); !same) {
      return same << " (" << where << ")";
    }
  }
  return ::testing::AssertionSuccess();
}

TEST(ForestStatisticsLogic3d, RandomVolumesOfOddSizes) {
  const std::uint32_t seed = test_seed();
  SCOPED_TRACE(describe_seed(seed));
  std::uint32_t volume_seed = seed;
  for (const Extent3 extent : {Extent3{37, 29, 23}, Extent3{70, 33, 9}, Extent3{96, 8, 7}}) {
    for (double density : {0.05, 0.2, 0.45, 0.7}) {
      for (unsigned granularity : {1u, 2u, 5u}) {
        const data::Volume volume =
            data::random_granular(extent, density, granularity, volume_seed++);
        EXPECT_TRUE(measures_exactly(volume))
            << "density " << density << ", granularity " << granularity;
      }
    }
  }
}

// Far blocks in every direction: a one-voxel snake's blocks leave its root's window at once.
TEST(ForestStatisticsLogic3d, SnakesAndShells) {
  EXPECT_TRUE(measures_exactly(data::spiral({41, 37, 5})));
  EXPECT_TRUE(measures_exactly(data::hilbert(3, 16)));
  EXPECT_TRUE(measures_exactly(data::shells({31, 27, 25}, 2)));
}

TEST(ForestStatisticsLogic3d, OneVoxelDimensionsEmptyFullAndCheckerboards) {
  const std::uint32_t seed = test_seed();
  SCOPED_TRACE(describe_seed(seed));
  for (const Extent3 extent :
       {Extent3{1, 1, 1}, Extent3{1, 40, 33}, Extent3{41, 1, 9}, Extent3{33, 27, 1},
        Extent3{67, 1, 1}, Extent3{1, 1, 45}, Extent3{2, 3, 2}}) {
    EXPECT_TRUE(measures_exactly(data::random_granular(extent, 0.0, 1, seed)));
    EXPECT_TRUE(measures_exactly(data::random_granular(extent, 1.0, 1, seed)));
    EXPECT_TRUE(measures_exactly(data::random_granular(extent, 0.3, 1, seed + 1)));
    EXPECT_TRUE(measures_exactly(data::checkerboard(extent)));
  }
  EXPECT_TRUE(measures_exactly(data::checkerboard({35, 21, 17})));
}

}  // namespace
}  // namespace volccl::test
