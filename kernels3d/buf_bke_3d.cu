// CUDA backend of the 3D block-based labelers BUF, BUF-IC, BKE and BKE-IC (BUF/BKE paper Sec.
// 5.1-5.3, Alg. 2): one thread per 2x2x2 block, one kernel per step of block_logic_3d.h, then
// the raster-order ranking of the roots (raster_rank.h) with a CUB scan, then FinalLabeling.
#include <algorithm>
#include <cstdint>

#include "cuda_backends.h"
#include "cuda_support.cuh"
#include "kernels3d/block_logic_3d.h"
#include "volccl/detail/step_clock.h"

namespace volccl::detail {
namespace {

using kernels3d::BlockGrid;

// gridDim.z is limited to 65535; taller volumes are launched in slabs of block layers.
constexpr std::uint32_t kMaxGridLayers = 65535;

template <class Step>
__global__ void for_each_block(BlockGrid grid, std::uint32_t first_layer, Step step) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  const std::uint32_t j = blockIdx.y * blockDim.y + threadIdx.y;
  const std::uint32_t k = first_layer + blockIdx.z;
  if (i < grid.blocks_x && j < grid.blocks_y) step(grid, kernels3d::block_at(grid, i, j, k));
}

template <class Step>
void launch(const BlockGrid& grid, cudaStream_t stream, const Step& step) {
  // A warp spans 32 blocks of one row: 64 consecutive input bytes and 256 output bytes per
  // voxel row it touches.
  const dim3 threads(32, 4);
  for (std::uint32_t first = 0; first < grid.blocks_z; first += kMaxGridLayers) {
    const std::uint32_t layers = std::min(kMaxGridLayers, grid.blocks_z - first);
    const dim3 blocks((grid.blocks_x + threads.x - 1) / threads.x,
                      (grid.blocks_y + threads.y - 1) / threads.y, layers);
    for_each_block<<<blocks, threads, 0, stream>>>(grid, first, step);
    VOLCCL_CUDA_CHECK(cudaGetLastError());
  }
}

}  // namespace

LabelResult label_buf_bke_3d_cuda(const std::uint8_t* mask, Extent3 extent, std::uint32_t* labels,
                                  const LabelOptions& options, void* stream_handle) {
  StepClock whole_call;
  const auto stream = static_cast<cudaStream_t>(stream_handle);
  LabelResult result;
  result.backend_used = Backend::cuda;
  result.algorithm_used = options.algorithm;
  StepTimings& timings = result.timings;

  const BlockGrid grid = kernels3d::make_block_grid(extent);
  const bool bke = options.algorithm == Algorithm::bke || options.algorithm == Algorithm::bke_ic;
  const bool inline_compression =
      options.algorithm == Algorithm::buf_ic || options.algorithm == Algorithm::bke_ic;

  StepClock allocation_clock;
  RootRanking ranking(extent.voxel_count(), stream);
  timings.allocation_ms = allocation_clock.lap();

  StepEvents steps(stream, options.step_timings);
  ranking.clear();
  steps.end_step(&timings.relabel_ms);
  if (bke) {
    launch(grid, stream, kernels3d::BkeInitialize{mask, labels});
    steps.end_step(&timings.initialization_ms);
    launch(grid, stream, kernels3d::Compress{labels, inline_compression, nullptr});
    steps.end_step(&timings.compression_ms);
    launch(grid, stream, kernels3d::BkeReduce{mask, labels});
    steps.end_step(&timings.merge_ms);
  } else {
    launch(grid, stream, kernels3d::BufInitialize{mask, labels});
    steps.end_step(&timings.initialization_ms);
    launch(grid, stream, kernels3d::BufMerge{mask, labels});
    steps.end_step(&timings.merge_ms);
  }
  launch(grid, stream, kernels3d::Compress{labels, inline_compression, ranking.bitmap()});
  steps.end_step(&timings.compression_ms);
  ranking.scan();
  steps.end_step(&timings.relabel_ms);
  launch(grid, stream,
         kernels3d::FinalLabeling{mask, labels, ranking.bitmap(), ranking.words_before(), bke});
  steps.end_step(&timings.final_labeling_ms);

  ranking.copy_count();
  steps.resolve();
  result.component_count = ranking.count();
  timings.total_ms = whole_call.lap();
  return result;
}

}  // namespace volccl::detail
