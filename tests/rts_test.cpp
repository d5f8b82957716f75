// RTS (kernels/rts_scan.h): its slab borders in every position and its label maps. The labeling
// suites check it on masks with the machine's thread count; here the thread count varies (1, 2, 3,
// 7 and more threads than rows), so that a border falls before, inside and after each slice and
// row, and label maps of every value width are checked against a breadth-first search over equal
// values written here. The moments RTS gathers as it writes the labels (a component's row summed
// by the slab of its first run, and apart by the others) are checked at every thread count too.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "kernels/rts_pair_scan.h"
#include "kernels/rts_settled_scan.h"
#include "kernels/rts_voxel_scan.h"
#include "reference_labeler.h"
#include "test_support.h"
#include "volccl/data/generators.h"
#include "volccl/statistics.h"
#include "volccl/volccl.h"

namespace volccl {
namespace {

using data::Volume;
using test::describe_seed;
using test::matches_reference;
using test::reference_label;
using test::ReferenceLabels;
using test::test_seed;

// The last, more threads than rows, leaves one slab per row.
constexpr unsigned kThreadCounts[] = {1, 2, 3, 7, 64};

LabelOptions rts_options(int connectivity, unsigned threads) {
  LabelOptions options;
  options.algorithm = Algorithm::rts;
  options.backend = Backend::cpu;
  options.connectivity = connectivity;
  options.cpu_threads = threads;
  return options;
}

std::vector<int> connectivities_of(Extent3 extent) {
  if (extent.z == 1) return {4, 8, 6, 18, 26};
  return {6, 18, 26};
}

// The labels and the moments RTS gathers as it writes them, against the reference labeler's
// labels and their voxel-by-voxel sums.
::testing::AssertionResult measures_like_the_reference(const Volume& volume,
                                                       const LabelOptions& options) {
  const ReferenceLabels reference =
      reference_label(volume.voxels, volume.extent, options.connectivity);
  std::vector<std::uint32_t> labels(volume.extent.voxel_count(), test::kPoison);
  std::vector<ComponentMoments> moments(2);  // replaced
  const LabelResult result =
      label(volume.voxels.data(), volume.extent, labels.data(), moments, options);
  if (result.component_count != reference.component_count) {
    return ::testing::AssertionFailure()
           << result.component_count << " components, expected " << reference.component_count;
  }
  if (auto same = test::labels_equal(reference.labels, labels, volume.extent); !same) return same;
  return test::tables_equal(
      test::voxel_sums(reference.labels, volume.extent, reference.component_count), moments);
}

TEST(RtsSlabs, EveryThreadCountOnOddAndThinExtents) {
  const std::uint32_t seed = test_seed();
  SCOPED_TRACE(describe_seed(seed));
  const Extent3 extents[] = {{1, 1, 1},   {1, 1, 9},   {9, 1, 1},   {1, 9, 1},  {2, 2, 2},
                             {3, 5, 7},   {7, 3, 2},   {33, 17, 9}, {65, 3, 5}, {64, 64, 3},
                             {129, 2, 1}, {5, 130, 1}, {17, 1, 40}, {1, 23, 29}};
  std::uint32_t volume_seed = seed;
  for (const Extent3& extent : extents) {
    for (double density : {0.3, 0.6, 0.9}) {
      for (unsigned granularity : {1u, 2u}) {
        const Volume volume = data::random_granular(extent, density, granularity, volume_seed++);
        for (int connectivity : connectivities_of(extent)) {
          for (unsigned threads : kThreadCounts) {
            ASSERT_TRUE(matches_reference(volume, rts_options(connectivity, threads)))
                << extent.to_string() << ", density " << density << ", granularity " << granularity
                << ", " << connectivity << "-connectivity, " << threads << " threads";
            ASSERT_TRUE(measures_like_the_reference(volume, rts_options(connectivity, threads)))
                << "with statistics: " << extent.to_string() << ", density " << density
                << ", granularity " << granularity << ", " << connectivity << "-connectivity, "
                << threads << " threads";
          }
        }
      }
    }
  }
}

// One component that crosses every border many times, and runs that span whole rows.
TEST(RtsSlabs, SnakesAndFullVolumesAcrossBorders) {
  const Volume volumes[] = {data::hilbert(3, 16), data::spiral({33, 31, 5}),
                            data::random_granular({40, 12, 11}, 1.0, 1, 1)};
  for (const Volume& volume : volumes) {
    for (int connectivity : {6, 18, 26}) {
      for (unsigned threads : kThreadCounts) {
        ASSERT_TRUE(matches_reference(volume, rts_options(connectivity, threads)))
            << volume.extent.to_string() << ", " << connectivity << ", " << threads;
        ASSERT_TRUE(measures_like_the_reference(volume, rts_options(connectivity, threads)))
            << "with statistics: " << volume.extent.to_string() << ", " << connectivity << ", "
            << threads;
      }
    }
  }
}

// Dense rows of short runs are written in stretches of one label through the foreground bits:
// rows of alternating voxels around a long run that fills whole 64-voxel words, beside rows of
// other labels, in images and volumes, with and without statistics.
TEST(RtsSlabs, StretchesOfShortRunsAcrossWholeWords) {
  for (const Extent3 extent : {Extent3{300, 9, 1}, Extent3{301, 5, 4}}) {
    Volume volume{extent, std::vector<std::uint8_t>(extent.voxel_count(), 0)};
    for (std::uint64_t row = 0; row < std::uint64_t{extent.y} * extent.z; ++row) {
      std::uint8_t* voxels = volume.voxels.data() + row * extent.x;
      for (std::uint32_t x = 0; x < extent.x; ++x) {
        const bool alternating = x < 64 || x >= 200;
        voxels[x] = alternating ? (x + row) % 2 == 0 : x < 199 || row % 3 != 0;
      }
      if (row % 4 == 3) voxels[7] = voxels[8] = voxels[9] = 0;  // runs of other labels
    }
    for (int connectivity : connectivities_of(extent)) {
      for (unsigned threads : kThreadCounts) {
        ASSERT_TRUE(matches_reference(volume, rts_options(connectivity, threads)))
            << extent.to_string() << ", " << connectivity << ", " << threads;
        ASSERT_TRUE(measures_like_the_reference(volume, rts_options(connectivity, threads)))
            << "with statistics: " << extent.to_string() << ", " << connectivity << ", " << threads;
      }
    }
  }
}

// --- pairs of rows (kernels/rts_pair_scan.h)
// ------------------------------------------------------

// The labels of the pairs' scan, taken whether or not the pairs would pay, and with `moments`
// the moments it gathers as it writes them.
std::vector<std::uint32_t> label_in_pairs(const Volume& volume, unsigned threads,
                                          std::uint32_t& components,
                                          std::vector<ComponentMoments>* moments = nullptr) {
  std::vector<std::uint32_t> labels(volume.extent.voxel_count(), test::kPoison);
  detail::rts::PairScan scan(detail::BinaryVoxels{volume.voxels.data()}, volume.extent, threads);
  scan.pack();
  scan.allocate_forest();
  scan.unite();
  components = scan.rank_roots();
  scan.write_labels(labels.data(), moments);
  return labels;
}

// Every unit layout: slices of odd height (a last unit of one row), rows across word borders,
// one-slice volumes (images at 8), thin and 1-voxel extents, and the slab borders of every
// thread count, at densities where pairs pay and where they do not; the labels and the moments
// gathered as they are written.
TEST(RtsPairs, EveryUnitLayoutAgainstTheReference) {
  const std::uint32_t seed = test_seed();
  SCOPED_TRACE(describe_seed(seed));
  const Extent3 extents[] = {{1, 1, 1},   {1, 1, 9},     {9, 1, 1},   {1, 9, 1},   {2, 2, 2},
                             {3, 5, 7},   {7, 3, 2},     {63, 17, 9}, {64, 6, 5},  {65, 7, 4},
                             {129, 9, 1}, {130, 130, 1}, {5, 130, 1}, {17, 2, 40}, {1, 23, 29}};
  std::uint32_t volume_seed = seed;
  for (const Extent3& extent : extents) {
    for (double density : {0.05, 0.3, 0.6, 0.9}) {
      for (unsigned granularity : {1u, 2u, 3u}) {
        const Volume volume = data::random_granular(extent, density, granularity, volume_seed++);
        const ReferenceLabels reference = reference_label(volume.voxels, volume.extent, 26);
        const std::vector<ComponentMoments> sums =
            test::voxel_sums(reference.labels, volume.extent, reference.component_count);
        for (unsigned threads : kThreadCounts) {
          std::uint32_t components = 0;
          std::vector<ComponentMoments> moments(2);  // replaced
          const std::vector<std::uint32_t> labels =
              label_in_pairs(volume, threads, components, &moments);
          ASSERT_EQ(components, reference.component_count)
              << extent.to_string() << ", density " << density << ", granularity " << granularity
              << ", " << threads << " threads";
          ASSERT_TRUE(test::labels_equal(reference.labels, labels, volume.extent))
              << extent.to_string() << ", density " << density << ", granularity " << granularity
              << ", " << threads << " threads";
          ASSERT_TRUE(test::tables_equal(sums, moments))
              << "moments: " << extent.to_string() << ", density " << density << ", granularity "
              << granularity << ", " << threads << " threads";
        }
      }
    }
  }
}

// Snakes through every border, and contacts by corners only: a diagonal staircase across pairs
// and slices.
TEST(RtsPairs, SnakesAndCornerContacts) {
  Volume staircase{{24, 24, 24}, {}};
  staircase.voxels.assign(staircase.extent.voxel_count(), 0);
  for (std::uint64_t i = 0; i < 24; ++i) staircase.voxels[(i * 24 + i) * 24 + i] = 1;
  for (std::uint64_t i = 0; i + 2 < 24; i += 3) staircase.voxels[(i * 24 + 23 - i) * 24 + i] = 1;
  const Volume volumes[] = {data::hilbert(3, 16), data::spiral({33, 31, 5}), staircase,
                            data::random_granular({40, 12, 11}, 1.0, 1, 1)};
  for (const Volume& volume : volumes) {
    const ReferenceLabels reference = reference_label(volume.voxels, volume.extent, 26);
    for (unsigned threads : kThreadCounts) {
      std::uint32_t components = 0;
      const std::vector<std::uint32_t> labels = label_in_pairs(volume, threads, components);
      ASSERT_EQ(components, reference.component_count) << volume.extent.to_string();
      ASSERT_TRUE(test::labels_equal(reference.labels, labels, volume.extent))
          << volume.extent.to_string() << ", " << threads << " threads";
    }
  }
}

// Pairs are taken where they hold few runs: dense random volumes and granular ones, not sparse
// ones; in images only the dense ones.
TEST(RtsPairs, TakenWhereTheyHoldFewRuns) {
  const Extent3 extent{128, 64, 16};
  const auto pays = [](Extent3 extent, double density, unsigned granularity) {
    const Volume volume = data::random_granular(extent, density, granularity, 7);
    detail::rts::PairScan scan(detail::BinaryVoxels{volume.voxels.data()}, extent, 2);
    scan.pack();
    return scan.pays();
  };
  EXPECT_TRUE(pays(extent, 0.6, 1));
  EXPECT_TRUE(pays(extent, 0.3, 8));
  EXPECT_FALSE(pays(extent, 0.3, 1));
  EXPECT_FALSE(pays(extent, 0.05, 1));
  const Extent3 image{512, 512, 1};
  EXPECT_TRUE(pays(image, 0.7, 1));
  EXPECT_FALSE(pays(image, 0.3, 4));
  EXPECT_FALSE(pays(image, 0.3, 1));
}

// --- label maps ----------------------------------------------------------------------------------

// Labels by a breadth-first search from each unlabeled foreground voxel in raster order, over
// the neighbours of equal value at `connectivity` (4 and 8 as 6 and 26 on one slice).
template <typename T>
std::vector<std::uint32_t> label_map_reference(const std::vector<T>& values, Extent3 extent,
                                               int connectivity, T background) {
  const int volume_connectivity = connectivity == 4 ? 6 : connectivity == 8 ? 26 : connectivity;
  std::vector<std::array<int, 3>> offsets;
  for (int dz = -1; dz <= 1; ++dz) {
    for (int dy = -1; dy <= 1; ++dy) {
      for (int dx = -1; dx <= 1; ++dx) {
        const int distance = std::abs(dx) + std::abs(dy) + std::abs(dz);
        if (distance == 0) continue;
        if (volume_connectivity == 6 && distance > 1) continue;
        if (volume_connectivity == 18 && distance > 2) continue;
        offsets.push_back({dx, dy, dz});
      }
    }
  }
  const std::int64_t nx = extent.x;
  const std::int64_t ny = extent.y;
  const std::int64_t nz = extent.z;
  std::vector<std::uint32_t> labels(values.size(), 0);
  std::vector<std::int64_t> queue;
  std::uint32_t next = 0;
  for (std::int64_t start = 0; start < static_cast<std::int64_t>(values.size()); ++start) {
    if (values[start] == background || labels[start] != 0) continue;
    labels[start] = ++next;
    queue.assign(1, start);
    while (!queue.empty()) {
      const std::int64_t voxel = queue.back();
      queue.pop_back();
      const std::int64_t x = voxel % nx;
      const std::int64_t y = voxel / nx % ny;
      const std::int64_t z = voxel / (nx * ny);
      for (const auto& offset : offsets) {
        const std::int64_t px = x + offset[0];
        const std::int64_t py = y + offset[1];
        const std::int64_t pz = z + offset[2];
        if (px < 0 || py < 0 || pz < 0 || px >= nx || py >= ny || pz >= nz) continue;
        const std::int64_t neighbour = px + nx * (py + ny * pz);
        if (labels[neighbour] != 0 || values[neighbour] != values[voxel]) continue;
        labels[neighbour] = next;
        queue.push_back(neighbour);
      }
    }
  }
  return labels;
}

template <typename T>
::testing::AssertionResult label_map_matches(const std::vector<T>& values, Extent3 extent,
                                             int connectivity, T background, unsigned threads) {
  const std::vector<std::uint32_t> expected =
      label_map_reference(values, extent, connectivity, background);
  std::vector<std::uint32_t> labels(values.size(), 0xDEADBEEFu);
  const LabelResult result = label(LabelInput::values(values.data(), background), extent,
                                   labels.data(), rts_options(connectivity, threads));
  std::uint32_t expected_count = 0;
  for (std::uint32_t label : expected) expected_count = std::max(expected_count, label);
  if (result.component_count != expected_count) {
    return ::testing::AssertionFailure()
           << result.component_count << " components, expected " << expected_count;
  }
  if (auto same = test::labels_equal(expected, labels, extent); !same) return same;
  // Again with the moments, which RTS gathers from its runs, split where the value changes.
  std::vector<ComponentMoments> moments;
  std::vector<std::uint32_t> measured(values.size(), 0xDEADBEEFu);
  label(LabelInput::values(values.data(), background), extent, measured.data(), moments,
        rts_options(connectivity, threads));
  if (auto same = test::labels_equal(expected, measured, extent); !same) {
    return same << " (with statistics)";
  }
  return test::tables_equal(test::voxel_sums(expected, extent, expected_count), moments);
}

// A map of `distinct` values drawn per granularity^3 cell, the first of `palette` standing for
// the background with probability `background_share`.
template <typename T>
std::vector<T> random_map(Extent3 extent, unsigned granularity, const std::vector<T>& palette,
                          double background_share, std::mt19937& random) {
  const std::uint32_t cx = (extent.x + granularity - 1) / granularity;
  const std::uint32_t cy = (extent.y + granularity - 1) / granularity;
  const std::uint32_t cz = (extent.z + granularity - 1) / granularity;
  std::vector<T> cells(std::uint64_t{cx} * cy * cz);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::uniform_int_distribution<std::size_t> pick(1, palette.size() - 1);
  for (T& cell : cells) cell = unit(random) < background_share ? palette[0] : palette[pick(random)];
  std::vector<T> values(extent.voxel_count());
  for (std::uint32_t z = 0; z < extent.z; ++z) {
    for (std::uint32_t y = 0; y < extent.y; ++y) {
      for (std::uint32_t x = 0; x < extent.x; ++x) {
        values[x + std::uint64_t{extent.x} * (y + std::uint64_t{extent.y} * z)] =
            cells[x / granularity + cx * (y / granularity + std::uint64_t{cy} * (z / granularity))];
      }
    }
  }
  return values;
}

// The background first, then `count` other values, extremes of the type among them.
template <typename T>
std::vector<T> palette_of(T background, std::size_t count, std::mt19937& random) {
  std::vector<T> palette = {background};
  const T extremes[] = {std::numeric_limits<T>::max(), std::numeric_limits<T>::min(), T(0), T(1),
                        static_cast<T>(-1)};
  for (T value : extremes) {
    if (value != background && palette.size() <= count) palette.push_back(value);
  }
  std::uniform_int_distribution<std::uint64_t> any;
  while (palette.size() <= count) {
    const T value = static_cast<T>(any(random));
    if (value != background) palette.push_back(value);
  }
  return palette;
}

template <typename T>
void check_random_maps(std::uint32_t seed) {
  std::mt19937 random(seed);
  // Rows of whole 64-voxel words, of words and a tail, of a tail only (the vector packing's
  // cases, and runs crossing its words).
  const Extent3 extents[] = {{23, 19, 17}, {64, 9, 7},  {5, 70, 1},
                             {1, 1, 30},   {97, 41, 1}, {130, 5, 3}};
  const T backgrounds[] = {T(0), static_cast<T>(-1), std::numeric_limits<T>::min(), T(7)};
  for (const Extent3& extent : extents) {
    for (std::size_t distinct :
         {std::size_t{2}, std::size_t{5}, std::size_t{300}, std::size_t{65536}}) {
      for (unsigned granularity : {1u, 2u, 8u}) {
        const T background = backgrounds[random() % std::size(backgrounds)];
        const std::vector<T> palette = palette_of<T>(background, distinct, random);
        const std::vector<T> values = random_map(extent, granularity, palette, 0.3, random);
        for (int connectivity : connectivities_of(extent)) {
          const unsigned threads = kThreadCounts[random() % 4];
          ASSERT_TRUE(label_map_matches(values, extent, connectivity, background, threads))
              << extent.to_string() << ", " << distinct << " values, granularity " << granularity
              << ", background " << +background << ", " << connectivity << "-connectivity, "
              << threads << " threads";
        }
      }
    }
  }
}

TEST(RtsLabelMaps, RandomMapsOfEveryWidthAndSign) {
  const std::uint32_t seed = test_seed();
  SCOPED_TRACE(describe_seed(seed));
  check_random_maps<std::uint8_t>(seed);
  check_random_maps<std::int8_t>(seed + 1);
  check_random_maps<std::uint16_t>(seed + 2);
  check_random_maps<std::int16_t>(seed + 3);
  check_random_maps<std::uint32_t>(seed + 4);
  check_random_maps<std::int32_t>(seed + 5);
  check_random_maps<std::uint64_t>(seed + 6);
  check_random_maps<std::int64_t>(seed + 7);
}

// Maps of short runs between values go voxel by voxel at 6 and 4 (kernels/rts_voxel_scan.h)
// when no statistics are asked for: at every thread count, so that slab borders fall before,
// inside and after each slice and row; the maps of long runs beside them take the run scan.
TEST(RtsLabelMaps, ShortRunsVoxelByVoxelAtEveryThreadCount) {
  const std::uint32_t seed = test_seed();
  SCOPED_TRACE(describe_seed(seed));
  std::mt19937 random(seed);
  const Extent3 extents[] = {{1, 1, 1},   {1, 1, 9},  {9, 1, 1},   {1, 9, 1},   {3, 5, 7},
                             {33, 17, 9}, {65, 3, 5}, {129, 2, 1}, {5, 130, 1}, {1, 23, 29}};
  for (const Extent3& extent : extents) {
    for (std::size_t distinct : {std::size_t{3}, std::size_t{65536}}) {
      for (unsigned granularity : {1u, 8u}) {
        const std::vector<std::uint32_t> palette = palette_of<std::uint32_t>(0, distinct, random);
        const std::vector<std::uint32_t> values =
            random_map(extent, granularity, palette, 0.2, random);
        const bool voxel_scan = detail::rts::prefers_voxel_scan(
            detail::LabelMapVoxels<std::uint32_t>{values.data(), 0}, detail::rts::RowGrid(extent));
        if (granularity == 8 && extent.x >= 16) {
          EXPECT_FALSE(voxel_scan) << extent.to_string();
        }
        if (granularity == 1 && distinct > 3 && extent.x >= 33) {
          EXPECT_TRUE(voxel_scan) << extent.to_string();
        }
        for (int connectivity : {6, 4}) {
          if (connectivity == 4 && extent.z != 1) continue;
          for (unsigned threads : kThreadCounts) {
            ASSERT_TRUE(label_map_matches(values, extent, connectivity, std::uint32_t{0}, threads))
                << extent.to_string() << ", " << distinct << " values, granularity " << granularity
                << ", " << connectivity << "-connectivity, " << threads << " threads";
          }
        }
      }
    }
  }
}

// Maps whose voxels mostly have the value of the voxel behind them go through the settled scan
// (kernels/rts_settled_scan.h) at 26, 18 and 6 when no statistics are asked for: every type (a
// vector of 16 bytes holds 2 to 16 of its values), rows shorter than a vector and of vectors and a
// tail, backgrounds at the type's extremes, and every thread count, so that slab borders fall
// before, inside and after each slice and row. Each slice is the one behind it with a few voxels
// changed, and now and then shifted by a voxel along x: components join, split and end inside the
// slabs and at their borders. Maps of granularity 1 take the run scan.
template <class T>
void check_settled_maps(std::uint32_t seed) {
  std::mt19937 random(seed);
  const Extent3 extents[] = {{1, 1, 3},  {1, 6, 5},  {7, 1, 9},  {15, 4, 6},  {17, 5, 5},
                             {33, 3, 8}, {64, 3, 5}, {70, 6, 4}, {128, 2, 4}, {130, 2, 3}};
  const T backgrounds[] = {T(0), std::numeric_limits<T>::max(), std::numeric_limits<T>::min()};
  std::size_t settled_maps = 0;
  for (const Extent3& extent : extents) {
    for (const T background : backgrounds) {
      const std::vector<T> palette = palette_of<T>(background, 4, random);
      std::vector<T> values = random_map(Extent3{extent.x, extent.y, 1}, 2, palette, 0.1, random);
      values.resize(extent.voxel_count());
      const std::uint64_t slice = std::uint64_t{extent.x} * extent.y;
      for (std::uint64_t z = 1; z < extent.z; ++z) {
        const bool shifted = random() % 4 == 0;
        for (std::uint64_t i = 0; i < slice; ++i) {
          const std::uint64_t from = shifted && i % extent.x > 0 ? i - 1 : i;
          values[z * slice + i] = random() % 20 == 0 ? palette[random() % palette.size()]
                                                     : values[(z - 1) * slice + from];
        }
      }
      for (int connectivity : {26, 18, 6}) {
        settled_maps +=
            detail::rts::prefers_settled_scan(detail::LabelMapVoxels<T>{values.data(), background},
                                              detail::rts::RowGrid(extent), connectivity);
        for (unsigned threads : kThreadCounts) {
          ASSERT_TRUE(label_map_matches(values, extent, connectivity, background, threads))
              << extent.to_string() << ", background " << +background << ", " << connectivity
              << "-connectivity, " << threads << " threads";
        }
      }
    }
  }
  // Most of them take the settled scan (a map of few slices may not).
  EXPECT_GE(2 * settled_maps, 3 * std::size(extents) * std::size(backgrounds));
  const std::vector<T> palette = palette_of<T>(T(0), 5, random);
  const Extent3 fine{64, 16, 16};
  const std::vector<T> values = random_map(fine, 1, palette, 0.3, random);
  for (int connectivity : {26, 18, 6}) {
    EXPECT_FALSE(detail::rts::prefers_settled_scan(detail::LabelMapVoxels<T>{values.data(), T(0)},
                                                   detail::rts::RowGrid(fine), connectivity));
  }
}

TEST(RtsLabelMaps, SettledVoxelsFirstAtEveryConnectivityAndThreadCount) {
  const std::uint32_t seed = test_seed();
  SCOPED_TRACE(describe_seed(seed));
  check_settled_maps<std::uint8_t>(seed);
  check_settled_maps<std::int8_t>(seed + 1);
  check_settled_maps<std::uint16_t>(seed + 2);
  check_settled_maps<std::int16_t>(seed + 3);
  check_settled_maps<std::uint32_t>(seed + 4);
  check_settled_maps<std::int32_t>(seed + 5);
  check_settled_maps<std::uint64_t>(seed + 6);
  check_settled_maps<std::int64_t>(seed + 7);
}

// The choosers' counts over sampled rows, a vector of voxels at a time, against a count voxel by
// voxel: rows shorter than a vector, of whole vectors and with a tail, of one value, of the
// background alone and of runs of several values beside it.
template <class T>
void check_sampled_row_counts(std::uint32_t seed) {
  std::mt19937 random(seed);
  const T backgrounds[] = {T(0), std::numeric_limits<T>::max()};
  for (const T background : backgrounds) {
    const std::vector<T> palette = palette_of<T>(background, 3, random);
    for (std::uint32_t nx = 1; nx <= 129; nx += nx < 40 ? 1 : nx < 63 ? 23 : nx < 65 ? 1 : 63) {
      detail::rts::SampledRowCounts<T> counts(nx, background);
      detail::rts::SampledRowCounts<T> without_behind(nx, background);
      std::uint64_t foreground = 0, runs = 0, beside_another_value = 0, settled = 0;
      for (int row = 0; row < 40; ++row) {
        std::vector<T> values(nx), behind(nx);
        for (std::uint32_t x = 0; x < nx; ++x) {
          const bool goes_on = x > 0 && random() % 3 > 0;
          values[x] = goes_on ? values[x - 1] : palette[random() % (row % 4 == 0 ? 1 : 4)];
          behind[x] = random() % 2 == 0 ? values[x] : palette[random() % 4];
        }
        counts.add(values.data(), behind.data());
        without_behind.add(values.data(), nullptr);
        for (std::uint32_t x = 0; x < nx; ++x) {
          if (values[x] == background) continue;
          const bool starts = x == 0 || values[x - 1] != values[x];
          ++foreground;
          runs += starts;
          beside_another_value += starts && x > 0 && values[x - 1] != background;
          settled += behind[x] == values[x];
        }
      }
      const std::string where = std::to_string(nx) + " voxels a row";
      EXPECT_EQ(counts.foreground, foreground) << where;
      EXPECT_EQ(counts.runs, runs) << where;
      EXPECT_EQ(counts.beside_another_value, beside_another_value) << where;
      EXPECT_EQ(counts.settled, settled) << where;
      EXPECT_EQ(without_behind.foreground, foreground) << where;
      EXPECT_EQ(without_behind.runs, runs) << where;
      EXPECT_EQ(without_behind.beside_another_value, beside_another_value) << where;
      EXPECT_EQ(without_behind.settled, 0u) << where;
    }
  }
}

TEST(RtsLabelMaps, SampledRowCountsOfEveryWidth) {
  const std::uint32_t seed = test_seed();
  SCOPED_TRACE(describe_seed(seed));
  check_sampled_row_counts<std::uint8_t>(seed);
  check_sampled_row_counts<std::uint16_t>(seed + 1);
  check_sampled_row_counts<std::uint32_t>(seed + 2);
  check_sampled_row_counts<std::uint64_t>(seed + 3);
}

// Maps of thick slices: each row is the row above it with a few voxels changed, and now and then
// shifted by a voxel along x; a slice is a new one, or the one behind with a few voxels changed.
// So most voxels have the value of the voxel above, some of the voxel behind too, and the settled
// scan takes them through both rules, groups of a vector's voxels and single ones, at 26, 18 and
// 6, every type and thread count.
template <class T>
void check_thick_slice_maps(std::uint32_t seed) {
  std::mt19937 random(seed);
  const Extent3 extents[] = {{1, 7, 4},   {5, 9, 3},  {16, 12, 5}, {19, 8, 4},
                             {35, 10, 6}, {66, 7, 3}, {131, 9, 4}};
  const T backgrounds[] = {T(0), std::numeric_limits<T>::max(), std::numeric_limits<T>::min()};
  // Maps whose rows hold at least two vectors of values, and how many take the settled scan:
  // at least half of them. Not those of bytes: a vector of 16 seldom holds no voxel of the value
  // behind it in a new slice, so that they seldom settle above at once.
  std::size_t wide_maps = 0;
  std::size_t settled_maps = 0;
  for (const Extent3& extent : extents) {
    for (const T background : backgrounds) {
      const std::vector<T> palette = palette_of<T>(background, 12, random);
      const std::uint64_t nx = extent.x;
      const bool wide = sizeof(T) > 1 && nx >= 2 * 16 / sizeof(T);
      const std::uint64_t slice = nx * extent.y;
      std::vector<T> values(extent.voxel_count());
      const auto changed = [&](T value) {
        return random() % 60 == 0 ? palette[random() % palette.size()] : value;
      };
      for (std::uint64_t z = 0; z < extent.z; ++z) {
        const bool new_slice = z == 0 || random() % 2 == 0;
        for (std::uint64_t y = 0; y < extent.y; ++y) {
          const std::uint64_t row = z * slice + y * nx;
          const bool shifted = random() % 16 == 0;
          for (std::uint64_t x = 0; x < nx; ++x) {
            if (!new_slice) {
              values[row + x] = changed(values[row + x - slice]);
            } else if (y == 0) {
              values[row + x] = x > 0 && random() % 8 != 0 ? values[row + x - 1]
                                                           : palette[random() % palette.size()];
            } else {
              values[row + x] = changed(values[row + x - nx - (shifted && x > 0 ? 1 : 0)]);
            }
          }
        }
      }
      for (int connectivity : {26, 18, 6}) {
        wide_maps += wide;
        settled_maps += wide && detail::rts::prefers_settled_scan(
                                    detail::LabelMapVoxels<T>{values.data(), background},
                                    detail::rts::RowGrid(extent), connectivity);
        for (unsigned threads : kThreadCounts) {
          ASSERT_TRUE(label_map_matches(values, extent, connectivity, background, threads))
              << extent.to_string() << ", background " << +background << ", " << connectivity
              << "-connectivity, " << threads << " threads";
        }
      }
    }
  }
  EXPECT_GE(2 * settled_maps, wide_maps);
}

TEST(RtsLabelMaps, ThickSlicesSettledAboveAtEveryConnectivityAndThreadCount) {
  const std::uint32_t seed = test_seed();
  SCOPED_TRACE(describe_seed(seed));
  check_thick_slice_maps<std::uint8_t>(seed);
  check_thick_slice_maps<std::int8_t>(seed + 1);
  check_thick_slice_maps<std::uint16_t>(seed + 2);
  check_thick_slice_maps<std::int16_t>(seed + 3);
  check_thick_slice_maps<std::uint32_t>(seed + 4);
  check_thick_slice_maps<std::int32_t>(seed + 5);
  check_thick_slice_maps<std::uint64_t>(seed + 6);
  check_thick_slice_maps<std::int64_t>(seed + 7);
}

// Each slice the one before it shifted by a voxel or none along x and y, a few voxels changed:
// most runs at 26 lie wholly on voxels of their value in the slice behind and meet only that,
// the others partly, at one end or at a changed voxel. Rows of long stripes take the windows,
// rows of short stripes of values side by side the words of columns; rows cross whole words.
TEST(RtsLabelMaps, SlicesShiftedFromTheSliceBehind) {
  const std::uint32_t seed = test_seed();
  SCOPED_TRACE(describe_seed(seed));
  std::mt19937 random(seed);
  const Extent3 extents[] = {{200, 9, 11}, {130, 17, 6}, {64, 5, 9}, {37, 3, 4}};
  for (const Extent3& extent : extents) {
    const std::vector<std::uint16_t> palette = palette_of<std::uint16_t>(0, 3, random);
    std::vector<std::uint16_t> values(extent.voxel_count());
    const auto at = [&](std::uint32_t x, std::uint32_t y, std::uint32_t z) -> std::uint16_t& {
      return values[x + std::uint64_t{extent.x} * (y + std::uint64_t{extent.y} * z)];
    };
    const auto nx = static_cast<int>(extent.x);
    const auto ny = static_cast<int>(extent.y);
    for (std::uint32_t y = 0; y < extent.y; ++y) {
      const int longest = random() % 2 == 0 ? 3 : 70;
      for (int x = 0; x < nx;) {
        const int length = 1 + static_cast<int>(random() % longest);
        const std::uint16_t value = palette[random() % palette.size()];
        for (const int end = std::min(nx, x + length); x < end; ++x) at(x, y, 0) = value;
      }
    }
    for (std::uint32_t z = 1; z < extent.z; ++z) {
      const int dx = static_cast<int>(random() % 3) - 1;
      const int dy = static_cast<int>(random() % 2);
      for (std::uint32_t y = 0; y < extent.y; ++y) {
        for (std::uint32_t x = 0; x < extent.x; ++x) {
          const int from_x = std::clamp(static_cast<int>(x) + dx, 0, nx - 1);
          const int from_y = std::clamp(static_cast<int>(y) + dy, 0, ny - 1);
          at(x, y, z) =
              random() % 50 == 0 ? palette[random() % palette.size()] : at(from_x, from_y, z - 1);
        }
      }
    }
    for (int connectivity : {26, 18, 6}) {
      for (unsigned threads : kThreadCounts) {
        ASSERT_TRUE(label_map_matches(values, extent, connectivity, std::uint16_t{0}, threads))
            << extent.to_string() << ", " << connectivity << "-connectivity, " << threads
            << " threads";
      }
    }
  }
}

// Two values in a checkerboard: every voxel touches the other value by its faces and its own
// value by edges (18, 26) or corners (26 only).
TEST(RtsLabelMaps, TwoValueCheckerboards) {
  const Extent3 extents[] = {{7, 6, 5}, {16, 16, 16}, {9, 8, 1}};
  for (const Extent3& extent : extents) {
    std::vector<std::int64_t> values(extent.voxel_count());
    for (std::uint64_t i = 0; i < values.size(); ++i) {
      const std::uint64_t x = i % extent.x;
      const std::uint64_t y = i / extent.x % extent.y;
      const std::uint64_t z = i / (std::uint64_t{extent.x} * extent.y);
      values[i] = (x + y + z) % 2 == 0 ? std::numeric_limits<std::int64_t>::min() : -1;
    }
    for (std::int64_t background : {std::int64_t{0}, std::int64_t{-1}}) {
      for (int connectivity : connectivities_of(extent)) {
        for (unsigned threads : kThreadCounts) {
          ASSERT_TRUE(label_map_matches(values, extent, connectivity, background, threads))
              << extent.to_string() << ", background " << background << ", " << connectivity << ", "
              << threads;
        }
      }
    }
  }
}

// Two voxels of different values, and of equal values, touching only by a face, an edge or a
// corner, in every direction: different values never join.
TEST(RtsLabelMaps, ContactsByFacesEdgesAndCornersOnly) {
  const Extent3 extent{4, 4, 4};
  for (int dz = -1; dz <= 1; ++dz) {
    for (int dy = -1; dy <= 1; ++dy) {
      for (int dx = -1; dx <= 1; ++dx) {
        if (dx == 0 && dy == 0 && dz == 0) continue;
        for (bool equal : {false, true}) {
          std::vector<std::uint64_t> values(extent.voxel_count(), 5);
          values[1 + 4 * (1 + 4 * 1)] = std::numeric_limits<std::uint64_t>::max();
          values[(1 + dx) + 4 * ((1 + dy) + 4 * (1 + dz))] =
              equal ? std::numeric_limits<std::uint64_t>::max() : 9;
          for (int connectivity : {6, 18, 26}) {
            for (unsigned threads : {1u, 3u}) {
              ASSERT_TRUE(
                  label_map_matches(values, extent, connectivity, std::uint64_t{5}, threads))
                  << dx << ", " << dy << ", " << dz << (equal ? " equal" : " different") << ", "
                  << connectivity;
            }
          }
        }
      }
    }
  }
}

TEST(RtsLabelMaps, BinaryValuesLabelAsTheMask) {
  const Volume volume = data::random_granular({37, 21, 13}, 0.4, 1, 5);
  for (int connectivity : {6, 18, 26}) {
    std::vector<std::uint32_t> from_mask(volume.voxels.size());
    std::vector<std::uint32_t> from_map(volume.voxels.size());
    const LabelOptions options = rts_options(connectivity, 2);
    label(volume.voxels.data(), volume.extent, from_mask.data(), options);
    std::vector<std::uint8_t> ones(volume.voxels.size());
    for (std::size_t i = 0; i < ones.size(); ++i) ones[i] = volume.voxels[i] != 0;
    label(LabelInput::values(ones.data()), volume.extent, from_map.data(), options);
    ASSERT_TRUE(test::labels_equal(from_mask, from_map, volume.extent)) << connectivity;
  }
}

}  // namespace
}  // namespace volccl
