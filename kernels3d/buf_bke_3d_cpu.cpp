// CPU backend of the 3D block-based labelers: the per-block steps of block_logic_3d.h run over
// rows of blocks split among threads, one fork-join per kernel of the GPU version, with the
// same atomics, so both backends produce the same labels.
#include <cstdint>

#include "backends.h"
#include "buf_bke_steps.h"
#include "cpu_parallel.h"
#include "kernels3d/block_logic_3d.h"

namespace volccl::detail {
namespace {

using kernels3d::BlockGrid;

template <class Step>
void for_each_block(const BlockGrid& grid, unsigned threads, const Step& step) {
  const std::uint64_t block_rows = std::uint64_t{grid.blocks_y} * grid.blocks_z;
  parallel_for(block_rows, threads, [&](std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t r = begin; r < end; ++r) {
      const auto k = static_cast<std::uint32_t>(r / grid.blocks_y);
      const auto j = static_cast<std::uint32_t>(r % grid.blocks_y);
      for (std::uint32_t i = 0; i < grid.blocks_x; ++i) {
        step(grid, kernels3d::block_at(grid, i, j, k));
      }
    }
  });
}

}  // namespace

LabelResult label_buf_bke_3d_cpu(const std::uint8_t* mask, Extent3 extent, std::uint32_t* labels,
                                 const LabelOptions& options) {
  HostLabeling labeling(extent, options);
  const BlockGrid grid = kernels3d::make_block_grid(extent);
  const auto run = [&](const auto& step) { for_each_block(grid, labeling.threads(), step); };
  return label_buf_bke<kernels3d::BufBkeSteps>(labeling, run, mask, labels, options.algorithm);
}

}  // namespace volccl::detail
