// Row logic of RUF, the 3D union-find over runs for 6-, 18- and 26-connectivity, written once for
// the CUDA kernels (ruf_3d.cu) and the CPU backend (ruf_3d_cpu.cpp).
//
// Why runs: HA4 (HA4 paper Sec. IV-A, IV-B) makes the nodes of its union-find the segments
// (runs) of a row, found from a bitmask of the row's pixels, and unites only the starts of
// segments. UFB's nodes are x-pairs of voxels (ufb_logic_3d.h), one slot per pair whether
// foreground or not: 256 MB written, read back and walked at 512^3, in memory-bound passes
// before any Union (bench/notes/union-find-3d.md). RUF keeps a row as 32-voxel
// words of foreground bits and numbers the row's runs from those bits; the union-find slots are
// the runs', so a volume of coarse objects has a few slots per row (a random 512^3 volume at
// granularity 8 has 3.5 M runs against UFB's 33.5 M pairs, 14 MB of parents that stay in L2).
//
// Keys: run k of row r = z ny + y has key r * run_capacity + k, run_capacity the most runs a row
// can hold ((nx + 1) / 2 in a mask, nx in a label map); keys follow the raster order of the runs'
// first voxels, no more than the voxels, so that Union (union_find.h: the larger root linked under
// the smaller) leaves the run of every component's first voxel as its root and a root bitmap over
// the keys ranks them (raster_rank.h) into the numbering of ITK and scipy.
//
// Steps: Initialization turns the mask into RowWords (the word's foreground bits and the runs
// that start before it in its row), and unites the runs within each tile of rows (RunTiling: on
// the GPU a thread block's rows, in shared memory), pointing every run at its tile's root. Merge,
// a thread per word of the rows that touch another tile's (MergeRows), makes the Unions between
// tiles. Both make the Unions of RunUnions: each run with the runs it touches in the rows before
// it, one Union per overlap of two runs under 6, also the corner contacts and the diagonal rows
// under 18 (and their corners under 26), less the overlaps that contacts made elsewhere already
// join. Compression points every run at its root and marks the roots; FinalLabeling labels each
// word's voxels from its runs' roots.
//
// Label maps: a run is a stretch of one value, so a row may hold a run per voxel, and two runs
// touch only where their voxels have equal values. A first pass records, per word, where its runs
// begin and which voxels share the value of each lower neighbour (JoinWords), read from the values
// once; the steps then read those bits where a mask's read its foreground (LabelMapRuns, and
// RunUnions with kLabelMap), so the skips and the corners keep their reasoning.
//
// Why `auto` takes RUF for masks at 6 only, UFB at 18 and BUF at 26, where a 2x2x2 block is one
// node (bench/RESULTS.md, bench/notes/union-find-3d.md): at 6 RUF is faster than UFB on the
// random and the real volumes, the tiles helping most at granularity 1. At 18 RUF wins at
// granularity 8 and on the real volumes, but at granularity 1 a warp's lanes wait for the one
// with the most Unions and RUF falls well behind UFB (whose 2x2x1 blocks take the rows' contacts
// in). Label maps take RUF at all three on the GPU, where it is faster than UF
// (bench/notes/label-maps.md).
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "runtime/host_device.h"
#include "runtime/raster_rank.h"
#include "runtime/union_find.h"
#include "runtime/voxel_input.h"
#include "volccl/types.h"

namespace volccl::kernels3d {

using detail::lowest_bit;
using detail::popcount;

constexpr std::uint32_t kWordVoxels = 32;

// Calls run(std::integral_constant<int, C>{}) with the connectivity C (6, 18 or 26), so that
// the backends' steps are instantiated per connectivity.
template <class Run>
decltype(auto) with_connectivity(int connectivity, const Run& run) {
  switch (connectivity) {
    case 6:
      return run(std::integral_constant<int, 6>{});
    case 18:
      return run(std::integral_constant<int, 18>{});
    default:
      return run(std::integral_constant<int, 26>{});
  }
}

struct RunGrid {
  std::uint32_t nx = 1, ny = 1, nz = 1;
  std::uint32_t words_x = 1;       // 32-voxel words in a row
  std::uint32_t run_capacity = 1;  // the most runs a row can hold
  std::uint32_t rows = 1;          // ny * nz
};

// A mask's row holds at most (nx + 1) / 2 runs; a label map's, whose runs of one value may touch,
// one a voxel (`values_split_runs`).
inline RunGrid make_run_grid(Extent3 extent, bool values_split_runs = false) {
  RunGrid grid;
  grid.nx = static_cast<std::uint32_t>(extent.x);
  grid.ny = static_cast<std::uint32_t>(extent.y);
  grid.nz = static_cast<std::uint32_t>(extent.z);
  grid.words_x = (grid.nx + kWordVoxels - 1) / kWordVoxels;
  grid.run_capacity = values_split_runs ? grid.nx : (grid.nx + 1) / 2;
  grid.rows = grid.ny * grid.nz;
  return grid;
}

// Lanes per row in the GPU's Initialization: the row's words rounded up to a power of two, at
// most a warp (longer rows take several rounds); a block of kInitThreads holds kInitThreads /
// lanes rows.
constexpr std::uint32_t kWarpLanes = 32;
constexpr std::uint32_t kInitThreads = 512;

inline int log2_init_lanes(const RunGrid& grid) {
  int log2 = 0;
  while ((1u << log2) < grid.words_x && (1u << log2) < kWarpLanes) ++log2;
  return log2;
}

inline int ceil_log2(std::uint32_t value) {
  int log2 = 0;
  while ((std::uint64_t{1} << log2) < value) ++log2;
  return log2;
}

// Tiles of rows, 2^log2_y rows of 2^log2_z slices: Initialization unites the runs of a tile in the
// GPU block's shared memory, where a Union costs a few cycles instead of an L2 round trip, and
// Merge makes only the Unions between rows of different tiles (at 256^3 a tile of 8 x 8 rows
// holds 7/8 of the overlaps above and of those behind; blocks of 512 threads, whose tiles are
// twice those of 256, leave Merge fewer Unions: bench/notes/union-find-3d.md). A tile is a
// block's rows, kInitThreads / lanes (fewer on small volumes), most of them in y; within it a run's
// key is row_in_tile * 2^log2_capacity + its index in the row, ordered as the global keys, so that
// the tile's roots are the runs Union would leave. Rows of more than kWarpLanes words (nx > 1024)
// take one-row tiles: Merge makes every Union. A tile's slots: kInitThreads / lanes rows of at most
// 16 runs a lane (a mask's word holds 16 runs), or 32 in a label map.
constexpr std::uint32_t kTileSlots = kInitThreads * kWordVoxels / 2;
constexpr std::uint32_t kLabelMapTileSlots = kInitThreads * kWordVoxels;

struct RunTiling {
  int log2_y = 0, log2_z = 0;
  int log2_capacity = 0;  // a row's keys in the tile, run_capacity rounded up to a power of two
  std::uint32_t tiles_y = 1, tiles = 1;
  VOLCCL_HD bool in_shared_memory() const { return log2_y + log2_z > 0; }
};

// A block's rows, kInitThreads / lanes, as a power of two.
inline int block_log2_rows(const RunGrid& grid) {
  return ceil_log2(kInitThreads) - log2_init_lanes(grid);
}

// The GPU's tile rows, as a power of two: a block's, but fewer on a volume that would leave some
// of the device's `multiprocessors` without a tile, down to four rows. On a small volume the
// Unions of a few large tiles wait for one another, and Merge's Unions between more tiles cost
// less than those waits (bench/notes/label-maps.md).
inline int tile_log2_rows(const RunGrid& grid, std::uint32_t multiprocessors) {
  int log2_rows = block_log2_rows(grid);
  while (log2_rows > 2 && (std::uint64_t{grid.rows} >> log2_rows) < multiprocessors) --log2_rows;
  return log2_rows;
}

// Tiles of at most 2^log2_rows rows, at most a block's (block_log2_rows).
inline RunTiling make_run_tiling(const RunGrid& grid, int log2_rows) {
  RunTiling tiling;
  tiling.log2_capacity = ceil_log2(grid.run_capacity);
  if (grid.words_x <= kWarpLanes) {
    tiling.log2_z = log2_rows / 2 < ceil_log2(grid.nz) ? log2_rows / 2 : ceil_log2(grid.nz);
    log2_rows -= tiling.log2_z;
    tiling.log2_y = log2_rows < ceil_log2(grid.ny) ? log2_rows : ceil_log2(grid.ny);
  }
  tiling.tiles_y = (grid.ny + (1u << tiling.log2_y) - 1) >> tiling.log2_y;
  tiling.tiles = tiling.tiles_y * ((grid.nz + (1u << tiling.log2_z) - 1) >> tiling.log2_z);
  return tiling;
}

inline RunTiling make_run_tiling(const RunGrid& grid) {
  return make_run_tiling(grid, block_log2_rows(grid));
}

// The rows before (y, z) whose runs a run of (y, z) can touch, as bits: above (y-1, z), behind
// (y, z-1) and, under 18 and 26, above behind (y-1, z-1) and below behind (y+1, z-1).
constexpr std::uint32_t kRowAbove = 1, kRowBehind = 2, kRowAboveBehind = 4, kRowBelowBehind = 8;

VOLCCL_HD std::uint32_t rows_before(const RunGrid& grid, std::uint32_t y, std::uint32_t z) {
  std::uint32_t rows = y > 0 ? kRowAbove : 0u;
  if (z > 0) {
    rows |= kRowBehind | (y > 0 ? kRowAboveBehind : 0u) | (y + 1 < grid.ny ? kRowBelowBehind : 0u);
  }
  return rows;
}

// Those of them in the tile of (y, z).
VOLCCL_HD std::uint32_t rows_before_in_tile(const RunGrid& grid, const RunTiling& tiling,
                                            std::uint32_t y, std::uint32_t z) {
  const std::uint32_t tile_y = (1u << tiling.log2_y) - 1, tile_z = (1u << tiling.log2_z) - 1;
  const bool above = (y & tile_y) != 0, behind = (z & tile_z) != 0;
  const bool below = ((y + 1) & tile_y) != 0;
  return rows_before(grid, y, z) &
         ((above ? kRowAbove : 0u) | (behind ? kRowBehind : 0u) |
          (above && behind ? kRowAboveBehind : 0u) | (below && behind ? kRowBelowBehind : 0u));
}

// Slots of the parent array (one per possible run) and words of the row bitmaps.
inline std::uint64_t run_slot_count(const RunGrid& grid) {
  return std::uint64_t{grid.rows} * grid.run_capacity;
}
inline std::uint64_t row_word_count(const RunGrid& grid) {
  return std::uint64_t{grid.rows} * grid.words_x;
}

// A word of a row as Initialization leaves it. Eight bytes, so that the GPU loads it at once,
// and with the last voxel of the word before it, so that the steps read one word, not two.
struct alignas(8) RowWord {
  std::uint32_t foreground;  // bit i: voxel 32 w + i of the row
  std::uint32_t before;      // bits 0-30: the row's runs that start in earlier words; bit 31: the
                             // voxel before the word is foreground (a row has < 2^31 runs)
};

constexpr std::uint32_t kBeforeIsForeground = 0x80000000u;

VOLCCL_HD RowWord make_row_word(std::uint32_t foreground, std::uint32_t runs_before, bool before) {
  return {foreground, runs_before | (before ? kBeforeIsForeground : 0u)};
}

// A label map's runs end where the value changes, and two voxels touch only where their values
// are equal, so its words say more than the foreground: where runs begin and, for each of these
// neighbours in the rows before, which voxels have its value. Under 6 the first two, under 18 the
// first eight, under 26 all twelve (a voxel's lower neighbours other than the one on its left).
enum JoinKind : int {
  kJoinAbove,             // (0, -1, 0)
  kJoinBehind,            // (0, 0, -1)
  kJoinAboveBehind,       // (0, -1, -1)
  kJoinBelowBehind,       // (0, 1, -1)
  kJoinAboveLeft,         // (-1, -1, 0)
  kJoinAboveRight,        // (1, -1, 0)
  kJoinBehindLeft,        // (-1, 0, -1)
  kJoinBehindRight,       // (1, 0, -1)
  kJoinAboveBehindLeft,   // (-1, -1, -1)
  kJoinAboveBehindRight,  // (1, -1, -1)
  kJoinBelowBehindLeft,   // (-1, 1, -1)
  kJoinBelowBehindRight,  // (1, 1, -1)
};
constexpr int kJoinKindCount = 12;
// A row before a row is both a join kind's and a bit of rows_before, in the same order.
static_assert(kRowAbove == 1u << kJoinAbove && kRowBehind == 1u << kJoinBehind &&
                  kRowAboveBehind == 1u << kJoinAboveBehind &&
                  kRowBelowBehind == 1u << kJoinBelowBehind,
              "rows_before's bits follow the join kinds of the overlaps");
constexpr int kOverlapKinds = 4;  // the kinds of dx = 0: contacts of a run with runs it overlaps

VOLCCL_HD constexpr int join_kinds(int connectivity) {
  return connectivity == 6 ? 2 : (connectivity == 18 ? 8 : 12);
}

// The row of a kind: 0 above, 1 behind, 2 above behind, 3 below behind.
VOLCCL_HD constexpr int join_row(int kind) {
  return kind < kOverlapKinds ? kind : (kind - kOverlapKinds) / 2;
}
VOLCCL_HD constexpr int join_dx(int kind) {
  return kind < kOverlapKinds ? 0 : (kind % 2 == 0 ? -1 : 1);
}
VOLCCL_HD constexpr int join_dy(int kind) {
  return join_row(kind) == 0 || join_row(kind) == 2 ? -1 : (join_row(kind) == 3 ? 1 : 0);
}
VOLCCL_HD constexpr int join_dz(int kind) { return join_row(kind) == 0 ? 0 : -1; }

template <int Connectivity>
struct JoinWords {
  std::uint32_t bits[join_kinds(Connectivity)];  // bit q of kind k: voxel q joins that neighbour
  std::uint32_t carry;  // bit k < kOverlapKinds: the voxel before the word joins its neighbour
};

// A voxel of a label map as its word records it: `joins` bit k, it has the value of its kind-k
// neighbour (JoinKind; the first kKinds), which is then foreground too.
struct LabelMapVoxelBits {
  bool foreground = false;
  bool starts = false;  // foreground, and the voxel on its left is not of its value
  std::uint32_t joins = 0;
};

// A run of a label map begins at a foreground voxel whose left neighbour has another value.
template <class T>
VOLCCL_HD bool label_map_starts(T value, T left, T background) {
  return value != background && left != value;
}

// A foreground voxel of a label map joins a neighbour of its own value.
template <class T>
VOLCCL_HD bool label_map_joins(T value, T neighbour, T background) {
  return value != background && neighbour == value;
}

template <int kKinds, class T>
VOLCCL_HD LabelMapVoxelBits label_map_voxel(const detail::LabelMapVoxels<T>& voxels,
                                            const RunGrid& grid, std::uint32_t x, std::uint32_t y,
                                            std::uint32_t z) {
  const std::uint64_t index = (std::uint64_t{z} * grid.ny + y) * grid.nx + x;
  const std::int64_t row = grid.nx, slice = std::int64_t{grid.nx} * grid.ny;
  // Every value is loaded before any is compared, so that the loads overlap.
  const T value = voxels.values[index];
  const T left = x > 0 ? voxels.values[index - 1] : voxels.background;
  T neighbours[kKinds];
  VOLCCL_UNROLL
  for (int kind = 0; kind < kKinds; ++kind) {
    const int dx = join_dx(kind), dy = join_dy(kind), dz = join_dz(kind);
    const bool inside = !(dx < 0 && x == 0) && !(dx > 0 && x + 1 >= grid.nx) &&
                        !(dy < 0 && y == 0) && !(dy > 0 && y + 1 >= grid.ny) && !(dz < 0 && z == 0);
    neighbours[kind] =
        inside ? voxels.values[index + static_cast<std::uint64_t>(dx + dy * row + dz * slice)]
               : voxels.background;
  }
  LabelMapVoxelBits bits;
  bits.foreground = value != voxels.background;
  bits.starts = label_map_starts(value, left, voxels.background);
  VOLCCL_UNROLL
  for (int kind = 0; kind < kKinds; ++kind) {
    if (label_map_joins(value, neighbours[kind], voxels.background)) bits.joins |= 1u << kind;
  }
  return bits;
}

// The kinds whose joins a word carries from the voxel before it (JoinWords::carry).
VOLCCL_HD constexpr int carried_kinds(int connectivity) {
  return join_kinds(connectivity) < kOverlapKinds ? join_kinds(connectivity) : kOverlapKinds;
}

// Word w of row (y, z) of a label map: its foreground, where its runs begin and its joins.
template <int Connectivity>
struct LabelMapWord {
  std::uint32_t foreground = 0, starts = 0;
  JoinWords<Connectivity> joins = {};
};

template <int Connectivity, class T>
VOLCCL_HD LabelMapWord<Connectivity> label_map_word(const detail::LabelMapVoxels<T>& voxels,
                                                    const RunGrid& grid, std::uint32_t y,
                                                    std::uint32_t z, std::uint32_t w) {
  constexpr int kKinds = join_kinds(Connectivity);
  LabelMapWord<Connectivity> word;
  const std::uint32_t x0 = w * kWordVoxels;
  for (std::uint32_t q = 0; q < kWordVoxels && x0 + q < grid.nx; ++q) {
    const LabelMapVoxelBits bits = label_map_voxel<kKinds>(voxels, grid, x0 + q, y, z);
    word.foreground |= std::uint32_t{bits.foreground} << q;
    word.starts |= std::uint32_t{bits.starts} << q;
    for (int kind = 0; kind < kKinds; ++kind) {
      word.joins.bits[kind] |= ((bits.joins >> kind) & 1u) << q;
    }
  }
  if (x0 > 0) {
    word.joins.carry =
        label_map_voxel<carried_kinds(Connectivity)>(voxels, grid, x0 - 1, y, z).joins;
  }
  return word;
}

struct RunForest {
  std::uint32_t* parents;
  VOLCCL_HD std::uint32_t* slot(std::uint32_t key) const { return parents + key; }
};

// A tile's forest, in the GPU block's shared memory. There its Unions write the slots by
// atomicMin alone: Find does not halve paths, whose plain stores would race with the other lanes'
// loads (racecheck reports them; without them the tile's Unions were no slower). The CPU
// backend's worker unites a tile alone and halves them. union_find.h reaches
// these by argument-dependent lookup.
struct TileSlot {
  std::uint32_t* address;
};

VOLCCL_HD std::uint32_t load_relaxed(TileSlot slot) { return detail::load_relaxed(slot.address); }

VOLCCL_HD void store_relaxed(TileSlot slot, std::uint32_t value) {
#if defined(__CUDA_ARCH__)
  (void)slot;
  (void)value;
#else
  detail::store_relaxed(slot.address, value);
#endif
}

VOLCCL_HD std::uint32_t atomic_min(TileSlot slot, std::uint32_t value) {
#if defined(__CUDA_ARCH__)
  return atomicMin_block(slot.address, value);
#else
  return detail::atomic_min(slot.address, value);
#endif
}

struct TileForest {
  std::uint32_t* parents;
  VOLCCL_HD TileSlot slot(std::uint32_t key) const { return {parents + key}; }
};

// Bits 0..q set (none for q < 0, all for q >= 31).
VOLCCL_HD std::uint32_t bits_through(int q) {
  if (q < 0) return 0;
  return q >= 31 ? 0xFFFFFFFFu : (2u << q) - 1u;
}

// Foreground voxels that begin a run: `before`, the voxel before the word is foreground.
VOLCCL_HD std::uint32_t run_starts(std::uint32_t foreground, bool before) {
  return foreground & ~((foreground << 1) | (before ? 1u : 0u));
}

// The foreground bits of word w of row `row` from the mask (bytes beyond nx are not read).
VOLCCL_HD std::uint32_t mask_word(const std::uint8_t* mask, const RunGrid& grid, std::uint32_t row,
                                  std::uint32_t w) {
  const std::uint8_t* bytes = mask + std::uint64_t{row} * grid.nx + std::uint64_t{w} * kWordVoxels;
  const std::uint32_t voxels =
      grid.nx - w * kWordVoxels < kWordVoxels ? grid.nx - w * kWordVoxels : kWordVoxels;
  std::uint32_t bits = 0;
  if (voxels == kWordVoxels) {
#if defined(__CUDA_ARCH__)
    // Two 16-byte loads where aligned: Initialization is bound by memory.
    if (reinterpret_cast<std::uintptr_t>(bytes) % 16 == 0) {
      // Evict-first: only this step reads the mask.
      const uint4 low = __ldcs(reinterpret_cast<const uint4*>(bytes));
      const uint4 high = __ldcs(reinterpret_cast<const uint4*>(bytes + 16));
      const std::uint32_t parts[8] = {low.x, low.y, low.z, low.w, high.x, high.y, high.z, high.w};
      VOLCCL_UNROLL
      for (int p = 0; p < 8; ++p) bits |= detail::nonzero_byte_bits(parts[p]) << (4 * p);
      return bits;
    }
#else
    VOLCCL_UNROLL
    for (int p = 0; p < 8; ++p) {
      std::uint32_t part;
      std::memcpy(&part, bytes + 4 * p, sizeof part);
      bits |= detail::nonzero_byte_bits(part) << (4 * p);
    }
    return bits;
#endif
  }
  for (std::uint32_t i = 0; i < voxels; ++i) bits |= (bytes[i] != 0 ? 1u : 0u) << i;
  return bits;
}

// Initialization of one word: every run that starts in it becomes its own root. `first_key`: the
// key of the word's first run to start.
VOLCCL_HD void make_runs_roots(std::uint32_t* parents, std::uint32_t first_key,
                               std::uint32_t starts) {
  const std::uint32_t runs = popcount(starts);
  for (std::uint32_t k = 0; k < runs; ++k) parents[first_key + k] = first_key + k;
}

// A word of a row with what its neighbours in the row tell about it. An absent row (beyond the
// volume) is an empty view.
struct WordView {
  std::uint32_t foreground = 0;
  std::uint32_t starts = 0;
  std::uint32_t first_key = 0;  // the key of the word's first run to start
  bool before = false;          // the voxel before the word is foreground
  bool after = false;           // the voxel after it (where the view was asked with_after)
  bool after_starts = false;    // that voxel begins a run of another value (label maps)

  // The key of the run holding voxel q of the word, foreground: q = -1 and q = 32 are the
  // neighbours' voxels.
  VOLCCL_HD std::uint32_t key_at(int q) const {
    if (q < 0) return first_key - 1;
    if (q >= static_cast<int>(kWordVoxels)) {
      const bool continues = ((foreground >> 31) & 1u) != 0 && !after_starts;
      return first_key + popcount(starts) - (continues ? 1u : 0u);
    }
    return first_key + popcount(starts & bits_through(q)) - 1;
  }
};

// The view of `word`, a word of the row whose first key is `row_key`, without its `after`.
VOLCCL_HD WordView make_view(std::uint32_t row_key, const RowWord& word) {
  WordView view;
  view.foreground = word.foreground;
  view.before = (word.before & kBeforeIsForeground) != 0;
  view.starts = run_starts(word.foreground, view.before);
  view.first_key = row_key + (word.before & ~kBeforeIsForeground);
  return view;
}

// How the steps read the rows' words. A mask's runs follow from its foreground bits.
struct MaskRuns {
  static constexpr bool kLabelMap = false;
  const RowWord* words;

  // The word at `word` (its row's first key `row_key`); `with_after`: also WordView::after
  // (the corners of 18 and 26 need it), unless it is its row's last.
  VOLCCL_HD WordView view(std::uint64_t word, std::uint32_t row_key, bool last_of_row,
                          bool with_after) const {
    WordView view = make_view(row_key, words[word]);
    view.after = with_after && !last_of_row && (words[word + 1].foreground & 1u) != 0;
    return view;
  }
  // A mask has no joins: its Unions follow from the foreground.
  VOLCCL_HD std::uint32_t join_bits(std::uint64_t, int) const { return 0; }
  VOLCCL_HD std::uint32_t join_carry(std::uint64_t) const { return 0; }
};

// A label map's: its runs' starts and, where the steps make Unions (LabelMapRuns), its joins.
struct LabelMapStarts {
  static constexpr bool kLabelMap = true;
  const RowWord* words;
  const std::uint32_t* starts;

  VOLCCL_HD WordView view(std::uint64_t word, std::uint32_t row_key, bool last_of_row,
                          bool with_after) const {
    WordView view = make_view(row_key, words[word]);
    view.starts = starts[word];
    if (with_after && !last_of_row) {
      view.after = (words[word + 1].foreground & 1u) != 0;
      view.after_starts = (starts[word + 1] & 1u) != 0;
    }
    return view;
  }
};

template <int Connectivity>
struct LabelMapRuns {
  static constexpr bool kLabelMap = true;
  const RowWord* words;
  const std::uint32_t* starts;
  const JoinWords<Connectivity>* joins;

  VOLCCL_HD WordView view(std::uint64_t word, std::uint32_t row_key, bool last_of_row,
                          bool with_after) const {
    return LabelMapStarts{words, starts}.view(word, row_key, last_of_row, with_after);
  }

  // The joins of kind `kind` of the word at `word`, an index into `joins`, which holds the whole
  // volume's (also where the views are a tile's), and its carry.
  VOLCCL_HD std::uint32_t join_bits(std::uint64_t word, int kind) const {
    return joins[word].bits[kind];
  }
  VOLCCL_HD std::uint32_t join_carry(std::uint64_t word) const { return joins[word].carry; }
};

// What Initialization reads of each word, its foreground and where its runs begin, and how the
// later steps read the words it leaves (`runs`, over the volume's words or a tile's). A mask's
// come from its bytes; the voxel before the word (`before`) tells where its first run begins.
struct MaskWordSource {
  using Runs = MaskRuns;
  static constexpr bool kLabelMap = false;
  const std::uint8_t* mask;
  VOLCCL_HD std::uint32_t foreground(const RunGrid& grid, std::uint32_t row,
                                     std::uint32_t w) const {
    return mask_word(mask, grid, row, w);
  }
  VOLCCL_HD std::uint32_t starts(std::uint32_t foreground, bool before, std::uint64_t) const {
    return run_starts(foreground, before);
  }
  VOLCCL_HD Runs runs(const RowWord* words, const std::uint32_t*) const { return {words}; }
};

// A label map's come from its words pass (label_map_word): the foreground in the words that
// Initialization then rewrites in place, the starts and the joins.
template <int Connectivity>
struct LabelMapWordSource {
  using Runs = LabelMapRuns<Connectivity>;
  static constexpr bool kLabelMap = true;
  const RowWord* made;
  const std::uint32_t* run_starts;
  const JoinWords<Connectivity>* joins;
  VOLCCL_HD std::uint32_t foreground(const RunGrid& grid, std::uint32_t row,
                                     std::uint32_t w) const {
    return made[std::uint64_t{row} * grid.words_x + w].foreground;
  }
  VOLCCL_HD std::uint32_t starts(std::uint32_t, bool, std::uint64_t word) const {
    return run_starts[word];
  }
  VOLCCL_HD Runs runs(const RowWord* words, const std::uint32_t* starts_of) const {
    return {words, starts_of, joins};
  }
};

// Word w of row `row` of the volume, with the row's global keys.
template <class Runs>
VOLCCL_HD WordView view_word(const Runs& runs, const RunGrid& grid, std::uint32_t row,
                             std::uint32_t w, bool with_after = false) {
  return runs.view(std::uint64_t{row} * grid.words_x + w, row * grid.run_capacity,
                   w + 1 == grid.words_x, with_after);
}

// Word w of a row's rows before it (rows_before), read as its Unions need them: a label map's
// Unions wait on memory, and a word's views and joins all held at once take registers that more
// resident warps would use. A row outside `readable` is an empty view.
template <class Runs>
struct RowsBefore {
  Runs runs;                       // the rows' words: a tile's, or the volume's
  std::uint32_t readable = 0;      // rows_before's bits
  std::uint32_t row = 0;           // the word's row among `runs`' rows
  std::uint32_t rows_behind = 0;   // from a row to the row behind it, among them
  std::uint32_t run_capacity = 0;  // keys of a row, among them
  std::uint32_t words_x = 0, w = 0;
  std::uint64_t join_word = 0;  // the word's index among the volume's joins (label maps)

  VOLCCL_HD WordView view_of(std::uint32_t r, bool with_after) const {
    return runs.view(std::uint64_t{r} * words_x + w, r * run_capacity, w + 1 == words_x,
                     with_after);
  }
  VOLCCL_HD WordView own(bool with_after) const { return view_of(row, with_after); }
  // `which`: one of rows_before's bits.
  VOLCCL_HD WordView view(std::uint32_t which, bool with_after) const {
    if ((readable & which) == 0) return {};
    const std::uint32_t behind = which == kRowAbove ? row - 1 : row - rows_behind;
    return view_of(
        which == kRowAboveBehind ? behind - 1 : (which == kRowBelowBehind ? behind + 1 : behind),
        with_after);
  }
  VOLCCL_HD std::uint32_t joins(int kind) const { return runs.join_bits(join_word, kind); }
  VOLCCL_HD std::uint32_t join_carry() const { return runs.join_carry(join_word); }
  // The row above's joins behind (read where the row above behind is).
  VOLCCL_HD std::uint32_t above_joins_behind() const {
    return (readable & kRowAboveBehind) != 0 ? runs.join_bits(join_word - words_x, kJoinBehind)
                                             : 0u;
  }
};

// A word's contacts: the rows whose contacts are Unions (none: 0), its view and its rows before.
template <class Runs>
struct WordContacts {
  std::uint32_t rows = 0;
  WordView own;
  RowsBefore<Runs> before;
};

// The Unions of the runs of a word (`own`) with the runs they touch in the rows before it
// that `rows` names (rows_before's bits), made one after the other by the calling thread: under
// 6 one Union per overlap of two runs (a maximal stretch of columns foreground in both rows,
// which belongs to exactly one run of each) with the rows above and behind; under 18 also the
// runs of those rows that touch only at a corner of the x-extent (x+-1), and the overlaps with
// the rows above behind and below behind. Skipped overlaps, each joined through contacts made
// for other overlaps (by induction on y: every overlap of a row with the row behind it ends up
// joined, made or skipped):
// - behind, where the first column q is foreground above and above behind: own ~ above (this
//   word's overlap above), above ~ above behind (the row above's overlap behind), above behind ~
//   behind (the row behind's overlap above);
// - above behind (18, 26), where q is foreground above: own ~ above ~ above behind;
// - below behind (18, 26), where q is foreground behind: own ~ behind ~ below behind (that row's
//   overlap above).
// Corner contacts are made with the rows above and behind under 18, with all four under 26.
// Which of Initialization (in a tile) and Merge (between tiles) makes an overlap's Union does not
// change whether it is made; a row that the caller may not read (RowsBefore::readable) is empty
// and skips nothing.
// `columns`: the word's columns whose Unions this call makes (those that begin a stretch).
// A Union call per kind of contact, inlined: one call site in a loop over the kinds, or the
// Unions of a warp shared out over its lanes, were slower on the GPU.
// In a label map (kLabelMap, the views with their joins) the columns in contact are those whose
// voxels have equal values, and a stretch of them is cut where a run of the rows begins; the
// skips read "of the voxel's value" for "foreground", and a corner contact is one of a run's ends
// with an end of a run of its value. Under 18 and 26 a label map's voxel of the value of the voxel
// behind it is settled: each of its earlier neighbours of its value (but, under 18, those at
// x - 1 and x + 1 above) neighbours the voxel behind, whose contact with it is made earlier (by
// induction on the voxels' raster order). So the overlaps behind are all made, and every other
// overlap or corner whose own column is settled is skipped, but the corners above under 18.
// Masks, and label maps under 6, keep the skips above (RUF takes masks by default at 6 only).
template <int Connectivity, class Forest, bool kLabelMap = false>
struct RunUnions {
  Forest forest;

  // One Union per overlap of a run of `own` with a run of `other` (the overlaps that begin in
  // this word), except where `skip` has the overlap's first column. `both`: the columns where the
  // two touch; `carried`: the column before the word too.
  VOLCCL_HD void unite_overlaps(const WordView& own, const WordView& other, std::uint32_t both,
                                bool carried, std::uint32_t skip, std::uint32_t columns) const {
    std::uint32_t first_columns = run_starts(both, carried);
    // Along a stretch the two rows hold equal values, so a run of one begins where one of the
    // other does.
    if (kLabelMap) first_columns |= both & own.starts;
    first_columns &= ~skip & columns;
    while (first_columns != 0) {
      const int q = lowest_bit(first_columns);
      first_columns &= first_columns - 1;
      detail::unite(forest, own.key_at(q), other.key_at(q));
    }
  }

  // Under 18 and 26, runs that touch without overlapping: one ends at column q, the other begins
  // at q + 1. In a label map, `joins_next` and `joins_previous`: own voxel q has the value of the
  // other's q + 1 and q - 1.
  VOLCCL_HD void unite_corners(const WordView& own, const WordView& other, std::uint32_t joins_next,
                               std::uint32_t joins_previous, std::uint32_t columns) const {
    const std::uint32_t own_next = (own.foreground >> 1) | (own.after ? 0x80000000u : 0u);
    const std::uint32_t other_next = (other.foreground >> 1) | (other.after ? 0x80000000u : 0u);
    const std::uint32_t own_previous = (own.foreground << 1) | (own.before ? 1u : 0u);
    const std::uint32_t other_previous = (other.foreground << 1) | (other.before ? 1u : 0u);
    std::uint32_t ends, begins;
    if (kLabelMap) {
      // Bit q: voxel q + 1 begins a run.
      const std::uint32_t own_next_starts =
          (own.starts >> 1) | (own.after_starts ? 0x80000000u : 0u);
      const std::uint32_t other_next_starts =
          (other.starts >> 1) | (other.after_starts ? 0x80000000u : 0u);
      ends = own.foreground & ~(own_next & ~own_next_starts) & other_next_starts & joins_next;
      begins = own.starts & other_previous & ~(other.foreground & ~other.starts) & joins_previous;
    } else {
      ends = own.foreground & ~own_next & ~other.foreground & other_next;
      begins = own.foreground & ~own_previous & ~other.foreground & other_previous;
    }
    // Own run ends at q, the other's begins at q + 1.
    ends &= columns;
    while (ends != 0) {
      const int q = lowest_bit(ends);
      ends &= ends - 1;
      detail::unite(forest, own.key_at(q), other.key_at(q + 1));
    }
    // Own run begins at q, the other's ends at q - 1.
    begins &= columns;
    while (begins != 0) {
      const int q = lowest_bit(begins);
      begins &= begins - 1;
      detail::unite(forest, own.key_at(q), other.key_at(q - 1));
    }
  }

  // The Unions of `own` with the rows before it that `rows` names.
  template <class Runs>
  VOLCCL_HD void operator()(const WordView& own, const RowsBefore<Runs>& before, std::uint32_t rows,
                            std::uint32_t columns = ~0u) const {
    constexpr bool kDiagonalCorners = Connectivity == 26;
    constexpr bool kSettles = kLabelMap && Connectivity != 6;
    const std::uint32_t carry = kLabelMap ? before.join_carry() : 0u;
    const std::uint32_t settled = kSettles ? before.joins(kJoinBehind) : 0u;
    const std::uint32_t unsettled = ~settled;
    const auto overlaps = [&](const WordView& other, int kind, std::uint32_t skip) {
      const std::uint32_t both = kLabelMap ? before.joins(kind) : own.foreground & other.foreground;
      const bool carried = kLabelMap ? ((carry >> kind) & 1u) != 0 : own.before && other.before;
      unite_overlaps(own, other, both, carried, skip, columns);
    };
    const auto corners = [&](const WordView& other, int right, int left, std::uint32_t made) {
      unite_corners(own, other, before.joins(right) & made, before.joins(left) & made, columns);
    };
    // A mask's skips read the foreground of rows whose Unions another step may make.
    const auto foreground = [&](std::uint32_t which) {
      return kLabelMap ? 0u : before.view(which, false).foreground;
    };
    if (Connectivity == 6) {
      // Two rows and two kinds of joins: read all at once, so that their loads overlap.
      const bool reads_above = (rows & kRowAbove) != 0 || (!kLabelMap && (rows & kRowBehind) != 0);
      const WordView above = reads_above ? before.view(kRowAbove, false) : WordView{};
      const WordView behind =
          (rows & kRowBehind) != 0 ? before.view(kRowBehind, false) : WordView{};
      const std::uint32_t both_above =
          kLabelMap ? before.joins(kJoinAbove) : own.foreground & above.foreground;
      const std::uint32_t both_behind =
          kLabelMap ? before.joins(kJoinBehind) : own.foreground & behind.foreground;
      const std::uint32_t skip_behind = kLabelMap ? both_above & before.above_joins_behind()
                                                  : above.foreground & foreground(kRowAboveBehind);
      const bool carried_above = kLabelMap ? (carry & 1u) != 0 : own.before && above.before;
      const bool carried_behind =
          kLabelMap ? ((carry >> kJoinBehind) & 1u) != 0 : own.before && behind.before;
      if ((rows & kRowAbove) != 0) {
        unite_overlaps(own, above, both_above, carried_above, 0u, columns);
      }
      if ((rows & kRowBehind) != 0) {
        unite_overlaps(own, behind, both_behind, carried_behind, skip_behind, columns);
      }
      return;
    }
    // Under 18 and 26 each row's view and joins are read just before its Unions.
    if ((rows & kRowAbove) != 0) {
      const WordView above = before.view(kRowAbove, true);
      overlaps(above, kJoinAbove, settled);
      // Under 18 the corners above do not neighbour the voxel behind: made at every column.
      corners(above, kJoinAboveRight, kJoinAboveLeft, Connectivity == 26 ? unsettled : ~0u);
    }
    if ((rows & kRowBehind) != 0) {
      const WordView behind = before.view(kRowBehind, true);
      // A label map's overlaps behind are all made (settled voxels).
      overlaps(behind, kJoinBehind,
               kLabelMap ? 0u : foreground(kRowAbove) & foreground(kRowAboveBehind));
      corners(behind, kJoinBehindRight, kJoinBehindLeft, unsettled);
    }
    if ((rows & kRowAboveBehind) != 0) {
      const WordView above_behind = before.view(kRowAboveBehind, kDiagonalCorners);
      overlaps(above_behind, kJoinAboveBehind,
               kLabelMap ? before.joins(kJoinAbove) | settled : foreground(kRowAbove));
      if (kDiagonalCorners) {
        corners(above_behind, kJoinAboveBehindRight, kJoinAboveBehindLeft, unsettled);
      }
    }
    if ((rows & kRowBelowBehind) != 0) {
      const WordView below_behind = before.view(kRowBelowBehind, kDiagonalCorners);
      overlaps(below_behind, kJoinBelowBehind, kLabelMap ? settled : foreground(kRowBehind));
      if (kDiagonalCorners) {
        corners(below_behind, kJoinBelowBehindRight, kJoinBelowBehindLeft, unsettled);
      }
    }
  }
};

// Row `row_in_tile` of tile `tile` (tiles numbered along y first): its (y, z) in the volume.
struct TileRow {
  std::uint32_t y, z;
};

VOLCCL_HD TileRow tile_row(const RunTiling& tiling, std::uint32_t tile, std::uint32_t row_in_tile) {
  const std::uint32_t tile_z = tile / tiling.tiles_y, tile_y = tile - tile_z * tiling.tiles_y;
  return {(tile_y << tiling.log2_y) + (row_in_tile & ((1u << tiling.log2_y) - 1)),
          (tile_z << tiling.log2_z) + (row_in_tile >> tiling.log2_y)};
}

// Initialization's contacts within a tile, of word w of row `row_in_tile` (at `at`). The tile's
// words are `tile_runs`', a row's at row_in_tile * words_x, under the tile's keys (RunTiling); a
// label map's joins are the volume's. Built on one path: where an early return built it twice,
// nvcc no longer knew the tile's pointers for shared memory and its loads became generic.
template <int Connectivity, class Runs>
VOLCCL_HD WordContacts<Runs> contacts_in_tile(const RunGrid& grid, const RunTiling& tiling,
                                              const Runs& tile_runs, std::uint32_t row_in_tile,
                                              TileRow at, std::uint32_t w) {
  constexpr bool kCorners = Connectivity != 6;
  WordContacts<Runs> contacts;
  const std::uint32_t in_tile = rows_before_in_tile(grid, tiling, at.y, at.z);
  contacts.before = {tile_runs,
                     in_tile,
                     row_in_tile,
                     1u << tiling.log2_y,
                     1u << tiling.log2_capacity,
                     grid.words_x,
                     w,
                     (std::uint64_t{at.z} * grid.ny + at.y) * grid.words_x + w};
  const std::uint32_t rows = in_tile & (kCorners ? ~0u : kRowAbove | kRowBehind);
  if (rows != 0) {
    contacts.own = contacts.before.own(kCorners);
    if (contacts.own.foreground != 0) contacts.rows = rows;
  }
  return contacts;
}

// The volume's key of the run whose key in tile `tile` is `tile_key`.
VOLCCL_HD std::uint32_t key_in_volume(const RunGrid& grid, const RunTiling& tiling,
                                      std::uint32_t tile, std::uint32_t tile_key) {
  const TileRow at = tile_row(tiling, tile, tile_key >> tiling.log2_capacity);
  return (at.z * grid.ny + at.y) * grid.run_capacity +
         (tile_key & ((1u << tiling.log2_capacity) - 1));
}

// The rows that Merge visits: those with a row before them in another tile. That is every row of
// a tile's first slice (z a multiple of the tile's depth) and, in its other slices, the rows at a
// tile's first y and, under 18 and 26, at its last (whose row below behind is in the next tile):
// 23 % of the rows at 256^3 at 6. Merge's threads are numbered over them, tile slab by tile slab
// along z, so that the others cost no thread (when a thread per word exited for them, most of
// Merge's threads did nothing). Slots numbered past the volume's rows (a partial last tile) are
// `inside` false.
struct MergeRows {
  std::uint32_t per_slice = 1;  // row slots of a slice past a tile's first
  std::uint32_t per_slab = 1;   // of a slab of slices one tile deep: ny + (depth - 1) per_slice
  std::uint32_t slots = 1;      // of the volume: per_slab times the slabs
  detail::Divisor by_per_slice, by_per_slab;
};

template <int Connectivity>
MergeRows make_merge_rows(const RunGrid& grid, const RunTiling& tiling) {
  MergeRows rows;
  if (tiling.log2_y == 0) {
    rows.per_slice = grid.ny;
  } else {
    rows.per_slice = Connectivity != 6 ? 2 * tiling.tiles_y : tiling.tiles_y;
  }
  rows.per_slab = grid.ny + ((1u << tiling.log2_z) - 1) * rows.per_slice;
  rows.slots = rows.per_slab * ((grid.nz + (1u << tiling.log2_z) - 1) >> tiling.log2_z);
  rows.by_per_slice = detail::Divisor(rows.per_slice, rows.per_slab);
  rows.by_per_slab = detail::Divisor(rows.per_slab, rows.slots);
  return rows;
}

struct MergeRow {
  std::uint32_t y, z;
  bool inside;
};

// The row of slot `slot` (below rows.slots).
template <int Connectivity>
VOLCCL_HD MergeRow merge_row(const RunGrid& grid, const RunTiling& tiling, const MergeRows& rows,
                             std::uint32_t slot) {
  const std::uint32_t slab = rows.by_per_slab.quotient(slot);
  std::uint32_t in_slab = slot - slab * rows.per_slab;
  std::uint32_t z = slab << tiling.log2_z, y = in_slab;
  if (in_slab >= grid.ny) {
    in_slab -= grid.ny;
    const std::uint32_t slice = rows.by_per_slice.quotient(in_slab);
    const std::uint32_t j = in_slab - slice * rows.per_slice;
    z += 1 + slice;
    if (tiling.log2_y == 0) {
      y = j;
    } else if (Connectivity != 6) {
      y = ((j >> 1) << tiling.log2_y) + ((j & 1u) != 0 ? (1u << tiling.log2_y) - 1 : 0u);
    } else {
      y = j << tiling.log2_y;
    }
  }
  return {y, z, y < grid.ny && z < grid.nz};
}

// Merge's contacts of word w of row `row`, at (y, z): those with the rows before it in other
// tiles; `columns`, the word's columns whose Unions the caller makes. Any row before it may be
// read, for the skips.
template <int Connectivity, class Runs>
VOLCCL_HD WordContacts<Runs> contacts_between_tiles(const Runs& runs, const RunGrid& grid,
                                                    const RunTiling& tiling, std::uint32_t row,
                                                    std::uint32_t y, std::uint32_t z,
                                                    std::uint32_t w, std::uint32_t columns) {
  constexpr bool kCorners = Connectivity != 6;
  WordContacts<Runs> contacts;
  const std::uint32_t present = rows_before(grid, y, z);
  contacts.before = {runs,
                     present,
                     row,
                     grid.ny,
                     grid.run_capacity,
                     grid.words_x,
                     w,
                     std::uint64_t{row} * grid.words_x + w};
  const std::uint32_t rows = present & ~rows_before_in_tile(grid, tiling, y, z) &
                             (kCorners ? ~0u : kRowAbove | kRowBehind);
  if (rows != 0) {
    contacts.own = contacts.before.own(kCorners);
    if ((contacts.own.foreground & columns) != 0) contacts.rows = rows;
  }
  return contacts;
}

// The runs of a row: those that start before its last word and in it.
template <class Runs>
VOLCCL_HD std::uint32_t row_runs(const Runs& runs, const RunGrid& grid, std::uint32_t row) {
  const WordView last = view_word(runs, grid, row, grid.words_x - 1);
  return last.first_key - row * grid.run_capacity + popcount(last.starts);
}

// Compression of kRuns runs (bit r of `valid`: keys[r] is one): points each at its root and
// returns the roots among them (bit r). Every run's parent and grandparent are loaded before any
// walk goes on, so that their latencies overlap (after Merge most runs are a step or two from
// their root); as in union_find.h's compress, only roots are stored.
template <int kRuns>
VOLCCL_HD std::uint32_t compress_runs(std::uint32_t* parents, const std::uint32_t (&keys)[kRuns],
                                      std::uint32_t valid) {
  std::uint32_t parent[kRuns], next[kRuns];
  VOLCCL_UNROLL
  for (int r = 0; r < kRuns; ++r) {
    parent[r] = (valid >> r) & 1u ? detail::load_relaxed(parents + keys[r]) : 0;
  }
  VOLCCL_UNROLL
  for (int r = 0; r < kRuns; ++r) {
    next[r] = (valid >> r) & 1u ? detail::load_relaxed(parents + parent[r]) : 0;
  }
  std::uint32_t roots = 0;
  VOLCCL_UNROLL
  for (int r = 0; r < kRuns; ++r) {
    if (((valid >> r) & 1u) == 0) continue;
    std::uint32_t root = parent[r];
    for (std::uint32_t up = next[r]; up != root; up = detail::load_relaxed(parents + root)) {
      root = up;
    }
    if (root != parent[r]) detail::store_relaxed(parents + keys[r], root);
    if (root == keys[r]) roots |= 1u << r;
  }
  return roots;
}

// FinalLabeling by quads of four voxels of a word, quad q its voxels 4 q .. 4 q + 3: each voxel
// takes the label of its run's root (the runs were compressed), background 0. Four voxels, so that
// a warp's threads store consecutive 16-byte parts of the labels (a thread per word stored 128
// bytes, its warp's stores 128 bytes apart, and ran far below the memory's bandwidth).
constexpr std::uint32_t kQuadVoxels = 4;
constexpr std::uint32_t kQuadsPerWord = kWordVoxels / kQuadVoxels;

template <class Runs>
struct RufFinalLabeling {
  Runs runs;
  std::uint32_t* labels;
  const std::uint32_t* parents;
  const std::uint32_t* root_bitmap;
  const std::uint32_t* words_before;
  bool evict_first = false;  // on the GPU, store the labels evict-first (DeviceLabeling)

  // The labels of the quad's voxels (loads only, so that a thread's quads overlap).
  VOLCCL_HD void labels_of(const RunGrid& grid, std::uint32_t row, std::uint32_t w,
                           std::uint32_t quad, std::uint32_t (&out)[kQuadVoxels]) const {
    const WordView word = view_word(runs, grid, row, w);
    // A run's voxels share one lookup: whether a voxel needs its own follows from the keys alone,
    // so the lookups of a quad's runs are still issued together.
    std::uint32_t previous_key = 0xFFFFFFFFu, label = 0;  // keys are below rows * run_capacity
    VOLCCL_UNROLL
    for (std::uint32_t i = 0; i < kQuadVoxels; ++i) {
      const int column = static_cast<int>(quad * kQuadVoxels + i);
      const bool foreground = ((word.foreground >> column) & 1u) != 0;
      const std::uint32_t key = word.key_at(column);
      if (foreground && key != previous_key) {
        label = detail::component_label(root_bitmap, words_before, parents[key]);
        previous_key = key;
      }
      out[i] = foreground ? label : 0u;
    }
  }

  // Stores them from voxel x0 of the row on, up to the row's end.
  VOLCCL_HD void store(const RunGrid& grid, std::uint32_t row, std::uint32_t x0,
                       const std::uint32_t (&out)[kQuadVoxels]) const {
    const std::uint64_t first = std::uint64_t{row} * grid.nx + x0;
#if defined(__CUDA_ARCH__)
    if (x0 + kQuadVoxels <= grid.nx && reinterpret_cast<std::uintptr_t>(labels + first) % 16 == 0) {
      auto* const address = reinterpret_cast<uint4*>(labels + first);
      const uint4 quad = make_uint4(out[0], out[1], out[2], out[3]);
      if (evict_first) {
        __stcs(address, quad);
      } else {
        *address = quad;
      }
      return;
    }
#endif
    VOLCCL_UNROLL
    for (std::uint32_t i = 0; i < kQuadVoxels; ++i) {
      if (x0 + i < grid.nx) labels[first + i] = out[i];
    }
  }
};

}  // namespace volccl::kernels3d
