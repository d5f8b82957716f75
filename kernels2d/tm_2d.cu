// CUDA backend of TM, Tile Merging (tm_logic_2d.h): Local Merge with a thread block of
// kTileWidth x kTileHeight threads per tile and the tile's forest in shared memory; Global
// Merge and the border compression with a thread per seam or border pixel; the final Path
// Compression and labeling with a thread per pixel in 32 x 4 thread blocks.
#include <cstdint>

#include "kernels2d/le_tm_statistics_2d.cuh"
#include "kernels2d/pixel_launch.cuh"
#include "kernels2d/tm_logic_2d.h"
#include "runtime/cuda_support.cuh"
#include "runtime/labeler.h"

namespace volccl::detail {
namespace {

using kernels2d::kTileHeight;
using kernels2d::kTileWidth;
using kernels2d::Pixel;
using kernels2d::PixelGrid;

constexpr std::uint32_t kItemThreads = 256;

template <class LocalMerge>
__global__ void merge_tiles(PixelGrid grid, std::uint32_t first_tile_row, LocalMerge step) {
  __shared__ std::uint32_t local[kTileWidth * kTileHeight];
  const kernels2d::Tile tile = kernels2d::tile_at(grid, blockIdx.x, first_tile_row + blockIdx.y);
  const std::uint32_t x = threadIdx.x, y = threadIdx.y;
  const bool inside = x < tile.width && y < tile.height;
  if (inside) step.initialize(grid, tile, x, y, local);
  __syncthreads();
  if (inside) step.merge(grid, tile, x, y, local);
  __syncthreads();
  if (inside) step.write(grid, tile, x, y, local);
}

template <class Step>
__global__ void for_each_item(PixelGrid grid, std::uint64_t count, Step step) {
  const std::uint64_t item = std::uint64_t{blockIdx.x} * kItemThreads + threadIdx.x;
  if (item < count) step(grid, item);
}

template <int Connectivity>
LabelResult label_tm(DeviceLabeling& labeling, PixelStatistics& statistics, const PixelGrid& grid,
                     const std::uint8_t* mask, std::uint32_t* labels) {
  const cudaStream_t stream = labeling.stream();
  const auto run_tiles = [&](const auto& step) {
    const std::uint32_t tile_columns = (grid.width + kTileWidth - 1) / kTileWidth;
    in_slabs((std::uint64_t{grid.height} + kTileHeight - 1) / kTileHeight,
             [&](std::uint64_t first, std::uint32_t rows) {
               merge_tiles<<<dim3(tile_columns, rows), dim3(kTileWidth, kTileHeight), 0, stream>>>(
                   grid, static_cast<std::uint32_t>(first), step);
             });
  };
  const auto run_items = [&](const auto& step, std::uint64_t count) {
    if (count == 0) return;
    const auto blocks = static_cast<std::uint32_t>((count + kItemThreads - 1) / kItemThreads);
    for_each_item<<<blocks, kItemThreads, 0, stream>>>(grid, count, step);
    VOLCCL_CUDA_CHECK(cudaGetLastError());
  };
  const auto run_pixels = [&](const auto& step) { launch_per_pixel(grid, stream, step); };
  return kernels2d::label_tm<Connectivity>(labeling, statistics, run_tiles, run_items, run_pixels,
                                           grid, mask, labels);
}

}  // namespace

LabelResult label_tm_2d_cuda(const DeviceLabelCall& call) {
  const std::uint8_t* const mask = call.mask;
  std::uint32_t* const labels = call.labels;
  DeviceLabeling labeling(call);
  const PixelGrid grid = kernels2d::make_pixel_grid(call.extent);
  PixelStatistics statistics(labeling, grid, mask, labels, call.moments,
                             call.options.statistics_strategy);
  return call.options.connectivity == 4 ? label_tm<4>(labeling, statistics, grid, mask, labels)
                                        : label_tm<8>(labeling, statistics, grid, mask, labels);
}

}  // namespace volccl::detail
