// Component statistics: every algorithm, connectivity, backend and statistics strategy against
// an independent reference (the voxel-by-voxel sums of the reference labeler's labels), the
// same bits run to run and CPU to GPU, measure() on existing label images, the errors, and the
// derived values of describe() against a direct double computation; and the first voxels of
// labels on the device, which volccl.dask keys the pieces of its chunks by.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "reference_labeler.h"
#include "test_support.h"
#include "volccl/cuda.h"
#include "volccl/data/generators.h"
#include "volccl/statistics.h"
#include "volccl/volccl.h"

namespace volccl::test {
namespace {

using data::Volume;

std::vector<StatisticsStrategy> strategies_of(Algorithm algorithm) {
  std::vector<StatisticsStrategy> strategies;
  for (StatisticsStrategy strategy :
       {StatisticsStrategy::late, StatisticsStrategy::fused, StatisticsStrategy::early}) {
    if (supports(strategy, algorithm)) strategies.push_back(strategy);
  }
  return strategies;
}

class Statistics : public LabelingFixture {
 protected:
  // Labels `volume` with statistics by every strategy of the algorithm: labels equal the
  // reference labeler's, the moments equal the voxel sums, and on the GPU equal the CPU's
  // measure() of the same labels bit for bit.
  ::testing::AssertionResult measures_exactly(const Volume& volume) const {
    const ReferenceLabels reference = reference_label(volume.voxels, volume.extent, connectivity());
    const std::vector<ComponentMoments> expected =
        voxel_sums(reference.labels, volume.extent, reference.component_count);
    for (StatisticsStrategy strategy : strategies_of(std::get<0>(GetParam()))) {
      LabelOptions with = options();
      with.statistics_strategy = strategy;
      std::vector<std::uint32_t> labels(volume.extent.voxel_count(), kPoison);
      std::vector<ComponentMoments> moments(3);  // replaced
      const LabelResult result =
          label(volume.voxels.data(), volume.extent, labels.data(), moments, with);
      const std::string where = to_string(strategy) + " on " + volume.extent.to_string();
      if (result.component_count != reference.component_count) {
        return ::testing::AssertionFailure()
               << where << ": " << result.component_count << " components, expected "
               << reference.component_count;
      }
      if (auto same = labels_equal(reference.labels, labels, volume.extent); !same) {
        return same << " (" << where << ")";
      }
      if (auto same = tables_equal(expected, moments); !same) return same << " (" << where << ")";
      if (!(result.timings.statistics_ms >= 0 && result.timings.total_ms > 0)) {
        return ::testing::AssertionFailure() << where << ": " << result.timings.to_string();
      }
    }
    return ::testing::AssertionSuccess();
  }
};

TEST_P(Statistics, SmallOddExtentsAtSeveralDensities) {
  const std::uint32_t seed = test_seed();
  SCOPED_TRACE(describe_seed(seed));
  const bool image = is_2d_connectivity(connectivity());
  const std::vector<Extent3> extents =
      image ? std::vector<Extent3>{{1, 1, 1},   {1, 9, 1},   {9, 1, 1},  {5, 3, 1},
                                   {33, 31, 1}, {65, 63, 1}, {100, 7, 1}}
            : std::vector<Extent3>{{1, 1, 1},   {1, 1, 9},    {9, 1, 1}, {5, 3, 2},
                                   {33, 17, 9}, {31, 33, 35}, {65, 9, 3}};
  std::uint32_t volume_seed = seed;
  for (const Extent3& extent : extents) {
    for (double density : {0.0, 0.1, 0.3, 0.6, 1.0}) {
      for (unsigned granularity : {1u, 3u}) {
        ASSERT_TRUE(
            measures_exactly(data::random_granular(extent, density, granularity, volume_seed++)))
            << "density " << density << ", granularity " << granularity;
      }
    }
  }
}

// Many of the GPU Late pass's regions (64 x 16 x 8 voxels, 64 x 128 pixels) and components
// across their faces; rows of an odd width (loaded voxel by voxel) and of a multiple of 8 (in
// 16-byte loads, the mask's zeros skipping labels) that is no multiple of the region's. At 5 %
// the components outnumber the regions and the pass writes the table unwritten, rows claimed by
// their first piece; at granularity 8 and 60 % they do not, and it adds into a cleared table.
TEST_P(Statistics, LargerRandomVolumes) {
  const std::uint32_t seed = test_seed();
  SCOPED_TRACE(describe_seed(seed));
  const std::vector<Extent3> extents = is_2d_connectivity(connectivity())
                                           ? std::vector<Extent3>{{1031, 517, 1}, {1032, 300, 1}}
                                           : std::vector<Extent3>{{97, 66, 71}, {136, 40, 27}};
  std::uint32_t volume_seed = seed;
  for (const Extent3& extent : extents) {
    for (double density : {0.05, 0.3, 0.6}) {
      for (unsigned granularity : {1u, 8u}) {
        ASSERT_TRUE(
            measures_exactly(data::random_granular(extent, density, granularity, volume_seed++)))
            << extent.to_string() << ", density " << density << ", granularity " << granularity;
      }
    }
  }
}

TEST_P(Statistics, CheckerboardsSpiralsHilbertAndShells) {
  if (is_2d_connectivity(connectivity())) {
    for (const Extent3& extent : {Extent3{31, 17, 1}, Extent3{64, 64, 1}}) {
      ASSERT_TRUE(measures_exactly(data::checkerboard(extent)));
      ASSERT_TRUE(measures_exactly(data::spiral(extent)));
    }
    return;
  }
  ASSERT_TRUE(measures_exactly(data::checkerboard({17, 9, 5})));
  ASSERT_TRUE(measures_exactly(data::spiral({33, 31, 5})));
  ASSERT_TRUE(measures_exactly(data::hilbert(4, 64)));
  ASSERT_TRUE(measures_exactly(data::shells({37, 35, 33}, 2)));
}

// The moments are integers: a second run, and the CPU's measure() of the GPU's labels, give
// the same bits.
TEST_P(Statistics, SameBitsRunToRunAndBackendToBackend) {
  const Volume volume = is_2d_connectivity(connectivity())
                            ? data::random_granular({2048, 1025, 1}, 0.4, 1, test_seed())
                            : data::random_granular({129, 128, 127}, 0.3, 1, test_seed());
  std::vector<std::uint32_t> labels(volume.extent.voxel_count(), kPoison);
  std::vector<ComponentMoments> first, second;
  const LabelResult result =
      label(volume.voxels.data(), volume.extent, labels.data(), first, options());
  label(volume.voxels.data(), volume.extent, labels.data(), second, options());
  ASSERT_TRUE(tables_equal(first, second));
  ASSERT_TRUE(
      tables_equal(measure(labels.data(), volume.extent, result.component_count, 3), first));
  ASSERT_TRUE(
      tables_equal(measure(labels.data(), volume.extent, result.component_count, 1), first));
}

std::vector<LabelingParameter> statistics_parameters() {
  std::vector<LabelingParameter> parameters;
  for (auto pairs : {supported_pairs_3d(), supported_pairs_2d()}) {
    for (const auto& [algorithm, connectivity] : pairs) {
      for (Backend backend : {Backend::cpu, Backend::cuda}) {
        parameters.emplace_back(algorithm, connectivity, backend);
      }
    }
  }
  return parameters;
}

INSTANTIATE_TEST_SUITE_P(AllAlgorithms, Statistics, ::testing::ValuesIn(statistics_parameters()),
                         labeling_name);

// --- measure() on label images that did not come from volccl -------------------------------

// Labels in no particular order, some absent: what a label image from elsewhere may hold.
std::vector<std::uint32_t> arbitrary_labels(Extent3 extent, std::uint32_t seed) {
  std::mt19937 bits(seed);
  std::vector<std::uint32_t> labels(extent.voxel_count());
  for (auto& label : labels) label = bits() % 3 == 0 ? 0 : 1 + bits() % 40;
  return labels;
}

TEST(Measure, ArbitraryLabelImages) {
  const Extent3 extent{37, 23, 11};
  const std::vector<std::uint32_t> labels = arbitrary_labels(extent, test_seed());
  const std::vector<ComponentMoments> expected = voxel_sums(labels, extent, 45);
  ASSERT_TRUE(tables_equal(expected, measure(labels.data(), extent, 45, 4)));
  ASSERT_EQ(measure(labels.data(), extent, 45)[44].count, 0u);  // an absent label
}

TEST(Measure, LabelAboveTheCountIsRefused) {
  const Extent3 extent{4, 3, 2};
  std::vector<std::uint32_t> labels(extent.voxel_count(), 0);
  labels[17] = 6;
  EXPECT_THROW(measure(labels.data(), extent, 5), InvalidArgument);
  EXPECT_EQ(measure(labels.data(), extent, 6)[5].count, 1u);
}

TEST(Measure, SumsThatCouldOverflowAreRefused) {
  EXPECT_THROW(validate_statistics({65537, 65536, 1}), InvalidArgument);
  EXPECT_NO_THROW(validate_statistics({4096, 4096, 256}));
  EXPECT_NO_THROW(validate_statistics({65536, 65535, 1}));
  EXPECT_THROW(measure(nullptr, {4, 4, 4}, 0), InvalidArgument);
}

TEST(Measure, StrategiesOnlyWhereTheyExist) {
  const Volume volume = data::random_granular({16, 16, 16}, 0.5, 1, 7);
  std::vector<std::uint32_t> labels(volume.extent.voxel_count());
  std::vector<ComponentMoments> moments;
  LabelOptions options;
  options.backend = Backend::cpu;
  options.algorithm = Algorithm::uf;
  options.connectivity = 6;
  options.statistics_strategy = StatisticsStrategy::fused;
  EXPECT_THROW(label(volume.voxels.data(), volume.extent, labels.data(), moments, options),
               InvalidArgument);
  options.statistics_strategy = StatisticsStrategy::early;
  EXPECT_THROW(label(volume.voxels.data(), volume.extent, labels.data(), moments, options),
               InvalidArgument);
  options.algorithm = Algorithm::buf;
  options.connectivity = 26;
  EXPECT_NO_THROW(label(volume.voxels.data(), volume.extent, labels.data(), moments, options));
  EXPECT_EQ(parse_statistics_strategy("fused"), StatisticsStrategy::fused);
  EXPECT_THROW(parse_statistics_strategy("eager"), InvalidArgument);
}

#if defined(VOLCCL_HAS_CUDA)
TEST(DeviceStatistics, MeasureArbitraryLabelImages) {
  if (!cuda_available()) GTEST_SKIP() << cuda_device_description();
  const Extent3 extent{37, 23, 11};
  const std::vector<std::uint32_t> labels = arbitrary_labels(extent, test_seed());
  const DeviceArray<std::uint32_t> device_labels(labels);
  ASSERT_TRUE(tables_equal(voxel_sums(labels, extent, 45),
                           cuda::measure(device_labels.data(), extent, 45).to_host()));
  EXPECT_THROW(cuda::measure(device_labels.data(), extent, 39), InvalidArgument);
}

// A label in pieces far apart, each inside one of the Late pass's regions (64 x 16 x 8) and off
// its faces: every piece adds to the row, none replaces it.
TEST(DeviceStatistics, MeasureLabelsInPiecesAcrossRegions) {
  if (!cuda_available()) GTEST_SKIP() << cuda_device_description();
  const Extent3 extent{200, 40, 20};
  std::vector<std::uint32_t> labels(extent.voxel_count(), 0);
  const auto at = [&](std::uint64_t x, std::uint64_t y, std::uint64_t z) -> std::uint32_t& {
    return labels[(z * extent.y + y) * extent.x + x];
  };
  at(10, 5, 3) = at(11, 5, 3) = 1;
  at(130, 5, 3) = 1;
  at(70, 25, 12) = 1;
  at(30, 20, 10) = 2;
  const DeviceArray<std::uint32_t> device_labels(labels);
  ASSERT_TRUE(tables_equal(voxel_sums(labels, extent, 2),
                           cuda::measure(device_labels.data(), extent, 2).to_host()));
}

// volccl::cuda::label and cuda::measure with the labels and the table left on the device.
TEST(DeviceStatistics, TablesStayOnTheDeviceAndMatchTheHost) {
  if (!cuda_available()) GTEST_SKIP() << cuda_device_description();
  const Volume volume = data::random_granular({130, 67, 33}, 0.35, 2, test_seed());
  const ReferenceLabels reference = reference_label(volume.voxels, volume.extent, 26);
  const std::vector<ComponentMoments> expected =
      voxel_sums(reference.labels, volume.extent, reference.component_count);
  const DeviceArray<std::uint8_t> device_mask(volume.voxels);
  const DeviceArray<std::uint32_t> device_labels(
      std::vector<std::uint32_t>(volume.extent.voxel_count(), kPoison));
  for (StatisticsStrategy strategy :
       {StatisticsStrategy::late, StatisticsStrategy::fused, StatisticsStrategy::early}) {
    LabelOptions options;
    options.statistics_strategy = strategy;
    cuda::DeviceMoments table;
    const LabelResult result =
        cuda::label(device_mask.data(), volume.extent, device_labels.data(), table, options);
    ASSERT_EQ(result.component_count, reference.component_count);
    ASSERT_EQ(table.size(), reference.component_count);
    ASSERT_TRUE(tables_equal(expected, table.to_host())) << to_string(strategy);
    ASSERT_TRUE(tables_equal(
        expected,
        cuda::measure(device_labels.data(), volume.extent, result.component_count).to_host()));
  }
}

// cuda::first_voxels against a scan of the reference labeler's labels: odd extents, 1-voxel
// extents, rows shorter and longer than a warp, an image, an empty volume and a full one; then
// labels not numbered in raster order, and a label above the count.
TEST(DeviceFirstVoxels, MatchAScanOfTheReferenceLabels) {
  if (!cuda_available()) GTEST_SKIP() << cuda_device_description();
  std::uint32_t seed = test_seed();
  const std::vector<std::pair<Volume, int>> volumes = {
      {data::random_granular({130, 67, 33}, 0.35, 2, seed++), 26},
      {data::random_granular({131, 67, 33}, 0.3, 1, seed++), 6},
      {data::random_granular({1, 97, 45}, 0.5, 1, seed++), 6},
      {data::random_granular({77, 1, 1}, 0.5, 1, seed++), 26},
      {data::random_granular({1000, 700, 1}, 0.4, 3, seed++), 8},
      {data::random_granular({33, 31, 29}, 0.0, 1, seed++), 26},
      {data::random_granular({33, 31, 29}, 1.0, 1, seed++), 6},
      {data::checkerboard({65, 20, 9}), 6}};
  for (const auto& [volume, connectivity] : volumes) {
    const ReferenceLabels reference = reference_label(volume.voxels, volume.extent, connectivity);
    std::vector<std::int64_t> expected;
    for (std::size_t i = 0; i < reference.labels.size(); ++i) {
      if (reference.labels[i] > expected.size()) expected.push_back(static_cast<std::int64_t>(i));
    }
    ASSERT_EQ(expected.size(), reference.component_count);
    const DeviceArray<std::uint32_t> device_labels(reference.labels);
    std::vector<std::int64_t> first(reference.component_count, -1);
    cuda::first_voxels(device_labels.data(), volume.extent, reference.component_count,
                       first.data());
    ASSERT_EQ(first, expected) << volume.extent.to_string() << " at " << connectivity;
  }
  const Extent3 extent{3, 1, 1};
  std::vector<std::int64_t> first(2);
  const DeviceArray<std::uint32_t> swapped(std::vector<std::uint32_t>{2, 0, 1});
  EXPECT_THROW(cuda::first_voxels(swapped.data(), extent, 2, first.data()), InvalidArgument);
  const DeviceArray<std::uint32_t> missing(std::vector<std::uint32_t>{1, 0, 1});
  EXPECT_THROW(cuda::first_voxels(missing.data(), extent, 2, first.data()), InvalidArgument);
  const DeviceArray<std::uint32_t> above(std::vector<std::uint32_t>{1, 2, 3});
  EXPECT_THROW(cuda::first_voxels(above.data(), extent, 2, first.data()), InvalidArgument);
}

// The kernels access the caller's buffers in words of up to 16 bytes: cuda::label and
// cuda::measure refuse pointers that are not 16-byte aligned, before any launch, and then work
// on the aligned ones.
TEST(DeviceStatistics, MisalignedDevicePointersAreRefused) {
  if (!cuda_available()) GTEST_SKIP() << cuda_device_description();
  const Extent3 extent{4, 2, 2};
  const DeviceArray<std::uint8_t> device_mask(std::vector<std::uint8_t>(16 + 16, 1));
  const DeviceArray<std::uint32_t> device_labels(std::vector<std::uint32_t>(16 + 4, kPoison));
  cuda::DeviceMoments table;
  EXPECT_THROW(cuda::label(device_mask.data() + 8, extent, device_labels.data()), InvalidArgument);
  EXPECT_THROW(cuda::label(device_mask.data(), extent, device_labels.data() + 2), InvalidArgument);
  EXPECT_THROW(cuda::label(device_mask.data() + 1, extent, device_labels.data(), table),
               InvalidArgument);
  EXPECT_THROW(cuda::measure(device_labels.data() + 1, extent, 1), InvalidArgument);
  EXPECT_EQ(cuda::label(device_mask.data() + 16, extent, device_labels.data() + 4).component_count,
            1u);
  EXPECT_EQ(cuda::measure(device_labels.data() + 4, extent, 1).to_host().at(0).count, 16u);
}

// RUF measures from its runs. On volumes up to 2^25 voxels the pass is enqueued before the count
// is known (the Statistics tests above); on larger ones RUF waits for the count first: rows
// claimed by their first piece at 5 % (more components than the pass's regions), a cleared
// table at 60 %, granularity 8. The moments are checked against the voxel sums of the labels,
// which the Statistics tests check against the reference labeler.
TEST(DeviceStatistics, RufRunsOfVolumesAboveTwoToThe25Voxels) {
  if (!cuda_available()) GTEST_SKIP() << cuda_device_description();
  const std::uint32_t seed = test_seed();
  SCOPED_TRACE(describe_seed(seed));
  const Extent3 extent{330, 322, 316};  // 33.6 M voxels, odd sizes
  ASSERT_GT(extent.voxel_count(), std::uint64_t{1} << 25);
  std::uint32_t volume_seed = seed;
  for (const auto& [density, granularity] : {std::pair{0.05, 1u}, std::pair{0.6, 8u}}) {
    const Volume volume = data::random_granular(extent, density, granularity, volume_seed++);
    for (int connectivity : {6, 18}) {
      LabelOptions options;
      options.algorithm = Algorithm::ruf;
      options.backend = Backend::cuda;
      options.connectivity = connectivity;
      std::vector<std::uint32_t> labels(extent.voxel_count(), kPoison);
      std::vector<ComponentMoments> moments(3);  // replaced
      const LabelResult result =
          label(volume.voxels.data(), extent, labels.data(), moments, options);
      ASSERT_EQ(*std::max_element(labels.begin(), labels.end()), result.component_count);
      ASSERT_TRUE(tables_equal(voxel_sums(labels, extent, result.component_count), moments))
          << "density " << density << ", connectivity " << connectivity;
    }
  }
}

// BUF and BKE above 2^25 voxels: the host waits for the count before FinalLabeling; at 5 %,
// granularity 1 (a component per ~43 voxels) the rows come from the forest
// (kernels3d/forest_statistics_3d.cu), with far blocks added by atomics in FinalLabeling; the
// same noise crossed by lines along x every 37 rows and 11 slices gives warps of many far blocks
// of one component, summed before they are added, and held by the warp from one line to the next
// of another component; around a ball of radius 110, a component held by the warps across their
// layers; at 60 %, granularity 8, the rows come from the Late pass after FinalLabeling. Odd sizes
// everywhere, so blocks are cut on every far face and the far corner's block is one voxel.
TEST(DeviceStatistics, BlockForestOfVolumesAboveTwoToThe25Voxels) {
  if (!cuda_available()) GTEST_SKIP() << cuda_device_description();
  const std::uint32_t seed = test_seed();
  SCOPED_TRACE(describe_seed(seed));
  const Extent3 extent{331, 323, 317};  // 33.9 M voxels
  ASSERT_GT(extent.voxel_count(), std::uint64_t{1} << 25);
  std::uint32_t volume_seed = seed;
  enum class Added { nothing, lines, ball };
  for (const auto& [density, added] :
       {std::pair{0.05, Added::nothing}, std::pair{0.05, Added::lines},
        std::pair{0.05, Added::ball}, std::pair{0.6, Added::nothing}}) {
    Volume volume = data::random_granular(extent, density, density < 0.1 ? 1 : 8, volume_seed++);
    for (std::uint64_t z = 0; z < extent.z; ++z) {
      for (std::uint64_t y = 0; y < extent.y; ++y) {
        std::uint8_t* row = volume.voxels.data() + (z * extent.y + y) * extent.x;
        if (added == Added::lines && z % 11 == 0 && y % 37 == 0) std::fill_n(row, extent.x, 1);
        if (added != Added::ball) continue;
        for (std::uint64_t x = 0; x < extent.x; ++x) {
          const auto dx = static_cast<double>(x) - 165, dy = static_cast<double>(y) - 161;
          const auto dz = static_cast<double>(z) - 158;
          if (dx * dx + dy * dy + dz * dz < 110.0 * 110.0) row[x] = 1;
        }
      }
    }
    for (Algorithm algorithm : {Algorithm::buf, Algorithm::bke_ic}) {
      LabelOptions options;
      options.algorithm = algorithm;
      options.backend = Backend::cuda;
      options.connectivity = 26;
      std::vector<std::uint32_t> labels(extent.voxel_count(), kPoison);
      std::vector<ComponentMoments> moments(3);  // replaced
      const LabelResult result =
          label(volume.voxels.data(), extent, labels.data(), moments, options);
      ASSERT_EQ(*std::max_element(labels.begin(), labels.end()), result.component_count);
      if (density < 0.1) {
        ASSERT_GE(result.component_count, extent.voxel_count() / 64);
      }
      ASSERT_TRUE(tables_equal(voxel_sums(labels, extent, result.component_count), moments))
          << "density " << density << (added == Added::lines ? " with lines" : "")
          << (added == Added::ball ? " around a ball" : "") << ", " << to_string(algorithm);
    }
  }
}
#endif

// --- describe(): derived values against a direct double computation ------------------------

struct Geometry3 {
  ImageGeometry geometry;
  double a[3][3];  // direction * diag(spacing)
};

Geometry3 rotated_anisotropic_geometry() {
  Geometry3 g;
  g.geometry.spacing = {0.7, 1.3, 2.1};
  g.geometry.origin = {-12.5, 40.25, 3.0};
  // A rotation about (1, 2, 2) / 3 by 0.6 rad (Rodrigues), a non-identity direction.
  const double axis[3] = {1.0 / 3, 2.0 / 3, 2.0 / 3};
  const double c = std::cos(0.6), s = std::sin(0.6);
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      double r = (1 - c) * axis[i] * axis[j] + (i == j ? c : 0);
      const int k = 3 - i - j;
      if (i != j) r += ((j == (i + 1) % 3) ? -1 : 1) * s * axis[k];
      g.geometry.direction[3 * i + j] = r;
    }
  }
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) g.a[i][j] = g.geometry.direction[3 * i + j] * g.geometry.spacing[j];
  }
  return g;
}

TEST(Describe, MatchesATwoPassComputationInPhysicalSpace) {
  const Geometry3 g = rotated_anisotropic_geometry();
  std::mt19937 bits(test_seed());
  for (int trial = 0; trial < 50; ++trial) {
    // A random cloud of voxels far from the origin, where one-pass formulas cancel.
    std::vector<std::array<std::uint32_t, 3>> voxels(1 + bits() % 200);
    const std::uint32_t base = 1000 + bits() % 3000;
    for (auto& v : voxels) {
      v = {static_cast<std::uint32_t>(base + bits() % 17),
           static_cast<std::uint32_t>(base + bits() % 9),
           static_cast<std::uint32_t>(base / 2 + bits() % 5)};
    }
    ComponentMoments m;
    std::array<long double, 3> mean{};
    std::vector<std::array<long double, 3>> points;
    for (const auto& v : voxels) {
      m.count += 1;
      for (int a = 0; a < 3; ++a) {
        m.sum[a] += v[a];
        m.min[a] = std::min(m.min[a], v[a]);
        m.max[a] = std::max(m.max[a], v[a]);
      }
      const std::uint64_t x = v[0], y = v[1], z = v[2];
      const std::uint64_t products[6] = {x * x, y * y, z * z, x * y, x * z, y * z};
      for (int p = 0; p < 6; ++p) m.sum_products[p] += products[p];
      std::array<long double, 3> point{};
      for (int i = 0; i < 3; ++i) {
        point[i] = g.geometry.origin[i];
        for (int j = 0; j < 3; ++j) point[i] += static_cast<long double>(g.a[i][j]) * v[j];
        mean[i] += point[i];
      }
      points.push_back(point);
    }
    for (auto& c : mean) c /= static_cast<long double>(m.count);
    long double covariance[3][3] = {};
    for (const auto& p : points) {
      for (int i = 0; i < 3; ++i) {
        for (int j = 0; j < 3; ++j) covariance[i][j] += (p[i] - mean[i]) * (p[j] - mean[j]);
      }
    }
    const ComponentShape shape = describe(m, g.geometry, 3);
    double norm = 0;
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 3; ++j) {
        covariance[i][j] /= static_cast<long double>(m.count);
        norm = std::max(norm, static_cast<double>(std::fabs(covariance[i][j])));
      }
    }
    const int first[6] = {0, 1, 2, 0, 0, 1}, second[6] = {0, 1, 2, 1, 2, 2};
    for (int i = 0; i < 3; ++i) {
      EXPECT_NEAR(shape.centroid[i], static_cast<double>(mean[i]),
                  1e-12 * std::fabs(static_cast<double>(mean[i])));
    }
    for (int t = 0; t < 6; ++t) {
      EXPECT_NEAR(shape.covariance[t], static_cast<double>(covariance[first[t]][second[t]]),
                  1e-12 * norm + 1e-300);
    }
    EXPECT_NEAR(shape.physical_size, m.count * 0.7 * 1.3 * 2.1, 1e-12 * m.count);
    // Eigenpairs: ascending, A v = lambda v, orthonormal rows, a proper rotation.
    for (int r = 0; r < 3; ++r) {
      if (r > 0) {
        EXPECT_LE(shape.principal_moments[r - 1], shape.principal_moments[r]);
      }
      for (int i = 0; i < 3; ++i) {
        double av = 0;
        for (int j = 0; j < 3; ++j) {
          av += static_cast<double>(covariance[i][j]) * shape.principal_axes[3 * r + j];
        }
        EXPECT_NEAR(av, shape.principal_moments[r] * shape.principal_axes[3 * r + i],
                    1e-10 * norm + 1e-300);
      }
      for (int q = 0; q < 3; ++q) {
        double dot = 0;
        for (int k = 0; k < 3; ++k) {
          dot += shape.principal_axes[3 * r + k] * shape.principal_axes[3 * q + k];
        }
        EXPECT_NEAR(dot, r == q ? 1.0 : 0.0, 1e-12);
      }
    }
    const auto& v = shape.principal_axes;
    const double determinant = v[0] * (v[4] * v[8] - v[5] * v[7]) -
                               v[1] * (v[3] * v[8] - v[5] * v[6]) +
                               v[2] * (v[3] * v[7] - v[4] * v[6]);
    EXPECT_NEAR(determinant, 1.0, 1e-12);
  }
}

TEST(Describe, ALineAndASingleVoxelIn2D) {
  ComponentMoments line;  // x = 3..12 at y = 5: covariance xx = (n^2 - 1) / 12 with n = 10
  for (std::uint64_t x = 3; x <= 12; ++x) {
    line.count += 1;
    line.sum[0] += x;
    line.sum[1] += 5;
    line.sum_products[0] += x * x;
    line.sum_products[1] += 25;
    line.sum_products[3] += 5 * x;
  }
  line.min[0] = 3, line.max[0] = 12, line.min[1] = line.max[1] = 5, line.min[2] = line.max[2] = 0;
  ImageGeometry geometry;
  geometry.spacing = {2, 3, 1};
  geometry.origin = {1, -1, 0};
  const ComponentShape shape = describe(line, geometry, 2);
  EXPECT_DOUBLE_EQ(shape.centroid_index[0], 7.5);
  EXPECT_DOUBLE_EQ(shape.centroid[0], 1 + 2 * 7.5);
  EXPECT_DOUBLE_EQ(shape.centroid[1], -1 + 3 * 5.0);
  EXPECT_DOUBLE_EQ(shape.covariance_index[0], 99.0 / 12);
  EXPECT_DOUBLE_EQ(shape.covariance[0], 4 * 99.0 / 12);
  EXPECT_EQ(shape.covariance[1], 0.0);
  EXPECT_EQ(shape.principal_moments[0], 0.0);
  EXPECT_DOUBLE_EQ(shape.principal_moments[1], 4 * 99.0 / 12);
  EXPECT_EQ(shape.principal_moments[2], 0.0);                 // 2D: the third stays 0
  EXPECT_DOUBLE_EQ(std::fabs(shape.principal_axes[3]), 1.0);  // the long axis is x
  EXPECT_DOUBLE_EQ(shape.physical_size, 60.0);
  EXPECT_EQ(shape.bounding_box_max[0], 12u);

  ComponentMoments voxel;
  voxel.count = 1;
  voxel.sum[0] = 4000000000u;
  voxel.sum_products[0] = 4000000000ull * 4000000000ull;
  voxel.min[0] = voxel.max[0] = 4000000000u;
  voxel.min[1] = voxel.max[1] = voxel.min[2] = voxel.max[2] = 0;
  const ComponentShape single = describe(voxel, ImageGeometry{}, 3);
  EXPECT_EQ(single.covariance_index[0], 0.0);  // exact: no cancellation
  EXPECT_EQ(single.principal_moments[2], 0.0);
  EXPECT_THROW(describe(voxel, ImageGeometry{}, 4), InvalidArgument);
}

}  // namespace
}  // namespace volccl::test
