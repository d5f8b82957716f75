// Every algorithm at every connectivity it supports (the block-based ones at 26, UF at 6, 18
// and 26, UFB at 6 and 18), on every backend, against the reference labeler at that connectivity,
// on volumes chosen to break labelers: tiny and odd extents, lines, diagonal-only contacts across
// block boundaries (where 6, 18 and 26 differ), checkerboards, long snakes and random volumes of
// every density and granularity.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "kernels3d/ruf_logic_3d.h"
#include "reference_labeler.h"
#include "test_support.h"
#include "volccl/data/generators.h"
#include "volccl/volccl.h"

namespace volccl::test {
namespace {

using data::Volume;

Volume empty_volume(Extent3 extent) {
  return Volume{extent, std::vector<std::uint8_t>(extent.voxel_count(), 0)};
}

void set_voxel(Volume& volume, std::uint64_t x, std::uint64_t y, std::uint64_t z) {
  volume.voxels[(z * volume.extent.y + y) * volume.extent.x + x] = 1;
}

struct Offset {
  int x, y, z;
};

// One of each pair of opposite 26-neighbour offsets.
std::vector<Offset> half_of_the_26_directions() {
  std::vector<Offset> directions;
  for (int dz = -1; dz <= 1; ++dz) {
    for (int dy = -1; dy <= 1; ++dy) {
      for (int dx = -1; dx <= 1; ++dx) {
        const bool positive = dz > 0 || (dz == 0 && dy > 0) || (dz == 0 && dy == 0 && dx > 0);
        if (positive) directions.push_back({dx, dy, dz});
      }
    }
  }
  return directions;
}

// Whether two voxels `offset` apart are neighbours under `connectivity`: their city-block
// distance is at most 1 (6), 2 (18) or 3 (26).
bool neighbours(const Offset& offset, int connectivity) {
  const int distance = std::abs(offset.x) + std::abs(offset.y) + std::abs(offset.z);
  return distance <= (connectivity == 6 ? 1 : connectivity == 18 ? 2 : 3);
}

class Labeling : public LabelingFixture {};

TEST_P(Labeling, EveryExtentUpToSevenAtSeveralDensities) {
  const std::uint32_t seed = test_seed();
  SCOPED_TRACE(describe_seed(seed));
  const std::uint64_t sizes[] = {1, 2, 3, 4, 5, 7};
  const double densities[] = {0.0, 0.2, 0.4, 0.5, 0.6, 0.8, 1.0};
  std::uint32_t volume_seed = seed;
  for (std::uint64_t z : sizes) {
    for (std::uint64_t y : sizes) {
      for (std::uint64_t x : sizes) {
        for (double density : densities) {
          for (unsigned granularity : {1u, 2u}) {
            const Volume volume =
                data::random_granular({x, y, z}, density, granularity, volume_seed++);
            ASSERT_TRUE(matches_reference(volume))
                << "density " << density << ", granularity " << granularity;
          }
        }
      }
    }
  }
}

TEST_P(Labeling, EmptyAndFullVolumes) {
  const Extent3 extents[] = {{1, 1, 1}, {2, 2, 2}, {33, 17, 9}, {255, 1, 3}, {64, 64, 64}};
  for (const Extent3& extent : extents) {
    for (std::uint8_t value : {0, 1}) {
      const Volume volume{extent, std::vector<std::uint8_t>(extent.voxel_count(), value)};
      const VolcclRun run = run_volccl(volume, options());
      EXPECT_EQ(run.result.component_count, value) << extent.to_string();
      EXPECT_EQ(run.result.algorithm_used, std::get<0>(GetParam()));
      ASSERT_TRUE(labels_equal(std::vector<std::uint32_t>(extent.voxel_count(), value), run.labels,
                               extent));
    }
  }
}

// Volumes deeper than a kernel's grid can cover in one launch (65535 layers): the labelers
// launch them in slabs, whose borders must not cut components.
TEST_P(Labeling, DeepVolumes) {
  const std::uint32_t seed = test_seed();
  SCOPED_TRACE(describe_seed(seed));
  const Extent3 extents[] = {{1, 1, 140001}, {2, 3, 140001}};
  std::uint32_t volume_seed = seed;
  for (const Extent3& extent : extents) {
    for (double density : {0.5, 1.0}) {
      ASSERT_TRUE(matches_reference(data::random_granular(extent, density, 1, volume_seed++)))
          << "density " << density;
    }
  }
}

TEST_P(Labeling, OddSizesAndLines) {
  const std::uint32_t seed = test_seed();
  SCOPED_TRACE(describe_seed(seed));
  const Extent3 extents[] = {{33, 17, 9}, {1, 1, 1},   {1, 1, 1000}, {1000, 1, 1}, {1, 1000, 1},
                             {1, 33, 17}, {17, 1, 33}, {33, 17, 1},  {2, 2, 999},  {129, 3, 2},
                             {65, 65, 3}, {3, 2, 129}, {2100, 3, 2}, {1025, 2, 3}};
  std::uint32_t volume_seed = seed;
  for (const Extent3& extent : extents) {
    for (double density : {0.0, 0.3, 0.5, 0.7, 1.0}) {
      for (unsigned granularity : {1u, 3u}) {
        const Volume volume = data::random_granular(extent, density, granularity, volume_seed++);
        ASSERT_TRUE(matches_reference(volume))
            << "density " << density << ", granularity " << granularity;
      }
    }
  }
}

// Each colour of a checkerboard touches itself only by edges and corners: one component under
// 18- and 26-connectivity when two sides are longer than 1 (a line's voxels stay apart), one
// component per voxel under 6-connectivity.
TEST_P(Labeling, Checkerboards) {
  const Extent3 extents[] = {{2, 2, 2}, {3, 3, 3}, {4, 4, 4},   {5, 6, 7},   {1, 8, 8},
                             {8, 8, 1}, {1, 1, 9}, {33, 17, 9}, {64, 64, 64}};
  for (const Extent3& extent : extents) {
    const bool line = (extent.x > 1) + (extent.y > 1) + (extent.z > 1) < 2;
    Volume volume = data::checkerboard(extent);
    for (const char* colour : {"even", "odd"}) {
      const auto voxels =
          static_cast<std::uint32_t>(std::count(volume.voxels.begin(), volume.voxels.end(), 1));
      const std::uint32_t expected = connectivity() == 6 || line ? voxels : 1;
      EXPECT_EQ(run_volccl(volume, options()).result.component_count, expected)
          << colour << " checkerboard " << extent.to_string();
      ASSERT_TRUE(matches_reference(volume)) << colour << " checkerboard";
      for (std::uint8_t& voxel : volume.voxels) voxel ^= 1;
    }
  }
}

// Two voxels touching only by a face, an edge or a corner, in each of the 13 directions and at
// every position in a 5x5x5 volume, so every parity relative to the 2x2x2 blocks and the
// volume's odd border is met: one component when the connectivity counts that contact, two
// otherwise (edges under 6, corners under 6 and 18). Then the same pairs one voxel apart,
// which must stay apart.
TEST_P(Labeling, SingleContactsInAllThirteenDirections) {
  const Extent3 extent{5, 5, 5};
  for (const Offset& direction : half_of_the_26_directions()) {
    for (int gap : {1, 2}) {
      for (int z = 0; z < 5; ++z) {
        for (int y = 0; y < 5; ++y) {
          for (int x = 0; x < 5; ++x) {
            const int x2 = x + gap * direction.x, y2 = y + gap * direction.y;
            const int z2 = z + gap * direction.z;
            if (x2 < 0 || y2 < 0 || z2 < 0 || x2 >= 5 || y2 >= 5 || z2 >= 5) continue;
            Volume volume = empty_volume(extent);
            set_voxel(volume, x, y, z);
            set_voxel(volume, x2, y2, z2);
            const VolcclRun run = run_volccl(volume, options());
            const bool touching = gap == 1 && neighbours(direction, connectivity());
            ASSERT_EQ(run.result.component_count, touching ? 1u : 2u)
                << "voxels (" << x << "," << y << "," << z << ") and (" << x2 << "," << y2 << ","
                << z2 << ")";
            ASSERT_TRUE(matches_reference(volume));
          }
        }
      }
    }
  }
}

TEST_P(Labeling, EveryPairOfVoxelsInFourCubed) {
  const Extent3 extent{4, 4, 4};
  for (std::uint64_t first = 0; first < extent.voxel_count(); ++first) {
    for (std::uint64_t second = first + 1; second < extent.voxel_count(); ++second) {
      Volume volume = empty_volume(extent);
      volume.voxels[first] = volume.voxels[second] = 1;
      ASSERT_TRUE(matches_reference(volume)) << "voxels " << first << " and " << second;
    }
  }
}

TEST_P(Labeling, HilbertCurvesAreOneComponent) {
  for (unsigned order = 1; order <= 6; ++order) {
    const Volume volume = data::hilbert(order, 128);
    const VolcclRun run = run_volccl(volume, options());
    EXPECT_EQ(run.result.component_count, 1u) << "order " << order;
    ASSERT_TRUE(matches_reference(volume)) << "order " << order;
  }
}

TEST_P(Labeling, Spirals) {
  const Extent3 extents[] = {{64, 64, 8}, {33, 17, 9}, {1, 40, 3},    {40, 1, 3},
                             {7, 7, 7},   {2, 2, 2},   {128, 128, 4}, {255, 3, 1}};
  for (const Extent3& extent : extents) {
    const Volume volume = data::spiral(extent);
    const VolcclRun run = run_volccl(volume, options());
    EXPECT_EQ(run.result.component_count, 1u) << extent.to_string();
    ASSERT_TRUE(matches_reference(volume));
  }
}

TEST_P(Labeling, Shells) {
  const std::tuple<Extent3, unsigned> cases[] = {{{64, 64, 64}, 2u}, {{31, 31, 31}, 2u},
                                                 {{33, 17, 9}, 1u},  {{65, 65, 65}, 4u},
                                                 {{40, 40, 40}, 0u}, {{96, 80, 64}, 3u}};
  for (const auto& [extent, gap] : cases) {
    ASSERT_TRUE(matches_reference(data::shells(extent, gap))) << "gap " << gap;
  }
}

// YACCLAB's granularity test (BUF/BKE paper Sec. 6.1.3) at 64^3.
TEST_P(Labeling, RandomDensityTimesGranularity) {
  const std::uint32_t seed = test_seed();
  SCOPED_TRACE(describe_seed(seed));
  std::uint32_t volume_seed = seed;
  for (int tenths = 0; tenths <= 10; ++tenths) {
    for (unsigned granularity : {1u, 2u, 4u, 8u, 16u}) {
      const Volume volume =
          data::random_granular({64, 64, 64}, tenths / 10.0, granularity, volume_seed++);
      ASSERT_TRUE(matches_reference(volume))
          << "density " << tenths / 10.0 << ", granularity " << granularity;
    }
  }
}

TEST_P(Labeling, LargeRandomVolume) {
  const std::uint32_t seed = test_seed();
  SCOPED_TRACE(describe_seed(seed));
  for (double density : {0.3, 0.6}) {
    const Volume volume = data::random_granular({256, 256, 64}, density, 1, seed);
    ASSERT_TRUE(matches_reference(volume)) << "density " << density;
  }
}

TEST_P(Labeling, StepTimings) {
  const Volume volume = data::random_granular({64, 64, 64}, 0.5, 1, 1);
  for (bool step_timings : {true, false}) {
    LabelOptions timed = options();
    timed.step_timings = step_timings;
    ASSERT_TRUE(timings_are_sane(run_volccl(volume, timed).result, timed));
    ASSERT_TRUE(test::matches_reference(volume, timed));
  }
}

std::vector<LabelingParameter> labeling_parameters() {
  std::vector<LabelingParameter> parameters;
  for (const auto& [algorithm, connectivity] : supported_pairs_3d()) {
    for (Backend backend : {Backend::cpu, Backend::cuda}) {
      parameters.emplace_back(algorithm, connectivity, backend);
    }
  }
  return parameters;
}

INSTANTIATE_TEST_SUITE_P(AllAlgorithms, Labeling, ::testing::ValuesIn(labeling_parameters()),
                         labeling_name);

// The CPU backend's result may not depend on how many threads share the work.
class CpuThreads : public ::testing::TestWithParam<std::pair<Algorithm, int>> {};

TEST_P(CpuThreads, OneAndThreeThreadsAgree) {
  const std::uint32_t seed = test_seed();
  SCOPED_TRACE(describe_seed(seed));
  const Volume volumes[] = {data::random_granular({64, 64, 64}, 0.3, 1, seed),
                            data::random_granular({97, 33, 45}, 0.5, 2, seed + 1),
                            data::random_granular({33, 17, 9}, 0.6, 1, seed + 2),
                            data::hilbert(5, 64), data::spiral({65, 63, 9})};
  for (const Volume& volume : volumes) {
    LabelOptions options;
    options.algorithm = GetParam().first;
    options.connectivity = GetParam().second;
    options.backend = Backend::cpu;
    options.cpu_threads = 1;
    const VolcclRun one_thread = run_volccl(volume, options);
    options.cpu_threads = 3;
    const VolcclRun three_threads = run_volccl(volume, options);
    EXPECT_EQ(one_thread.result.component_count, three_threads.result.component_count);
    ASSERT_TRUE(labels_equal(one_thread.labels, three_threads.labels, volume.extent));
    ASSERT_TRUE(test::matches_reference(volume, options));
  }
}

INSTANTIATE_TEST_SUITE_P(AllAlgorithms, CpuThreads, ::testing::ValuesIn(supported_pairs_3d()),
                         [](const ::testing::TestParamInfo<std::pair<Algorithm, int>>& info) {
                           return parameter_name(info.param.first, info.param.second);
                         });

TEST(AutomaticBackend, PicksCudaExactlyWhenAvailable) {
  const Volume volume = data::random_granular({33, 17, 9}, 0.5, 1, 7);
  LabelOptions options;
  options.backend = Backend::automatic;
  const VolcclRun run = run_volccl(volume, options);
  EXPECT_EQ(run.result.backend_used, cuda_available() ? Backend::cuda : Backend::cpu)
      << cuda_device_description();
  ASSERT_TRUE(matches_reference(volume, options));
}

// Label images of 64 MiB and more cross to and from the device through pinned chunks that host
// threads fill and empty a piece at a time (runtime/pinned_staging.cu). These extents just pass
// that size, with byte counts that no piece or chunk divides; statistics come back beside them.
TEST(WholeVolumeOnCuda, StagedCopiesOfSizesNoChunkDivides) {
  if (!cuda_available()) GTEST_SKIP() << cuda_device_description();
  const std::uint32_t seed = test_seed();
  SCOPED_TRACE(describe_seed(seed));
  struct Case {
    Extent3 extent;
    int connectivity;
  };
  std::uint32_t volume_seed = seed;
  for (const Case& c :
       {Case{{307, 263, 211}, 26}, Case{{307, 263, 211}, 6}, Case{{4099, 4097, 1}, 8}}) {
    const Volume volume = data::random_granular(c.extent, 0.4, 1, volume_seed++);
    const ReferenceLabels reference = reference_label(volume.voxels, c.extent, c.connectivity);
    LabelOptions options;
    options.backend = Backend::cuda;
    options.connectivity = c.connectivity;
    for (int repeat = 0; repeat < 3; ++repeat) {
      SCOPED_TRACE(c.extent.to_string() + " at " + std::to_string(c.connectivity) + ", run " +
                   std::to_string(repeat));
      std::vector<std::uint32_t> labels(c.extent.voxel_count(), kPoison);
      std::vector<ComponentMoments> statistics;
      const LabelResult result =
          label(volume.voxels.data(), c.extent, labels.data(), statistics, options);
      EXPECT_EQ(result.slab_count, 1u);
      ASSERT_EQ(result.component_count, reference.component_count);
      ASSERT_TRUE(labels_equal(reference.labels, labels, c.extent));
      ASSERT_TRUE(tables_equal(voxel_sums(reference.labels, c.extent, reference.component_count),
                               statistics));
    }
  }
}

// RUF's Merge on CUDA gives each word 1 to 8 threads, fewer as the words fill the device
// (kernels3d/ruf_3d.cu, merge_log2_parts); the labeling suites' volumes are small enough for 8
// on any GPU. These volumes, from 131 K to 1.6 M words, take every split on an H100 (1.08 M words
// fill it four times over) and on GPUs of up to half again its threads.
TEST(RufOnCuda, EveryMergeSplitFromEightThreadsAWordToOne) {
  if (!cuda_available()) GTEST_SKIP() << cuda_device_description();
  const std::uint32_t seed = test_seed();
  SCOPED_TRACE(describe_seed(seed));
  const Extent3 extents[] = {{256, 256, 64}, {512, 512, 48}, {1024, 512, 48}, {1024, 1024, 48}};
  std::uint32_t volume_seed = seed;
  for (const Extent3& extent : extents) {
    for (unsigned granularity : {1u, 4u}) {
      const Volume volume = data::random_granular(extent, 0.3, granularity, volume_seed++);
      for (int connectivity : {6, 18}) {
        LabelOptions options;
        options.algorithm = Algorithm::ruf;
        options.connectivity = connectivity;
        options.backend = Backend::cuda;
        ASSERT_TRUE(matches_reference(volume, options))
            << extent.to_string() << ", granularity " << granularity << ", " << connectivity;
      }
    }
  }
}

// RUF unites the runs of a tile of rows in Initialization and the tiles in Merge
// (kernels3d/ruf_logic_3d.h, RunTiling), the tile's shape set by the row's length: these widths
// take every shape from 16 x 16 rows (nx <= 32) to 4 x 2 (nx <= 1024) and one-row tiles beyond,
// with ny and nz that no tile divides, on both backends. The GPU takes such tiles where the volume
// has rows enough for every multiprocessor (kernels3d::tile_log2_rows), so the CUDA cases also
// label a volume of each width with rows enough on devices of up to 160 multiprocessors; its
// 37 x 21 rows take the GPU's smaller tiles.
TEST(RufTiles, EveryTileShapeWithPartialTiles) {
  const std::uint32_t seed = test_seed();
  SCOPED_TRACE(describe_seed(seed));
  std::uint32_t volume_seed = seed;
  for (std::uint32_t nx : {20u, 50u, 100u, 200u, 300u, 700u, 1000u, 1100u}) {
    const std::uint32_t block_rows =
        1u << kernels3d::block_log2_rows(kernels3d::make_run_grid({nx, 1, 1}));
    const auto side = static_cast<std::uint32_t>(std::ceil(std::sqrt(160.0 * block_rows))) | 1u;
    std::vector<Extent3> extents{{nx, 37, 21}};
    if (cuda_available() && nx <= 1024) extents.push_back({nx, side, side});
    for (const Extent3 extent : extents) {
      const bool many_rows = extent.y != 37;
      for (unsigned granularity : {1u, 2u}) {
        const Volume volume = data::random_granular(extent, 0.4, granularity, volume_seed++);
        for (Backend backend : {Backend::cpu, Backend::cuda}) {
          if (backend == Backend::cuda && !cuda_available()) continue;
          if (many_rows && backend == Backend::cpu) continue;
          for (int connectivity : {6, 18}) {
            LabelOptions options;
            options.algorithm = Algorithm::ruf;
            options.connectivity = connectivity;
            options.backend = backend;
            ASSERT_TRUE(matches_reference(volume, options))
                << extent.to_string() << ", granularity " << granularity << ", " << connectivity
                << ", " << to_string(backend);
          }
        }
      }
    }
  }
}

// Algorithm::automatic, the default, picks RTS on the CPU and, on CUDA, BUF for 26-connectivity,
// RUF for 6 and UFB for 18, and says so in algorithm_used.
TEST(AutomaticAlgorithm, RtsOnTheCpuBufRufOrUfbOnCuda) {
  EXPECT_EQ(LabelOptions{}.algorithm, Algorithm::automatic);
  const Volume volume = data::random_granular({33, 17, 9}, 0.5, 1, 11);
  for (Backend backend : {Backend::cpu, Backend::cuda}) {
    if (backend == Backend::cuda && !cuda_available()) continue;
    for (int connectivity : {6, 18, 26}) {
      LabelOptions options;
      options.connectivity = connectivity;
      options.backend = backend;
      const VolcclRun run = run_volccl(volume, options);
      const Algorithm expected = backend == Backend::cpu ? Algorithm::rts
                                 : connectivity == 26    ? Algorithm::buf
                                 : connectivity == 6     ? Algorithm::ruf
                                                         : Algorithm::ufb;
      EXPECT_EQ(run.result.algorithm_used, expected)
          << connectivity << "-connectivity on " << to_string(backend);
      ASSERT_TRUE(matches_reference(volume, options));
    }
  }
}

}  // namespace
}  // namespace volccl::test
