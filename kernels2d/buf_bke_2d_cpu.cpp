// CPU backend of the 2D block-based labelers: the per-block steps of block_logic_2d.h run over
// rows of blocks split among threads, one fork-join per kernel of the GPU version, with the
// same atomics, so both backends produce the same labels.
#include <cstdint>
#include <vector>

#include "backends.h"
#include "cpu_parallel.h"
#include "kernels2d/block_logic_2d.h"
#include "volccl/detail/step_clock.h"

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

LabelResult label_buf_bke_2d_cpu(const std::uint8_t* mask, Extent3 extent, std::uint32_t* labels,
                                 const LabelOptions& options) {
  StepClock whole_call;
  StepClock clock;
  LabelResult result;
  result.backend_used = Backend::cpu;
  result.algorithm_used = options.algorithm;
  StepTimings& timings = result.timings;

  const BlockGrid grid = kernels2d::make_block_grid(extent);
  const unsigned threads = resolve_thread_count(options.cpu_threads);
  const bool bke = options.algorithm == Algorithm::bke || options.algorithm == Algorithm::bke_ic;
  const bool inline_compression =
      options.algorithm == Algorithm::buf_ic || options.algorithm == Algorithm::bke_ic;

  const std::uint64_t words = rank_words(extent.voxel_count());
  std::vector<std::uint32_t> root_bitmap(words, 0);
  std::vector<std::uint32_t> words_before(words);
  timings.allocation_ms = clock.lap();

  if (bke) {
    for_each_block(grid, threads, kernels2d::BkeInitialize{mask, labels});
    timings.initialization_ms = clock.lap();
    for_each_block(grid, threads, kernels2d::Compress{labels, inline_compression, nullptr});
    timings.compression_ms = clock.lap();
    for_each_block(grid, threads, kernels2d::BkeReduce{mask, labels});
    timings.merge_ms = clock.lap();
  } else {
    for_each_block(grid, threads, kernels2d::BufInitialize{mask, labels});
    timings.initialization_ms = clock.lap();
    for_each_block(grid, threads, kernels2d::BufMerge{mask, labels});
    timings.merge_ms = clock.lap();
  }
  for_each_block(grid, threads,
                 kernels2d::Compress{labels, inline_compression, root_bitmap.data()});
  timings.compression_ms += clock.lap();

  result.component_count = rank_roots(root_bitmap, words_before);
  timings.relabel_ms = clock.lap();

  for_each_block(
      grid, threads,
      kernels2d::FinalLabeling{mask, labels, root_bitmap.data(), words_before.data(), bke});
  timings.final_labeling_ms = clock.lap();
  timings.total_ms = whole_call.lap();
  return result;
}

}  // namespace volccl::detail
