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

namespace {

template <class Label>
Label relabel_labels(Label* labels, Extent3 extent, Label count, const RelabelOptions& options,
                     std::vector<ComponentMoments>* moments) {
  if (labels == nullptr) throw InvalidArgument("volccl::relabel: null label pointer");
  if (moments != nullptr && moments->size() != count) {
    throw InvalidArgument("volccl::relabel: " + std::to_string(moments->size()) +
                          " rows of moments for " + std::to_string(count) + " components");
  }
  const std::uint64_t voxels = extent.voxel_count();
  std::vector<std::uint64_t> sizes(std::uint64_t{count} + 1, 0);
  if (moments != nullptr) {
    for (Label label = 1; label <= count; ++label) sizes[label] = (*moments)[label - 1].count;
  } else {
    for (std::uint64_t i = 0; i < voxels; ++i) {
      if (labels[i] > count) {
        throw InvalidArgument("volccl::relabel: label " + std::to_string(labels[i]) +
                              " above the component count " + std::to_string(count));
      }
      ++sizes[labels[i]];
    }
  }

  std::vector<Label> kept;  // old labels, in the new order
  for (Label label = 1; label <= count; ++label) {
    if (sizes[label] >= options.minimum_size) kept.push_back(label);
  }
  const auto larger = [&](Label a, Label b) {
    return sizes[a] > sizes[b] || (sizes[a] == sizes[b] && a < b);
  };
  if (options.keep_largest > 0 && kept.size() > options.keep_largest) {
    std::vector<Label> order = kept;
    std::nth_element(order.begin(), order.begin() + (options.keep_largest - 1), order.end(),
                     larger);
    const Label last = order[options.keep_largest - 1];
    kept.erase(
        std::remove_if(kept.begin(), kept.end(), [&](Label label) { return larger(last, label); }),
        kept.end());
  }
  if (options.sort_by_size) std::sort(kept.begin(), kept.end(), larger);

  std::vector<Label> renumbering(std::uint64_t{count} + 1, 0);
  for (std::size_t k = 0; k < kept.size(); ++k) renumbering[kept[k]] = static_cast<Label>(k + 1);
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
    for (Label label : kept) reordered.push_back((*moments)[label - 1]);
    *moments = std::move(reordered);
  }
  return static_cast<Label>(kept.size());
}

}  // namespace

std::uint32_t relabel(std::uint32_t* labels, Extent3 extent, std::uint32_t count,
                      const RelabelOptions& options, std::vector<ComponentMoments>* moments) {
  return relabel_labels(labels, extent, count, options, moments);
}

std::uint64_t relabel(std::uint64_t* labels, Extent3 extent, std::uint64_t count,
                      const RelabelOptions& options, std::vector<ComponentMoments>* moments) {
  return relabel_labels(labels, extent, count, options, moments);
}

}  // namespace volccl
