// Properties of UFB's block logic (kernels3d/ufb_logic_3d.h) that the labeling tests could miss
// because they hold only for rare configurations: the run minimum of a segment's votes (and under
// 6 the smallest key of every piece of a segment's two rows), the
// window's dilations against the connectivities' definitions, and the pair key of every window
// position.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <vector>

#include "kernels3d/ufb_logic_3d.h"

namespace volccl::test {
namespace {

using kernels3d::PairBlock;
using kernels3d::PairGrid;

// The lane of the smallest key in `lane`'s run, by walking the lanes one at a time.
kernels3d::RunMinimum run_minimum_by_walking(std::uint32_t linked, std::uint32_t top,
                                             std::uint32_t lane) {
  std::uint32_t first = lane, last = lane;
  while (first > 0 && ((linked >> first) & 1)) --first;
  while (last < 31 && ((linked >> (last + 1)) & 1)) ++last;
  for (std::uint32_t l = first; l <= last; ++l) {
    if ((top >> l) & 1) return {l, true};
  }
  return {first, false};
}

TEST(UfbLogic3d, RunMinimumMatchesAWalkOverTheLanes) {
  std::mt19937 random(12345);
  for (int trial = 0; trial < 20000; ++trial) {
    // Sparse and dense votes both; lane 0 never links to the left.
    const std::uint32_t linked = (trial % 2 ? random() | random() : random() & random()) & ~1u;
    const std::uint32_t top = trial % 3 ? random() : random() & random() & random();
    for (std::uint32_t lane = 0; lane < 32; ++lane) {
      const kernels3d::RunMinimum expected = run_minimum_by_walking(linked, top, lane);
      const kernels3d::RunMinimum actual = kernels3d::run_minimum(linked, top, lane);
      ASSERT_EQ(actual.lane, expected.lane) << std::hex << linked << " " << top << " " << lane;
      ASSERT_EQ(actual.top, expected.top) << std::hex << linked << " " << top << " " << lane;
    }
  }
}

// Under 6, Initialization's parent of every pair of a segment (two rows of 64 voxels) is the
// smallest key of the pair's piece of the two rows, found here by flood fill; keys are x / 2 in
// the top row and 32 + x / 2 in the bottom row.
TEST(UfbLogic3d, InitializationUnder6LinksEachPairToItsPiecesSmallestKey) {
  const PairGrid grid = kernels3d::make_pair_grid({64, 2, 1});
  std::mt19937 random(2024);
  for (int trial = 0; trial < 20000; ++trial) {
    std::uint8_t mask[128];
    const unsigned density = 1 + trial % 9;  // of 10
    for (std::uint8_t& voxel : mask) voxel = random() % 10 < density ? 1 : 0;
    // Pieces by flood fill over the 2 x 64 voxels (4-connected in the plane of the rows).
    int piece[128];
    for (int& p : piece) p = -1;
    std::uint32_t smallest[128];
    int pieces = 0;
    for (int start = 0; start < 128; ++start) {
      if (mask[start] == 0 || piece[start] >= 0) continue;
      std::uint32_t least = 0xFFFFFFFFu;
      int stack[128], size = 0;
      stack[size++] = start;
      piece[start] = pieces;
      while (size > 0) {
        const int v = stack[--size];
        const int x = v % 64, y = v / 64;
        least = std::min<std::uint32_t>(least, static_cast<std::uint32_t>(32 * y + x / 2));
        const int neighbours[4] = {x > 0 ? v - 1 : -1, x < 63 ? v + 1 : -1, y == 0 ? v + 64 : -1,
                                   y == 1 ? v - 64 : -1};
        for (const int n : neighbours) {
          if (n >= 0 && mask[n] != 0 && piece[n] < 0) {
            piece[n] = pieces;
            stack[size++] = n;
          }
        }
      }
      smallest[pieces++] = least;
    }
    std::uint32_t foreground[32];
    PairBlock blocks[32];
    for (std::uint32_t lane = 0; lane < 32; ++lane) {
      blocks[lane] = kernels3d::pair_block_at(grid, lane, 0, 0);
      foreground[lane] = kernels3d::block_foreground(mask, grid, blocks[lane]);
    }
    const kernels3d::SegmentPieces votes = kernels3d::segment_pieces(foreground, 32);
    std::uint32_t parents[64];
    for (std::uint32_t lane = 0; lane < 32; ++lane) {
      kernels3d::UfbInitialize6{parents}(grid, blocks[lane], foreground[lane], lane, votes);
    }
    for (std::uint32_t key = 0; key < 64; ++key) {
      const int first = 64 * static_cast<int>(key / 32) + 2 * static_cast<int>(key % 32);
      const int voxel = mask[first] != 0 ? first : first + 1;
      const std::uint32_t expected = mask[voxel] != 0 ? smallest[piece[voxel]] : kernels3d::kNoPair;
      ASSERT_EQ(parents[key], expected) << "trial " << trial << " key " << key;
    }
  }
}

struct Position {
  int x, y, layer;
};

Position position(int p) { return {p & 3, (p >> 2) & 3, p >> 4}; }

// Whether two window positions are neighbours under the connectivity (city-block distance
// at most 1 for 6, at most 2 with no axis apart by more than 1 for 18).
bool adjacent(int p, int q, int connectivity) {
  const Position a = position(p), b = position(q);
  const int dx = std::abs(a.x - b.x), dy = std::abs(a.y - b.y), dz = std::abs(a.layer - b.layer);
  if (dx > 1 || dy > 1 || dx + dy + dz == 0) return false;
  return dx + dy + dz <= (connectivity == 6 ? 1 : 2);
}

template <int Connectivity>
void expect_dilation_matches_adjacency() {
  for (int p = 0; p < 32; ++p) {
    std::uint32_t expected = 1u << p;
    for (int q = 0; q < 32; ++q) {
      if (adjacent(p, q, Connectivity)) expected |= 1u << q;
    }
    EXPECT_EQ(kernels3d::dilate<Connectivity>(1u << p), expected)
        << Connectivity << "-connectivity, position " << p;
  }
}

TEST(UfbLogic3d, DilationsAreTheConnectivities) {
  expect_dilation_matches_adjacency<6>();
  expect_dilation_matches_adjacency<18>();
}

// Every window position inside the volume maps to the key of the pair that holds its voxel, and
// the window's lower positions are exactly those of blocks before the block in raster order.
template <int Connectivity>
void expect_window_keys(Extent3 extent) {
  const PairGrid grid = kernels3d::make_pair_grid(extent);
  constexpr std::uint32_t rows = kernels3d::kBlockRows;
  for (std::uint32_t z = 0; z < grid.nz; ++z) {
    for (std::uint32_t j = 0; j < grid.blocks_y; ++j) {
      for (std::uint32_t i = 0; i < grid.pairs_x; ++i) {
        const PairBlock block = kernels3d::pair_block_at(grid, i, j, z);
        const std::uint32_t inside = kernels3d::window_inside_volume<Connectivity>(grid, block);
        for (int p = 0; p < 32; ++p) {
          if (((inside >> p) & 1) == 0) continue;
          const Position c = position(p);
          const std::uint32_t x = 2 * i + c.x - 1, y = block.y + c.y - 1, vz = z + c.layer - 1;
          ASSERT_LT(x, grid.nx);
          ASSERT_LT(y, grid.ny);
          const std::uint32_t key = (vz * grid.ny + y) * grid.pairs_x + x / 2;
          ASSERT_EQ(kernels3d::window_key(grid, block, p), key) << "position " << p;
          // The block of this voxel, and whether it precedes ours.
          const std::uint64_t other =
              (std::uint64_t{vz} * grid.blocks_y + y / rows) * grid.pairs_x + x / 2;
          const std::uint64_t ours = (std::uint64_t{z} * grid.blocks_y + j) * grid.pairs_x + i;
          const bool in_lower = (kernels3d::lower_window<Connectivity>() >> p) & 1;
          if (in_lower) {
            EXPECT_LT(other, ours) << "position " << p;
          }
        }
      }
    }
  }
}

TEST(UfbLogic3d, WindowKeysAndLowerBlocks) {
  for (const Extent3& extent :
       {Extent3{7, 5, 3}, Extent3{8, 6, 2}, Extent3{1, 3, 2}, Extent3{2, 1, 3}, Extent3{5, 4, 4}}) {
    expect_window_keys<6>(extent);
    expect_window_keys<18>(extent);
  }
}

// Merge's window read as words (window_rows_readable: the x faces' blocks too) gives every
// position that Merge asks for the voxel's own foreground, and the words stay inside the mask,
// for every block of small volumes whose rows are shorter than, equal to or longer than a word.
// The mask is a vector of exactly the volume's size, so that a sanitizer sees any read past it.
template <int Connectivity>
void expect_window_foreground(Extent3 extent, std::mt19937& random) {
  const PairGrid grid = kernels3d::make_pair_grid(extent);
  const std::uint64_t voxels = std::uint64_t{grid.slice} * grid.nz;
  std::vector<std::uint8_t> mask(voxels);
  for (std::uint8_t& voxel : mask) voxel = random() % 2 ? static_cast<std::uint8_t>(random()) : 0;
  for (std::uint32_t z = 0; z < grid.nz; ++z) {
    for (std::uint32_t j = 0; j < grid.blocks_y; ++j) {
      for (std::uint32_t i = 0; i < grid.pairs_x; ++i) {
        const PairBlock block = kernels3d::pair_block_at(grid, i, j, z);
        // What Merge asks for: the lower blocks' positions and the block's own, inside the volume.
        const std::uint32_t wanted = (kernels3d::lower_window<Connectivity>() | 0x06600000u) &
                                     kernels3d::window_inside_volume<Connectivity>(grid, block);
        if (kernels3d::window_rows_readable(grid, block)) {
          const std::uint64_t corner = std::uint64_t{block.voxel} - 1 - grid.row - grid.slice;
          const std::uint64_t last = corner + grid.slice + kernels3d::kBlockRows * grid.row;
          ASSERT_LE(corner, voxels);
          ASSERT_LE((last & ~std::uint64_t{3}) + 8, voxels)
              << "block " << i << "," << j << "," << z;
        }
        std::uint32_t expected = 0;
        for (int p = 0; p < 32; ++p) {
          const Position c = position(p);
          const std::uint64_t x = 2 * i + c.x - 1, y = block.y + c.y - 1, vz = z + c.layer - 1;
          if (((wanted >> p) & 1) && mask[(vz * grid.ny + y) * grid.nx + x] != 0) {
            expected |= 1u << p;
          }
        }
        ASSERT_EQ(kernels3d::window_foreground<Connectivity>(mask.data(), grid, block, wanted),
                  expected)
            << extent.x << "x" << extent.y << "x" << extent.z << " block " << i << "," << j << ","
            << z;
      }
    }
  }
}

TEST(UfbLogic3d, WindowForegroundAsWordsMatchesTheVoxels) {
  std::mt19937 random(777);
  for (const Extent3& extent :
       {Extent3{1, 1, 1}, Extent3{3, 2, 2}, Extent3{4, 4, 3}, Extent3{7, 5, 3}, Extent3{8, 6, 2},
        Extent3{1, 3, 4}, Extent3{2, 1, 3}, Extent3{9, 7, 5}, Extent3{16, 3, 3}}) {
    expect_window_foreground<6>(extent, random);
    expect_window_foreground<18>(extent, random);
  }
}
// Every voxel of a lower neighbour block that touches one of the block's voxels lies in the
// window's lower positions (else Merge would miss a contact).
template <int Connectivity>
void expect_window_holds_every_contact() {
  constexpr std::uint32_t own = 0x06600000u;
  std::uint32_t reach = 0;
  for (int p = 0; p < 32; ++p) {
    if ((own >> p) & 1) reach |= kernels3d::dilate<Connectivity>(1u << p);
  }
  // Everything the block's voxels reach is its own, lower, or (in its slice) after it.
  constexpr std::uint32_t after = 0xF8800000u;  // cx 3 of its rows, the row below them
  EXPECT_EQ(reach & ~own & ~kernels3d::lower_window<Connectivity>() & ~after, 0u)
      << std::hex << reach;
  EXPECT_EQ(reach & 0xFFFFu & ~kernels3d::lower_window<Connectivity>(), 0u) << std::hex << reach;
}

TEST(UfbLogic3d, WindowHoldsEveryContact) {
  expect_window_holds_every_contact<6>();
  expect_window_holds_every_contact<18>();
}

// UfbMerge takes all candidates of an 18-connectivity block for one cluster when all are
// foreground. That holds if the candidates of every foreground pattern of the block are
// 18-connected in every cut of the window that the volume's faces make, which blocks of small
// volumes meet: at each face, one voxel from it, and the far faces of odd sizes.
TEST(UfbLogic3d, CandidatePositionsAt18AreAlwaysConnected) {
  int cases = 0;
  for (std::uint64_t nz = 1; nz <= 3; ++nz) {
    for (std::uint64_t ny = 1; ny <= 6; ++ny) {
      for (std::uint64_t nx = 1; nx <= 6; ++nx) {
        const PairGrid grid = kernels3d::make_pair_grid({nx, ny, nz});
        for (std::uint32_t z = 0; z < grid.nz; ++z) {
          for (std::uint32_t j = 0; j < grid.blocks_y; ++j) {
            for (std::uint32_t i = 0; i < grid.pairs_x; ++i) {
              const PairBlock block = kernels3d::pair_block_at(grid, i, j, z);
              const std::uint32_t inside = kernels3d::window_inside_volume<18>(grid, block);
              const std::uint32_t existing = kernels3d::existing_voxels(grid, block);
              for (std::uint32_t foreground = 1; foreground < 16; ++foreground) {
                if ((foreground & ~existing) != 0) continue;
                const std::uint32_t candidates =
                    kernels3d::dilate<18>(kernels3d::block_positions(foreground)) &
                    kernels3d::lower_window<18>() & inside;
                if (candidates == 0) continue;
                const std::uint32_t cluster = kernels3d::cluster_of<18>(
                    candidates & (~candidates + 1), candidates, candidates);
                ASSERT_EQ(cluster, candidates)
                    << nx << "x" << ny << "x" << nz << " block " << i << "," << j << "," << z
                    << " foreground " << foreground;
                ++cases;
              }
            }
          }
        }
      }
    }
  }
  EXPECT_GT(cases, 1000);
}

}  // namespace
}  // namespace volccl::test
