// volccl::relabel: sizes from the moments or one pass over the labels, the kept components and
// their order from the sizes, then one pass that renumbers.
#include "volccl/relabel.h"

#include <algorithm>
#include <string>
#include <utility>

#include "volccl/error.h"

namespace volccl {

bool relabels(const RelabelOptions& options) {
  return options.minimum_size > 0 || options.keep_largest > 0 || options.sort_by_size;
}

std::uint32_t relabel(std::uint32_t* labels, Extent3 extent, std::uint32_t count,
                      const RelabelOptions& options, std::vector<ComponentMoments>* moments) {
  if (labels == nullptr) throw InvalidArgument("volccl::relabel: null label pointer");
  if (moments != nullptr && moments->size() != count) {
    throw InvalidArgument("volccl::relabel: " + std::to_string(moments->size()) +
                          " rows of moments for " + std::to_string(count) + " components");
  }
  const std::uint64_t voxels = extent.voxel_count();
  std::vector<std::uint64_t> sizes(std::uint64_t{count} + 1, 0);
  if (moments != nullptr) {
    for (std::uint32_t label = 1; label <= count; ++label)
      sizes[label] = (*moments)[label - 1].count;
  } else {
    for (std::uint64_t i = 0; i < voxels; ++i) {
      if (labels[i] > count) {
        throw InvalidArgument("volccl::relabel: label " + std::to_string(labels[i]) +
                              " above the component count " + std::to_string(count));
      }
      ++sizes[labels[i]];
    }
  }

  std::vector<std::uint32_t> kept;  // old labels, in the new order
  for (std::uint32_t label = 1; label <= count; ++label) {
    if (sizes[label] >= options.minimum_size) kept.push_back(label);
  }
  const auto larger = [&](std::uint32_t a, std::uint32_t b) {
    return sizes[a] > sizes[b] || (sizes[a] == sizes[b] && a < b);
  };
  if (options.keep_largest > 0 && kept.size() > options.keep_largest) {
    std::vector<std::uint32_t> order = kept;
    std::nth_element(order.begin(), order.begin() + (options.keep_largest - 1), order.end(),
                     larger);
    const std::uint32_t last = order[options.keep_largest - 1];
    kept.erase(std::remove_if(kept.begin(), kept.end(),
                              [&](std::uint32_t label) { return larger(last, label); }),
               kept.end());
  }
  if (options.sort_by_size) std::sort(kept.begin(), kept.end(), larger);

  std::vector<std::uint32_t> renumbering(std::uint64_t{count} + 1, 0);
  for (std::size_t k = 0; k < kept.size(); ++k)
    renumbering[kept[k]] = static_cast<std::uint32_t>(k + 1);
  for (std::uint64_t i = 0; i < voxels; ++i) {
    if (labels[i] > count) {
      throw InvalidArgument("volccl::relabel: label " + std::to_string(labels[i]) +
                            " above the component count " + std::to_string(count));
    }
    labels[i] = renumbering[labels[i]];
  }
  if (moments != nullptr) {
    std::vector<ComponentMoments> reordered;
    reordered.reserve(kept.size());
    for (std::uint32_t label : kept) reordered.push_back((*moments)[label - 1]);
    *moments = std::move(reordered);
  }
  return static_cast<std::uint32_t>(kept.size());
}

}  // namespace volccl
