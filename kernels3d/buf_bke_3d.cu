// CUDA backend of the 3D block-based labelers BUF, BUF-IC, BKE and BKE-IC (BUF/BKE paper Sec.
// 5.1-5.3, Alg. 2): one thread per 2x2x2 block, one kernel per step of kernels/block_forest.h on
// block_logic_3d.h's blocks, then the raster-order ranking of the roots (raster_rank.h,
// raster_rank.cu), then FinalLabeling.
#include <cstdint>
#include <type_traits>

#include "kernels/block_moments.cuh"
#include "kernels/buf_bke_steps.h"
#include "kernels3d/block_logic_3d.h"
#include "kernels3d/forest_statistics_3d.h"
#include "runtime/cuda_support.cuh"
#include "runtime/labeler.h"
#include "runtime/late_moments.h"

namespace volccl::detail {
namespace {

using kernels3d::BlockGrid;

// Each step launched programmatically (cuda_support.cuh): its threads wait for the step before.
template <class Step>
__global__ void for_each_block(BlockGrid grid, std::uint32_t first_layer, Step step) {
  wait_for_previous_kernel();
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  const std::uint32_t j = blockIdx.y * blockDim.y + threadIdx.y;
  const std::uint32_t k = first_layer + blockIdx.z;
  visit(step, grid, i < grid.blocks_x && j < grid.blocks_y, kernels3d::block_at(grid, i, j, k));
}

template <class Step>
void launch(const BlockGrid& grid, cudaStream_t stream, const Step& step) {
  // A warp spans 32 blocks of one row: 64 consecutive input bytes and 256 output bytes per
  // voxel row it touches.
  launch_in_slabs(grid.blocks_x, grid.blocks_y, grid.blocks_z,
                  [&](dim3 blocks, dim3 threads, std::uint32_t first) {
                    launch_after_previous(for_each_block<Step>, blocks, threads, stream, grid,
                                          first, step);
                  });
}

// The Late statistics on volumes larger than LateBeforeCount takes: once the count is known,
// before FinalLabeling, from the forest where components are many (forest_statistics_3d.cu),
// else by the Late pass over the label image after it. The host waits for the count before
// FinalLabeling instead of after it, so the call makes as many round trips as before.
template <class Launch>
class LateStatistics {
 public:
  LateStatistics(DeviceLabeling& labeling, const Launch& launch, const BlockForest& forest,
                 Extent3 extent, cuda::DeviceMoments* moments)
      : labeling_(labeling), launch_(launch), forest_(forest), extent_(extent), moments_(moments) {}

  template <class Step>
  void operator()(const Step& step) {
    if constexpr (std::is_same_v<Step, kernels3d::FinalLabeling>) {
      const std::uint32_t count = labeling_.wait_for_count();
      if (forest_moments_pay(extent_.voxel_count(), count)) {
        *moments_ = forest_moments(forest_, count, labeling_.stream());
        labeling_.end_step(&StepTimings::statistics_ms);
        // The far blocks' additions are timed with FinalLabeling, which makes them.
        label_adding_far_blocks(forest_, step, *moments_, labeling_.stream());
        return;
      }
      launch_(step);
      labeling_.end_step(&StepTimings::final_labeling_ms);
      *moments_ =
          late_moments(forest_.labels, forest_.mask, extent_, count, nullptr, labeling_.stream());
      labeling_.end_step(&StepTimings::statistics_ms);
      return;
    }
    launch_(step);
  }

 private:
  DeviceLabeling& labeling_;
  const Launch& launch_;
  BlockForest forest_;
  Extent3 extent_;
  cuda::DeviceMoments* moments_;
};

}  // namespace

LabelResult label_buf_bke_3d_cuda(const DeviceLabelCall& call) {
  const std::uint8_t* const mask = call.mask;
  const Extent3 extent = call.extent;
  std::uint32_t* const labels = call.labels;
  const LabelOptions& options = call.options;
  cuda::DeviceMoments* const moments = call.moments;
  DeviceLabeling labeling(call);
  const BlockGrid grid = kernels3d::make_block_grid(extent);
  const auto launch_step = [&](const auto& step) { launch(grid, labeling.stream(), step); };
  if (moments != nullptr && options.statistics_strategy == StatisticsStrategy::late) {
    const BlockForest forest{grid, mask, labels, labeling.root_bitmap(), labeling.words_before()};
    LateStatistics<decltype(launch_step)> run(labeling, launch_step, forest, extent, moments);
    return label_buf_bke<kernels3d::BufBkeSteps>(labeling, run, mask, labels, options.algorithm);
  }
  const std::uint64_t blocks = std::uint64_t{grid.blocks_x} * grid.blocks_y * grid.blocks_z;
  BlockStatistics<kernels3d::BufBkeSteps, decltype(launch_step)> run(
      labeling, launch_step, mask, labels, blocks, moments, options.statistics_strategy);
  return label_buf_bke<kernels3d::BufBkeSteps>(labeling, run, mask, labels, options.algorithm);
}

}  // namespace volccl::detail
