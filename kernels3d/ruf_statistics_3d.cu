// RUF's Late statistics: the moments of every component from RUF's runs, not from its label
// image. The issue's Late pass sums "each run, for run-based labelers"; HA4 gathers its
// statistics from the segments of its rows in the same way (HA4 paper Sec. IV-D, Alg. 6).
//
// Why not the label image: the generic Late pass (runtime/late_moments.cu) reads 4 bytes of
// label and 1 of mask per voxel and offers a lane's 8 voxels label by label; after RUF's fast
// labeling, that pass added a large part of the labeling's time again, on some volumes more than
// the labeling itself (bench/notes/statistics.md).
// Here a lane takes a 32-voxel word of a row from RUF's RowWords (8 bytes; a label map's with its
// run starts), and each segment of its foreground (a run's part in the word) is one round: its sums
// in closed form, its component the root of its run (parents[key], compressed), so that lanes match
// by root and only a region's roots are ranked into labels, at the flush. Rows of runs are what RUF
// keeps in L2; the label image is not read at all.
//
// A thread block takes a region of 2 words x 16 rows x 8 slices (64 x 16 x 8 voxels, as the
// generic pass, so every sum over it fits 32 bits); its warp w takes slice w, lane l word l % 2 of
// row l / 2. The rest is the generic pass's: groups of a root reduce their packed sums with warp
// intrinsics, the group's leader adds them to the region's table in shared memory, and the flush
// stores a component lying wholly in the region and adds the others by atomics (moments.cuh).
#include <cstdint>

#include "kernels3d/ruf_logic_3d.h"
#include "kernels3d/ruf_statistics_3d.h"
#include "kernels3d/ruf_statistics_logic_3d.h"
#include "runtime/cuda_support.cuh"
#include "runtime/moments.cuh"
#include "runtime/raster_rank.h"

namespace volccl::detail {
namespace {

using kernels3d::kSliceRows;
using kernels3d::kSliceWords;
using kernels3d::PackedSegmentSums;
using kernels3d::RunGrid;
using kernels3d::Segment;
using kernels3d::WordView;

constexpr unsigned kThreads = 256;
constexpr std::uint32_t kRegionSlices = kThreads / 32;  // a warp a slice
constexpr std::uint32_t kRegionWidth = kSliceWords * kernels3d::kWordVoxels;
constexpr int kSlots = 512;
using RegionMoments = SharedMoments<kSlots, true>;
static_assert(kSliceWords * kSliceRows == 32, "a warp takes one slice of its region");

struct RunRegions {
  std::uint32_t regions_x, regions_y;
  std::uint64_t count;
  Divisor by_regions_x, by_regions_y;
};

RunRegions make_run_regions(const RunGrid& grid) {
  RunRegions regions;
  regions.regions_x = (grid.words_x + kSliceWords - 1) / kSliceWords;
  regions.regions_y = (grid.ny + kSliceRows - 1) / kSliceRows;
  regions.count = std::uint64_t{regions.regions_x} * regions.regions_y *
                  ((grid.nz + kRegionSlices - 1) / kRegionSlices);
  regions.by_regions_x = Divisor(regions.regions_x, regions.count);
  regions.by_regions_y = Divisor(regions.regions_y, regions.count);
  return regions;
}

// A group's sums as moments relative to the region: slice z of it; `group`, the lanes of the
// root, whose rows give the y bounds.
__device__ __forceinline__ Moments region_moments(const PackedSegmentSums& sums, unsigned group,
                                                  std::uint32_t z) {
  return kernels3d::slice_moments(sums, (__ffs(static_cast<int>(group)) - 1) / kSliceWords,
                                  (31 - __clz(static_cast<int>(group))) / kSliceWords, z);
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
  const std::uint32_t* starts;   // a label map's (RufRuns)
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
  const Origin origin{region_x * kRegionWidth, region_y * kSliceRows, region_z * kRegionSlices};

  const unsigned lane = threadIdx.x % 32;
  const std::uint32_t z = threadIdx.x / 32, y = lane / kSliceWords;
  const std::uint32_t w = region_x * kSliceWords + lane % kSliceWords;
  const bool inside = w < grid.words_x && origin.y + y < grid.ny && origin.z + z < grid.nz;
  const auto row = static_cast<std::uint32_t>(inside ? (origin.z + z) * grid.ny + origin.y + y : 0);
  WordView view;
  if (inside) {
    view = input.starts != nullptr
               ? kernels3d::view_word(kernels3d::LabelMapStarts{input.words, input.starts}, grid,
                                      row, w)
               : kernels3d::view_word(kernels3d::MaskRuns{input.words}, grid, row, w);
  }

  extern __shared__ unsigned char shared_bytes[];
  RegionMoments& region = *reinterpret_cast<RegionMoments*>(shared_bytes);
  region.clear();
  if constexpr (kCountOnDevice) {
    if (device_count > input.regions.count) return;  // the whole block: Late runs after the wait
  }
  __syncthreads();

  const std::uint32_t x_in_region = (lane % kSliceWords) * kernels3d::kWordVoxels;
  // A round takes a lane's next segment and those after it of the same root (a dense word's
  // segments are mostly one component's), whose root loads then wait one after the other.
  std::uint32_t left = view.foreground;  // the segments not yet offered
  Segment next = kernels3d::take_segment(left, view.foreground, view.starts);
  std::uint32_t next_key = next.length != 0 ? input.parents[view.key_at(next.first)] + 1 : 0;
  while (__any_sync(kFullWarp, next_key != 0)) {
    const std::uint32_t current_key = next_key;
    const bool has = current_key != 0;
    PackedSegmentSums sums{};
    if (has) {
      sums = kernels3d::segment_sums(x_in_region + static_cast<std::uint32_t>(next.first),
                                     next.length, y);
      for (;;) {
        next = kernels3d::take_segment(left, view.foreground, view.starts);
        next_key = next.length != 0 ? input.parents[view.key_at(next.first)] + 1 : 0;
        if (next_key != current_key) break;
        kernels3d::fold(
            sums, kernels3d::segment_sums(x_in_region + static_cast<std::uint32_t>(next.first),
                                          next.length, y));
      }
    }
    const unsigned group = __match_any_sync(kFullWarp, current_key);
    // As in the generic pass, only lanes that share a root reduce: a reduction over a partial
    // mask loops over the distinct masks of the lanes that call it.
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

  region.flush(table, origin,
               RegionBox::clipped(origin, kRegionWidth, kSliceRows, kRegionSlices, grid.nx, grid.ny,
                                  grid.nz, true),
               input.labels);
}

RunInput run_input(const RufRuns& runs, const std::uint32_t* device_count) {
  return {runs.grid,    make_run_regions(runs.grid),
          runs.words,   runs.starts,
          runs.parents, RootLabels{runs.root_bitmap, runs.words_before},
          device_count};
}

}  // namespace

cuda::DeviceMoments ruf_run_moments(const RufRuns& runs, std::uint32_t count, cudaStream_t stream) {
  const RunInput input = run_input(runs, nullptr);
  const RunRegions& regions = input.regions;
  ComponentTable table = component_table(count, regions.count, stream);
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
  const RunInput input = run_input(runs, device_count);
  accumulate_run_moments<AtomicRows, true>
      <<<static_cast<unsigned>(input.regions.count), kThreads, sizeof(RegionMoments), stream>>>(
          input, AtomicRows{rows});
  VOLCCL_CUDA_CHECK(cudaGetLastError());
}

}  // namespace volccl::detail
