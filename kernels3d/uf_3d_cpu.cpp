// CPU backend of UF (uf_logic_3d.h): the per-quad steps over rows of the volume split among
// threads, one fork-join per kernel of the GPU version, with the same atomics.
#include <algorithm>
#include <cstdint>

#include "kernels3d/uf_logic_3d.h"
#include "runtime/cpu_parallel.h"
#include "runtime/labeler.h"
#include "runtime/voxel_input.h"

namespace volccl::detail {
namespace {

using kernels3d::kSegment;
using kernels3d::kVoxelsPerThread;
using kernels3d::Quad;
using kernels3d::VoxelGrid;

// Calls row_body(y, z, first index of the row) for every row, rows split among threads.
template <class RowBody>
void for_each_row(const VoxelGrid& grid, unsigned threads, const RowBody& row_body) {
  parallel_for_rows(grid.ny, grid.nz, threads, [&](std::uint32_t y, std::uint32_t z) {
    row_body(y, z, z * grid.slice + y * grid.row);
  });
}

Quad quad_of_row(const VoxelGrid& grid, std::uint32_t x, std::uint32_t y, std::uint32_t z,
                 std::uint32_t row_start) {
  return Quad{{x, y, z, row_start + x}, std::min(kVoxelsPerThread, grid.nx - x)};
}

template <class Step>
void for_each_quad(const VoxelGrid& grid, unsigned threads, const Step& step) {
  for_each_row(grid, threads, [&](std::uint32_t y, std::uint32_t z, std::uint32_t row_start) {
    for (std::uint32_t x = 0; x < grid.nx; x += kVoxelsPerThread) {
      step(grid, quad_of_row(grid, x, y, z, row_start));
    }
  });
}

template <class Step>
void for_each_voxel(const VoxelGrid& grid, unsigned threads, const Step& step) {
  for_each_row(grid, threads, [&](std::uint32_t y, std::uint32_t z, std::uint32_t row_start) {
    for (std::uint32_t x = 0; x < grid.nx; ++x) {
      step(grid, kernels3d::Voxel{x, y, z, row_start + x});
    }
  });
}

// Initialization: the start of the current run carried along the row, restarted with each
// segment as on the GPU.
template <class Voxels>
void initialize(const Voxels& voxels, std::uint32_t* labels, const VoxelGrid& grid,
                unsigned threads) {
  const kernels3d::UfInitialize step{labels};
  for_each_row(grid, threads, [&](std::uint32_t y, std::uint32_t z, std::uint32_t row_start) {
    std::uint32_t run_start = row_start;
    for (std::uint32_t x = 0; x < grid.nx; x += kVoxelsPerThread) {
      const Quad quad = quad_of_row(grid, x, y, z, row_start);
      if (x % kSegment == 0) run_start = quad.first.index;
      const kernels3d::QuadRuns runs = kernels3d::quad_runs(voxels, quad);
      step(quad, runs, run_start);
      run_start = kernels3d::run_start_after(quad, runs, run_start);
    }
  });
}

template <class Voxels>
LabelResult label_uf(const HostLabelCall& call, const Voxels& voxels) {
  std::uint32_t* const labels = call.labels;
  HostLabeling labeling(call.extent, call.options);
  const VoxelGrid grid = kernels3d::make_voxel_grid(call.extent);
  const unsigned threads = labeling.threads();

  initialize(voxels, labels, grid, threads);
  labeling.end_step(&StepTimings::initialization_ms);
  kernels3d::with_merge_step(call.options.connectivity, voxels, labels,
                             [&](const auto& merge) { for_each_voxel(grid, threads, merge); });
  labeling.end_step(&StepTimings::merge_ms);
  for_each_quad(grid, threads, kernels3d::UfCompress{labels, labeling.root_bitmap()});
  labeling.end_step(&StepTimings::compression_ms);
  labeling.rank();
  for_each_quad(
      grid, threads,
      kernels3d::UfFinalLabeling{labels, labeling.root_bitmap(), labeling.words_before()});
  labeling.end_step(&StepTimings::final_labeling_ms);
  return labeling.finish();
}

}  // namespace

LabelResult label_uf_3d_cpu(const HostLabelCall& call) {
  if (call.input.label_map) {
    return with_label_map(call.input, [&](const auto& voxels) { return label_uf(call, voxels); });
  }
  return label_uf(call, BinaryVoxels{call.mask});
}

}  // namespace volccl::detail
