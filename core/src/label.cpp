// volccl::label: checks the request, picks the backend and calls it.
#include <string>

#include "backends.h"
#include "volccl/volccl.h"

namespace volccl {

void validate(Extent3 extent, const LabelOptions& options) {
  if (extent.x == 0 || extent.y == 0 || extent.z == 0) {
    throw InvalidArgument("volccl: cannot label an empty volume of " + extent.to_string() +
                          " voxels; every dimension must be at least 1");
  }
  const std::uint64_t limit = max_voxel_count;
  if (extent.x > limit || extent.y > limit || extent.z > limit || extent.x * extent.y > limit ||
      extent.x * extent.y * extent.z > limit) {
    throw InvalidArgument("volccl: a volume of " + extent.to_string() +
                          " voxels is too large for 32-bit labels (at most " +
                          std::to_string(limit) + " voxels)");
  }
  if (options.connectivity != 26) {
    throw InvalidArgument("volccl: connectivity " + std::to_string(options.connectivity) +
                          " is not supported by " + to_string(options.algorithm) +
                          "; the block-based labelers need 26-connectivity");
  }
}

LabelResult label(const std::uint8_t* mask, Extent3 extent, std::uint32_t* labels,
                  const LabelOptions& options) {
  validate(extent, options);
  if (mask == nullptr || labels == nullptr) {
    throw InvalidArgument("volccl::label: null mask or label pointer for a volume of " +
                          extent.to_string());
  }
  const bool use_cuda = options.backend == Backend::cuda ||
                        (options.backend == Backend::automatic && cuda_available());
  if (use_cuda) {
    if (!cuda_available()) {
      throw NoCudaDevice("volccl: the CUDA backend was requested but " + cuda_device_description());
    }
#if defined(VOLCCL_HAS_CUDA)
    return detail::label_cuda_from_host(mask, extent, labels, options);
#endif
  }
  return detail::label_buf_bke_3d_cpu(mask, extent, labels, options);
}

#if !defined(VOLCCL_HAS_CUDA)
bool cuda_available() { return false; }
std::string cuda_device_description() {
  return "no CUDA device: this build of volccl has no CUDA support (VOLCCL_CUDA=OFF)";
}
#endif

}  // namespace volccl
