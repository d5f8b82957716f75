#include "reference_labeler.h"

#include <cstdlib>
#include <stdexcept>
#include <string>

namespace volccl::test {
namespace {

struct Offset {
  int x, y, z;
};

// The neighbours a voxel connects to: for 3D those whose |dx| + |dy| + |dz| is at most 1 (6),
// 2 (18) or 3 (26); for 2D those in the same slice at city-block distance 1 (4) or 2 (8).
std::vector<Offset> neighbour_offsets(Extent3 extent, int connectivity) {
  int max_distance = 0;
  switch (connectivity) {
    case 4:
    case 6:
      max_distance = 1;
      break;
    case 8:
    case 18:
      max_distance = 2;
      break;
    case 26:
      max_distance = 3;
      break;
    default:
      throw std::invalid_argument("reference_label: connectivity " + std::to_string(connectivity) +
                                  " is not 4, 8, 6, 18 or 26");
  }
  const bool planar = connectivity == 4 || connectivity == 8;
  if (planar && extent.z != 1) {
    throw std::invalid_argument("reference_label: 2D connectivity " + std::to_string(connectivity) +
                                " needs z == 1, got " + std::to_string(extent.z));
  }
  std::vector<Offset> offsets;
  for (int dz = -1; dz <= 1; ++dz) {
    for (int dy = -1; dy <= 1; ++dy) {
      for (int dx = -1; dx <= 1; ++dx) {
        const int distance = std::abs(dx) + std::abs(dy) + std::abs(dz);
        if (distance == 0 || distance > max_distance || (planar && dz != 0)) continue;
        offsets.push_back({dx, dy, dz});
      }
    }
  }
  return offsets;
}

// Breadth-first search from each unlabeled foreground voxel in raster order, so each component
// is numbered at its first voxel; `joins(a, b)` says whether the foreground voxel a and its
// neighbour b belong together.
template <class Foreground, class Joins>
ReferenceLabels breadth_first_labels(Extent3 extent, int connectivity, const Foreground& foreground,
                                     const Joins& joins) {
  const std::vector<Offset> offsets = neighbour_offsets(extent, connectivity);
  const auto size_x = static_cast<std::int64_t>(extent.x);
  const auto size_y = static_cast<std::int64_t>(extent.y);
  const auto size_z = static_cast<std::int64_t>(extent.z);
  ReferenceLabels result;
  result.labels.assign(extent.voxel_count(), 0);
  std::vector<std::int64_t> queue;
  for (std::int64_t seed = 0; seed < size_x * size_y * size_z; ++seed) {
    if (!foreground(seed) || result.labels[seed] != 0) continue;
    const std::uint32_t label = ++result.component_count;
    result.labels[seed] = label;
    queue.assign(1, seed);
    for (std::size_t next = 0; next < queue.size(); ++next) {
      const std::int64_t voxel = queue[next];
      const std::int64_t x = voxel % size_x;
      const std::int64_t y = voxel / size_x % size_y;
      const std::int64_t z = voxel / size_x / size_y;
      for (const Offset& offset : offsets) {
        const std::int64_t nx = x + offset.x, ny = y + offset.y, nz = z + offset.z;
        if (nx < 0 || ny < 0 || nz < 0 || nx >= size_x || ny >= size_y || nz >= size_z) continue;
        const std::int64_t neighbour = (nz * size_y + ny) * size_x + nx;
        if (!joins(voxel, neighbour) || result.labels[neighbour] != 0) continue;
        result.labels[neighbour] = label;
        queue.push_back(neighbour);
      }
    }
  }
  return result;
}

}  // namespace

ReferenceLabels reference_label(const std::uint8_t* mask, Extent3 extent, int connectivity) {
  return breadth_first_labels(
      extent, connectivity, [mask](std::int64_t voxel) { return mask[voxel] != 0; },
      [mask](std::int64_t, std::int64_t neighbour) { return mask[neighbour] != 0; });
}

ReferenceLabels reference_label_map(const std::vector<std::int64_t>& values, Extent3 extent,
                                    int connectivity, std::int64_t background) {
  return breadth_first_labels(
      extent, connectivity, [&](std::int64_t voxel) { return values[voxel] != background; },
      [&](std::int64_t voxel, std::int64_t neighbour) {
        return values[neighbour] == values[voxel];
      });
}

}  // namespace volccl::test
