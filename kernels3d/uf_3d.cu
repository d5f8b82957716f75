// CUDA backend of UF, the 3D voxel union-find for 6-, 18- and 26-connectivity (uf_logic_3d.h):
// one thread per voxel, a warp per 32-voxel segment of a row, one kernel per step, then the
// raster-order ranking of the roots with a CUB scan.
#include <algorithm>
#include <cstdint>

#include "cuda_backends.h"
#include "cuda_support.cuh"
#include "kernels3d/uf_logic_3d.h"
#include "volccl/detail/step_clock.h"

namespace volccl::detail {
namespace {

using kernels3d::kSegment;
using kernels3d::Voxel;
using kernels3d::VoxelGrid;

constexpr std::uint32_t kRowsPerThreadBlock = 4;
constexpr std::uint32_t kMaxGridSlices = 65535;  // gridDim.z

__device__ bool voxel_at(const VoxelGrid& grid, std::uint32_t first_slice, Voxel* voxel) {
  voxel->x = blockIdx.x * kSegment + threadIdx.x;
  voxel->y = blockIdx.y * blockDim.y + threadIdx.y;
  voxel->z = first_slice + blockIdx.z;
  voxel->index = voxel->z * grid.slice + voxel->y * grid.row + voxel->x;
  return voxel->x < grid.nx && voxel->y < grid.ny;
}

// Each warp is one 32-voxel segment of a row (blockDim.x == 32): one ballot gives the segment's
// foreground to all its threads.
__global__ void initialize(const std::uint8_t* mask, VoxelGrid grid, std::uint32_t first_slice,
                           kernels3d::UfInitialize step) {
  Voxel voxel;
  const bool inside = voxel_at(grid, first_slice, &voxel);
  const std::uint32_t segment = __ballot_sync(0xFFFFFFFFu, inside && mask[voxel.index] != 0);
  if (inside) step(voxel, segment);
}

template <class Step>
__global__ void for_each_voxel(VoxelGrid grid, std::uint32_t first_slice, Step step) {
  Voxel voxel;
  if (voxel_at(grid, first_slice, &voxel)) step(grid, voxel);
}

template <class Launch>
void launch_over_slices(const VoxelGrid& grid, Launch launch) {
  const dim3 threads(kSegment, kRowsPerThreadBlock);
  for (std::uint32_t first = 0; first < grid.nz; first += kMaxGridSlices) {
    const dim3 blocks((grid.nx + kSegment - 1) / kSegment,
                      (grid.ny + kRowsPerThreadBlock - 1) / kRowsPerThreadBlock,
                      std::min(kMaxGridSlices, grid.nz - first));
    launch(blocks, threads, first);
    VOLCCL_CUDA_CHECK(cudaGetLastError());
  }
}

template <class Step>
void launch(const VoxelGrid& grid, cudaStream_t stream, const Step& step) {
  launch_over_slices(grid, [&](dim3 blocks, dim3 threads, std::uint32_t first) {
    for_each_voxel<<<blocks, threads, 0, stream>>>(grid, first, step);
  });
}

}  // namespace

LabelResult label_uf_3d_cuda(const std::uint8_t* mask, Extent3 extent, std::uint32_t* labels,
                             const LabelOptions& options, void* stream_handle) {
  StepClock whole_call;
  const auto stream = static_cast<cudaStream_t>(stream_handle);
  LabelResult result;
  result.backend_used = Backend::cuda;
  result.algorithm_used = Algorithm::uf;
  StepTimings& timings = result.timings;
  const VoxelGrid grid = kernels3d::make_voxel_grid(extent);

  StepClock allocation_clock;
  RootRanking ranking(extent.voxel_count(), stream);
  timings.allocation_ms = allocation_clock.lap();

  StepEvents steps(stream);
  ranking.clear();
  steps.end_step(&timings.relabel_ms);
  launch_over_slices(grid, [&](dim3 blocks, dim3 threads, std::uint32_t first) {
    initialize<<<blocks, threads, 0, stream>>>(mask, grid, first, kernels3d::UfInitialize{labels});
  });
  steps.end_step(&timings.initialization_ms);
  switch (options.connectivity) {
    case 6:
      launch(grid, stream, kernels3d::UfMerge<6>{mask, labels});
      break;
    case 18:
      launch(grid, stream, kernels3d::UfMerge<18>{mask, labels});
      break;
    default:
      launch(grid, stream, kernels3d::UfMerge<26>{mask, labels});
  }
  steps.end_step(&timings.merge_ms);
  launch(grid, stream, kernels3d::UfCompress{labels, ranking.bitmap()});
  steps.end_step(&timings.compression_ms);
  ranking.scan();
  steps.end_step(&timings.relabel_ms);
  launch(grid, stream,
         kernels3d::UfFinalLabeling{labels, ranking.bitmap(), ranking.words_before()});
  steps.end_step(&timings.final_labeling_ms);

  ranking.copy_count(&result.component_count);
  steps.resolve();
  timings.total_ms = whole_call.lap();
  return result;
}

}  // namespace volccl::detail
