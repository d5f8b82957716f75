// The tests' reference labeler: a plain breadth-first search, slow and obviously correct, that
// shares no code with the labelers under test.
#pragma once

#include <cstdint>
#include <vector>

#include "volccl/types.h"

namespace volccl::test {

struct ReferenceLabels {
  std::vector<std::uint32_t> labels;  // 0 background, components 1..component_count
  std::uint32_t component_count = 0;
};

// Labels the non-zero voxels of `mask` (x fastest, then y, then z), numbering the components
// 1..N in raster order of their first voxel. `connectivity` is 6, 18 or 26 for volumes and
// 4 or 8 for images (extent.z == 1). Throws std::invalid_argument for anything else.
ReferenceLabels reference_label(const std::uint8_t* mask, Extent3 extent, int connectivity);

inline ReferenceLabels reference_label(const std::vector<std::uint8_t>& mask, Extent3 extent,
                                       int connectivity) {
  return reference_label(mask.data(), extent, connectivity);
}

// Labels a label map: every connected region of equal value other than `background` is a
// component, numbered as above. The values are widened to int64 (their bits, so every 64-bit
// value keeps its identity).
ReferenceLabels reference_label_map(const std::vector<std::int64_t>& values, Extent3 extent,
                                    int connectivity, std::int64_t background);

}  // namespace volccl::test
