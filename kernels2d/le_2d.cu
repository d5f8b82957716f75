// CUDA backend of LE, Label Equivalence (le_logic_2d.h): one thread per pixel in 32 x 4 thread
// blocks, one kernel per step. After each Scan the host reads the change flag (from page-locked
// memory, as the paper assumes HLE and KLE do, Sec. V-B2) to decide on the next iteration.
#include <cstdint>

#include "kernels2d/le_logic_2d.h"
#include "kernels2d/le_tm_statistics_2d.cuh"
#include "kernels2d/pixel_launch.cuh"
#include "runtime/cuda_support.cuh"
#include "runtime/labeler.h"

namespace volccl::detail {
namespace {

using kernels2d::Pixel;
using kernels2d::PixelGrid;

// A step that returns bool is a Scan: the thread block gathers its results in a shared flag and
// one thread sets `*changed` when any is true (Sec. V-B2).
template <class Step>
__global__ void for_each_pixel_flagged(PixelGrid grid, std::uint32_t first_row, Step step,
                                       std::uint32_t* changed) {
  Pixel pixel;
  const bool inside = pixel_at(grid, first_row, &pixel);
  __shared__ bool block_changed;
  if (threadIdx.x == 0 && threadIdx.y == 0) block_changed = false;
  __syncthreads();
  if (inside && step(grid, pixel)) block_changed = true;
  __syncthreads();
  if (threadIdx.x == 0 && threadIdx.y == 0 && block_changed) *changed = 1;
}

template <int Connectivity>
LabelResult label_le(DeviceLabeling& labeling, PixelStatistics& statistics, const PixelGrid& grid,
                     const std::uint8_t* mask, std::uint32_t* labels) {
  const cudaStream_t stream = labeling.stream();
  const DeviceBuffer<std::uint32_t> changed(1, stream, "the LE change flag");
  const PinnedWord changed_on_host;
  std::uint32_t* const host_changed = changed_on_host.host();
  const auto run = [&](const auto& step) { launch_per_pixel(grid, stream, step); };
  const auto scan = [&](const auto& step) {
    VOLCCL_CUDA_CHECK(cudaMemsetAsync(changed.data(), 0, sizeof(std::uint32_t), stream));
    launch_pixel_slabs(grid, [&](dim3 blocks, dim3 threads, std::uint32_t first_row) {
      for_each_pixel_flagged<<<blocks, threads, 0, stream>>>(grid, first_row, step, changed.data());
    });
    VOLCCL_CUDA_CHECK(cudaMemcpyAsync(host_changed, changed.data(), sizeof(std::uint32_t),
                                      cudaMemcpyDeviceToHost, stream));
    VOLCCL_CUDA_CHECK(cudaStreamSynchronize(stream));
    return *host_changed != 0;
  };
  return kernels2d::label_le<Connectivity>(labeling, statistics, run, scan, mask, labels);
}

}  // namespace

LabelResult label_le_2d_cuda(const DeviceLabelCall& call) {
  const std::uint8_t* const mask = call.mask;
  std::uint32_t* const labels = call.labels;
  DeviceLabeling labeling(call);
  const PixelGrid grid = kernels2d::make_pixel_grid(call.extent);
  PixelStatistics statistics(labeling, grid, mask, labels, call.moments,
                             call.options.statistics_strategy);
  return call.options.connectivity == 4 ? label_le<4>(labeling, statistics, grid, mask, labels)
                                        : label_le<8>(labeling, statistics, grid, mask, labels);
}

}  // namespace volccl::detail
