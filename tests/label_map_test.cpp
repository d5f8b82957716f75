// Label maps: every algorithm that takes them, on each backend and connectivity, against the
// reference labeler's breadth-first search over equal values, for all eight value types.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "reference_labeler.h"
#include "test_support.h"
#include "volccl/cuda.h"
#include "volccl/data/generators.h"
#include "volccl/volccl.h"

namespace volccl::test {
namespace {

// A label map as the tests build it: values widened to int64 (the reference's view) and the
// background, before they are narrowed to the type under test.
struct WideMap {
  Extent3 extent;
  std::vector<std::int64_t> values;
  std::int64_t background = 0;
};

// `count` distinct values of T other than `background`, the type's extremes, -1 and 0 first
// where they differ from it, then random ones.
template <typename T>
std::vector<std::int64_t> distinct_values(std::size_t count, std::int64_t background,
                                          std::mt19937& random) {
  const auto bits = [](T value) { return static_cast<std::int64_t>(value); };
  const std::vector<std::int64_t> extremes = {bits(std::numeric_limits<T>::max()),
                                              bits(std::numeric_limits<T>::min()),
                                              bits(static_cast<T>(-1)),
                                              bits(T{0}),
                                              bits(T{1}),
                                              bits(static_cast<T>(2))};
  const std::uint64_t available =
      std::min<std::uint64_t>(count, (std::uint64_t{1} << std::min<int>(8 * sizeof(T), 62)) - 1);
  std::set<std::int64_t> taken{background};
  std::vector<std::int64_t> values;
  for (std::int64_t value : extremes) {
    if (values.size() < available && taken.insert(value).second) values.push_back(value);
  }
  std::uniform_int_distribution<std::uint64_t> any;
  while (values.size() < available) {
    const std::int64_t value = bits(static_cast<T>(any(random)));
    if (taken.insert(value).second) values.push_back(value);
  }
  return values;
}

// Cells of granularity^3 voxels (granularity^2 in 2D), each background with probability
// `background_share`, else one of `value_count` values.
template <typename T>
WideMap random_map(Extent3 extent, std::size_t value_count, unsigned granularity,
                   double background_share, std::int64_t background, std::uint32_t seed) {
  std::mt19937 random(seed);
  const std::vector<std::int64_t> values = distinct_values<T>(value_count, background, random);
  std::uniform_int_distribution<std::size_t> pick(0, values.size() - 1);
  std::bernoulli_distribution empty(background_share);
  const std::uint64_t cells_x = (extent.x + granularity - 1) / granularity;
  const std::uint64_t cells_y = (extent.y + granularity - 1) / granularity;
  const std::uint64_t cells_z = (extent.z + granularity - 1) / granularity;
  std::vector<std::int64_t> cells(cells_x * cells_y * cells_z);
  for (std::int64_t& cell : cells) cell = empty(random) ? background : values[pick(random)];
  WideMap map{extent, std::vector<std::int64_t>(extent.voxel_count()), background};
  for (std::uint64_t z = 0; z < extent.z; ++z) {
    for (std::uint64_t y = 0; y < extent.y; ++y) {
      for (std::uint64_t x = 0; x < extent.x; ++x) {
        const std::uint64_t cell =
            (z / granularity * cells_y + y / granularity) * cells_x + x / granularity;
        map.values[(z * extent.y + y) * extent.x + x] = cells[cell];
      }
    }
  }
  return map;
}

// Labels `map` as T with `options` into a poisoned buffer and compares labels, count and the
// value of every component with the reference; and the algorithm that ran with `ran`, if given.
template <typename T>
::testing::AssertionResult labels_as(const WideMap& map, const LabelOptions& options,
                                     std::optional<Algorithm> ran = std::nullopt) {
  std::vector<T> values(map.values.size());
  std::transform(map.values.begin(), map.values.end(), values.begin(),
                 [](std::int64_t value) { return static_cast<T>(value); });
  const T background = static_cast<T>(map.background);
  std::vector<std::uint32_t> labels(values.size(), kPoison);
  const LabelResult result =
      label(LabelInput::values(values.data(), background), map.extent, labels.data(), options);
  const ReferenceLabels reference =
      reference_label_map(map.values, map.extent, options.connectivity, map.background);
  const std::string where = map.extent.to_string() + " " + to_string(value_type_of<T>()) + ", " +
                            to_string(result.algorithm_used) + " at " +
                            std::to_string(options.connectivity) + " on " +
                            to_string(result.backend_used);
  if (ran && result.algorithm_used != *ran) {
    return ::testing::AssertionFailure() << where << ": " << to_string(*ran) << " should have run";
  }
  if (result.component_count != reference.component_count) {
    return ::testing::AssertionFailure()
           << where << ": " << result.component_count << " components, the reference finds "
           << reference.component_count;
  }
  ::testing::AssertionResult equal = labels_equal(reference.labels, labels, map.extent);
  if (!equal) return ::testing::AssertionFailure() << where << ": " << equal.message();
  const std::vector<T> found =
      component_values(values.data(), map.extent, labels.data(), result.component_count);
  for (std::uint64_t i = 0; i < labels.size(); ++i) {
    if (labels[i] != 0 && found[labels[i] - 1] != values[i]) {
      return ::testing::AssertionFailure()
             << where << ": component " << labels[i] << " reported with a value other than "
             << "voxel " << i << "'s";
    }
  }
  return ::testing::AssertionSuccess();
}

// The map labeled as each of the eight types.
::testing::AssertionResult labels_as_every_type(const WideMap& map, const LabelOptions& options) {
  for (const ::testing::AssertionResult& each :
       {labels_as<std::uint8_t>(map, options), labels_as<std::int8_t>(map, options),
        labels_as<std::uint16_t>(map, options), labels_as<std::int16_t>(map, options),
        labels_as<std::uint32_t>(map, options), labels_as<std::int32_t>(map, options),
        labels_as<std::uint64_t>(map, options), labels_as<std::int64_t>(map, options)}) {
    if (!each) return each;
  }
  return ::testing::AssertionSuccess();
}

// Narrowed to uint8, the values of a map built for wider types may collide; these maps are
// built with values every type keeps apart.
WideMap small_valued(Extent3 extent, const std::vector<std::int64_t>& values) {
  return WideMap{extent, values, 0};
}

std::vector<LabelingParameter> label_map_parameters(std::initializer_list<int> connectivities) {
  std::vector<LabelingParameter> parameters;
  for (Backend backend : {Backend::cpu, Backend::cuda}) {
    for (int connectivity : connectivities) {
      parameters.emplace_back(Algorithm::automatic, connectivity, backend);
      for (Algorithm algorithm : all_algorithms()) {
        if (supports_label_maps(algorithm) && supports(algorithm, connectivity)) {
          parameters.emplace_back(algorithm, connectivity, backend);
        }
      }
    }
  }
  return parameters;
}

class LabelMap : public LabelingFixture {
 protected:
  bool planar() const { return is_2d_connectivity(connectivity()); }
  Extent3 odd_extent() const { return planar() ? Extent3{97, 61, 1} : Extent3{37, 23, 19}; }
};

TEST_P(LabelMap, RandomMapsOfManyValuesAndGranularities) {
  const std::uint32_t seed = test_seed();
  SCOPED_TRACE(describe_seed(seed));
  for (std::size_t value_count : {2, 3, 16, 65536}) {
    for (unsigned granularity : {1u, 2u, 4u, 8u}) {
      const std::uint32_t case_seed =
          seed + static_cast<std::uint32_t>(value_count * 8 + granularity);
      EXPECT_TRUE(labels_as<std::uint8_t>(
          random_map<std::uint8_t>(odd_extent(), value_count, granularity, 0.2, 0, case_seed),
          options()));
      EXPECT_TRUE(labels_as<std::int16_t>(
          random_map<std::int16_t>(odd_extent(), value_count, granularity, 0.2, 0, case_seed),
          options()));
      EXPECT_TRUE(labels_as<std::uint32_t>(
          random_map<std::uint32_t>(odd_extent(), value_count, granularity, 0.2, 0, case_seed),
          options()));
      EXPECT_TRUE(labels_as<std::int64_t>(
          random_map<std::int64_t>(odd_extent(), value_count, granularity, 0.2, 0, case_seed),
          options()));
    }
  }
}

// Runs across the words of 32 voxels and the row tiles of RUF's Initialization in every
// position, and rows too long for a tile (more than 1024 voxels). On the GPU a volume of few rows
// takes smaller tiles (kernels3d::tile_log2_rows): 100 x 151 x 137 has rows enough for a block's
// tiles on devices of up to 160 multiprocessors.
TEST_P(LabelMap, RunsAcrossWordsAndTiles) {
  if (planar()) GTEST_SKIP() << "volumes only: the words and tiles of RUF's rows";
  const std::uint32_t seed = test_seed();
  SCOPED_TRACE(describe_seed(seed));
  std::vector<Extent3> extents{{100, 70, 41}, {1100, 5, 4}};
  if (backend() == Backend::cuda) extents.push_back({100, 151, 137});
  for (const Extent3 extent : extents) {
    for (std::size_t value_count : {2, 16, 65536}) {
      for (unsigned granularity : {1u, 3u, 7u}) {
        const std::uint32_t case_seed =
            seed + static_cast<std::uint32_t>(value_count * 8 + granularity + extent.x);
        EXPECT_TRUE(labels_as<std::uint32_t>(
            random_map<std::uint32_t>(extent, value_count, granularity, 0.15, 0, case_seed),
            options()));
      }
    }
  }
}

// Rows of several batches of the GPU's words pass, whose middle batches are read without bounds
// tests: rows of whole words and of a part word, rows before them absent (the first slice and
// row) and present, in every type.
TEST_P(LabelMap, LongRowsOfEveryType) {
  if (planar()) GTEST_SKIP() << "volumes only: the words pass of RUF's rows";
  const std::uint32_t seed = test_seed();
  SCOPED_TRACE(describe_seed(seed));
  for (const Extent3 extent : {Extent3{300, 9, 6}, Extent3{256, 5, 4}, Extent3{353, 4, 3}}) {
    for (unsigned granularity : {1u, 3u}) {
      const std::uint32_t case_seed = seed + static_cast<std::uint32_t>(granularity + extent.x);
      const auto labels_as_type = [&](auto type) {
        using T = decltype(type);
        return labels_as<T>(random_map<T>(extent, 7, granularity, 0.1, 0, case_seed), options());
      };
      for (const ::testing::AssertionResult& each :
           {labels_as_type(std::uint8_t{}), labels_as_type(std::int8_t{}),
            labels_as_type(std::uint16_t{}), labels_as_type(std::int16_t{}),
            labels_as_type(std::uint32_t{}), labels_as_type(std::int32_t{}),
            labels_as_type(std::uint64_t{}), labels_as_type(std::int64_t{})}) {
        EXPECT_TRUE(each);
      }
    }
  }
}

TEST_P(LabelMap, EveryTypeWithExtremeValues) {
  const std::uint32_t seed = test_seed();
  SCOPED_TRACE(describe_seed(seed));
  for (unsigned granularity : {1u, 3u}) {
    EXPECT_TRUE(labels_as<std::int8_t>(
        random_map<std::int8_t>(odd_extent(), 6, granularity, 0.1, 0, seed), options()));
    EXPECT_TRUE(labels_as<std::uint16_t>(
        random_map<std::uint16_t>(odd_extent(), 6, granularity, 0.1, 0, seed), options()));
    EXPECT_TRUE(labels_as<std::int32_t>(
        random_map<std::int32_t>(odd_extent(), 6, granularity, 0.1, 0, seed), options()));
    EXPECT_TRUE(labels_as<std::uint64_t>(
        random_map<std::uint64_t>(odd_extent(), 6, granularity, 0.1, 0, seed), options()));
  }
}

TEST_P(LabelMap, BackgroundOtherThanZero) {
  const std::uint32_t seed = test_seed();
  SCOPED_TRACE(describe_seed(seed));
  // 0 is then an ordinary value; the type's extremes and -1 are the background.
  const std::int64_t int64_min = std::numeric_limits<std::int64_t>::min();
  EXPECT_TRUE(labels_as<std::int64_t>(
      random_map<std::int64_t>(odd_extent(), 5, 2, 0.3, int64_min, seed), options()));
  EXPECT_TRUE(labels_as<std::uint64_t>(random_map<std::uint64_t>(odd_extent(), 5, 2, 0.3, -1, seed),
                                       options()));
  EXPECT_TRUE(labels_as<std::int8_t>(random_map<std::int8_t>(odd_extent(), 5, 1, 0.3, -1, seed),
                                     options()));
  EXPECT_TRUE(labels_as<std::uint16_t>(
      random_map<std::uint16_t>(odd_extent(), 5, 1, 0.3, 65535, seed), options()));
}

TEST_P(LabelMap, SmallAndOneVoxelExtents) {
  const std::uint32_t seed = test_seed();
  SCOPED_TRACE(describe_seed(seed));
  const std::vector<std::uint64_t> sides = {1, 2, 3, 5, 8};
  for (std::uint64_t x : sides) {
    for (std::uint64_t y : sides) {
      for (std::uint64_t z : planar() ? std::vector<std::uint64_t>{1} : sides) {
        const Extent3 extent{x, y, z};
        EXPECT_TRUE(labels_as<std::uint16_t>(
            random_map<std::uint16_t>(extent, 3, 1, 0.25, 0,
                                      seed + static_cast<std::uint32_t>(x * 64 + y * 8 + z)),
            options()));
      }
    }
  }
}

TEST_P(LabelMap, EmptyAndFullOfOneValue) {
  const Extent3 extent = odd_extent();
  EXPECT_TRUE(labels_as_every_type(
      small_valued(extent, std::vector<std::int64_t>(extent.voxel_count(), 0)), options()));
  EXPECT_TRUE(labels_as_every_type(
      small_valued(extent, std::vector<std::int64_t>(extent.voxel_count(), 7)), options()));
  EXPECT_TRUE(labels_as_every_type(
      small_valued(extent, std::vector<std::int64_t>(extent.voxel_count(), -1)), options()));
}

// Two values touching by every face, edge and corner direction: every pair of positions of a
// small box, one voxel of value 1 and one of value 2 (never joined), then both of value 1.
TEST_P(LabelMap, ContactsByFacesEdgesAndCornersOnly) {
  const Extent3 extent = planar() ? Extent3{5, 5, 1} : Extent3{3, 3, 3};
  const std::uint64_t voxels = extent.voxel_count();
  for (std::uint64_t a = 0; a < voxels; ++a) {
    for (std::uint64_t b = a + 1; b < voxels; ++b) {
      for (std::int64_t second : {2, 1}) {
        std::vector<std::int64_t> values(voxels, 0);
        values[a] = 1;
        values[b] = second;
        ASSERT_TRUE(labels_as<std::uint8_t>(small_valued(extent, values), options()))
            << "voxels " << a << " and " << b;
      }
    }
  }
}

// Different values filling the space side by side, no background: a two-value checkerboard
// (each voxel its own component at 6 and 4), stripes and slabs.
TEST_P(LabelMap, CheckerboardsAndStripesWithoutBackground) {
  const Extent3 extent = planar() ? Extent3{33, 17, 1} : Extent3{13, 9, 7};
  std::vector<std::int64_t> checkerboard(extent.voxel_count());
  std::vector<std::int64_t> stripes(extent.voxel_count());
  std::vector<std::int64_t> slabs(extent.voxel_count());
  for (std::uint64_t z = 0; z < extent.z; ++z) {
    for (std::uint64_t y = 0; y < extent.y; ++y) {
      for (std::uint64_t x = 0; x < extent.x; ++x) {
        const std::uint64_t i = (z * extent.y + y) * extent.x + x;
        checkerboard[i] = (x + y + z) % 2 == 0 ? 5 : -3;
        stripes[i] = static_cast<std::int64_t>(x % 3) + 1;
        slabs[i] = static_cast<std::int64_t>((y + z) % 4) + 1;
      }
    }
  }
  EXPECT_TRUE(labels_as_every_type(small_valued(extent, checkerboard), options()));
  EXPECT_TRUE(labels_as_every_type(small_valued(extent, stripes), options()));
  EXPECT_TRUE(labels_as_every_type(small_valued(extent, slabs), options()));
}

// A region of background inside a region of one value, with an island of the same value inside
// the hole: two components of that value, not one.
TEST_P(LabelMap, BackgroundHoleWithAnIsland) {
  const Extent3 extent = planar() ? Extent3{11, 11, 1} : Extent3{11, 11, 11};
  std::vector<std::int64_t> values(extent.voxel_count(), 9);
  for (std::uint64_t z = 0; z < extent.z; ++z) {
    for (std::uint64_t y = 0; y < extent.y; ++y) {
      for (std::uint64_t x = 0; x < extent.x; ++x) {
        const auto distance = std::max(
            {x > 5 ? x - 5 : 5 - x, y > 5 ? y - 5 : 5 - y, planar() ? 0 : (z > 5 ? z - 5 : 5 - z)});
        const std::uint64_t i = (z * extent.y + y) * extent.x + x;
        if (distance == 2 || distance == 3) values[i] = 0;
      }
    }
  }
  EXPECT_TRUE(labels_as_every_type(small_valued(extent, values), options()));
}

// Long snakes: the generators' Hilbert curve and spiral as one value, the rest as another.
TEST_P(LabelMap, SnakesBesideAnotherValue) {
  for (const data::Volume& volume :
       {planar() ? data::spiral({257, 129, 1}) : data::hilbert(4, 16),
        planar() ? data::checkerboard({65, 33, 1}) : data::spiral({33, 31, 9})}) {
    std::vector<std::int64_t> values(volume.voxels.size());
    std::transform(volume.voxels.begin(), volume.voxels.end(), values.begin(),
                   [](std::uint8_t v) { return v != 0 ? std::int64_t{4} : std::int64_t{-2}; });
    EXPECT_TRUE(labels_as_every_type(small_valued(volume.extent, values), options()));
  }
}

// A label map with two values, the same result as the mask of one of them when the other is the
// background.
TEST_P(LabelMap, MaskAsLabelMapMatchesTheMask) {
  const data::Volume volume = data::random_granular(odd_extent(), 0.4, 2, test_seed());
  std::vector<std::uint32_t> from_mask(volume.voxels.size(), kPoison);
  std::vector<std::uint32_t> from_map(volume.voxels.size(), kPoison);
  LabelOptions mask_options = options();
  if (!supports(mask_options.algorithm, connectivity()))
    mask_options.algorithm = Algorithm::automatic;
  const LabelResult mask_result =
      label(volume.voxels.data(), volume.extent, from_mask.data(), mask_options);
  const LabelResult map_result =
      label(LabelInput::values(volume.voxels.data()), volume.extent, from_map.data(), options());
  EXPECT_EQ(mask_result.component_count, map_result.component_count);
  EXPECT_TRUE(labels_equal(from_mask, from_map, volume.extent));
}

TEST_P(LabelMap, StatisticsOfEveryComponent) {
  const WideMap map = random_map<std::int32_t>(odd_extent(), 16, 2, 0.2, 0, test_seed());
  std::vector<std::int32_t> values(map.values.begin(), map.values.end());
  std::vector<std::uint32_t> labels(values.size(), kPoison);
  std::vector<ComponentMoments> statistics;
  const LabelResult result =
      label(LabelInput::values(values.data()), map.extent, labels.data(), statistics, options());
  const ReferenceLabels reference = reference_label_map(map.values, map.extent, connectivity(), 0);
  ASSERT_EQ(result.component_count, reference.component_count);
  EXPECT_TRUE(tables_equal(voxel_sums(reference.labels, map.extent, reference.component_count),
                           statistics));
}

INSTANTIATE_TEST_SUITE_P(Volumes, LabelMap, ::testing::ValuesIn(label_map_parameters({6, 18, 26})),
                         labeling_name);
INSTANTIATE_TEST_SUITE_P(Images, LabelMap, ::testing::ValuesIn(label_map_parameters({4, 8})),
                         labeling_name);

// On the GPU, `auto` labels a volume whose foreground holds one value, or none, through the
// mask's algorithm; a second value anywhere keeps the label map's, and so does an algorithm asked
// for by name. Every type, backgrounds of 0 and of the type's extremes, foreground values at the
// extremes, extents that fill no 16-byte vector or leave voxels past the last whole one, and the
// second value at the first voxel, the last and one in between. (2D label maps go through UF,
// which labels them whole.)
class LabelMapOfOneValue : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    if (!cuda_available()) GTEST_SKIP() << cuda_device_description();
  }
  int connectivity() const { return GetParam(); }
  std::vector<Extent3> extents() const {
    return {{1, 1, 1}, {15, 1, 1}, {7, 3, 5}, {64, 4, 4}, {37, 23, 19}};
  }
  LabelOptions options() const {
    LabelOptions options;
    options.backend = Backend::cuda;
    options.connectivity = connectivity();
    return options;
  }
};

// Voxels of `value` with probability `share`, else `background`.
WideMap one_value_map(Extent3 extent, std::int64_t value, std::int64_t background, double share,
                      std::uint32_t seed) {
  std::mt19937 random(seed);
  std::bernoulli_distribution foreground(share);
  WideMap map{extent, std::vector<std::int64_t>(extent.voxel_count()), background};
  for (std::int64_t& voxel : map.values) voxel = foreground(random) ? value : background;
  return map;
}

template <typename T>
void expect_one_value_as_mask(Extent3 extent, const LabelOptions& options, std::uint32_t seed) {
  const auto bits = [](T value) { return static_cast<std::int64_t>(value); };
  const Algorithm as_mask = automatic_choice(options.connectivity, Backend::cuda, false);
  const Algorithm as_map = automatic_choice(options.connectivity, Backend::cuda, true);
  const std::int64_t extremes[] = {bits(std::numeric_limits<T>::max()),
                                   bits(std::numeric_limits<T>::min()), bits(static_cast<T>(-1)),
                                   bits(T{1})};
  for (std::int64_t background : {bits(T{0}), bits(std::numeric_limits<T>::max())}) {
    EXPECT_TRUE(labels_as<T>(one_value_map(extent, 0, background, 0, seed), options, as_mask));
    for (std::int64_t value : extremes) {
      if (value == background) continue;
      const WideMap map = one_value_map(extent, value, background, 0.45, seed++);
      EXPECT_TRUE(labels_as<T>(map, options, as_mask));
      const std::int64_t other = value == bits(T{1}) ? bits(static_cast<T>(2)) : bits(T{1});
      if (other == background || map.values.size() < 2) continue;
      for (std::uint64_t at : {std::uint64_t{0}, map.values.size() / 2, map.values.size() - 1}) {
        WideMap two_values = map;
        two_values.values[at] = other;
        // Where `at` held the map's only voxel of `value`, one value is left: the mask's turn.
        const bool several = std::find(two_values.values.begin(), two_values.values.end(), value) !=
                             two_values.values.end();
        EXPECT_TRUE(labels_as<T>(two_values, options, several ? as_map : as_mask))
            << "second value at " << at;
      }
    }
  }
  LabelOptions named = options;
  named.algorithm = as_map;
  EXPECT_TRUE(labels_as<T>(one_value_map(extent, 3, 0, 0.45, seed), named, as_map));
}

TEST_P(LabelMapOfOneValue, EveryTypeGoesAsItsMask) {
  std::uint32_t seed = test_seed();
  SCOPED_TRACE(describe_seed(seed));
  for (const Extent3& extent : extents()) {
    SCOPED_TRACE(extent.to_string());
    expect_one_value_as_mask<std::uint8_t>(extent, options(), seed);
    expect_one_value_as_mask<std::int8_t>(extent, options(), seed + 1);
    expect_one_value_as_mask<std::uint16_t>(extent, options(), seed + 2);
    expect_one_value_as_mask<std::int16_t>(extent, options(), seed + 3);
    expect_one_value_as_mask<std::uint32_t>(extent, options(), seed + 4);
    expect_one_value_as_mask<std::int32_t>(extent, options(), seed + 5);
    expect_one_value_as_mask<std::uint64_t>(extent, options(), seed + 6);
    expect_one_value_as_mask<std::int64_t>(extent, options(), seed + 7);
  }
}

TEST_P(LabelMapOfOneValue, StatisticsAsTheMasks) {
  const Extent3 extent = extents().back();
  const WideMap map = one_value_map(extent, -7, 0, 0.4, test_seed());
  std::vector<std::int16_t> values(map.values.begin(), map.values.end());
  std::vector<std::uint32_t> labels(values.size(), kPoison);
  std::vector<ComponentMoments> statistics;
  const LabelResult result =
      label(LabelInput::values(values.data()), extent, labels.data(), statistics, options());
  EXPECT_EQ(result.algorithm_used, automatic_choice(connectivity(), Backend::cuda, false));
  const ReferenceLabels reference = reference_label_map(map.values, extent, connectivity(), 0);
  ASSERT_EQ(result.component_count, reference.component_count);
  EXPECT_TRUE(labels_equal(reference.labels, labels, extent));
  EXPECT_TRUE(
      tables_equal(voxel_sums(reference.labels, extent, reference.component_count), statistics));
}

// In slabs each slab takes the check: a slab of one value goes through the mask's algorithm,
// and the result names that algorithm where every slab did. Slabs of one value each but of
// different values meet at their faces as the map says; a second value in the first or the last
// slab keeps that slab, and the name, to the label map's algorithm. Slabs asked for by size, and
// by a budget, which the check's mask must keep to; 8-bit maps with background 0, their own mask,
// are planned without it, and keep to a budget too, of one value or of several.
TEST_P(LabelMapOfOneValue, InSlabs) {
  std::uint32_t seed = test_seed();
  SCOPED_TRACE(describe_seed(seed));
  const Algorithm as_mask = automatic_choice(connectivity(), Backend::cuda, false);
  const Algorithm as_map = automatic_choice(connectivity(), Backend::cuda, true);
  const Extent3 extent{37, 23, 19};
  const std::uint64_t slice = extent.x * extent.y;
  enum class Second { none, other_value_above, first_slab, last_slab };
  for (const Second second :
       {Second::none, Second::other_value_above, Second::first_slab, Second::last_slab}) {
    WideMap map = one_value_map(extent, 40000, 0, 0.45, seed++);
    if (second == Second::other_value_above) {
      for (std::uint64_t i = 12 * slice; i < map.values.size(); ++i) {
        if (map.values[i] != 0) map.values[i] = 40002;
      }
    }
    if (second == Second::first_slab) map.values[slice + 5] = 40001;
    if (second == Second::last_slab) map.values[map.values.size() - slice + 5] = 40001;
    LabelOptions options = this->options();
    options.slab_voxels = 4 * slice;
    const bool one_value_a_slab = second == Second::none || second == Second::other_value_above;
    EXPECT_TRUE(labels_as<std::uint32_t>(map, options, one_value_a_slab ? as_mask : as_map))
        << "case " << static_cast<int>(second);
  }
  // `map` as T from host memory under `budget` bytes of device memory: in slabs, within the
  // budget, labeled as the reference labels it.
  const Extent3 budgeted{301, 257, 190};
  const auto labels_under_budget = [&](auto type, const WideMap& map, std::uint64_t budget) {
    using T = decltype(type);
    const std::vector<T> values(map.values.begin(), map.values.end());
    std::vector<std::uint32_t> labels(values.size(), kPoison);
    LabelOptions options = this->options();
    options.max_gpu_memory = budget;
    const LabelResult result =
        label(LabelInput::values(values.data()), budgeted, labels.data(), options);
    EXPECT_GT(result.slab_count, 1u);
    EXPECT_LE(result.peak_device_bytes, budget);
    const ReferenceLabels reference = reference_label_map(map.values, budgeted, connectivity(), 0);
    EXPECT_EQ(result.component_count, reference.component_count);
    EXPECT_TRUE(labels_equal(reference.labels, labels, budgeted));
    return result;
  };
  const WideMap map = one_value_map(budgeted, 7, 0, 0.45, seed);
  EXPECT_EQ(labels_under_budget(std::uint32_t{}, map, std::uint64_t{96} << 20).algorithm_used,
            as_mask);
  labels_under_budget(std::uint8_t{}, map, std::uint64_t{64} << 20);
  labels_under_budget(std::uint8_t{}, random_map<std::uint8_t>(budgeted, 5, 2, 0.45, 0, seed + 1),
                      std::uint64_t{64} << 20);
}

#if defined(VOLCCL_HAS_CUDA)
// cuda::label on device memory, as volccl's Python package calls it with CuPy arrays.
TEST_P(LabelMapOfOneValue, OnDeviceMemory) {
  const Extent3 extent = extents().back();
  std::uint32_t seed = test_seed();
  SCOPED_TRACE(describe_seed(seed));
  const Algorithm as_mask = automatic_choice(connectivity(), Backend::cuda, false);
  const Algorithm as_map = automatic_choice(connectivity(), Backend::cuda, true);
  for (bool second_value : {false, true}) {
    WideMap map = one_value_map(extent, 40000, 0, 0.45, seed++);
    if (second_value) map.values.back() = 40001;
    const std::vector<std::uint32_t> values(map.values.begin(), map.values.end());
    const DeviceArray<std::uint32_t> device_values(values);
    const DeviceArray<std::uint32_t> device_labels(
        std::vector<std::uint32_t>(values.size(), kPoison));
    LabelOptions options;
    options.connectivity = connectivity();
    const LabelResult result = cuda::label(LabelInput::values(device_values.data()), extent,
                                           device_labels.data(), options);
    EXPECT_EQ(result.algorithm_used, second_value ? as_map : as_mask);
    const ReferenceLabels reference = reference_label_map(map.values, extent, connectivity(), 0);
    ASSERT_EQ(result.component_count, reference.component_count);
    EXPECT_TRUE(labels_equal(reference.labels, device_labels.to_host(), extent));
  }
}
#endif

INSTANTIATE_TEST_SUITE_P(Volumes, LabelMapOfOneValue, ::testing::Values(6, 18, 26));

TEST(LabelMapRequests, AlgorithmsForMasksOnlyRefuseLabelMaps) {
  const std::vector<std::uint16_t> values(8 * 8 * 8, 3);
  std::vector<std::uint32_t> labels(values.size());
  for (Algorithm algorithm : all_algorithms()) {
    if (supports_label_maps(algorithm)) continue;
    LabelOptions options;
    options.algorithm = algorithm;
    options.backend = Backend::cpu;
    const std::vector<int> taken = connectivities(algorithm);
    options.connectivity = taken.back();
    const Extent3 extent =
        is_2d_connectivity(options.connectivity) ? Extent3{64, 8, 1} : Extent3{8, 8, 8};
    try {
      label(LabelInput::values(values.data()), extent, labels.data(), options);
      ADD_FAILURE() << to_string(algorithm) << " labeled a label map";
    } catch (const InvalidArgument& error) {
      EXPECT_NE(std::string(error.what()).find("label map"), std::string::npos) << error.what();
    }
  }
}

TEST(LabelMapRequests, AutomaticPicksAnAlgorithmThatTakesLabelMaps) {
  for (Backend backend : {Backend::cpu, Backend::cuda}) {
    for (int connectivity : {4, 8, 6, 18, 26}) {
      const Algorithm chosen = automatic_choice(connectivity, backend, true);
      EXPECT_TRUE(supports_label_maps(chosen)) << to_string(chosen);
      EXPECT_TRUE(supports(chosen, connectivity)) << to_string(chosen);
    }
  }
}

TEST(LabelMapRequests, NullPointersAreRefused) {
  std::vector<std::uint32_t> labels(8);
  EXPECT_THROW(label(LabelInput::values<std::int32_t>(nullptr), {2, 2, 2}, labels.data()),
               InvalidArgument);
}

}  // namespace
}  // namespace volccl::test
