// CPU backend of RUF (ruf_logic_3d.h): the per-word steps over rows split among threads, one
// fork-join per kernel of the GPU version, with the same atomics; Initialization walks each row's
// words in order, as the GPU's warp scans them.
#include <cstdint>
#include <memory>

#include "backends.h"
#include "cpu_parallel.h"
#include "kernels3d/ruf_logic_3d.h"

namespace volccl::detail {
namespace {

using kernels3d::RowWord;
using kernels3d::RunGrid;

template <int Connectivity>
LabelResult label_ruf(const std::uint8_t* mask, Extent3 extent, std::uint32_t* labels,
                      const LabelOptions& options) {
  HostLabeling labeling(extent, options);
  const RunGrid grid = kernels3d::make_run_grid(extent);
  const unsigned threads = labeling.threads();
  // Initialization writes every word and the slot of every run; no other slot is read.
  const std::unique_ptr<RowWord[]> row_words(new RowWord[kernels3d::row_word_count(grid)]);
  const std::unique_ptr<std::uint32_t[]> slots(new std::uint32_t[kernels3d::run_slot_count(grid)]);
  RowWord* const words = row_words.get();
  std::uint32_t* const parents = slots.get();

  parallel_for_rows(grid.ny, grid.nz, threads, [&](std::uint32_t y, std::uint32_t z) {
    const std::uint32_t row = z * grid.ny + y;
    std::uint32_t runs = 0;
    bool before = false;
    for (std::uint32_t w = 0; w < grid.words_x; ++w) {
      const std::uint32_t foreground = kernels3d::mask_word(mask, grid, row, w);
      const std::uint32_t starts = kernels3d::run_starts(foreground, before);
      words[std::uint64_t{row} * grid.words_x + w] =
          kernels3d::make_row_word(foreground, runs, before);
      kernels3d::make_runs_roots(parents, row * grid.run_capacity + runs, starts);
      runs += popcount(starts);
      before = (foreground >> 31) != 0;
    }
  });
  // The links to the row above that the GPU's warps make (links_above_in_initialization).
  const std::uint32_t rows_per_warp = kernels3d::init_rows_per_warp(grid);
  parallel_for_rows(grid.ny, grid.nz, threads, [&](std::uint32_t y, std::uint32_t z) {
    const std::uint32_t row = z * grid.ny + y;
    if (!kernels3d::links_above_in_initialization(grid, rows_per_warp, row)) return;
    for (std::uint32_t w = 0; w < grid.words_x; ++w) {
      kernels3d::link_runs_to_above(parents, kernels3d::view_word(words, grid, row, w),
                                    kernels3d::view_word(words, grid, row - 1, w));
    }
  });
  labeling.end_step(&StepTimings::initialization_ms);
  const kernels3d::RufMerge<Connectivity> merge{words, parents, rows_per_warp};
  parallel_for_rows(grid.ny, grid.nz, threads, [&](std::uint32_t y, std::uint32_t z) {
    const std::uint32_t row = z * grid.ny + y;
    for (std::uint32_t w = 0; w < grid.words_x; ++w) merge(grid, row, y, w);
  });
  labeling.end_step(&StepTimings::merge_ms);
  std::uint32_t* const root_bitmap = labeling.root_bitmap();
  parallel_for_rows(grid.ny, grid.nz, threads, [&](std::uint32_t y, std::uint32_t z) {
    const std::uint32_t row = z * grid.ny + y;
    const std::uint32_t first = row * grid.run_capacity;
    const std::uint32_t runs = kernels3d::row_runs(words, grid, row);
    for (std::uint32_t k = 0; k < runs; ++k) {
      const std::uint32_t keys[1] = {first + k};
      if (kernels3d::compress_runs(parents, keys, 1u) != 0)
        mark_component_start(root_bitmap, keys[0]);
    }
  });
  labeling.end_step(&StepTimings::compression_ms);
  labeling.rank();
  const kernels3d::RufFinalLabeling final_labeling{words, labels, parents, labeling.root_bitmap(),
                                                   labeling.words_before()};
  parallel_for_rows(grid.ny, grid.nz, threads, [&](std::uint32_t y, std::uint32_t z) {
    const std::uint32_t row = z * grid.ny + y;
    for (std::uint32_t w = 0; w < grid.words_x; ++w) {
      for (std::uint32_t quad = 0; quad < kernels3d::kQuadsPerWord; ++quad) {
        std::uint32_t out[kernels3d::kQuadVoxels];
        final_labeling.labels_of(grid, row, w, quad, out);
        final_labeling.store(grid, row, w * kernels3d::kWordVoxels + quad * kernels3d::kQuadVoxels,
                             out);
      }
    }
  });
  labeling.end_step(&StepTimings::final_labeling_ms);
  return labeling.finish();
}

}  // namespace

LabelResult label_ruf_3d_cpu(const std::uint8_t* mask, Extent3 extent, std::uint32_t* labels,
                             const LabelOptions& options) {
  return options.connectivity == 6 ? label_ruf<6>(mask, extent, labels, options)
                                   : label_ruf<18>(mask, extent, labels, options);
}

}  // namespace volccl::detail
