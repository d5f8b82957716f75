// The GPU's Late statistics (LE/TM paper Sec. III-D): one pass over a finished label image.
// A thread block takes a region of 64 x 16 x 8 voxels (64 x 128 pixels in an image) in four
// passes of a 32 x 64-row tile; each lane takes 8 voxels of one row. In every round each lane
// offers its voxels of its next label, summed relative to its warp's 32 x 8 rectangle and packed
// into three words (PackedWarpSums); lanes of the same label reduce them with four warp
// intrinsics, and the group's leader adds them, relative to the region's origin, to the region's
// table of 32-bit sums in shared memory (moments.cuh). After labeling, where labels are
// connected components, a label whose bounding box in the region touches a face shared with
// another region may cross it, and its sums go to the global table by atomics (one per moment);
// every other label lies wholly inside, and its row is written with plain stores. Random volumes
// are mostly components of a few voxels, and atomics on the 16 moments of millions of rows cost
// several times the labeling (bench/notes/statistics.md); a component crossing many regions costs
// one atomic per moment and region. The bounding box decides without reading beyond the region,
// which reading its one-voxel shell did, at a cost on dense volumes. After labeling, the labeling
// itself enqueues the pass before it waits for its count (LateBeforeCount) where the volume is
// small. Also the device table of moments (volccl::cuda::DeviceMoments).
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "runtime/cuda_support.cuh"
#include "runtime/host_device.h"
#include "runtime/late_moments.h"
#include "runtime/moments.cuh"
#include "volccl/cuda.h"
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
using RegionMoments = SharedMoments<kSlots, true>;
static_assert(sizeof(RegionMoments) <= 48 * 1024, "more shared memory than a launch gets unasked");

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

// A warp covers 32 x 8 voxels of a tile: x from its lanes' columns, y from its lanes' rows
// (lane / 4), z constant. Summed relative to that 32 x 8 rectangle, a label's moments over the
// warp in one round (at most 256 voxels) pack into three 32-bit words, whose fields cannot carry
// into each other: count < 2^9, sum x < 2^13, sum y < 2^11, sum xx < 2^18, sum yy < 2^14,
// sum xy < 2^16; the z moments follow from the count and the x and y sums.
struct PackedWarpSums {
  std::uint32_t xx_yy;       // sum xx | sum yy << 18
  std::uint32_t x_xy;        // sum x | sum xy << 13
  std::uint32_t count_y;     // count | sum y << 9
  std::uint32_t x_occupied;  // bit x: a voxel at x, for the bounding box
};

// The sums of the voxels `mask` (bit i: the lane's voxel i) of a lane whose first voxel is at
// (x, y) in the warp's rectangle. With i = b0 + 2 b1 + 4 b2, sum i and sum i^2 are popcounts.
__device__ __forceinline__ PackedWarpSums lane_sums(std::uint32_t mask, std::uint32_t x,
                                                    std::uint32_t y) {
  const std::uint32_t n = __popc(mask);
  const std::uint32_t bit0 = __popc(mask & 0xAAu), bit1 = __popc(mask & 0xCCu),
                      bit2 = __popc(mask & 0xF0u);
  const std::uint32_t sum_i = bit0 + 2 * bit1 + 4 * bit2;
  const std::uint32_t sum_ii = bit0 + 4 * bit1 + 16 * bit2 + 4 * __popc(mask & 0x88u) +
                               8 * __popc(mask & 0xA0u) + 16 * __popc(mask & 0xC0u);
  const std::uint32_t sum_x = n * x + sum_i;
  const std::uint32_t sum_xx = n * x * x + 2 * x * sum_i + sum_ii;
  return {sum_xx | (n * y * y) << 18, sum_x | (sum_x * y) << 13, n | (n * y) << 9, mask << x};
}

// A group's packed sums, relative to the warp's rectangle at `corner` of the region, as
// moments relative to the region: every sum over the region fits 32 bits, so 32-bit
// arithmetic is exact. `group`: the lanes of the label, whose rows give the y bounds.
__device__ __forceinline__ Moments region_moments(const PackedWarpSums& sums, unsigned group,
                                                  std::uint32_t ox, std::uint32_t oy,
                                                  std::uint32_t oz) {
  const std::uint32_t n = sums.count_y & 0x1FFu, sum_y = sums.count_y >> 9;
  const std::uint32_t sum_x = sums.x_xy & 0x1FFFu, sum_xy = sums.x_xy >> 13;
  const std::uint32_t sum_xx = sums.xx_yy & 0x3FFFFu, sum_yy = sums.xx_yy >> 18;
  const std::uint32_t x = sum_x + n * ox, y = sum_y + n * oy;
  Moments m;
  m.count = n;
  m.sum[0] = x;
  m.sum[1] = y;
  m.sum[2] = n * oz;
  m.sum_products[0] = sum_xx + 2 * ox * sum_x + n * ox * ox;
  m.sum_products[1] = sum_yy + 2 * oy * sum_y + n * oy * oy;
  m.sum_products[2] = n * oz * oz;
  m.sum_products[3] = sum_xy + oy * sum_x + ox * sum_y + n * ox * oy;
  m.sum_products[4] = oz * x;
  m.sum_products[5] = oz * y;
  m.min[0] = ox + __ffs(static_cast<int>(sums.x_occupied)) - 1;
  m.max[0] = ox + 31 - __clz(static_cast<int>(sums.x_occupied));
  m.min[1] = oy + (__ffs(static_cast<int>(group)) - 1) / kLanesPerRow;
  m.max[1] = oy + (31 - __clz(static_cast<int>(group))) / kLanesPerRow;
  m.min[2] = m.max[2] = oz;
  return m;
}

// What the pass reads. With the labeler's mask, a lane whose 8 voxels are background skips
// their 32 bytes of labels: most of a sparse volume's; and the labels are connected components,
// so a label whose box keeps off the region's shared faces lies wholly inside (RegionBox). Without
// it (volccl::cuda::measure of any label image, where one label may lie in pieces in several
// regions) every row is added by atomics. `whole_rows_aligned`: nx is a multiple of 8 and the
// pointers of 16 and 8 bytes, so a lane's 8 voxels inside the volume take two 16-byte loads and
// its mask one 8-byte load.
struct LateInput {
  const std::uint32_t* labels;
  const std::uint8_t* mask;  // null: labels alone (volccl::cuda::measure)
  bool whole_rows_aligned;
  std::uint32_t count;                   // labels above it are not rows of the table
  std::uint32_t* largest_unknown_label;  // may be null
  // Not null: the component count, in device memory (LateBeforeCount); `count` is then the
  // table's rows, and a larger component count leaves the pass to late_moments.
  const std::uint32_t* device_count;
};

// A lane's 8 voxels in one pass: (x0, y, z) is the first, relative to the region's origin.
struct LanePlace {
  std::uint32_t x0, y, z;
  std::uint64_t first;  // its index in the volume
  bool whole;           // inside the volume, and read by 16-byte loads (whole_rows_aligned)
};

__device__ __forceinline__ LanePlace lane_place(const LateInput& input, const RegionGrid& grid,
                                                const Origin& origin, int pass) {
  const std::uint32_t row_in_tile = threadIdx.x / kLanesPerRow;
  const std::uint32_t height_mask = (1u << grid.log2_tile_height) - 1;
  LanePlace place;
  place.y = ((pass >> 1) << grid.log2_tile_height) + (row_in_tile & height_mask);
  place.z = row_in_tile >> grid.log2_tile_height;
  place.x0 = (pass & 1) * kTileWidth + (threadIdx.x % kLanesPerRow) * kVoxelsPerLane;
  place.first = (std::uint64_t{origin.z + place.z} * grid.ny + origin.y + place.y) * grid.nx +
                origin.x + place.x0;
  place.whole = input.whole_rows_aligned && origin.y + place.y < grid.ny &&
                origin.z + place.z < grid.nz && origin.x + place.x0 + kVoxelsPerLane <= grid.nx;
  return place;
}

// The lane's 8 mask bytes, non-zero where it has no mask to skip by. The thread loads those of
// all its passes before the first pass, so that their latencies overlap, and keeps a bit of
// each: four 8-byte words held through the passes were spilled to local memory, and that traffic
// took a large share of the kernel's L2 bandwidth.
__device__ __forceinline__ std::uint64_t lane_foreground(const LateInput& input,
                                                         const LanePlace& place) {
  if (input.mask == nullptr || !place.whole) return ~std::uint64_t{0};
  return *reinterpret_cast<const std::uint64_t*>(input.mask + place.first);
}

__device__ __forceinline__ void load_lane(const LateInput& input, const RegionGrid& grid,
                                          const Origin& origin, const LanePlace& place,
                                          bool any_foreground,
                                          std::uint32_t (&voxels)[kVoxelsPerLane]) {
  if (!any_foreground) {
#pragma unroll
    for (int i = 0; i < kVoxelsPerLane; ++i) voxels[i] = 0;
    return;
  }
  if (place.whole) {
    const uint4 low = *reinterpret_cast<const uint4*>(input.labels + place.first);
    const uint4 high = *reinterpret_cast<const uint4*>(input.labels + place.first + 4);
    voxels[0] = low.x, voxels[1] = low.y, voxels[2] = low.z, voxels[3] = low.w;
    voxels[4] = high.x, voxels[5] = high.y, voxels[6] = high.z, voxels[7] = high.w;
    return;
  }
  const bool row_exists = origin.y + place.y < grid.ny && origin.z + place.z < grid.nz;
#pragma unroll
  for (int i = 0; i < kVoxelsPerLane; ++i) {
    voxels[i] = row_exists && origin.x + place.x0 + i < grid.nx ? input.labels[place.first + i] : 0;
  }
}

// One lane's 8 voxels of one tile, offered label by label to the region's table.
template <class Rows>
__device__ __forceinline__ void accumulate_lane(const LateInput& input, const RegionGrid& grid,
                                                const Origin& origin, const LanePlace& place,
                                                bool any_foreground, RegionMoments& region,
                                                const Rows& table) {
  std::uint32_t voxels[kVoxelsPerLane];
  load_lane(input, grid, origin, place, any_foreground, voxels);
  const std::uint32_t x0 = place.x0, y = place.y, z = place.z;
  std::uint32_t left = 0;  // the voxels not yet offered
#pragma unroll
  for (int i = 0; i < kVoxelsPerLane; ++i) {
    if (voxels[i] > input.count) {  // not a row of the table: left out, and reported if asked
      if (input.largest_unknown_label != nullptr) {
        atomicMax(input.largest_unknown_label, voxels[i]);
      }
      voxels[i] = 0;
    }
    if (voxels[i] != 0) left |= 1u << i;
  }
  const unsigned lane = threadIdx.x % 32;
  const std::uint32_t x_in_warp = (lane % kLanesPerRow) * kVoxelsPerLane;
  const std::uint32_t y_in_warp = lane / kLanesPerRow;
  while (__any_sync(kFullWarp, left != 0)) {
    const bool has = left != 0;
    std::uint32_t label = 0, mask = 0;
    if (has) {
      label = pick(voxels, __ffs(static_cast<int>(left)) - 1);
#pragma unroll
      for (int i = 0; i < kVoxelsPerLane; ++i) mask |= (voxels[i] == label ? 1u : 0u) << i;
      left &= ~mask;
    }
    const unsigned group = __match_any_sync(kFullWarp, label);
    PackedWarpSums sums = lane_sums(mask, x_in_warp, y_in_warp);
    // A reduction over a partial mask runs once per distinct mask among the calling lanes: only
    // lanes that share a label call it (a lone lane's sums are its group's), so sparse volumes,
    // whose lanes are mostly background or alone with their label, do not loop.
    if (has && shares_label(group)) {
      sums.xx_yy = __reduce_add_sync(group, sums.xx_yy);
      sums.x_xy = __reduce_add_sync(group, sums.x_xy);
      sums.count_y = __reduce_add_sync(group, sums.count_y);
      sums.x_occupied = __reduce_or_sync(group, sums.x_occupied);
    }
    if (has && lane == static_cast<unsigned>(__ffs(static_cast<int>(group)) - 1)) {
      region.add(label, region_moments(sums, group, x0 - x_in_warp, y - y_in_warp, z), origin,
                 table);
    }
  }
}

// ClaimedRows take 74 registers unbounded (3 thread blocks an SM); bounded to 64 for 4, with a
// few bytes spilled, they ran faster on the volumes of millions of components.
// kCountOnDevice: input.device_count is read (LateBeforeCount), a register the others do without.
template <class Rows, bool kCountOnDevice = false>
__global__ void __launch_bounds__(kThreads, 4)
    accumulate_moments(LateInput input, RegionGrid grid, Rows table) {
  // Loaded before the masks are needed, so that its latency hides behind theirs and the clearing's.
  std::uint32_t device_count = 0;
  if constexpr (kCountOnDevice) device_count = *input.device_count;
  const std::uint32_t index = blockIdx.x;
  const std::uint32_t rest = grid.by_regions_x.quotient(index);
  const std::uint32_t x_begin = (index - rest * grid.regions_x) * kRegionWidth;
  const std::uint32_t region_z = grid.by_regions_y.quotient(rest);
  const std::uint32_t y_begin = (rest - region_z * grid.regions_y) * grid.region_height;
  const std::uint32_t z_begin = region_z * grid.region_depth;
  const Origin origin{x_begin, y_begin, z_begin};
  // The masks first, their loads in flight while the table is cleared.
  std::uint64_t foreground[kPasses];
#pragma unroll
  for (int pass = 0; pass < kPasses; ++pass) {
    foreground[pass] = lane_foreground(input, lane_place(input, grid, origin, pass));
  }
  extern __shared__ unsigned char shared_bytes[];
  RegionMoments& region = *reinterpret_cast<RegionMoments*>(shared_bytes);
  region.clear();
  if constexpr (kCountOnDevice) {
    if (device_count > input.count) return;  // the whole block: late_moments runs after the wait
    input.count = device_count;
  }
  std::uint32_t passes_with_foreground = 0;
#pragma unroll
  for (int pass = 0; pass < kPasses; ++pass) {
    passes_with_foreground |= (foreground[pass] != 0 ? 1u : 0u) << pass;
  }
  __syncthreads();
#pragma unroll 1
  for (int pass = 0; pass < kPasses; ++pass) {
    accumulate_lane(input, grid, origin, lane_place(input, grid, origin, pass),
                    (passes_with_foreground >> pass & 1u) != 0, region, table);
  }
  __syncthreads();

  region.flush(table, origin,
               RegionBox::clipped(origin, kRegionWidth, grid.region_height, grid.region_depth,
                                  grid.nx, grid.ny, grid.nz, input.mask != nullptr));
}

// Every 16-byte part of the table, padding included (a download copies whole records): zero but
// for the bounding box minima, which start at the largest index. Whole parts, as the rows'
// stores (4-byte stores left the clearing far short of the memory's bandwidth).
// `device_count`, when not null, is the component count: only that many rows are cleared, and
// none where the table has fewer.
__global__ void clear_moments(uint4* parts, std::uint64_t count,
                              const std::uint32_t* device_count) {
  const std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (device_count != nullptr) count = *device_count <= count ? *device_count : 0;
  if (i >= count * kRowParts) return;
  parts[i] = row_parts_of_empty_row(static_cast<unsigned>(i % kRowParts));
}

LateInput late_input(const std::uint32_t* labels, const std::uint8_t* mask, const RegionGrid& grid,
                     std::uint32_t count, std::uint32_t* largest_unknown_label,
                     const std::uint32_t* device_count) {
  const auto aligned = [](const void* pointer, std::uintptr_t bytes) {
    return reinterpret_cast<std::uintptr_t>(pointer) % bytes == 0;
  };
  return {labels,
          mask,
          grid.nx % kVoxelsPerLane == 0 && aligned(labels, 16) && aligned(mask, 8),
          count,
          largest_unknown_label,
          device_count};
}

void clear_rows(ComponentMoments* rows, std::uint32_t count, const std::uint32_t* device_count,
                cudaStream_t stream) {
  if (count == 0) return;
  const std::uint64_t parts = std::uint64_t{count} * kRowParts;
  clear_moments<<<static_cast<unsigned>((parts + 255) / 256), 256, 0, stream>>>(
      reinterpret_cast<uint4*>(rows), count, device_count);
  VOLCCL_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

cuda::DeviceMoments late_moments(const std::uint32_t* device_labels,
                                 const std::uint8_t* device_mask, Extent3 extent,
                                 std::uint32_t count, std::uint32_t* largest_unknown_label,
                                 void* stream) {
  const auto cuda_stream = static_cast<cudaStream_t>(stream);
  const RegionGrid grid = make_region_grid(extent);
  // Without the mask the labels need not be components: every piece is added by atomics.
  ComponentTable table =
      component_table(count, device_mask != nullptr ? grid.regions : count, cuda_stream);
  const LateInput input =
      late_input(device_labels, device_mask, grid, count, largest_unknown_label, nullptr);
  // At most 2^32 voxels in regions of 8192: gridDim.x's 2^31 - 1 is never reached.
  const auto regions = static_cast<unsigned>(grid.regions);
  if (table.claimed()) {
    accumulate_moments<<<regions, kThreads, sizeof(RegionMoments), cuda_stream>>>(
        input, grid, ClaimedRows{table.rows.data(), table.claims.data()});
  } else {
    accumulate_moments<<<regions, kThreads, sizeof(RegionMoments), cuda_stream>>>(
        input, grid, AtomicRows{table.rows.data()});
  }
  VOLCCL_CUDA_CHECK(cudaGetLastError());
  return std::move(table.rows);
}

ComponentTable component_table(std::uint32_t count, std::uint64_t regions, cudaStream_t stream) {
  const bool claimed = count > regions;
  ComponentTable table{
      claimed ? cuda::DeviceMoments::unwritten(count, stream) : cuda::DeviceMoments(count, stream),
      DeviceBuffer<std::uint32_t>(claimed ? count : 0, stream, "the rows' claims")};
  if (claimed) {
    VOLCCL_CUDA_CHECK(cudaMemsetAsync(table.claims.data(), 0,
                                      std::size_t{count} * sizeof(std::uint32_t), stream));
  }
  return table;
}

LateBeforeCount::LateBeforeCount(const std::uint32_t* device_labels,
                                 const std::uint8_t* device_mask, Extent3 extent, void* stream)
    : labels_(device_labels),
      mask_(device_mask),
      extent_(extent),
      stream_(stream),
      wanted_(device_mask != nullptr && extent.voxel_count() <= kMaxVoxels),
      capacity_(static_cast<std::uint32_t>(make_region_grid(extent).regions)) {}

void LateBeforeCount::measure_with(std::uint32_t rows, OwnPass pass) {
  own_pass_ = std::move(pass);
  capacity_ = rows;
}

void LateBeforeCount::enqueue(const std::uint32_t* device_count) {
  if (!wanted_) return;
  const auto cuda_stream = static_cast<cudaStream_t>(stream_);
  table_ = cuda::DeviceMoments::unwritten(capacity_, stream_);
  clear_rows(table_.data(), capacity_, device_count, cuda_stream);
  enqueued_ = true;
  if (own_pass_) {
    own_pass_(table_.data(), device_count);
    return;
  }
  const RegionGrid grid = make_region_grid(extent_);
  const LateInput input = late_input(labels_, mask_, grid, capacity_, nullptr, device_count);
  accumulate_moments<AtomicRows, true><<<capacity_, kThreads, sizeof(RegionMoments), cuda_stream>>>(
      input, grid, AtomicRows{table_.data()});
  VOLCCL_CUDA_CHECK(cudaGetLastError());
}

cuda::DeviceMoments LateBeforeCount::finish(std::uint32_t count) {
  if (!done(count)) return late_moments(labels_, mask_, extent_, count, nullptr, stream_);
  table_.size_ = count;
  return std::move(table_);
}

}  // namespace detail

namespace cuda {

DeviceMoments::DeviceMoments(std::uint32_t count, void* stream)
    : DeviceMoments(count, stream, true) {}

DeviceMoments DeviceMoments::unwritten(std::uint32_t count, void* stream) {
  return DeviceMoments(count, stream, false);
}

DeviceMoments::DeviceMoments(std::uint32_t count, void* stream, bool clear)
    : size_(count), stream_(stream) {
  const auto cuda_stream = static_cast<cudaStream_t>(stream);
  data_ = static_cast<ComponentMoments*>(detail::allocate_async(
      std::size_t{count} * sizeof(ComponentMoments), cuda_stream, "the component moments"));
  if (clear) detail::clear_rows(data_, count, nullptr, cuda_stream);
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

}  // namespace cuda
}  // namespace volccl
