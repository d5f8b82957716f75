// CUDA backend of UF, the 3D voxel union-find for 6-, 18- and 26-connectivity (uf_logic_3d.h):
// one thread per 4 voxels, a warp per 128-voxel segment of a row, one kernel per step, then the
// raster-order ranking of the roots (runtime/raster_rank.cu). Masks and label maps alike.
#include <cstdint>

#include "kernels3d/uf_logic_3d.h"
#include "runtime/cuda_support.cuh"
#include "runtime/labeler.h"
#include "runtime/voxel_input.h"

namespace volccl::detail {
namespace {

using kernels3d::kVoxelsPerThread;
using kernels3d::Quad;
using kernels3d::VoxelGrid;

constexpr std::uint32_t kWarp = 32;

// The quad of this thread: a warp (blockDim.x == 32) covers one 128-voxel segment of a row.
__device__ bool quad_at(const VoxelGrid& grid, std::uint32_t first_slice, Quad* quad) {
  const std::uint32_t x = (blockIdx.x * kWarp + threadIdx.x) * kVoxelsPerThread;
  const std::uint32_t y = blockIdx.y * blockDim.y + threadIdx.y;
  const std::uint32_t z = first_slice + blockIdx.z;
  quad->first = {x, y, z, z * grid.slice + y * grid.row + x};
  quad->count = x < grid.nx ? min(kVoxelsPerThread, grid.nx - x) : 0;
  return x < grid.nx && y < grid.ny;
}

// Initialization: each thread needs the start of the run that reaches its quad, that is the
// voxel after the last background voxel of the quads before it in the segment: an exclusive
// maximum-scan over the warp's threads with shuffles.
template <class Voxels>
__global__ void initialize(Voxels voxels, VoxelGrid grid, std::uint32_t first_slice,
                           kernels3d::UfInitialize step) {
  Quad quad;
  const bool inside = quad_at(grid, first_slice, &quad);
  const kernels3d::QuadRuns runs =
      inside ? kernels3d::quad_runs(voxels, quad) : kernels3d::QuadRuns{};
  const std::uint32_t lane = threadIdx.x;
  std::uint32_t latest = inside ? kernels3d::run_start_after(quad, runs, 0) : 0;
  for (std::uint32_t distance = 1; distance < kWarp; distance *= 2) {
    const std::uint32_t before = __shfl_up_sync(0xFFFFFFFFu, latest, distance);
    if (lane >= distance) latest = max(latest, before);
  }
  std::uint32_t entering = __shfl_up_sync(0xFFFFFFFFu, latest, 1);
  const std::uint32_t segment_start = quad.first.index - lane * kVoxelsPerThread;
  entering = lane == 0 ? segment_start : max(entering, segment_start);
  if (inside) step(quad, runs, entering);
}

template <class Step>
__global__ void for_each_voxel(VoxelGrid grid, std::uint32_t first_slice, Step step) {
  const std::uint32_t x = blockIdx.x * kWarp + threadIdx.x;
  const std::uint32_t y = blockIdx.y * blockDim.y + threadIdx.y;
  const std::uint32_t z = first_slice + blockIdx.z;
  if (x < grid.nx && y < grid.ny)
    step(grid, kernels3d::Voxel{x, y, z, z * grid.slice + y * grid.row + x});
}

template <class Step>
__global__ void for_each_quad(VoxelGrid grid, std::uint32_t first_slice, Step step) {
  Quad quad;
  if (quad_at(grid, first_slice, &quad)) step(grid, quad);
}

// `voxels_per_thread_x`: how many voxels of a row each thread takes (1 or kVoxelsPerThread).
template <class Launch>
void launch_over_slices(const VoxelGrid& grid, std::uint32_t voxels_per_thread_x, Launch launch) {
  launch_in_slabs((grid.nx + voxels_per_thread_x - 1) / voxels_per_thread_x, grid.ny, grid.nz,
                  launch);
}

template <class Step>
void launch_per_quad(const VoxelGrid& grid, cudaStream_t stream, const Step& step) {
  launch_over_slices(grid, kVoxelsPerThread, [&](dim3 blocks, dim3 threads, std::uint32_t first) {
    for_each_quad<<<blocks, threads, 0, stream>>>(grid, first, step);
  });
}

template <class Step>
void launch_per_voxel(const VoxelGrid& grid, cudaStream_t stream, const Step& step) {
  launch_over_slices(grid, 1, [&](dim3 blocks, dim3 threads, std::uint32_t first) {
    for_each_voxel<<<blocks, threads, 0, stream>>>(grid, first, step);
  });
}

template <class Voxels>
LabelResult label_uf(const DeviceLabelCall& call, const Voxels& voxels) {
  std::uint32_t* const labels = call.labels;
  DeviceLabeling labeling(call);
  const cudaStream_t stream = labeling.stream();
  const VoxelGrid grid = kernels3d::make_voxel_grid(call.extent);

  launch_over_slices(grid, kVoxelsPerThread, [&](dim3 blocks, dim3 threads, std::uint32_t first) {
    initialize<<<blocks, threads, 0, stream>>>(voxels, grid, first,
                                               kernels3d::UfInitialize{labels});
  });
  labeling.end_step(&StepTimings::initialization_ms);
  kernels3d::with_merge_step(call.options.connectivity, voxels, labels,
                             [&](const auto& merge) { launch_per_voxel(grid, stream, merge); });
  labeling.end_step(&StepTimings::merge_ms);
  launch_per_quad(grid, stream, kernels3d::UfCompress{labels, labeling.root_bitmap()});
  labeling.end_step(&StepTimings::compression_ms);
  labeling.rank();
  launch_per_quad(
      grid, stream,
      kernels3d::UfFinalLabeling{labels, labeling.root_bitmap(), labeling.words_before()});
  labeling.end_step(&StepTimings::final_labeling_ms);
  return labeling.finish();
}

}  // namespace

LabelResult label_uf_3d_cuda(const DeviceLabelCall& call) {
  if (call.input.label_map) {
    return with_label_map(call.input, [&](const auto& voxels) { return label_uf(call, voxels); });
  }
  return label_uf(call, BinaryVoxels{call.mask});
}

}  // namespace volccl::detail
