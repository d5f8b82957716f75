// CPU backend of UF (uf_logic_3d.h): the per-voxel steps over rows of the volume split among
// threads, one fork-join per kernel of the GPU version, with the same atomics.
#include <cstdint>
#include <vector>

#include "backends.h"
#include "cpu_parallel.h"
#include "kernels3d/uf_logic_3d.h"
#include "volccl/detail/step_clock.h"

namespace volccl::detail {
namespace {

using kernels3d::kSegment;
using kernels3d::Voxel;
using kernels3d::VoxelGrid;

// Calls row_body(y, z, first index of the row) for every row, rows split among threads.
template <class RowBody>
void for_each_row(const VoxelGrid& grid, unsigned threads, const RowBody& row_body) {
  const std::uint64_t rows = std::uint64_t{grid.ny} * grid.nz;
  parallel_for(rows, threads, [&](std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t r = begin; r < end; ++r) {
      const auto y = static_cast<std::uint32_t>(r % grid.ny);
      const auto z = static_cast<std::uint32_t>(r / grid.ny);
      row_body(y, z, z * grid.slice + y * grid.row);
    }
  });
}

template <class Step>
void for_each_voxel(const VoxelGrid& grid, unsigned threads, const Step& step) {
  for_each_row(grid, threads, [&](std::uint32_t y, std::uint32_t z, std::uint32_t row_start) {
    for (std::uint32_t x = 0; x < grid.nx; ++x) step(grid, Voxel{x, y, z, row_start + x});
  });
}

// Initialization per 32-voxel segment: the segment's foreground bits, then each voxel.
void initialize(const std::uint8_t* mask, std::uint32_t* labels, const VoxelGrid& grid,
                unsigned threads) {
  const kernels3d::UfInitialize step{labels};
  for_each_row(grid, threads, [&](std::uint32_t y, std::uint32_t z, std::uint32_t row_start) {
    for (std::uint32_t first = 0; first < grid.nx; first += kSegment) {
      const std::uint32_t width = std::min(kSegment, grid.nx - first);
      std::uint32_t segment = 0;
      for (std::uint32_t t = 0; t < width; ++t) {
        segment |= std::uint32_t{mask[row_start + first + t] != 0} << t;
      }
      for (std::uint32_t t = 0; t < width; ++t) {
        step(Voxel{first + t, y, z, row_start + first + t}, segment);
      }
    }
  });
}

}  // namespace

LabelResult label_uf_3d_cpu(const std::uint8_t* mask, Extent3 extent, std::uint32_t* labels,
                            const LabelOptions& options) {
  StepClock whole_call;
  StepClock clock;
  LabelResult result;
  result.backend_used = Backend::cpu;
  result.algorithm_used = Algorithm::uf;
  StepTimings& timings = result.timings;
  const VoxelGrid grid = kernels3d::make_voxel_grid(extent);
  const unsigned threads = resolve_thread_count(options.cpu_threads);

  const std::uint64_t words = rank_words(extent.voxel_count());
  std::vector<std::uint32_t> root_bitmap(words, 0);
  std::vector<std::uint32_t> words_before(words);
  timings.allocation_ms = clock.lap();

  initialize(mask, labels, grid, threads);
  timings.initialization_ms = clock.lap();
  switch (options.connectivity) {
    case 6:
      for_each_voxel(grid, threads, kernels3d::UfMerge<6>{mask, labels});
      break;
    case 18:
      for_each_voxel(grid, threads, kernels3d::UfMerge<18>{mask, labels});
      break;
    default:
      for_each_voxel(grid, threads, kernels3d::UfMerge<26>{mask, labels});
  }
  timings.merge_ms = clock.lap();
  for_each_voxel(grid, threads, kernels3d::UfCompress{labels, root_bitmap.data()});
  timings.compression_ms = clock.lap();

  result.component_count = rank_roots(root_bitmap, words_before);
  timings.relabel_ms = clock.lap();

  for_each_voxel(grid, threads,
                 kernels3d::UfFinalLabeling{labels, root_bitmap.data(), words_before.data()});
  timings.final_labeling_ms = clock.lap();
  timings.total_ms = whole_call.lap();
  return result;
}

}  // namespace volccl::detail
