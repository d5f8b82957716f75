// The CPU's component moments: one pass over the label image after labeling, split into slabs
// of rows, one per worker. A label first seen in a worker's slab (above every label of the slabs
// before it) is summed straight into the shared table, which no other worker writes for it; the
// few labels that come from earlier slabs are summed into the worker's own map and merged
// afterwards. A first, cheap pass finds each slab's largest label to tell the two apart. The
// runs along x are summed in closed form (moments.h), as on the GPU.
#include <algorithm>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/cpu_parallel.h"
#include "runtime/moments.h"
#include "volccl/error.h"
#include "volccl/statistics.h"

namespace volccl {
namespace {

struct Slab {
  std::uint64_t begin_row = 0;
  std::uint64_t end_row = 0;
  std::uint32_t first_new_label = 1;  // labels below it also occur in earlier slabs
  std::unordered_map<std::uint32_t, detail::Moments> earlier;
};

[[noreturn]] void throw_label_above_count(std::uint32_t label, std::uint32_t count) {
  throw InvalidArgument("volccl::measure: the label image holds label " + std::to_string(label) +
                        " but the component count is " + std::to_string(count));
}

}  // namespace

std::vector<ComponentMoments> measure(const std::uint32_t* labels, Extent3 extent,
                                      std::uint32_t component_count, unsigned cpu_threads) {
  validate_statistics(extent);
  if (labels == nullptr) {
    throw InvalidArgument("volccl::measure: null label pointer for a volume of " +
                          extent.to_string());
  }
  std::vector<ComponentMoments> table(component_count);
  const std::uint64_t rows = extent.y * extent.z;
  const std::uint64_t width = extent.x;
  const unsigned workers = static_cast<unsigned>(std::min<std::uint64_t>(
      detail::resolve_thread_count(cpu_threads, extent.voxel_count()), rows));
  std::vector<Slab> slabs(workers);
  for (unsigned w = 0; w < workers; ++w) {
    slabs[w].begin_row = rows * w / workers;
    slabs[w].end_row = rows * (w + 1) / workers;
  }
  const auto each_slab = [&](const auto& body) {
    detail::parallel_for(workers, workers, [&](std::uint64_t begin, std::uint64_t end) {
      for (std::uint64_t w = begin; w < end; ++w) body(slabs[w]);
    });
  };

  std::vector<std::uint32_t> largest(workers, 0);
  each_slab([&](Slab& slab) {
    const std::uint32_t* first = labels + slab.begin_row * width;
    const std::uint32_t* last = labels + slab.end_row * width;
    largest[&slab - slabs.data()] = first == last ? 0 : *std::max_element(first, last);
  });
  std::uint32_t largest_before = 0;
  for (unsigned w = 0; w < workers; ++w) {
    slabs[w].first_new_label = largest_before + 1;
    largest_before = std::max(largest_before, largest[w]);
  }
  if (largest_before > component_count) throw_label_above_count(largest_before, component_count);

  each_slab([&](Slab& slab) {
    for (std::uint64_t row = slab.begin_row; row < slab.end_row; ++row) {
      const std::uint32_t* voxels = labels + row * width;
      const auto y = static_cast<std::uint32_t>(row % extent.y);
      const auto z = static_cast<std::uint32_t>(row / extent.y);
      std::uint64_t x = 0;
      while (x < width) {
        const std::uint32_t label = voxels[x];
        std::uint64_t end = x + 1;
        while (end < width && voxels[end] == label) ++end;
        if (label != 0) {
          const detail::Moments run = detail::run_moments(
              static_cast<std::uint32_t>(x), static_cast<std::uint32_t>(end - x), y, z);
          if (label >= slab.first_new_label) {
            detail::merge(table[label - 1], run);
          } else {
            auto found = slab.earlier.try_emplace(label, detail::no_moments()).first;
            detail::merge(found->second, run);
          }
        }
        x = end;
      }
    }
  });
  for (const Slab& slab : slabs) {
    for (const auto& [label, moments] : slab.earlier) detail::merge(table[label - 1], moments);
  }
  return table;
}

}  // namespace volccl
