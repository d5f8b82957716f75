// RTS over pairs of rows, for masks at 26 (and 8 in 2D, a one-slice volume at 26): rows y and
// y + 1 of a slice (y even) are one unit, and the runs of their OR are its runs. Any two voxels of
// a pair at consecutive x touch (by a face, an edge or a corner), so each such run is connected:
// dense and granular volumes have far fewer runs in half as many units to scan. A unit's runs are
// indexed in raster order of their first voxels (those with a voxel in the upper row first, by x;
// then those only in the lower row, by x), so the smallest index of a component is still its first
// voxel's run and its rank is its label, as in RunScan.
//
// A run touches: in the unit above (same slice), the voxels of that unit's lower row next to its
// own upper row's; in the slice before, the runs of the same pair within one voxel of its x range
// (every such pair of voxels touches at 26), the lower row of the pair above next to its upper
// row, and the upper row of the pair below next to its lower row.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "kernels/rts_scan.h"

namespace volccl::detail::rts {

// The units of a volume of nx x ny x nz voxels: unit p + z * pairs_per_slice holds rows 2p and
// 2p + 1 of slice z (only 2p for the last pair of a slice of odd height).
struct PairGrid {
  RowGrid rows;
  std::uint32_t pairs_per_slice;
  std::uint32_t units;

  explicit PairGrid(Extent3 extent)
      : rows(extent), pairs_per_slice((rows.ny + 1) / 2), units(pairs_per_slice * rows.nz) {}
  std::uint32_t upper_row(std::uint32_t unit) const {
    return unit / pairs_per_slice * rows.ny + 2 * (unit % pairs_per_slice);
  }
  bool has_lower_row(std::uint32_t unit) const {
    return 2 * (unit % pairs_per_slice) + 1 < rows.ny;
  }
};

// A unit's runs, in x order, with each one's index and, at each voxel of the OR, its ordinal.
struct PairUnit {
  const std::uint64_t* upper = nullptr;  // the rows' foreground bits
  const std::uint64_t* lower = nullptr;  // all zero where the unit has one row
  std::vector<std::uint32_t> begin, end, index;
  std::vector<std::uint32_t> run_at;  // defined on the OR's voxels only
};

// `bits` without those below position `end` (bits at w * 64 + i).
inline std::uint64_t from_position(std::uint64_t bits, std::uint32_t w, std::uint32_t end) {
  const std::uint32_t shift = end - w * 64;
  return shift >= 64 ? 0 : bits & (~std::uint64_t{0} << shift);
}

// For each value of a byte of a row's bits: how many voxels it holds, and the sums of their
// positions in the byte and of the positions' squares.
struct ByteSums {
  std::uint8_t count;
  std::uint8_t sum;             // at most 0 + 1 + ... + 7 = 28
  std::uint8_t sum_of_squares;  // at most 140
};

constexpr std::array<ByteSums, 256> make_byte_sums() {
  std::array<ByteSums, 256> sums{};
  for (unsigned value = 0; value < 256; ++value) {
    unsigned count = 0, sum = 0, squares = 0;
    for (unsigned bit = 0; bit < 8; ++bit) {
      if ((value >> bit) & 1) {
        ++count;
        sum += bit;
        squares += bit * bit;
      }
    }
    sums[value] = {static_cast<std::uint8_t>(count), static_cast<std::uint8_t>(sum),
                   static_cast<std::uint8_t>(squares)};
  }
  return sums;
}

inline constexpr std::array<ByteSums, 256> kByteSums = make_byte_sums();

class PairScan {
 public:
  PairScan(const BinaryVoxels& voxels, Extent3 extent, unsigned threads)
      : voxels_(voxels),
        grid_(extent),
        slabs_(grid_.units, threads),
        bits_(std::uint64_t{grid_.rows.words_per_row} * grid_.rows.rows),
        row_first_run_(std::uint64_t{grid_.rows.rows} + 1),
        zero_row_(grid_.rows.words_per_row, 0),
        unit_first_run_(std::uint64_t{grid_.units} + 1) {}

  // Packs every row's bits and counts each unit's runs; then their indices.
  void pack() {
    slabs_.for_each([&](std::uint32_t first, std::uint32_t last) {
      for (std::uint32_t unit = first; unit < last; ++unit) {
        const std::uint32_t row = grid_.upper_row(unit);
        const bool two_rows = grid_.has_lower_row(unit);
        for (std::uint32_t r = row; r < row + (two_rows ? 2 : 1); ++r) {
          row_first_run_[r + 1] =
              pack_row(voxels_, grid_.rows, grid_.rows.first_voxel(r), foreground(r), nullptr);
        }
        const std::uint64_t* upper = foreground(row);
        const std::uint64_t* lower = two_rows ? foreground(row + 1) : zero_row_.data();
        std::uint32_t runs = 0;
        std::uint64_t carry = 0;
        for (std::uint32_t w = 0; w < grid_.rows.words_per_row; ++w) {
          const std::uint64_t either = upper[w] | lower[w];
          runs += popcount64(either & ~((either << 1) | carry));
          carry = either >> 63;
        }
        unit_first_run_[unit + 1] = runs;
      }
    });
    counts_to_first_runs(unit_first_run_.get(), grid_.units);
    counts_to_first_runs(row_first_run_.get(), grid_.rows.rows);
  }

  // Whether the pairs hold few enough runs to pay for their costlier tests: at most eleven for
  // twenty runs of the rows in a volume, nine in an image, where a run has one earlier unit to
  // meet instead of four (bench/notes/cpu.md, "Pairs of rows at 26 and 8").
  bool pays() const {
    const std::uint64_t most = grid_.rows.nz > 1 ? 11 : 9;
    return std::uint64_t{unit_first_run_[grid_.units]} * 20 <=
           std::uint64_t{row_first_run_[grid_.rows.rows]} * most;
  }

  // The rows as packed, for a RunScan when the pairs do not pay.
  PackedRows release_rows() { return {std::move(bits_), std::move(row_first_run_)}; }

  void allocate_forest() { forest_.allocate(unit_first_run_[grid_.units]); }

  // Unites every run with the runs it touches: within each slab in parallel, then across the
  // slab borders.
  void unite() {
    slabs_.for_each([&](std::uint32_t first, std::uint32_t last) { unite_slab(first, last); });
    const RunForest::Unions unions = forest_.unions();
    PairUnit current;
    std::vector<PairUnit> earlier(4);
    // Units more than a slice's pairs and one past a border have no neighbour before it.
    slabs_.for_each_past_border(grid_.pairs_per_slice + 1,
                                [&](std::uint32_t first, std::uint32_t unit) {
                                  unite_across_border(first, unit, current, earlier, unions);
                                });
  }

  // Points every run at its root, marks the roots and ranks them; the component count.
  std::uint32_t rank_roots() {
    component_count_ = forest_.rank_roots(slabs_, unit_first_run_.get());
    return component_count_;
  }

  // Writes every voxel's label: each unit's rows cleared whole (random rows have gaps of a few
  // voxels between runs), then each run's voxels in either row given its root's rank + 1. With
  // `statistics`, also sums each row's voxels of one label, from consecutive runs (add_row_part),
  // into its label's row.
  void write_labels(std::uint32_t* labels, std::vector<ComponentMoments>* statistics) {
    MomentSums sums(statistics, component_count_, slabs_.count());
    sums.for_each_slab(slabs_, unit_first_run_.get(),
                       [&](std::uint32_t first, std::uint32_t last, MomentSums::Writer& moments) {
                         write_units(first, last, labels, sums.gathers() ? &moments : nullptr);
                       });
  }

  // write_labels for units [first, last), their moments into `moments` unless it is null.
  void write_units(std::uint32_t first, std::uint32_t last, std::uint32_t* labels,
                   MomentSums::Writer* moments) {
    PairUnit unit_runs;
    // Each row's runs of one label so far, and that label's root.
    RowPart upper_part;
    RowPart lower_part;
    std::uint32_t part_root = 0;
    std::uint32_t part_label = 0;
    for (std::uint32_t unit = first; unit < last; ++unit) {
      decode(unit, unit_runs, false);
      const std::uint32_t row = grid_.upper_row(unit);
      const std::uint32_t nx = grid_.rows.nx;
      std::uint32_t* upper_out = labels + grid_.rows.first_voxel(row);
      std::uint32_t* lower_out = upper_out + nx;
      const bool two_rows = grid_.has_lower_row(unit);
      std::fill(upper_out, upper_out + (two_rows ? 2 * nx : nx), 0u);
      const std::uint32_t y = row % grid_.rows.ny;
      const std::uint32_t z = row / grid_.rows.ny;
      for (std::uint32_t k = 0; k < unit_runs.begin.size(); ++k) {
        const std::uint32_t label = forest_.label_of(unit_runs.index[k]);
        const std::uint32_t from = unit_runs.begin[k];
        const std::uint32_t to = unit_runs.end[k];
        // Whether each row covers the run: its writing and its sums both take it.
        const bool upper_covered = covers(unit_runs.upper, from, to);
        const bool lower_covered = two_rows && covers(unit_runs.lower, from, to);
        write_run(unit_runs.upper, upper_out, from, to, label, upper_covered);
        if (two_rows) write_run(unit_runs.lower, lower_out, from, to, label, lower_covered);
        if (moments == nullptr) continue;
        if (label != part_label) {
          moments->add(part_root, part_label, upper_part, y, z);
          moments->add(part_root, part_label, lower_part, y + 1, z);
          part_root = forest_.parent(unit_runs.index[k]);
          part_label = label;
        }
        add_row_part(upper_part, unit_runs.upper, from, to, upper_covered);
        if (two_rows) add_row_part(lower_part, unit_runs.lower, from, to, lower_covered);
      }
      if (moments == nullptr) continue;
      moments->add(part_root, part_label, upper_part, y, z);
      moments->add(part_root, part_label, lower_part, y + 1, z);
    }
  }

 private:
  static constexpr std::uint32_t kNone = ~0u;

  // The earlier units a unit's runs may touch: above in its slice, and in the slice before the
  // pair above, the same pair and the pair below (kNone where there is none).
  struct Neighbours {
    std::uint32_t unit[4] = {kNone, kNone, kNone, kNone};
  };
  enum Neighbour { kAbove = 0, kBeforeAbove = 1, kBefore = 2, kBeforeBelow = 3 };

  Neighbours earlier_units(std::uint32_t unit) const {
    Neighbours n;
    const std::uint32_t pair = unit % grid_.pairs_per_slice;
    if (pair > 0) n.unit[kAbove] = unit - 1;
    if (unit >= grid_.pairs_per_slice) {
      const std::uint32_t before = unit - grid_.pairs_per_slice;
      if (pair > 0) n.unit[kBeforeAbove] = before - 1;
      n.unit[kBefore] = before;
      if (pair + 1 < grid_.pairs_per_slice) n.unit[kBeforeBelow] = before + 1;
    }
    return n;
  }

  std::uint64_t* foreground(std::uint32_t row) {
    return bits_.get() + std::uint64_t{row} * grid_.rows.words_per_row;
  }

  // The unit's runs from its rows' bits, their indices, and (for a unit read as an earlier one)
  // the ordinal at each voxel of the OR.
  void decode(std::uint32_t unit, PairUnit& out, bool with_run_at = true) {
    const std::uint32_t row = grid_.upper_row(unit);
    out.upper = foreground(row);
    out.lower = grid_.has_lower_row(unit) ? foreground(row + 1) : zero_row_.data();
    const std::uint32_t count = unit_first_run_[unit + 1] - unit_first_run_[unit];
    out.begin.resize(count);
    out.end.resize(count);
    out.index.resize(count);
    std::uint32_t begun = 0;
    std::uint32_t ended = 0;
    std::uint64_t carry = 0;
    for (std::uint32_t w = 0; w < grid_.rows.words_per_row; ++w) {
      const std::uint64_t either = out.upper[w] | out.lower[w];
      const std::uint64_t after = (either << 1) | carry;
      carry = either >> 63;
      std::uint64_t begins = either & ~after;
      std::uint64_t ends = after & ~either;
      while (ends != 0) {
        out.end[ended++] = w * 64 + lowest_bit(ends);
        ends &= ends - 1;
      }
      while (begins != 0) {
        out.begin[begun++] = w * 64 + lowest_bit(begins);
        begins &= begins - 1;
      }
    }
    if (ended < begun) out.end[ended] = grid_.rows.nx;
    // Raster order: the runs with a voxel in the upper row, then the others.
    // index[k] holds 1 for a run with a voxel in the upper row until the ordinals are known.
    std::uint32_t with_upper = 0;
    for (std::uint32_t k = 0; k < count; ++k) {
      out.index[k] = any_bit(out.upper, out.begin[k], out.end[k]) ? 1 : 0;
      with_upper += out.index[k];
    }
    std::uint32_t upper_next = unit_first_run_[unit];
    std::uint32_t lower_next = upper_next + with_upper;
    for (std::uint32_t k = 0; k < count; ++k) {
      out.index[k] = out.index[k] != 0 ? upper_next++ : lower_next++;
    }
    if (!with_run_at) return;
    out.run_at.resize(grid_.rows.nx + kRunAtBlock - 1);
    std::uint32_t* run_at = out.run_at.data();
    for (std::uint32_t k = 0; k < count; ++k) {
      store_run_ordinal(run_at, out.begin[k], out.end[k], k);
    }
  }

  // touch(index) for each run of `earlier` with a voxel in `earlier_row` next to (within one
  // voxel along x of) a voxel of `row` in [from, to).
  template <class Touch>
  void touch_next_to(const std::uint64_t* row, std::uint32_t from, std::uint32_t to,
                     const PairUnit& earlier, const std::uint64_t* earlier_row,
                     const Touch& touch) const {
    const std::uint32_t lo = from > 0 ? from - 1 : 0;
    const std::uint32_t hi = std::min(grid_.rows.nx, to + 1);
    const std::uint32_t last_word = (hi - 1) >> 6;
    if ((lo >> 6) == last_word) {
      // Most runs of granular volumes: the window in one word, so no voxel of `row` in [from,
      // to) has a neighbour outside it.
      const std::uint32_t w = last_word;
      const std::uint64_t own = row[w] & span_in_word(from, to);
      std::uint64_t meets = (own | (own << 1) | (own >> 1)) & earlier_row[w];
      while (meets != 0) {
        const std::uint32_t k = earlier.run_at[w * 64 + lowest_bit(meets)];
        touch(earlier.index[k]);
        meets = from_position(meets, w, earlier.end[k]);
      }
      return;
    }
    std::uint32_t skip_below = 0;  // the voxels of runs already touched
    const auto own_word = [&](std::uint32_t w) {
      return w < grid_.rows.words_per_row ? row[w] & bits_in_word(w, from, to) : 0;
    };
    std::uint64_t previous = 0;  // own_word(w - 1)
    std::uint64_t own = own_word(lo >> 6);
    for (std::uint32_t w = lo >> 6; w <= last_word; ++w) {
      const std::uint64_t next = own_word(w + 1);
      const std::uint64_t near = own | (own << 1) | (own >> 1) | (previous >> 63) | (next << 63);
      std::uint64_t meets = near & earlier_row[w];
      if (skip_below > w * 64) meets = from_position(meets, w, skip_below);
      while (meets != 0) {
        const std::uint32_t k = earlier.run_at[w * 64 + lowest_bit(meets)];
        touch(earlier.index[k]);
        skip_below = earlier.end[k];
        meets = from_position(meets, w, skip_below);
      }
      previous = own;
      own = next;
    }
  }

  // touch(index) for every earlier run that run k of `current` touches; `earlier` by Neighbour,
  // null where absent.
  template <class Touch>
  void for_each_touch(const PairUnit& current, std::uint32_t k, const PairUnit* const* earlier,
                      const Touch& touch) const {
    const std::uint32_t from = current.begin[k];
    const std::uint32_t to = current.end[k];
    if (earlier[kAbove] != nullptr) {
      touch_next_to(current.upper, from, to, *earlier[kAbove], earlier[kAbove]->lower, touch);
    }
    if (earlier[kBeforeAbove] != nullptr) {
      touch_next_to(current.upper, from, to, *earlier[kBeforeAbove], earlier[kBeforeAbove]->lower,
                    touch);
    }
    if (earlier[kBefore] != nullptr) {
      const PairUnit& before = *earlier[kBefore];
      const std::uint32_t lo = from > 0 ? from - 1 : 0;
      const std::uint32_t hi = std::min(grid_.rows.nx, to + 1);
      std::uint32_t lowest = 0;
      std::uint32_t highest = 0;
      if (or_span(before, lo, hi, lowest, highest)) {
        for (std::uint32_t j = before.run_at[lowest]; j <= before.run_at[highest]; ++j) {
          touch(before.index[j]);
        }
      }
    }
    if (earlier[kBeforeBelow] != nullptr) {
      touch_next_to(current.lower, from, to, *earlier[kBeforeBelow], earlier[kBeforeBelow]->upper,
                    touch);
    }
  }

  // The lowest and highest voxels of the unit's OR in [lo, hi), if any.
  static bool or_span(const PairUnit& unit, std::uint32_t lo, std::uint32_t hi,
                      std::uint32_t& lowest, std::uint32_t& highest) {
    const std::uint32_t first_word = lo >> 6;
    const std::uint32_t last_word = (hi - 1) >> 6;
    std::uint32_t w = first_word;
    std::uint64_t bits = (unit.upper[w] | unit.lower[w]) & bits_in_word(w, lo, hi);
    while (bits == 0) {
      if (++w > last_word) return false;
      bits = (unit.upper[w] | unit.lower[w]) & bits_in_word(w, lo, hi);
    }
    lowest = w * 64 + lowest_bit(bits);
    w = last_word;
    bits = (unit.upper[w] | unit.lower[w]) & bits_in_word(w, lo, hi);
    while (bits == 0) {
      --w;
      bits = (unit.upper[w] | unit.lower[w]) & bits_in_word(w, lo, hi);
    }
    highest = w * 64 + 63 - static_cast<std::uint32_t>(__builtin_clzll(bits));
    return true;
  }

  // One slab's units in order: each run's parent becomes the smallest root among the earlier
  // runs it touches (in earlier units, so of smaller indices), itself when none.
  void unite_slab(std::uint32_t first, std::uint32_t last) {
    const std::uint32_t ring_units = grid_.pairs_per_slice + 2;
    std::vector<PairUnit> ring(std::min<std::uint32_t>(ring_units, last - first));
    const RunForest::Unions unions = forest_.unions();
    for (std::uint32_t unit = first; unit < last; ++unit) {
      PairUnit& current = ring[(unit - first) % ring.size()];
      decode(unit, current);
      const Neighbours neighbours = earlier_units(unit);
      const PairUnit* earlier[4] = {};
      for (int n = 0; n < 4; ++n) {
        const std::uint32_t u = neighbours.unit[n];
        if (u != kNone && u >= first) earlier[n] = &ring[(u - first) % ring.size()];
      }
      for (std::uint32_t k = 0; k < current.begin.size(); ++k) {
        const std::uint32_t run = current.index[k];
        std::uint32_t root = run;
        for_each_touch(current, k, earlier,
                       [&](std::uint32_t other) { root = unions.meet(run, root, other); });
        unions.set_parent(run, root);
      }
    }
  }

  // Unites `unit`'s runs with those they touch in units before `first`, its slab's first unit.
  // In an image only the border's first unit has one before the border.
  void unite_across_border(std::uint32_t first, std::uint32_t unit, PairUnit& current,
                           std::vector<PairUnit>& earlier, const RunForest::Unions& unions) {
    const Neighbours neighbours = earlier_units(unit);
    const PairUnit* decoded[4] = {};
    bool any = false;
    for (int n = 0; n < 4; ++n) {
      if (neighbours.unit[n] != kNone && neighbours.unit[n] < first) {
        decode(neighbours.unit[n], earlier[n]);
        decoded[n] = &earlier[n];
        any = true;
      }
    }
    if (!any) return;
    decode(unit, current);
    for (std::uint32_t k = 0; k < current.begin.size(); ++k) {
      for_each_touch(current, k, decoded,
                     [&](std::uint32_t other) { unions.unite_roots(current.index[k], other); });
    }
  }

  // A row's voxels in [from, to), added to `part`: a run the row covers in closed form, else
  // summed along x a byte of the row's bits at a time (kByteSums).
  static void add_row_part(RowPart& part, const std::uint64_t* bits, std::uint32_t from,
                           std::uint32_t to, bool covered) {
    if (covered) {
      part.add_run(from, to - from);
      return;
    }
    std::uint64_t count = 0, sum_x = 0, sum_xx = 0;
    std::uint32_t min_x = 0, max_x = 0;
    for (std::uint32_t w = from >> 6; w <= (to - 1) >> 6; ++w) {
      const std::uint64_t set = bits[w] & bits_in_word(w, from, to);
      if (set == 0) continue;
      if (count == 0) min_x = w * 64 + lowest_bit(set);
      max_x = w * 64 + highest_bit(set);
      for (std::uint32_t byte = 0; byte < 8; ++byte) {
        const ByteSums& sums = kByteSums[(set >> (8 * byte)) & 0xFF];
        const std::uint64_t x = std::uint64_t{w} * 64 + 8 * byte;  // the byte's first voxel
        count += sums.count;
        sum_x += sums.count * x + sums.sum;
        sum_xx += sums.count * x * x + 2 * x * sums.sum + sums.sum_of_squares;
      }
    }
    if (count != 0) part.add(count, sum_x, sum_xx, min_x, max_x);
  }

  // out[x] = label where the row has a voxel at x in [from, to), else 0: a fill where the row
  // covers the run (`covered`; long runs mostly do), else no branch on the voxels, whose
  // pattern is as random as the volume.
  static void write_run(const std::uint64_t* bits, std::uint32_t* out, std::uint32_t from,
                        std::uint32_t to, std::uint32_t label, bool covered) {
    if (covered) {
      std::fill(out + from, out + to, label);
      return;
    }
    for (std::uint32_t x = from; x < to; ++x) {
      out[x] = label & (0u - static_cast<std::uint32_t>((bits[x >> 6] >> (x & 63)) & 1));
    }
  }

  static bool covers(const std::uint64_t* bits, std::uint32_t from, std::uint32_t to) {
    for (std::uint32_t w = from >> 6; w <= (to - 1) >> 6; ++w) {
      const std::uint64_t span = bits_in_word(w, from, to);
      if ((bits[w] & span) != span) return false;
    }
    return true;
  }

  const BinaryVoxels voxels_;
  const PairGrid grid_;
  const SlabSplit slabs_;
  PageArray<std::uint64_t> bits_;
  PageArray<std::uint32_t> row_first_run_;  // rows + 1 entries: each row's own runs, counted
  std::vector<std::uint64_t> zero_row_;
  PageArray<std::uint32_t> unit_first_run_;  // units + 1 entries
  RunForest forest_;
  std::uint32_t component_count_ = 0;
};

// The whole labeling of a mask at 26 (8 in 2D), its steps timed as label_runs times them, with
// `statistics` its components' moments: in pairs of rows where they pay, else in rows, from the
// same packed bits.
inline LabelResult label_mask_at_26(const BinaryVoxels& voxels, Extent3 extent,
                                    const LabelOptions& options, std::uint32_t* labels,
                                    std::vector<ComponentMoments>* statistics) {
  StepClock whole_call;
  StepClock step;
  LabelResult result = cpu_result(options);
  const unsigned threads = resolve_thread_count(options.cpu_threads, extent.voxel_count());
  PairScan pairs(voxels, extent, threads);
  result.timings.allocation_ms = step.lap();
  pairs.pack();
  if (pairs.pays()) {
    pairs.allocate_forest();
    finish_scan(pairs, result, step, [&] { pairs.write_labels(labels, statistics); });
  } else {
    RunScan<BinaryVoxels> rows(voxels, extent, 26, threads);
    rows.adopt(pairs.release_rows());
    finish_scan(rows, result, step, [&] { rows.write_labels(labels, statistics); });
  }
  result.timings.total_ms = whole_call.lap();
  return result;
}

}  // namespace volccl::detail::rts
