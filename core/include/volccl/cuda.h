// The device-memory entry points of volccl. Plain C++ (the stream is passed as void*), so this
// header compiles without nvcc; the functions exist only in builds with CUDA
// (VOLCCL_HAS_CUDA is then defined by the volccl::volccl target).
#pragma once

#include <cstdint>

#include "volccl/types.h"

namespace volccl::cuda {

// Labels `device_mask` into `device_labels` (both device memory, voxel_count() elements) on
// `stream` (a cudaStream_t; nullptr is the default stream). Returns when the labels are
// complete. options.backend is ignored. Scratch memory comes from the stream-ordered pool,
// which keeps it for the next call.
LabelResult label(const std::uint8_t* device_mask, Extent3 extent, std::uint32_t* device_labels,
                  const LabelOptions& options = {}, void* stream = nullptr);

}  // namespace volccl::cuda
