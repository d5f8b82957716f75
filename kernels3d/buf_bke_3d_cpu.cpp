// CPU backend of the 3D block-based labelers: the per-block steps of block_logic_3d.h run over
// rows of blocks split among threads, one fork-join per kernel of the GPU version, with the
// same atomics, so both backends produce the same labels.
#include <cstdint>
#include <vector>

#include "backends.h"
#include "cpu_parallel.h"
#include "kernels3d/block_logic_3d.h"
#include "volccl/detail/step_clock.h"

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
  StepClock whole_call;
  StepClock clock;
  LabelResult result;
  result.backend_used = Backend::cpu;
  result.algorithm_used = options.algorithm;
  StepTimings& timings = result.timings;

  const BlockGrid grid = kernels3d::make_block_grid(extent);
  const unsigned threads = resolve_thread_count(options.cpu_threads);
  const bool bke = options.algorithm == Algorithm::bke || options.algorithm == Algorithm::bke_ic;
  const bool inline_compression =
      options.algorithm == Algorithm::buf_ic || options.algorithm == Algorithm::bke_ic;

  const std::uint64_t words = rank_words(extent.voxel_count());
  std::vector<std::uint32_t> root_bitmap(words, 0);
  std::vector<std::uint32_t> words_before(words);
  timings.allocation_ms = clock.lap();

  if (bke) {
    for_each_block(grid, threads, kernels3d::BkeInitialize{mask, labels});
    timings.initialization_ms = clock.lap();
    for_each_block(grid, threads, kernels3d::Compress{labels, inline_compression, nullptr});
    timings.compression_ms = clock.lap();
    for_each_block(grid, threads, kernels3d::BkeReduce{mask, labels});
    timings.merge_ms = clock.lap();
  } else {
    for_each_block(grid, threads, kernels3d::BufInitialize{mask, labels});
    timings.initialization_ms = clock.lap();
    for_each_block(grid, threads, kernels3d::BufMerge{mask, labels});
    timings.merge_ms = clock.lap();
  }
  for_each_block(grid, threads,
                 kernels3d::Compress{labels, inline_compression, root_bitmap.data()});
  timings.compression_ms += clock.lap();

  result.component_count = rank_roots(root_bitmap, words_before);
  timings.relabel_ms = clock.lap();

  for_each_block(
      grid, threads,
      kernels3d::FinalLabeling{mask, labels, root_bitmap.data(), words_before.data(), bke});
  timings.final_labeling_ms = clock.lap();
  timings.total_ms = whole_call.lap();
  return result;
}

}  // namespace volccl::detail
