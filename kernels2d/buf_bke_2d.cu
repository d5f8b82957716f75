// CUDA backend of the 2D block-based labelers BUF, BUF-IC, BKE and BKE-IC (BUF/BKE paper Sec.
// 5.1-5.2, Alg. 2) at 8-connectivity: one thread per 2x2 block and the steps of
// block_logic_2d.h, then the raster-order ranking of the roots (raster_rank.h), then
// FinalLabeling. Two ways to launch them, with the same steps:
// - one kernel per step and a CUB scan, as the paper does, when the steps are timed
//   (LabelOptions::step_timings) or the device cannot launch cooperatively;
// - otherwise one cooperative kernel whose thread blocks stride over the 2x2 blocks and wait
//   for each other between the steps (grid_ranking.cuh ranks the roots in it). A 2048^2 image
//   takes a few microseconds per step on an H100, less than the host needs to launch a kernel
//   and the GPU to start it: the single launch takes 20-30 % off the whole labeling there
//   (bench/NOTES.md).
#include <cooperative_groups.h>

#include <algorithm>
#include <cstdint>

#include "cuda_backends.h"
#include "cuda_support.cuh"
#include "grid_ranking.cuh"
#include "kernels2d/block_logic_2d.h"
#include "volccl/detail/step_clock.h"

namespace volccl::detail {
namespace {

using kernels2d::BlockGrid;

// A warp spans 32 blocks of one block row: 64 consecutive input bytes and 256 output bytes per
// pixel row it touches.
constexpr std::uint32_t kThreadsX = 32;
constexpr std::uint32_t kThreadsY = 4;
// gridDim.y is limited to 65535; taller images are launched in slabs of block rows.
constexpr std::uint32_t kMaxSlabRows = 65535 * kThreadsY;

template <class Step>
__global__ void for_each_block(BlockGrid grid, std::uint32_t first_row, std::uint32_t rows,
                               Step step) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  const std::uint32_t row = blockIdx.y * blockDim.y + threadIdx.y;
  if (i < grid.blocks_x && row < rows) step(grid, kernels2d::block_at(grid, i, first_row + row));
}

template <class Step>
void launch(const BlockGrid& grid, cudaStream_t stream, const Step& step) {
  const dim3 threads(kThreadsX, kThreadsY);
  for (std::uint32_t first = 0; first < grid.blocks_y; first += kMaxSlabRows) {
    const std::uint32_t rows = std::min(kMaxSlabRows, grid.blocks_y - first);
    const dim3 blocks((grid.blocks_x + threads.x - 1) / threads.x,
                      (rows + threads.y - 1) / threads.y);
    for_each_block<<<blocks, threads, 0, stream>>>(grid, first, rows, step);
    VOLCCL_CUDA_CHECK(cudaGetLastError());
  }
}

// The blocks in raster order of block coordinates, strided over the whole grid of threads:
// consecutive threads take consecutive blocks of a block row, as the per-step kernels do.
struct GridStride {
  BlockGrid grid;
  Divisor by_blocks_x;
  std::uint64_t blocks;

  template <class Step>
  __device__ void operator()(const Step& step) const {
    const std::uint64_t stride = std::uint64_t{gridDim.x} * blockDim.x;
    for (std::uint64_t b = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; b < blocks;
         b += stride) {
      const auto index = static_cast<std::uint32_t>(b);
      const std::uint32_t j = by_blocks_x.quotient(index);
      step(grid, kernels2d::block_at(grid, index - j * grid.blocks_x, j));
    }
  }
};

template <bool Bke>
__global__ void __launch_bounds__(kGridThreads)
    label_in_one_launch(const std::uint8_t* mask, std::uint32_t* labels, GridStride each_block,
                        bool inline_compression, GridRanking ranking) {
  cooperative_groups::grid_group all = cooperative_groups::this_grid();
  clear_root_bitmap(ranking);
  if constexpr (Bke) {
    each_block(kernels2d::BkeInitialize{mask, labels});
    all.sync();
    each_block(kernels2d::Compress{labels, inline_compression, nullptr});
    all.sync();
    each_block(kernels2d::BkeReduce{mask, labels});
  } else {
    each_block(kernels2d::BufInitialize{mask, labels});
    all.sync();
    each_block(kernels2d::BufMerge{mask, labels});
  }
  all.sync();
  each_block(kernels2d::Compress{labels, inline_compression, ranking.bitmap});
  all.sync();
  rank_root_bitmap(ranking, all);
  all.sync();
  each_block(kernels2d::FinalLabeling{mask, labels, ranking.bitmap, ranking.words_before, Bke});
}

// The single launch, when the device can make one; returns false otherwise.
bool label_with_one_launch(const std::uint8_t* mask, std::uint32_t* labels, const BlockGrid& grid,
                           bool bke, bool inline_compression, cudaStream_t stream,
                           LabelResult* result) {
  const void* kernel = bke ? reinterpret_cast<const void*>(&label_in_one_launch<true>)
                           : reinterpret_cast<const void*>(&label_in_one_launch<false>);
  const int limit = cooperative_grid_limit(kernel);
  if (limit == 0) return false;
  StepTimings& timings = result->timings;
  GridStride each_block{grid, {}, std::uint64_t{grid.blocks_x} * grid.blocks_y};
  each_block.by_blocks_x = Divisor(grid.blocks_x, each_block.blocks);
  const auto thread_blocks = static_cast<unsigned>(
      std::min<std::uint64_t>(limit, (each_block.blocks + kGridThreads - 1) / kGridThreads));

  StepClock allocation_clock;
  const std::uint64_t words = rank_words(std::uint64_t{grid.nx} * grid.ny);
  DeviceBuffer<std::uint32_t> ranks(2 * words + 1 + thread_blocks, stream,
                                    "the root bitmap and ranks");
  GridRanking ranking{ranks.data(), ranks.data() + words, ranks.data() + 2 * words + 1, words};
  timings.allocation_ms = allocation_clock.lap();

  void* arguments[] = {&mask, &labels, &each_block, &inline_compression, &ranking};
  VOLCCL_CUDA_CHECK(cudaLaunchCooperativeKernel(kernel, dim3(thread_blocks), dim3(kGridThreads),
                                                arguments, 0, stream));
  VOLCCL_CUDA_CHECK(cudaGetLastError());
  VOLCCL_CUDA_CHECK(cudaMemcpyAsync(&result->component_count, ranking.words_before + words,
                                    sizeof(std::uint32_t), cudaMemcpyDeviceToHost, stream));
  VOLCCL_CUDA_CHECK(cudaStreamSynchronize(stream));
  return true;
}

}  // namespace

LabelResult label_buf_bke_2d_cuda(const std::uint8_t* mask, Extent3 extent, std::uint32_t* labels,
                                  const LabelOptions& options, void* stream_handle) {
  StepClock whole_call;
  const auto stream = static_cast<cudaStream_t>(stream_handle);
  LabelResult result;
  result.backend_used = Backend::cuda;
  result.algorithm_used = options.algorithm;
  StepTimings& timings = result.timings;

  const BlockGrid grid = kernels2d::make_block_grid(extent);
  const bool bke = options.algorithm == Algorithm::bke || options.algorithm == Algorithm::bke_ic;
  const bool inline_compression =
      options.algorithm == Algorithm::buf_ic || options.algorithm == Algorithm::bke_ic;
  if (!options.step_timings &&
      label_with_one_launch(mask, labels, grid, bke, inline_compression, stream, &result)) {
    timings.total_ms = whole_call.lap();
    return result;
  }

  StepClock allocation_clock;
  RootRanking ranking(extent.voxel_count(), stream);
  timings.allocation_ms = allocation_clock.lap();

  StepEvents steps(stream, options.step_timings);
  ranking.clear();
  steps.end_step(&timings.relabel_ms);
  if (bke) {
    launch(grid, stream, kernels2d::BkeInitialize{mask, labels});
    steps.end_step(&timings.initialization_ms);
    launch(grid, stream, kernels2d::Compress{labels, inline_compression, nullptr});
    steps.end_step(&timings.compression_ms);
    launch(grid, stream, kernels2d::BkeReduce{mask, labels});
    steps.end_step(&timings.merge_ms);
  } else {
    launch(grid, stream, kernels2d::BufInitialize{mask, labels});
    steps.end_step(&timings.initialization_ms);
    launch(grid, stream, kernels2d::BufMerge{mask, labels});
    steps.end_step(&timings.merge_ms);
  }
  launch(grid, stream, kernels2d::Compress{labels, inline_compression, ranking.bitmap()});
  steps.end_step(&timings.compression_ms);
  ranking.scan();
  steps.end_step(&timings.relabel_ms);
  launch(grid, stream,
         kernels2d::FinalLabeling{mask, labels, ranking.bitmap(), ranking.words_before(), bke});
  steps.end_step(&timings.final_labeling_ms);

  ranking.copy_count(&result.component_count);
  steps.resolve();
  timings.total_ms = whole_call.lap();
  return result;
}

}  // namespace volccl::detail
