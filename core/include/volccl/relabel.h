// Post-processing users ask of ITK's RelabelComponentImageFilter and cc3d: dust removal, sorting
// by size, keeping the largest components. Plain C++17.
#pragma once

#include <cstdint>
#include <vector>

#include "volccl/statistics.h"
#include "volccl/types.h"

namespace volccl {

struct RelabelOptions {
  std::uint64_t minimum_size = 0;  // components of fewer voxels become background
  std::uint32_t keep_largest =
      0;  // keep only the k largest (ties: the first in raster order); 0 keeps all
  bool sort_by_size = false;  // number the components largest first, ties in label order
};

// Whether `options` change anything.
bool relabels(const RelabelOptions& options);

// Renumbers the labels 1..count of `labels` (voxel_count() elements, host memory) in place:
// removed components become 0, the others 1..kept in label order or, with sort_by_size, largest
// first (RelabelComponentImageFilter's order). Returns the number kept. `moments`, when not
// null, must hold the count rows of these labels; its counts give the sizes and it is reordered
// to the new numbering. Throws InvalidArgument for a label above count.
std::uint32_t relabel(std::uint32_t* labels, Extent3 extent, std::uint32_t count,
                      const RelabelOptions& options,
                      std::vector<ComponentMoments>* moments = nullptr);
std::uint64_t relabel(std::uint64_t* labels, Extent3 extent, std::uint64_t count,
                      const RelabelOptions& options,
                      std::vector<ComponentMoments>* moments = nullptr);

}  // namespace volccl
