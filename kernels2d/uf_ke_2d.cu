// CUDA backend of UF and KE, the 2D union-find baselines (uf_ke_logic_2d.h): one thread per
// pixel in 32 x 4 thread blocks (a warp reads 32 consecutive pixels of a row), one kernel per
// step, then the raster-order ranking of the roots with a CUB scan.
#include <algorithm>
#include <cstdint>

#include "cuda_backends.h"
#include "cuda_support.cuh"
#include "kernels2d/uf_ke_logic_2d.h"

namespace volccl::detail {
namespace {

using kernels2d::Pixel;
using kernels2d::PixelGrid;

constexpr std::uint32_t kBlockWidth = 32;
constexpr std::uint32_t kBlockRows = 4;
constexpr std::uint32_t kMaxGridRows = 65535;  // gridDim.y

// Rows from `first_row` on; the 64-bit row keeps rows near 2^32 from wrapping around.
template <class Step>
__global__ void for_each_pixel(PixelGrid grid, std::uint32_t first_row, Step step) {
  const std::uint32_t x = blockIdx.x * kBlockWidth + threadIdx.x;
  const std::uint64_t y = std::uint64_t{first_row} + blockIdx.y * kBlockRows + threadIdx.y;
  if (x >= grid.width || y >= grid.height) return;
  const auto row = static_cast<std::uint32_t>(y);
  step(grid, Pixel{x, row, row * grid.width + x});
}

// Tall images (more than 65535 thread-block rows, such as 1 x 1,000,000) take several launches
// of at most 65535.
template <class Step>
void launch_per_pixel(const PixelGrid& grid, cudaStream_t stream, const Step& step) {
  const dim3 threads(kBlockWidth, kBlockRows);
  const auto block_columns =
      static_cast<std::uint32_t>((std::uint64_t{grid.width} + kBlockWidth - 1) / kBlockWidth);
  const std::uint64_t block_rows = (std::uint64_t{grid.height} + kBlockRows - 1) / kBlockRows;
  for (std::uint64_t first = 0; first < block_rows; first += kMaxGridRows) {
    const auto rows =
        static_cast<std::uint32_t>(std::min<std::uint64_t>(kMaxGridRows, block_rows - first));
    for_each_pixel<<<dim3(block_columns, rows), threads, 0, stream>>>(
        grid, static_cast<std::uint32_t>(first * kBlockRows), step);
    VOLCCL_CUDA_CHECK(cudaGetLastError());
  }
}

}  // namespace

LabelResult label_uf_ke_2d_cuda(const std::uint8_t* mask, Extent3 extent, std::uint32_t* labels,
                                const LabelOptions& options, void* stream_handle) {
  DeviceLabeling labeling(extent, options, static_cast<cudaStream_t>(stream_handle));
  const PixelGrid grid = kernels2d::make_pixel_grid(extent);
  const auto run = [&](const auto& step) { launch_per_pixel(grid, labeling.stream(), step); };
  return kernels2d::label_uf_ke(labeling, run, mask, labels, options);
}

}  // namespace volccl::detail
