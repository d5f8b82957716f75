// CPU backend of UF and KE, the 2D union-find baselines (uf_ke_logic_2d.h): the per-pixel steps
// over the image's rows split among threads, one fork-join per kernel of the GPU version, with
// the same atomics.
#include <cstdint>
#include <vector>

#include "backends.h"
#include "cpu_parallel.h"
#include "kernels2d/uf_ke_logic_2d.h"
#include "volccl/detail/step_clock.h"

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

LabelResult label_uf_ke_2d_cpu(const std::uint8_t* mask, Extent3 extent, std::uint32_t* labels,
                               const LabelOptions& options) {
  StepClock whole_call;
  StepClock clock;
  LabelResult result;
  result.backend_used = Backend::cpu;
  result.algorithm_used = options.algorithm;
  StepTimings& timings = result.timings;
  const PixelGrid grid = kernels2d::make_pixel_grid(extent);
  const unsigned threads = resolve_thread_count(options.cpu_threads);
  const auto run = [&](const auto& step) { for_each_pixel(grid, threads, step); };

  const std::uint64_t words = rank_words(extent.voxel_count());
  std::vector<std::uint32_t> root_bitmap(words, 0);
  std::vector<std::uint32_t> words_before(words);
  timings.allocation_ms = clock.lap();

  if (options.algorithm == Algorithm::ke) {
    kernels2d::with_connectivity<kernels2d::KeInitialize>(options.connectivity, run, mask, labels);
    timings.initialization_ms = clock.lap();
    run(kernels2d::Compress{labels, nullptr});
    timings.compression_ms = clock.lap();
    kernels2d::with_connectivity<kernels2d::KeReduce>(options.connectivity, run, mask, labels);
    timings.merge_ms = clock.lap();
  } else {
    run(kernels2d::UfInitialize{mask, labels});
    timings.initialization_ms = clock.lap();
    kernels2d::with_connectivity<kernels2d::UfMerge>(options.connectivity, run, mask, labels);
    timings.merge_ms = clock.lap();
  }
  run(kernels2d::Compress{labels, root_bitmap.data()});
  timings.compression_ms += clock.lap();

  result.component_count = rank_roots(root_bitmap, words_before);
  timings.relabel_ms = clock.lap();

  run(kernels2d::FinalLabeling{labels, root_bitmap.data(), words_before.data()});
  timings.final_labeling_ms = clock.lap();
  timings.total_ms = whole_call.lap();
  return result;
}

}  // namespace volccl::detail
