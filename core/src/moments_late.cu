// The GPU's Late statistics (LE/TM paper Sec. III-D): one pass over a finished label image.
// A thread block takes a region of 64 x 16 x 8 voxels (64 x 128 pixels in an image) in four
// passes of a 32 x 64-row tile; each lane takes 8 voxels of one row, splits them into runs and
// sums the runs of each label in closed form, relative to the region's origin; in every round
// each lane offers the sums of its next label, lanes of the same label reduce theirs with warp
// intrinsics and the region gathers them by label in shared memory (moments.cuh). Then the thread
// block reads the one-voxel shell around its region: a label seen there crosses the region and its
// sums go to the global table by atomics (one per moment); every other label lies wholly inside,
// and its row is written with plain stores. Random volumes are mostly components of a few voxels,
// and atomics on the 16 moments of millions of rows cost several times the labeling
// (bench/NOTES.md); a component crossing many regions costs one atomic per moment and region. Also
// the device table of moments (volccl::cuda::DeviceMoments).
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "cuda_backends.h"
#include "cuda_support.cuh"
#include "moments.cuh"
#include "volccl/cuda.h"
#include "volccl/detail/host_device.h"
#include "volccl/volccl.h"

namespace volccl {
namespace detail {
namespace {

constexpr int kThreads = 256;      // eight warps
constexpr int kVoxelsPerLane = 8;  // along x
constexpr int kLanesPerRow = 4;    // so a tile is 32 voxels wide
constexpr int kTileWidth = kVoxelsPerLane * kLanesPerRow;
constexpr int kTileRows = kThreads / kLanesPerRow;  // 64 rows of (y, z) per tile
constexpr int kPasses = 4;                          // tiles per region: 2 along x times 2 along y
constexpr int kRegionWidth = 2 * kTileWidth;
// A region holds 8192 voxels: rarely more than 256 labels, even in random volumes. Relative
// to its origin, every sum over it fits 32 bits (at most 8192 * 127^2 for an image's y^2).
constexpr int kSlots = 512;
using RegionMoments = SharedMoments<kSlots>;

struct RegionGrid {
  std::uint32_t nx, ny, nz;
  int log2_tile_height;      // rows along y per tile: 8 in a volume, 64 in an image
  std::uint32_t tile_depth;  // slices per tile and region: 8 or 1
  std::uint32_t region_height, region_depth;
  std::uint32_t regions_x, regions_y;
  std::uint64_t regions;
  Divisor by_regions_x, by_regions_y;
};

RegionGrid make_region_grid(Extent3 extent) {
  RegionGrid grid;
  grid.nx = static_cast<std::uint32_t>(extent.x);
  grid.ny = static_cast<std::uint32_t>(extent.y);
  grid.nz = static_cast<std::uint32_t>(extent.z);
  grid.log2_tile_height = extent.z > 1 ? 3 : 6;
  grid.tile_depth = kTileRows >> grid.log2_tile_height;
  grid.region_height = 2u << grid.log2_tile_height;
  grid.region_depth = grid.tile_depth;
  grid.regions_x = (grid.nx + kRegionWidth - 1) / kRegionWidth;
  grid.regions_y = (grid.ny + grid.region_height - 1) / grid.region_height;
  grid.regions = std::uint64_t{grid.regions_x} * grid.regions_y *
                 ((grid.nz + grid.region_depth - 1) / grid.region_depth);
  grid.by_regions_x = Divisor(grid.regions_x, grid.regions);
  grid.by_regions_y = Divisor(grid.regions_y, grid.regions);
  return grid;
}

__device__ __forceinline__ std::uint32_t pick(const std::uint32_t (&values)[kVoxelsPerLane],
                                              int index) {
  std::uint32_t value = values[0];
#pragma unroll
  for (int i = 1; i < kVoxelsPerLane; ++i) value = index == i ? values[i] : value;
  return value;
}

// One lane's 8 voxels of one tile, offered label by label to the region's table; (x0, y, z) is
// the lane's first voxel relative to the region's origin.
__device__ __forceinline__ void accumulate_lane(const std::uint32_t* labels, const RegionGrid& grid,
                                                const Origin& origin, std::uint32_t x0,
                                                std::uint32_t y, std::uint32_t z,
                                                std::uint32_t count,
                                                std::uint32_t* largest_unknown_label,
                                                RegionMoments& region, ComponentMoments* table) {
  std::uint32_t voxels[kVoxelsPerLane];
  std::uint32_t foreground = 0, starts = 0;
  const std::uint64_t x_begin = origin.x + x0;
  const bool row_exists = origin.y + y < grid.ny && origin.z + z < grid.nz;
  const std::uint64_t row_start = ((origin.z + z) * grid.ny + origin.y + y) * grid.nx;
#pragma unroll
  for (int i = 0; i < kVoxelsPerLane; ++i) {
    voxels[i] = row_exists && x_begin + i < grid.nx ? labels[row_start + x_begin + i] : 0;
    if (voxels[i] > count) {  // not a row of the table: left out, and reported if asked
      if (largest_unknown_label != nullptr) atomicMax(largest_unknown_label, voxels[i]);
      voxels[i] = 0;
    }
    if (voxels[i] != 0) {
      foreground |= 1u << i;
      if (i == 0 || voxels[i] != voxels[i - 1]) starts |= 1u << i;
    }
  }
  // Bits where a run ends before: a new run, background, or past the lane's voxels.
  const std::uint32_t stops = starts | (~foreground & 0xFFu) | (1u << kVoxelsPerLane);
  while (__any_sync(kFullWarp, starts != 0)) {
    const bool has = starts != 0;
    std::uint32_t label = 0;
    Moments m = no_moments();
    if (has) {
      label = pick(voxels, __ffs(static_cast<int>(starts)) - 1);
      // Every run of that label among the lane's voxels: one round for all of them.
      for (std::uint32_t left = starts; left != 0; left &= left - 1) {
        const int first = __ffs(static_cast<int>(left)) - 1;
        if (pick(voxels, first) != label) continue;
        const int end = __ffs(static_cast<int>(stops & ~((2u << first) - 1u))) - 1;
        merge(m, run_moments(x0 + first, end - first, y, z));
        starts &= ~(1u << first);
      }
    }
    if (reduce_by_label<true>(has, label, m)) region.add(label, m, origin, table);
  }
}

// Marks the labels of the voxels of one face of the region's shell, a rectangle of nu x nv
// voxels from `first`, `u_step` and `v_step` apart.
__device__ __forceinline__ void mark_face(const std::uint32_t* labels, std::uint64_t first,
                                          std::uint32_t nu, std::uint32_t nv, std::uint64_t u_step,
                                          std::uint64_t v_step, std::uint32_t count,
                                          RegionMoments& region) {
  const std::uint32_t voxels = nu * nv;
  for (std::uint32_t i = threadIdx.x; i < voxels; i += kThreads) {
    const std::uint32_t v = i / nu;
    const std::uint32_t label = labels[first + (i - v * nu) * u_step + v * v_step];
    if (label != 0 && label <= count) region.mark_crossing(label);
  }
}

__global__ void __launch_bounds__(kThreads)
    accumulate_moments(const std::uint32_t* labels, RegionGrid grid, ComponentMoments* table,
                       std::uint32_t count, std::uint32_t* largest_unknown_label) {
  extern __shared__ unsigned char shared_bytes[];
  RegionMoments& region = *reinterpret_cast<RegionMoments*>(shared_bytes);
  region.clear();
  __syncthreads();

  const std::uint32_t index = blockIdx.x;
  const std::uint32_t rest = grid.by_regions_x.quotient(index);
  const std::uint32_t x_begin = (index - rest * grid.regions_x) * kRegionWidth;
  const std::uint32_t region_z = grid.by_regions_y.quotient(rest);
  const std::uint32_t y_begin = (rest - region_z * grid.regions_y) * grid.region_height;
  const std::uint32_t z_begin = region_z * grid.region_depth;
  const Origin origin{x_begin, y_begin, z_begin};
  const std::uint32_t row_in_tile = threadIdx.x / kLanesPerRow;
  const std::uint32_t height_mask = (1u << grid.log2_tile_height) - 1;
  for (int pass = 0; pass < kPasses; ++pass) {
    const std::uint32_t y = ((pass >> 1) << grid.log2_tile_height) + (row_in_tile & height_mask);
    const std::uint32_t z = row_in_tile >> grid.log2_tile_height;
    const std::uint32_t x0 =
        (pass & 1) * kTileWidth + (threadIdx.x % kLanesPerRow) * kVoxelsPerLane;
    accumulate_lane(labels, grid, origin, x0, y, z, count, largest_unknown_label, region, table);
  }
  __syncthreads();

  // The shell: the faces beyond the region's ends along z, then y, then x, each including the
  // edges and corners the ones before it left out.
  const std::uint32_t x_end = min(x_begin + kRegionWidth, grid.nx);
  const std::uint32_t y_end = min(y_begin + grid.region_height, grid.ny);
  const std::uint32_t z_end = min(z_begin + grid.region_depth, grid.nz);
  const std::uint32_t x_low = x_begin > 0 ? x_begin - 1 : 0;
  const std::uint32_t x_high = min(x_end + 1, grid.nx);
  const std::uint32_t y_low = y_begin > 0 ? y_begin - 1 : 0;
  const std::uint32_t y_high = min(y_end + 1, grid.ny);
  const std::uint64_t row = grid.nx;
  const std::uint64_t slice = std::uint64_t{grid.nx} * grid.ny;
  for (const std::uint32_t z : {z_begin - 1, z_end}) {
    if (z >= grid.nz) continue;  // z_begin - 1 wraps around at 0
    mark_face(labels, z * slice + y_low * row + x_low, x_high - x_low, y_high - y_low, 1, row,
              count, region);
  }
  for (const std::uint32_t y : {y_begin - 1, y_end}) {
    if (y >= grid.ny) continue;
    mark_face(labels, z_begin * slice + y * row + x_low, x_high - x_low, z_end - z_begin, 1, slice,
              count, region);
  }
  for (const std::uint32_t x : {x_begin - 1, x_end}) {
    if (x >= grid.nx) continue;
    mark_face(labels, z_begin * slice + y_begin * row + x, y_end - y_begin, z_end - z_begin, row,
              slice, count, region);
  }
  __syncthreads();
  region.flush(table, origin, true);
}

// Every 32-bit word of the table, padding included (a download copies whole records): zero but
// for the bounding box minima, which start at the largest index.
__global__ void clear_moments(std::uint32_t* words, std::uint64_t count) {
  constexpr std::uint32_t kWords = sizeof(ComponentMoments) / 4;
  constexpr std::uint32_t kFirstMin = offsetof(ComponentMoments, min) / 4;
  const std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i >= count * kWords) return;
  const std::uint32_t word = static_cast<std::uint32_t>(i % kWords);
  words[i] = word >= kFirstMin && word < kFirstMin + 3 ? 0xFFFFFFFFu : 0u;
}

}  // namespace

void accumulate_late_moments(const std::uint32_t* device_labels, Extent3 extent,
                             ComponentMoments* table, std::uint32_t count,
                             std::uint32_t* largest_unknown_label, void* stream) {
  const RegionGrid grid = make_region_grid(extent);
  // The region's table is larger than the 48 KiB a kernel gets without asking (a setting of
  // the current device's context, so asked for at every call).
  VOLCCL_CUDA_CHECK(cudaFuncSetAttribute(
      accumulate_moments, cudaFuncAttributeMaxDynamicSharedMemorySize, sizeof(RegionMoments)));
  // At most 2^32 voxels in regions of 8192: gridDim.x's 2^31 - 1 is never reached.
  accumulate_moments<<<static_cast<unsigned>(grid.regions), kThreads, sizeof(RegionMoments),
                       static_cast<cudaStream_t>(stream)>>>(device_labels, grid, table, count,
                                                            largest_unknown_label);
  VOLCCL_CUDA_CHECK(cudaGetLastError());
}

}  // namespace detail

namespace cuda {

DeviceMoments::DeviceMoments(std::uint32_t count, void* stream) : size_(count), stream_(stream) {
  const auto cuda_stream = static_cast<cudaStream_t>(stream);
  data_ = static_cast<ComponentMoments*>(detail::allocate_async(
      std::size_t{count} * sizeof(ComponentMoments), cuda_stream, "the component moments"));
  if (count == 0) return;
  const std::uint64_t words = std::uint64_t{count} * sizeof(ComponentMoments) / 4;
  detail::clear_moments<<<static_cast<unsigned>((words + 255) / 256), 256, 0, cuda_stream>>>(
      reinterpret_cast<std::uint32_t*>(data_), count);
  VOLCCL_CUDA_CHECK(cudaGetLastError());
}

DeviceMoments::~DeviceMoments() {
  if (data_ != nullptr) cudaFreeAsync(data_, static_cast<cudaStream_t>(stream_));
}

DeviceMoments::DeviceMoments(DeviceMoments&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      stream_(other.stream_) {}

DeviceMoments& DeviceMoments::operator=(DeviceMoments&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) cudaFreeAsync(data_, static_cast<cudaStream_t>(stream_));
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    stream_ = other.stream_;
  }
  return *this;
}

std::vector<ComponentMoments> DeviceMoments::to_host() const {
  std::vector<ComponentMoments> host(size_);
  const auto cuda_stream = static_cast<cudaStream_t>(stream_);
  VOLCCL_CUDA_CHECK(cudaMemcpyAsync(host.data(), data_, host.size() * sizeof(ComponentMoments),
                                    cudaMemcpyDeviceToHost, cuda_stream));
  VOLCCL_CUDA_CHECK(cudaStreamSynchronize(cuda_stream));
  return host;
}

DeviceMoments measure(const std::uint32_t* device_labels, Extent3 extent,
                      std::uint32_t component_count, void* stream) {
  validate_statistics(extent);
  if (!cuda_available()) throw NoCudaDevice("volccl::cuda::measure: " + cuda_device_description());
  if (device_labels == nullptr) {
    throw InvalidArgument("volccl::cuda::measure: null label pointer for a volume of " +
                          extent.to_string());
  }
  const auto cuda_stream = static_cast<cudaStream_t>(stream);
  DeviceMoments table(component_count, stream);
  detail::DeviceBuffer<std::uint32_t> unknown(1, cuda_stream, "a word");
  VOLCCL_CUDA_CHECK(cudaMemsetAsync(unknown.data(), 0, sizeof(std::uint32_t), cuda_stream));
  detail::accumulate_late_moments(device_labels, extent, table.data(), component_count,
                                  unknown.data(), stream);
  std::uint32_t largest_unknown = 0;
  VOLCCL_CUDA_CHECK(cudaMemcpyAsync(&largest_unknown, unknown.data(), sizeof largest_unknown,
                                    cudaMemcpyDeviceToHost, cuda_stream));
  VOLCCL_CUDA_CHECK(cudaStreamSynchronize(cuda_stream));
  if (largest_unknown != 0) {
    throw InvalidArgument("volccl::cuda::measure: the label image holds label " +
                          std::to_string(largest_unknown) + " but the component count is " +
                          std::to_string(component_count));
  }
  return table;
}

}  // namespace cuda
}  // namespace volccl
