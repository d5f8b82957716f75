// volccl::relabel: dust removal, sorting by size and the largest k, against a direct
// computation; the moments follow the labels.
#include <algorithm>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "test_support.h"
#include "volccl/data/generators.h"
#include "volccl/relabel.h"
#include "volccl/volccl.h"

namespace volccl::test {
namespace {

TEST(Relabel, RemovesSortsAndKeepsAsItkWould) {
  const data::Volume volume = data::random_granular({41, 33, 17}, 0.3, 1, test_seed());
  LabelOptions options;
  options.backend = Backend::cpu;
  options.connectivity = 6;
  std::vector<std::uint32_t> labels(volume.extent.voxel_count());
  std::vector<ComponentMoments> moments;
  const auto count = static_cast<std::uint32_t>(
      label(volume.voxels.data(), volume.extent, labels.data(), moments, options).component_count);
  for (std::uint64_t minimum : {0, 1, 2, 5}) {
    for (std::uint32_t largest : {0u, 1u, 7u}) {
      for (bool by_size : {false, true}) {
        RelabelOptions relabeling;
        relabeling.minimum_size = minimum;
        relabeling.keep_largest = largest;
        relabeling.sort_by_size = by_size;
        // The expected numbering, directly: sizes, the kept labels, their order.
        std::vector<std::uint64_t> sizes(count + 1, 0);
        for (std::uint32_t value : labels) ++sizes[value];
        std::vector<std::uint32_t> kept;
        for (std::uint32_t l = 1; l <= count; ++l) {
          if (sizes[l] >= minimum) kept.push_back(l);
        }
        const auto larger = [&](std::uint32_t a, std::uint32_t b) {
          return sizes[a] > sizes[b] || (sizes[a] == sizes[b] && a < b);
        };
        if (largest > 0 && kept.size() > largest) {
          std::vector<std::uint32_t> order = kept;
          std::sort(order.begin(), order.end(), larger);
          order.resize(largest);
          std::sort(order.begin(), order.end());
          kept = order;
        }
        if (by_size) std::sort(kept.begin(), kept.end(), larger);
        std::vector<std::uint32_t> number(count + 1, 0);
        for (std::size_t k = 0; k < kept.size(); ++k) number[kept[k]] = k + 1;

        std::vector<std::uint32_t> relabeled = labels;
        std::vector<ComponentMoments> reordered = moments;
        ASSERT_EQ(relabel(relabeled.data(), volume.extent, count, relabeling, &reordered),
                  kept.size());
        for (std::size_t i = 0; i < labels.size(); ++i) {
          ASSERT_EQ(relabeled[i], number[labels[i]]) << "voxel " << i;
        }
        ASSERT_EQ(reordered.size(), kept.size());
        for (std::size_t k = 0; k < kept.size(); ++k) {
          EXPECT_TRUE(reordered[k] == moments[kept[k] - 1]);
        }
        // Without moments, the sizes come from the labels: the same result.
        std::vector<std::uint32_t> again = labels;
        EXPECT_EQ(relabel(again.data(), volume.extent, count, relabeling), kept.size());
        EXPECT_EQ(again, relabeled);
        // 64-bit labels: the same numbers.
        std::vector<std::uint64_t> wide(labels.begin(), labels.end());
        std::vector<ComponentMoments> wide_moments = moments;
        EXPECT_EQ(
            relabel(wide.data(), volume.extent, std::uint64_t{count}, relabeling, &wide_moments),
            kept.size());
        EXPECT_TRUE(std::equal(wide.begin(), wide.end(), relabeled.begin()));
        EXPECT_EQ(wide_moments.size(), reordered.size());
      }
    }
  }
}

TEST(Relabel, Errors) {
  std::vector<std::uint32_t> labels = {0, 1, 2, 3};
  RelabelOptions options;
  options.sort_by_size = true;
  EXPECT_THROW(relabel(labels.data(), {4, 1, 1}, 2, options), InvalidArgument);
  std::vector<ComponentMoments> two(2);
  EXPECT_THROW(relabel(labels.data(), {4, 1, 1}, 3, options, &two), InvalidArgument);
  EXPECT_FALSE(relabels(RelabelOptions{}));
}

}  // namespace
}  // namespace volccl::test
