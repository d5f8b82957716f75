// RTS for label maps of short runs at 6 (and images at 4), voxel by voxel. Where neighbouring
// voxels mostly differ in value (granularity 1 with many values) a run is a voxel or two, and
// the run scan's packing, decoding and word tests cost more per run than looking at the voxel's
// three earlier neighbours. This scan keeps RTS's runs and their union-find (kernels/rts_scan.h:
// the same run indices, roots and ranks, so the same labels), but finds each run's contacts by
// comparing every voxel with the voxels before it along y and z, and keeps each voxel's run
// index in the output until the labels replace it.
#pragma once

#include <algorithm>
#include <cstdint>

#include "kernels/rts_scan.h"
#include "kernels/rts_settled_scan.h"

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
  SampledRowCounts<T> counts(grid.nx, voxels.background);
  for (std::uint32_t row = 0; row < grid.rows; row += stride) {
    counts.add(voxels.values + grid.first_voxel(row), nullptr);
  }
  return counts.runs > 0 && counts.foreground < kShortRunVoxels * counts.runs &&
         2 * counts.beside_another_value > counts.runs;
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
  void index_runs() {
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
    // Rows more than a slice past a border have no neighbour before it.
    slabs_.for_each_past_border(grid_.ny, [&](std::uint32_t first, std::uint32_t row) {
      NeighbourRow neighbours[4];
      const int count = earlier_neighbour_rows(grid_, 6, row, 0, neighbours);
      for (int n = 0; n < count; ++n) {
        if (neighbours[n].row >= first) continue;
        const std::uint64_t step = grid_.first_voxel(row) - grid_.first_voxel(neighbours[n].row);
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

  void unite_slab(std::uint32_t first, std::uint32_t last) {
    const RunForest::Unions unions = forest_.unions();
    const T background = voxels_.background;
    for (std::uint32_t row = first; row < last; ++row) {
      const std::uint64_t begin = grid_.first_voxel(row);
      const T* values = voxels_.values + begin;
      std::uint32_t* out = labels_ + begin;
      // The index steps back to the row's earlier neighbour rows within the slab, along z and
      // y (0: none); a row before the slab is the border pass's.
      NeighbourRow neighbours[4];
      const int count = earlier_neighbour_rows(grid_, 6, row, first, neighbours);
      std::uint64_t steps[2] = {0, 0};
      for (int n = 0; n < count; ++n) steps[n] = begin - grid_.first_voxel(neighbours[n].row);
      const std::uint64_t step0 = steps[0];
      const std::uint64_t step1 = steps[1];
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
        if (step0 != 0 && values[x - step0] == value) {
          root = unions.meet(run - 1, root, out[x - step0] - 1);
        }
        if (step1 != 0 && values[x - step1] == value) {
          root = unions.meet(run - 1, root, out[x - step1] - 1);
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
  return label_in_place(
      extent, options,
      [&](unsigned threads) { return VoxelScan<T>(voxels, extent, threads, labels); },
      [](VoxelScan<T>& scan) { scan.index_runs(); });
}

// A label map labeled by RTS at `connectivity` (6, 18 or 26; images at 6 for 4 and 26 for 8):
// settled voxels first (kernels/rts_settled_scan.h), or without statistics voxel by voxel at 6,
// where those scans are faster; else by runs.
template <class T>
LabelResult label_map(const LabelMapVoxels<T>& voxels, Extent3 extent, int connectivity,
                      const LabelOptions& options, std::uint32_t* labels,
                      std::vector<ComponentMoments>* statistics) {
  const RowGrid grid(extent);
  if (statistics == nullptr && connectivity == 6 && prefers_voxel_scan(voxels, grid)) {
    return label_short_runs_at_6(voxels, extent, options, labels);
  }
  if (prefers_settled_scan(voxels, grid, connectivity)) {
    return label_settled(voxels, extent, connectivity, options, labels, statistics);
  }
  return label_runs(voxels, extent, connectivity, options, labels, statistics);
}

}  // namespace volccl::detail::rts
