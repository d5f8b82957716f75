// How a labeler reads its input, so that one labeler serves binary masks and label maps: it asks
// whether a voxel is foreground and whether a foreground voxel joins a neighbour. In a mask every
// foreground neighbour joins; in a label map only a neighbour of the same value does. Equality is
// all a label map's value is asked for, so signed and unsigned types of one width share the
// unsigned type's code.
#pragma once

#include <cstdint>

#include "runtime/host_device.h"
#include "volccl/types.h"

namespace volccl::detail {

struct BinaryVoxels {
  // Whether two foreground voxels side by side may belong to different components.
  static constexpr bool kValuesSplitRuns = false;
  const std::uint8_t* mask;
  VOLCCL_HD bool foreground(std::uint32_t voxel) const { return mask[voxel] != 0; }
  // `voxel` is foreground.
  VOLCCL_HD bool joins(std::uint32_t /*voxel*/, std::uint32_t neighbour) const {
    return mask[neighbour] != 0;
  }
};

template <typename T>
struct LabelMapVoxels {
  static constexpr bool kValuesSplitRuns = true;
  const T* values;
  T background;
  VOLCCL_HD bool foreground(std::uint32_t voxel) const { return values[voxel] != background; }
  // `voxel` is foreground, so a neighbour of its value is too.
  VOLCCL_HD bool joins(std::uint32_t voxel, std::uint32_t neighbour) const {
    return values[neighbour] == values[voxel];
  }
};

// Calls run(voxels) with the reader of a label map's values: LabelMapVoxels of the unsigned type
// of the values' width.
template <class Run>
decltype(auto) with_label_map(const LabelInput& input, const Run& run) {
  switch (input.type) {
    case ValueType::uint8:
    case ValueType::int8:
      return run(LabelMapVoxels<std::uint8_t>{static_cast<const std::uint8_t*>(input.data),
                                              static_cast<std::uint8_t>(input.background)});
    case ValueType::uint16:
    case ValueType::int16:
      return run(LabelMapVoxels<std::uint16_t>{static_cast<const std::uint16_t*>(input.data),
                                               static_cast<std::uint16_t>(input.background)});
    case ValueType::uint32:
    case ValueType::int32:
      return run(LabelMapVoxels<std::uint32_t>{static_cast<const std::uint32_t*>(input.data),
                                               static_cast<std::uint32_t>(input.background)});
    default:
      return run(LabelMapVoxels<std::uint64_t>{static_cast<const std::uint64_t*>(input.data),
                                               input.background});
  }
}

}  // namespace volccl::detail
