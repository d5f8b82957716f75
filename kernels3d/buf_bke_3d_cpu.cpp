// CPU backend of the 3D block-based labelers: the per-block steps of block_logic_3d.h run over
// rows of blocks split among threads, one fork-join per kernel of the GPU version, with the
// same atomics, so both backends produce the same labels.
#include <cstdint>

#include "backends.h"
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
  const unsigned threads = labeling.threads();
  const bool bke = options.algorithm == Algorithm::bke || options.algorithm == Algorithm::bke_ic;
  const bool inline_compression =
      options.algorithm == Algorithm::buf_ic || options.algorithm == Algorithm::bke_ic;

  if (bke) {
    for_each_block(grid, threads, kernels3d::BkeInitialize{mask, labels});
    labeling.end_step(&StepTimings::initialization_ms);
    for_each_block(grid, threads, kernels3d::Compress{labels, inline_compression, nullptr});
    labeling.end_step(&StepTimings::compression_ms);
    for_each_block(grid, threads, kernels3d::BkeReduce{mask, labels});
    labeling.end_step(&StepTimings::merge_ms);
  } else {
    for_each_block(grid, threads, kernels3d::BufInitialize{mask, labels});
    labeling.end_step(&StepTimings::initialization_ms);
    for_each_block(grid, threads, kernels3d::BufMerge{mask, labels});
    labeling.end_step(&StepTimings::merge_ms);
  }
  for_each_block(grid, threads,
                 kernels3d::Compress{labels, inline_compression, labeling.root_bitmap()});
  labeling.end_step(&StepTimings::compression_ms);
  labeling.rank();
  for_each_block(
      grid, threads,
      kernels3d::FinalLabeling{mask, labels, labeling.root_bitmap(), labeling.words_before(), bke});
  labeling.end_step(&StepTimings::final_labeling_ms);
  return labeling.finish();
}

}  // namespace volccl::detail
