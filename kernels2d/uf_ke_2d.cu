// CUDA backend of UF and KE, the 2D union-find baselines (uf_ke_logic_2d.h): one thread per
// pixel (pixel_launch.cuh), one kernel per step, then the raster-order ranking of the roots with a
// CUB scan.
#include <cstdint>

#include "cuda_backends.h"
#include "cuda_support.cuh"
#include "kernels2d/pixel_launch.cuh"
#include "kernels2d/uf_ke_logic_2d.h"

namespace volccl::detail {

LabelResult label_uf_ke_2d_cuda(const std::uint8_t* mask, Extent3 extent, std::uint32_t* labels,
                                const LabelOptions& options, void* stream_handle) {
  DeviceLabeling labeling(extent, options, static_cast<cudaStream_t>(stream_handle));
  const kernels2d::PixelGrid grid = kernels2d::make_pixel_grid(extent);
  const auto run = [&](const auto& step) { launch_per_pixel(grid, labeling.stream(), step); };
  return kernels2d::label_uf_ke(labeling, run, mask, labels, options);
}

}  // namespace volccl::detail
