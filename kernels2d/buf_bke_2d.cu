// CUDA backend of the 2D block-based labelers BUF, BUF-IC, BKE and BKE-IC (BUF/BKE paper Sec.
// 5.1-5.2, Alg. 2) at 8-connectivity: one thread per 2x2 block, one kernel per step of
// kernels/block_forest.h on block_logic_2d.h's blocks, then the raster-order ranking of the roots
// (raster_rank.h) with a CUB scan, then FinalLabeling.
#include <algorithm>
#include <cstdint>

#include "kernels/block_moments.cuh"
#include "kernels/buf_bke_steps.h"
#include "kernels2d/block_logic_2d.h"
#include "runtime/cuda_support.cuh"
#include "runtime/labeler.h"

namespace volccl::detail {
namespace {

using kernels2d::BlockGrid;

// A warp spans 32 blocks of one block row: 64 consecutive input bytes and 256 output bytes per
// pixel row it touches.
constexpr std::uint32_t kThreadsX = 32;
constexpr std::uint32_t kThreadsY = 4;
// gridDim.y is limited to 65535; taller images are launched in slabs of block rows.
constexpr std::uint32_t kMaxSlabRows = 65535 * kThreadsY;

// Each step launched programmatically (cuda_support.cuh): its threads wait for the step before.
template <class Step>
__global__ void for_each_block(BlockGrid grid, std::uint32_t first_row, std::uint32_t rows,
                               Step step) {
  wait_for_previous_kernel();
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  const std::uint32_t row = blockIdx.y * blockDim.y + threadIdx.y;
  visit(step, grid, i < grid.blocks_x && row < rows, kernels2d::block_at(grid, i, first_row + row));
}

template <class Step>
void launch(const BlockGrid& grid, cudaStream_t stream, const Step& step) {
  const dim3 threads(kThreadsX, kThreadsY);
  for (std::uint32_t first = 0; first < grid.blocks_y; first += kMaxSlabRows) {
    const std::uint32_t rows = std::min(kMaxSlabRows, grid.blocks_y - first);
    const dim3 blocks((grid.blocks_x + threads.x - 1) / threads.x,
                      (rows + threads.y - 1) / threads.y);
    launch_after_previous(for_each_block<Step>, blocks, threads, stream, grid, first, rows, step);
  }
}

}  // namespace

LabelResult label_buf_bke_2d_cuda(const DeviceLabelCall& call) {
  DeviceLabeling labeling(call);
  const BlockGrid grid = kernels2d::make_block_grid(call.extent);
  const auto launch_step = [&](const auto& step) { launch(grid, labeling.stream(), step); };
  const std::uint64_t blocks = std::uint64_t{grid.blocks_x} * grid.blocks_y;
  BlockStatistics<kernels2d::BufBkeSteps, decltype(launch_step)> run(
      labeling, launch_step, call.mask, call.labels, blocks, call.moments,
      call.options.statistics_strategy);
  return label_buf_bke<kernels2d::BufBkeSteps>(labeling, run, call.mask, call.labels,
                                               call.options.algorithm);
}

}  // namespace volccl::detail
