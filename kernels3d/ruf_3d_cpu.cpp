// CPU backend of RUF (ruf_logic_3d.h): the per-word steps over rows split among threads, one
// fork-join per kernel of the GPU version, with the same atomics; Initialization takes the GPU's
// tiles, walks each row's words in order, as the GPU's warp scans them, and unites the tile's
// runs in a worker's own slots, as a block does in shared memory. A label map's words (where its
// runs begin, which neighbours share a voxel's value) are made first, by their own pass.
#include <cstdint>
#include <memory>
#include <vector>

#include "kernels3d/ruf_logic_3d.h"
#include "runtime/cpu_parallel.h"
#include "runtime/labeler.h"
#include "runtime/voxel_input.h"

namespace volccl::detail {
namespace {

using kernels3d::RowWord;
using kernels3d::RunGrid;
using kernels3d::RunTiling;

// `Source`: kernels3d::MaskWordSource or LabelMapWordSource, `grid` its make_run_grid. `words`
// holds row_word_count(grid) words (a label map's with their foreground already), `starts` a
// label map's run starts.
template <int Connectivity, class Source>
LabelResult label_ruf(const Source& input, const RunGrid& grid, RowWord* words,
                      const std::uint32_t* starts, std::uint32_t* labels, HostLabeling& labeling) {
  using Runs = typename Source::Runs;
  const Runs volume_runs = input.runs(words, starts);
  const unsigned threads = labeling.threads();
  // Initialization writes every word and the slot of every run; no other slot is read.
  const std::unique_ptr<std::uint32_t[]> slots(new std::uint32_t[kernels3d::run_slot_count(grid)]);
  std::uint32_t* const parents = slots.get();

  // Initialization by the GPU's tiles: each worker keeps one tile's words and slots under the
  // tile's keys, as a block keeps them in shared memory.
  const RunTiling tiling = kernels3d::make_run_tiling(grid);
  const std::uint32_t tile_rows = 1u << (tiling.log2_y + tiling.log2_z);
  parallel_for(tiling.tiles, threads, [&](std::uint64_t begin, std::uint64_t end) {
    std::vector<RowWord> tile_words(std::size_t{tile_rows} * grid.words_x);
    std::vector<std::uint32_t> tile_starts(Runs::kLabelMap ? tile_words.size() : 0);
    std::vector<std::uint32_t> tile_parents(std::size_t{tile_rows} << tiling.log2_capacity);
    const Runs tile_view = input.runs(tile_words.data(), tile_starts.data());
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
          const std::uint64_t word_index = std::uint64_t{row} * grid.words_x + w;
          const std::uint32_t foreground = input.foreground(grid, row, w);
          const std::uint32_t word_starts = input.starts(foreground, before, word_index);
          const RowWord word = kernels3d::make_row_word(foreground, runs, before);
          words[word_index] = word;
          tile_words[r * grid.words_x + w] = word;
          if (Runs::kLabelMap) tile_starts[r * grid.words_x + w] = word_starts;
          kernels3d::make_runs_roots(tile_parents.data(), (r << tiling.log2_capacity) + runs,
                                     word_starts);
          runs += popcount(word_starts);
          before = (foreground >> 31) != 0;
        }
        tile_runs[r] = runs;
      }
      for (std::uint32_t r = 0; r < tile_rows; ++r) {
        const kernels3d::TileRow at = kernels3d::tile_row(tiling, tile, r);
        if (!inside(at)) continue;
        for (std::uint32_t w = 0; w < grid.words_x; ++w) {
          const auto contacts =
              kernels3d::contacts_in_tile<Connectivity>(grid, tiling, tile_view, r, at, w);
          kernels3d::RunUnions<Connectivity, kernels3d::TileForest, Runs::kLabelMap>{
              {tile_parents.data()}}(contacts.own, contacts.before, contacts.rows);
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
        const auto contacts = kernels3d::contacts_between_tiles<Connectivity>(
            volume_runs, grid, tiling, at.z * grid.ny + at.y, at.y, at.z, w, ~0u);
        kernels3d::RunUnions<Connectivity, kernels3d::RunForest, Runs::kLabelMap>{{parents}}(
            contacts.own, contacts.before, contacts.rows);
      }
    }
  });
  labeling.end_step(&StepTimings::merge_ms);
  std::uint32_t* const root_bitmap = labeling.root_bitmap();
  parallel_for_rows(grid.ny, grid.nz, threads, [&](std::uint32_t y, std::uint32_t z) {
    const std::uint32_t row = z * grid.ny + y;
    const std::uint32_t first = row * grid.run_capacity;
    const std::uint32_t row_runs = kernels3d::row_runs(volume_runs, grid, row);
    for (std::uint32_t k = 0; k < row_runs; ++k) {
      const std::uint32_t keys[1] = {first + k};
      if (kernels3d::compress_runs(parents, keys, 1u) != 0)
        mark_component_start(root_bitmap, keys[0]);
    }
  });
  labeling.end_step(&StepTimings::compression_ms);
  labeling.rank();
  const kernels3d::RufFinalLabeling<Runs> final_labeling{
      volume_runs, labels, parents, labeling.root_bitmap(), labeling.words_before()};
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

template <int Connectivity>
LabelResult label_mask(const HostLabelCall& call) {
  HostLabeling labeling(call.extent, call.options);
  const RunGrid grid = kernels3d::make_run_grid(call.extent);
  const std::unique_ptr<RowWord[]> words(new RowWord[kernels3d::row_word_count(grid)]);
  return label_ruf<Connectivity>(kernels3d::MaskWordSource{call.mask}, grid, words.get(), nullptr,
                                 call.labels, labeling);
}

// The label map's words, row by row: the foreground into `foreground`'s words, the runs' starts
// and the joins.
template <int Connectivity, class Voxels>
void make_label_map_words(const Voxels& voxels, const RunGrid& grid, unsigned threads,
                          RowWord* foreground, std::uint32_t* starts,
                          kernels3d::JoinWords<Connectivity>* joins) {
  parallel_for_rows(grid.ny, grid.nz, threads, [&](std::uint32_t y, std::uint32_t z) {
    const std::uint64_t first = (std::uint64_t{z} * grid.ny + y) * grid.words_x;
    for (std::uint32_t w = 0; w < grid.words_x; ++w) {
      const kernels3d::LabelMapWord<Connectivity> word =
          kernels3d::label_map_word<Connectivity>(voxels, grid, y, z, w);
      foreground[first + w] = {word.foreground, 0};
      starts[first + w] = word.starts;
      joins[first + w] = word.joins;
    }
  });
}

template <int Connectivity>
LabelResult label_label_map(const HostLabelCall& call) {
  HostLabeling labeling(call.extent, call.options);
  const RunGrid grid = kernels3d::make_run_grid(call.extent, true);
  const std::uint64_t word_count = kernels3d::row_word_count(grid);
  const std::unique_ptr<RowWord[]> words(new RowWord[word_count]);
  const std::unique_ptr<std::uint32_t[]> starts(new std::uint32_t[word_count]);
  const std::unique_ptr<kernels3d::JoinWords<Connectivity>[]> joins(
      new kernels3d::JoinWords<Connectivity>[word_count]);
  with_label_map(call.input, [&](const auto& voxels) {
    make_label_map_words<Connectivity>(voxels, grid, labeling.threads(), words.get(), starts.get(),
                                       joins.get());
  });
  const kernels3d::LabelMapWordSource<Connectivity> input{words.get(), starts.get(), joins.get()};
  return label_ruf<Connectivity>(input, grid, words.get(), starts.get(), call.labels, labeling);
}

}  // namespace

LabelResult label_ruf_3d_cpu(const HostLabelCall& call) {
  return kernels3d::with_connectivity(call.options.connectivity, [&](auto connectivity) {
    constexpr int kConnectivity = decltype(connectivity)::value;
    return call.input.label_map ? label_label_map<kConnectivity>(call)
                                : label_mask<kConnectivity>(call);
  });
}

}  // namespace volccl::detail
