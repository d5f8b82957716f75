// CPU backend of TM, Tile Merging (tm_logic_2d.h): the Local Merge of each tile in a local array,
// its phases as loops over the tile's pixels, the tiles' rows split among threads; Global Merge,
// border and final compression over their items or rows split among threads, one fork-join per
// kernel of the GPU version, with the same atomics.
#include <cstdint>
#include <vector>

#include "kernels2d/le_tm_statistics_2d_cpu.h"
#include "kernels2d/tm_logic_2d.h"
#include "runtime/cpu_parallel.h"
#include "runtime/labeler.h"

namespace volccl::detail {
namespace {

using kernels2d::kTileHeight;
using kernels2d::kTileWidth;
using kernels2d::Pixel;
using kernels2d::PixelGrid;

template <int Connectivity>
LabelResult label_tm(HostLabeling& labeling, HostPixelStatistics& statistics, const PixelGrid& grid,
                     const std::uint8_t* mask, std::uint32_t* labels) {
  const unsigned threads = labeling.threads();
  const auto run_tiles = [&](const auto& step) {
    const std::uint32_t tile_columns = (grid.width + kTileWidth - 1) / kTileWidth;
    const std::uint64_t tile_rows = (std::uint64_t{grid.height} + kTileHeight - 1) / kTileHeight;
    parallel_for(tile_rows, threads, [&](std::uint64_t begin, std::uint64_t end) {
      std::uint32_t local[kTileWidth * kTileHeight];
      for (std::uint64_t tile_y = begin; tile_y < end; ++tile_y) {
        for (std::uint32_t tile_x = 0; tile_x < tile_columns; ++tile_x) {
          const kernels2d::Tile tile =
              kernels2d::tile_at(grid, tile_x, static_cast<std::uint32_t>(tile_y));
          const auto each_pixel = [&](const auto& phase) {
            for (std::uint32_t y = 0; y < tile.height; ++y) {
              for (std::uint32_t x = 0; x < tile.width; ++x) phase(x, y);
            }
          };
          each_pixel(
              [&](std::uint32_t x, std::uint32_t y) { step.initialize(grid, tile, x, y, local); });
          each_pixel(
              [&](std::uint32_t x, std::uint32_t y) { step.merge(grid, tile, x, y, local); });
          each_pixel(
              [&](std::uint32_t x, std::uint32_t y) { step.write(grid, tile, x, y, local); });
        }
      }
    });
  };
  const auto run_items = [&](const auto& step, std::uint64_t count) {
    parallel_for(count, threads, [&](std::uint64_t begin, std::uint64_t end) {
      for (std::uint64_t item = begin; item < end; ++item) step(grid, item);
    });
  };
  const auto run_pixels = [&](const auto& step) {
    parallel_for(grid.height, threads, [&](std::uint64_t begin, std::uint64_t end) {
      for (auto y = static_cast<std::uint32_t>(begin); y < end; ++y) {
        const std::uint32_t row_start = y * grid.width;
        for (std::uint32_t x = 0; x < grid.width; ++x) step(grid, Pixel{x, y, row_start + x});
      }
    });
  };
  return kernels2d::label_tm<Connectivity>(labeling, statistics, run_tiles, run_items, run_pixels,
                                           grid, mask, labels);
}

}  // namespace

LabelResult label_tm_2d_cpu(const HostLabelCall& call) {
  const std::uint8_t* const mask = call.mask;
  std::uint32_t* const labels = call.labels;
  HostLabeling labeling(call.extent, call.options);
  const PixelGrid grid = kernels2d::make_pixel_grid(call.extent);
  HostPixelStatistics statistics(labeling, grid, mask, labels, call.statistics);
  return call.options.connectivity == 4 ? label_tm<4>(labeling, statistics, grid, mask, labels)
                                        : label_tm<8>(labeling, statistics, grid, mask, labels);
}

}  // namespace volccl::detail
