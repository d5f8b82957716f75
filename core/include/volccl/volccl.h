// volccl: connected-component labeling of 3D volumes and 2D images on NVIDIA GPUs and CPUs.
//
//   std::vector<std::uint32_t> labels(extent.voxel_count());
//   volccl::LabelResult r = volccl::label(mask.data(), extent, labels.data());
//   // labels: 0 background, 1..r.component_count in raster order of each component's first
//   // voxel, byte-identical to ITK's ConnectedComponentImageFilter and scipy.ndimage.label.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "volccl/error.h"
#include "volccl/statistics.h"
#include "volccl/types.h"

namespace volccl {

// Labels the foreground (non-zero bytes) of `mask`, x fastest, then y, then z, into `labels`
// (voxel_count() elements, host memory). Picks the backend of options.backend; with the CUDA
// backend the input is copied to the device and the labels back, and both copies are timed.
// Throws InvalidArgument, NoCudaDevice, CudaError or OutOfDeviceMemory.
LabelResult label(const std::uint8_t* mask, Extent3 extent, std::uint32_t* labels,
                  const LabelOptions& options = {});

// Labels as above and measures every component: `statistics` is replaced by component_count
// rows, row i for label i + 1 (volccl/statistics.h). On the GPU by
// options.statistics_strategy; timed as StepTimings::statistics_ms. Throws as above, and
// InvalidArgument for a strategy the algorithm lacks or a volume whose sums could overflow.
LabelResult label(const std::uint8_t* mask, Extent3 extent, std::uint32_t* labels,
                  std::vector<ComponentMoments>& statistics, const LabelOptions& options = {});

// Labels `input` (a mask or a label map, host memory; volccl/types.h) into `labels`. A label
// map's components are the connected regions of equal value, numbered as
// cc3d.connected_components and skimage.measure.label number them; the algorithm must take label
// maps (supports_label_maps(); `automatic` picks one). Throws as above.
LabelResult label(const LabelInput& input, Extent3 extent, std::uint32_t* labels,
                  const LabelOptions& options = {});
LabelResult label(const LabelInput& input, Extent3 extent, std::uint32_t* labels,
                  std::vector<ComponentMoments>& statistics, const LabelOptions& options = {});

// The same into 64-bit labels, for more components than 32 bits number. Every overload takes
// volumes of up to max_voxel_count voxels; the 32-bit ones throw TooManyComponents, after
// labeling, when the components outnumber their labels.
LabelResult label(const std::uint8_t* mask, Extent3 extent, std::uint64_t* labels,
                  const LabelOptions& options = {});
LabelResult label(const std::uint8_t* mask, Extent3 extent, std::uint64_t* labels,
                  std::vector<ComponentMoments>& statistics, const LabelOptions& options = {});
LabelResult label(const LabelInput& input, Extent3 extent, std::uint64_t* labels,
                  const LabelOptions& options = {});
LabelResult label(const LabelInput& input, Extent3 extent, std::uint64_t* labels,
                  std::vector<ComponentMoments>& statistics, const LabelOptions& options = {});

// The value of each component of a label map: element i for label i + 1, read at the
// component's first voxel. `labels` as label() wrote them for `values`.
template <typename T, typename Label>
std::vector<T> component_values(const T* values, Extent3 extent, const Label* labels,
                                std::uint64_t component_count) {
  std::vector<T> found(component_count);
  std::uint64_t next = 1;  // labels are met first in increasing order
  const std::uint64_t voxels = extent.voxel_count();
  for (std::uint64_t i = 0; i < voxels && next <= component_count; ++i) {
    if (labels[i] == next) found[next++ - 1] = values[i];
  }
  return found;
}

// True when this build has CUDA and the machine has at least one usable device.
bool cuda_available();
// Why cuda_available() is false, or the device's name and compute capability when true.
std::string cuda_device_description();

// The most voxels one labeler takes at once: its voxel indices and "no label" fit in 32 bits.
// volccl::cuda::label() on device memory labels volumes up to this size; label() cuts larger
// ones into slabs of whole slices (z-slices, or rows of a 2D image) no larger than this.
constexpr std::uint64_t max_slab_voxel_count = 0xFFFFFFFEull;
// The largest volume label() takes (2^40 voxels). Each side, and a volume's x*y slice (an
// image's row), must also hold at most max_slab_voxel_count voxels.
constexpr std::uint64_t max_voxel_count = std::uint64_t{1} << 40;

// Throws InvalidArgument unless the extent and connectivity can be labeled by label().
void validate(Extent3 extent, const LabelOptions& options);

}  // namespace volccl
