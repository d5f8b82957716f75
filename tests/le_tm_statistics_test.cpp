// The statistics strategies of LE and TM, whose union-find nodes are pixels (LE/TM paper
// Sec. III): Early (a record per pixel, merged into the roots, gathered in label order) and
// Fused give the bits of Late and of the CPU's measure() of the same labels, at 4 and 8, on the
// CPU and the GPU, on empty, full, one-pixel-wide and odd images, checkerboards, random
// density x granularity and the Ridge families; the labels stay the reference labeler's and
// the iteration count does not depend on the strategy. Early's records are refused with
// OutOfDeviceMemory when they do not fit the GPU.
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "reference_labeler.h"
#include "test_support.h"
#include "volccl/cuda.h"
#include "volccl/data/generators.h"
#include "volccl/data/ridge.h"
#include "volccl/statistics.h"
#include "volccl/volccl.h"

#if defined(VOLCCL_HAS_CUDA)
#include <cuda_runtime.h>
#endif

namespace volccl::test {
namespace {

using data::Volume;

constexpr StatisticsStrategy kStrategies[] = {StatisticsStrategy::late, StatisticsStrategy::early,
                                              StatisticsStrategy::fused};

// Rows a labeler must replace: a stale table left in the output.
std::vector<ComponentMoments> stale_rows() {
  ComponentMoments stale;
  stale.count = 0xDEADBEEF;
  stale.sum[0] = 7;
  return std::vector<ComponentMoments>(5, stale);
}

class LeTmStatistics : public LabelingFixture {
 protected:
  // Labels `image` with every strategy into poisoned outputs: the labels and the count are the
  // reference labeler's, Late's table is measure() of those labels, and Early's and Fused's are
  // Late's, bit for bit; the iteration count is the same for all three.
  ::testing::AssertionResult strategies_agree(const Volume& image) const {
    const ReferenceLabels reference = reference_label(image.voxels, image.extent, connectivity());
    const std::vector<ComponentMoments> measured = measure(
        reference.labels.data(), image.extent, reference.component_count, /*cpu_threads=*/2);
    std::uint32_t late_iterations = 0;
    for (StatisticsStrategy strategy : kStrategies) {
      LabelOptions with = options();
      with.statistics_strategy = strategy;
      std::vector<std::uint32_t> labels(image.extent.voxel_count(), kPoison);
      std::vector<ComponentMoments> moments = stale_rows();
      const LabelResult result =
          label(image.voxels.data(), image.extent, labels.data(), moments, with);
      const std::string where = to_string(strategy) + " on " + image.extent.to_string();
      if (result.component_count != reference.component_count) {
        return ::testing::AssertionFailure()
               << where << ": " << result.component_count << " components, expected "
               << reference.component_count;
      }
      if (auto same = labels_equal(reference.labels, labels, image.extent); !same) {
        return same << " (" << where << ")";
      }
      if (auto same = tables_equal(measured, moments); !same) return same << " (" << where << ")";
      if (strategy == StatisticsStrategy::late) late_iterations = result.iterations;
      if (result.iterations != late_iterations) {
        return ::testing::AssertionFailure() << where << ": " << result.iterations
                                             << " iterations, Late took " << late_iterations;
      }
      if (!(result.timings.statistics_ms >= 0 && result.timings.total_ms > 0)) {
        return ::testing::AssertionFailure() << where << ": " << result.timings.to_string();
      }
    }
    return ::testing::AssertionSuccess();
  }
};

Volume filled(Extent3 extent, std::uint8_t value) {
  return Volume{extent, std::vector<std::uint8_t>(extent.voxel_count(), value)};
}

TEST_P(LeTmStatistics, EmptyFullAndOnePixelWide) {
  for (const Extent3& extent : {Extent3{1, 1, 1}, Extent3{37, 23, 1}, Extent3{1, 517, 1},
                                Extent3{517, 1, 1}, Extent3{64, 32, 1}}) {
    for (std::uint8_t value : {0, 1}) {
      ASSERT_TRUE(strategies_agree(filled(extent, value))) << int{value};
    }
  }
}

// Sides around TM's 32 x 16 tiles and LE's 32 x 4 thread blocks, odd and one pixel wide.
TEST_P(LeTmStatistics, OddSizes) {
  const std::uint32_t seed = test_seed();
  SCOPED_TRACE(describe_seed(seed));
  std::uint32_t image_seed = seed;
  for (const Extent3& extent : {Extent3{1, 33, 1}, Extent3{33, 1, 1}, Extent3{3, 5, 1},
                                Extent3{31, 15, 1}, Extent3{33, 17, 1}, Extent3{65, 63, 1},
                                Extent3{97, 49, 1}, Extent3{1000, 7, 1}, Extent3{7, 1000, 1}}) {
    for (double density : {0.3, 0.6, 0.9}) {
      ASSERT_TRUE(strategies_agree(data::random_granular(extent, density, 1, image_seed++)))
          << "density " << density;
    }
  }
}

// One component per pixel at 4, one component at 8.
TEST_P(LeTmStatistics, Checkerboards) {
  for (const Extent3& extent :
       {Extent3{1, 9, 1}, Extent3{31, 17, 1}, Extent3{64, 64, 1}, Extent3{129, 67, 1}}) {
    ASSERT_TRUE(strategies_agree(data::checkerboard(extent)));
  }
}

// YACCLAB's random images (density x granularity), with a fresh seed each run.
TEST_P(LeTmStatistics, RandomDensityByGranularity) {
  const std::uint32_t seed = test_seed();
  SCOPED_TRACE(describe_seed(seed));
  std::uint32_t image_seed = seed;
  for (double density : {0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0}) {
    for (unsigned granularity : {1u, 4u, 16u}) {
      ASSERT_TRUE(strategies_agree(
          data::random_granular({509, 257, 1}, density, granularity, image_seed++)))
          << "density " << density << ", granularity " << granularity;
    }
  }
}

// Every member of the six Ridge families (Sec. IV-C): long crests that take LE many iterations,
// and single components spread over many of TM's tiles.
TEST_P(LeTmStatistics, RidgeFamilies) {
  for (data::RidgeFamily family :
       {data::RidgeFamily::leveling, data::RidgeFamily::scaling, data::RidgeFamily::subdivision,
        data::RidgeFamily::random_instancing, data::RidgeFamily::random_merging,
        data::RidgeFamily::spiral}) {
    data::RidgeFamilyParameters parameters;
    parameters.family = family;
    parameters.level = 3;
    parameters.subdivisions = 3;
    parameters.steps = 4;
    parameters.seed = test_seed();
    SCOPED_TRACE(describe_seed(parameters.seed));
    const std::uint64_t side = 256;
    for (std::size_t member = 0; member < data::ridge_family_size(parameters, side); ++member) {
      ASSERT_TRUE(strategies_agree(data::ridge_family_member(parameters, member, side)))
          << data::to_string(family) << " member " << member;
    }
  }
}

// Images taller than a launch's 65535 rows of thread blocks: the GPU's per-pixel steps, the
// gathering ones included, run in slabs.
TEST_P(LeTmStatistics, TallImagesLaunchedInSlabs) {
  ASSERT_TRUE(strategies_agree(data::random_granular({3, 270001, 1}, 0.5, 1, test_seed())));
}

std::vector<LabelingParameter> le_tm_parameters() {
  std::vector<LabelingParameter> parameters;
  for (Algorithm algorithm : {Algorithm::le, Algorithm::tm}) {
    for (int connectivity : {4, 8}) {
      for (Backend backend : {Backend::cpu, Backend::cuda}) {
        parameters.emplace_back(algorithm, connectivity, backend);
      }
    }
  }
  return parameters;
}

INSTANTIATE_TEST_SUITE_P(PixelLabelers, LeTmStatistics, ::testing::ValuesIn(le_tm_parameters()),
                         labeling_name);

TEST(LeTmStatisticsStrategies, ExistForLeAndTm) {
  for (Algorithm algorithm : {Algorithm::le, Algorithm::tm}) {
    for (StatisticsStrategy strategy : kStrategies) {
      EXPECT_TRUE(supports(strategy, algorithm))
          << to_string(algorithm) << " " << to_string(strategy);
    }
  }
  EXPECT_FALSE(supports(StatisticsStrategy::early, Algorithm::ha4));
  EXPECT_FALSE(supports(StatisticsStrategy::fused, Algorithm::uf));
}

#if defined(VOLCCL_HAS_CUDA)
// A 65536 x 32767 image: 2^31 - 2^16 pixels, whose Early records would take 256 GiB, more than
// any GPU holds. The mask and labels (10 GiB) are allocated by the test; the labeling refuses
// before its first step, naming the bytes.
TEST(LeTmDeviceStatistics, EarlyRefusedWhenThePixelRecordsDoNotFit) {
  if (!cuda_available()) GTEST_SKIP() << cuda_device_description();
  const Extent3 extent{65536, 32767, 1};
  const std::uint64_t pixels = extent.voxel_count();
  std::uint8_t* mask = nullptr;
  std::uint32_t* labels = nullptr;
  if (cudaMalloc(&mask, pixels) != cudaSuccess ||
      cudaMalloc(&labels, pixels * sizeof(std::uint32_t)) != cudaSuccess) {
    cudaFree(mask);
    cudaGetLastError();
    GTEST_SKIP() << "the GPU has no room for the test's 10 GiB mask and labels";
  }
  ASSERT_EQ(cudaMemset(mask, 1, pixels), cudaSuccess);
  for (Algorithm algorithm : {Algorithm::le, Algorithm::tm}) {
    LabelOptions options;
    options.algorithm = algorithm;
    options.connectivity = 8;
    options.statistics_strategy = StatisticsStrategy::early;
    cuda::DeviceMoments table;
    try {
      cuda::label(mask, extent, labels, table, options);
      ADD_FAILURE() << to_string(algorithm) << ": Early was not refused";
    } catch (const OutOfDeviceMemory& error) {
      EXPECT_EQ(error.bytes_needed(), pixels * sizeof(ComponentMoments)) << error.what();
      EXPECT_NE(std::string(error.what()).find("Early"), std::string::npos) << error.what();
    }
  }
  cudaFree(mask);
  cudaFree(labels);
}
#endif

}  // namespace
}  // namespace volccl::test
