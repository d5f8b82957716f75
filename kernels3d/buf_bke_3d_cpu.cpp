// CPU backend of the 3D block-based labelers: the per-block steps of kernels/block_forest.h on
// block_logic_3d.h's blocks run over rows of blocks split among threads, one fork-join per kernel
// of the GPU version, with the same atomics, so both backends produce the same labels.
#include <cstdint>

#include "kernels/buf_bke_steps.h"
#include "kernels3d/block_logic_3d.h"
#include "runtime/cpu_parallel.h"
#include "runtime/labeler.h"

namespace volccl::detail {
namespace {

using kernels3d::BlockGrid;

template <class Step>
void for_each_block(const BlockGrid& grid, unsigned threads, const Step& step) {
  parallel_for_rows(grid.blocks_y, grid.blocks_z, threads, [&](std::uint32_t j, std::uint32_t k) {
    for (std::uint32_t i = 0; i < grid.blocks_x; ++i)
      step(grid, kernels3d::block_at(grid, i, j, k));
  });
}

}  // namespace

LabelResult label_buf_bke_3d_cpu(const HostLabelCall& call) {
  HostLabeling labeling(call.extent, call.options);
  const BlockGrid grid = kernels3d::make_block_grid(call.extent);
  const auto run = [&](const auto& step) { for_each_block(grid, labeling.threads(), step); };
  return label_buf_bke<kernels3d::BufBkeSteps>(labeling, run, call.mask, call.labels,
                                               call.options.algorithm);
}

}  // namespace volccl::detail
