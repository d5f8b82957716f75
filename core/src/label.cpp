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
  if (options.connectivity != 6 && options.connectivity != 18 && options.connectivity != 26) {
    throw InvalidArgument("volccl: connectivity " + std::to_string(options.connectivity) +
                          " does not exist for volumes; use 6, 18 or 26");
  }
  if (!supports(options.algorithm, options.connectivity)) {
    throw InvalidArgument("volccl: " + to_string(options.algorithm) + " cannot label with " +
                          std::to_string(options.connectivity) +
                          "-connectivity: a 2x2x2 block is one piece only under 26-connectivity; "
                          "use uf (or auto) for 6 and 18");
  }
}

namespace detail {

LabelOptions resolve_algorithm(const LabelOptions& options) {
  LabelOptions resolved = options;
  if (options.algorithm == Algorithm::automatic) {
    resolved.algorithm = options.connectivity == 26 ? Algorithm::buf : Algorithm::uf;
  }
  return resolved;
}

}  // namespace detail

LabelResult label(const std::uint8_t* mask, Extent3 extent, std::uint32_t* labels,
                  const LabelOptions& requested) {
  validate(extent, requested);
  const LabelOptions options = detail::resolve_algorithm(requested);
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
  if (options.algorithm == Algorithm::uf) {
    return detail::label_uf_3d_cpu(mask, extent, labels, options);
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
