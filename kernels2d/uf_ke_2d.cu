// CUDA backend of UF and KE, the 2D union-find baselines (uf_ke_logic_2d.h): one thread per
// pixel (pixel_launch.cuh), one kernel per step, then the raster-order ranking of the roots with a
// CUB scan.
#include <cstdint>

#include "kernels2d/pixel_launch.cuh"
#include "kernels2d/uf_ke_logic_2d.h"
#include "runtime/cuda_support.cuh"
#include "runtime/labeler.h"

namespace volccl::detail {

LabelResult label_uf_ke_2d_cuda(const DeviceLabelCall& call) {
  DeviceLabeling labeling(call);
  const kernels2d::PixelGrid grid = kernels2d::make_pixel_grid(call.extent);
  const auto run = [&](const auto& step) { launch_per_pixel(grid, labeling.stream(), step); };
  return kernels2d::label_uf_or_ke(labeling, run, call);
}

}  // namespace volccl::detail
