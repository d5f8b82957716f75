// Every 2D algorithm at every connectivity it supports (4 and 8), on every backend, against the
// reference labeler: tiny and odd sizes, widths around the warp's 32 and 64 pixels (HA4's
// segments), one-pixel rows and columns, diagonal-only contacts (where 4 and 8 differ),
// checkerboards, spirals and YACCLAB's random density x granularity images at 2048^2.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "test_support.h"
#include "volccl/data/generators.h"
#include "volccl/volccl.h"

namespace volccl::test {
namespace {

using data::Volume;

Volume empty_image(std::uint64_t width, std::uint64_t height) {
  return Volume{{width, height, 1}, std::vector<std::uint8_t>(width * height, 0)};
}

class Labeling2d : public LabelingFixture {};

TEST_P(Labeling2d, EverySizeUpToNineAndAroundTheWarp) {
  const std::uint32_t seed = test_seed();
  SCOPED_TRACE(describe_seed(seed));
  const std::uint64_t sizes[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 31, 32, 33, 63, 64, 65};
  std::uint32_t image_seed = seed;
  for (std::uint64_t height : sizes) {
    for (std::uint64_t width : sizes) {
      for (double density : {0.0, 0.25, 0.5, 0.75, 1.0}) {
        for (unsigned granularity : {1u, 2u}) {
          const Volume image =
              data::random_granular({width, height, 1}, density, granularity, image_seed++);
          ASSERT_TRUE(matches_reference(image))
              << "density " << density << ", granularity " << granularity;
        }
      }
    }
  }
}

TEST_P(Labeling2d, EmptyAndFullImages) {
  const Extent3 extents[] = {{1, 1, 1},   {2, 2, 1},   {33, 17, 1},
                             {255, 1, 1}, {1, 255, 1}, {2048, 2048, 1}};
  for (const Extent3& extent : extents) {
    for (std::uint8_t value : {0, 1}) {
      const Volume image{extent, std::vector<std::uint8_t>(extent.voxel_count(), value)};
      const VolcclRun run = run_volccl(image, options());
      EXPECT_EQ(run.result.component_count, value) << extent.to_string();
      ASSERT_TRUE(labels_equal(std::vector<std::uint32_t>(extent.voxel_count(), value), run.labels,
                               extent));
    }
  }
}

// Images taller than a kernel's grid can cover in one launch (65535 thread-block rows): the
// labelers launch them in slabs, whose borders must not cut components.
TEST_P(Labeling2d, TallImages) {
  const std::uint32_t seed = test_seed();
  SCOPED_TRACE(describe_seed(seed));
  const Extent3 extents[] = {{1, 600001, 1}, {3, 600001, 1}};
  std::uint32_t image_seed = seed;
  for (const Extent3& extent : extents) {
    for (double density : {0.5, 1.0}) {
      ASSERT_TRUE(matches_reference(data::random_granular(extent, density, 1, image_seed++)))
          << "density " << density;
    }
  }
}

TEST_P(Labeling2d, OddSizesRowsAndColumns) {
  const std::uint32_t seed = test_seed();
  SCOPED_TRACE(describe_seed(seed));
  const Extent3 extents[] = {{1, 1000, 1}, {1000, 1, 1},  {4097, 1, 1}, {1, 4097, 1},
                             {2, 999, 1},  {999, 2, 1},   {95, 97, 1},  {96, 31, 1},
                             {127, 3, 1},  {129, 130, 1}, {1025, 7, 1}, {4099, 1029, 1}};
  std::uint32_t image_seed = seed;
  for (const Extent3& extent : extents) {
    for (double density : {0.0, 0.3, 0.5, 0.7, 1.0}) {
      for (unsigned granularity : {1u, 3u}) {
        const Volume image = data::random_granular(extent, density, granularity, image_seed++);
        ASSERT_TRUE(matches_reference(image))
            << "density " << density << ", granularity " << granularity;
      }
    }
  }
}

// Each colour of a checkerboard touches itself only at corners: one component per pixel under
// 4-connectivity, one in all under 8 unless the image is a single row or column.
TEST_P(Labeling2d, Checkerboards) {
  const Extent3 extents[] = {{2, 2, 1},  {3, 3, 1},   {5, 6, 1},     {1, 9, 1},
                             {9, 1, 1},  {33, 17, 1}, {64, 64, 1},   {65, 63, 1},
                             {97, 5, 1}, {2, 33, 1},  {1000, 999, 1}};
  for (const Extent3& extent : extents) {
    const bool line = extent.x == 1 || extent.y == 1;
    Volume image = data::checkerboard(extent);
    for (const char* colour : {"even", "odd"}) {
      const auto pixels =
          static_cast<std::uint32_t>(std::count(image.voxels.begin(), image.voxels.end(), 1));
      const std::uint32_t expected = connectivity() == 4 || line ? pixels : 1;
      EXPECT_EQ(run_volccl(image, options()).result.component_count, expected)
          << colour << " checkerboard " << extent.to_string();
      ASSERT_TRUE(matches_reference(image)) << colour << " checkerboard";
      for (std::uint8_t& pixel : image.voxels) pixel ^= 1;
    }
  }
}

// Two pixels touching by an edge or only by a corner, in each of the four directions and at
// every position of images whose widths straddle a warp: one component when the connectivity
// counts that contact, two otherwise; and the same pairs one pixel apart, which stay apart.
TEST_P(Labeling2d, SingleContactsInAllFourDirections) {
  const int directions[4][2] = {{1, 0}, {0, 1}, {1, 1}, {-1, 1}};
  for (const int width : {5, 33, 66}) {
    const int height = 4;
    for (const auto& direction : directions) {
      for (int gap : {1, 2}) {
        for (int y = 0; y < height; ++y) {
          for (int x = 0; x < width; ++x) {
            const int x2 = x + gap * direction[0], y2 = y + gap * direction[1];
            if (x2 < 0 || y2 < 0 || x2 >= width || y2 >= height) continue;
            Volume image = empty_image(width, height);
            image.voxels[y * width + x] = image.voxels[y2 * width + x2] = 1;
            const VolcclRun run = run_volccl(image, options());
            const bool diagonal = direction[0] != 0 && direction[1] != 0;
            const bool touching = gap == 1 && (!diagonal || connectivity() == 8);
            ASSERT_EQ(run.result.component_count, touching ? 1u : 2u)
                << "pixels (" << x << "," << y << ") and (" << x2 << "," << y2 << ") of " << width
                << "x" << height;
            ASSERT_TRUE(matches_reference(image));
          }
        }
      }
    }
  }
}

TEST_P(Labeling2d, EveryPairOfPixelsInSixBySix) {
  for (std::uint64_t first = 0; first < 36; ++first) {
    for (std::uint64_t second = first + 1; second < 36; ++second) {
      Volume image = empty_image(6, 6);
      image.voxels[first] = image.voxels[second] = 1;
      ASSERT_TRUE(matches_reference(image)) << "pixels " << first << " and " << second;
    }
  }
}

TEST_P(Labeling2d, Spirals) {
  const Extent3 extents[] = {{64, 64, 1},  {33, 17, 1}, {1, 40, 1},     {40, 1, 1},
                             {7, 7, 1},    {2, 2, 1},   {255, 3, 1},    {3, 255, 1},
                             {100, 97, 1}, {65, 33, 1}, {1000, 999, 1}, {2048, 2048, 1}};
  for (const Extent3& extent : extents) {
    const Volume image = data::spiral(extent);
    const VolcclRun run = run_volccl(image, options());
    EXPECT_EQ(run.result.component_count, 1u) << extent.to_string();
    ASSERT_TRUE(matches_reference(image));
  }
}

// YACCLAB's granularity test (BUF/BKE paper Sec. 6.1.3) at its 2D size, 2048^2.
TEST_P(Labeling2d, RandomDensityTimesGranularity2048) {
  const std::uint32_t seed = test_seed();
  SCOPED_TRACE(describe_seed(seed));
  std::uint32_t image_seed = seed;
  for (int tenths = 0; tenths <= 10; ++tenths) {
    for (unsigned granularity : {1u, 4u, 16u}) {
      const Volume image =
          data::random_granular({2048, 2048, 1}, tenths / 10.0, granularity, image_seed++);
      ASSERT_TRUE(matches_reference(image))
          << "density " << tenths / 10.0 << ", granularity " << granularity;
    }
  }
}

TEST_P(Labeling2d, StepTimings) {
  const Volume image = data::random_granular({512, 512, 1}, 0.5, 1, 1);
  for (bool step_timings : {true, false}) {
    LabelOptions timed = options();
    timed.step_timings = step_timings;
    ASSERT_TRUE(timings_are_sane(run_volccl(image, timed).result, timed));
    ASSERT_TRUE(test::matches_reference(image, timed));
  }
}

std::vector<LabelingParameter> labeling_parameters() {
  std::vector<LabelingParameter> parameters;
  for (const auto& [algorithm, connectivity] : supported_pairs_2d()) {
    for (Backend backend : {Backend::cpu, Backend::cuda}) {
      parameters.emplace_back(algorithm, connectivity, backend);
    }
  }
  return parameters;
}

INSTANTIATE_TEST_SUITE_P(AllAlgorithms, Labeling2d, ::testing::ValuesIn(labeling_parameters()),
                         labeling_name);

// The CPU backend's result may not depend on how many threads share the work.
class CpuThreads2d : public ::testing::TestWithParam<std::pair<Algorithm, int>> {};

TEST_P(CpuThreads2d, OneAndThreeThreadsAgree) {
  const std::uint32_t seed = test_seed();
  SCOPED_TRACE(describe_seed(seed));
  const Volume images[] = {data::random_granular({1024, 1024, 1}, 0.5, 1, seed),
                           data::random_granular({999, 333, 1}, 0.6, 2, seed + 1),
                           data::spiral({513, 511, 1})};
  for (const Volume& image : images) {
    LabelOptions options;
    options.algorithm = GetParam().first;
    options.connectivity = GetParam().second;
    options.backend = Backend::cpu;
    options.cpu_threads = 1;
    const VolcclRun one_thread = run_volccl(image, options);
    options.cpu_threads = 3;
    const VolcclRun three_threads = run_volccl(image, options);
    EXPECT_EQ(one_thread.result.component_count, three_threads.result.component_count);
    ASSERT_TRUE(labels_equal(one_thread.labels, three_threads.labels, image.extent));
    ASSERT_TRUE(test::matches_reference(image, options));
  }
}

INSTANTIATE_TEST_SUITE_P(AllAlgorithms, CpuThreads2d, ::testing::ValuesIn(supported_pairs_2d()),
                         [](const ::testing::TestParamInfo<std::pair<Algorithm, int>>& info) {
                           return parameter_name(info.param.first, info.param.second);
                         });

// Algorithm::automatic picks RTS on the CPU and, on CUDA, HA4-64 at 4-connectivity and BKE-IC at
// 8, and says so.
TEST(AutomaticAlgorithm2d, RtsOnTheCpuHa4At4AndBkeIcAt8OnCuda) {
  const Volume image = data::random_granular({333, 77, 1}, 0.5, 1, 13);
  for (Backend backend : {Backend::cpu, Backend::cuda}) {
    if (backend == Backend::cuda && !cuda_available()) continue;
    for (int connectivity : {4, 8}) {
      LabelOptions options;
      options.connectivity = connectivity;
      options.backend = backend;
      const VolcclRun run = run_volccl(image, options);
      const Algorithm expected = backend == Backend::cpu ? Algorithm::rts
                                 : connectivity == 4     ? Algorithm::ha4_64
                                                         : Algorithm::bke_ic;
      EXPECT_EQ(run.result.algorithm_used, expected)
          << connectivity << "-connectivity on " << to_string(backend);
      ASSERT_TRUE(matches_reference(image, options));
    }
  }
}

// A one-slice volume labeled with 6 or 26 gets the labels of 4 and 8.
TEST(OneSliceVolumes, SixAndTwentySixLabelAsFourAndEight) {
  const Volume image = data::random_granular({301, 203, 1}, 0.5, 1, 17);
  for (const auto& [volume_connectivity, image_connectivity] :
       {std::pair{6, 4}, {18, 8}, {26, 8}}) {
    LabelOptions options;
    options.connectivity = volume_connectivity;
    options.backend = Backend::cpu;
    const VolcclRun volume_run = run_volccl(image, options);
    options.connectivity = image_connectivity;
    const VolcclRun image_run = run_volccl(image, options);
    EXPECT_EQ(volume_run.result.component_count, image_run.result.component_count);
    ASSERT_TRUE(labels_equal(image_run.labels, volume_run.labels, image.extent));
  }
}

}  // namespace
}  // namespace volccl::test
