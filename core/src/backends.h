// The labelers behind volccl::label, one entry point per backend and family. Internal.
#pragma once

#include <cstdint>
#include <vector>

#include "volccl/statistics.h"
#include "volccl/types.h"

namespace volccl::detail {

// The options with Algorithm::automatic replaced by the algorithm it stands for on `backend`
// (cuda or cpu).
LabelOptions resolve_algorithm(const LabelOptions& options, Backend backend);

// Throws InvalidArgument unless the components of `extent` can be measured with the resolved
// options' statistics strategy.
void validate_measuring(Extent3 extent, const LabelOptions& options);

// CPU backends of the 3D labelers (kernels3d/buf_bke_3d_cpu.cpp, kernels3d/uf_3d_cpu.cpp,
// kernels3d/ufb_3d_cpu.cpp, kernels3d/ruf_3d_cpu.cpp; UFB and RUF label with 6 or 18).
LabelResult label_buf_bke_3d_cpu(const std::uint8_t* mask, Extent3 extent, std::uint32_t* labels,
                                 const LabelOptions& options);
LabelResult label_uf_3d_cpu(const std::uint8_t* mask, Extent3 extent, std::uint32_t* labels,
                            const LabelOptions& options);
LabelResult label_ufb_3d_cpu(const std::uint8_t* mask, Extent3 extent, std::uint32_t* labels,
                             const LabelOptions& options);
LabelResult label_ruf_3d_cpu(const std::uint8_t* mask, Extent3 extent, std::uint32_t* labels,
                             const LabelOptions& options);

// CPU backends of the 2D labelers (kernels2d/buf_bke_2d_cpu.cpp, kernels2d/uf_ke_2d_cpu.cpp,
// kernels2d/ha4_2d_cpu.cpp, kernels2d/le_2d_cpu.cpp, kernels2d/tm_2d_cpu.cpp); extent.z == 1
// and connectivity 4 or 8. LE and TM also measure the components into `early_statistics` by the
// Early strategy unless it is null.
LabelResult label_buf_bke_2d_cpu(const std::uint8_t* mask, Extent3 extent, std::uint32_t* labels,
                                 const LabelOptions& options);
LabelResult label_uf_ke_2d_cpu(const std::uint8_t* mask, Extent3 extent, std::uint32_t* labels,
                               const LabelOptions& options);
LabelResult label_ha4_2d_cpu(const std::uint8_t* mask, Extent3 extent, std::uint32_t* labels,
                             const LabelOptions& options);
LabelResult label_le_2d_cpu(const std::uint8_t* mask, Extent3 extent, std::uint32_t* labels,
                            const LabelOptions& options,
                            std::vector<ComponentMoments>* early_statistics);
LabelResult label_tm_2d_cpu(const std::uint8_t* mask, Extent3 extent, std::uint32_t* labels,
                            const LabelOptions& options,
                            std::vector<ComponentMoments>* early_statistics);

// Picks the CPU labeler of options.algorithm (resolved) and options.connectivity (label.cpp);
// passes `early_statistics` to LE and TM.
LabelResult label_on_cpu(const std::uint8_t* mask, Extent3 extent, std::uint32_t* labels,
                         const LabelOptions& options,
                         std::vector<ComponentMoments>* early_statistics);

#if defined(VOLCCL_HAS_CUDA)
// Host memory in and out through the device (core/src/cuda_device.cu); measures the components
// into `statistics` unless it is null.
LabelResult label_cuda_from_host(const std::uint8_t* mask, Extent3 extent, std::uint32_t* labels,
                                 const LabelOptions& options,
                                 std::vector<ComponentMoments>* statistics);
#endif

}  // namespace volccl::detail
