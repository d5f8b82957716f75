// RUF's Late statistics: the moments of every component from RUF's runs, not from its label
// image. The issue's Late pass sums "each run, for run-based labelers"; HA4 gathers its
// statistics from the segments of its rows in the same way (HA4 paper Sec. IV-D, Alg. 6).
//
// Why not the label image: the generic Late pass (core/src/moments_late.cu) reads 4 bytes of
// label and 1 of mask per voxel and offers a lane's 8 voxels label by label; RUF labels a 512^3
// volume in 0.42-1.56 ms, and that pass took 0.15-1.74 ms more (1.56-2.67x at 6, bench/RESULTS.md).
// Here a lane takes a 32-voxel word of a row from RUF's RowWords (8 bytes), and each segment of
// its foreground (a run's part in the word) is one round: its sums in closed form, its component
// the root of its run (parents[key], compressed), so that lanes match by root and only a region's
// roots are ranked into labels, at the flush. Rows of runs are what RUF keeps in L2; the label
// image is not read at all.
//
// A thread block takes a region of 2 words x 16 rows x 8 slices (64 x 16 x 8 voxels, as the
// generic pass, so every sum over it fits 32 bits); its warp w takes slice w, lane l word l % 2 of
// row l / 2. The rest is the generic pass's: groups of a root reduce their packed sums with warp
// intrinsics, the group's leader adds them to the region's table in shared memory, and the flush
// stores a component lying wholly in the region and adds the others by atomics (moments.cuh).
#include <cstdint>

#include "cuda_backends.h"
#include "cuda_support.cuh"
#include "kernels3d/ruf_logic_3d.h"
#include "kernels3d/ruf_statistics_3d.h"
#include "moments.cuh"
#include "volccl/detail/raster_rank.h"

namespace volccl::detail {
namespace {

using kernels3d::RunGrid;
using kernels3d::WordView;

constexpr unsigned kThreads = 256;
constexpr std::uint32_t kRegionWords = 2;  // along x
constexpr std::uint32_t kRegionRows = 16;  // along y
constexpr std::uint32_t kRegionSlices = kThreads / 32;
constexpr std::uint32_t kRegionWidth = kRegionWords * kernels3d::kWordVoxels;
constexpr int kSlots = 512;
using RegionMoments = SharedMoments<kSlots, true>;
static_assert(kRegionWords * kRegionRows == 32, "a warp takes one slice of its region");

struct RunRegions {
  std::uint32_t regions_x, regions_y;
  std::uint64_t count;
  Divisor by_regions_x, by_regions_y;
};

RunRegions make_run_regions(const RunGrid& grid) {
  RunRegions regions;
  regions.regions_x = (grid.words_x + kRegionWords - 1) / kRegionWords;
  regions.regions_y = (grid.ny + kRegionRows - 1) / kRegionRows;
  regions.count = std::uint64_t{regions.regions_x} * regions.regions_y *
                  ((grid.nz + kRegionSlices - 1) / kRegionSlices);
  regions.by_regions_x = Divisor(regions.regions_x, regions.count);
  regions.by_regions_y = Divisor(regions.regions_y, regions.count);
  return regions;
}

// A segment's sums relative to its warp's slice of the region (x < 64, y < 16; at most 1024
// voxels a warp), packed so that the sums over a warp cannot carry from one field into the next:
// count < 2^11 and sum x < 2^16; sum y < 2^14 and sum yy < 2^18; sum xx < 2^22; sum xy < 2^20.
struct PackedSegmentSums {
  std::uint32_t count_x;  // count | sum x << 11
  std::uint32_t y_yy;     // sum y | sum yy << 14
  std::uint32_t xx, xy;
  std::uint32_t min_x, max_x;
};

// The voxels x0 .. x0 + n - 1 of row y of the slice: sum of i and i^2 over i < n in closed form.
__device__ __forceinline__ PackedSegmentSums segment_sums(std::uint32_t x0, std::uint32_t n,
                                                          std::uint32_t y) {
  const std::uint32_t sum_i = n * (n - 1) / 2;
  const std::uint32_t sum_ii = (n - 1) * n * (2 * n - 1) / 6;
  const std::uint32_t sum_x = n * x0 + sum_i;
  return {n | sum_x << 11,
          n * y | (n * y * y) << 14,
          n * x0 * x0 + 2 * x0 * sum_i + sum_ii,
          sum_x * y,
          x0,
          x0 + n - 1};
}

// A segment of a word's foreground: a run's voxels in the word. Length 0: none left.
struct Segment {
  int first;
  std::uint32_t length;
};

// The lowest segment of `left` (the foreground not yet taken), removed from it.
__device__ __forceinline__ Segment take_segment(std::uint32_t& left, std::uint32_t foreground) {
  if (left == 0) return {0, 0};
  const int first = __ffs(static_cast<int>(left)) - 1;
  const std::uint32_t after = ~(foreground >> first);
  const std::uint32_t length =
      after == 0 ? kernels3d::kWordVoxels - first : __ffs(static_cast<int>(after)) - 1;
  left &= ~(kernels3d::bits_through(first + static_cast<int>(length) - 1) &
            ~kernels3d::bits_through(first - 1));
  return {first, length};
}

// A group's sums, relative to the slice, as moments relative to the region: slice z of it.
// `group`: the lanes of the root, whose rows give the y bounds.
__device__ __forceinline__ Moments region_moments(const PackedSegmentSums& sums, unsigned group,
                                                  std::uint32_t z) {
  const std::uint32_t n = sums.count_x & 0x7FFu, sum_x = sums.count_x >> 11;
  const std::uint32_t sum_y = sums.y_yy & 0x3FFFu, sum_yy = sums.y_yy >> 14;
  Moments m;
  m.count = n;
  m.sum[0] = sum_x;
  m.sum[1] = sum_y;
  m.sum[2] = n * z;
  m.sum_products[0] = sums.xx;
  m.sum_products[1] = sum_yy;
  m.sum_products[2] = n * z * z;
  m.sum_products[3] = sums.xy;
  m.sum_products[4] = z * sum_x;
  m.sum_products[5] = z * sum_y;
  m.min[0] = sums.min_x;
  m.max[0] = sums.max_x;
  m.min[1] = (__ffs(static_cast<int>(group)) - 1) / kRegionWords;
  m.max[1] = (31 - __clz(static_cast<int>(group))) / kRegionWords;
  m.min[2] = m.max[2] = z;
  return m;
}

// The region table's keys are root keys + 1 (0 marks a free slot); a row's label is its root's
// rank in raster order, plus 1.
struct RootLabels {
  const std::uint32_t* root_bitmap;
  const std::uint32_t* words_before;

  __device__ std::uint32_t operator()(std::uint32_t key) const {
    return component_label(root_bitmap, words_before, key - 1);
  }
};

struct RunInput {
  RunGrid grid;
  RunRegions regions;
  const kernels3d::RowWord* words;
  const std::uint32_t* parents;  // compressed: every run's parent is its root
  RootLabels labels;
  // With kCountOnDevice: the component count, and nothing done where it exceeds the table's
  // rows, regions.count of them (LateBeforeCount).
  const std::uint32_t* device_count;
};

template <class Rows, bool kCountOnDevice = false>
__global__ void __launch_bounds__(kThreads, 4) accumulate_run_moments(RunInput input, Rows table) {
  std::uint32_t device_count = 0;
  if constexpr (kCountOnDevice) device_count = *input.device_count;
  const RunGrid& grid = input.grid;
  const std::uint32_t index = blockIdx.x;
  const std::uint32_t rest = input.regions.by_regions_x.quotient(index);
  const std::uint32_t region_x = index - rest * input.regions.regions_x;
  const std::uint32_t region_z = input.regions.by_regions_y.quotient(rest);
  const std::uint32_t region_y = rest - region_z * input.regions.regions_y;
  const Origin origin{region_x * kRegionWidth, region_y * kRegionRows, region_z * kRegionSlices};

  const unsigned lane = threadIdx.x % 32;
  const std::uint32_t z = threadIdx.x / 32, y = lane / kRegionWords;
  const std::uint32_t w = region_x * kRegionWords + lane % kRegionWords;
  const bool inside = w < grid.words_x && origin.y + y < grid.ny && origin.z + z < grid.nz;
  const auto row = static_cast<std::uint32_t>(inside ? (origin.z + z) * grid.ny + origin.y + y : 0);
  const WordView view = inside ? kernels3d::view_word(input.words, grid, row, w) : WordView{};

  extern __shared__ unsigned char shared_bytes[];
  RegionMoments& region = *reinterpret_cast<RegionMoments*>(shared_bytes);
  region.clear();
  if constexpr (kCountOnDevice) {
    if (device_count > input.regions.count) return;  // the whole block: Late runs after the wait
  }
  __syncthreads();

  const std::uint32_t x_in_region = (lane % kRegionWords) * kernels3d::kWordVoxels;
  // A round takes a lane's next segment and those after it of the same root (a dense word's
  // segments are mostly one component's), whose root loads then wait one after the other.
  std::uint32_t left = view.foreground;  // the segments not yet offered
  Segment next = take_segment(left, view.foreground);
  std::uint32_t next_key = next.length != 0 ? input.parents[view.key_at(next.first)] + 1 : 0;
  while (__any_sync(kFullWarp, next_key != 0)) {
    const std::uint32_t current_key = next_key;
    const bool has = current_key != 0;
    PackedSegmentSums sums{};
    if (has) {
      sums = segment_sums(x_in_region + static_cast<std::uint32_t>(next.first), next.length, y);
      for (;;) {
        next = take_segment(left, view.foreground);
        next_key = next.length != 0 ? input.parents[view.key_at(next.first)] + 1 : 0;
        if (next_key != current_key) break;
        const PackedSegmentSums more =
            segment_sums(x_in_region + static_cast<std::uint32_t>(next.first), next.length, y);
        sums.count_x += more.count_x;
        sums.y_yy += more.y_yy;
        sums.xx += more.xx;
        sums.xy += more.xy;
        sums.max_x = more.max_x;
      }
    }
    const unsigned group = __match_any_sync(kFullWarp, current_key);
    // As in the generic pass, only lanes that share a root reduce: a reduction over a partial
    // mask loops over the distinct masks of the lanes that call it (NOTES S-7).
    if (has && shares_label(group)) {
      sums.count_x = __reduce_add_sync(group, sums.count_x);
      sums.y_yy = __reduce_add_sync(group, sums.y_yy);
      sums.xx = __reduce_add_sync(group, sums.xx);
      sums.xy = __reduce_add_sync(group, sums.xy);
      sums.min_x = __reduce_min_sync(group, sums.min_x);
      sums.max_x = __reduce_max_sync(group, sums.max_x);
    }
    if (has && lane == static_cast<unsigned>(__ffs(static_cast<int>(group)) - 1)) {
      region.add(current_key, region_moments(sums, group, z), origin, table, input.labels);
    }
  }
  __syncthreads();

  const RegionBox box{{static_cast<std::uint32_t>(origin.x), static_cast<std::uint32_t>(origin.y),
                       static_cast<std::uint32_t>(origin.z)},
                      {min(static_cast<std::uint32_t>(origin.x) + kRegionWidth, grid.nx),
                       min(static_cast<std::uint32_t>(origin.y) + kRegionRows, grid.ny),
                       min(static_cast<std::uint32_t>(origin.z) + kRegionSlices, grid.nz)},
                      {grid.nx, grid.ny, grid.nz},
                      true};
  region.flush(table, origin, box, input.labels);
}

}  // namespace

cuda::DeviceMoments ruf_run_moments(const RufRuns& runs, std::uint32_t count, cudaStream_t stream) {
  const RunRegions regions = make_run_regions(runs.grid);
  ComponentTable table = component_table(count, regions.count, stream);
  const RunInput input{
      runs.grid, regions, runs.words, runs.parents, RootLabels{runs.root_bitmap, runs.words_before},
      nullptr};
  // A region holds 8192 voxels: a 2^32-voxel volume has 2^19 regions, within gridDim.x.
  const auto blocks = static_cast<unsigned>(regions.count);
  if (table.claimed()) {
    accumulate_run_moments<<<blocks, kThreads, sizeof(RegionMoments), stream>>>(
        input, ClaimedRows{table.rows.data(), table.claims.data()});
  } else {
    accumulate_run_moments<<<blocks, kThreads, sizeof(RegionMoments), stream>>>(
        input, AtomicRows{table.rows.data()});
  }
  VOLCCL_CUDA_CHECK(cudaGetLastError());
  return std::move(table.rows);
}

std::uint32_t ruf_run_regions(const RunGrid& grid) {
  return static_cast<std::uint32_t>(make_run_regions(grid).count);
}

void ruf_run_moments_before_count(const RufRuns& runs, ComponentMoments* rows,
                                  const std::uint32_t* device_count, cudaStream_t stream) {
  const RunRegions regions = make_run_regions(runs.grid);
  const RunInput input{runs.grid,
                       regions,
                       runs.words,
                       runs.parents,
                       RootLabels{runs.root_bitmap, runs.words_before},
                       device_count};
  accumulate_run_moments<AtomicRows, true>
      <<<static_cast<unsigned>(regions.count), kThreads, sizeof(RegionMoments), stream>>>(
          input, AtomicRows{rows});
  VOLCCL_CUDA_CHECK(cudaGetLastError());
}

}  // namespace volccl::detail
