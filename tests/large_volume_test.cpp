// Volumes of more than 2^32 voxels and more than 2^32 components, on each backend, against
// answers known without labeling: copies of a random block labeled by the reference labeler,
// stacked with a background slice between them (so a copy's labels are the block's, shifted by
// the components of the copies before it), and a checkerboard whose every voxel is a component.
// They need about 80 GB of host memory and minutes of a 16-core machine, so they run only where
// VOLCCL_LARGE_TESTS=1 (the GPU machine: scripts/gpu-check.sh).
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "reference_labeler.h"
#include "test_support.h"
#include "volccl/data/generators.h"
#include "volccl/volccl.h"

namespace volccl::test {
namespace {

bool large_tests_enabled() {
  const char* value = std::getenv("VOLCCL_LARGE_TESTS");
  return value != nullptr && std::string(value) == "1";
}

#define SKIP_UNLESS_LARGE()                                                               \
  if (!large_tests_enabled()) {                                                           \
    GTEST_SKIP() << "needs about 80 GB of host memory: run with VOLCCL_LARGE_TESTS=1 on " \
                    "the GPU machine";                                                    \
  }

// Calls body(begin, end) over [0, count) on every core.
template <class Body>
void on_all_cores(std::uint64_t count, const Body& body) {
  const unsigned workers = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> threads;
  for (unsigned w = 0; w < workers; ++w) {
    threads.emplace_back([&, w] { body(count * w / workers, count * (w + 1) / workers); });
  }
  for (std::thread& thread : threads) thread.join();
}

// `copies` copies of a random block stacked along the slowest axis (z, or y for an image), a
// slice of background after each.
struct StackedBlocks {
  Extent3 block;
  std::uint64_t copies;
  data::Volume volume;
  ReferenceLabels reference;  // of one block

  std::uint64_t period_voxels() const {
    return block.z == 1 ? block.x * (block.y + 1) : block.x * block.y * (block.z + 1);
  }
  // The label voxel i must have.
  std::uint64_t expected(std::uint64_t i) const {
    const std::uint64_t copy = i / period_voxels();
    const std::uint64_t within = i % period_voxels();
    if (copy >= copies || within >= block.voxel_count()) return 0;
    const std::uint32_t label = reference.labels[within];
    return label == 0 ? 0 : label + copy * reference.component_count;
  }
};

StackedBlocks stacked_blocks(Extent3 block, std::uint64_t copies, int connectivity,
                             std::uint32_t seed) {
  StackedBlocks stack{block, copies, {}, {}};
  const data::Volume one = data::random_granular(block, 0.35, 1, seed);
  stack.reference = reference_label(one.voxels, block, connectivity);
  stack.volume.extent = block.z == 1 ? Extent3{block.x, (block.y + 1) * copies, 1}
                                     : Extent3{block.x, block.y, (block.z + 1) * copies};
  stack.volume.voxels.assign(stack.volume.extent.voxel_count(), 0);
  for (std::uint64_t c = 0; c < copies; ++c) {
    std::copy(one.voxels.begin(), one.voxels.end(),
              stack.volume.voxels.begin() + c * stack.period_voxels());
  }
  return stack;
}

// A label buffer filled with a poison by every core (a std::vector's fill of tens of gigabytes
// would take one core tens of seconds).
template <class Label>
struct PoisonedLabels {
  explicit PoisonedLabels(std::uint64_t count) : size(count), data(new Label[count]) {
    on_all_cores(count, [&](std::uint64_t begin, std::uint64_t end) {
      std::fill(data.get() + begin, data.get() + end, static_cast<Label>(0xDEADBEEFDEADBEEFull));
    });
  }
  Label operator[](std::uint64_t i) const { return data[i]; }
  std::uint64_t size;
  std::unique_ptr<Label[]> data;
};

template <class Label>
void expect_stacked_labels(const StackedBlocks& stack, const PoisonedLabels<Label>& labels,
                           const LabelResult& result, const std::string& where) {
  EXPECT_EQ(result.component_count, stack.reference.component_count * stack.copies) << where;
  std::atomic<std::uint64_t> wrong{0}, first_wrong{~std::uint64_t{0}};
  on_all_cores(labels.size, [&](std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t i = begin; i < end; ++i) {
      if (labels[i] != stack.expected(i)) {
        if (wrong++ == 0) first_wrong = i;
      }
    }
  });
  EXPECT_EQ(wrong.load(), 0u) << where << ": first wrong voxel " << first_wrong.load();
}

Backend backend_under_test(bool cuda) { return cuda ? Backend::cuda : Backend::cpu; }

// 2049 x 2048 x 1024 voxels (2^32 + 2^22).
StackedBlocks volume_stack(int connectivity, std::uint32_t seed) {
  return stacked_blocks({2049, 2048, 31}, 32, connectivity, seed);
}

// 65536 x 65537 pixels (2^32 + 2^16).
StackedBlocks image_stack(int connectivity, std::uint32_t seed) {
  StackedBlocks stack = stacked_blocks({65536, 1023, 1}, 64, connectivity, seed);
  // One more row of background: 65537 rows.
  stack.volume.extent.y += 1;
  stack.volume.voxels.resize(stack.volume.extent.voxel_count(), 0);
  return stack;
}

// The volume stack in default slabs, and thin ones whose faces cut
// through the blocks, at 26 and 6, into 32-bit labels; statistics once.
TEST(LargeVolumes, VolumePastTwoToTheThirtyTwoVoxels) {
  SKIP_UNLESS_LARGE();
  const std::uint32_t seed = test_seed();
  SCOPED_TRACE(describe_seed(seed));
  for (const int connectivity : {26, 6}) {
    const StackedBlocks stack = volume_stack(connectivity, seed);
    ASSERT_GT(stack.volume.extent.voxel_count(), std::uint64_t{1} << 32);
    for (const bool cuda : {true, false}) {
      if (cuda && !cuda_available()) continue;
      for (const std::uint64_t slab_slices : {std::uint64_t{0}, std::uint64_t{100}}) {
        LabelOptions options;
        options.connectivity = connectivity;
        options.backend = backend_under_test(cuda);
        options.slab_voxels = slab_slices * 2049 * 2048;
        const PoisonedLabels<std::uint32_t> labels(stack.volume.extent.voxel_count());
        const LabelResult result =
            label(stack.volume.voxels.data(), stack.volume.extent, labels.data.get(), options);
        const std::string where = std::to_string(connectivity) + " on " +
                                  to_string(options.backend) + ", slabs of " +
                                  std::to_string(slab_slices) + " slices";
        EXPECT_GT(result.slab_count, 1u) << where;
        expect_stacked_labels(stack, labels, result, where);
      }
    }
  }
}

TEST(LargeVolumes, StatisticsOfAVolumePastTwoToTheThirtyTwoVoxels) {
  SKIP_UNLESS_LARGE();
  if (!cuda_available()) GTEST_SKIP() << cuda_device_description();
  const std::uint32_t seed = test_seed();
  SCOPED_TRACE(describe_seed(seed));
  const StackedBlocks stack = volume_stack(26, seed);
  const std::vector<ComponentMoments> block_sums =
      voxel_sums(stack.reference.labels, stack.block, stack.reference.component_count);
  LabelOptions options;
  options.backend = Backend::cuda;
  const PoisonedLabels<std::uint64_t> labels(stack.volume.extent.voxel_count());
  std::vector<ComponentMoments> statistics;
  label(stack.volume.voxels.data(), stack.volume.extent, labels.data.get(), statistics, options);
  ASSERT_EQ(statistics.size(), block_sums.size() * stack.copies);
  std::uint64_t wrong = 0;
  for (std::uint64_t c = 0; c < stack.copies; ++c) {
    for (std::size_t l = 0; l < block_sums.size(); ++l) {
      ComponentMoments moved = block_sums[l];
      // The copy starts (block.z + 1) * c slices up: z' = z + t.
      const std::uint64_t t = (stack.block.z + 1) * c;
      moved.sum_products[2] += 2 * t * moved.sum[2] + moved.count * t * t;
      moved.sum_products[4] += t * moved.sum[0];
      moved.sum_products[5] += t * moved.sum[1];
      moved.sum[2] += moved.count * t;
      moved.min[2] += static_cast<std::uint32_t>(t);
      moved.max[2] += static_cast<std::uint32_t>(t);
      if (!(statistics[c * block_sums.size() + l] == moved)) ++wrong;
    }
  }
  EXPECT_EQ(wrong, 0u);
}

// The image stack at 8 and 4, in row slabs.
TEST(LargeVolumes, ImagePastTwoToTheThirtyTwoPixels) {
  SKIP_UNLESS_LARGE();
  const std::uint32_t seed = test_seed();
  SCOPED_TRACE(describe_seed(seed));
  for (const int connectivity : {8, 4}) {
    const StackedBlocks stack = image_stack(connectivity, seed);
    ASSERT_GT(stack.volume.extent.voxel_count(), std::uint64_t{1} << 32);
    // The CPU takes the slab code of the GPU's tests above: thin slabs only.
    for (const bool cuda : {true, false}) {
      if (cuda && !cuda_available()) continue;
      for (const std::uint64_t slab_rows : {std::uint64_t{0}, std::uint64_t{3001}}) {
        if (!cuda && slab_rows == 0) continue;
        LabelOptions options;
        options.connectivity = connectivity;
        options.backend = backend_under_test(cuda);
        options.slab_voxels = slab_rows * 65536;
        const PoisonedLabels<std::uint64_t> labels(stack.volume.extent.voxel_count());
        const LabelResult result =
            label(stack.volume.voxels.data(), stack.volume.extent, labels.data.get(), options);
        const std::string where = std::to_string(connectivity) + " on " +
                                  to_string(options.backend) + ", slabs of " +
                                  std::to_string(slab_rows) + " rows";
        expect_stacked_labels(stack, labels, result, where);
      }
    }
  }
}

// Every CUDA labeler at every connectivity it takes, on the stacks above in slabs as thick as the
// device's memory allows: past 2^31 voxels on an 80 GB GPU, and on one of 141 GB the most a
// labeler's 32-bit indices address (1023 slices, 65535 rows, just under 2^32).
TEST(LargeVolumes, EveryCudaLabelerPastTwoToTheThirtyTwoVoxels) {
  SKIP_UNLESS_LARGE();
  if (!cuda_available()) GTEST_SKIP() << cuda_device_description();
  const std::uint32_t seed = test_seed();
  SCOPED_TRACE(describe_seed(seed));
  for (const int connectivity : {26, 18, 6, 8, 4}) {
    const StackedBlocks stack = is_2d_connectivity(connectivity) ? image_stack(connectivity, seed)
                                                                 : volume_stack(connectivity, seed);
    for (const Algorithm algorithm : all_algorithms()) {
      if (!supports(algorithm, connectivity) || !runs_on(algorithm, Backend::cuda)) continue;
      LabelOptions options;
      options.connectivity = connectivity;
      options.backend = Backend::cuda;
      options.algorithm = algorithm;
      const PoisonedLabels<std::uint32_t> labels(stack.volume.extent.voxel_count());
      const LabelResult result =
          label(stack.volume.voxels.data(), stack.volume.extent, labels.data.get(), options);
      const std::string where = to_string(algorithm) + " at " + std::to_string(connectivity);
      EXPECT_EQ(result.algorithm_used, algorithm) << where;
      EXPECT_GE(result.slab_count, 2u) << where;
      expect_stacked_labels(stack, labels, result, where);
    }
  }
}

// A checkerboard of 2048 x 2048 x 2049 voxels at 6: 2^32 + 2^21 components, each one voxel,
// into 64-bit labels; label i + 1 for the i-th foreground voxel. The GPU only: the CPU labels
// the same code path in the tests above.
TEST(LargeVolumes, MoreThanTwoToTheThirtyTwoComponents) {
  SKIP_UNLESS_LARGE();
  if (!cuda_available()) GTEST_SKIP() << cuda_device_description();
  const Extent3 extent{2048, 2048, 2049};
  std::vector<std::uint8_t> mask(extent.voxel_count());
  on_all_cores(mask.size(), [&](std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t i = begin; i < end; ++i) {
      const std::uint64_t x = i % 2048, y = i / 2048 % 2048, z = i / (2048 * 2048);
      mask[i] = (x + y + z) % 2 == 0;
    }
  });
  LabelOptions options;
  options.connectivity = 6;
  options.backend = Backend::cuda;
  std::optional<PoisonedLabels<std::uint64_t>> labels(std::in_place, extent.voxel_count());
  const LabelResult result = label(mask.data(), extent, labels->data.get(), options);
  const std::uint64_t foreground = extent.voxel_count() / 2;
  EXPECT_GT(result.component_count, std::uint64_t{1} << 32);
  EXPECT_EQ(result.component_count, foreground);
  std::atomic<std::uint64_t> wrong{0}, first_wrong{~std::uint64_t{0}};
  on_all_cores(labels->size, [&](std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t i = begin; i < end; ++i) {
      const std::uint64_t x = i % 2048, y = i / 2048 % 2048, z = i / (2048 * 2048);
      const std::uint64_t row = z * 2048 + y;
      const std::uint64_t parity = (y + z) % 2;
      // Each row of 2048 holds 1024 foreground voxels, from x = parity on every other one.
      const std::uint64_t expected =
          (x + y + z) % 2 == 0 ? row * 1024 + (x + 1 - parity) / 2 + 1 : 0;
      if ((*labels)[i] != expected && wrong++ == 0) first_wrong = i;
    }
  });
  EXPECT_EQ(wrong.load(), 0u) << "first wrong voxel " << first_wrong.load();
  labels.reset();
  // 32-bit labels cannot number them: refused, once the count is known.
  const PoisonedLabels<std::uint32_t> narrow(extent.voxel_count());
  EXPECT_THROW(label(mask.data(), extent, narrow.data.get(), options), TooManyComponents);
}

}  // namespace
}  // namespace volccl::test
