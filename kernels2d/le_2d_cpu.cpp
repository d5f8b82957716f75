// CPU backend of LE, Label Equivalence (le_logic_2d.h): the per-pixel steps over the image's
// rows split among threads, one fork-join per kernel of the GPU version, with the same atomics.
// The Scans read the labels as the previous Analysis left them, as the GPU's do, so both take
// the same number of iterations.
#include <atomic>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "kernels2d/le_logic_2d.h"
#include "kernels2d/le_tm_statistics_2d_cpu.h"
#include "runtime/cpu_parallel.h"
#include "runtime/labeler.h"

namespace volccl::detail {
namespace {

using kernels2d::Pixel;
using kernels2d::PixelGrid;

// Applies `step` to every pixel; returns whether any call returned true (a Scan's change).
template <class Step>
bool for_each_pixel(const PixelGrid& grid, unsigned threads, const Step& step) {
  std::atomic<bool> changed{false};
  parallel_for(grid.height, threads, [&](std::uint64_t begin, std::uint64_t end) {
    bool chunk_changed = false;
    for (auto y = static_cast<std::uint32_t>(begin); y < end; ++y) {
      const std::uint32_t row_start = y * grid.width;
      for (std::uint32_t x = 0; x < grid.width; ++x) {
        if constexpr (std::is_same_v<decltype(step(grid, Pixel{x, y, row_start + x})), bool>) {
          chunk_changed |= step(grid, Pixel{x, y, row_start + x});
        } else {
          step(grid, Pixel{x, y, row_start + x});
        }
      }
    }
    if (chunk_changed) changed.store(true, std::memory_order_relaxed);
  });
  return changed.load(std::memory_order_relaxed);
}

template <int Connectivity>
LabelResult label_le(HostLabeling& labeling, HostPixelStatistics& statistics, const PixelGrid& grid,
                     const std::uint8_t* mask, std::uint32_t* labels) {
  const auto run = [&](const auto& step) { for_each_pixel(grid, labeling.threads(), step); };
  const auto scan = [&](const auto& step) {
    return for_each_pixel(grid, labeling.threads(), step);
  };
  return kernels2d::label_le<Connectivity>(labeling, statistics, run, scan, mask, labels);
}

}  // namespace

LabelResult label_le_2d_cpu(const HostLabelCall& call) {
  const std::uint8_t* const mask = call.mask;
  std::uint32_t* const labels = call.labels;
  HostLabeling labeling(call.extent, call.options);
  const PixelGrid grid = kernels2d::make_pixel_grid(call.extent);
  HostPixelStatistics statistics(labeling, grid, mask, labels, call.statistics);
  return call.options.connectivity == 4 ? label_le<4>(labeling, statistics, grid, mask, labels)
                                        : label_le<8>(labeling, statistics, grid, mask, labels);
}

}  // namespace volccl::detail
