// RTS for label maps whose voxels mostly have the value of the voxel behind them, as a
// segmentation's objects run on through the slices. Such a voxel is settled (kernels/rts_scan.h,
// Settling): at 26 every earlier neighbour of it neighbours the voxel behind, so it takes that
// voxel's label and meets nothing, 16 bytes of values at a time by one vector compare; at 18 and 6
// it meets at most two more. The run scan instead packs, decodes and indexes every run before it
// finds it settled, and gives each run a node of the union-find, where this scan gives one only
// to a voxel with no earlier neighbour of its value.
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

// Bit i set where a[i] == b[i], for the 16 bytes of values at each.
template <class T>
std::uint32_t equal_lanes_at(const T* a, const T* b) {
#if defined(__SSE2__)
  return lane_bits<T>(equal_lanes<T>(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a)),
                                     _mm_loadu_si128(reinterpret_cast<const __m128i*>(b))));
#else
  std::uint32_t equal = 0;
  for (std::uint32_t i = 0; i < 16 / sizeof(T); ++i) equal |= std::uint32_t{a[i] == b[i]} << i;
  return equal;
#endif
}

// Counts over the rows that the scan choosers sample, a word of 64 voxels at a time: each row is
// packed into foreground and run-start bits as the run scan packs it (pack_row).
template <class T>
class SampledRowCounts {
 public:
  SampledRowCounts(std::uint32_t nx, T background)
      : background_(background),
        row_grid_(Extent3{nx, 1, 1}),
        foreground_words_(row_grid_.words_per_row),
        start_words_(row_grid_.words_per_row) {}

  // Counts the row of `values`; with `values_behind`, also its voxels of the value of the voxel
  // behind.
  void add(const T* values, const T* values_behind) {
    runs += pack_row(LabelMapVoxels<T>{values, background_}, row_grid_, 0, foreground_words_.data(),
                     start_words_.data());
    std::uint64_t carry = 0;  // the foreground bit of the voxel before the word
    for (std::uint32_t w = 0; w < row_grid_.words_per_row; ++w) {
      const std::uint64_t here = foreground_words_[w];
      foreground += popcount64(here);
      beside_another_value += popcount64(start_words_[w] & ((here << 1) | carry));
      carry = here >> 63;
      if (values_behind != nullptr) {
        const std::uint32_t x = w * 64;
        const std::uint32_t length = std::min<std::uint32_t>(64, row_grid_.nx - x);
        settled += popcount64(here & equal_values(values + x, values_behind + x, length));
      }
    }
  }

  std::uint64_t foreground = 0;
  std::uint64_t runs = 0;  // foreground voxels of a value other than the voxel before's
  std::uint64_t beside_another_value = 0;  // of the runs, those after a voxel of the foreground
  std::uint64_t settled = 0;               // foreground voxels of the value of the voxel behind

 private:
  T background_;
  RowGrid row_grid_;  // the row alone
  std::vector<std::uint64_t> foreground_words_;
  std::vector<std::uint64_t> start_words_;
};

// Whether the settled scan labels this map at `connectivity` faster than the run scan, judged from
// about kSampleRows rows spread over the slices after the first: when at least kSettledEighths
// eighths of their foreground voxels have the value of the voxel behind them, or half of their
// vectors of voxels holding foreground would be settled at once, behind or above (as in maps of
// thick slices, whose objects run on within a slice); and at 18 when most of their runs begin
// beside a voxel of another value. At 18 a settled voxel at a run's end meets the row above, and
// the run scan's packed bits take a mask's runs, which begin after the background, faster. A map
// of voxels settled one by one, above or behind, but seldom a vector of them, as a random mask,
// goes faster by its runs.
template <class T>
bool prefers_settled_scan(const LabelMapVoxels<T>& voxels, const RowGrid& grid, int connectivity) {
  constexpr std::uint32_t kSampleRows = 1024;
  constexpr std::uint64_t kSettledEighths = 5;
  constexpr std::uint32_t kLanes = 16 / sizeof(T);
  constexpr std::uint32_t kAllLanes = (1u << kLanes) - 1;
  if (grid.rows <= grid.ny) return false;
  const std::uint32_t stride = std::max<std::uint32_t>(1, (grid.rows - grid.ny) / kSampleRows);
  const std::uint64_t slice = grid.first_voxel(grid.ny);
  const T background = voxels.background;
  T background_lanes[kLanes];
  std::fill_n(background_lanes, kLanes, background);
  SampledRowCounts<T> counts(grid.nx, background);
  std::uint64_t groups = 0;
  std::uint64_t settled_groups = 0;
  for (std::uint32_t row = grid.ny; row < grid.rows; row += stride) {
    const T* values = voxels.values + grid.first_voxel(row);
    const T* values_behind = values - slice;
    counts.add(values, values_behind);
    for (std::uint32_t x = 0; x + kLanes <= grid.nx; x += kLanes) {
      if (equal_lanes_at(values + x, background_lanes) == kAllLanes) continue;
      const std::uint32_t behind = equal_lanes_at(values + x, values_behind + x);
      ++groups;
      settled_groups +=
          behind == kAllLanes || (behind == 0 && row % grid.ny > 0 &&
                                  equal_lanes_at(values + x, values - grid.nx + x) == kAllLanes);
    }
  }
  return counts.foreground > 0 &&
         (8 * counts.settled >= kSettledEighths * counts.foreground ||
          (groups > 0 && 2 * settled_groups >= groups)) &&
         (connectivity != 18 || 2 * counts.beside_another_value > counts.runs);
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
  // Root of `label`, halving the path (RunForest's find, over the slab's 0-based entries).
  std::uint32_t find(std::uint32_t label) {
    return RunForest::Unions(parent_.data()).find(label - 1) + 1;
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
  // `connectivity`: 6, 18 or 26. With `statistics`, the components' moments gathered as the
  // labels are written.
  SettledScan(const LabelMapVoxels<T>& voxels, Extent3 extent, int connectivity, unsigned threads,
              std::uint32_t* labels, std::vector<ComponentMoments>* statistics)
      : voxels_(voxels),
        grid_(extent),
        connectivity_(connectivity),
        slabs_(grid_.rows, threads),
        slab_labels_(slabs_.count()),
        first_label_(slabs_.count() + 1),
        labels_(labels),
        statistics_(statistics) {}

  // Scans every slab in parallel, provisional labels in the output; then lays the slabs' labels
  // end to end in one union-find and unites across the slab borders.
  void unite() {
    slabs_.for_each_index([&](std::uint32_t slab, std::uint32_t first, std::uint32_t last) {
      if (connectivity_ == 26) {
        scan_slab<26>(slab_labels_[slab], first, last);
      } else if (connectivity_ == 18) {
        scan_slab<18>(slab_labels_[slab], first, last);
      } else {
        scan_slab<6>(slab_labels_[slab], first, last);
      }
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
    // Rows more than a slice (at 18 and 26 a slice and a row) past a border have no neighbour
    // before it.
    const std::uint32_t past = grid_.ny + (connectivity_ == 6 ? 0 : 1);
    slabs_.for_each_past_border(past, [&](std::uint32_t first, std::uint32_t row) {
      NeighbourRow neighbours[4];
      const int count = earlier_neighbour_rows(grid_, connectivity_, row, 0, neighbours);
      const std::uint64_t begin = grid_.first_voxel(row);
      const T* values = voxels_.values + begin;
      const std::uint32_t* labels = labels_ + begin;
      const std::uint32_t base = first_label_[slab_of(row)] - 1;
      for (int n = 0; n < count; ++n) {
        if (neighbours[n].row >= first) continue;
        const std::uint64_t other = grid_.first_voxel(neighbours[n].row);
        const T* other_values = voxels_.values + other;
        const std::uint32_t* other_labels = labels_ + other;
        const std::uint32_t other_base = first_label_[slab_of(neighbours[n].row)] - 1;
        const std::uint32_t reach = neighbours[n].reach;
        // A voxel of the value of the voxel behind meets the slice behind through that voxel
        // alone: its other neighbours there neighbour the voxel behind, and met it in its slab
        // or, where it lies past the border, in its own row's turn here.
        const bool slice_behind = neighbours[n].row / grid_.ny + 1 == row / grid_.ny;
        const T* values_behind = slice_behind ? values - grid_.first_voxel(grid_.ny) : values;
        const bool is_behind = neighbours[n].row + grid_.ny == row;
        // Neighbouring voxels mostly carry the labels of the pair met last.
        std::uint32_t met_label = 0, met_other = 0;
        const auto meet = [&](std::uint32_t label, std::uint32_t other_label) {
          if (label == met_label && other_label == met_other) return;
          met_label = label;
          met_other = other_label;
          unions.unite_roots(base + label, other_base + other_label);
        };
        for (std::uint32_t x = 0; x < grid_.nx; ++x) {
          if (labels[x] == 0) continue;
          if (slice_behind && values_behind[x] == values[x]) {
            if (is_behind) meet(labels[x], other_labels[x]);
            continue;
          }
          const std::uint32_t last_column = std::min(grid_.nx - 1, x + reach);
          for (std::uint32_t o = x >= reach ? x - reach : 0; o <= last_column; ++o) {
            if (other_values[o] == values[x]) meet(labels[x], other_labels[o]);
          }
        }
      }
    });
  }

  std::uint32_t rank_roots() {
    component_count_ =
        forest_.rank_roots(SlabSplit(slabs_.count(), slabs_.count()), first_label_.data());
    return component_count_;
  }

  // Replaces each voxel's provisional label by its label, looked up in a table of the slab's
  // labels (the background's 0 its own): once for 16 bytes of one provisional label, else once a
  // voxel without a branch, where the patchwork of a component's provisional labels, each carried
  // on through the slices by the settled voxels, would mispredict one. With statistics, each
  // row's stretches of one provisional label are summed as they are written, consecutive
  // stretches of one label together (RowPart).
  void write_labels() {
    MomentSums sums(statistics_, component_count_, slabs_.count());
    sums.for_each_slab_owning(
        slabs_, [&](std::uint32_t slab, std::uint32_t) { return first_label_[slab]; },
        [&](std::uint32_t slab, std::uint32_t first, std::uint32_t last,
            MomentSums::Writer& moments) {
          std::vector<std::uint32_t> final_label(first_label_[slab + 1] - first_label_[slab] + 1,
                                                 0);
          for (std::uint32_t label = 1; label < final_label.size(); ++label) {
            final_label[label] = forest_.label_of(first_label_[slab] + label - 1);
          }
          if (sums.gathers()) {
            write_rows_summed(final_label.data(), first_label_[slab] - 1, first, last, moments);
          } else {
            write_rows(final_label.data(), first, last);
          }
        });
  }

 private:
  void write_rows(const std::uint32_t* table, std::uint32_t first, std::uint32_t last) {
    const std::uint64_t begin = grid_.first_voxel(first);
    look_up(table, labels_ + begin, grid_.first_voxel(last) - begin, labels_ + begin);
  }

  // to[i] = table[from[i]] for `count` provisional labels (`to` may be `from`).
  static void look_up(const std::uint32_t* table, const std::uint32_t* from, std::uint64_t count,
                      std::uint32_t* to) {
    std::uint64_t i = 0;
    for (; i + kLabelLanes <= count; i += kLabelLanes) {
      const std::uint32_t* lanes = from + i;
      const std::uint32_t same[kLabelLanes] = {lanes[0], lanes[0], lanes[0], lanes[0]};
      if (equal_lanes_at(lanes, same) == (1u << kLabelLanes) - 1) {
        std::fill_n(to + i, kLabelLanes, table[lanes[0]]);
      } else {
        for (std::uint32_t k = 0; k < kLabelLanes; ++k) to[i + k] = table[lanes[k]];
      }
    }
    for (; i < count; ++i) to[i] = table[from[i]];
  }

  // write_rows, each row's stretches of one label summed: `base` + a provisional label is its
  // index in the forest, whose parent (pointed at its root) tells the slab that owns the
  // component. A component's provisional labels are a patchwork, so each row's labels are looked
  // up first, beside its provisional labels, and its stretches found where they change, by
  // vector compares gathered into words of 64 voxels. The labels lie after a label 0 and before
  // a word of them, so that the first voxel and the last word need no case of their own.
  void write_rows_summed(const std::uint32_t* table, std::uint32_t base, std::uint32_t first,
                         std::uint32_t last, MomentSums::Writer& moments) {
    constexpr std::uint32_t kWordVoxels = 64;
    const std::uint32_t nx = grid_.nx;
    std::vector<std::uint32_t> padded(nx + 1 + kWordVoxels, 0);
    std::uint32_t* row_labels = padded.data() + 1;
    for (std::uint32_t row = first; row < last; ++row) {
      const std::uint32_t y = row % grid_.ny;
      const std::uint32_t z = row / grid_.ny;
      std::uint32_t* out = labels_ + grid_.first_voxel(row);
      look_up(table, out, nx, row_labels);
      RowPart part;
      std::uint32_t part_label = 0;
      std::uint32_t part_root = 0;
      const auto add_stretch = [&](std::uint32_t begin, std::uint32_t end) {
        const std::uint32_t label = row_labels[begin];
        if (begin == end || label == 0) return;
        if (label != part_label) {
          moments.add(part_root, part_label, part, y, z);
          part_label = label;
          part_root = forest_.parent(base + out[begin]);
        }
        part.add_run(begin, end - begin);
      };
      // A change at voxel 0 or at nx bounds an empty stretch or the last one.
      std::uint32_t stretch_begin = 0;
      for (std::uint32_t x = 0; x < nx; x += kWordVoxels) {
        std::uint64_t changes = ~equal_values(row_labels + x, row_labels + x - 1, kWordVoxels);
        // The word's components' rows of the table are fetched before any is summed into.
        for (std::uint64_t bits = changes; bits != 0; bits &= bits - 1) {
          moments.prefetch(row_labels[x + lowest_bit(bits)]);
        }
        for (; changes != 0; changes &= changes - 1) {
          const std::uint32_t change = x + lowest_bit(changes);
          add_stretch(stretch_begin, change);
          stretch_begin = change;
        }
      }
      add_stretch(stretch_begin, nx);
      moments.add(part_root, part_label, part, y, z);
      std::copy_n(row_labels, nx, out);
    }
  }

  std::uint32_t slab_of(std::uint32_t row) const {
    std::uint32_t slab = slabs_.count() - 1;
    while (slabs_.begin(slab) > row) --slab;
    return slab;
  }

  // A settled voxel takes the label of the voxel behind it, and meets only the earlier neighbours
  // that do not neighbour the voxel behind (Settling, kernels/rts_scan.h): none at 26; at 18 those
  // across edges in the row above, x - 1 at its run's first voxel and x + 1 at its last (an inner
  // voxel's contact there is its neighbour's across the face); at 6 x - 1 and the voxel above,
  // where of its value and not settled themselves (else their contact is that of the voxels behind
  // both, which are of its value too). Likewise a voxel of the value of the voxel above takes its
  // label and meets only the earlier neighbours that do not neighbour it: at 26 the three of the
  // row behind the next one; at 18 x - 1 and x + 1 behind and the voxel behind the next one; at 6
  // the voxel behind, and the voxel before where not of the value of the voxel above it. Any other
  // voxel meets the voxels of its value among its earlier neighbours in the slab: all of them at
  // its run's first voxel, after it only those in the column each row adds (x + 1 across an edge
  // or a corner, x across a face), and at 18 the voxel above, whose contact a settled voxel before
  // left to it; the voxel before, of the run, met the others or was settled. It takes the smallest
  // root among them, or a new label. kLanes voxels settled behind, or else above, take their
  // labels by one vector compare and copy, their few other contacts found from lane masks; at 6
  // only such groups are settled above, since a voxel there meets as many neighbours either way.
  // A group of one-byte values settled behind in part copies its labels from behind too: its
  // other voxels are then labeled one by one, and its settled ones make their contacts from lane
  // masks.
  template <int Connectivity>
  void scan_slab(SlabLabels& own, std::uint32_t first, std::uint32_t last) {
    constexpr std::uint32_t kLanes = 16 / sizeof(T);
    constexpr std::uint32_t kAllLanes = (1u << kLanes) - 1;
    // Groups of 16 voxels (values of one byte) hold enough settled voxels beside the others to
    // pay for labeling the others by lane masks; groups of wider values went faster voxel by
    // voxel (bench/notes/label-maps.md).
    constexpr bool kPartSettledGroups = kLanes == 16;
    own.clear();
    const T background = voxels_.background;
    T background_lanes[kLanes];
    std::fill_n(background_lanes, kLanes, background);
    const std::uint32_t nx = grid_.nx;
    const std::uint64_t slice = grid_.first_voxel(grid_.ny);
    for (std::uint32_t row = first; row < last; ++row) {
      const std::uint64_t begin = grid_.first_voxel(row);
      const T* values = voxels_.values + begin;
      std::uint32_t* out = labels_ + begin;
      // The earlier neighbour rows within the slab: their values and provisional labels.
      NeighbourRow neighbours[4];
      const int count = earlier_neighbour_rows(grid_, Connectivity, row, first, neighbours);
      const T* earlier_values[4];
      const std::uint32_t* earlier_out[4];
      for (int n = 0; n < count; ++n) {
        const std::uint64_t step = begin - grid_.first_voxel(neighbours[n].row);
        earlier_values[n] = values - step;
        earlier_out[n] = out - step;
      }
      const bool behind = row >= first + grid_.ny;
      const bool above = row % grid_.ny > 0 && row > first;
      // The rows behind, above and above behind, where the slab holds them.
      const T* values_behind = behind ? values - slice : values;
      const T* values_above = above ? values - nx : values;
      const T* values_above_behind = above && behind ? values_above - slice : values;
      const std::uint32_t* out_behind = behind ? out - slice : out;
      const std::uint32_t* out_above = above ? out - nx : out;
      // The row behind the next one, where the slab holds it (also in the slab's first slice,
      // where the row behind is not).
      const bool behind_next = row + 1 >= first + grid_.ny && row % grid_.ny + 1 < grid_.ny;
      const T* values_behind_next = behind_next ? values - slice + nx : values;
      const std::uint32_t* out_behind_next = behind_next ? out - slice + nx : out;
      // The labels of kLanes voxels from x copied from another row's, through a copy of fixed
      // size, so that no call to memmove is made.
      const auto copy_labels = [&](const std::uint32_t* from, std::uint32_t x) {
        std::uint32_t copied[kLanes];
        std::memcpy(copied, from + x, sizeof(copied));
        std::memcpy(out + x, copied, sizeof(copied));
      };
      const auto copy_from_behind = [&](std::uint32_t x) { copy_labels(out_behind, x); };
      // Bit i set where voxel x + i has the value of the voxel `offset` columns along in
      // `other_values`.
      const auto equal_along = [&](std::uint32_t x, const T* other_values, std::int32_t offset) {
        return equal_lanes_at(values + x, other_values + x + offset);
      };
      // Each voxel x + i of bit i of `lanes` meets the voxel `offset` columns along in the row of
      // `other_out`. Inlined: as a call it cost the scan of maps of 4-byte values at 18 a few
      // percent.
      const auto meet_lanes = [&](std::uint32_t x, std::uint32_t lanes,
                                  const std::uint32_t* other_out, std::int32_t offset)
          __attribute__((always_inline)) {
        for (; lanes != 0; lanes &= lanes - 1) {
          const std::uint32_t at = x + lowest_bit(lanes);
          own.unite(own.find(out[at]), other_out[at + offset]);
        }
      };
      // At 6 voxel x meets the voxel before where that is of its value and does not have the
      // value of its own voxel in `settling_row` (behind or above), which x's has too: else the
      // two voxels there met, and each its own.
      const auto meet_before_unless_settled = [&](std::uint32_t x, const T* settling_row) {
        if (x > 0 && values[x] != background && values[x - 1] == values[x] &&
            settling_row[x - 1] != values[x - 1]) {
          own.unite(own.find(out[x]), out[x - 1]);
        }
      };
      // The settled voxels of `lanes` (bit i: voxel x + i, of the foreground) at 18 meet the row
      // above across edges where they begin or end a run and it holds their value there; the
      // row's first voxel has none before it and its last none after. The lanes are found by
      // compares, so that a loop turns only for a contact.
      const auto meet_above_across_edges = [&](std::uint32_t x, std::uint32_t lanes) {
        const std::uint32_t changes = ~equal_lanes_at(values + x, values + x - 1) & kAllLanes;
        const std::uint32_t starts = changes & lanes & (x == 0 ? kAllLanes - 1 : kAllLanes);
        const std::uint32_t ends =
            (x + kLanes < nx ? ~equal_lanes_at(values + x + 1, values + x) : changes >> 1) & lanes;
        if ((starts | ends) == 0) return;
        // The voxels are settled behind, so the row above is not the volume's first, and a voxel
        // precedes it.
        meet_lanes(x, starts & equal_along(x, values_above, -1), out_above, -1);
        meet_lanes(x, ends & equal_along(x, values_above, 1), out_above, 1);
      };
      // The settled voxels of `lanes` at 6 meet the voxels above of their value that are not
      // settled themselves.
      const auto meet_above_unless_settled = [&](std::uint32_t x, std::uint32_t lanes) {
        meet_lanes(x,
                   equal_lanes_at(values_above + x, values + x) &
                       ~equal_lanes_at(values_above + x, values_above_behind + x) & lanes,
                   out_above, 0);
      };
      const auto foreground_lanes_at = [&](std::uint32_t x) {
        return ~equal_lanes_at(values + x, background_lanes) & kAllLanes;
      };
      // The kLanes voxels from x, all settled, have their labels copied, and at 18 and 6 make
      // their few other contacts; false where they are left to be labeled voxel by voxel.
      const auto group_settles = [&](std::uint32_t x) {
        // At 18 a row's first and last groups of wider values went faster voxel by voxel than
        // with their first or last lane masked (bench/notes/label-maps.md).
        if (Connectivity == 18 && !kPartSettledGroups && above && (x == 0 || x + kLanes == nx)) {
          return false;
        }
        copy_from_behind(x);
        if constexpr (Connectivity == 18) {
          if (above) meet_above_across_edges(x, foreground_lanes_at(x));
        } else if constexpr (Connectivity == 6) {
          // Inside the group every voxel before is settled.
          meet_before_unless_settled(x, values_behind);
          if (above) meet_above_unless_settled(x, foreground_lanes_at(x));
        }
        return true;
      };
      // Where the kLanes voxels from x, none of the value of the voxel behind, all have the value
      // of the voxel above them: then their labels are copied from the row above, and each meets
      // only the earlier neighbours that do not neighbour the voxel above (at 6 the voxel behind
      // is of another value).
      const auto group_settles_above = [&](std::uint32_t x) {
        if (!above || x == 0 || x + kLanes >= nx ||
            equal_lanes_at(values + x, values_above + x) != kAllLanes) {
          return false;
        }
        copy_labels(out_above, x);
        if constexpr (Connectivity == 26) {
          if (!behind_next) return true;
          const std::uint32_t foreground_lanes = foreground_lanes_at(x);
          const std::uint32_t before = equal_along(x, values_behind_next, -1) & foreground_lanes;
          const std::uint32_t at = equal_along(x, values_behind_next, 0) & foreground_lanes;
          const std::uint32_t after = equal_along(x, values_behind_next, 1) & foreground_lanes;
          if ((before | at | after) == 0) return true;
          meet_lanes(x, before, out_behind_next, -1);
          meet_lanes(x, at, out_behind_next, 0);
          meet_lanes(x, after, out_behind_next, 1);
        } else if constexpr (Connectivity == 18) {
          const std::uint32_t foreground_lanes = foreground_lanes_at(x);
          const std::uint32_t before =
              behind ? equal_along(x, values_behind, -1) & foreground_lanes : 0;
          const std::uint32_t after =
              behind ? equal_along(x, values_behind, 1) & foreground_lanes : 0;
          const std::uint32_t next =
              behind_next ? equal_along(x, values_behind_next, 0) & foreground_lanes : 0;
          if ((before | after | next) == 0) return true;
          meet_lanes(x, before, out_behind, -1);
          meet_lanes(x, after, out_behind, 1);
          meet_lanes(x, next, out_behind_next, 0);
        } else {
          // Inside the group the voxels above meet.
          meet_before_unless_settled(x, values_above);
        }
        return true;
      };
      // The root the voxel before took, where it met its neighbours (else 0): still a root.
      std::uint32_t previous_root = 0;
      // Voxel x, not settled, labeled by its earlier neighbours of its value. Inlined: as a call it
      // cost the scan of maps of 4-byte values a few percent.
      const auto label_voxel = [&](std::uint32_t x) __attribute__((always_inline)) {
        const T value = values[x];
        if (value == background) {
          out[x] = 0;
          return;
        }
        std::uint32_t root = 0;
        const auto meet = [&](std::uint32_t label) {
          root = root == 0 ? own.find(label) : own.unite(root, label);
        };
        const bool goes_on = x > 0 && values[x - 1] == value;
        if (behind && values_behind[x] == value) {
          root = out_behind[x];
          if constexpr (Connectivity == 18) {
            if (above && !goes_on && x > 0 && values_above[x - 1] == value) {
              root = own.unite(own.find(root), out_above[x - 1]);
            }
            if (above && x + 1 < nx && values[x + 1] != value && values_above[x + 1] == value) {
              root = own.unite(own.find(root), out_above[x + 1]);
            }
          } else if constexpr (Connectivity == 6) {
            if (goes_on && values_behind[x - 1] != value) {
              root = own.unite(own.find(root), out[x - 1]);
            }
            if (above && values_above[x] == value && values_above_behind[x] != value) {
              root = own.unite(own.find(root), out_above[x]);
            }
          }
          out[x] = root;
          previous_root = 0;
          return;
        }
        if (Connectivity != 6 && above && values_above[x] == value) {
          root = out_above[x];
          // Meets the voxel at `column` of another row of the slab where it is of the value.
          const auto meet_at = [&](const T* other_values, const std::uint32_t* other_out,
                                   std::uint32_t column) {
            if (column < nx && other_values[column] == value) {
              root = own.unite(own.find(root), other_out[column]);
            }
          };
          if (Connectivity == 26 && behind_next) {
            meet_at(values_behind_next, out_behind_next, x - 1);
            meet_at(values_behind_next, out_behind_next, x);
            meet_at(values_behind_next, out_behind_next, x + 1);
          } else if (Connectivity == 18) {
            if (behind) {
              meet_at(values_behind, out_behind, x - 1);
              meet_at(values_behind, out_behind, x + 1);
            }
            if (behind_next) meet_at(values_behind_next, out_behind_next, x);
          }
          out[x] = root;
          previous_root = 0;
          return;
        }
        if (goes_on) {
          root = previous_root != 0 ? previous_root : own.find(out[x - 1]);
          for (int n = 0; n < count; ++n) {
            const std::uint32_t column = x + neighbours[n].reach;
            if (column < nx && earlier_values[n][column] == value) meet(earlier_out[n][column]);
          }
          // At 18 a settled voxel before left its contact across an edge above to this voxel's
          // across the face.
          if (Connectivity == 18 && above && values_above[x] == value) meet(out_above[x]);
        } else {
          for (int n = 0; n < count; ++n) {
            const std::uint32_t reach = neighbours[n].reach;
            const std::uint32_t to = std::min(x + reach, nx - 1);
            for (std::uint32_t column = x >= reach ? x - reach : 0; column <= to; ++column) {
              if (earlier_values[n][column] == value) meet(earlier_out[n][column]);
            }
          }
        }
        previous_root = root == 0 ? own.make() : root;
        out[x] = previous_root;
      };
      // A group of which some voxels, not all, are settled behind, where an object's boundary
      // passes through it: the whole group's labels are copied from behind and the others' of the
      // background cleared; the others of the foreground, returned, are then labeled in order.
      const auto begin_part_settled_group = [&](std::uint32_t x, std::uint32_t settled,
                                                std::uint32_t foreground) {
        copy_from_behind(x);
        const std::uint32_t unsettled = ~settled & kAllLanes;
        for (std::uint32_t bits = unsettled & ~foreground; bits != 0; bits &= bits - 1) {
          out[x + lowest_bit(bits)] = 0;
        }
        return unsettled & foreground;
      };
      // Then its settled voxels make their other contacts, once the voxels before them hold their
      // labels.
      const auto finish_part_settled_group = [&](std::uint32_t x, std::uint32_t settled,
                                                 std::uint32_t foreground) {
        const std::uint32_t settled_foreground = settled & foreground;
        if constexpr (Connectivity == 18) {
          if (above) meet_above_across_edges(x, settled_foreground);
        } else if constexpr (Connectivity == 6) {
          // The voxels before of the value that are not settled themselves.
          const std::uint32_t settled_before =
              (settled << 1) | std::uint32_t{x == 0 || values_behind[x - 1] == values[x - 1]};
          meet_lanes(
              x, equal_lanes_at(values + x, values + x - 1) & ~settled_before & settled_foreground,
              out, -1);
          if (above) meet_above_unless_settled(x, settled_foreground);
        }
      };
      for (std::uint32_t x = 0; x < nx;) {
        const std::uint32_t settled_lanes =
            behind && x + kLanes <= nx ? equal_lanes_at(values + x, values_behind + x) : 0;
        if constexpr (kPartSettledGroups) {
          if (settled_lanes != 0 && settled_lanes != kAllLanes) {
            const std::uint32_t foreground = foreground_lanes_at(x);
            const std::uint32_t unsettled = begin_part_settled_group(x, settled_lanes, foreground);
            for (std::uint32_t bits = unsettled; bits != 0; bits &= bits - 1) {
              const std::uint32_t lane = lowest_bit(bits);
              // A voxel before that was settled left no root.
              if (lane > 0 && (unsettled >> (lane - 1) & 1) == 0) previous_root = 0;
              label_voxel(x + lane);
            }
            finish_part_settled_group(x, settled_lanes, foreground);
            x += kLanes;
            previous_root = 0;
            continue;
          }
        }
        // A group of which any voxel is settled is not tried above: along an object's boundary
        // through the slices that seldom settles them all, and costs more than it saves.
        if ((settled_lanes == kAllLanes && group_settles(x)) ||
            (settled_lanes == 0 && group_settles_above(x))) {
          x += kLanes;
          previous_root = 0;
          continue;
        }
        // At 26 the settled voxels a group of wider values begins with take their labels at once:
        // the whole group's are copied, and those past them written again as the scan reaches
        // them. Whole groups stay above, stepping by a constant: taken here, by a step read from
        // their compares, they were slower (bench/notes/label-maps.md).
        if (Connectivity == 26 && (settled_lanes & 1) != 0) {
          copy_from_behind(x);
          x += lowest_bit(~settled_lanes);
          previous_root = 0;
          continue;
        }
        label_voxel(x++);
      }
    }
  }

  const LabelMapVoxels<T> voxels_;
  const RowGrid grid_;
  const int connectivity_;
  const SlabSplit slabs_;
  std::vector<SlabLabels> slab_labels_;
  std::vector<std::uint32_t> first_label_;  // slabs + 1 entries: each slab's first in the forest
  RunForest forest_;
  std::uint32_t* labels_;
  std::vector<ComponentMoments>* statistics_;
  std::uint32_t component_count_ = 0;
};

// The whole labeling of a label map at `connectivity` (6, 18 or 26) by the settled scan, its
// steps timed; with `statistics`, the components' moments gathered as the labels are written.
template <class T>
LabelResult label_settled(const LabelMapVoxels<T>& voxels, Extent3 extent, int connectivity,
                          const LabelOptions& options, std::uint32_t* labels,
                          std::vector<ComponentMoments>* statistics) {
  return label_in_place(
      extent, options,
      [&](unsigned threads) {
        return SettledScan<T>(voxels, extent, connectivity, threads, labels, statistics);
      },
      [](SettledScan<T>&) {});
}

}  // namespace volccl::detail::rts
