// LabelResult::iterations: LE's Scan-Analysis rounds and TM's Global Merge levels, the same
// whatever the backend and the CPU's thread count; 0 for the algorithms that do not iterate.
// And the claim of the LE/TM paper's App. A: LE takes exactly l iterations on the Ridge pattern
// R_l, on the CPU as on the GPU.
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "test_support.h"
#include "volccl/data/generators.h"
#include "volccl/data/ridge.h"
#include "volccl/volccl.h"

namespace volccl::test {
namespace {

using data::Volume;

std::vector<Backend> backends() {
  std::vector<Backend> list = {Backend::cpu};
  if (cuda_available()) list.push_back(Backend::cuda);
  return list;
}

LabelOptions options_for(Algorithm algorithm, int connectivity, Backend backend) {
  LabelOptions options;
  options.algorithm = algorithm;
  options.connectivity = connectivity;
  options.backend = backend;
  return options;
}

// Labels `image` (checked against the reference labeler) and returns the iteration count.
std::uint32_t iterations(const Volume& image, const LabelOptions& options) {
  EXPECT_TRUE(matches_reference(image, options));
  return run_volccl(image, options).result.iterations;
}

Volume image_of(Extent3 extent, const std::vector<std::uint8_t>& pixels) {
  return Volume{extent, pixels};
}

TEST(Iterations, ZeroForTheAlgorithmsThatDoNotIterate) {
  const Volume image = data::random_granular({301, 203, 1}, 0.5, 1, 7);
  const Volume volume = data::random_granular({31, 17, 9}, 0.5, 1, 7);
  for (Backend backend : backends()) {
    for (const auto& [algorithm, connectivity] : supported_pairs_2d()) {
      if (algorithm == Algorithm::le || algorithm == Algorithm::tm) continue;
      if (backend == Backend::cuda && runs_on_cpu_only(algorithm)) continue;
      EXPECT_EQ(iterations(image, options_for(algorithm, connectivity, backend)), 0u)
          << to_string(algorithm) << " at " << connectivity << " on " << to_string(backend);
    }
    for (const auto& [algorithm, connectivity] : supported_pairs_3d()) {
      if (backend == Backend::cuda && runs_on_cpu_only(algorithm)) continue;
      EXPECT_EQ(iterations(volume, options_for(algorithm, connectivity, backend)), 0u)
          << to_string(algorithm) << " at " << connectivity << " on " << to_string(backend);
    }
  }
}

// TM's levels join 2 x 2 groups of 32 x 16-pixel tiles until one group covers the image.
TEST(Iterations, TmCountsItsMergeLevels) {
  const struct {
    Extent3 extent;
    std::uint32_t levels;
  } cases[] = {{{1, 1, 1}, 0},       {{32, 16, 1}, 0},     {{33, 16, 1}, 1},
               {{32, 17, 1}, 1},     {{64, 32, 1}, 1},     {{65, 1, 1}, 2},
               {{1, 600001, 1}, 16}, {{2048, 2048, 1}, 7}, {{4099, 1029, 1}, 8}};
  for (Backend backend : backends()) {
    for (int connectivity : {4, 8}) {
      for (const auto& c : cases) {
        const Volume image = data::random_granular(c.extent, 0.5, 1, 11);
        EXPECT_EQ(iterations(image, options_for(Algorithm::tm, connectivity, backend)), c.levels)
            << c.extent.to_string() << " at " << connectivity << " on " << to_string(backend);
      }
    }
  }
}

TEST(Iterations, LeOnSmallShapes) {
  const std::uint8_t u_shape[] = {1, 0, 1,  //
                                  1, 0, 1,  //
                                  1, 1, 1};
  // Joined by a corner: at 8 the right arm's first pixel is labeled in the second iteration.
  const std::uint8_t v_shape[] = {1, 0, 0, 0, 1,  //
                                  0, 1, 0, 1, 0,  //
                                  0, 0, 1, 0, 0};
  for (Backend backend : backends()) {
    const LabelOptions le8 = options_for(Algorithm::le, 8, backend);
    const LabelOptions le4 = options_for(Algorithm::le, 4, backend);
    for (std::uint8_t value : {0, 1}) {
      const Extent3 extent{100, 37, 1};
      const Volume flat = image_of(extent, std::vector<std::uint8_t>(extent.voxel_count(), value));
      EXPECT_EQ(iterations(flat, le8), 1u) << int{value};
      EXPECT_EQ(iterations(flat, le4), 1u) << int{value};
    }
    const Volume u = image_of({3, 3, 1}, {u_shape, u_shape + 9});
    EXPECT_EQ(iterations(u, le8), 2u);
    EXPECT_EQ(iterations(u, le4), 2u);
    const Volume v = image_of({5, 3, 1}, {v_shape, v_shape + 15});
    EXPECT_EQ(iterations(v, le8), 2u);
    EXPECT_EQ(iterations(v, le4), 1u);  // five single pixels
  }
}

// The count may not depend on who does the work: the CPU with one or three threads, the GPU.
TEST(Iterations, SameOnEveryBackendAndThreadCount) {
  const Volume images[] = {data::random_granular({1024, 1024, 1}, 0.5, 1, 3),
                           data::random_granular({999, 333, 1}, 0.6, 4, 5),
                           data::spiral({257, 255, 1})};
  for (Algorithm algorithm : {Algorithm::le, Algorithm::tm}) {
    for (int connectivity : {4, 8}) {
      for (const Volume& image : images) {
        LabelOptions options = options_for(algorithm, connectivity, Backend::cpu);
        options.cpu_threads = 1;
        const std::uint32_t one_thread = iterations(image, options);
        options.cpu_threads = 3;
        EXPECT_EQ(iterations(image, options), one_thread)
            << to_string(algorithm) << " at " << connectivity << ", " << image.extent.to_string();
        EXPECT_GT(one_thread, 0u);
        if (!cuda_available()) continue;
        options.backend = Backend::cuda;
        EXPECT_EQ(iterations(image, options), one_thread)
            << to_string(algorithm) << " at " << connectivity << ", " << image.extent.to_string();
      }
    }
  }
}

// App. A: the crest of R_l holds the smallest label back for exactly l iterations. The count
// is the paper's on the CPU too because LE's Scans read the labels as the previous Analysis
// left them (le_logic_2d.h); a CPU Scan in raster order that read its own writes would run
// ahead of the paper's count.
TEST(Iterations, LeTakesLIterationsOnTheRidgePatternOfLevelL) {
  for (Backend backend : backends()) {
    for (unsigned level = 1; level <= 8; ++level) {
      const Volume image = data::ridge(level, 512);
      EXPECT_EQ(iterations(image, options_for(Algorithm::le, 8, backend)), level)
          << "R_" << level << " on " << to_string(backend);
    }
  }
}

}  // namespace
}  // namespace volccl::test
