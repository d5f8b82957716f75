// How the GPU gathers component moments without serializing on atomics: the lanes of a warp that
// hold moments of the same label reduce them with warp intrinsics (__match_any_sync, then
// __reduce_*_sync on that group), the group's leader adds the result to its thread block's
// table in shared memory, and at the end the thread block adds each label it holds to the global
// table with one atomic per moment (or, for a label that lies wholly in the thread block's
// region, plain stores). The 64-bit sums make the order irrelevant.
//
// Late and Fused sum coordinates relative to the thread block's origin, so that within a block
// every sum fits 32 bits: one __reduce_add_sync per moment, and 32-bit shared atomics; the
// origin is added back, exactly, when a row goes to the global table (to_absolute). Shared
// 64-bit sums are kept as two 32-bit words with the carry propagated (add_shared), since a
// 64-bit atomicAdd on shared memory is a compare-and-swap loop. Internal; included only by .cu
// files.
#pragma once

#include <cuda/atomic>

#include <cstddef>
#include <cstdint>

#include "runtime/cuda_support.cuh"
#include "runtime/moments.h"
#include "volccl/cuda.h"
#include "volccl/statistics.h"

namespace volccl::detail {

constexpr unsigned kFullWarp = 0xFFFFFFFFu;

// The thread's rank in its thread block and the block's size, for blocks of any shape (the
// block labelers launch 32 x 4).
__device__ __forceinline__ unsigned thread_rank() {
  return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}

__device__ __forceinline__ unsigned block_size() { return blockDim.x * blockDim.y * blockDim.z; }

// A row of the table as its 16-byte parts in ComponentMoments' layout, padding (zero) included.
// Stores of whole parts fill whole 32-byte sectors; field-by-field stores leave a row's last
// sector partly written, and ran far below the memory's bandwidth (bench/notes/2d.md).
constexpr unsigned kRowParts = 8;
__device__ __forceinline__ void row_parts(const Moments& m, uint4* parts) {
  static_assert(sizeof(ComponentMoments) == 16 * kRowParts &&
                    offsetof(ComponentMoments, sum) == 8 &&
                    offsetof(ComponentMoments, sum_products) == 32 &&
                    offsetof(ComponentMoments, min) == 80 && offsetof(ComponentMoments, max) == 92,
                "the 16-byte parts below follow ComponentMoments' layout");
  const auto pair = [](std::uint64_t a, std::uint64_t b) {
    return make_uint4(static_cast<std::uint32_t>(a), static_cast<std::uint32_t>(a >> 32),
                      static_cast<std::uint32_t>(b), static_cast<std::uint32_t>(b >> 32));
  };
  parts[0] = pair(m.count, m.sum[0]);
  parts[1] = pair(m.sum[1], m.sum[2]);
  for (int p = 0; p < 3; ++p) parts[2 + p] = pair(m.sum_products[2 * p], m.sum_products[2 * p + 1]);
  parts[5] = make_uint4(m.min[0], m.min[1], m.min[2], m.max[0]);
  parts[6] = make_uint4(m.max[1], m.max[2], 0, 0);
  parts[7] = make_uint4(0, 0, 0, 0);
}

// Part `part` of a row of no voxels (no_moments()), picked without indexing the array by a
// variable, which would put it in local memory; the compiler folds the constants.
__device__ __forceinline__ uint4 row_parts_of_empty_row(unsigned part) {
  uint4 parts[kRowParts];
  row_parts(no_moments(), parts);
  uint4 picked = parts[0];
#pragma unroll
  for (unsigned p = 1; p < kRowParts; ++p) picked = part == p ? parts[p] : picked;
  return picked;
}

// A complete row that no other thread adds to.
__device__ __forceinline__ void store_row(ComponentMoments* row, const Moments& m) {
  uint4 parts[kRowParts];
  row_parts(m, parts);
  for (unsigned p = 0; p < kRowParts; ++p) reinterpret_cast<uint4*>(row)[p] = parts[p];
}

// Shared memory in which a warp stages kRows of its rows: a padding part per row, so that the
// lanes' stores of their own rows meet no bank conflicts.
template <unsigned kRows>
using RowStaging = uint4[kRows][kRowParts + 1];

// A warp's 32 rows (`m` for row `row` where `has`), stored together: through `staging`, kRows
// at a time, so that each store of the warp writes four whole rows, 512 contiguous bytes where
// the rows are consecutive, and every 32-byte sector whole. A lane storing its own row writes 16
// of a sector's 32 bytes a store: strided field-by-field stores ran far below the memory's
// bandwidth (bench/notes/2d.md), and slowed the forest's roots as well
// (bench/notes/statistics.md). Every lane of the warp takes part.
template <unsigned kRows>
__device__ __forceinline__ void store_rows_of_warp(ComponentMoments* rows, bool has,
                                                   std::uint32_t row, const Moments& m,
                                                   RowStaging<kRows>& staging) {
  constexpr unsigned kPerStore = 32 / kRowParts;  // rows per store of the warp: 512 bytes
  static_assert(32 % kRows == 0 && kRows % kPerStore == 0, "whole stores of whole rows");
  const unsigned lane = thread_rank() & 31;
  for (unsigned first = 0; first < 32; first += kRows) {
    if (lane - first < kRows) row_parts(m, staging[lane - first]);
    __syncwarp();
    for (unsigned k = 0; k < kRows / kPerStore; ++k) {
      const unsigned staged = kPerStore * k + lane / kRowParts, part = lane % kRowParts;
      const std::uint32_t target = __shfl_sync(kFullWarp, row, first + staged);
      if (__shfl_sync(kFullWarp, has ? 1 : 0, first + staged) != 0) {
        reinterpret_cast<uint4*>(rows + target)[part] = staging[staged][part];
      }
    }
    __syncwarp();
  }
}

// Where a thread block's rows go: `add` takes a piece of a row that other pieces may join; a row
// that no other piece joins (a component wholly inside the thread block's region) is stored into
// `rows` directly. AtomicRows: the table was cleared, and every piece is added by atomics.
struct AtomicRows {
  ComponentMoments* rows;

  __device__ void add(std::uint32_t label, const Moments& absolute) const {
    add_atomically(rows[label - 1], absolute);
  }
};

// ClaimedRows: the table is left unwritten and nothing clears it. A label's first piece to
// arrive claims the row and stores itself as the row; the pieces after it wait for that store,
// then add by atomics. The wait is short and cannot deadlock: between its claim and its release
// the claiming thread only stores. Every row must have a piece. The release and the acquire
// order the row's stores before the other pieces' atomics; a __threadfence on both sides did as
// well, and stalled the flush longer.
struct ClaimedRows {
  ComponentMoments* rows;
  std::uint32_t* claims;  // a word a row, zero before the pass

  static constexpr std::uint32_t kStoring = 1, kStored = 2;

  __device__ void add(std::uint32_t label, const Moments& absolute) const {
    ComponentMoments& row = rows[label - 1];
    ::cuda::atomic_ref<std::uint32_t, ::cuda::thread_scope_device> claim(claims[label - 1]);
    std::uint32_t expected = 0;
    if (claim.compare_exchange_strong(expected, kStoring, ::cuda::memory_order_relaxed)) {
      store_row(&row, absolute);
      claim.store(kStored, ::cuda::memory_order_release);
      return;
    }
    while (claim.load(::cuda::memory_order_acquire) != kStored) {
    }
    add_atomically(row, absolute);
  }
};

// The global table of a pass over `regions` thread blocks' regions whose labels are connected
// components, `count` of them: with more components than regions, rows left unwritten and
// claimed by their first piece (ClaimedRows); otherwise cleared first, the claims' round trip at
// the end of every region costing more than the clearing of a few thousand rows.
// moments_late.cu.
struct ComponentTable {
  cuda::DeviceMoments rows;
  DeviceBuffer<std::uint32_t> claims;  // a word a row, zeroed; empty unless claimed
  bool claimed() const { return claims.size() != 0; }
};
ComponentTable component_table(std::uint32_t count, std::uint64_t regions, cudaStream_t stream);

// Moments relative to `origin` (moments.h) from absolute ones (or the reverse with to_absolute):
// with s = sum of x, sum (x - o)^2 = sum x^2 - 2 o s + n o^2, and so on; the unsigned arithmetic
// wraps modulo 2^64, so the results are exact whenever the true values fit.
__device__ __forceinline__ Moments shifted(const Moments& m, const Origin& origin, bool forward) {
  const std::uint64_t o[3] = {forward ? 0 - origin.x : origin.x, forward ? 0 - origin.y : origin.y,
                              forward ? 0 - origin.z : origin.z};
  const int first[6] = {0, 1, 2, 0, 0, 1}, second[6] = {0, 1, 2, 1, 2, 2};
  Moments r = m;
  for (int p = 0; p < 6; ++p) {
    const int a = first[p], b = second[p];
    r.sum_products[p] =
        m.sum_products[p] + o[a] * m.sum[b] + o[b] * m.sum[a] + m.count * o[a] * o[b];
  }
  for (int a = 0; a < 3; ++a) {
    r.sum[a] = m.sum[a] + m.count * o[a];
    r.min[a] = static_cast<std::uint32_t>(m.min[a] + o[a]);
    r.max[a] = static_cast<std::uint32_t>(m.max[a] + o[a]);
  }
  return r;
}

__device__ __forceinline__ Moments to_relative(const Moments& m, const Origin& origin) {
  return shifted(m, origin, true);
}

__device__ __forceinline__ Moments to_absolute(const Moments& m, const Origin& origin) {
  return shifted(m, origin, false);
}

// Sum of a 64-bit value over the lanes of `group`: __reduce_add_sync takes 32 bits, so the value
// goes as three limbs of at most 22 bits, whose sums over 32 lanes cannot overflow. With
// kSmall, the caller promises sums below 2^32 (relative moments) and one reduction does.
template <bool kSmall>
__device__ __forceinline__ std::uint64_t group_sum(unsigned group, std::uint64_t value) {
  if (kSmall) return __reduce_add_sync(group, static_cast<std::uint32_t>(value));
  const std::uint32_t low = __reduce_add_sync(group, static_cast<std::uint32_t>(value & 0x3FFFFF));
  const std::uint32_t middle =
      __reduce_add_sync(group, static_cast<std::uint32_t>((value >> 22) & 0x1FFFFF));
  const std::uint32_t high = __reduce_add_sync(group, static_cast<std::uint32_t>(value >> 43));
  return low + (std::uint64_t{middle} << 22) + (std::uint64_t{high} << 43);
}

// Whether the lanes of a __match_any_sync group are more than one.
__device__ __forceinline__ bool shares_label(unsigned group) { return (group & (group - 1)) != 0; }

// Called by all 32 lanes, converged. Lanes with `has` set reduce `m` with the other lanes of the
// same label; returns true on each group's lowest lane, whose `m` then holds the group's sum.
// A __reduce_*_sync over a partial mask loops over the distinct masks of the lanes that call it,
// so lanes without moments, or alone with their label, keep out of it.
template <bool kSmall>
__device__ __forceinline__ bool reduce_by_label(bool has, std::uint32_t label, Moments& m) {
  const unsigned group = __match_any_sync(kFullWarp, has ? label : 0u);
  if (has && shares_label(group)) {
    m.count = group_sum<kSmall>(group, m.count);
    for (int a = 0; a < 3; ++a) m.sum[a] = group_sum<kSmall>(group, m.sum[a]);
    for (int p = 0; p < 6; ++p) m.sum_products[p] = group_sum<kSmall>(group, m.sum_products[p]);
    for (int a = 0; a < 3; ++a) {
      m.min[a] = __reduce_min_sync(group, m.min[a]);
      m.max[a] = __reduce_max_sync(group, m.max[a]);
    }
  }
  const unsigned lane = thread_rank() & 31;
  return has && lane == static_cast<unsigned>(__ffs(static_cast<int>(group)) - 1);
}

// Adds to a 64-bit sum held as two 32-bit words in shared memory: the low word's old value
// tells whether the addition carried into the high word.
__device__ __forceinline__ void add_shared(std::uint32_t* low, std::uint32_t* high,
                                           std::uint64_t value) {
  const auto low_part = static_cast<std::uint32_t>(value);
  const std::uint32_t old = low_part != 0 ? atomicAdd(low, low_part) : 0;
  const std::uint32_t high_part =
      static_cast<std::uint32_t>(value >> 32) + (old + low_part < old ? 1u : 0u);
  if (high_part != 0) atomicAdd(high, high_part);
}

// The high words of a table's 64-bit sums; none where every sum fits 32 bits.
template <int kSlots, bool kNarrow>
struct HighWords {
  std::uint32_t high[9][kSlots];
};

template <int kSlots>
struct HighWords<kSlots, true> {};

// The box of voxels a thread block measures, [begin, end) per axis, and the volume's extent.
// A component with voxels both inside and outside the box has, inside, a voxel next to one
// outside: on a face of the box that another box shares. So a label whose bounding box within
// the box keeps off every such face lies wholly inside, and its row is complete.
// Passed by value: behind a pointer it lives in local memory, and the flush's loads of it
// stalled. `components`: false where a label may lie in pieces (any label image), so that no
// row is known whole.
struct RegionBox {
  std::uint32_t begin[3], end[3], extent[3];
  bool components;

  // The region of `size` voxels from `origin`, cut at the volume's far faces.
  __device__ static RegionBox clipped(const Origin& origin, std::uint32_t size_x,
                                      std::uint32_t size_y, std::uint32_t size_z, std::uint32_t nx,
                                      std::uint32_t ny, std::uint32_t nz, bool components) {
    const auto x = static_cast<std::uint32_t>(origin.x), y = static_cast<std::uint32_t>(origin.y),
               z = static_cast<std::uint32_t>(origin.z);
    return {{x, y, z},
            {min(x + size_x, nx), min(y + size_y, ny), min(z + size_z, nz)},
            {nx, ny, nz},
            components};
  }

  __device__ bool holds_whole(const Moments& absolute) const {
    if (!components) return false;
    for (int a = 0; a < 3; ++a) {
      if (begin[a] > 0 && absolute.min[a] == begin[a]) return false;
      if (end[a] < extent[a] && absolute.max[a] + 1 == end[a]) return false;
    }
    return true;
  }
};

// The table's keys are labels (KeysAreLabels), or keys that a functor turns into labels when a
// row goes to the global table: RUF's pass keys its table by root run and ranks only the roots
// that reach the flush (kernels3d/ruf_statistics_3d.cu).
struct KeysAreLabels {
  __device__ std::uint32_t operator()(std::uint32_t key) const { return key; }
};

// A thread block's moments by key, in shared memory: open addressing with linear probing
// on the key's Fibonacci hash. A key that finds no free slot within kProbes goes straight to
// the global table. kSlots is a power of two, about twice the labels a thread block expects.
// The sums are relative to the thread block's origin; kNarrow: every sum over the thread block
// fits 32 bits, so one plain 32-bit atomic each and no high words.
template <int kSlots, bool kNarrow = false>
struct SharedMoments : HighWords<kSlots, kNarrow> {
  static constexpr int kProbes = 16;
  static_assert((kSlots & (kSlots - 1)) == 0, "kSlots must be a power of two");

  std::uint32_t keys[kSlots];    // 0: free
  std::uint32_t count[kSlots];   // a thread block holds fewer than 2^32 voxels
  std::uint32_t low[9][kSlots];  // sums of x, y, z, then xx, yy, zz, xy, xz, yz: low words
  std::uint32_t min[3][kSlots];
  std::uint32_t max[3][kSlots];

  // By every thread of the block; __syncthreads() follows.
  __device__ void clear() {
    for (unsigned s = thread_rank(); s < kSlots; s += block_size()) {
      keys[s] = 0;
      count[s] = 0;
      for (int f = 0; f < 9; ++f) low[f][s] = 0;
      if constexpr (!kNarrow) {
        for (int f = 0; f < 9; ++f) this->high[f][s] = 0;
      }
      for (int a = 0; a < 3; ++a) {
        min[a][s] = 0xFFFFFFFFu;
        max[a][s] = 0;
      }
    }
  }

  __device__ static std::uint32_t home(std::uint32_t key) {
    int log2_slots = 0;
    while ((1 << log2_slots) < kSlots) ++log2_slots;
    return (key * 2654435769u) >> (32 - log2_slots);
  }

  // `m` relative to `origin`; `key` is not 0.
  template <class Rows, class Labels = KeysAreLabels>
  __device__ void add(std::uint32_t key, const Moments& m, const Origin& origin, const Rows& global,
                      const Labels& label_of = {}) {
    std::uint32_t s = home(key);
    for (int probe = 0; probe < kProbes; ++probe) {
      const std::uint32_t held = atomicCAS(&keys[s], 0u, key);
      if (held == 0 || held == key) {
        atomicAdd(&count[s], static_cast<std::uint32_t>(m.count));
        for (int f = 0; f < 9; ++f) add_sum(f, s, f < 3 ? m.sum[f] : m.sum_products[f - 3]);
        for (int a = 0; a < 3; ++a) {
          atomicMin(&min[a][s], m.min[a]);
          atomicMax(&max[a][s], m.max[a]);
        }
        return;
      }
      s = (s + 1) & (kSlots - 1);
    }
    global.add(label_of(key), to_absolute(m, origin));
  }

  __device__ void add_sum(int field, std::uint32_t s, std::uint64_t value) {
    if constexpr (kNarrow) {
      atomicAdd(&low[field][s], static_cast<std::uint32_t>(value));
    } else {
      add_shared(&low[field][s], &this->high[field][s], value);
    }
  }

  // By every thread of the block after a __syncthreads(). `box`: the region whose every voxel was
  // added; the rows of labels that lie wholly in it are stored without atomics.
  template <class Rows, class Labels = KeysAreLabels>
  __device__ void flush(const Rows& global, const Origin& origin, const RegionBox& box,
                        const Labels& label_of = {}) const {
    for (unsigned s = thread_rank(); s < kSlots; s += block_size()) {
      if (keys[s] == 0) continue;
      Moments m;
      m.count = count[s];
      for (int f = 0; f < 9; ++f) {
        std::uint64_t value = low[f][s];
        if constexpr (!kNarrow) value |= std::uint64_t{this->high[f][s]} << 32;
        if (f < 3) {
          m.sum[f] = value;
        } else {
          m.sum_products[f - 3] = value;
        }
      }
      for (int a = 0; a < 3; ++a) {
        m.min[a] = min[a][s];
        m.max[a] = max[a][s];
      }
      const Moments absolute = to_absolute(m, origin);
      const std::uint32_t row_label = label_of(keys[s]);
      if (box.holds_whole(absolute)) {
        store_row(global.rows + row_label - 1, absolute);
      } else {
        global.add(row_label, absolute);
      }
    }
  }
};

// The thread block's part of a kernel in which every thread holds the moments of at most one
// label (label 0: none), relative to `origin`, as the fused final labeling's blocks do; all
// threads call it, after shared.clear() and a __syncthreads(). kSmall: the relative sums of the
// whole thread block fit 32 bits.
template <bool kSmall, int kSlots>
__device__ void gather_one_label_per_thread(SharedMoments<kSlots>& shared, std::uint32_t label,
                                            Moments m, const Origin& origin,
                                            ComponentMoments* table) {
  const AtomicRows rows{table};
  if (reduce_by_label<kSmall>(label != 0, label, m)) shared.add(label, m, origin, rows);
  __syncthreads();
  shared.flush(rows, origin, RegionBox{});
}

}  // namespace volccl::detail
