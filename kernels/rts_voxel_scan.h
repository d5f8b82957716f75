// RTS for label maps of short runs at 6 (and images at 4), voxel by voxel. Where neighbouring
// voxels mostly differ in value (granularity 1 with many values) a run is a voxel or two, and
// the run scan's packing, decoding and word tests cost more per run than looking at the voxel's
// three earlier neighbours. This scan keeps RTS's runs and their union-find (kernels/rts_scan.h:
// the same run indices, roots and ranks, so the same labels), but finds each run's contacts by
// comparing every voxel with the voxels before it along y and z, and keeps each voxel's run
// index in the output until the labels replace it.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>

#include "kernels/rts_scan.h"

namespace volccl::detail::rts {

// Runs a row of `nx` values holds: foreground voxels whose value differs from the one before.
template <class T>
std::uint32_t count_runs(const T* row, std::uint32_t nx, T background) {
  std::uint32_t runs = row[0] != background ? 1 : 0;
  for (std::uint32_t x = 1; x < nx; ++x) {
    runs += (row[x] != background) & (row[x] != row[x - 1]);
  }
  return runs;
}

// Whether the voxel scan labels this map faster than the run scan, judged from about
// kSampleRows rows spread over the map: when its runs average fewer than kShortRunVoxels voxels and
// most of them begin beside a voxel of another value. Runs that begin after the background, as a
// mask's do, go faster through the run scan's packed bits however short they are.
template <class T>
bool prefers_voxel_scan(const LabelMapVoxels<T>& voxels, const RowGrid& grid) {
  constexpr std::uint32_t kSampleRows = 1024;
  constexpr std::uint64_t kShortRunVoxels = 2;
  const std::uint32_t stride = std::max<std::uint32_t>(1, grid.rows / kSampleRows);
  const T background = voxels.background;
  std::uint64_t runs = 0;
  std::uint64_t foreground = 0;
  std::uint64_t beside_another_value = 0;
  for (std::uint32_t row = 0; row < grid.rows; row += stride) {
    const T* values = voxels.values + grid.first_voxel(row);
    runs += count_runs(values, grid.nx, background);
    foreground += values[0] != background;
    for (std::uint32_t x = 1; x < grid.nx; ++x) {
      foreground += values[x] != background;
      beside_another_value +=
          (values[x] != background) & (values[x - 1] != background) & (values[x] != values[x - 1]);
    }
  }
  return runs > 0 && foreground < kShortRunVoxels * runs && 2 * beside_another_value > runs;
}

template <class T>
class VoxelScan {
 public:
  VoxelScan(const LabelMapVoxels<T>& voxels, Extent3 extent, unsigned threads,
            std::uint32_t* labels)
      : voxels_(voxels),
        grid_(extent),
        slabs_(grid_.rows, threads),
        row_first_run_(std::uint64_t{grid_.rows} + 1),
        labels_(labels) {}

  // Counts every row's runs, then indexes them in raster order.
  void pack() {
    slabs_.for_each([&](std::uint32_t first, std::uint32_t last) {
      for (std::uint32_t row = first; row < last; ++row) {
        row_first_run_[row + 1] = count_runs(row_values(row), grid_.nx, voxels_.background);
      }
    });
    counts_to_first_runs(row_first_run_.get(), grid_.rows);
    forest_.allocate(row_first_run_[grid_.rows]);
  }

  // Unites every run with the runs of the voxels before it along y and z, within each slab in
  // parallel (each voxel's run index + 1, or 0, written to the labels on the way), then across
  // the slab borders.
  void unite() {
    slabs_.for_each([&](std::uint32_t first, std::uint32_t last) { unite_slab(first, last); });
    const RunForest::Unions unions = forest_.unions();
    // Rows more than a slice and a row past a border have no neighbour before it.
    slabs_.for_each_past_border(grid_.ny + 1, [&](std::uint32_t first, std::uint32_t row) {
      for (const std::uint64_t step : earlier_steps(row)) {
        if (row_of_step(row, step) >= first) continue;
        const std::uint64_t begin = grid_.first_voxel(row);
        for (std::uint64_t v = begin; v < begin + grid_.nx; ++v) {
          if (labels_[v] != 0 && voxels_.values[v - step] == voxels_.values[v]) {
            unions.unite_roots(labels_[v] - 1, labels_[v - step] - 1);
          }
        }
      }
    });
  }

  std::uint32_t rank_roots() { return forest_.rank_roots(slabs_, row_first_run_.get()); }

  // Replaces each voxel's run index + 1 by its label.
  void write_labels() {
    slabs_.for_each([&](std::uint32_t first, std::uint32_t last) {
      std::uint32_t cached_run = 0;
      std::uint32_t cached_label = 0;
      for (std::uint64_t v = grid_.first_voxel(first); v < grid_.first_voxel(last); ++v) {
        const std::uint32_t run = labels_[v];
        if (run == 0) continue;
        if (run != cached_run) {
          cached_run = run;
          cached_label = forest_.label_of(run - 1);
        }
        labels_[v] = cached_label;
      }
    });
  }

 private:
  const T* row_values(std::uint32_t row) const { return voxels_.values + grid_.first_voxel(row); }

  // The index steps back to a row's earlier neighbours at 6: along y and along z (0: none).
  std::array<std::uint64_t, 2> earlier_steps(std::uint32_t row) const {
    return {row % grid_.ny != 0 ? std::uint64_t{grid_.nx} : 0,
            row >= grid_.ny ? std::uint64_t{grid_.nx} * grid_.ny : 0};
  }
  std::uint32_t row_of_step(std::uint32_t row, std::uint64_t step) const {
    return step == 0 ? row : row - static_cast<std::uint32_t>(step / grid_.nx);
  }

  void unite_slab(std::uint32_t first, std::uint32_t last) {
    const RunForest::Unions unions = forest_.unions();
    const T background = voxels_.background;
    for (std::uint32_t row = first; row < last; ++row) {
      const std::uint64_t begin = grid_.first_voxel(row);
      const T* values = voxels_.values + begin;
      std::uint32_t* out = labels_ + begin;
      // A neighbour row before the slab is the border pass's; none is read as the row itself,
      // whose voxels' runs are never earlier ones.
      const auto earlier = earlier_steps(row);
      const std::uint64_t up = row_of_step(row, earlier[0]) >= first ? earlier[0] : 0;
      const std::uint64_t back = row_of_step(row, earlier[1]) >= first ? earlier[1] : 0;
      std::uint32_t run = row_first_run_[row];  // the next run's index
      std::uint32_t root = 0;
      bool open = false;  // a run of this row is being scanned
      for (std::uint32_t x = 0; x < grid_.nx; ++x) {
        const T value = values[x];
        if (value == background) {
          if (open) unions.set_parent(run - 1, root);
          open = false;
          out[x] = 0;
          continue;
        }
        if (!open || value != values[x - 1]) {
          if (open) unions.set_parent(run - 1, root);
          open = true;
          root = run++;
        }
        out[x] = run;
        if (up != 0 && values[x - up] == value) root = unions.meet(run - 1, root, out[x - up] - 1);
        if (back != 0 && values[x - back] == value) {
          root = unions.meet(run - 1, root, out[x - back] - 1);
        }
      }
      if (open) unions.set_parent(run - 1, root);
    }
  }

  const LabelMapVoxels<T> voxels_;
  const RowGrid grid_;
  const SlabSplit slabs_;
  PageArray<std::uint32_t> row_first_run_;  // rows + 1 entries
  RunForest forest_;
  std::uint32_t* labels_;
};

// The whole labeling of a label map at 6 by the voxel scan, its steps timed.
template <class T>
LabelResult label_short_runs_at_6(const LabelMapVoxels<T>& voxels, Extent3 extent,
                                  const LabelOptions& options, std::uint32_t* labels) {
  StepClock whole_call;
  StepClock step;
  LabelResult result = cpu_result(options);
  VoxelScan<T> scan(voxels, extent, resolve_thread_count(options.cpu_threads, extent.voxel_count()),
                    labels);
  result.timings.allocation_ms = step.lap();
  scan.pack();
  finish_scan(scan, result, step, [&] { scan.write_labels(); });
  result.timings.total_ms = whole_call.lap();
  return result;
}

}  // namespace volccl::detail::rts
