// CPU backend of RUF (ruf_logic_3d.h): the per-word steps over rows split among threads, one
// fork-join per kernel of the GPU version, with the same atomics; Initialization takes the GPU's
// tiles, walks each row's words in order, as the GPU's warp scans them, and unites the tile's
// runs in a worker's own slots, as a block does in shared memory.
#include <cstdint>
#include <memory>
#include <vector>

#include "kernels3d/ruf_logic_3d.h"
#include "runtime/cpu_parallel.h"
#include "runtime/labeler.h"

namespace volccl::detail {
namespace {

using kernels3d::RowWord;
using kernels3d::RunGrid;
using kernels3d::RunTiling;

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

  // Initialization by the GPU's tiles: each worker keeps one tile's words and slots under the
  // tile's keys, as a block keeps them in shared memory.
  const RunTiling tiling = kernels3d::make_run_tiling(grid);
  const std::uint32_t tile_rows = 1u << (tiling.log2_y + tiling.log2_z);
  parallel_for(tiling.tiles, threads, [&](std::uint64_t begin, std::uint64_t end) {
    std::vector<RowWord> tile_words(std::size_t{tile_rows} * grid.words_x);
    std::vector<std::uint32_t> tile_parents(std::size_t{tile_rows} << tiling.log2_capacity);
    std::vector<std::uint32_t> tile_runs(tile_rows);
    for (auto tile = static_cast<std::uint32_t>(begin); tile < end; ++tile) {
      const auto inside = [&](kernels3d::TileRow at) { return at.y < grid.ny && at.z < grid.nz; };
      for (std::uint32_t r = 0; r < tile_rows; ++r) {
        const kernels3d::TileRow at = kernels3d::tile_row(tiling, tile, r);
        if (!inside(at)) continue;
        const std::uint32_t row = at.z * grid.ny + at.y;
        std::uint32_t runs = 0;
        bool before = false;
        for (std::uint32_t w = 0; w < grid.words_x; ++w) {
          const std::uint32_t foreground = kernels3d::mask_word(mask, grid, row, w);
          const RowWord word = kernels3d::make_row_word(foreground, runs, before);
          words[std::uint64_t{row} * grid.words_x + w] = word;
          tile_words[r * grid.words_x + w] = word;
          const std::uint32_t starts = kernels3d::run_starts(foreground, before);
          kernels3d::make_runs_roots(tile_parents.data(), (r << tiling.log2_capacity) + runs,
                                     starts);
          runs += popcount(starts);
          before = (foreground >> 31) != 0;
        }
        tile_runs[r] = runs;
      }
      for (std::uint32_t r = 0; r < tile_rows; ++r) {
        const kernels3d::TileRow at = kernels3d::tile_row(tiling, tile, r);
        if (!inside(at)) continue;
        for (std::uint32_t w = 0; w < grid.words_x; ++w) {
          kernels3d::RowViews views;
          const std::uint32_t rows = kernels3d::contacts_in_tile<Connectivity>(
              grid, tiling, tile_words.data(), r, at, w, views);
          kernels3d::RunUnions<Connectivity, kernels3d::TileForest>{{tile_parents.data()}}(views,
                                                                                           rows);
        }
      }
      for (std::uint32_t r = 0; r < tile_rows; ++r) {
        const kernels3d::TileRow at = kernels3d::tile_row(tiling, tile, r);
        if (!inside(at)) continue;
        const std::uint32_t first = (at.z * grid.ny + at.y) * grid.run_capacity;
        for (std::uint32_t k = 0; k < tile_runs[r]; ++k) {
          const std::uint32_t root = detail::find_root(kernels3d::RunForest{tile_parents.data()},
                                                       (r << tiling.log2_capacity) + k);
          parents[first + k] = kernels3d::key_in_volume(grid, tiling, tile, root);
        }
      }
    }
  });
  labeling.end_step(&StepTimings::initialization_ms);
  const kernels3d::MergeRows merge_rows = kernels3d::make_merge_rows<Connectivity>(grid, tiling);
  parallel_for(merge_rows.slots, threads, [&](std::uint64_t begin, std::uint64_t end) {
    for (auto slot = static_cast<std::uint32_t>(begin); slot < end; ++slot) {
      const kernels3d::MergeRow at =
          kernels3d::merge_row<Connectivity>(grid, tiling, merge_rows, slot);
      if (!at.inside) continue;
      for (std::uint32_t w = 0; w < grid.words_x; ++w) {
        kernels3d::RowViews views;
        const std::uint32_t rows = kernels3d::contacts_between_tiles<Connectivity>(
            words, grid, tiling, at.z * grid.ny + at.y, at.y, at.z, w, ~0u, views);
        kernels3d::RunUnions<Connectivity, kernels3d::RunForest>{{parents}}(views, rows);
      }
    }
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

LabelResult label_ruf_3d_cpu(const HostLabelCall& call) {
  return call.options.connectivity == 6
             ? label_ruf<6>(call.mask, call.extent, call.labels, call.options)
             : label_ruf<18>(call.mask, call.extent, call.labels, call.options);
}

}  // namespace volccl::detail
