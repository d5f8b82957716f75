// CPU backend of the 2D block-based labelers: the per-block steps of kernels/block_forest.h on
// block_logic_2d.h's blocks run over rows of blocks split among threads, one fork-join per kernel
// of the GPU version, with the same atomics, so both backends produce the same labels.
#include <cstdint>

#include "kernels/buf_bke_steps.h"
#include "kernels2d/block_logic_2d.h"
#include "runtime/cpu_parallel.h"
#include "runtime/labeler.h"

namespace volccl::detail {
namespace {

using kernels2d::BlockGrid;

template <class Step>
void for_each_block(const BlockGrid& grid, unsigned threads, const Step& step) {
  parallel_for(grid.blocks_y, threads, [&](std::uint64_t begin, std::uint64_t end) {
    for (auto j = static_cast<std::uint32_t>(begin); j < end; ++j) {
      for (std::uint32_t i = 0; i < grid.blocks_x; ++i) {
        step(grid, kernels2d::block_at(grid, i, j));
      }
    }
  });
}

}  // namespace

LabelResult label_buf_bke_2d_cpu(const HostLabelCall& call) {
  HostLabeling labeling(call.extent, call.options);
  const BlockGrid grid = kernels2d::make_block_grid(call.extent);
  const auto run = [&](const auto& step) { for_each_block(grid, labeling.threads(), step); };
  return label_buf_bke<kernels2d::BufBkeSteps>(labeling, run, call.mask, call.labels,
                                               call.options.algorithm);
}

}  // namespace volccl::detail
