// CUDA backend of LE, Label Equivalence (le_logic_2d.h): one thread per pixel in 32 x 4 thread
// blocks, one kernel per step. After each Scan the host reads the change flag (from page-locked
// memory, as the paper assumes HLE and KLE do, Sec. V-B2) to decide on the next iteration.
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "cuda_backends.h"
#include "cuda_support.cuh"
#include "kernels2d/le_logic_2d.h"

namespace volccl::detail {
namespace {

using kernels2d::Pixel;
using kernels2d::PixelGrid;

constexpr std::uint32_t kBlockWidth = 32;
constexpr std::uint32_t kBlockRows = 4;
constexpr std::uint32_t kMaxGridRows = 65535;  // gridDim.y

// Rows from `first_row` on; the 64-bit row keeps rows near 2^32 from wrapping around. A step that
// returns bool is a Scan: the thread block gathers its results in a shared flag and one thread
// sets `*changed` when any is true (Sec. V-B2).
template <class Step>
__global__ void for_each_pixel(PixelGrid grid, std::uint32_t first_row, Step step,
                               std::uint32_t* changed) {
  const std::uint32_t x = blockIdx.x * kBlockWidth + threadIdx.x;
  const std::uint64_t y = std::uint64_t{first_row} + blockIdx.y * kBlockRows + threadIdx.y;
  const bool inside = x < grid.width && y < grid.height;
  const auto row = static_cast<std::uint32_t>(y);
  const Pixel pixel{x, row, row * grid.width + x};
  if constexpr (std::is_same_v<decltype(step(grid, pixel)), bool>) {
    __shared__ bool block_changed;
    if (threadIdx.x == 0 && threadIdx.y == 0) block_changed = false;
    __syncthreads();
    if (inside && step(grid, pixel)) block_changed = true;
    __syncthreads();
    if (threadIdx.x == 0 && threadIdx.y == 0 && block_changed) *changed = 1;
  } else {
    if (inside) step(grid, pixel);
  }
}

// Tall images (more than 65535 thread-block rows) take several launches of at most 65535.
template <class Step>
void launch_per_pixel(const PixelGrid& grid, cudaStream_t stream, const Step& step,
                      std::uint32_t* changed) {
  const dim3 threads(kBlockWidth, kBlockRows);
  const auto block_columns =
      static_cast<std::uint32_t>((std::uint64_t{grid.width} + kBlockWidth - 1) / kBlockWidth);
  const std::uint64_t block_rows = (std::uint64_t{grid.height} + kBlockRows - 1) / kBlockRows;
  for (std::uint64_t first = 0; first < block_rows; first += kMaxGridRows) {
    const auto rows =
        static_cast<std::uint32_t>(std::min<std::uint64_t>(kMaxGridRows, block_rows - first));
    for_each_pixel<<<dim3(block_columns, rows), threads, 0, stream>>>(
        grid, static_cast<std::uint32_t>(first * kBlockRows), step, changed);
    VOLCCL_CUDA_CHECK(cudaGetLastError());
  }
}

// The host's copy of the change flag, page-locked and allocated once per host thread.
class PinnedFlag {
 public:
  PinnedFlag() { VOLCCL_CUDA_CHECK(cudaMallocHost(&flag_, sizeof(std::uint32_t))); }
  ~PinnedFlag() { cudaFreeHost(flag_); }
  PinnedFlag(const PinnedFlag&) = delete;
  PinnedFlag& operator=(const PinnedFlag&) = delete;
  std::uint32_t* get() const { return flag_; }

 private:
  std::uint32_t* flag_ = nullptr;
};

std::uint32_t* pinned_flag() {
  thread_local PinnedFlag flag;
  return flag.get();
}

template <int Connectivity>
LabelResult label_le(DeviceLabeling& labeling, const PixelGrid& grid, const std::uint8_t* mask,
                     std::uint32_t* labels) {
  const cudaStream_t stream = labeling.stream();
  const DeviceBuffer<std::uint32_t> changed(1, stream, "the LE change flag");
  std::uint32_t* const host_changed = pinned_flag();
  const auto run = [&](const auto& step) { launch_per_pixel(grid, stream, step, nullptr); };
  const auto scan = [&](const auto& step) {
    VOLCCL_CUDA_CHECK(cudaMemsetAsync(changed.data(), 0, sizeof(std::uint32_t), stream));
    launch_per_pixel(grid, stream, step, changed.data());
    VOLCCL_CUDA_CHECK(cudaMemcpyAsync(host_changed, changed.data(), sizeof(std::uint32_t),
                                      cudaMemcpyDeviceToHost, stream));
    VOLCCL_CUDA_CHECK(cudaStreamSynchronize(stream));
    return *host_changed != 0;
  };
  return kernels2d::label_le<Connectivity>(labeling, run, scan, mask, labels);
}

}  // namespace

LabelResult label_le_2d_cuda(const std::uint8_t* mask, Extent3 extent, std::uint32_t* labels,
                             const LabelOptions& options, void* stream_handle) {
  DeviceLabeling labeling(extent, options, static_cast<cudaStream_t>(stream_handle));
  const PixelGrid grid = kernels2d::make_pixel_grid(extent);
  return options.connectivity == 4 ? label_le<4>(labeling, grid, mask, labels)
                                   : label_le<8>(labeling, grid, mask, labels);
}

}  // namespace volccl::detail
