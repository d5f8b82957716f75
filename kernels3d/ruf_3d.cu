// CUDA backend of RUF, the 3D union-find over the runs of the rows (ruf_logic_3d.h): one kernel
// per step, then the raster-order ranking of the root runs (runtime/raster_rank.cu).
// Initialization gives each row a group of lanes (as many as its words, up to a warp), which scan
// the runs' counts along the row with shuffles, and a block a tile of rows, united in shared
// memory; Merge takes a thread per word (or part of one), Compression half a warp per row,
// FinalLabeling a thread per four voxels. With statistics, the Late pass over the runs
// (ruf_statistics_3d.cu) runs before the runs are freed. A label map's words (foreground, where
// its runs begin, which neighbours have a voxel's value) come first from a warp per row, a lane
// per voxel of each word, so that its values are read once, in whole lines.
#include <algorithm>
#include <cstdint>

#include "kernels3d/ruf_logic_3d.h"
#include "kernels3d/ruf_statistics_3d.h"
#include "runtime/cuda_support.cuh"
#include "runtime/labeler.h"
#include "runtime/late_moments.h"
#include "runtime/one_value.cuh"
#include "runtime/voxel_input.h"

namespace volccl::detail {
namespace {

using kernels3d::JoinWords;
using kernels3d::RowWord;
using kernels3d::RunGrid;
using kernels3d::RunTiling;

constexpr std::uint32_t kWarp = 32;
constexpr std::uint32_t kFullWarp = 0xFFFFFFFFu;
constexpr std::uint32_t kThreads = 256;
constexpr std::uint32_t kInitThreads = kernels3d::kInitThreads;
static_assert(kernels3d::kWarpLanes == kWarp, "Initialization's tiles assume warps of 32 lanes");

// A warp per row of a label map, a lane per voxel of a word: each word's bits are ballots on the
// compares themselves, its carry the last lane's bits of the word before. The pass is bound by
// its integer instructions, so a batch whose rows all exist and whose words lie inside the row
// (neither its first nor its last) loads and compares without a test. A batch's words are loaded
// together: four at 6, two at 18, one at 26, where a word's fourteen values already take the
// registers that keep enough warps resident.
template <int Connectivity>
constexpr std::uint32_t kLabelMapBatch = Connectivity == 6 ? 4 : (Connectivity == 18 ? 2 : 1);

// The rows a label map's word reads: its own (0), then the rows before it of the join kinds
// that overlap (1 + JoinKind, up to kJoinBelowBehind); an absent row points at the row itself.
template <int Connectivity, class T>
struct LabelMapRows {
  static constexpr int kCount = 1 + kernels3d::carried_kinds(Connectivity);
  const T* values[kCount];  // the row's first voxel
  bool present[kCount];
  bool all_present;
};

template <int Connectivity, class T>
__device__ LabelMapRows<Connectivity, T> label_map_rows(const T* values, const RunGrid& grid,
                                                        std::uint32_t y, std::uint32_t z) {
  LabelMapRows<Connectivity, T> rows;
  // Row r > 0 is that of join kind r - 1, whose bit in rows_before is 1 << (r - 1).
  const std::uint32_t before = kernels3d::rows_before(grid, y, z);
  const std::int64_t own = std::int64_t{z} * grid.ny + y;
  rows.all_present = true;
  VOLCCL_UNROLL
  for (int r = 0; r < rows.kCount; ++r) {
    rows.present[r] = r == 0 || ((before >> (r - 1)) & 1u) != 0;
    rows.all_present = rows.all_present && rows.present[r];
    const std::int64_t offset =
        r == 0 ? 0 : kernels3d::join_dz(r - 1) * std::int64_t{grid.ny} + kernels3d::join_dy(r - 1);
    rows.values[r] = values + (rows.present[r] ? own + offset : own) * grid.nx;
  }
  return rows;
}

template <int Connectivity, bool kInterior, class T>
__device__ __forceinline__ void make_label_map_batch(
    const LabelMapRows<Connectivity, T>& rows, T background, const RunGrid& grid,
    const T* const (&at)[LabelMapRows<Connectivity, T>::kCount], std::uint32_t w0,
    std::uint64_t first_word, std::uint32_t& carry, RowWord* words, std::uint32_t* starts,
    JoinWords<Connectivity>* joins) {
  constexpr int kKinds = kernels3d::join_kinds(Connectivity);
  constexpr int kBatch = static_cast<int>(kLabelMapBatch<Connectivity>);
  const std::uint32_t lane = threadIdx.x % kWarp;
  const std::uint32_t x0 = w0 * kernels3d::kWordVoxels + lane;
  T value[kBatch], left[kBatch], neighbours[kBatch][kKinds];
  VOLCCL_UNROLL
  for (int b = 0; b < kBatch; ++b) {
    const int offset = b * static_cast<int>(kernels3d::kWordVoxels);
    const std::uint32_t x = x0 + offset;
    const bool inside = kInterior || x < grid.nx;
    const bool has_left = kInterior || (inside && x > 0);
    const bool has_right = kInterior || x + 1 < grid.nx;
    value[b] = inside ? at[0][offset] : background;
    left[b] = has_left ? at[0][offset - 1] : background;
    VOLCCL_UNROLL
    for (int kind = 0; kind < kKinds; ++kind) {
      const int r = 1 + kernels3d::join_row(kind), dx = kernels3d::join_dx(kind);
      const bool read =
          kInterior || (rows.present[r] && (dx < 0 ? has_left : (dx > 0 ? has_right : inside)));
      neighbours[b][kind] = read ? at[r][offset + dx] : background;
    }
  }
  VOLCCL_UNROLL
  for (int b = 0; b < kBatch; ++b) {
    if (!kInterior && w0 + b >= grid.words_x) break;
    const std::uint32_t foreground = __ballot_sync(kFullWarp, value[b] != background);
    const std::uint32_t run_starts =
        __ballot_sync(kFullWarp, kernels3d::label_map_starts(value[b], left[b], background));
    JoinWords<Connectivity> made;
    VOLCCL_UNROLL
    for (int kind = 0; kind < kKinds; ++kind) {
      made.bits[kind] = __ballot_sync(
          kFullWarp, kernels3d::label_map_joins(value[b], neighbours[b][kind], background));
    }
    made.carry = carry;
    const std::uint64_t word = first_word + w0 + b;
    if (lane == 0) words[word] = {foreground, 0};
    if (lane == 1) starts[word] = run_starts;
    if (lane == 2) joins[word] = made;
    carry = 0;
    VOLCCL_UNROLL
    for (int kind = 0; kind < kernels3d::carried_kinds(Connectivity); ++kind) {
      carry |= (made.bits[kind] >> (kWarp - 1)) << kind;
    }
  }
}

// `one_value` not null: the check that ran before, after which the pass has nothing to do where
// the map holds one value (its mask is labeled instead).
template <int Connectivity, class T>
__global__ void make_label_map_words(detail::LabelMapVoxels<T> voxels, RunGrid grid, Divisor by_ny,
                                     const ValueRange* one_value, RowWord* words,
                                     std::uint32_t* starts, JoinWords<Connectivity>* joins) {
  constexpr std::uint32_t kBatch = kLabelMapBatch<Connectivity>;
  const std::uint64_t thread = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  const auto row = static_cast<std::uint32_t>(thread / kWarp);
  if (row >= grid.rows) return;  // whole warps
  if (one_value != nullptr && holds_one_value(one_value)) return;
  const std::uint32_t z = by_ny.quotient(row), y = row - z * grid.ny;
  const auto rows = label_map_rows<Connectivity>(voxels.values, grid, y, z);
  const std::uint64_t first_word = std::uint64_t{row} * grid.words_x;
  // Each row's pointer at the lane's voxel of the batch, moved on by a batch, so that no load
  // computes its address from the row and the word.
  constexpr int kRows = LabelMapRows<Connectivity, T>::kCount;
  const T* at[kRows];
  VOLCCL_UNROLL
  for (int r = 0; r < kRows; ++r) at[r] = rows.values[r] + threadIdx.x % kWarp;
  std::uint32_t carry = 0;
  for (std::uint32_t w0 = 0; w0 < grid.words_x; w0 += kBatch) {
    if (rows.all_present && w0 > 0 && (w0 + kBatch) * kernels3d::kWordVoxels < grid.nx) {
      make_label_map_batch<Connectivity, true>(rows, voxels.background, grid, at, w0, first_word,
                                               carry, words, starts, joins);
    } else {
      make_label_map_batch<Connectivity, false>(rows, voxels.background, grid, at, w0, first_word,
                                                carry, words, starts, joins);
    }
    VOLCCL_UNROLL
    for (int r = 0; r < kRows; ++r) at[r] += kBatch * kernels3d::kWordVoxels;
  }
}

// A row's group of lanes takes its words a round of `lanes` at a time: each lane's word's
// foreground bits and run starts (the voxel before the word from the lane before, or from the
// previous round), the runs before it by an inclusive scan of the counts over the group. A block
// holds a tile of rows (RunTiling): their words and run slots go to shared memory, where the
// block makes the tile's Unions, and each run's slot in the volume gets its root in the tile.
// Without a tile in shared memory (rows of more than a warp's words) a block takes consecutive
// rows and every run is its own root. The blocks also zero the root ranking (`clear`). A label
// map's tile keeps its starts too, and its slots, twice a mask's, in dynamic shared memory
// (kLabelMapTileSlots, over the static limit).
template <int Connectivity, class Input>
__global__ void __launch_bounds__(kInitThreads)
    initialize(Input input, RunGrid grid, RunTiling tiling, int log2_lanes, ClearSpan clear,
               RowWord* words, std::uint32_t* parents) {
  zero_by_grid(clear);
  __shared__ RowWord tile_words[kInitThreads];
  __shared__ std::uint32_t tile_starts[Input::kLabelMap ? kInitThreads : 1];
  __shared__ std::uint32_t mask_tile_parents[Input::kLabelMap ? 1 : kernels3d::kTileSlots];
  extern __shared__ std::uint32_t label_map_tile_parents[];
  std::uint32_t* const tile_parents = Input::kLabelMap ? label_map_tile_parents : mask_tile_parents;
  const std::uint32_t lanes = 1u << log2_lanes;
  const std::uint32_t lane = threadIdx.x & (lanes - 1), row_in_block = threadIdx.x >> log2_lanes;
  const bool tiled = tiling.in_shared_memory();
  const kernels3d::TileRow at = kernels3d::tile_row(tiling, blockIdx.x, row_in_block);
  bool inside;
  std::uint32_t row;
  if (tiled) {
    inside =
        row_in_block < (1u << (tiling.log2_y + tiling.log2_z)) && at.y < grid.ny && at.z < grid.nz;
    row = inside ? at.z * grid.ny + at.y : 0;
  } else {
    const std::uint64_t block_row =
        std::uint64_t{blockIdx.x} * (kInitThreads >> log2_lanes) + row_in_block;
    inside = block_row < grid.rows;
    row = inside ? static_cast<std::uint32_t>(block_row) : 0;
  }
  const std::uint32_t tile_key = row_in_block << tiling.log2_capacity;
  std::uint32_t runs = 0;
  bool before = false;
  for (std::uint32_t round = 0; round < grid.words_x; round += lanes) {
    const std::uint32_t w = round + lane;
    const bool has_word = inside && w < grid.words_x;
    const std::uint64_t word_index = std::uint64_t{row} * grid.words_x + w;
    const std::uint32_t foreground = has_word ? input.foreground(grid, row, w) : 0;
    const std::uint32_t previous = __shfl_up_sync(kFullWarp, foreground, 1, lanes);
    const bool word_before = lane > 0 ? (previous >> 31) != 0 : before;
    const std::uint32_t word_starts =
        has_word ? input.starts(foreground, word_before, word_index) : 0;
    const std::uint32_t count = popcount(word_starts);
    std::uint32_t inclusive = count;
    for (std::uint32_t distance = 1; distance < lanes; distance <<= 1) {
      const std::uint32_t up = __shfl_up_sync(kFullWarp, inclusive, distance, lanes);
      if (lane >= distance) inclusive += up;
    }
    const RowWord word =
        kernels3d::make_row_word(foreground, runs + inclusive - count, word_before);
    if (has_word) {
      words[word_index] = word;
      if (tiled) tile_words[row_in_block * grid.words_x + w] = word;
      if (tiled && Input::kLabelMap) tile_starts[row_in_block * grid.words_x + w] = word_starts;
    }
    // The round's runs have consecutive keys: the group makes them roots by strided stores, so
    // that its lanes' stores are contiguous.
    const std::uint32_t round_runs = __shfl_sync(kFullWarp, inclusive, lanes - 1, lanes);
    for (std::uint32_t k = runs + lane; inside && k < runs + round_runs; k += lanes) {
      if (tiled) {
        tile_parents[tile_key + k] = tile_key + k;
      } else {
        parents[row * grid.run_capacity + k] = row * grid.run_capacity + k;
      }
    }
    runs += round_runs;
    before = (__shfl_sync(kFullWarp, foreground, lanes - 1, lanes) >> 31) != 0;
  }
  if (!tiled) return;
  __syncthreads();
  if (inside && lane < grid.words_x) {
    const auto contacts = kernels3d::contacts_in_tile<Connectivity>(
        grid, tiling, input.runs(tile_words, tile_starts), row_in_block, at, lane);
    kernels3d::RunUnions<Connectivity, kernels3d::TileForest, Input::kLabelMap>{{tile_parents}}(
        contacts.own, contacts.before, contacts.rows);
  }
  __syncthreads();
  for (std::uint32_t k = lane; inside && k < runs; k += lanes) {
    const std::uint32_t root = find_root(kernels3d::RunForest{tile_parents}, tile_key + k);
    parents[row * grid.run_capacity + k] = kernels3d::key_in_volume(grid, tiling, blockIdx.x, root);
  }
}

// A thread per word of Merge's rows (MergeRows), or per part of one.
struct MergeLaunch {
  kernels3d::MergeRows rows;
  std::uint32_t words;  // rows.slots * words_x
  Divisor by_words_x;
};

// Merge: the Unions between tiles, a thread per word or per part of one (`columns`).
template <int Connectivity, class Runs>
__global__ void merge(RunGrid grid, RunTiling tiling, MergeLaunch launch, int log2_parts, Runs runs,
                      std::uint32_t* parents) {
  wait_for_previous_kernel();
  const std::uint32_t thread = blockIdx.x * blockDim.x + threadIdx.x;
  const std::uint32_t index = thread >> log2_parts;
  if (index >= launch.words) return;
  const std::uint32_t slot = launch.by_words_x.quotient(index);
  const kernels3d::MergeRow at =
      kernels3d::merge_row<Connectivity>(grid, tiling, launch.rows, slot);
  if (!at.inside) return;
  const std::uint32_t width = kernels3d::kWordVoxels >> log2_parts;
  const std::uint32_t part = thread & ((1u << log2_parts) - 1);
  const std::uint32_t columns = width == 32 ? ~0u : ((1u << width) - 1) << (part * width);
  const auto contacts = kernels3d::contacts_between_tiles<Connectivity>(
      runs, grid, tiling, at.z * grid.ny + at.y, at.y, at.z, index - slot * grid.words_x, columns);
  kernels3d::RunUnions<Connectivity, kernels3d::RunForest, Runs::kLabelMap>{{parents}}(
      contacts.own, contacts.before, contacts.rows, columns);
}

// A thread per four voxels of a row, (nx + 3) / 4 a row (no more than the voxels), `rows` rows a
// thread (rows_per_thread apart), every row's loads issued before the first store.
struct QuadLaunch {
  std::uint32_t threads, quads_x, rows_per_thread;
  Divisor by_quads_x;
};

struct QuadOfThread {
  std::uint32_t row, w, quad, x0;
};

__device__ QuadOfThread quad_of_thread(const QuadLaunch& launch, std::uint32_t index) {
  const std::uint32_t row = launch.by_quads_x.quotient(index);
  const std::uint32_t quad_in_row = index - row * launch.quads_x;
  return {row * launch.rows_per_thread, quad_in_row / kernels3d::kQuadsPerWord,
          quad_in_row % kernels3d::kQuadsPerWord, quad_in_row * kernels3d::kQuadVoxels};
}

// Compression: half a warp per row, kRunsPerLane runs a lane at once (compress_runs overlaps
// their walks); the roots among 16 consecutive keys are set in the bitmap by one lane with at
// most two atomics. A thread per word or per four voxels left several walks in sequence to a
// thread, and the warp-wide vote over bitmap words (__match_any_sync) cost more than the walks.
constexpr std::uint32_t kCompressLanes = 16;
constexpr int kRunsPerLane = 4;

template <class Runs>
__global__ void compress(RunGrid grid, Runs runs, std::uint32_t* parents,
                         std::uint32_t* root_bitmap) {
  wait_for_previous_kernel();
  const std::uint64_t thread = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  const std::uint32_t lane = threadIdx.x % kWarp, group_lane = lane % kCompressLanes;
  const bool inside = thread / kCompressLanes < grid.rows;
  const auto row = static_cast<std::uint32_t>(inside ? thread / kCompressLanes : 0);
  const std::uint32_t row_runs = inside ? kernels3d::row_runs(runs, grid, row) : 0;
  const std::uint32_t first = row * grid.run_capacity;
  const std::uint32_t warp_runs =
      max(row_runs, __shfl_xor_sync(kFullWarp, row_runs, kCompressLanes));
  for (std::uint32_t base = 0; base < warp_runs; base += kCompressLanes * kRunsPerLane) {
    std::uint32_t keys[kRunsPerLane], valid = 0;
    VOLCCL_UNROLL
    for (int r = 0; r < kRunsPerLane; ++r) {
      const std::uint32_t k = base + r * kCompressLanes + group_lane;
      keys[r] = first + k;
      valid |= (k < row_runs ? 1u : 0u) << r;
    }
    const std::uint32_t roots = kernels3d::compress_runs(parents, keys, valid);
    VOLCCL_UNROLL
    for (int r = 0; r < kRunsPerLane; ++r) {
      const std::uint32_t votes = __ballot_sync(kFullWarp, (roots >> r) & 1u);
      if (group_lane == 0) {
        mark_component_starts(root_bitmap, keys[r],
                              (votes >> (lane & ~(kCompressLanes - 1))) & 0xFFFFu);
      }
    }
  }
}

// FinalLabeling: kRowsPerThread rows a thread, so that more lookups are in flight than one
// quad's chain of three loads (word, parent, rank).
constexpr std::uint32_t kRowsPerThread = 2;

template <class Runs>
__global__ void final_labeling(RunGrid grid, QuadLaunch launch,
                               kernels3d::RufFinalLabeling<Runs> step) {
  wait_for_previous_kernel();
  const std::uint32_t index = blockIdx.x * blockDim.x + threadIdx.x;
  if (index >= launch.threads) return;
  const QuadOfThread at = quad_of_thread(launch, index);
  std::uint32_t out[kRowsPerThread][kernels3d::kQuadVoxels];
  VOLCCL_UNROLL
  for (std::uint32_t r = 0; r < kRowsPerThread; ++r) {
    if (at.row + r < grid.rows) step.labels_of(grid, at.row + r, at.w, at.quad, out[r]);
  }
  VOLCCL_UNROLL
  for (std::uint32_t r = 0; r < kRowsPerThread; ++r) {
    if (at.row + r < grid.rows) step.store(grid, at.row + r, at.x0, out[r]);
  }
}

QuadLaunch quad_launch(const RunGrid& grid, std::uint32_t rows_per_thread) {
  QuadLaunch launch;
  launch.quads_x = (grid.nx + kernels3d::kQuadVoxels - 1) / kernels3d::kQuadVoxels;
  launch.rows_per_thread = rows_per_thread;
  const std::uint64_t threads =
      std::uint64_t{launch.quads_x} * ((grid.rows + rows_per_thread - 1) / rows_per_thread);
  launch.threads = static_cast<std::uint32_t>(threads);
  launch.by_quads_x = Divisor(launch.quads_x, threads);
  return launch;
}

// Merge's threads per word, as a power of two: 1 where its words fill half the device's threads,
// up to 8 on smaller volumes. A thread makes the Unions of its columns in sequence; split over 8
// threads, the several Unions a word of a large random volume made Merge slower (a warp waits for
// its busiest lane), but on the few words of a small Hilbert curve, where too few threads ran to
// hide the walks, much faster. The bound, half the device's threads, is where the two balanced on
// the volumes in between (bench/notes/union-find-3d.md).
int merge_log2_parts(std::uint64_t words) {
  const std::uint64_t enough = device_traits().resident_threads / 2;
  int log2 = 0;
  while (log2 < 3 && (words << log2) < enough) ++log2;
  return log2;
}

unsigned blocks_for(std::uint64_t threads) {
  return static_cast<unsigned>((threads + kThreads - 1) / kThreads);
}

// `moments`: not null, the statistics from the runs (ruf_statistics_3d.cu), before the runs are
// freed. `make_input(grid, words, starts, joins, stream)`: the Input of Initialization, a label
// map's words made on `stream` (MaskWordSource or LabelMapWordSource).
template <int Connectivity, bool kLabelMap, class MakeInput>
LabelResult label_ruf(const DeviceLabelCall& call, const MakeInput& make_input) {
  std::uint32_t* const labels = call.labels;
  cuda::DeviceMoments* const moments = call.moments;
  const RunGrid grid = kernels3d::make_run_grid(call.extent, kLabelMap);
  const std::uint64_t word_count = kernels3d::row_word_count(grid);
  // The rows' words and the union-find nodes (one per possible run) share the ranking's
  // allocation, which Initialization clears: a bitmap of the run keys, half the voxels' in a mask
  // (half as much to clear and to rank). A label map's starts and joins too.
  Scratch scratch;
  const std::size_t words_offset = scratch.reserve<RowWord>(word_count);
  const std::size_t parents_offset =
      scratch.reserve<std::uint32_t>(kernels3d::run_slot_count(grid));
  const std::size_t starts_offset = scratch.reserve<std::uint32_t>(kLabelMap ? word_count : 0);
  const std::size_t joins_offset =
      scratch.reserve<JoinWords<Connectivity>>(kLabelMap ? word_count : 0);
  DeviceLabeling labeling(call, kernels3d::run_slot_count(grid), scratch,
                          DeviceLabeling::Clear::by_labeler);
  const cudaStream_t stream = labeling.stream();
  auto* const words = labeling.scratch<RowWord>(words_offset);
  auto* const parents = labeling.scratch<std::uint32_t>(parents_offset);
  auto* const starts = kLabelMap ? labeling.scratch<std::uint32_t>(starts_offset) : nullptr;
  auto* const joins = kLabelMap ? labeling.scratch<JoinWords<Connectivity>>(joins_offset) : nullptr;
  const auto input = make_input(grid, words, starts, joins, stream);
  // The words pass runs while the host asks the check that ran before it.
  if (kLabelMap && call.one_value != nullptr && call.one_value->holds_one_value()) return {};
  using Input = std::decay_t<decltype(input)>;
  const typename Input::Runs runs = input.runs(words, starts);

  const int log2_lanes = kernels3d::log2_init_lanes(grid);
  const RunTiling tiling = kernels3d::make_run_tiling(
      grid, kernels3d::tile_log2_rows(grid, device_traits().multiprocessors));
  const unsigned init_blocks =
      tiling.in_shared_memory()
          ? tiling.tiles
          : static_cast<unsigned>(((std::uint64_t{grid.rows} << log2_lanes) + kInitThreads - 1) /
                                  kInitThreads);
  const unsigned init_threads =
      tiling.in_shared_memory()
          ? std::max(kWarp, (1u << (tiling.log2_y + tiling.log2_z + log2_lanes)))
          : kInitThreads;
  const auto init = initialize<Connectivity, Input>;
  std::size_t dynamic_shared = 0;
  if (kLabelMap) {
    dynamic_shared = kernels3d::kLabelMapTileSlots * sizeof(std::uint32_t);
    VOLCCL_CUDA_CHECK(cudaFuncSetAttribute(init, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           static_cast<int>(dynamic_shared)));
  }
  init<<<init_blocks, init_threads, dynamic_shared, stream>>>(
      input, grid, tiling, log2_lanes, labeling.clear_span(), words, parents);
  VOLCCL_CUDA_CHECK(cudaGetLastError());
  labeling.end_step(&StepTimings::initialization_ms);
  MergeLaunch launch;
  launch.rows = kernels3d::make_merge_rows<Connectivity>(grid, tiling);
  launch.words = launch.rows.slots * grid.words_x;
  launch.by_words_x = Divisor(grid.words_x, launch.words);
  const int log2_parts = merge_log2_parts(launch.words);
  launch_after_previous(merge<Connectivity, typename Input::Runs>,
                        blocks_for(std::uint64_t{launch.words} << log2_parts), kThreads, stream,
                        grid, tiling, launch, log2_parts, runs, parents);
  labeling.end_step(&StepTimings::merge_ms);
  launch_after_previous(compress<typename Input::Runs>,
                        blocks_for(std::uint64_t{grid.rows} * kCompressLanes), kThreads, stream,
                        grid, runs, parents, labeling.root_bitmap());
  labeling.end_step(&StepTimings::compression_ms);
  labeling.rank();
  if (moments != nullptr) labeling.mark_ranked();
  const QuadLaunch row_quads = quad_launch(grid, kRowsPerThread);
  launch_after_previous(final_labeling<typename Input::Runs>, blocks_for(row_quads.threads),
                        kThreads, stream, grid, row_quads,
                        kernels3d::RufFinalLabeling<typename Input::Runs>{
                            runs, labels, parents, labeling.root_bitmap(), labeling.words_before(),
                            labeling.evict_labels_first()});
  labeling.end_step(&StepTimings::final_labeling_ms);
  const RufRuns run_table{
      grid, words, starts, parents, labeling.root_bitmap(), labeling.words_before()};
  if (moments != nullptr) {
    // The count sizes the table: the host waits for the ranking only, while FinalLabeling runs.
    *moments = ruf_run_moments(run_table, labeling.count_when_ranked(), stream);
    labeling.end_step(&StepTimings::statistics_ms);
  } else if (LateBeforeCount* late = labeling.late_before_count();
             late != nullptr && late->wanted()) {
    late->measure_with(
        ruf_run_regions(grid),
        [run_table, stream](ComponentMoments* rows, const std::uint32_t* device_count) {
          ruf_run_moments_before_count(run_table, rows, device_count, stream);
        });
  }
  return labeling.finish();
}

template <int Connectivity>
LabelResult label_mask(const DeviceLabelCall& call) {
  return label_ruf<Connectivity, false>(
      call, [&](const RunGrid&, RowWord*, std::uint32_t*, JoinWords<Connectivity>*, cudaStream_t) {
        return kernels3d::MaskWordSource{call.mask};
      });
}

template <int Connectivity>
LabelResult label_label_map(const DeviceLabelCall& call) {
  const auto make_input = [&](const RunGrid& grid, RowWord* words, std::uint32_t* starts,
                              JoinWords<Connectivity>* joins, cudaStream_t stream) {
    with_label_map(call.input, [&](const auto& voxels) {
      make_label_map_words<Connectivity>
          <<<blocks_for(std::uint64_t{grid.rows} * kWarp), kThreads, 0, stream>>>(
              voxels, grid, Divisor(grid.ny, grid.rows),
              call.one_value != nullptr ? call.one_value->range() : nullptr, words, starts, joins);
      VOLCCL_CUDA_CHECK(cudaGetLastError());
    });
    return kernels3d::LabelMapWordSource<Connectivity>{words, starts, joins};
  };
  return label_ruf<Connectivity, true>(call, make_input);
}

}  // namespace

LabelResult label_ruf_3d_cuda(const DeviceLabelCall& call) {
  return kernels3d::with_connectivity(call.options.connectivity, [&](auto connectivity) {
    constexpr int kConnectivity = decltype(connectivity)::value;
    return call.input.label_map ? label_label_map<kConnectivity>(call)
                                : label_mask<kConnectivity>(call);
  });
}

}  // namespace volccl::detail
