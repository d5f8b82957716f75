// RTS, a run-based two-pass scan for the CPU, shared by the 3D and 2D labelers
// (kernels3d/rts_3d_cpu.cpp, kernels2d/rts_2d_cpu.cpp). The rows of the volume (of the image) are
// split into one contiguous slab per thread. Every row is first packed into foreground and
// run-start bits and its runs counted, so that each run gets its index in raster order of the
// whole volume before any is united. Then each thread unites the runs of its slab with the runs
// of the earlier rows they touch, keeping the smallest index as the root (its component's first
// run, hence its first voxel); one thread unites the runs across the slab borders; each thread
// points its runs at their roots and marks the roots; the roots' ranks number the components in
// raster order; and each thread writes its rows' labels once, run by run.
//
// The union-find holds one word per run, as cc3d's table holds one per estimated run, instead of
// one per voxel: on the CPU the labeling is limited by memory, and even random volumes have
// several voxels per run. Label maps split their runs where the value changes and unite only runs
// of equal value.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "runtime/cpu_parallel.h"
#include "runtime/host_device.h"
#include "runtime/moments.h"
#include "runtime/page_array.h"
#include "runtime/voxel_input.h"
#include "volccl/detail/step_clock.h"
#include "volccl/statistics.h"
#include "volccl/types.h"

namespace volccl::detail::rts {

// A run of a row: voxels [begin, end) of equal value.
struct BinaryRun {
  std::uint32_t begin;
  std::uint32_t end;
};

template <typename T>
struct ValuedRun {
  std::uint32_t begin;
  std::uint32_t end;
  T value;
};

template <class Voxels>
struct RunTraits {
  using Run = BinaryRun;
  static constexpr bool kValued = false;
};

template <typename T>
struct RunTraits<LabelMapVoxels<T>> {
  using Run = ValuedRun<T>;
  static constexpr bool kValued = true;
};

// Each run stores its first kRunAtBlock ordinals in a row's run_at whatever its length, past its
// end into voxels that a later run overwrites or that are background (run_at holds
// kRunAtBlock - 1 entries past the row): on random volumes a loop over a run's few voxels
// mispredicts its exit at almost every run.
constexpr std::uint32_t kRunAtBlock = 4;

// Stores `ordinal` at run_at[begin, end), and maybe on up to kRunAtBlock - 1 entries after.
inline void store_run_ordinal(std::uint32_t* run_at, std::uint32_t begin, std::uint32_t end,
                              std::uint32_t ordinal) {
  for (std::uint32_t i = 0; i < kRunAtBlock; ++i) run_at[begin + i] = ordinal;
  for (std::uint32_t x = begin + kRunAtBlock; x < end; ++x) run_at[x] = ordinal;
}

// The runs of one row at a time, in storage that only grows: a row's decoding writes past its
// last run, and sizing a vector to each row would initialise what it gains.
template <class Run>
class RowRuns {
 public:
  // Room for `count` runs and `spare` more; the row then holds `count`.
  Run* hold(std::size_t count, std::size_t spare) {
    if (storage_.size() < count + spare) storage_.resize(count + spare);
    count_ = count;
    return storage_.data();
  }
  std::size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  Run& operator[](std::size_t i) { return storage_[i]; }
  const Run& operator[](std::size_t i) const { return storage_[i]; }
  Run* begin() { return storage_.data(); }
  Run* end() { return storage_.data() + count_; }
  const Run* begin() const { return storage_.data(); }
  const Run* end() const { return storage_.data() + count_; }

 private:
  std::vector<Run> storage_;
  std::size_t count_ = 0;
};

// A row's runs, and where they lie: its foreground bits and, at each foreground voxel, the
// ordinal of its run, so that the runs within a window of x are found by two bit scans instead
// of a walk over the runs (on random volumes the walk's branches are as random as the voxels).
template <class Run>
struct IndexedRow {
  RowRuns<Run> runs;
  const std::uint64_t* foreground = nullptr;
  std::vector<std::uint32_t> run_at;  // defined on the foreground voxels only
  std::uint32_t first_run = 0;        // the index of runs[0]

  // Whether a run has a voxel in [lo, hi) (lo < hi); then runs[first..last] are those that do.
  bool runs_within(std::uint32_t lo, std::uint32_t hi, std::uint32_t& first,
                   std::uint32_t& last) const {
    const std::uint32_t last_word = (hi - 1) >> 6;
    std::uint32_t word = lo >> 6;
    const std::uint64_t from_lo = ~std::uint64_t{0} << (lo & 63);
    const std::uint64_t below_hi = ~std::uint64_t{0} >> (63 - ((hi - 1) & 63));
    if (word == last_word) {
      // Most windows of random volumes lie in one word.
      const std::uint64_t inside = foreground[word] & from_lo & below_hi;
      if (inside == 0) return false;
      first = run_at[word * 64 + static_cast<std::uint32_t>(__builtin_ctzll(inside))];
      last = run_at[word * 64 + 63 - static_cast<std::uint32_t>(__builtin_clzll(inside))];
      return true;
    }
    std::uint64_t bits = foreground[word] & from_lo;
    while (bits == 0) {
      if (++word > last_word) return false;
      bits = foreground[word];
    }
    const std::uint32_t lowest = word * 64 + static_cast<std::uint32_t>(__builtin_ctzll(bits));
    if (lowest >= hi) return false;
    word = last_word;
    bits = foreground[word] & below_hi;
    while (bits == 0) bits = foreground[--word];
    first = run_at[lowest];
    last = run_at[word * 64 + 63 - static_cast<std::uint32_t>(__builtin_clzll(bits))];
    return true;
  }
};

// The rows of a volume of nx x ny x nz voxels, row index y + z * ny, and the bit words of each.
struct RowGrid {
  std::uint32_t nx;
  std::uint32_t ny;
  std::uint32_t nz;
  std::uint32_t rows;
  std::uint32_t words_per_row;  // 64-bit words of one row's foreground (or run-start) bits

  explicit RowGrid(Extent3 extent)
      : nx(extent.x),
        ny(extent.y),
        nz(extent.z),
        rows(extent.y * extent.z),
        words_per_row((extent.x + 63) / 64) {}
  std::uint64_t first_voxel(std::uint32_t row) const { return std::uint64_t{row} * nx; }
};

// A row whose runs touch the runs of the row being scanned when their x ranges, widened by
// `reach` voxels on each side, overlap: 0 across a face, 1 across an edge or a corner.
struct NeighbourRow {
  std::uint32_t row;
  std::uint32_t reach;
};

// The earlier rows whose voxels neighbour row `row` at `connectivity` (6, 18 or 26; 2D images
// come as one-slice volumes at 6 for 4 and 26 for 8), those from `first_row` on.
inline int earlier_neighbour_rows(const RowGrid& grid, int connectivity, std::uint32_t row,
                                  std::uint32_t first_row, NeighbourRow* out) {
  const std::uint32_t y = row % grid.ny;
  const bool has_previous_slice = row >= grid.ny;
  const std::uint32_t across_edge = connectivity == 6 ? 0 : 1;
  const std::uint32_t across_corner = connectivity == 26 ? 1 : 0;
  NeighbourRow candidates[4];
  int count = 0;
  if (has_previous_slice) {
    if (connectivity != 6 && y > 0) candidates[count++] = {row - grid.ny - 1, across_corner};
    candidates[count++] = {row - grid.ny, across_edge};
    if (connectivity != 6 && y + 1 < grid.ny)
      candidates[count++] = {row - grid.ny + 1, across_corner};
  }
  if (y > 0) candidates[count++] = {row - 1, across_edge};
  int kept = 0;
  for (int i = 0; i < count; ++i) {
    if (candidates[i].row >= first_row) out[kept++] = candidates[i];
  }
  return kept;
}

// out[x] = label where bit x of a row's foreground words `bits` is set, else 0, for x in
// [begin, end): a stretch of runs of one label and the gaps between them, written once, four
// voxels a step, with no branch on the runs' lengths.
inline void write_masked(std::uint32_t* out, const std::uint64_t* bits, std::uint32_t begin,
                         std::uint32_t end, std::uint32_t label) {
  const auto at = [&](std::uint32_t x) {
    return label & (0u - static_cast<std::uint32_t>((bits[x >> 6] >> (x & 63)) & 1u));
  };
  std::uint32_t x = begin;
#if defined(__SSE2__)
  for (; x < end && (x & 3) != 0; ++x) out[x] = at(x);
  const __m128i lanes = _mm_setr_epi32(1, 2, 4, 8);
  const __m128i value = _mm_set1_epi32(static_cast<int>(label));
  while (x + 4 <= end) {
    // Whole words of foreground as plain fills: long runs stay as fast as the fill of a
    // single run.
    if ((x & 63) == 0 && x + 64 <= end && bits[x >> 6] == ~std::uint64_t{0}) {
      std::fill(out + x, out + x + 64, label);
      x += 64;
      continue;
    }
    // x is a multiple of 4, so its four bits lie in one word.
    const auto nibble = static_cast<int>((bits[x >> 6] >> (x & 63)) & 15u);
    const __m128i set = _mm_cmpeq_epi32(_mm_and_si128(_mm_set1_epi32(nibble), lanes), lanes);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + x), _mm_and_si128(set, value));
    x += 4;
  }
#endif
  for (; x < end; ++x) out[x] = at(x);
}

// Bit i set when byte i of the 64 at `bytes` is non-zero.
inline std::uint64_t nonzero_bits64(const std::uint8_t* bytes) {
#if defined(__SSE2__)
  const __m128i zero = _mm_setzero_si128();
  std::uint64_t zeros = 0;
  for (int i = 0; i < 4; ++i) {
    const __m128i chunk = _mm_loadu_si128(reinterpret_cast<const __m128i*>(bytes + 16 * i));
    zeros |=
        std::uint64_t{static_cast<std::uint16_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(chunk, zero)))}
        << (16 * i);
  }
  return ~zeros;
#else
  std::uint64_t bits = 0;
  for (int i = 0; i < 16; ++i) {
    std::uint32_t word;
    std::memcpy(&word, bytes + 4 * i, 4);
    bits |= std::uint64_t{nonzero_byte_bits(word)} << (4 * i);
  }
  return bits;
#endif
}

// Without the POPCNT instruction (the x86-64 baseline) GCC calls a library routine instead.
inline std::uint32_t popcount64(std::uint64_t bits) {
#if defined(__POPCNT__) || !defined(__x86_64__)
  return static_cast<std::uint32_t>(__builtin_popcountll(bits));
#else
  bits -= (bits >> 1) & 0x5555555555555555ull;
  bits = (bits & 0x3333333333333333ull) + ((bits >> 2) & 0x3333333333333333ull);
  bits = (bits + (bits >> 4)) & 0x0F0F0F0F0F0F0F0Full;
  return static_cast<std::uint32_t>((bits * 0x0101010101010101ull) >> 56);
#endif
}

// Bits [from, to) of word `w` (positions w * 64 ...).
inline std::uint64_t bits_in_word(std::uint32_t w, std::uint32_t from, std::uint32_t to) {
  const std::uint32_t low = w * 64;
  if (to <= low || from >= low + 64) return 0;
  const std::uint64_t from_mask =
      from > low ? ~std::uint64_t{0} << (from - low) : ~std::uint64_t{0};
  const std::uint64_t to_mask =
      to < low + 64 ? (std::uint64_t{1} << (to - low)) - 1 : ~std::uint64_t{0};
  return from_mask & to_mask;
}

// Bits [from, to) of their word, where from and to - 1 lie in the same word.
inline std::uint64_t span_in_word(std::uint32_t from, std::uint32_t to) {
  return (~std::uint64_t{0} << (from & 63)) & (~std::uint64_t{0} >> (63 - ((to - 1) & 63)));
}

// Whether any of bits [from, to) of `bits` is set (from < to).
inline bool any_bit(const std::uint64_t* bits, std::uint32_t from, std::uint32_t to) {
  if ((from >> 6) == ((to - 1) >> 6)) return (bits[from >> 6] & span_in_word(from, to)) != 0;
  for (std::uint32_t w = from >> 6; w <= (to - 1) >> 6; ++w) {
    if ((bits[w] & bits_in_word(w, from, to)) != 0) return true;
  }
  return false;
}

// The bits of a row: foreground, and for label maps where a run starts (a mask's runs start
// where the foreground does). Packs them and returns the row's run count.
inline std::uint32_t pack_row(const BinaryVoxels& voxels, const RowGrid& grid,
                              std::uint64_t first_voxel, std::uint64_t* foreground,
                              std::uint64_t*) {
  const std::uint8_t* row = voxels.mask + first_voxel;
  std::uint32_t runs = 0;
  std::uint64_t carry = 0;
  for (std::uint32_t w = 0; w < grid.words_per_row; ++w) {
    const std::uint32_t x = w * 64;
    std::uint64_t bits = 0;
    if (x + 64 <= grid.nx) {
      bits = nonzero_bits64(row + x);
    } else {
      for (std::uint32_t i = 0; x + i < grid.nx; ++i) bits |= std::uint64_t{row[x + i] != 0} << i;
    }
    foreground[w] = bits;
    runs += popcount64(bits & ~((bits << 1) | carry));
    carry = bits >> 63;
  }
  return runs;
}

#if defined(__SSE2__)
// Lanes of T equal in a and b: all ones where equal. SSE2 compares 8-, 16- and 32-bit lanes; a
// 64-bit lane is equal where both its halves are.
template <typename T>
inline __m128i equal_lanes(__m128i a, __m128i b) {
  if constexpr (sizeof(T) == 1) {
    return _mm_cmpeq_epi8(a, b);
  } else if constexpr (sizeof(T) == 2) {
    return _mm_cmpeq_epi16(a, b);
  } else if constexpr (sizeof(T) == 4) {
    return _mm_cmpeq_epi32(a, b);
  } else {
    const __m128i halves = _mm_cmpeq_epi32(a, b);
    return _mm_and_si128(halves, _mm_shuffle_epi32(halves, _MM_SHUFFLE(2, 3, 0, 1)));
  }
}

// Bit i set where lane i of T is all ones.
template <typename T>
inline std::uint32_t lane_bits(__m128i lanes) {
  if constexpr (sizeof(T) == 1) {
    return static_cast<std::uint32_t>(_mm_movemask_epi8(lanes));
  } else if constexpr (sizeof(T) == 2) {
    return static_cast<std::uint32_t>(_mm_movemask_epi8(_mm_packs_epi16(lanes, lanes)) & 0xFF);
  } else if constexpr (sizeof(T) == 4) {
    return static_cast<std::uint32_t>(_mm_movemask_ps(_mm_castsi128_ps(lanes)));
  } else {
    return static_cast<std::uint32_t>(_mm_movemask_pd(_mm_castsi128_pd(lanes)));
  }
}

template <typename T>
inline __m128i splat(T value) {
  T lanes[16 / sizeof(T)];
  std::fill(lanes, lanes + 16 / sizeof(T), value);
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(lanes));
}

// The foreground and run-start bits of 64 values whose left neighbour row[-1] is the last lane
// of `left_lanes`: 16 bytes of values per compare, each compared with the background and with
// its left neighbour (the vector shifted by one lane). Returns the last 16 bytes read.
template <typename T>
inline __m128i pack_word(const T* row, __m128i background, __m128i left_lanes,
                         std::uint64_t& foreground, std::uint64_t& starts) {
  constexpr std::uint32_t kLanes = 16 / sizeof(T);
  std::uint64_t is_background = 0;
  std::uint64_t equals_left = 0;
  for (std::uint32_t i = 0; i < 64 / kLanes; ++i) {
    const __m128i values = _mm_loadu_si128(reinterpret_cast<const __m128i*>(row + i * kLanes));
    const __m128i left =
        _mm_or_si128(_mm_slli_si128(values, sizeof(T)), _mm_srli_si128(left_lanes, 16 - sizeof(T)));
    is_background |= std::uint64_t{lane_bits<T>(equal_lanes<T>(values, background))}
                     << (i * kLanes);
    equals_left |= std::uint64_t{lane_bits<T>(equal_lanes<T>(values, left))} << (i * kLanes);
    left_lanes = values;
  }
  foreground = ~is_background;
  starts = ~is_background & ~equals_left;
  return left_lanes;
}
#endif

// Bit i set where a[i] == b[i], for the first `length` (at most 64) values: whole words by
// vector compares where SSE2 is there, else value by value.
template <typename T>
inline std::uint64_t equal_values(const T* a, const T* b, std::uint32_t length) {
#if defined(__SSE2__)
  if (length == 64) {
    constexpr std::uint32_t kLanes = 16 / sizeof(T);
    std::uint64_t equal = 0;
    for (std::uint32_t i = 0; i < 64 / kLanes; ++i) {
      const __m128i left = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a + i * kLanes));
      const __m128i right = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + i * kLanes));
      equal |= std::uint64_t{lane_bits<T>(equal_lanes<T>(left, right))} << (i * kLanes);
    }
    return equal;
  }
#endif
  std::uint64_t equal = 0;
  for (std::uint32_t i = 0; i < length; ++i) equal |= std::uint64_t{a[i] == b[i]} << i;
  return equal;
}

// A label map's runs start at a foreground voxel whose value differs from its left neighbour's
// (the background before the row). Each whole word of 64 voxels is packed with vector compares
// where SSE2 is there (the x86-64 baseline); the rest voxel by voxel.
template <typename T>
std::uint32_t pack_row(const LabelMapVoxels<T>& voxels, const RowGrid& grid,
                       std::uint64_t first_voxel, std::uint64_t* foreground,
                       std::uint64_t* starts) {
  const T* row = voxels.values + first_voxel;
  const T background = voxels.background;
  std::uint32_t runs = 0;
  std::uint32_t w = 0;
#if defined(__SSE2__)
  const __m128i background_lanes = splat(background);
  __m128i left_lanes = background_lanes;
  for (; (w + 1) * 64 <= grid.nx; ++w) {
    left_lanes = pack_word(row + w * 64, background_lanes, left_lanes, foreground[w], starts[w]);
    runs += popcount64(starts[w]);
  }
#endif
  T previous = w > 0 ? row[w * 64 - 1] : background;
  for (; w < grid.words_per_row; ++w) {
    const std::uint32_t x = w * 64;
    const std::uint32_t length = std::min<std::uint32_t>(64, grid.nx - x);
    std::uint64_t fg = 0;
    std::uint64_t start = 0;
    for (std::uint32_t i = 0; i < length; ++i) {
      const T value = row[x + i];
      fg |= std::uint64_t{value != background} << i;
      start |= std::uint64_t{value != background && value != previous} << i;
      previous = value;
    }
    foreground[w] = fg;
    starts[w] = start;
    runs += popcount64(start);
  }
  return runs;
}

// Entries 1..items of `firsts` hold each item's run count; makes entry i the index of item i's
// first run (entry 0 zero, entry `items` the run total).
inline void counts_to_first_runs(std::uint32_t* firsts, std::uint32_t items) {
  firsts[0] = 0;
  for (std::uint32_t item = 0; item < items; ++item) firsts[item + 1] += firsts[item];
}

// The items of a scan (rows, or pairs of rows) cut into one contiguous slab per thread.
class SlabSplit {
 public:
  SlabSplit(std::uint32_t items, unsigned threads)
      : items_(items),
        count_(static_cast<std::uint32_t>(std::min<std::uint64_t>(threads, items))) {}
  std::uint32_t count() const { return count_; }
  std::uint32_t begin(std::uint32_t slab) const {
    return static_cast<std::uint32_t>(std::uint64_t{items_} * slab / count_);
  }

  // body(slab, first item, last item) for each slab, one per thread.
  template <class SlabBody>
  void for_each_index(const SlabBody& body) const {
    parallel_for(count_, count_, [&](std::uint64_t first, std::uint64_t last) {
      for (std::uint64_t slab = first; slab < last; ++slab) {
        const auto s = static_cast<std::uint32_t>(slab);
        body(s, begin(s), begin(s + 1));
      }
    });
  }

  // body(first item, last item) for each slab, one per thread.
  template <class SlabBody>
  void for_each(const SlabBody& body) const {
    for_each_index(
        [&](std::uint32_t, std::uint32_t first, std::uint32_t last) { body(first, last); });
  }

  // body(slab's first item, item), on the calling thread, for the items up to `reach` past each
  // border between slabs: those whose earlier neighbours may lie in the slab before.
  template <class ItemBody>
  void for_each_past_border(std::uint32_t reach, const ItemBody& body) const {
    for (std::uint32_t slab = 1; slab < count_; ++slab) {
      const std::uint32_t first = begin(slab);
      const std::uint32_t end = static_cast<std::uint32_t>(
          std::min<std::uint64_t>(begin(slab + 1), std::uint64_t{first} + reach));
      for (std::uint32_t item = first; item < end; ++item) body(first, item);
    }
  }

 private:
  std::uint32_t items_;
  std::uint32_t count_;
};

// The union-find over a scan's runs, indexed in raster order of their first voxels: one parent
// a run, a component's root its smallest index (its first voxel's run), and the roots ranked.
class RunForest {
 public:
  void allocate(std::uint32_t runs) {
    run_count_ = runs;
    parent_ = PageArray<std::uint32_t>(runs);
  }
  std::uint32_t parent(std::uint32_t run) const { return parent_[run]; }

  // The parents as one thread's unite loop changes them: a local copy keeps the array's address
  // in a register across the loop's stores.
  class Unions {
   public:
    explicit Unions(std::uint32_t* parent) : parent_(parent) {}

    // Root of `run` inside the thread's own runs, halving the path.
    std::uint32_t find(std::uint32_t run) const {
      std::uint32_t up = parent_[run];
      while (up != run) {
        const std::uint32_t grandparent = parent_[up];
        if (grandparent == up) return up;
        parent_[run] = grandparent;
        run = grandparent;
        up = parent_[run];
      }
      return run;
    }

    void unite_roots(std::uint32_t a, std::uint32_t b) const {
      a = find(a);
      b = find(b);
      if (a < b) {
        parent_[b] = a;
      } else if (b < a) {
        parent_[a] = b;
      }
    }

    // A new run, whose root so far is `root` (the run itself until it has met one), meets an
    // earlier one, `other`: returns the smaller of its root and the other's, the larger pointed
    // at it. The run's parent is set to its root once it has met them all.
    std::uint32_t meet(std::uint32_t run, std::uint32_t root, std::uint32_t other) const {
      // Most runs met after the first are already under the root met so far: their parent
      // tells, without loading the root's own entry, which lies far back in the array.
      if (parent_[other] == root) return root;
      const std::uint32_t other_root = find(other);
      if (root == run || other_root < root) {
        if (root != run) parent_[root] = other_root;
        return other_root;
      }
      if (root < other_root) parent_[other_root] = root;
      return root;
    }

    // meet, then `other` pointed at the root it returns: a window's run met twice (as its first
    // and its last) returns at the first test the second time.
    std::uint32_t meet_pointing(std::uint32_t run, std::uint32_t root, std::uint32_t other) const {
      if (parent_[other] == root) return root;
      root = meet(run, root, other);
      parent_[other] = root;
      return root;
    }

    void set_parent(std::uint32_t run, std::uint32_t up) const { parent_[run] = up; }

   private:
    std::uint32_t* parent_;
  };
  Unions unions() { return Unions(parent_.get()); }

  // Points every run at its root and marks the roots, each slab of `slabs` in parallel (item i's
  // runs begin at first_run[i]); then ranks the roots. Returns the component count.
  std::uint32_t rank_roots(const SlabSplit& slabs, const std::uint32_t* first_run) {
    start_ranking();
    slabs.for_each([&](std::uint32_t first, std::uint32_t last) {
      point_and_mark(first_run[first], first_run[last]);
    });
    return rank();
  }

  // The label of a run pointed at its root: the root's rank + 1.
  std::uint32_t label_of(std::uint32_t run) const {
    const std::uint32_t root = parent_[run];
    const std::uint64_t below = root_bits_[root >> 6] & ((std::uint64_t{1} << (root & 63)) - 1);
    return roots_before_[root >> 6] + popcount64(below) + 1;
  }

 private:
  void start_ranking() {
    const std::uint64_t words = (std::uint64_t{run_count_} + 63) / 64;
    root_bits_.assign(words, 0);
    roots_before_.resize(words);
  }

  // Points runs [first, last), one thread's, at their roots (an earlier run of the range is
  // pointed already) and marks the roots.
  void point_and_mark(std::uint32_t first, std::uint32_t last) {
    std::uint64_t word = 0;
    std::uint32_t word_index = first >> 6;
    for (std::uint32_t run = first; run < last; ++run) {
      if ((run >> 6) != word_index) {
        flush_root_word(word_index, word);
        word = 0;
        word_index = run >> 6;
      }
      // A root is marked with arithmetic, not a branch (in volumes of many components roots and
      // the runs under them alternate at random), and points at itself again.
      const std::uint32_t up = parent_[run];
      word |= std::uint64_t{up == run} << (run & 63);
      if (up >= first) {
        store_relaxed(&parent_[run], parent_[up]);
      } else {
        store_relaxed(&parent_[run], find_shared(up));
      }
    }
    flush_root_word(word_index, word);
  }

  // Once every range is marked: the roots before each bitmap word; returns the component count.
  std::uint32_t rank() {
    std::uint32_t roots = 0;
    for (std::uint64_t w = 0; w < root_bits_.size(); ++w) {
      roots_before_[w] = roots;
      roots += popcount64(root_bits_[w]);
    }
    return roots;
  }

  // Root of `run` in a range another thread is pointing at its roots: every entry it may read
  // holds an ancestor, before or after that thread's write.
  std::uint32_t find_shared(std::uint32_t run) const {
    std::uint32_t up = load_relaxed(&parent_[run]);
    while (up != run) {
      run = up;
      up = load_relaxed(&parent_[run]);
    }
    return run;
  }

  void flush_root_word(std::uint32_t word_index, std::uint64_t word) {
    if (word != 0) __atomic_fetch_or(&root_bits_[word_index], word, __ATOMIC_RELAXED);
  }

  std::uint32_t run_count_ = 0;
  PageArray<std::uint32_t> parent_;
  std::vector<std::uint64_t> root_bits_;
  std::vector<std::uint32_t> roots_before_;
};

// Voxels of one label in one row, summed along x as the labels' writing meets them in
// increasing x: one Moments is built for them when the label or the row changes, not one a run.
struct RowPart {
  std::uint64_t count = 0;
  std::uint64_t sum_x = 0;
  std::uint64_t sum_xx = 0;
  std::uint32_t min_x = 0;
  std::uint32_t max_x = 0;

  // `n` voxels from min to max summing to sx and their squares to sxx, right of the last ones.
  void add(std::uint64_t n, std::uint64_t sx, std::uint64_t sxx, std::uint32_t min,
           std::uint32_t max) {
    if (count == 0) min_x = min;
    max_x = max;
    count += n;
    sum_x += sx;
    sum_xx += sxx;
  }
  // A run of `length` voxels from x0, in closed form (its y and z terms are the row's).
  void add_run(std::uint32_t x0, std::uint32_t length) {
    const Moments run = run_moments(x0, length, 0, 0);
    add(run.count, run.sum[0], run.sum_products[0], run.min[0], run.max[0]);
  }
  Moments moments(std::uint32_t y, std::uint32_t z) const {
    return row_moments(count, sum_x, sum_xx, min_x, max_x, y, z);
  }
};

// A labeling's component moments gathered as its labels are written, one writer per slab, so
// that the labels are never read back: the slab that holds a component's root (its first run)
// owns its row; a slab meeting a component rooted in an earlier slab sums it apart, added once
// every slab is done. The consecutive runs of one label are summed in registers.
class MomentSums {
 public:
  // No table: every call is a no-op.
  MomentSums(std::vector<ComponentMoments>* table, std::uint32_t components, std::uint32_t slabs)
      : table_(table), borrowed_(table != nullptr ? slabs : 0) {
    if (table == nullptr) return;
    // A table of many components is tens of megabytes, touched here for the first time.
    table->clear();
    table->reserve(components);
    advise_huge_pages(table->data(), components * sizeof(ComponentMoments));
    table->resize(components);
  }
  bool gathers() const { return table_ != nullptr; }

  // One slab's sums; its runs from `own_runs_begin` on are its own.
  class Writer {
   public:
    Writer(MomentSums& sums, std::uint32_t slab, std::uint32_t own_runs_begin)
        : sums_(sums), slab_(slab), own_runs_begin_(own_runs_begin) {}
    ~Writer() { flush(); }
    Writer(const Writer&) = delete;
    Writer& operator=(const Writer&) = delete;

    // A row's part of `label`, of the component rooted at run `root`; the part is emptied.
    void add(std::uint32_t root, std::uint32_t label, RowPart& part, std::uint32_t y,
             std::uint32_t z) {
      if (part.count == 0) return;
      add(root, label, part.moments(y, z));
      part = RowPart{};
    }

    // Fetches the table's row of `label` (0: none) into the cache, to be written soon.
    void prefetch(std::uint32_t label) const {
      if (label == 0) return;
      const char* row = reinterpret_cast<const char*>(&(*sums_.table_)[label - 1]);
      __builtin_prefetch(row, 1);
      __builtin_prefetch(row + 64, 1);
    }

    // A run of `label`, of the component rooted at run `root`.
    void add(std::uint32_t root, std::uint32_t label, const Moments& run) {
      if (label == label_) {
        merge(summed_, run);
        return;
      }
      flush();
      label_ = label;
      root_ = root;
      summed_ = run;
    }

   private:
    void flush() {
      if (label_ == 0) return;
      if (root_ >= own_runs_begin_) {
        merge((*sums_.table_)[label_ - 1], summed_);
      } else {
        merge(sums_.borrowed_[slab_].try_emplace(label_, no_moments()).first->second, summed_);
      }
    }

    MomentSums& sums_;
    const std::uint32_t slab_;
    const std::uint32_t own_runs_begin_;
    std::uint32_t label_ = 0;
    std::uint32_t root_ = 0;
    Moments summed_ = no_moments();
  };

  // body(first item, last item, the slab's writer) for each slab of `slabs` in parallel (item
  // i's runs begin at first_run[i]); then the sums of components rooted in other slabs.
  template <class SlabBody>
  void for_each_slab(const SlabSplit& slabs, const std::uint32_t* first_run, const SlabBody& body) {
    for_each_slab_owning(
        slabs, [&](std::uint32_t, std::uint32_t first) { return first_run[first]; },
        [&](std::uint32_t, std::uint32_t first, std::uint32_t last, Writer& moments) {
          body(first, last, moments);
        });
  }

  // body(slab, first item, last item, the slab's writer) for each slab in parallel, the runs
  // from own_runs_begin(slab, first item) on the slab's own; then the sums of components rooted
  // in other slabs.
  template <class OwnRunsBegin, class SlabBody>
  void for_each_slab_owning(const SlabSplit& slabs, const OwnRunsBegin& own_runs_begin,
                            const SlabBody& body) {
    slabs.for_each_index([&](std::uint32_t slab, std::uint32_t first, std::uint32_t last) {
      Writer moments(*this, slab, own_runs_begin(slab, first));
      body(slab, first, last, moments);
    });
    if (!gathers()) return;
    for (const auto& slab : borrowed_) {
      for (const auto& [label, moments] : slab) merge((*table_)[label - 1], moments);
    }
  }

 private:
  std::vector<ComponentMoments>* table_;
  std::vector<std::unordered_map<std::uint32_t, Moments>> borrowed_;
};

// A mask's rows packed: each row's foreground bits (words_per_row words a row) and the index of
// each row's first run (rows + 1 entries, the last the run count).
struct PackedRows {
  PageArray<std::uint64_t> bits;
  PageArray<std::uint32_t> first_run;
};

// The runs of one labeling's input, packed, indexed and united.
template <class Voxels>
class RunScan {
 public:
  using Run = typename RunTraits<Voxels>::Run;
  static constexpr bool kValued = RunTraits<Voxels>::kValued;
  // How far apart (from start to start) two runs of one label may lie for the labels' writing
  // to span them with one masked stretch: a wider gap is left to the row's clearing and a longer
  // run to a plain fill, which write them faster.
  static constexpr std::uint32_t kStretchSpan = 32;
  // The longest mean run of a row that the labels' writing takes in stretches: longer runs lose
  // less to the per-run fill's mispredicted exit than the masked writing costs them.
  static constexpr std::uint32_t kShortRun = 16;
  // The least share of a row's voxels, in twentieths, that its runs cover for the writing to take
  // stretches: below it the foreground does not percolate and runs of one label are far apart.
  static constexpr std::uint32_t kDenseTwentieths = 11;

  RunScan(const Voxels& voxels, Extent3 extent, int connectivity, unsigned threads)
      : voxels_(voxels),
        grid_(extent),
        connectivity_(connectivity),
        slabs_(grid_.rows, threads),
        bits_per_row_(grid_.words_per_row * (kValued ? 2 : 1)),
        bits_(std::uint64_t{bits_per_row_} * grid_.rows),
        row_first_run_(std::uint64_t{grid_.rows} + 1) {}

  // Packs every row's bits and counts its runs; then the runs' indices: row_first_run_.
  void pack() {
    slabs_.for_each([&](std::uint32_t first, std::uint32_t last) {
      for (std::uint32_t row = first; row < last; ++row) {
        row_first_run_[row + 1] =
            pack_row(voxels_, grid_, grid_.first_voxel(row), foreground(row), starts(row));
      }
    });
    counts_to_first_runs(row_first_run_.get(), grid_.rows);
    forest_.allocate(row_first_run_[grid_.rows]);
  }

  // Takes a mask's rows as another scan packed them, instead of pack().
  void adopt(PackedRows&& rows) {
    static_assert(!kValued, "a label map's rows also hold their run starts");
    bits_ = std::move(rows.bits);
    row_first_run_ = std::move(rows.first_run);
    forest_.allocate(row_first_run_[grid_.rows]);
  }

  // Unites every run with the runs it touches: within each slab in parallel, then across the
  // slab borders.
  void unite() {
    slabs_.for_each([&](std::uint32_t first, std::uint32_t last) { unite_slab(first, last); });
    const RunForest::Unions unions = forest_.unions();
    IndexedRow<Run> current;
    IndexedRow<Run> earlier;
    // Rows more than a slice and a row past a border have no neighbour before it.
    slabs_.for_each_past_border(grid_.ny + 1, [&](std::uint32_t first, std::uint32_t row) {
      NeighbourRow neighbours[4];
      const int count = earlier_neighbour_rows(grid_, connectivity_, row, 0, neighbours);
      // In an image only the border's first row has one before the border.
      bool indexed = false;
      for (int n = 0; n < count; ++n) {
        if (neighbours[n].row >= first) continue;
        if (!indexed) index_row(row, current);
        indexed = true;
        index_row(neighbours[n].row, earlier);
        for (std::uint32_t i = 0; i < current.runs.size(); ++i) {
          for_each_touching_run(
              current.runs[i], earlier, neighbours[n].reach,
              [&](std::uint32_t other) { unions.unite_roots(current.first_run + i, other); });
        }
      }
    });
  }

  // Points every run at its root and marks the roots in a bitmap over the run indices; then
  // counts the roots before each bitmap word. Returns the component count.
  std::uint32_t rank_roots() {
    component_count_ = forest_.rank_roots(slabs_, row_first_run_.get());
    return component_count_;
  }

  // Writes every voxel's label: 0 on the background, its root's rank + 1 on its runs. With
  // `statistics`, also sums each run's moments (in closed form) into its label's row.
  void write_labels(std::uint32_t* labels, std::vector<ComponentMoments>* statistics) {
    MomentSums sums(statistics, component_count_, slabs_.count());
    sums.for_each_slab(slabs_, row_first_run_.get(),
                       [&](std::uint32_t first, std::uint32_t last, MomentSums::Writer& moments) {
                         if (sums.gathers()) {
                           write_rows<true>(first, last, labels, moments);
                         } else {
                           write_rows<false>(first, last, labels, moments);
                         }
                       });
  }

  // write_labels for rows [first, last); kGathers: their moments into `moments`, in a function
  // of their own, so that labeling alone carries none of that code.
  template <bool kGathers>
  void write_rows(std::uint32_t first, std::uint32_t last, std::uint32_t* labels,
                  MomentSums::Writer& moments) {
    RowRuns<Run> runs;
    std::uint32_t cached_root = ~0u;
    std::uint32_t cached_label = 0;
    // The row's runs of one label so far, and that label's root.
    RowPart part;
    std::uint32_t part_root = 0;
    std::uint32_t part_label = 0;
    for (std::uint32_t row = first; row < last; ++row) {
      std::uint32_t* out = labels + grid_.first_voxel(row);
      decode_row(row, runs, false);
      std::uint32_t run_index = row_first_run_[row];
      const std::uint32_t y = row % grid_.ny;
      const std::uint32_t z = row / grid_.ny;
      // The row is cleared whole first: random rows have gaps of a few voxels
      // between runs. In a mask's dense rows of short runs (in_stretches), runs
      // of one label a few voxels apart are then written as one stretch, gaps
      // and all, from the foreground bits: there most runs share a label (the
      // foreground percolates), and a loop per run mispredicts its exit at
      // every run. Elsewhere stretches of two runs and more are rare.
      std::fill(out, out + grid_.nx, 0u);
      // Each run's label, its moments gathered, then write(r, run, label).
      const bool stretches = in_stretches(runs);
      const auto label_runs = [&](const auto& write) {
        for (std::size_t r = 0; r < runs.size(); ++r, ++run_index) {
          const std::uint32_t root = forest_.parent(run_index);
          if (root != cached_root) {
            cached_root = root;
            cached_label = forest_.label_of(run_index);
          }
          const Run& run = runs[r];
          write(r, run, cached_label);
          if (!kGathers) continue;
          // In stretches most runs of a row share a label: summed in the row's part.
          // Elsewhere the label changes at most runs, and a run goes by itself.
          if (!stretches) {
            moments.add(root, cached_label, run_moments(run.begin, run.end - run.begin, y, z));
            continue;
          }
          if (cached_label != part_label) {
            moments.add(part_root, part_label, part, y, z);
            part_root = root;
            part_label = cached_label;
          }
          part.add_run(run.begin, run.end - run.begin);
        }
        if (kGathers) moments.add(part_root, part_label, part, y, z);
      };
      if (!stretches) {
        label_runs([&](std::size_t, const Run& run, std::uint32_t label) {
          // The bounds in locals: a loop over out[x] would reload them at
          // every store.
          const std::uint32_t begin = run.begin;
          const std::uint32_t end = run.end;
          for (std::uint32_t x = begin; x < end; ++x) out[x] = label;
        });
        continue;
      }
      std::size_t stretch = 0;
      std::uint32_t stretch_label = 0;
      const auto write_stretch = [&](std::size_t after) {
        const std::uint32_t begin = runs[stretch].begin;
        const std::uint32_t end = runs[after - 1].end;
        if (after - stretch == 1) {
          std::fill(out + begin, out + end, stretch_label);
        } else {
          write_masked(out, foreground(row), begin, end, stretch_label);
        }
      };
      label_runs([&](std::size_t r, const Run& run, std::uint32_t label) {
        if (r == 0) {
          stretch_label = label;
        } else if (label != stretch_label || run.begin - runs[r - 1].begin > kStretchSpan) {
          write_stretch(r);
          stretch = r;
          stretch_label = label;
        }
      });
      if (!runs.empty()) write_stretch(runs.size());
    }
  }

 private:
  std::uint64_t* foreground(std::uint32_t row) {
    return bits_.get() + std::uint64_t{row} * bits_per_row_;
  }
  std::uint64_t* starts(std::uint32_t row) { return foreground(row) + grid_.words_per_row; }
  // Whether the labels' writing takes a row's runs in stretches: a mask's dense row of short runs.
  bool in_stretches(const RowRuns<Run>& runs) const {
    if constexpr (kValued) return false;
    std::uint32_t covered = 0;
    for (const Run& run : runs) covered += run.end - run.begin;
    return 20 * covered > kDenseTwentieths * grid_.nx && covered <= kShortRun * runs.size();
  }

  // The runs of a row, from its bits: a run ends where the foreground stops or another starts.
  // A label map's values are read only `with_values`: the labels' writing does not compare them,
  // and the read is a cache miss for most runs.
  void decode_row(std::uint32_t row, RowRuns<Run>& row_runs, bool with_values = true) {
    const std::uint32_t count = row_first_run_[row + 1] - row_first_run_[row];
    // Room for the positions a block writes past the row's last run.
    Run* const runs = row_runs.hold(count, kDecodeBlock);
    if (count == 0) return;
    // A mask's row of more than two runs per word takes its words' bits kDecodeBlock at a time,
    // each position stored whatever and kept only where a bit was left: there a loop per bit
    // mispredicts its exit at almost every word. Rows of fewer runs, and a label map's runs side
    // by side, lose by the block's work.
    if (!kValued && count > 2 * grid_.words_per_row) {
      decode_words<kDecodeBlock>(row, runs);
    } else {
      decode_words<1>(row, runs);
    }
    if constexpr (kValued) {
      if (!with_values) return;
      const auto* values = voxels_.values + grid_.first_voxel(row);
      for (Run& run : row_runs) run.value = values[run.begin];
    }
  }

  static constexpr std::uint32_t kDecodeBlock = 4;

  // decode_row's bits to runs, `block` positions at a time.
  template <std::uint32_t block>
  void decode_words(std::uint32_t row, Run* runs) {
    constexpr std::uint64_t kTopBit = std::uint64_t{1} << 63;  // where an empty word's scan lands
    const std::uint64_t* fg = foreground(row);
    std::size_t begun = 0;
    std::size_t ended = 0;
    std::uint64_t carry = 0;
    for (std::uint32_t w = 0; w < grid_.words_per_row; ++w) {
      const std::uint64_t bits = fg[w];
      const std::uint64_t after_foreground = (bits << 1) | carry;
      carry = bits >> 63;
      std::uint64_t begins = kValued ? starts(row)[w] : bits & ~after_foreground;
      std::uint64_t ends = after_foreground & (~bits | begins);
      while (ends != 0) {
        for (std::uint32_t i = 0; i < block; ++i) {
          runs[ended].end = w * 64 + lowest_bit(ends | kTopBit);
          ended += ends != 0;
          ends &= ends - 1;
        }
      }
      while (begins != 0) {
        for (std::uint32_t i = 0; i < block; ++i) {
          runs[begun].begin = w * 64 + lowest_bit(begins | kTopBit);
          begun += begins != 0;
          begins &= begins - 1;
        }
      }
    }
    if (ended < begun) runs[ended].end = grid_.nx;
  }

  // The runs of a row and the ordinal of the run at each of its foreground voxels.
  void index_row(std::uint32_t row, IndexedRow<Run>& indexed) {
    decode_row(row, indexed.runs);
    indexed.foreground = foreground(row);
    indexed.first_run = row_first_run_[row];
    indexed.run_at.resize(grid_.nx + kRunAtBlock - 1);
    std::uint32_t* run_at = indexed.run_at.data();
    for (std::uint32_t k = 0; k < indexed.runs.size(); ++k) {
      store_run_ordinal(run_at, indexed.runs[k].begin, indexed.runs[k].end, k);
    }
  }

  static bool same_value(const Run& a, const Run& b) {
    if constexpr (kValued) {
      return a.value == b.value;
    } else {
      return true;
    }
  }

  // Calls touch(index) for each run of `earlier` that touches `run` (x ranges within `reach`
  // voxels) and joins it, the window's last one maybe twice: a window of a random volume holds
  // one run or two, so the first and the last are touched whatever and a loop takes only those
  // between, whose exit then rarely mispredicts (touching a run again unites nothing new).
  template <class Touch>
  void for_each_touching_run(const Run& run, const IndexedRow<Run>& earlier, std::uint32_t reach,
                             const Touch& touch) const {
    const std::uint32_t lo = run.begin > reach ? run.begin - reach : 0;
    const std::uint32_t hi = std::min(grid_.nx, run.end + reach);
    std::uint32_t first;
    std::uint32_t last;
    if (!earlier.runs_within(lo, hi, first, last)) return;
    if (same_value(run, earlier.runs[first])) touch(earlier.first_run + first);
    for (std::uint32_t k = first + 1; k < last; ++k) {
      if (same_value(run, earlier.runs[k])) touch(earlier.first_run + k);
    }
    if (same_value(run, earlier.runs[last])) touch(earlier.first_run + last);
  }

  // A voxel of the value of the voxel behind it (z - 1; in a mask, a voxel with foreground
  // behind it) is settled: each earlier neighbour of both was united with the one behind, if of
  // their value, when the later of the two was scanned. At 26 that is every earlier neighbour. At
  // 18 all but two, x - 1 and x + 1 of the row above, and of those only a run's ends need a test:
  // an inner voxel's contact there is the next voxel's across a face. The indices among a row's
  // earlier neighbours of the row behind and, at 18, of the row above; -1 where there is none.
  struct Settling {
    int behind = -1;
    int ends_above = -1;
  };
  Settling settling(std::uint32_t row, const NeighbourRow* neighbours, int count) const {
    Settling settling;
    if (connectivity_ == 6) return settling;
    for (int n = 0; n < count; ++n) {
      if (neighbours[n].row + grid_.ny == row) settling.behind = n;
      if (neighbours[n].row + 1 == row && connectivity_ == 18) settling.ends_above = n;
    }
    if (settling.behind < 0) settling.ends_above = -1;
    return settling;
  }

  // A settled run's meetings at its ends with the runs of the row above across edges (at 18),
  // those of its value; returns its root, `root` so far.
  std::uint32_t meet_ends_above(std::uint32_t run, std::uint32_t root, const Run& own,
                                const IndexedRow<Run>& above,
                                const RunForest::Unions& unions) const {
    const auto meet_at = [&](std::uint32_t x) {
      if (((above.foreground[x >> 6] >> (x & 63)) & 1) == 0) return;
      const std::uint32_t k = above.run_at[x];
      if (same_value(own, above.runs[k])) {
        root = unions.meet_pointing(run, root, above.first_run + k);
      }
    };
    if (own.begin > 0) meet_at(own.begin - 1);
    if (own.end < grid_.nx) meet_at(own.end);
    return root;
  }

  // One slab's rows in order: each run's parent becomes the smallest root among the earlier
  // runs it touches in the slab (a new run's index exceeds theirs), itself when none.
  void unite_slab(std::uint32_t first, std::uint32_t last) {
    const std::uint32_t ring_rows = (grid_.nz > 1 ? grid_.ny + 1 : 1) + 1;
    std::vector<IndexedRow<Run>> ring(std::min<std::uint32_t>(ring_rows, last - first));
    std::vector<std::uint64_t> unsettled_bits(grid_.words_per_row);
    const RunForest::Unions unions = forest_.unions();
    for (std::uint32_t row = first; row < last; ++row) {
      IndexedRow<Run>& current = ring[(row - first) % ring.size()];
      index_row(row, current);
      NeighbourRow neighbours[4];
      const int count = earlier_neighbour_rows(grid_, connectivity_, row, first, neighbours);
      const IndexedRow<Run>* earlier[4];
      for (int n = 0; n < count; ++n) earlier[n] = &ring[(neighbours[n].row - first) % ring.size()];
      const Settling settled = settling(row, neighbours, count);
      // Words of columns cost per word, windows per run: rows of many short runs go by words.
      // At 18 and 26, whose words also take the corners of up to four rows, only a label map's
      // rows of four times as many runs, mostly of values side by side, whose windows' value
      // comparisons mispredict (on rows of longer runs, or of runs ending at the background as
      // in a mask, the windows won).
      const std::size_t runs_for_words = (connectivity_ == 6 ? 2 : 8) * grid_.words_per_row;
      if (current.runs.size() > runs_for_words &&
          (connectivity_ == 6 || (kValued && mostly_side_by_side(row, current.runs.size())))) {
        unite_by_words(row, current, neighbours, earlier, count, settled, unions);
        continue;
      }
      if (settled.behind >= 0) {
        const std::uint64_t* own = foreground(row);
        const std::uint32_t behind = neighbours[settled.behind].row;
        for (std::uint32_t w = 0; w < grid_.words_per_row; ++w) {
          unsettled_bits[w] = own[w] & ~face_word(own[w], row, behind, w);
        }
      }
      for (std::uint32_t i = 0; i < current.runs.size(); ++i) {
        const std::uint32_t run = current.first_run + i;
        const Run& own = current.runs[i];
        if (settled.behind >= 0 && !any_bit(unsettled_bits.data(), own.begin, own.end)) {
          const IndexedRow<Run>& back = *earlier[settled.behind];
          std::uint32_t root = unions.find(back.first_run + back.run_at[own.begin]);
          if (settled.ends_above >= 0) {
            root = meet_ends_above(run, root, own, *earlier[settled.ends_above], unions);
          }
          unions.set_parent(run, root);
          continue;
        }
        std::uint32_t root = run;
        for (int n = 0; n < count; ++n) {
          for_each_touching_run(own, *earlier[n], neighbours[n].reach, [&](std::uint32_t other) {
            root = unions.meet_pointing(run, root, other);
          });
        }
        unions.set_parent(run, root);
      }
    }
  }

  // Word w of the voxels of `row` (its foreground word `own`) that meet the same voxel of
  // `other` across a face: both foreground, and in a label map of one value.
  std::uint64_t face_word(std::uint64_t own, std::uint32_t row, std::uint32_t other,
                          std::uint32_t w) {
    const std::uint64_t both = own & foreground(other)[w];
    if constexpr (kValued) {
      if (both == 0) return 0;
      return both & equal_values(voxels_.values + grid_.first_voxel(row) + w * 64,
                                 voxels_.values + grid_.first_voxel(other) + w * 64,
                                 std::min<std::uint32_t>(64, grid_.nx - w * 64));
    } else {
      return both;
    }
  }

  // Whether more than half of a label map row's `runs` begin beside a run of another value.
  bool mostly_side_by_side(std::uint32_t row, std::size_t runs) {
    const std::uint64_t* row_foreground = foreground(row);
    const std::uint64_t* row_starts = starts(row);
    std::uint64_t carry = 0;
    std::size_t beside = 0;
    for (std::uint32_t w = 0; w < grid_.words_per_row; ++w) {
      beside += popcount64(row_starts[w] & ((row_foreground[w] << 1) | carry));
      carry = row_foreground[w] >> 63;
    }
    return 2 * beside > runs;
  }

  // A label map's corner contacts of word w of `row` with the earlier row `other` (across an edge
  // or a corner): bit q of `ends`, the run of `row` ending at q meets the run of `other` beginning
  // at q + 1, of its value; of `begins`, the run beginning at q meets the other's ending at q - 1.
  // Every other voxel of a run beside one of the other's, of its value, meets it across a face too
  // (the run goes on beside it, or the other's does), where face_word finds it.
  void corner_words(std::uint32_t row, std::uint32_t other, std::uint32_t w, std::uint64_t& ends,
                    std::uint64_t& begins) {
    const bool last_word = w + 1 == grid_.words_per_row;
    const auto next_bit = [&](const std::uint64_t* words) {
      return last_word ? std::uint64_t{0} : (words[w + 1] & 1) << 63;
    };
    const auto previous_bit = [&](const std::uint64_t* words) {
      return w == 0 ? std::uint64_t{0} : words[w - 1] >> 63;
    };
    const std::uint64_t* own_foreground = foreground(row);
    const std::uint64_t* own_starts = starts(row);
    const std::uint64_t* other_foreground = foreground(other);
    const std::uint64_t* other_starts = starts(other);
    // Bit q: voxel q + 1 (q - 1) of the row.
    const std::uint64_t own_next = (own_foreground[w] >> 1) | next_bit(own_foreground);
    const std::uint64_t own_next_starts = (own_starts[w] >> 1) | next_bit(own_starts);
    const std::uint64_t other_next_starts = (other_starts[w] >> 1) | next_bit(other_starts);
    const std::uint64_t other_previous =
        (other_foreground[w] << 1) | previous_bit(other_foreground);
    ends = own_foreground[w] & ~(own_next & ~own_next_starts) & other_next_starts;
    begins = own_starts[w] & other_previous & ~(other_foreground[w] & ~other_starts[w]);
    if ((ends | begins) == 0) return;
    const std::uint32_t x0 = w * 64;
    const auto* own_values = voxels_.values + grid_.first_voxel(row) + x0;
    const auto* other_values = voxels_.values + grid_.first_voxel(other) + x0;
    const std::uint32_t after = std::min<std::uint32_t>(64, grid_.nx - x0 - 1);
    if (ends != 0) ends &= equal_values(own_values, other_values + 1, after);
    if (begins != 0) {
      const bool first_meets = x0 > 0 && own_values[0] == other_values[-1];
      begins &= (equal_values(own_values + 1, other_values, after) << 1) | (first_meets ? 1 : 0);
    }
  }

  // A run meets a run of a row before it across each maximal stretch of columns where both rows
  // hold a voxel that meets the other's (face_word) and no run of the row starts past its first
  // column: one contact per stretch, found a word of columns at a time instead of a window of x
  // per run; in a label map at 18 and 26 also at the corners of runs' ends (corner_words), with
  // the rows across an edge or a corner. Each run's parent becomes the smallest root among those
  // it meets (`meet`, in x order), itself when none.
  void unite_by_words(std::uint32_t row, const IndexedRow<Run>& current,
                      const NeighbourRow* neighbours, const IndexedRow<Run>* const* earlier,
                      int count, Settling settled, const RunForest::Unions& unions) {
    for (std::uint32_t k = 0; k < current.runs.size(); ++k) {
      unions.set_parent(current.first_run + k, current.first_run + k);
    }
    if (current.runs.empty() || count == 0) return;
    const std::uint64_t* own_bits = foreground(row);
    std::uint64_t carry[4] = {0, 0, 0, 0};
    std::uint32_t run = ~0u;
    std::uint32_t root = 0;
    for (std::uint32_t w = 0; w < grid_.words_per_row; ++w) {
      if (own_bits[w] == 0) {
        // Sparse volumes: most words of a row with runs hold none.
        for (std::uint64_t& carried : carry) carried = 0;
        continue;
      }
      // In a mask a stretch of columns in both rows lies in one run of each; in a label map a run
      // of the row may start inside it, where the values of both rows change together.
      const std::uint64_t cuts = kValued ? starts(row)[w] : 0;
      std::uint64_t contacts[4] = {0, 0, 0, 0};
      std::uint64_t ends[4] = {0, 0, 0, 0};
      std::uint64_t begins[4] = {0, 0, 0, 0};
      // The settled voxels (Settling) meet the row behind by faces, and at 18 the row above at
      // their runs' ends; the others meet every row.
      const std::uint64_t behind_meets =
          settled.behind >= 0 ? face_word(own_bits[w], row, neighbours[settled.behind].row, w) : 0;
      const std::uint64_t unsettled = own_bits[w] & ~behind_meets;
      std::uint64_t columns = 0;
      for (int n = 0; n < count; ++n) {
        const std::uint64_t meets =
            n == settled.behind ? behind_meets : face_word(unsettled, row, neighbours[n].row, w);
        const std::uint64_t continued = (meets << 1) | carry[n];
        carry[n] = meets >> 63;
        contacts[n] = meets & ~(continued & ~cuts);
        if constexpr (kValued) {
          if (neighbours[n].reach != 0 && (unsettled != 0 || n == settled.ends_above)) {
            corner_words(row, neighbours[n].row, w, ends[n], begins[n]);
            if (n != settled.ends_above) {
              ends[n] &= unsettled;
              begins[n] &= unsettled;
            }
          }
        }
        columns |= contacts[n] | ends[n] | begins[n];
      }
      while (columns != 0) {
        const std::uint32_t i = lowest_bit(columns);
        columns &= columns - 1;
        const std::uint32_t x = w * 64 + i;
        const std::uint32_t own = current.first_run + current.run_at[x];
        if (own != run) {
          if (run != ~0u) unions.set_parent(run, root);
          run = own;
          root = own;
        }
        for (int n = 0; n < count; ++n) {
          const IndexedRow<Run>& other = *earlier[n];
          if ((contacts[n] >> i) & 1) {
            root = unions.meet(run, root, other.first_run + other.run_at[x]);
          }
          if ((ends[n] >> i) & 1) {
            root = unions.meet(run, root, other.first_run + other.run_at[x + 1]);
          }
          if ((begins[n] >> i) & 1) {
            root = unions.meet(run, root, other.first_run + other.run_at[x - 1]);
          }
        }
      }
    }
    if (run != ~0u) unions.set_parent(run, root);
  }

  const Voxels voxels_;
  const RowGrid grid_;
  const int connectivity_;
  const SlabSplit slabs_;
  const std::uint32_t bits_per_row_;
  PageArray<std::uint64_t> bits_;
  PageArray<std::uint32_t> row_first_run_;  // rows + 1 entries
  RunForest forest_;
  std::uint32_t component_count_ = 0;
};

// A packed scan's remaining steps, each timed into `result` (the packing's time since `step`
// as the initialization): uniting, ranking, and `write_labels`.
template <class Scan, class WriteLabels>
void finish_scan(Scan& scan, LabelResult& result, StepClock& step,
                 const WriteLabels& write_labels) {
  result.timings.initialization_ms = step.lap();
  scan.unite();
  result.timings.merge_ms = step.lap();
  result.component_count = scan.rank_roots();
  result.timings.relabel_ms = step.lap();
  write_labels();
  result.timings.final_labeling_ms = step.lap();
}

// The result of a CPU labeling with `options`, before its steps: what ran it.
inline LabelResult cpu_result(const LabelOptions& options) {
  LabelResult result;
  result.backend_used = Backend::cpu;
  result.algorithm_used = options.algorithm;
  return result;
}

// The whole labeling by a scan that keeps provisional values in the output until it writes the
// labels over them: the scan made by `make(threads)` (timed as the allocation), `start(scan)` (as
// the initialization), then its other steps (finish_scan); the whole call timed.
template <class Make, class Start>
LabelResult label_in_place(Extent3 extent, const LabelOptions& options, const Make& make,
                           const Start& start) {
  StepClock whole_call;
  StepClock step;
  LabelResult result = cpu_result(options);
  auto scan = make(resolve_thread_count(options.cpu_threads, extent.voxel_count()));
  result.timings.allocation_ms = step.lap();
  start(scan);
  finish_scan(scan, result, step, [&] { scan.write_labels(); });
  result.timings.total_ms = whole_call.lap();
  return result;
}

// The whole labeling of `voxels` at `connectivity` (6, 18 or 26), its steps timed; with
// `statistics`, the components' moments gathered as the labels are written.
template <class Voxels>
LabelResult label_runs(const Voxels& voxels, Extent3 extent, int connectivity,
                       const LabelOptions& options, std::uint32_t* labels,
                       std::vector<ComponentMoments>* statistics) {
  StepClock whole_call;
  StepClock step;
  LabelResult result = cpu_result(options);
  RunScan<Voxels> scan(voxels, extent, connectivity,
                       resolve_thread_count(options.cpu_threads, extent.voxel_count()));
  result.timings.allocation_ms = step.lap();
  scan.pack();
  finish_scan(scan, result, step, [&] { scan.write_labels(labels, statistics); });
  result.timings.total_ms = whole_call.lap();
  return result;
}

}  // namespace volccl::detail::rts
