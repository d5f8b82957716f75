// Labeling in slabs: the cut of a volume into slabs past 2^32 voxels, the limits of label(), and
// the labels of every slab thickness (every face position), both label widths and the
// statistics, against the reference labeler, for masks and label maps, on the CPU and, where a
// device exists, on the GPU with small slabs and small memory budgets.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "dispatch/dispatch.h"
#include "reference_labeler.h"
#include "runtime/slab_merge.h"
#include "test_support.h"
#include "volccl/data/generators.h"
#include "volccl/volccl.h"

namespace volccl::test {
namespace {

TEST(SlabPlan, CutsVolumesPastTwoToTheThirtyTwoVoxels) {
  const detail::SlabPlan cube = detail::plan_slabs({2048, 2048, 2048}, max_slab_voxel_count);
  EXPECT_FALSE(cube.along_y());
  EXPECT_EQ(cube.slice_voxels, 2048u * 2048u);
  EXPECT_EQ(cube.depth, 1023u);  // 1024 slices hold 2^32 voxels, two more than a slab takes
  ASSERT_EQ(cube.count(), 3u);
  EXPECT_EQ(cube.first_voxel(2), std::uint64_t{2046} * 2048 * 2048);
  EXPECT_EQ(cube.voxels(2), std::uint64_t{2} * 2048 * 2048);
  EXPECT_EQ(cube.slab_extent(2), (Extent3{2048, 2048, 2}));

  const detail::SlabPlan image = detail::plan_slabs({65536, 65537, 1}, max_slab_voxel_count);
  EXPECT_TRUE(image.along_y());
  EXPECT_EQ(image.slice_voxels, 65536u);
  EXPECT_EQ(image.depth, 65535u);
  ASSERT_EQ(image.count(), 2u);
  EXPECT_EQ(image.first_voxel(1), std::uint64_t{65535} * 65536);
  EXPECT_EQ(image.slab_extent(1), (Extent3{65536, 2, 1}));

  EXPECT_EQ(detail::plan_slabs({10, 10, 100}, 1000).depth, 10u);
  EXPECT_EQ(detail::plan_slabs({10, 10, 100}, 350).depth, 3u);
  EXPECT_EQ(detail::plan_slabs({10, 10, 100}, 5).depth, 1u);  // never less than a slice
  EXPECT_EQ(detail::plan_slabs({10, 10, 7}, 100000).count(), 1u);
}

TEST(SlabLimits, LabelTakesUpToTwoToTheFortyVoxels) {
  LabelOptions options;
  EXPECT_NO_THROW(validate({2048, 2048, 2048}, options));
  EXPECT_NO_THROW(
      validate({std::uint64_t{1} << 14, std::uint64_t{1} << 13, std::uint64_t{1} << 13}, options));
  EXPECT_THROW(
      validate({std::uint64_t{1} << 14, std::uint64_t{1} << 14, (std::uint64_t{1} << 12) + 1},
               options),
      InvalidArgument);
  // A slice (or a row) must fit one slab.
  EXPECT_THROW(validate({std::uint64_t{1} << 16, std::uint64_t{1} << 16, 2}, options),
               InvalidArgument);
  options.connectivity = 8;
  EXPECT_NO_THROW(validate({65536, 65537, 1}, options));
  EXPECT_NO_THROW(validate({max_slab_voxel_count, 1, 1}, options));
  EXPECT_THROW(validate({max_slab_voxel_count + 1, 1, 1}, options), InvalidArgument);
  // No product wraps around: 2^32 x 2^32 x 1 is refused, not taken for 0 voxels.
  EXPECT_THROW(validate({std::uint64_t{1} << 32, std::uint64_t{1} << 32, 1}, options),
               InvalidArgument);
}

TEST(SlabLimits, ThirtyTwoBitLabelsRefuseMoreComponents) {
  EXPECT_NO_THROW(detail::require_label_width<std::uint32_t>(0xFFFFFFFFu, "test"));
  try {
    detail::require_label_width<std::uint32_t>(std::uint64_t{1} << 32, "test");
    ADD_FAILURE() << "2^32 components fit 32-bit labels";
  } catch (const TooManyComponents& error) {
    EXPECT_EQ(error.component_count(), std::uint64_t{1} << 32);
  }
  EXPECT_NO_THROW(detail::require_label_width<std::uint64_t>(std::uint64_t{1} << 40, "test"));
}

// Moments of a slab's voxels in its own coordinates, moved, equal those summed in the volume's.
TEST(SlabMoments, ShiftedRowsEqualSumsInTheVolume) {
  std::mt19937 random(test_seed());
  SCOPED_TRACE(describe_seed(test_seed()));
  for (const bool along_y : {false, true}) {
    const std::uint64_t offset = along_y ? 70000 : 3000000000u;
    ComponentMoments local, moved;
    std::uniform_int_distribution<std::uint32_t> coordinate(0, 999);
    for (int v = 0; v < 50; ++v) {
      std::uint64_t p[3] = {coordinate(random), coordinate(random),
                            along_y ? 0 : coordinate(random)};
      const auto add = [](ComponentMoments& m, const std::uint64_t* q) {
        m.count += 1;
        for (int a = 0; a < 3; ++a) {
          m.sum[a] += q[a];
          m.min[a] = std::min<std::uint32_t>(m.min[a], static_cast<std::uint32_t>(q[a]));
          m.max[a] = std::max<std::uint32_t>(m.max[a], static_cast<std::uint32_t>(q[a]));
        }
        const std::uint64_t products[6] = {q[0] * q[0], q[1] * q[1], q[2] * q[2],
                                           q[0] * q[1], q[0] * q[2], q[1] * q[2]};
        for (int i = 0; i < 6; ++i) m.sum_products[i] += products[i];
      };
      add(local, p);
      p[along_y ? 1 : 2] += offset;
      add(moved, p);
    }
    detail::shift_moments(local, along_y, offset);
    EXPECT_EQ(local, moved) << (along_y ? "along y" : "along z");
  }
}

// The device's rule for a slab's table (final_label_of, a binary search per local label) gives
// the host's table (final_labels), for random volumes cut at every thickness.
TEST(SlabMerge, DeviceTableRuleEqualsTheHostTable) {
  const std::uint32_t seed = test_seed();
  SCOPED_TRACE(describe_seed(seed));
  const Extent3 extent{13, 11, 29};
  for (const double density : {0.3, 0.6}) {
    const data::Volume volume = data::random_granular(extent, density, 1, seed);
    const LabelInput input = LabelInput::binary(volume.voxels.data());
    for (std::uint64_t depth = 1; depth < extent.z; ++depth) {
      const detail::SlabPlan plan = detail::plan_slabs(extent, depth * extent.x * extent.y);
      detail::SlabMerge merge(plan, 26, input);
      for (std::uint64_t s = 0; s < plan.count(); ++s) {
        std::vector<std::uint32_t> local(plan.voxels(s));
        LabelOptions options;
        options.backend = Backend::cpu;
        const LabelResult part = label(volume.voxels.data() + plan.first_voxel(s),
                                       plan.slab_extent(s), local.data(), options);
        merge.add_slab_labels(s, part.component_count, local.data());
      }
      merge.join(2);
      for (std::uint64_t s = 0; s < plan.count(); ++s) {
        const std::vector<std::uint64_t> table = merge.final_labels(s, 2);
        const detail::FaceTable faces = merge.face_table(s);
        for (std::uint64_t l = 1; l < table.size(); ++l) {
          ASSERT_EQ(detail::final_label_of(faces, l), table[l])
              << "density " << density << ", depth " << depth << ", slab " << s << ", label " << l;
        }
      }
    }
  }
}

template <class Label>
std::vector<Label> poisoned(std::uint64_t voxels) {
  return std::vector<Label>(voxels, static_cast<Label>(0xDEADBEEFDEADBEEFull));
}

// A slab test's volume: the reference's labels and its values for label maps.
struct SlabCase {
  std::string name;
  Extent3 extent;
  LabelInput input;
  ReferenceLabels reference;
};

std::uint64_t slices_of(Extent3 extent) { return extent.z == 1 ? extent.y : extent.z; }
std::uint64_t slice_voxels_of(Extent3 extent) {
  return extent.z == 1 ? extent.x : extent.x * extent.y;
}

// Labels `c` with slabs of every thickness, into both widths, with and without statistics, and
// compares each with the reference.
void check_every_thickness(const SlabCase& c, LabelOptions options) {
  const std::uint64_t voxels = c.extent.voxel_count();
  const std::vector<ComponentMoments> sums =
      voxel_sums(c.reference.labels, c.extent, c.reference.component_count);
  const std::vector<std::uint64_t> wide_reference(c.reference.labels.begin(),
                                                  c.reference.labels.end());
  const std::uint64_t slices = slices_of(c.extent);
  for (std::uint64_t depth = 1; depth <= slices; ++depth) {
    options.slab_voxels = depth * slice_voxels_of(c.extent);
    const std::string where = c.name + " " + c.extent.to_string() + " at " +
                              std::to_string(options.connectivity) + " on " +
                              to_string(options.backend) + " with " + to_string(options.algorithm) +
                              ", slabs of " + std::to_string(depth);
    SCOPED_TRACE(where);
    std::vector<std::uint32_t> narrow = poisoned<std::uint32_t>(voxels);
    std::vector<ComponentMoments> statistics;
    const LabelResult result = label(c.input, c.extent, narrow.data(), statistics, options);
    EXPECT_EQ(result.slab_count, (slices + depth - 1) / depth);
    EXPECT_EQ(result.component_count, c.reference.component_count);
    EXPECT_TRUE(labels_equal(c.reference.labels, narrow, c.extent));
    EXPECT_TRUE(tables_equal(sums, statistics));

    std::vector<std::uint64_t> wide = poisoned<std::uint64_t>(voxels);
    std::vector<ComponentMoments> wide_statistics;
    const LabelResult wide_result = label(c.input, c.extent, wide.data(), wide_statistics, options);
    EXPECT_EQ(wide_result.component_count, c.reference.component_count);
    EXPECT_TRUE(tables_equal(sums, wide_statistics));
    const auto differ = std::mismatch(wide.begin(), wide.end(), wide_reference.begin());
    EXPECT_TRUE(differ.first == wide.end())
        << "64-bit labels differ first at voxel " << (differ.first - wide.begin()) << ": "
        << *differ.first << " for " << *differ.second;
  }
}

SlabCase mask_case(const std::string& name, const data::Volume& volume, int connectivity) {
  return {name, volume.extent, LabelInput::binary(volume.voxels.data()),
          reference_label(volume.voxels, volume.extent, connectivity)};
}

// (connectivity, backend)
class SlabLabeling : public ::testing::TestWithParam<std::tuple<int, Backend>> {
 protected:
  void SetUp() override {
    if (backend() == Backend::cuda && !cuda_available()) GTEST_SKIP() << cuda_device_description();
  }
  int connectivity() const { return std::get<0>(GetParam()); }
  Backend backend() const { return std::get<1>(GetParam()); }
  bool is_2d() const { return is_2d_connectivity(connectivity()); }
  // Extents whose slices are images (a 2D image, or a one-slice volume at 6, 18 and 26) or
  // volumes.
  std::vector<Extent3> extents() const {
    if (is_2d()) return {{17, 23, 1}, {1, 9, 1}, {33, 5, 1}};
    return {{9, 7, 13}, {1, 1, 6}, {5, 6, 1}, {16, 3, 5}};
  }
  // Every algorithm that takes the connectivity on the backend.
  std::vector<Algorithm> algorithms() const {
    std::vector<Algorithm> found;
    for (const Algorithm algorithm : all_algorithms()) {
      if (!supports(algorithm, connectivity())) continue;
      if (backend() == Backend::cuda && runs_on_cpu_only(algorithm)) continue;
      found.push_back(algorithm);
    }
    return found;
  }
  LabelOptions options(Algorithm algorithm) const {
    LabelOptions options;
    options.connectivity = connectivity();
    options.backend = backend();
    options.algorithm = algorithm;
    return options;
  }
};

TEST_P(SlabLabeling, MasksOfEveryAlgorithmAtEveryThickness) {
  const std::uint32_t seed = test_seed();
  SCOPED_TRACE(describe_seed(seed));
  for (const Extent3& extent : extents()) {
    std::vector<SlabCase> cases;
    std::vector<data::Volume> volumes;
    volumes.push_back(data::random_granular(extent, 0.5, 1, seed));
    volumes.push_back(data::random_granular(extent, 0.3, 2, seed + 1));
    volumes.push_back(data::checkerboard(extent));
    volumes.push_back(data::spiral(extent));
    volumes.push_back(data::random_granular(extent, 1.0, 1, seed));  // full
    volumes.push_back(data::random_granular(extent, 0.0, 1, seed));  // empty
    const char* names[] = {"random d50 g1", "random d30 g2", "checkerboard",
                           "spiral",        "full",          "empty"};
    for (std::size_t v = 0; v < volumes.size(); ++v) {
      cases.push_back(mask_case(names[v], volumes[v], connectivity()));
    }
    for (const Algorithm algorithm : algorithms()) {
      for (const SlabCase& c : cases) check_every_thickness(c, options(algorithm));
    }
  }
}

// Label maps: values that differ across a face stay apart, equal ones join; extreme values
// and a background other than 0.
TEST_P(SlabLabeling, LabelMapsAtEveryThickness) {
  const std::uint32_t seed = test_seed();
  SCOPED_TRACE(describe_seed(seed));
  std::mt19937 random(seed);
  const std::vector<std::int64_t> values = {std::numeric_limits<std::int64_t>::min(), -1, 7,
                                            std::numeric_limits<std::int64_t>::max()};
  for (const Extent3& extent : extents()) {
    for (const unsigned granularity : {1u, 2u}) {
      std::uniform_int_distribution<std::size_t> pick(0, values.size());
      std::vector<std::int64_t> wide(extent.voxel_count());
      for (std::uint64_t i = 0; i < wide.size(); ++i) {
        const std::uint64_t x = i % extent.x, y = i / extent.x % extent.y,
                            z = i / (extent.x * extent.y);
        // Cells of granularity^3 voxels share a value: draw once per cell.
        const std::uint64_t first = (z - z % granularity) * extent.x * extent.y +
                                    (y - y % granularity) * extent.x + (x - x % granularity);
        if (first == i) {
          const std::size_t k = pick(random);
          wide[i] = k == values.size() ? -1 : values[k];  // -1 is also the background
        } else {
          wide[i] = wide[first];
        }
      }
      const std::int64_t background = 7;
      SlabCase c{"label map g" + std::to_string(granularity), extent,
                 LabelInput::values(wide.data(), background),
                 reference_label_map(wide, extent, connectivity(), background)};
      for (const Algorithm algorithm : algorithms()) {
        if (!supports_label_maps(algorithm)) continue;
        check_every_thickness(c, options(algorithm));
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Connectivities, SlabLabeling,
                         ::testing::Combine(::testing::Values(4, 8, 6, 18, 26),
                                            ::testing::Values(Backend::cpu, Backend::cuda)),
                         [](const ::testing::TestParamInfo<std::tuple<int, Backend>>& info) {
                           return "c" + std::to_string(std::get<0>(info.param)) + "_" +
                                  to_string(std::get<1>(info.param));
                         });

// A budget smaller than the volume needs sends the CUDA backend through slabs, within it, keeping
// on the device between the passes what the budget leaves room for: every slab's labels, the
// whole input, or nothing.
TEST(SlabBudget, GpuStaysWithinMaxGpuMemory) {
  if (!cuda_available()) GTEST_SKIP() << cuda_device_description();
  const std::uint32_t seed = test_seed();
  SCOPED_TRACE(describe_seed(seed));
  struct Budgeted {
    Extent3 extent;
    int connectivity;
    std::uint64_t budget;
    SlabResidency kept;
  };
  const Extent3 volume_extent{301, 257, 190}, image_extent{4099, 3001, 1};
  for (const Budgeted& b :
       {Budgeted{volume_extent, 26, std::uint64_t{96} << 20, SlabResidency::labels},
        Budgeted{volume_extent, 26, std::uint64_t{40} << 20, SlabResidency::input},
        Budgeted{volume_extent, 26, std::uint64_t{20} << 20, SlabResidency::none},
        Budgeted{volume_extent, 6, std::uint64_t{64} << 20, SlabResidency::input},
        Budgeted{volume_extent, 6, std::uint64_t{24} << 20, SlabResidency::none},
        Budgeted{image_extent, 8, std::uint64_t{80} << 20, SlabResidency::labels},
        Budgeted{image_extent, 8, std::uint64_t{40} << 20, SlabResidency::input},
        Budgeted{image_extent, 8, std::uint64_t{16} << 20, SlabResidency::none}}) {
    const data::Volume volume = data::random_granular(b.extent, 0.4, 1, seed);
    const ReferenceLabels reference = reference_label(volume.voxels, volume.extent, b.connectivity);
    LabelOptions options;
    options.backend = Backend::cuda;
    options.connectivity = b.connectivity;
    options.max_gpu_memory = b.budget;
    std::vector<std::uint32_t> labels = poisoned<std::uint32_t>(volume.extent.voxel_count());
    const LabelResult result = label(volume.voxels.data(), volume.extent, labels.data(), options);
    SCOPED_TRACE(volume.extent.to_string() + " at " + std::to_string(b.connectivity) + " within " +
                 std::to_string(b.budget) + " bytes");
    EXPECT_GT(result.slab_count, 2u);
    EXPECT_EQ(result.slab_residency, b.kept) << to_string(result.slab_residency);
    EXPECT_LE(result.peak_device_bytes, b.budget);
    EXPECT_GT(result.peak_device_bytes, 0u);
    EXPECT_EQ(result.component_count, reference.component_count);
    EXPECT_TRUE(labels_equal(reference.labels, labels, volume.extent));
  }
}

}  // namespace
}  // namespace volccl::test
