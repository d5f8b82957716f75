// One thread per pixel of a 2D image, in 32 x 4 thread blocks (a warp reads 32 consecutive pixels
// of a row): the launches of the per-pixel steps of UF, KE, LE and TM. Grids taller than 65535
// thread-block rows (such as a 1 x 1,000,000 image) take several launches.
#pragma once

#include <algorithm>
#include <cstdint>

#include "kernels2d/uf_ke_logic_2d.h"
#include "runtime/cuda_support.cuh"

namespace volccl::detail {

constexpr std::uint32_t kPixelBlockWidth = 32;
constexpr std::uint32_t kPixelBlockRows = 4;
constexpr std::uint32_t kMaxGridRows = 65535;  // gridDim.y

// Calls launch(first, rows) for slabs of at most kMaxGridRows of `block_rows` thread-block rows,
// and checks each launch.
template <class Launch>
void in_slabs(std::uint64_t block_rows, const Launch& launch) {
  for (std::uint64_t first = 0; first < block_rows; first += kMaxGridRows) {
    launch(first,
           static_cast<std::uint32_t>(std::min<std::uint64_t>(kMaxGridRows, block_rows - first)));
    VOLCCL_CUDA_CHECK(cudaGetLastError());
  }
}

// Calls launch(blocks, threads, first_row) once per slab of the per-pixel grid of `grid`.
template <class Launch>
void launch_pixel_slabs(const kernels2d::PixelGrid& grid, const Launch& launch) {
  const auto block_columns = static_cast<std::uint32_t>(
      (std::uint64_t{grid.width} + kPixelBlockWidth - 1) / kPixelBlockWidth);
  in_slabs((std::uint64_t{grid.height} + kPixelBlockRows - 1) / kPixelBlockRows,
           [&](std::uint64_t first, std::uint32_t rows) {
             launch(dim3(block_columns, rows), dim3(kPixelBlockWidth, kPixelBlockRows),
                    static_cast<std::uint32_t>(first * kPixelBlockRows));
           });
}

// The pixel of this thread in a slab starting at `first_row`; false outside the image. The
// 64-bit row keeps rows near 2^32 from wrapping around.
__device__ inline bool pixel_at(const kernels2d::PixelGrid& grid, std::uint32_t first_row,
                                kernels2d::Pixel* pixel) {
  const std::uint32_t x = blockIdx.x * kPixelBlockWidth + threadIdx.x;
  const std::uint64_t y = std::uint64_t{first_row} + blockIdx.y * kPixelBlockRows + threadIdx.y;
  const auto row = static_cast<std::uint32_t>(y);
  *pixel = kernels2d::Pixel{x, row, row * grid.width + x};
  return x < grid.width && y < grid.height;
}

template <class Step>
__global__ void for_each_pixel(kernels2d::PixelGrid grid, std::uint32_t first_row, Step step) {
  kernels2d::Pixel pixel;
  if (pixel_at(grid, first_row, &pixel)) step(grid, pixel);
}

// step(grid, pixel) for every pixel of the image, on `stream`.
template <class Step>
void launch_per_pixel(const kernels2d::PixelGrid& grid, cudaStream_t stream, const Step& step) {
  launch_pixel_slabs(grid, [&](dim3 blocks, dim3 threads, std::uint32_t first_row) {
    for_each_pixel<<<blocks, threads, 0, stream>>>(grid, first_row, step);
  });
}

}  // namespace volccl::detail
