// CPU backend of UF and KE, the 2D union-find baselines (uf_ke_logic_2d.h): the per-pixel steps
// over the image's rows split among threads, one fork-join per kernel of the GPU version, with
// the same atomics.
#include <cstdint>

#include "kernels2d/uf_ke_logic_2d.h"
#include "runtime/cpu_parallel.h"
#include "runtime/labeler.h"

namespace volccl::detail {
namespace {

using kernels2d::Pixel;
using kernels2d::PixelGrid;

template <class Step>
void for_each_pixel(const PixelGrid& grid, unsigned threads, const Step& step) {
  parallel_for(grid.height, threads, [&](std::uint64_t begin, std::uint64_t end) {
    for (auto y = static_cast<std::uint32_t>(begin); y < end; ++y) {
      const std::uint32_t row_start = y * grid.width;
      for (std::uint32_t x = 0; x < grid.width; ++x) step(grid, Pixel{x, y, row_start + x});
    }
  });
}

}  // namespace

LabelResult label_uf_ke_2d_cpu(const HostLabelCall& call) {
  HostLabeling labeling(call.extent, call.options);
  const PixelGrid grid = kernels2d::make_pixel_grid(call.extent);
  const auto run = [&](const auto& step) { for_each_pixel(grid, labeling.threads(), step); };
  return kernels2d::label_uf_or_ke(labeling, run, call);
}

}  // namespace volccl::detail
