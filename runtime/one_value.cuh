// Whether a label map on the device holds one foreground value, found while its labeler's first
// kernel runs, and then its mask (runtime/one_value.cu). Internal.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <optional>

#include "runtime/cuda_support.cuh"
#include "volccl/types.h"

namespace volccl::detail {

// What the check's blocks found, all ones before they start: the lowest foreground value and the
// lowest complement of one (of the highest), as unsigned bits; `single`, cleared by a block whose
// threads saw two values; and how many blocks have stopped.
struct ValueRange {
  unsigned long long lowest;
  unsigned long long highest_complement;
  unsigned int single;
  unsigned int blocks_stopped;
};

// 8-bit values with background 0 are their own mask (non-zero is foreground): the check writes
// a mask for every other label map.
inline bool is_own_mask(const LabelInput& input) {
  return size_of(input.type) == 1 && static_cast<std::uint8_t>(input.background) == 0;
}

// Once the check has run: its foreground holds one value, or none.
__device__ __forceinline__ bool holds_one_value(const ValueRange* range) {
  return range->single != 0 && range->lowest >= ~range->highest_complement;
}

// The check of a label map of `voxels` values on the device, enqueued on `stream` when made; it
// writes the map's mask as it reads the values, where the values are wider than a byte or the
// background is not 0 and the mask fits. A labeler that consults it
// (Labelers::cuda_consults_one_value) hands range() to its first kernel, which stops at once
// where the map holds one value, and asks holds_one_value() once that kernel is enqueued, while
// the device runs it.
class OneValueCheck {
 public:
  OneValueCheck(const LabelInput& input, std::uint64_t voxels, cudaStream_t stream);
  OneValueCheck(const OneValueCheck&) = delete;
  OneValueCheck& operator=(const OneValueCheck&) = delete;
  const ValueRange* range() const { return range_.data(); }
  // Waits for the check alone (not for what the stream holds after it); where the map holds
  // several values, frees the mask.
  bool holds_one_value();
  // Where the map holds one value: its mask (the map's own bytes, or the one the check wrote), or
  // null where that did not fit on the device.
  const std::uint8_t* mask() const;

 private:
  LabelInput input_;
  DeviceBuffer<ValueRange> range_;
  std::optional<DeviceBuffer<std::uint8_t>> mask_;
  PinnedWord verdict_;  // written by the check's last block: 1 for one value, 2 for several
  std::optional<bool> one_value_;  // the verdict, once read
  LeasedEvent checked_;            // recorded after the check
};

}  // namespace volccl::detail
