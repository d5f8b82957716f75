// Properties of RUF's row logic (kernels3d/ruf_logic_3d.h) that the labeling tests reach only
// by chance: the key of the run at every column of a word, the neighbours' columns -1 and 32
// included, and the runs of a row, against runs numbered by walking the row voxel by voxel;
// and the foreground bits of a word against its mask bytes, for every row length around a
// word's; and the statistics pass's segments and packed sums (ruf_statistics_logic_3d.h) against
// the voxels' sums.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "kernels3d/ruf_logic_3d.h"
#include "kernels3d/ruf_statistics_logic_3d.h"
#include "runtime/moments.h"

namespace volccl::test {
namespace {

using kernels3d::kWordVoxels;
using kernels3d::RowWord;
using kernels3d::RunGrid;

// A row of `nx` voxels at row 3 of a grid of 8 rows: its words as Initialization leaves them.
struct Row {
  RunGrid grid;
  std::vector<std::uint8_t> mask;  // the whole grid's, the row's voxels set
  std::vector<RowWord> words;      // the whole grid's
  std::vector<int> run_of;         // the run index of each voxel of the row, -1 for background
  static constexpr std::uint32_t kRow = 3;
};

Row random_row(std::uint32_t nx, double density, std::mt19937& random) {
  Row row;
  row.grid = kernels3d::make_run_grid({nx, 8, 1});
  row.mask.assign(std::size_t{nx} * 8, 0);
  std::bernoulli_distribution foreground(density);
  row.run_of.assign(nx, -1);
  int runs = 0;
  for (std::uint32_t x = 0; x < nx; ++x) {
    if (!foreground(random)) continue;
    row.mask[Row::kRow * nx + x] = static_cast<std::uint8_t>(1 + random() % 255);
    row.run_of[x] = x > 0 && row.run_of[x - 1] >= 0 ? row.run_of[x - 1] : runs++;
  }
  row.words.assign(kernels3d::row_word_count(row.grid), RowWord{0, 0});
  std::uint32_t before_runs = 0;
  bool before = false;
  for (std::uint32_t w = 0; w < row.grid.words_x; ++w) {
    const std::uint32_t bits = kernels3d::mask_word(row.mask.data(), row.grid, Row::kRow, w);
    row.words[Row::kRow * row.grid.words_x + w] =
        kernels3d::make_row_word(bits, before_runs, before);
    before_runs += detail::popcount(kernels3d::run_starts(bits, before));
    before = (bits >> 31) != 0;
  }
  return row;
}

TEST(RufLogic3d, MaskWordHasABitPerNonZeroByte) {
  std::mt19937 random(2024);
  for (std::uint32_t nx = 1; nx <= 3 * kWordVoxels + 1; ++nx) {
    const Row row = random_row(nx, 0.5, random);
    for (std::uint32_t w = 0; w < row.grid.words_x; ++w) {
      std::uint32_t expected = 0;
      for (std::uint32_t i = 0; i < kWordVoxels && w * kWordVoxels + i < nx; ++i) {
        if (row.mask[Row::kRow * nx + w * kWordVoxels + i] != 0) expected |= 1u << i;
      }
      EXPECT_EQ(row.words[Row::kRow * row.grid.words_x + w].foreground, expected)
          << "nx " << nx << ", word " << w;
    }
  }
}

TEST(RufLogic3d, KeyAtEveryColumnIsTheKeyOfItsRun) {
  std::mt19937 random(777);
  for (int trial = 0; trial < 3000; ++trial) {
    const std::uint32_t nx = 1 + random() % 200;
    const double density = (trial % 9 + 1) / 10.0;
    const Row row = random_row(nx, density, random);
    const std::uint32_t first_key = Row::kRow * row.grid.run_capacity;
    int runs = 0;
    for (int run : row.run_of) runs = run + 1 > runs ? run + 1 : runs;
    EXPECT_EQ(kernels3d::row_runs(kernels3d::MaskRuns{row.words.data()}, row.grid, Row::kRow),
              static_cast<std::uint32_t>(runs))
        << "nx " << nx << ", trial " << trial;
    for (std::uint32_t w = 0; w < row.grid.words_x; ++w) {
      const kernels3d::WordView view =
          kernels3d::view_word(kernels3d::MaskRuns{row.words.data()}, row.grid, Row::kRow, w);
      for (int q = -1; q <= static_cast<int>(kWordVoxels); ++q) {
        const std::int64_t x = std::int64_t{w} * kWordVoxels + q;
        if (x < 0 || x >= nx || row.run_of[x] < 0) continue;
        ASSERT_EQ(view.key_at(q), first_key + static_cast<std::uint32_t>(row.run_of[x]))
            << "nx " << nx << ", word " << w << ", column " << q << ", trial " << trial;
      }
    }
  }
}

// A tile's rows are a block of 2^log2_y x 2^log2_z rows of the volume: every row of the volume
// is in exactly one tile; a row before (y, z) is in its tile exactly when both have the same
// tile coordinates; and key_in_volume keeps the order of the tile's keys, so that a tile's roots
// are the runs Union leaves as roots in the volume.
TEST(RufLogic3d, TilesCoverTheRowsOnceAndKeepTheKeysOrder) {
  for (std::uint32_t nx : {1u, 20u, 33u, 64u, 100u, 256u, 300u, 512u, 1000u, 1025u, 3000u}) {
    for (const auto& [ny, nz] : {std::pair{37u, 21u}, std::pair{1u, 40u}, std::pair{40u, 1u}}) {
      const RunGrid grid = kernels3d::make_run_grid({nx, ny, nz});
      const int block = kernels3d::block_log2_rows(grid);
      for (const int log2_rows :
           {block, std::min(block, 2), std::min(block, 3), std::min(block, 5)}) {
        const kernels3d::RunTiling tiling = kernels3d::make_run_tiling(grid, log2_rows);
        const std::uint32_t tile_rows = 1u << (tiling.log2_y + tiling.log2_z);
        SCOPED_TRACE(std::to_string(nx) + "x" + std::to_string(ny) + "x" + std::to_string(nz) +
                     ", tiles of at most 2^" + std::to_string(log2_rows) + " rows");
        if (tiling.in_shared_memory()) {
          EXPECT_LE(tiling.log2_y + tiling.log2_z, log2_rows);
        }
        // The tile holds the GPU block's rows and its keys fit in shared memory.
        EXPECT_LE(tile_rows, kernels3d::kInitThreads >> kernels3d::log2_init_lanes(grid));
        if (tiling.in_shared_memory()) {
          EXPECT_LE(std::uint64_t{tile_rows} << tiling.log2_capacity, kernels3d::kTileSlots);
          EXPECT_LE(tile_rows * grid.words_x, kernels3d::kInitThreads);
        } else {
          EXPECT_GT(grid.words_x, kernels3d::kWarpLanes);
        }
        EXPECT_GE(1u << tiling.log2_capacity, grid.run_capacity);
        std::vector<int> tile_of(grid.rows, -1);
        for (std::uint32_t tile = 0; tile < tiling.tiles; ++tile) {
          std::uint32_t previous_key = 0;
          bool first = true;
          for (std::uint32_t r = 0; r < tile_rows; ++r) {
            const kernels3d::TileRow at = kernels3d::tile_row(tiling, tile, r);
            if (at.y >= ny || at.z >= nz) continue;
            const std::uint32_t row = at.z * ny + at.y;
            EXPECT_EQ(tile_of[row], -1) << "row " << row << " in two tiles";
            tile_of[row] = static_cast<int>(tile);
            for (std::uint32_t k = 0;
                 k<grid.run_capacity; k += grid.run_capacity> 1 ? grid.run_capacity - 1 : 1) {
              const std::uint32_t key =
                  kernels3d::key_in_volume(grid, tiling, tile, (r << tiling.log2_capacity) + k);
              EXPECT_EQ(key, row * grid.run_capacity + k);
              EXPECT_TRUE(first || key > previous_key);
              previous_key = key;
              first = false;
            }
          }
        }
        for (std::uint32_t row = 0; row < grid.rows; ++row) {
          ASSERT_GE(tile_of[row], 0) << "row " << row << " in no tile";
        }
        for (std::uint32_t z = 0; z < nz; ++z) {
          for (std::uint32_t y = 0; y < ny; ++y) {
            const std::uint32_t present = kernels3d::rows_before(grid, y, z);
            const std::uint32_t in_tile = kernels3d::rows_before_in_tile(grid, tiling, y, z);
            EXPECT_EQ(in_tile & ~present, 0u);
            const int own = tile_of[z * ny + y];
            const auto same_tile = [&](std::uint32_t row) { return tile_of[row] == own; };
            const std::uint32_t row = z * ny + y;
            const std::pair<std::uint32_t, std::uint32_t> rows[] = {
                {kernels3d::kRowAbove, row - 1},
                {kernels3d::kRowBehind, row - ny},
                {kernels3d::kRowAboveBehind, row - ny - 1},
                {kernels3d::kRowBelowBehind, row - ny + 1}};
            for (const auto& [bit, other] : rows) {
              if ((present & bit) == 0) continue;
              EXPECT_EQ((in_tile & bit) != 0, same_tile(other)) << "y " << y << ", z " << z;
            }
          }
        }
      }
    }
  }
}

// The GPU's tiles are a block's rows where the volume gives every multiprocessor a tile, and
// fewer rows, down to four, where it does not.
TEST(RufLogic3d, TilesShrinkOnlyWhereMultiprocessorsWouldHaveNone) {
  constexpr std::uint32_t kMultiprocessors = 132;
  for (std::uint32_t side : {1u, 2u, 16u, 31u, 32u, 48u, 64u, 96u, 128u, 192u, 256u, 512u}) {
    for (std::uint32_t nx : {side, 1000u}) {
      const RunGrid grid = kernels3d::make_run_grid({nx, side, side});
      const int block = kernels3d::block_log2_rows(grid);
      const int log2_rows = kernels3d::tile_log2_rows(grid, kMultiprocessors);
      SCOPED_TRACE(std::to_string(nx) + "x" + std::to_string(side) + "x" + std::to_string(side));
      EXPECT_LE(log2_rows, block);
      EXPECT_GE(log2_rows, 2);
      if (log2_rows < block) {
        EXPECT_LT(std::uint64_t{grid.rows} >> (log2_rows + 1), kMultiprocessors);
      }
      if (log2_rows > 2) {
        EXPECT_GE(std::uint64_t{grid.rows} >> log2_rows, kMultiprocessors);
      }
    }
  }
  // 128^3 takes tiles of half a block's rows, 32^3 of four rows.
  EXPECT_EQ(kernels3d::tile_log2_rows(kernels3d::make_run_grid({128, 128, 128}), kMultiprocessors),
            kernels3d::block_log2_rows(kernels3d::make_run_grid({128, 128, 128})) - 1);
  EXPECT_EQ(kernels3d::tile_log2_rows(kernels3d::make_run_grid({32, 32, 32}), kMultiprocessors), 2);
}

// Merge's rows: every row with a row before it in another tile (under 6 above or behind, under
// 18 also above behind and below behind) is a slot's, no row is two slots', and few others are.
template <int Connectivity>
void expect_merge_rows_cover_the_contacts_between_tiles(std::uint32_t nx, std::uint32_t ny,
                                                        std::uint32_t nz, int log2_rows) {
  const RunGrid grid = kernels3d::make_run_grid({nx, ny, nz});
  const kernels3d::RunTiling tiling =
      kernels3d::make_run_tiling(grid, std::min(log2_rows, kernels3d::block_log2_rows(grid)));
  const kernels3d::MergeRows merge_rows = kernels3d::make_merge_rows<Connectivity>(grid, tiling);
  SCOPED_TRACE(std::to_string(nx) + "x" + std::to_string(ny) + "x" + std::to_string(nz) + " at " +
               std::to_string(Connectivity) + ", tiles of at most 2^" + std::to_string(log2_rows) +
               " rows");
  std::vector<int> visits(grid.rows, 0);
  std::uint32_t inside = 0;
  for (std::uint32_t slot = 0; slot < merge_rows.slots; ++slot) {
    const kernels3d::MergeRow at =
        kernels3d::merge_row<Connectivity>(grid, tiling, merge_rows, slot);
    if (!at.inside) continue;
    ASSERT_LT(at.y, ny);
    ASSERT_LT(at.z, nz);
    ++visits[at.z * ny + at.y];
    ++inside;
  }
  const std::uint32_t kinds =
      Connectivity == 6 ? kernels3d::kRowAbove | kernels3d::kRowBehind : ~0u;
  std::uint32_t needed = 0;
  for (std::uint32_t z = 0; z < nz; ++z) {
    for (std::uint32_t y = 0; y < ny; ++y) {
      const std::uint32_t between = kernels3d::rows_before(grid, y, z) &
                                    ~kernels3d::rows_before_in_tile(grid, tiling, y, z) & kinds;
      const int count = visits[z * ny + y];
      EXPECT_LE(count, 1) << "y " << y << ", z " << z;
      if (between != 0) {
        EXPECT_EQ(count, 1) << "y " << y << ", z " << z << " has contacts between tiles";
        ++needed;
      }
    }
  }
  // The others: the volume's first slice, the first row of a slice (y = 0) and, under 18 and 26,
  // its last.
  EXPECT_LE(inside, needed + ny + 2 * nz);
  EXPECT_LE(merge_rows.slots, inside + 2 * nz * merge_rows.per_slice);
}

TEST(RufLogic3d, MergeRowsCoverTheContactsBetweenTilesOnce) {
  for (std::uint32_t nx : {1u, 33u, 256u, 300u, 1025u}) {
    for (const auto& [ny, nz] : {std::pair{37u, 21u}, std::pair{1u, 40u}, std::pair{40u, 1u},
                                 std::pair{64u, 64u}, std::pair{9u, 17u}, std::pair{2u, 3u}}) {
      for (const int log2_rows : {9, 2, 3, 5}) {
        expect_merge_rows_cover_the_contacts_between_tiles<6>(nx, ny, nz, log2_rows);
        expect_merge_rows_cover_the_contacts_between_tiles<18>(nx, ny, nz, log2_rows);
        expect_merge_rows_cover_the_contacts_between_tiles<26>(nx, ny, nz, log2_rows);
      }
    }
  }
}

// A warp's slice as the statistics pass sees it: lane l holds word l % 2 of row l / 2. Every
// word is cut into segments that cover its foreground exactly, each a maximal run of its bits;
// the packed sums of all segments, added as the warp's reduction adds them (some folded within
// their lane first), unpack to the voxels' own sums relative to the slice. Full words in every
// lane are the largest sums the packing must hold.
TEST(RufLogic3d, SegmentsAndPackedSumsOfAWarpSliceMatchTheVoxels) {
  std::mt19937 random(1729);
  for (int trial = 0; trial < 300; ++trial) {
    std::uint32_t words[32];
    for (std::uint32_t& word : words) {
      const int kind = trial < 2 ? trial : static_cast<int>(random() % 4);
      word = kind == 0 ? 0xFFFFFFFFu : kind == 1 ? 0u : kind == 2 ? random() : random() & random();
    }
    kernels3d::PackedSegmentSums total{0, 0, 0, 0, 0xFFFFFFFFu, 0};
    // A lane's offer added as the warp's reduction adds it (a lane without one offers nothing).
    const auto offer = [&total](const kernels3d::PackedSegmentSums& sums) {
      if (sums.count_x == 0) return;
      total.count_x += sums.count_x;
      total.y_yy += sums.y_yy;
      total.xx += sums.xx;
      total.xy += sums.xy;
      total.min_x = std::min(total.min_x, sums.min_x);
      total.max_x = std::max(total.max_x, sums.max_x);
    };
    detail::Moments expected = detail::no_moments();
    std::uint32_t min_y = 0xFFFFFFFFu, max_y = 0;
    for (std::uint32_t lane = 0; lane < 32; ++lane) {
      const std::uint32_t x0 = (lane % kernels3d::kSliceWords) * kWordVoxels;
      const std::uint32_t y = lane / kernels3d::kSliceWords;
      std::uint32_t covered = 0;
      std::uint32_t left = words[lane];
      bool fold_next = false;
      kernels3d::PackedSegmentSums lane_sums{};
      const std::uint32_t starts = kernels3d::run_starts(words[lane], false);
      for (kernels3d::Segment segment = kernels3d::take_segment(left, words[lane], starts);
           segment.length != 0; segment = kernels3d::take_segment(left, words[lane], starts)) {
        const std::uint32_t bits =
            kernels3d::bits_through(segment.first + static_cast<int>(segment.length) - 1) &
            ~kernels3d::bits_through(segment.first - 1);
        ASSERT_EQ(bits & words[lane], bits) << "a segment outside the foreground";
        ASSERT_EQ(bits & covered, 0u) << "segments overlap";
        ASSERT_FALSE(segment.first > 0 && ((words[lane] >> (segment.first - 1)) & 1u))
            << "a segment that does not start its run in the word";
        const std::uint32_t end = static_cast<std::uint32_t>(segment.first) + segment.length;
        ASSERT_FALSE(end < kWordVoxels && ((words[lane] >> end) & 1u))
            << "a segment that stops inside its run";
        covered |= bits;
        const kernels3d::PackedSegmentSums sums = kernels3d::segment_sums(
            x0 + static_cast<std::uint32_t>(segment.first), segment.length, y);
        if (fold_next) {
          kernels3d::fold(lane_sums, sums);
        } else {
          offer(lane_sums);  // the lane's earlier segments, as one offer
          lane_sums = sums;
        }
        fold_next = (random() & 1u) != 0;
      }
      offer(lane_sums);
      ASSERT_EQ(covered, words[lane]) << "segments that miss foreground";
      for (std::uint32_t i = 0; i < kWordVoxels; ++i) {
        if (((words[lane] >> i) & 1u) == 0) continue;
        detail::merge(expected, detail::run_moments(x0 + i, 1, y, 5));
        min_y = std::min(min_y, y);
        max_y = std::max(max_y, y);
      }
    }
    if (expected.count == 0) continue;
    const detail::Moments actual = kernels3d::slice_moments(total, min_y, max_y, 5);
    ASSERT_EQ(actual.count, expected.count) << "trial " << trial;
    for (int a = 0; a < 3; ++a) {
      ASSERT_EQ(actual.sum[a], expected.sum[a]) << "trial " << trial << ", axis " << a;
      ASSERT_EQ(actual.min[a], expected.min[a]) << "trial " << trial << ", axis " << a;
      ASSERT_EQ(actual.max[a], expected.max[a]) << "trial " << trial << ", axis " << a;
    }
    for (int p = 0; p < 6; ++p) {
      ASSERT_EQ(actual.sum_products[p], expected.sum_products[p])
          << "trial " << trial << ", product " << p;
    }
  }
}

}  // namespace
}  // namespace volccl::test
