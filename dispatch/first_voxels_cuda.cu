// volccl::cuda::first_voxels: the flat index of each label's first voxel, for labels numbered in
// raster order of their first voxels. volccl.dask keys every piece of a chunk by its first voxel;
// finding them where the chunk was labeled leaves the labels on the device.
//
// Only the first voxel of a run along x can be a label's first voxel, so only run starts take
// part, and they skip the atomic where the label's entry is already lower: the thread blocks run
// roughly in raster order, so after the first few most run starts find their label's entry set.
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/cuda_support.cuh"
#include "volccl/cuda.h"
#include "volccl/error.h"
#include "volccl/volccl.h"

namespace volccl::detail {
namespace {

constexpr std::uint32_t kFullWarp = 0xFFFFFFFFu;

// first[label - 1] = min over the label's run starts of their flat index; `unknown` the largest
// label above `count`.
__global__ void lowest_run_starts(const std::uint32_t* labels, Extent3 extent, std::uint32_t count,
                                  unsigned long long* first, std::uint32_t* unknown,
                                  std::uint32_t first_slice) {
  const std::uint64_t x = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  const std::uint64_t y = std::uint64_t{blockIdx.y} * blockDim.y + threadIdx.y;
  const std::uint64_t z = std::uint64_t{blockIdx.z} + first_slice;
  const bool inside = x < extent.x && y < extent.y;
  const std::uint64_t index = (z * extent.y + y) * extent.x + x;
  const std::uint32_t label = inside ? labels[index] : 0;
  // The previous voxel of the row: the previous lane's, or a load for the warp's first lane.
  std::uint32_t previous = __shfl_up_sync(kFullWarp, label, 1);
  if (threadIdx.x == 0) previous = inside && x > 0 ? labels[index - 1] : 0;
  if (!inside || label == 0 || (x > 0 && previous == label)) return;
  if (label > count) {
    atomicMax(unknown, label);
    return;
  }
  if (first[label - 1] > index) atomicMin(&first[label - 1], index);
}

}  // namespace
}  // namespace volccl::detail

namespace volccl::cuda {

void first_voxels(const std::uint32_t* device_labels, Extent3 extent, std::uint32_t count,
                  std::int64_t* first, void* stream) {
  using detail::DeviceBuffer;
  if (extent.voxel_count() > max_slab_voxel_count) {
    throw InvalidArgument("volccl::cuda::first_voxels: a volume of " + extent.to_string() +
                          " voxels is larger than the " + std::to_string(max_slab_voxel_count) +
                          " labeled at once on device memory");
  }
  if (!cuda_available()) {
    throw NoCudaDevice("volccl::cuda::first_voxels: " + cuda_device_description());
  }
  if (device_labels == nullptr || (first == nullptr && count > 0)) {
    throw InvalidArgument("volccl::cuda::first_voxels: null label or output pointer");
  }
  const auto cuda_stream = static_cast<cudaStream_t>(stream);
  // One more entry than labels, so that the buffer is never empty; unset entries stay all ones.
  DeviceBuffer<unsigned long long> lowest(std::size_t{count} + 1, cuda_stream, "the first voxels");
  DeviceBuffer<std::uint32_t> unknown(1, cuda_stream, "a word");
  VOLCCL_CUDA_CHECK(cudaMemsetAsync(lowest.data(), 0xFF, lowest.bytes(), cuda_stream));
  VOLCCL_CUDA_CHECK(cudaMemsetAsync(unknown.data(), 0, sizeof(std::uint32_t), cuda_stream));
  detail::launch_in_slabs(
      static_cast<std::uint32_t>(extent.x), static_cast<std::uint32_t>(extent.y),
      static_cast<std::uint32_t>(extent.z),
      [&](dim3 blocks, dim3 threads, std::uint32_t first_slice) {
        detail::lowest_run_starts<<<blocks, threads, 0, cuda_stream>>>(
            device_labels, extent, count, lowest.data(), unknown.data(), first_slice);
      });
  std::vector<unsigned long long> found(count);
  std::uint32_t largest_unknown = 0;
  VOLCCL_CUDA_CHECK(cudaMemcpyAsync(found.data(), lowest.data(), count * sizeof(unsigned long long),
                                    cudaMemcpyDeviceToHost, cuda_stream));
  VOLCCL_CUDA_CHECK(cudaMemcpyAsync(&largest_unknown, unknown.data(), sizeof largest_unknown,
                                    cudaMemcpyDeviceToHost, cuda_stream));
  lowest.release();
  unknown.release();
  VOLCCL_CUDA_CHECK(cudaStreamSynchronize(cuda_stream));
  if (largest_unknown != 0) {
    throw InvalidArgument("volccl::cuda::first_voxels: the labels hold label " +
                          std::to_string(largest_unknown) + " but the count is " +
                          std::to_string(count));
  }
  // Raster order of the first voxels is increasing first voxels; a label never seen has none.
  const std::uint64_t voxels = extent.voxel_count();
  for (std::uint32_t label = 0; label < count; ++label) {
    if (found[label] >= voxels || (label > 0 && found[label] <= found[label - 1])) {
      throw InvalidArgument("volccl::cuda::first_voxels: the labels are not numbered 1.." +
                            std::to_string(count) + " in raster order of their first voxels");
    }
    first[label] = static_cast<std::int64_t>(found[label]);
  }
}

}  // namespace volccl::cuda
