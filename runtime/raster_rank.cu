// The device half of raster_rank.h (RootRanking in cuda_support.cuh): an exclusive prefix sum of
// the bitmap words' population counts, one element past the end so that the last entry is the
// component count.
//
// One kernel, a single pass with decoupled look-back (Merrill and Garland, "Single-pass Parallel
// Prefix Scan with Decoupled Look-back", NVIDIA 2016), which CUB's DeviceScan also uses; written
// here so that its tile states live in the same allocation as the bitmap and the one memset
// that clears the bitmap clears them too. CUB's scan adds an initialization kernel and host-side
// dispatch, a noticeable share of the time of a 2D labeling.
#include <cub/block/block_load.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/block/block_store.cuh>

#include "runtime/cuda_support.cuh"
#include "runtime/host_device.h"
#include "runtime/raster_rank.h"

namespace volccl::detail {
namespace {

constexpr std::uint32_t kScanThreads = 256;
constexpr std::uint32_t kWarp = 32;
constexpr std::uint32_t kFullWarp = 0xFFFFFFFFu;
constexpr std::uint32_t kWordsPerThread = 16;
constexpr std::uint32_t kTileWords = kScanThreads * kWordsPerThread;

// A tile's state, published for the tiles after it: the flag in the high half, the sum of the
// tile (kAggregate) or of every tile up to and including it (kInclusive) in the low half. The
// memset before the labeling leaves every state kNotReady.
constexpr std::uint64_t kNotReady = 0, kAggregate = 1, kInclusive = 2;

__device__ std::uint64_t tile_state(std::uint64_t flag, std::uint32_t sum) {
  return flag << 32 | sum;
}

// The sum of the tiles before `tile`, by the first warp of its block, which then publishes the
// tile's inclusive sum: the warp looks back at 32 tiles at a time, waits until each has
// published, and stops at the nearest one that has an inclusive sum; tiles before the first
// count as an inclusive 0. Publishing the tile's own aggregate first lets the tiles after it look
// past it before it knows its prefix (Merrill and Garland, Sec. 4).
__device__ std::uint32_t tiles_before_by_warp(std::uint32_t tile, std::uint32_t tile_total,
                                              unsigned long long* tile_states) {
  const std::uint32_t lane = threadIdx.x;
  if (lane == 0 && tile > 0) atomicExch(&tile_states[tile], tile_state(kAggregate, tile_total));
  std::uint32_t before = 0;
  for (std::int64_t window_end = tile; window_end > 0; window_end -= kWarp) {
    const std::int64_t previous = window_end - kWarp + lane;
    std::uint64_t state = tile_state(kInclusive, 0);
    if (previous >= 0) {
      // A volatile load reads L2, where the atomic stores land, without the atomics' round trip.
      do {
        state = *static_cast<volatile unsigned long long*>(&tile_states[previous]);
      } while ((state >> 32) == kNotReady);
    }
    const std::uint32_t inclusive = __ballot_sync(kFullWarp, (state >> 32) == kInclusive);
    // Lanes from the nearest inclusive tile on; all of them when there is none.
    const std::uint32_t from = inclusive != 0 ? 31 - __clz(inclusive) : 0;
    std::uint32_t sum = lane >= from ? static_cast<std::uint32_t>(state) : 0;
    for (std::uint32_t offset = kWarp / 2; offset > 0; offset /= 2) {
      sum += __shfl_xor_sync(kFullWarp, sum, offset);
    }
    before += sum;
    if (inclusive != 0) break;
  }
  if (lane == 0) atomicExch(&tile_states[tile], tile_state(kInclusive, before + tile_total));
  return before;
}

// Entries 0..words of words_before, in tiles of kTileWords; tile numbers come from `next_tile`
// in launch order, so every tile a block waits for belongs to a block already running. Words are
// loaded and ranks stored through shared memory (CUB's warp-transposing BlockLoad and
// BlockStore), so that every warp reads and writes whole consecutive sectors.
__global__ void __launch_bounds__(kScanThreads)
    rank_bitmap_words(const std::uint32_t* __restrict__ bitmap, std::uint64_t words,
                      std::uint32_t* __restrict__ words_before, unsigned long long* tile_states,
                      std::uint32_t* next_tile, std::uint32_t* host_count) {
  using Load =
      cub::BlockLoad<std::uint32_t, kScanThreads, kWordsPerThread, cub::BLOCK_LOAD_WARP_TRANSPOSE>;
  using Scan = cub::BlockScan<std::uint32_t, kScanThreads>;
  using Store = cub::BlockStore<std::uint32_t, kScanThreads, kWordsPerThread,
                                cub::BLOCK_STORE_WARP_TRANSPOSE>;
  __shared__ union {
    typename Load::TempStorage load;
    typename Scan::TempStorage scan;
    typename Store::TempStorage store;
  } temp;
  __shared__ std::uint32_t tile;
  __shared__ std::uint32_t tiles_before;
  wait_for_previous_kernel();
  if (threadIdx.x == 0) tile = atomicAdd(next_tile, 1u);
  __syncthreads();

  const std::uint64_t first = std::uint64_t{tile} * kTileWords;
  // Entry `words` is past the bitmap: it counts 0 and receives the total.
  const std::uint64_t tile_words = kTileWords;
  const auto loaded = static_cast<int>(min(tile_words, words - min(words, first)));
  const auto stored = static_cast<int>(min(tile_words, words + 1 - first));
  std::uint32_t counts[kWordsPerThread];
  Load(temp.load).Load(bitmap + first, counts, loaded, 0u);
  VOLCCL_UNROLL
  for (std::uint32_t& count : counts) count = popcount(count);
  __syncthreads();  // temp.load is reused
  std::uint32_t tile_total = 0;
  Scan(temp.scan).ExclusiveSum(counts, counts, tile_total);

  if (threadIdx.x < kWarp) {
    const std::uint32_t before = tiles_before_by_warp(tile, tile_total, tile_states);
    if (threadIdx.x == 0) tiles_before = before;
  }
  __syncthreads();
  VOLCCL_UNROLL
  for (std::uint32_t& count : counts) count += tiles_before;
  Store(temp.store).Store(words_before + first, counts, stored);
  // The tile of entry `words` holds the count.
  if (threadIdx.x == 0 && words - first < tile_words) *host_count = tiles_before + tile_total;
}

std::uint64_t scan_tiles(std::uint64_t words) { return (words + 1 + kTileWords - 1) / kTileWords; }

// Bytes before the bitmap: the tile states and the tile counter, rounded up to 256 so that the
// bitmap keeps the alignment of the allocation.
std::size_t scan_state_bytes(std::uint64_t words) {
  return (scan_tiles(words) * sizeof(unsigned long long) + sizeof(std::uint32_t) + 255) / 256 * 256;
}

// The scratch's offset: after words_before, rounded up to 256 bytes.
std::size_t scratch_offset(std::size_t state_bytes, std::uint64_t words) {
  return (state_bytes + (2 * words + 1) * sizeof(std::uint32_t) + 255) / 256 * 256;
}

}  // namespace

RootRanking::RootRanking(std::uint64_t voxel_count, cudaStream_t stream, std::size_t scratch_bytes)
    : words_(rank_words(voxel_count)),
      stream_(stream),
      state_bytes_(scan_state_bytes(words_)),
      scratch_offset_(scratch_offset(state_bytes_, words_)),
      storage_(scratch_offset_ + scratch_bytes, stream, "the root bitmap, its ranks and scratch"),
      bitmap_(reinterpret_cast<std::uint32_t*>(storage_.data() + state_bytes_)),
      words_before_(bitmap_ + words_) {}

ClearSpan RootRanking::clear_span() const {
  return {reinterpret_cast<std::uint32_t*>(storage_.data()),
          (state_bytes_ + words_ * sizeof(std::uint32_t)) / sizeof(std::uint32_t)};
}

void RootRanking::clear() {
  const ClearSpan span = clear_span();
  VOLCCL_CUDA_CHECK(cudaMemsetAsync(span.words, 0, span.count * sizeof(std::uint32_t), stream_));
}

void RootRanking::scan() {
  auto* tile_states = reinterpret_cast<unsigned long long*>(storage_.data());
  auto* next_tile = reinterpret_cast<std::uint32_t*>(tile_states + scan_tiles(words_));
  launch_after_previous(rank_bitmap_words, static_cast<unsigned>(scan_tiles(words_)), kScanThreads,
                        stream_, bitmap_, words_, words_before_, tile_states, next_tile,
                        count_.device());
}

}  // namespace volccl::detail
