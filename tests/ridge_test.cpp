// The Ridge patterns and families of the LE/TM paper (Sec. IV-B, IV-C, App. A) have the
// properties the paper gives them: the pixels of Eq. 6-16 (small cases worked by hand), the
// number of 8-connected components (counted by the reference labeler), the number of Label
// Equivalence iterations (a plain LE written here, App. A), and reproducible random members.
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "reference_labeler.h"
#include "volccl/data/generators.h"
#include "volccl/data/ridge.h"
#include "volccl/error.h"

namespace volccl::test {
namespace {

using data::RidgeFamily;
using data::RidgeFamilyParameters;
using data::Volume;

constexpr RidgeFamily kFamilies[] = {RidgeFamily::leveling,       RidgeFamily::scaling,
                                     RidgeFamily::subdivision,    RidgeFamily::random_instancing,
                                     RidgeFamily::random_merging, RidgeFamily::spiral};

std::uint64_t foreground_count(const Volume& image) {
  return static_cast<std::uint64_t>(
      std::count(image.voxels.begin(), image.voxels.end(), std::uint8_t{1}));
}

std::uint32_t components(const Volume& image, int connectivity = 8) {
  return reference_label(image.voxels, image.extent, connectivity).component_count;
}

bool pixel(const Volume& image, std::uint64_t x, std::uint64_t y) {
  return image.voxels[y * image.extent.x + x] != 0;
}

// An image from rows of '#' (foreground) and '.'; rows not given are background.
Volume picture(std::uint64_t side, const std::vector<std::string>& rows) {
  Volume image{Extent3{side, side, 1}, std::vector<std::uint8_t>(side * side, 0)};
  for (std::size_t y = 0; y < rows.size(); ++y) {
    for (std::size_t x = 0; x < rows[y].size(); ++x) {
      image.voxels[y * side + x] = rows[y][x] == '#' ? 1 : 0;
    }
  }
  return image;
}

std::string drawn(const Volume& image) {
  std::string text;
  for (std::uint64_t y = 0; y < image.extent.y; ++y) {
    for (std::uint64_t x = 0; x < image.extent.x; ++x) text += pixel(image, x, y) ? '#' : '.';
    text += '\n';
  }
  return text;
}

// Label Equivalence as the paper runs it (Sec. II-A, V-B), with the label array as the
// equivalence table (KLE): Prelabel (label = raster index), a first Scan over the four
// raster-preceding neighbours (F4), Analysis (every pixel takes the root of its chain); then
// Scan over all 8 neighbours, where a pixel seeing a smaller label lowers its root's entry,
// and Analysis, until a Scan changes nothing. Scans read the labels as they were when the
// Scan began. Returns the iterations that changed labels (the first one always counts).
int label_equivalence_iterations(const Volume& image) {
  const auto width = static_cast<std::int64_t>(image.extent.x);
  const auto height = static_cast<std::int64_t>(image.extent.y);
  std::vector<std::int64_t> labels(image.voxels.size(), -1);
  auto foreground = [&](std::int64_t x, std::int64_t y) {
    return x >= 0 && x < width && y >= 0 && y < height && image.voxels[y * width + x] != 0;
  };
  auto analysis = [&] {
    for (std::size_t p = 0; p < labels.size(); ++p) {
      if (labels[p] < 0) continue;
      std::int64_t root = labels[p];
      while (labels[root] != root) root = labels[root];
      labels[p] = root;
    }
  };
  for (std::int64_t p = 0; p < width * height; ++p) {
    if (image.voxels[p] != 0) labels[p] = p;
  }
  const std::vector<std::int64_t> prelabels = labels;
  for (std::int64_t y = 0; y < height; ++y) {
    for (std::int64_t x = 0; x < width; ++x) {
      if (!foreground(x, y)) continue;
      const std::int64_t preceding[4][2] = {{x - 1, y - 1}, {x, y - 1}, {x + 1, y - 1}, {x - 1, y}};
      for (const auto& q : preceding) {
        if (foreground(q[0], q[1])) {
          labels[y * width + x] = std::min(labels[y * width + x], prelabels[q[1] * width + q[0]]);
        }
      }
    }
  }
  analysis();
  int iterations = 1;
  for (;;) {
    const std::vector<std::int64_t> before = labels;
    bool changed = false;
    for (std::int64_t y = 0; y < height; ++y) {
      for (std::int64_t x = 0; x < width; ++x) {
        if (!foreground(x, y)) continue;
        const std::int64_t own = before[y * width + x];
        std::int64_t smallest = own;
        for (std::int64_t dy = -1; dy <= 1; ++dy) {
          for (std::int64_t dx = -1; dx <= 1; ++dx) {
            if (foreground(x + dx, y + dy)) {
              smallest = std::min(smallest, before[(y + dy) * width + x + dx]);
            }
          }
        }
        if (smallest < own) {
          labels[own] = std::min(labels[own], smallest);
          changed = true;
        }
      }
    }
    if (!changed) return iterations;
    analysis();
    ++iterations;
  }
}

// ---------------------------------------------------------------------------------------------
// Pixels of small patterns, worked by hand from Eq. 6-16 (top-left of the box at (1, 1)).

TEST(Ridge, LevelOneIsTheTwoByTwoSquare) {                           // Sec. IV-B, Fig. 3a
  EXPECT_EQ(drawn(data::ridge(1, 8)), drawn(picture(8, {"........",  //
                                                        ".##.....",  //
                                                        ".##....."})));
}

// C_2: |C| = 2 peaks (Eq. 6) at x = 0, 3 (Eq. 7), both 2 tall (Eq. 8); w(C) = 4 (Eq. 9);
// T_2: h(T) = 4 - 2 = 2 rows (Eq. 12) of w(C) + 1 = 5 pixels, w(T) = 6 (Eq. 11).
TEST(Ridge, LevelTwoByHand) {
  EXPECT_EQ(drawn(data::ridge(2, 8)), drawn(picture(8, {"........",  //
                                                        ".#..#...",  //
                                                        ".#..#...",  //
                                                        ".#####..",  //
                                                        "..#####."})));
}

// C_3: peaks at x = 0, 3, 6, 3, 2 and 3 tall; w(C) = 7; T_3: 4 rows of 8, w(T) = 14.
TEST(Ridge, LevelThreeByHand) {
  EXPECT_EQ(drawn(data::ridge(3, 16)), drawn(picture(16, {"................",  //
                                                          ".#.....#........",  //
                                                          ".#..#..#........",  //
                                                          ".#..#..#........",  //
                                                          ".########.......",  //
                                                          "..########......",  //
                                                          "...########.....",  //
                                                          "....########...."})));
}

// R^1_2: peaks 2 wide at x = 0, 6, w(C) = 8 (Eq. 13), h(C) = 2 (Eq. 14), h(T) = 6 rows of 9
// (Eq. 16), w(T) = 14 (Eq. 15).
TEST(Ridge, ScaledLevelTwoByHand) {
  EXPECT_EQ(drawn(data::ridge_instance(2, 1, 16)), drawn(picture(16, {"................",  //
                                                                      ".##....##.......",  //
                                                                      ".##....##.......",  //
                                                                      ".#########......",  //
                                                                      "..#########.....",  //
                                                                      "...#########....",  //
                                                                      "....#########...",  //
                                                                      ".....#########..",  //
                                                                      "......#########."})));
}

TEST(Ridge, RidgeIsTheUnscaledInstance) {
  for (unsigned level = 1; level <= 7; ++level) {
    EXPECT_EQ(data::ridge(level, 256).voxels, data::ridge_instance(level, 0, 256).voxels);
  }
}

// Eq. 13-16 in closed form, and Eq. 17: the box plus a two-pixel gap fits 2^(k+l+1).
TEST(Ridge, GeometryFollowsTheClosedForms) {
  for (unsigned level = 2; level <= 10; ++level) {
    for (unsigned scale = 0; scale <= 6; ++scale) {
      const data::RidgeGeometry g = data::ridge_geometry(level, scale);
      const std::uint64_t kl = std::uint64_t{1} << (scale + level);  // 2^(k+l)
      const std::uint64_t k = std::uint64_t{1} << scale;
      EXPECT_EQ(g.peak_count, (std::uint64_t{1} << (level - 2)) + 1);  // Eq. 6
      EXPECT_EQ(g.crest_width, kl / 2 + kl / 4 + k);                   // Eq. 13
      EXPECT_EQ(g.crest_height, level);                                // Eq. 14
      EXPECT_EQ(g.base_width, kl + kl / 2 + 2 * k - level);            // Eq. 15
      EXPECT_EQ(g.base_height, kl / 2 + kl / 4 + k - level);           // Eq. 16
      EXPECT_LE(2 + g.base_width, 2 * kl);                             // Eq. 17
      EXPECT_EQ(g.height, g.crest_width);
    }
  }
}

// The drawn pattern's bounding box is the geometry's, at (1, 1).
TEST(Ridge, DrawnBoxMatchesTheGeometry) {
  for (unsigned level = 1; level <= 6; ++level) {
    for (unsigned scale = 0; level + scale + 1 <= 8; ++scale) {
      const Volume image = data::ridge_instance(level, scale, 256);
      std::uint64_t min_x = 256, min_y = 256, max_x = 0, max_y = 0;
      for (std::uint64_t y = 0; y < 256; ++y) {
        for (std::uint64_t x = 0; x < 256; ++x) {
          if (!pixel(image, x, y)) continue;
          min_x = std::min(min_x, x), max_x = std::max(max_x, x);
          min_y = std::min(min_y, y), max_y = std::max(max_y, y);
        }
      }
      const data::RidgeGeometry g = data::ridge_geometry(level, scale);
      EXPECT_EQ(min_x, 1u);
      EXPECT_EQ(min_y, 1u);
      EXPECT_EQ(max_x + 1 - min_x, g.width) << "level " << level << " scale " << scale;
      EXPECT_EQ(max_y + 1 - min_y, g.height) << "level " << level << " scale " << scale;
    }
  }
}

// App. A builds C_(l+1) from C_l = {P_0..P_u}: {P_0 + 1, P_1..P_u, P_1..P_(u-1), P_u + 1}.
// Eq. 8 must give the same heights.
TEST(Ridge, PeakHeightsFollowTheRecursionOfAppendixA) {
  std::vector<unsigned> crest = {2, 2};  // C_2, Fig. 2d
  for (unsigned level = 2; level <= 12; ++level) {
    ASSERT_EQ(crest.size(), (std::size_t{1} << (level - 2)) + 1);
    for (std::size_t i = 0; i < crest.size(); ++i) {
      EXPECT_EQ(data::ridge_peak_height(level, i), crest[i]) << "level " << level << " peak " << i;
    }
    std::vector<unsigned> next = crest;
    next.front() += 1;
    next.insert(next.end(), crest.begin() + 1, crest.end());
    next.back() += 1;
    crest = next;
  }
}

// The peaks as drawn: peak i of R_l is column 1 + 3i, h(P_i) pixels above the base.
TEST(Ridge, DrawnPeaksHaveTheHeightsOfEquationEight) {
  for (unsigned level = 2; level <= 7; ++level) {
    const Volume image = data::ridge(level, 256);
    for (std::uint64_t i = 0; i <= (std::uint64_t{1} << (level - 2)); ++i) {
      unsigned height = 0;
      for (std::uint64_t y = 1; y <= level; ++y) height += pixel(image, 1 + 3 * i, y) ? 1 : 0;
      EXPECT_EQ(height, data::ridge_peak_height(level, i));
      EXPECT_FALSE(pixel(image, 1 + 3 * i + 1, level));  // one pixel wide, two-pixel gaps
      EXPECT_FALSE(pixel(image, 1 + 3 * i - 1, level));
    }
  }
}

// ---------------------------------------------------------------------------------------------
// One component, and exactly l iterations of Label Equivalence (App. A).

TEST(Ridge, IsOneEightConnectedComponent) {
  for (unsigned level = 1; level <= 9; ++level) {
    for (unsigned scale = 0; level + scale + 1 <= 10; scale += 2) {
      EXPECT_EQ(components(data::ridge_instance(level, scale, 1024)), 1u)
          << "level " << level << " scale " << scale;
    }
  }
}

TEST(Ridge, LabelEquivalenceTakesExactlyLevelIterations) {
  for (unsigned level = 1; level <= 7; ++level) {
    EXPECT_EQ(label_equivalence_iterations(data::ridge(level, 256)), static_cast<int>(level));
  }
  // Widening the crest (R^k_l) keeps the count: the peaks' sub-components and their order
  // stay the same.
  for (unsigned level = 1; level <= 5; ++level) {
    for (unsigned scale = 1; level + scale + 1 <= 8; ++scale) {
      EXPECT_EQ(label_equivalence_iterations(data::ridge_instance(level, scale, 256)),
                static_cast<int>(level))
          << "level " << level << " scale " << scale;
    }
  }
}

// Sec. IV: "the number of iterations for LE is always two" on the Spiral Pattern (Fig. 1).
TEST(Ridge, LabelEquivalenceTakesTwoIterationsOnTheSpiral) {
  for (std::uint64_t side : {16, 33, 64, 256}) {
    EXPECT_EQ(label_equivalence_iterations(data::spiral({side, side, 1})), 2) << side;
  }
}

// ---------------------------------------------------------------------------------------------
// The families (Sec. IV-C).

TEST(RidgeFamily, SizesAndXValues) {
  const std::uint64_t side = 8192;  // n = 13, the paper's resolution
  RidgeFamilyParameters parameters;
  parameters.family = RidgeFamily::leveling;
  EXPECT_EQ(data::ridge_family_size(parameters, side), 12u);  // 1 <= l <= n - 1
  EXPECT_EQ(data::ridge_family_x(parameters, 0, side), 1.0);
  EXPECT_EQ(data::ridge_family_x(parameters, 11, side), 12.0);
  parameters.family = RidgeFamily::subdivision;
  parameters.level = 3;
  EXPECT_EQ(data::ridge_family_size(parameters, side), 10u);  // s = 0..n - l - 1
  EXPECT_EQ(data::ridge_family_x(parameters, 9, side), 9.0);
  parameters.family = RidgeFamily::scaling;
  EXPECT_EQ(data::ridge_family_size(parameters, side), 16u);  // Table III
  EXPECT_EQ(data::ridge_family_x(parameters, 15, side), 1.0);
  parameters.family = RidgeFamily::random_instancing;
  EXPECT_EQ(data::ridge_family_size(parameters, side), 21u);  // Table III
  EXPECT_EQ(data::ridge_family_x(parameters, 10, side), 0.5);
  parameters.family = RidgeFamily::random_merging;
  parameters.steps = 4;
  EXPECT_EQ(data::ridge_family_size(parameters, side), 5u);
  EXPECT_EQ(data::ridge_family_x(parameters, 1, side), 0.25);
  parameters.family = RidgeFamily::spiral;
  parameters.steps = 0;
  EXPECT_EQ(data::ridge_family_size(parameters, side), 9u);  // Table III
}

// Every member of every family at 256 x 256 (n = 8): a binary image of the right extent,
// x values increasing from the paper's first to its last.
TEST(RidgeFamily, EveryMemberAt256) {
  for (RidgeFamily family : kFamilies) {
    for (unsigned level = 1; level <= 3; ++level) {
      RidgeFamilyParameters parameters;
      parameters.family = family;
      parameters.level = level;
      parameters.subdivisions = 8 - level - 1 < 3 ? 8 - level - 1 : 3;
      parameters.seed = 7;
      const std::size_t size = data::ridge_family_size(parameters, 256);
      ASSERT_GE(size, 2u);
      double previous_x = -1.0;
      for (std::size_t index = 0; index < size; ++index) {
        SCOPED_TRACE(std::string(data::to_string(family)) + " level " + std::to_string(level) +
                     " member " + std::to_string(index));
        const Volume image = data::ridge_family_member(parameters, index, 256);
        EXPECT_EQ(image.extent.x, 256u);
        EXPECT_EQ(image.extent.y, 256u);
        EXPECT_EQ(image.extent.z, 1u);
        ASSERT_EQ(image.voxels.size(), 256u * 256u);
        EXPECT_TRUE(std::all_of(image.voxels.begin(), image.voxels.end(),
                                [](std::uint8_t v) { return v <= 1; }));
        const double x = data::ridge_family_x(parameters, index, 256);
        EXPECT_GT(x, previous_x);
        previous_x = x;
      }
    }
  }
}

TEST(RidgeFamily, LevelingIsTheLargestPatternOfEachLevel) {
  RidgeFamilyParameters parameters;
  parameters.family = RidgeFamily::leveling;
  for (std::size_t index = 0; index < 7; ++index) {
    const auto level = static_cast<unsigned>(index + 1);
    const Volume image = data::ridge_family_member(parameters, index, 256);
    EXPECT_EQ(image.voxels, data::ridge_instance(level, 8 - level - 1, 256).voxels);
    EXPECT_EQ(components(image), 1u);
    EXPECT_EQ(label_equivalence_iterations(image), static_cast<int>(level));
  }
  // Level 1 fills a quarter of the image: the 25 % the paper names as the maximum (Sec. V-C).
  EXPECT_EQ(foreground_count(data::ridge_family_member(parameters, 0, 256)), 128u * 128u);
}

TEST(RidgeFamily, ScalingGrowsOneComponentFromEmptyToTheFullPattern) {
  for (unsigned level = 1; level <= 3; ++level) {
    RidgeFamilyParameters parameters;
    parameters.family = RidgeFamily::scaling;
    parameters.level = level;
    const std::size_t size = data::ridge_family_size(parameters, 256);
    EXPECT_EQ(foreground_count(data::ridge_family_member(parameters, 0, 256)), 0u);
    EXPECT_EQ(data::ridge_family_member(parameters, size - 1, 256).voxels,
              data::ridge_instance(level, 8 - level - 1, 256).voxels);
    std::uint64_t previous = 0;
    for (std::size_t index = 1; index < size; ++index) {
      const Volume image = data::ridge_family_member(parameters, index, 256);
      EXPECT_EQ(components(image), 1u) << "level " << level << " member " << index;
      EXPECT_GT(foreground_count(image), previous);
      previous = foreground_count(image);
    }
  }
  // Level 1 (no crest): lambda = 2 / 4 halves the 128-pixel square.
  RidgeFamilyParameters parameters;
  parameters.family = RidgeFamily::scaling;
  parameters.level = 1;
  parameters.steps = 4;
  EXPECT_EQ(foreground_count(data::ridge_family_member(parameters, 2, 256)), 64u * 64u);
}

TEST(RidgeFamily, SubdivisionMultipliesTheComponentsByFour) {
  for (unsigned level = 1; level <= 4; ++level) {
    RidgeFamilyParameters parameters;
    parameters.family = RidgeFamily::subdivision;
    parameters.level = level;
    const std::size_t size = data::ridge_family_size(parameters, 256);
    EXPECT_EQ(size, 8u - level);
    EXPECT_EQ(data::ridge_family_member(parameters, 0, 256).voxels,
              data::ridge_instance(level, 8 - level - 1, 256).voxels);
    for (std::size_t s = 0; s < size; ++s) {
      const Volume image = data::ridge_family_member(parameters, s, 256);
      EXPECT_EQ(components(image), std::uint32_t{1} << (2 * s)) << "level " << level << " s " << s;
      // Every copy is a level-l pattern: LE still takes l iterations.
      EXPECT_EQ(label_equivalence_iterations(image), static_cast<int>(level));
    }
  }
}

// RandomInstancing keeps or erases whole patterns: each cell is either the Subdivision
// member's cell or empty, and the components are the kept patterns.
TEST(RidgeFamily, RandomInstancingKeepsWholePatterns) {
  RidgeFamilyParameters parameters;
  parameters.family = RidgeFamily::random_instancing;
  parameters.level = 2;
  parameters.subdivisions = 3;
  parameters.seed = 1234;
  RidgeFamilyParameters subdivision = parameters;
  subdivision.family = RidgeFamily::subdivision;
  const Volume full = data::ridge_family_member(subdivision, 3, 256);
  const std::size_t size = data::ridge_family_size(parameters, 256);
  EXPECT_EQ(foreground_count(data::ridge_family_member(parameters, 0, 256)), 0u);       // p = 0
  EXPECT_EQ(data::ridge_family_member(parameters, size - 1, 256).voxels, full.voxels);  // p = 1
  const std::uint64_t cell = 256 / 8;
  Volume previous = data::ridge_family_member(parameters, 0, 256);
  for (std::size_t index = 1; index + 1 < size; ++index) {
    const Volume image = data::ridge_family_member(parameters, index, 256);
    std::uint32_t kept = 0;
    for (std::uint64_t cy = 0; cy < 8; ++cy) {
      for (std::uint64_t cx = 0; cx < 8; ++cx) {
        bool same = true, empty = true;
        for (std::uint64_t y = cy * cell; y < (cy + 1) * cell; ++y) {
          for (std::uint64_t x = cx * cell; x < (cx + 1) * cell; ++x) {
            same = same && pixel(image, x, y) == pixel(full, x, y);
            empty = empty && !pixel(image, x, y);
          }
        }
        EXPECT_TRUE(same || empty) << "cell " << cx << "," << cy;
        kept += same && !empty ? 1 : 0;
      }
    }
    EXPECT_EQ(components(image), kept) << "member " << index;
    // The same draws for every p: a larger p only adds patterns.
    for (std::size_t i = 0; i < image.voxels.size(); ++i) {
      ASSERT_LE(previous.voxels[i], image.voxels[i]) << "member " << index;
    }
    previous = image;
  }
  // Around half of the 64 patterns at p = 0.5.
  const std::uint32_t half = components(data::ridge_family_member(parameters, 10, 256));
  EXPECT_GT(half, 16u);
  EXPECT_LT(half, 48u);
}

// RandomMerging joins neighbours by lines: the components are those of the grid of patterns
// with the joins found in the image, from 4^s at p = 0 to one at p = 1.
TEST(RidgeFamily, RandomMergingJoinsNeighbours) {
  for (unsigned level = 1; level <= 3; ++level) {
    RidgeFamilyParameters parameters;
    parameters.family = RidgeFamily::random_merging;
    parameters.level = level;
    parameters.subdivisions = 3;
    parameters.seed = 99;
    RidgeFamilyParameters subdivision = parameters;
    subdivision.family = RidgeFamily::subdivision;
    const Volume full = data::ridge_family_member(subdivision, 3, 256);
    const std::size_t size = data::ridge_family_size(parameters, 256);
    EXPECT_EQ(data::ridge_family_member(parameters, 0, 256).voxels, full.voxels);
    EXPECT_EQ(components(data::ridge_family_member(parameters, size - 1, 256)), 1u);
    const data::RidgeGeometry g = data::ridge_geometry(level, 8 - level - 1 - 3);
    const std::uint64_t cell = 256 / 8;
    Volume previous = full;
    for (std::size_t index = 1; index < size; ++index) {
      SCOPED_TRACE("level " + std::to_string(level) + " member " + std::to_string(index));
      const Volume image = data::ridge_family_member(parameters, index, 256);
      std::vector<std::uint32_t> parent(64);
      std::iota(parent.begin(), parent.end(), 0u);
      auto find = [&](std::uint32_t a) {
        while (parent[a] != a) a = parent[a];
        return a;
      };
      for (std::uint64_t cy = 0; cy < 8; ++cy) {
        for (std::uint64_t cx = 0; cx < 8; ++cx) {
          const auto here = static_cast<std::uint32_t>(cy * 8 + cx);
          // A join leaves the box's right side on its bottom row, or its bottom side.
          if (cx + 1 < 8 && pixel(image, cx * cell + 1 + g.width, cy * cell + g.height)) {
            parent[find(here)] = find(here + 1);
          }
          bool below = false;
          for (std::uint64_t x = cx * cell + 1; x < cx * cell + 1 + g.width; ++x) {
            below = below || pixel(image, x, cy * cell + 1 + g.height);
          }
          if (cy + 1 < 8 && below) parent[find(here)] = find(here + 8);
        }
      }
      std::uint32_t groups = 0;
      for (std::uint32_t i = 0; i < 64; ++i) groups += find(i) == i ? 1 : 0;
      EXPECT_EQ(components(image), groups);
      for (std::size_t i = 0; i < image.voxels.size(); ++i) {
        ASSERT_LE(previous.voxels[i], image.voxels[i]);  // the same draws: joins only added
      }
      previous = image;
    }
  }
}

TEST(RidgeFamily, SpiralGrowsOneComponent) {
  RidgeFamilyParameters parameters;
  parameters.family = RidgeFamily::spiral;
  EXPECT_EQ(foreground_count(data::ridge_family_member(parameters, 0, 256)), 0u);
  for (std::size_t index = 1; index <= 8; ++index) {
    const Volume image = data::ridge_family_member(parameters, index, 256);
    EXPECT_EQ(components(image, 4), 1u);
    const std::uint64_t side = index * 32;
    EXPECT_TRUE(pixel(image, side - 1, 0));
    if (side < 256) {
      EXPECT_FALSE(pixel(image, side, 0));
    }
  }
  // The whole image: the spiral's one-pixel lines and gaps fill about half (Sec. V-C).
  const double fraction =
      static_cast<double>(foreground_count(data::ridge_family_member(parameters, 8, 256))) /
      (256.0 * 256.0);
  EXPECT_NEAR(fraction, 0.5, 0.01);
}

TEST(RidgeFamily, RandomMembersAreReproducibleAndDependOnTheSeed) {
  for (RidgeFamily family : {RidgeFamily::random_instancing, RidgeFamily::random_merging}) {
    RidgeFamilyParameters parameters;
    parameters.family = family;
    parameters.level = 2;
    parameters.subdivisions = 4;
    parameters.seed = 5;
    const Volume first = data::ridge_family_member(parameters, 10, 256);
    EXPECT_EQ(first.voxels, data::ridge_family_member(parameters, 10, 256).voxels);
    parameters.seed = 6;
    EXPECT_NE(first.voxels, data::ridge_family_member(parameters, 10, 256).voxels);
  }
}

// ---------------------------------------------------------------------------------------------
// Refusals.

TEST(Ridge, RefusesSidesThatAreNotPowersOfTwo) {
  for (std::uint64_t side : {0, 1, 2, 3, 6, 100, 255, 257, 1000}) {
    EXPECT_THROW(data::ridge(1, side), volccl::InvalidArgument) << side;
    RidgeFamilyParameters parameters;
    EXPECT_THROW(data::ridge_family_size(parameters, side), volccl::InvalidArgument) << side;
  }
  try {
    data::ridge(2, 100);
    FAIL() << "no exception";
  } catch (const volccl::InvalidArgument& error) {
    EXPECT_NE(std::string(error.what()).find("100"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("power of two"), std::string::npos) << error.what();
  }
}

TEST(Ridge, RefusesLevelsAndScalesThatDoNotFit) {
  EXPECT_THROW(data::ridge(0, 256), volccl::InvalidArgument);
  EXPECT_NO_THROW(data::ridge(7, 256));  // 2^(7+1) = 256
  EXPECT_THROW(data::ridge(8, 256), volccl::InvalidArgument);
  EXPECT_THROW(data::ridge(2, 4), volccl::InvalidArgument);
  EXPECT_NO_THROW(data::ridge(1, 4));
  EXPECT_NO_THROW(data::ridge_instance(3, 4, 256));
  EXPECT_THROW(data::ridge_instance(3, 5, 256), volccl::InvalidArgument);
  EXPECT_THROW(data::ridge_peak_height(3, 3), volccl::InvalidArgument);
  try {
    data::ridge(9, 256);
    FAIL() << "no exception";
  } catch (const volccl::InvalidArgument& error) {
    EXPECT_NE(std::string(error.what()).find("level 9"), std::string::npos) << error.what();
  }
}

TEST(RidgeFamily, RefusesMembersAndParametersOutOfRange) {
  RidgeFamilyParameters parameters;
  parameters.family = RidgeFamily::leveling;
  EXPECT_THROW(data::ridge_family_member(parameters, 7, 256), volccl::InvalidArgument);
  EXPECT_THROW(data::ridge_family_x(parameters, 7, 256), volccl::InvalidArgument);
  parameters.family = RidgeFamily::random_instancing;
  parameters.level = 3;
  parameters.subdivisions = 4;  // n - l - 1 = 4
  EXPECT_NO_THROW(data::ridge_family_member(parameters, 3, 256));
  parameters.subdivisions = 5;
  EXPECT_THROW(data::ridge_family_member(parameters, 3, 256), volccl::InvalidArgument);
  parameters.family = RidgeFamily::subdivision;
  parameters.level = 8;
  EXPECT_THROW(data::ridge_family_size(parameters, 256), volccl::InvalidArgument);
  parameters.level = 0;
  EXPECT_THROW(data::ridge_family_size(parameters, 256), volccl::InvalidArgument);
  EXPECT_THROW(data::parse_ridge_family("levelling"), volccl::InvalidArgument);
  for (RidgeFamily family : kFamilies) {
    EXPECT_EQ(data::parse_ridge_family(data::to_string(family)), family);
  }
}

}  // namespace
}  // namespace volccl::test
