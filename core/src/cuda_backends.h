// The CUDA labelers behind volccl::cuda::label. Internal; plain C++ declarations.
#pragma once

#include <cstdint>

#include "volccl/types.h"

namespace volccl::detail {

// kernels3d/buf_bke_3d.cu and kernels3d/uf_3d.cu; `stream` is a cudaStream_t and
// options.algorithm is resolved (not automatic).
LabelResult label_buf_bke_3d_cuda(const std::uint8_t* device_mask, Extent3 extent,
                                  std::uint32_t* device_labels, const LabelOptions& options,
                                  void* stream);
// Picks one of the two below by options.algorithm (core/src/cuda_device.cu).
LabelResult label_3d_cuda(const std::uint8_t* device_mask, Extent3 extent,
                          std::uint32_t* device_labels, const LabelOptions& options, void* stream);
LabelResult label_uf_3d_cuda(const std::uint8_t* device_mask, Extent3 extent,
                             std::uint32_t* device_labels, const LabelOptions& options,
                             void* stream);

}  // namespace volccl::detail
