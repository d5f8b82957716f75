// RTS for label maps at 26 whose voxels mostly have the value of the voxel behind them, as a
// segmentation's objects run on through the slices. Such a voxel is settled (kernels/rts_scan.h,
// Settling): every earlier neighbour of it neighbours the voxel behind, so it takes that voxel's
// label and meets nothing, 16 bytes of values at a time by one vector compare. The run scan
// instead packs, decodes and indexes every run before it finds it settled, and gives each run a
// node of the union-find, where this scan gives one only to a voxel with no earlier neighbour of
// its value.
//
// Each thread scans one contiguous slab of rows into the output, which holds provisional labels
// (the slab's own, from 1) until the labels replace them. A new provisional label is the smallest
// yet in its slab, and a component's smallest is that of its first voxel; the slabs' labels laid
// end to end in slab order are so in raster order of first voxels, as RTS's runs are, and the
// union-find ranks them alike (RunForest): the same labels as the run scan's. One thread then
// unites the rows past each slab border with their neighbours before it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/rts_scan.h"

namespace volccl::detail::rts {

// Whether the settled scan labels this map at 26 faster than the run scan, judged from about
// kSampleRows rows spread over the slices after the first: when at least kSettledEighths eighths
// of their foreground voxels have the value of the voxel behind them.
template <class T>
bool prefers_settled_scan(const LabelMapVoxels<T>& voxels, const RowGrid& grid) {
  constexpr std::uint32_t kSampleRows = 1024;
  constexpr std::uint64_t kSettledEighths = 5;
  if (grid.rows <= grid.ny) return false;
  const std::uint32_t stride = std::max<std::uint32_t>(1, (grid.rows - grid.ny) / kSampleRows);
  const std::uint64_t slice = grid.first_voxel(grid.ny);
  const T background = voxels.background;
  std::uint64_t foreground = 0;
  std::uint64_t settled = 0;
  for (std::uint32_t row = grid.ny; row < grid.rows; row += stride) {
    const T* values = voxels.values + grid.first_voxel(row);
    for (std::uint32_t x = 0; x < grid.nx; ++x) {
      const bool here = values[x] != background;
      foreground += here;
      settled += here & (values[x] == values[x - slice]);
    }
  }
  return foreground > 0 && 8 * settled >= kSettledEighths * foreground;
}

// Whether the 16 bytes at `a` equal those at `b`.
inline bool bytes_equal16(const void* a, const void* b) {
#if defined(__SSE2__)
  const __m128i left = _mm_loadu_si128(static_cast<const __m128i*>(a));
  const __m128i right = _mm_loadu_si128(static_cast<const __m128i*>(b));
  return _mm_movemask_epi8(_mm_cmpeq_epi8(left, right)) == 0xFFFF;
#else
  return std::memcmp(a, b, 16) == 0;
#endif
}

// One slab's provisional labels: parent[l - 1] is label l's, a root the smallest of its set.
class SlabLabels {
 public:
  void clear() { parent_.clear(); }
  std::uint32_t count() const { return static_cast<std::uint32_t>(parent_.size()); }
  std::uint32_t parent(std::uint32_t label) const { return parent_[label - 1] + 1; }
  std::uint32_t make() {
    parent_.push_back(count());
    return count();
  }
  // Root of `label`, halving the path.
  std::uint32_t find(std::uint32_t label) {
    std::uint32_t at = label - 1;
    while (parent_[at] != at) {
      parent_[at] = parent_[parent_[at]];
      at = parent_[at];
    }
    return at + 1;
  }
  // Unites the set of `root` with that of `label`; returns the root of both, the smaller.
  std::uint32_t unite(std::uint32_t root, std::uint32_t label) {
    // Most labels met after the first are already under the root.
    if (parent(label) == root) return root;
    label = find(label);
    if (label < root) {
      parent_[root - 1] = label - 1;
      return label;
    }
    if (root < label) parent_[label - 1] = root - 1;
    return root;
  }

 private:
  std::vector<std::uint32_t> parent_;
};

template <class T>
class SettledScan {
  static constexpr std::uint32_t kLabelLanes = 4;  // labels in 16 bytes

 public:
  SettledScan(const LabelMapVoxels<T>& voxels, Extent3 extent, unsigned threads,
              std::uint32_t* labels)
      : voxels_(voxels),
        grid_(extent),
        slabs_(grid_.rows, threads),
        slab_labels_(slabs_.count()),
        first_label_(slabs_.count() + 1),
        labels_(labels) {}

  // Scans every slab in parallel, provisional labels in the output; then lays the slabs' labels
  // end to end in one union-find and unites across the slab borders.
  void unite() {
    slabs_.for_each_index([&](std::uint32_t slab, std::uint32_t first, std::uint32_t last) {
      scan_slab(slab_labels_[slab], first, last);
    });
    first_label_[0] = 0;
    for (std::uint32_t slab = 0; slab < slabs_.count(); ++slab) {
      first_label_[slab + 1] = first_label_[slab] + slab_labels_[slab].count();
    }
    forest_.allocate(first_label_[slabs_.count()]);
    const RunForest::Unions unions = forest_.unions();
    slabs_.for_each_index([&](std::uint32_t slab, std::uint32_t, std::uint32_t) {
      SlabLabels& own = slab_labels_[slab];
      const std::uint32_t base = first_label_[slab] - 1;
      for (std::uint32_t label = 1; label <= own.count(); ++label) {
        unions.set_parent(base + label, base + own.parent(label));
      }
      own = SlabLabels();
    });
    // Rows more than a slice and a row past a border have no neighbour before it.
    slabs_.for_each_past_border(grid_.ny + 1, [&](std::uint32_t first, std::uint32_t row) {
      NeighbourRow neighbours[4];
      const int count = earlier_neighbour_rows(grid_, 26, row, 0, neighbours);
      const std::uint64_t begin = grid_.first_voxel(row);
      const std::uint32_t base = first_label_[slab_of(row)] - 1;
      for (int n = 0; n < count; ++n) {
        if (neighbours[n].row >= first) continue;
        const std::uint64_t other = grid_.first_voxel(neighbours[n].row);
        const std::uint32_t other_base = first_label_[slab_of(neighbours[n].row)] - 1;
        for (std::uint32_t x = 0; x < grid_.nx; ++x) {
          if (labels_[begin + x] == 0) continue;
          const std::uint32_t last_column = std::min(grid_.nx - 1, x + 1);
          for (std::uint32_t o = x > 0 ? x - 1 : 0; o <= last_column; ++o) {
            if (voxels_.values[other + o] == voxels_.values[begin + x]) {
              unions.unite_roots(base + labels_[begin + x], other_base + labels_[other + o]);
            }
          }
        }
      }
    });
  }

  std::uint32_t rank_roots() {
    return forest_.rank_roots(SlabSplit(slabs_.count(), slabs_.count()), first_label_.data());
  }

  // Replaces each voxel's provisional label by its label, looked up in a table of the slab's
  // labels (the background's 0 its own): once for 16 bytes of one provisional label, else once a
  // voxel without a branch, where the patchwork of a component's provisional labels, each carried
  // on through the slices by the settled voxels, would mispredict one.
  void write_labels() {
    slabs_.for_each_index([&](std::uint32_t slab, std::uint32_t first, std::uint32_t last) {
      std::vector<std::uint32_t> final_label(first_label_[slab + 1] - first_label_[slab] + 1, 0);
      for (std::uint32_t label = 1; label < final_label.size(); ++label) {
        final_label[label] = forest_.label_of(first_label_[slab] + label - 1);
      }
      const std::uint32_t* table = final_label.data();
      const std::uint64_t end = grid_.first_voxel(last);
      std::uint64_t v = grid_.first_voxel(first);
      for (; v + kLabelLanes <= end; v += kLabelLanes) {
        std::uint32_t* lanes = labels_ + v;
        const std::uint32_t same[kLabelLanes] = {lanes[0], lanes[0], lanes[0], lanes[0]};
        if (bytes_equal16(lanes, same)) {
          std::fill_n(lanes, kLabelLanes, table[lanes[0]]);
        } else {
          for (std::uint32_t k = 0; k < kLabelLanes; ++k) lanes[k] = table[lanes[k]];
        }
      }
      for (; v < end; ++v) labels_[v] = table[labels_[v]];
    });
  }

 private:
  std::uint32_t slab_of(std::uint32_t row) const {
    std::uint32_t slab = slabs_.count() - 1;
    while (slabs_.begin(slab) > row) --slab;
    return slab;
  }

  // A settled voxel takes the label of the voxel behind it. Any other meets the voxels of its
  // value among its earlier neighbours in the slab: all of them where the voxel before it has
  // another value, else only those in column x + 1 (the voxel before met the others, or was
  // settled); it takes the smallest root among them, or a new label.
  void scan_slab(SlabLabels& own, std::uint32_t first, std::uint32_t last) {
    constexpr std::uint32_t kLanes = 16 / sizeof(T);
    own.clear();
    const T background = voxels_.background;
    const std::uint64_t slice = grid_.first_voxel(grid_.ny);
    for (std::uint32_t row = first; row < last; ++row) {
      const std::uint64_t begin = grid_.first_voxel(row);
      const T* values = voxels_.values + begin;
      std::uint32_t* out = labels_ + begin;
      // The earlier neighbour rows within the slab, as steps back from this row.
      NeighbourRow neighbours[4];
      const int count = earlier_neighbour_rows(grid_, 26, row, first, neighbours);
      std::uint64_t steps[4];
      bool behind = false;
      for (int n = 0; n < count; ++n) {
        steps[n] = begin - grid_.first_voxel(neighbours[n].row);
        behind = behind || steps[n] == slice;
      }
      // The root the voxel before took, where it met its neighbours (else 0): still a root.
      std::uint32_t previous_root = 0;
      for (std::uint32_t x = 0; x < grid_.nx;) {
        if (behind && x + kLanes <= grid_.nx && bytes_equal16(values + x, values + x - slice)) {
          // Through a copy of fixed size, so that no call to memmove is made.
          std::uint32_t copied[kLanes];
          std::memcpy(copied, out + x - slice, sizeof(copied));
          std::memcpy(out + x, copied, sizeof(copied));
          x += kLanes;
          previous_root = 0;
          continue;
        }
        const T value = values[x];
        if (value == background) {
          out[x++] = 0;
          continue;
        }
        if (behind && values[x - slice] == value) {
          out[x] = out[x - slice];
          ++x;
          previous_root = 0;
          continue;
        }
        std::uint32_t root = 0;
        const auto meet = [&](std::uint32_t label) {
          root = root == 0 ? own.find(label) : own.unite(root, label);
        };
        if (x > 0 && values[x - 1] == value) {
          root = previous_root != 0 ? previous_root : own.find(out[x - 1]);
          if (x + 1 < grid_.nx) {
            for (int n = 0; n < count; ++n) {
              if (values[x + 1 - steps[n]] == value) meet(out[x + 1 - steps[n]]);
            }
          }
        } else {
          const std::uint32_t from = x > 0 ? x - 1 : 0;
          const std::uint32_t to = std::min(x + 1, grid_.nx - 1);
          for (int n = 0; n < count; ++n) {
            for (std::uint32_t o = from; o <= to; ++o) {
              if (values[o - steps[n]] == value) meet(out[o - steps[n]]);
            }
          }
        }
        previous_root = root == 0 ? own.make() : root;
        out[x++] = previous_root;
      }
    }
  }

  const LabelMapVoxels<T> voxels_;
  const RowGrid grid_;
  const SlabSplit slabs_;
  std::vector<SlabLabels> slab_labels_;
  std::vector<std::uint32_t> first_label_;  // slabs + 1 entries: each slab's first in the forest
  RunForest forest_;
  std::uint32_t* labels_;
};

// The whole labeling of a label map at 26 by the settled scan, its steps timed.
template <class T>
LabelResult label_settled_at_26(const LabelMapVoxels<T>& voxels, Extent3 extent,
                                const LabelOptions& options, std::uint32_t* labels) {
  return label_in_place<SettledScan<T>>(voxels, extent, options, labels, [](SettledScan<T>&) {});
}

}  // namespace volccl::detail::rts
