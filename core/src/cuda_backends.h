// The CUDA labelers behind volccl::cuda::label. Internal; plain C++ declarations.
#pragma once

#include <cstdint>

#include "volccl/types.h"

namespace volccl::detail {

// kernels3d/buf_bke_3d.cu; `stream` is a cudaStream_t.
LabelResult label_buf_bke_3d_cuda(const std::uint8_t* device_mask, Extent3 extent,
                                  std::uint32_t* device_labels, const LabelOptions& options,
                                  void* stream);

}  // namespace volccl::detail
