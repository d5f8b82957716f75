// The Early and Fused statistics of LE and TM on the GPU (le_tm_statistics_2d.h), hooked into
// their step sequences (le_logic_2d.h, tm_logic_2d.h) by two calls: initialize(run) after the
// initialization and final_labeling(run, step) in place of the final labeling. Internal;
// included only by .cu files.
#pragma once

#include <cstdint>

#include "kernels/block_moments.cuh"
#include "kernels2d/le_tm_statistics_2d.h"
#include "kernels2d/pixel_launch.cuh"
#include "runtime/cuda_support.cuh"
#include "volccl/cuda.h"

namespace volccl::detail {

// A thread per pixel, every thread of the grid taking part (block_moments.cuh's visit): the
// steps whose warps or thread blocks work together.
template <class Step>
__global__ void visit_every_pixel(kernels2d::PixelGrid grid, std::uint32_t first_row, Step step) {
  kernels2d::Pixel pixel;
  const bool inside = pixel_at(grid, first_row, &pixel);
  visit(step, grid, inside, pixel);
}

class PixelStatistics {
 public:
  // With `moments` null, or Late (computed after the labeling), the hooks only label. Early
  // allocates its 128-byte record per pixel here, and is refused with OutOfDeviceMemory when
  // they do not fit.
  PixelStatistics(DeviceLabeling& labeling, const kernels2d::PixelGrid& grid,
                  const std::uint8_t* mask, std::uint32_t* labels, cuda::DeviceMoments* moments,
                  StatisticsStrategy strategy)
      : labeling_(labeling),
        grid_(grid),
        mask_(mask),
        labels_(labels),
        moments_(strategy == StatisticsStrategy::late ? nullptr : moments),
        early_(moments_ != nullptr && strategy == StatisticsStrategy::early),
        nodes_(early_ ? std::uint64_t{grid.width} * grid.height : 0, labeling.stream(),
               "the Early statistics' table of pixels") {}

  // Early: every pixel's record, as the Prelabel kernel initializes the property arrays.
  template <class Run>
  void initialize(const Run&) {
    if (early_) visit_every(EarlyInitialize{mask_, nodes_.data()});
  }

  // Early, once every pixel holds its root: the records go to the roots (the Analysis of
  // Sec. III-A in one pass, the forest being flat), then to the table in label order. Fused:
  // the final labeling also sums the moments. The table's size is the component count, which
  // the host waits for.
  template <class Run>
  void final_labeling(const Run& run, const kernels2d::PixelFinalLabeling& step) {
    if (moments_ == nullptr) {
      run(step);
      return;
    }
    if (early_) visit_every(EarlyTransfer{labels_, nodes_.data()});
    *moments_ = cuda::DeviceMoments(labeling_.wait_for_count(), labeling_.stream());
    if (early_) {
      run(EarlyGather{labels_, nodes_.data(), step.root_bitmap, step.words_before,
                      moments_->data()});
    }
    labeling_.end_step(&StepTimings::statistics_ms);
    if (early_) {
      run(step);
    } else {
      visit_every(FusedFinalLabeling<kernels2d::LabelPixel>{{step}, moments_->data()});
    }
  }

 private:
  template <class Step>
  void visit_every(const Step& step) {
    launch_pixel_slabs(grid_, [&](dim3 blocks, dim3 threads, std::uint32_t first_row) {
      visit_every_pixel<<<blocks, threads, 0, labeling_.stream()>>>(grid_, first_row, step);
    });
  }

  DeviceLabeling& labeling_;
  kernels2d::PixelGrid grid_;
  const std::uint8_t* mask_;
  std::uint32_t* labels_;
  cuda::DeviceMoments* moments_;
  bool early_;
  DeviceBuffer<ComponentMoments> nodes_;  // empty unless Early
};

}  // namespace volccl::detail
