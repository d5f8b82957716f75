// The device-memory entry points of volccl. Plain C++ (the stream is passed as void*), so this
// header compiles without nvcc; the functions exist only in builds with CUDA
// (VOLCCL_HAS_CUDA is then defined by the volccl::volccl target).
#pragma once

#include <cstdint>
#include <vector>

#include "volccl/statistics.h"
#include "volccl/types.h"

namespace volccl::detail {
class LateBeforeCount;
}

namespace volccl::cuda {

// Labels `device_mask` into `device_labels` (both device memory, voxel_count() elements, aligned
// to 16 bytes as cudaMalloc's pointers are) on `stream` (a cudaStream_t; nullptr is the default
// stream). Returns when the labels are
// complete. options.backend is ignored. Scratch memory comes from the stream-ordered pool,
// which keeps it for the next call.
LabelResult label(const std::uint8_t* device_mask, Extent3 extent, std::uint32_t* device_labels,
                  const LabelOptions& options = {}, void* stream = nullptr);

// A table of ComponentMoments in device memory, row i for label i + 1, allocated from volccl's
// pool on a stream and freed on it. Move-only.
class DeviceMoments {
 public:
  DeviceMoments() = default;
  // `count` empty rows (count 0, sums 0, an empty bounding box), ready on `stream`.
  DeviceMoments(std::uint32_t count, void* stream);
  // `count` rows left unwritten, for a pass that writes every row itself.
  static DeviceMoments unwritten(std::uint32_t count, void* stream);
  ~DeviceMoments();
  DeviceMoments(DeviceMoments&& other) noexcept;
  DeviceMoments& operator=(DeviceMoments&& other) noexcept;
  DeviceMoments(const DeviceMoments&) = delete;
  DeviceMoments& operator=(const DeviceMoments&) = delete;

  ComponentMoments* data() const { return data_; }
  std::uint32_t size() const { return size_; }
  // Copies the table to the host; waits for its stream.
  std::vector<ComponentMoments> to_host() const;

 private:
  friend class detail::LateBeforeCount;  // sizes its table to the count once the count is known
  DeviceMoments(std::uint32_t count, void* stream, bool clear);

  ComponentMoments* data_ = nullptr;
  std::uint32_t size_ = 0;
  void* stream_ = nullptr;
};

// Labels as above and measures every component into `statistics` (replaced; component_count
// rows) by options.statistics_strategy. Throws InvalidArgument for a strategy the algorithm
// lacks (volccl::supports) and OutOfDeviceMemory when Early's node table does not fit.
LabelResult label(const std::uint8_t* device_mask, Extent3 extent, std::uint32_t* device_labels,
                  DeviceMoments& statistics, const LabelOptions& options = {},
                  void* stream = nullptr);

// Labels a mask or a label map in device memory (`input.data` aligned to 16 bytes), as
// volccl::label(const LabelInput&, ...) does on the host; measures when `statistics` is given.
LabelResult label(const LabelInput& device_input, Extent3 extent, std::uint32_t* device_labels,
                  const LabelOptions& options = {}, void* stream = nullptr);
LabelResult label(const LabelInput& device_input, Extent3 extent, std::uint32_t* device_labels,
                  DeviceMoments& statistics, const LabelOptions& options = {},
                  void* stream = nullptr);

// The moments of an existing label image in device memory (0 background, 1..component_count;
// a label's voxels need not be connected; aligned to 16 bytes) by the Late pass. Waits for the
// stream; throws InvalidArgument for a label above component_count.
DeviceMoments measure(const std::uint32_t* device_labels, Extent3 extent,
                      std::uint32_t component_count, void* stream = nullptr);

// The flat index of each label's first voxel into `first` (host memory, `count` elements), for
// labels in device memory numbered 1..count in raster order of their first voxels, as label()
// numbers them. Waits for the stream; throws InvalidArgument for labels not so numbered.
void first_voxels(const std::uint32_t* device_labels, Extent3 extent, std::uint32_t count,
                  std::int64_t* first, void* stream = nullptr);

}  // namespace volccl::cuda
