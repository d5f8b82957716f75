// CUDA backend of HA4 and HA4-64 (HA4 paper Sec. IV, ha4_logic_2d.h): strip labeling with a
// block of kStripRows warps per strip and span (Alg. 3), border merging with a warp per chunk of
// a strip border or per span cut (Alg. 4), the roots compressed and marked, ranked with a CUB
// scan (raster_rank.h), and the final labeling with one root lookup and one shuffle per run
// (Alg. 5). Every kernel sees a row a chunk at a time, as a mask from __ballot_sync.
#include <cstdint>

#include "kernels2d/ha4_logic_2d.h"
#include "runtime/cuda_support.cuh"
#include "runtime/labeler.h"

namespace volccl::detail {
namespace {

using kernels2d::ha4::ImageGeometry;
using kernels2d::ha4::kChunkPixels;
using kernels2d::ha4::kPixelsPerLane;
using kernels2d::ha4::kSpanPixels;
using kernels2d::ha4::kStripRows;
using kernels2d::ha4::left_of_next;
using kernels2d::ha4::LeftNeighbour;
using kernels2d::ha4::PixelForest;
using kernels2d::ha4::RowChunk;

constexpr std::uint32_t kWarp = 32;
constexpr std::uint32_t kFullWarp = 0xFFFFFFFFu;
// The per-chunk kernels run blocks of 4 warps with one job each, as the paper's 32 x 4 blocks.
constexpr std::uint32_t kWarpsPerBlock = 4;

// The bytes of a chunk that the calling lane loads: pixel `lane` (HA4), or pixels `lane` and
// `lane` + 32 in bits 0-7 and 8-15 (HA4-64, Sec. IV-E), so that every load instruction of the
// warp reads 32 consecutive bytes. Pixels past the row's end are background.
template <class Mask>
__device__ std::uint32_t load_lane_pixels(const std::uint8_t* row, std::uint32_t x0,
                                          std::uint32_t width) {
  const std::uint32_t lane = threadIdx.x;
  const std::uint32_t remaining = width - x0;
  std::uint32_t bytes = lane < remaining ? __ldg(row + x0 + lane) : 0;
  if (kPixelsPerLane<Mask> == 2 && lane + kWarp < remaining) {
    bytes |= std::uint32_t{__ldg(row + x0 + lane + kWarp)} << 8;
  }
  return bytes;
}

// The chunk's mask from the lanes' bytes; HA4-64 joins two ballots into 64 bits (Sec. IV-E).
// Every lane of the warp must call it.
template <class Mask>
__device__ Mask ballot_chunk(std::uint32_t lane_bytes) {
  const std::uint32_t low = __ballot_sync(kFullWarp, (lane_bytes & 0xFFu) != 0);
  if constexpr (kPixelsPerLane<Mask> == 1) {
    return low;
  } else {
    const std::uint32_t high = __ballot_sync(kFullWarp, (lane_bytes >> 8) != 0);
    return Mask{low} | Mask{high} << 32;
  }
}

// The left neighbour of the chunk at x0 > 0 for a kernel that sees the chunk alone: the run
// ending the chunk before, by its chunk-local start.
template <class Mask>
__device__ LeftNeighbour left_neighbour(std::uint32_t left_bytes, std::uint32_t row_start,
                                        std::uint32_t x0) {
  const RowChunk<Mask> left{
      ballot_chunk<Mask>(left_bytes), row_start + x0 - kChunkPixels<Mask>, {}};
  return left_of_next(left);
}

// The positions `bits` holds among the calling lane's pixels, each passed to body(position).
template <class Mask, class Body>
__device__ void for_lane_positions(Mask bits, const Body& body) {
  const std::uint32_t first = threadIdx.x * kPixelsPerLane<Mask>;
  VOLCCL_UNROLL
  for (std::uint32_t i = 0; i < kPixelsPerLane<Mask>; ++i) {
    if (((bits >> (first + i)) & 1) != 0) body(first + i);
  }
}

// The job of the calling warp in the kernels that give each warp one job; false past the last.
// Every job count fits in 32 bits, as an image has fewer than 2^32 pixels.
__device__ bool warp_job(std::uint32_t jobs, std::uint32_t* job) {
  const std::uint64_t index = std::uint64_t{blockIdx.x} * kWarpsPerBlock + threadIdx.y;
  *job = static_cast<std::uint32_t>(index);
  return index < jobs;
}

// Alg. 3: block (32, kStripRows), a warp per row of the strip, blockIdx.x = strip * spans +
// span. The warps walk their span's chunks together: each writes its run starts, passes its
// mask to the warp below through shared memory, and after the barrier unites its runs with those
// of the row above. The masks are double-buffered by chunk parity, so a warp that runs ahead
// to the next chunk cannot overwrite a mask the warp below has yet to read; the next chunk's
// pixels are loaded before the unions, which then hide the load's latency.
template <int Connectivity, class Mask>
__global__ void __launch_bounds__(kWarp* kStripRows)
    label_strips(const std::uint8_t* __restrict__ mask, std::uint32_t* labels,
                 ImageGeometry geometry) {
  constexpr std::uint32_t kChunk = kChunkPixels<Mask>;
  __shared__ Mask shared_pixels[2][kStripRows];
  const std::uint32_t r = threadIdx.y;
  const std::uint32_t strip = blockIdx.x / geometry.spans;
  const std::uint32_t x_begin = (blockIdx.x - strip * geometry.spans) * kSpanPixels;
  const std::uint32_t span_width = min(kSpanPixels, geometry.width - x_begin);
  const std::uint32_t y = strip * kStripRows + r;
  const bool inside = y < geometry.height;
  const std::uint32_t row_start = inside ? y * geometry.width : 0;
  const std::uint8_t* row = mask + row_start;
  const PixelForest forest{labels};

  LeftNeighbour row_left, up_left;
  std::uint32_t next_bytes = inside ? load_lane_pixels<Mask>(row, x_begin, geometry.width) : 0;
  std::uint32_t parity = 0;
  for (std::uint32_t offset = 0; offset < span_width; offset += kChunk, parity ^= 1) {
    const std::uint32_t x0 = x_begin + offset;
    const RowChunk<Mask> chunk{ballot_chunk<Mask>(next_bytes), row_start + x0, row_left};
    if (inside && span_width - offset > kChunk) {
      next_bytes = load_lane_pixels<Mask>(row, x0 + kChunk, geometry.width);
    }
    for_lane_positions(kernels2d::ha4::piece_starts(chunk.pixels), [&](std::uint32_t position) {
      kernels2d::ha4::write_piece_start(labels, chunk, position);
    });
    if (threadIdx.x == 0) shared_pixels[parity][r] = chunk.pixels;
    __syncthreads();
    if (r > 0 && inside) {
      const RowChunk<Mask> up{shared_pixels[parity][r - 1], row_start - geometry.width + x0,
                              up_left};
      for_lane_positions(kernels2d::ha4::union_positions<Connectivity>(chunk, up),
                         [&](std::uint32_t position) {
                           kernels2d::ha4::unite_at<Connectivity>(forest, chunk, up, position);
                         });
      up_left = left_of_next(up);
    }
    row_left = left_of_next(chunk);
  }
}

// Alg. 4, a warp per job: jobs [0, strip_border_jobs) are the chunks of the row pairs across
// the strip borders (border b = job / chunks + 1, between rows b * kStripRows - 1 and
// b * kStripRows), the rest the span cuts of every row (row (job - strip_border_jobs) /
// (spans - 1)).
template <int Connectivity, class Mask>
__global__ void __launch_bounds__(kWarp* kWarpsPerBlock)
    merge_borders(const std::uint8_t* __restrict__ mask, std::uint32_t* labels,
                  ImageGeometry geometry, std::uint32_t strip_border_jobs, std::uint32_t jobs) {
  constexpr std::uint32_t kChunk = kChunkPixels<Mask>;
  std::uint32_t job;
  if (!warp_job(jobs, &job)) return;  // the whole warp
  const PixelForest forest{labels};
  const std::uint32_t width = geometry.width;

  if (job < strip_border_jobs) {
    const std::uint32_t y = (job / geometry.chunks + 1) * kStripRows;
    const std::uint32_t x0 = job % geometry.chunks * kChunk;
    const std::uint32_t row_start = y * width, up_start = row_start - width;
    // Every load before the first ballot, so that the warp waits for memory once.
    const std::uint32_t row_bytes = load_lane_pixels<Mask>(mask + row_start, x0, width);
    const std::uint32_t up_bytes = load_lane_pixels<Mask>(mask + up_start, x0, width);
    std::uint32_t row_left_bytes = 0, up_left_bytes = 0;
    if (x0 > 0) {
      row_left_bytes = load_lane_pixels<Mask>(mask + row_start, x0 - kChunk, width);
      up_left_bytes = load_lane_pixels<Mask>(mask + up_start, x0 - kChunk, width);
    }
    LeftNeighbour row_left, up_left;
    if (x0 > 0) {
      row_left = left_neighbour<Mask>(row_left_bytes, row_start, x0);
      up_left = left_neighbour<Mask>(up_left_bytes, up_start, x0);
    }
    const RowChunk<Mask> row{ballot_chunk<Mask>(row_bytes), row_start + x0, row_left};
    const RowChunk<Mask> up{ballot_chunk<Mask>(up_bytes), up_start + x0, up_left};
    for_lane_positions(kernels2d::ha4::union_positions<Connectivity>(row, up),
                       [&](std::uint32_t position) {
                         kernels2d::ha4::unite_at<Connectivity>(forest, row, up, position);
                       });
    return;
  }

  const std::uint32_t cut_job = job - strip_border_jobs;
  const std::uint32_t y = cut_job / (geometry.spans - 1);
  const std::uint32_t cut = (cut_job % (geometry.spans - 1) + 1) * kSpanPixels;
  const std::uint32_t row_start = y * width;
  // Diagonals across the cut between the rows of one strip; strip borders had theirs above.
  const bool diagonals = Connectivity == 8 && y % kStripRows != 0;
  const std::uint32_t up_start = diagonals ? row_start - width : row_start;
  const std::uint32_t row_bytes = load_lane_pixels<Mask>(mask + row_start, cut - kChunk, width);
  const std::uint32_t up_bytes =
      diagonals ? load_lane_pixels<Mask>(mask + up_start, cut - kChunk, width) : 0;
  const LeftNeighbour row_left = left_neighbour<Mask>(row_bytes, row_start, cut);
  const LeftNeighbour up_left =
      diagonals ? left_neighbour<Mask>(up_bytes, up_start, cut) : LeftNeighbour{};
  if (threadIdx.x == 0) {
    kernels2d::ha4::unite_across_cut<Connectivity>(
        forest, mask[row_start + cut] != 0, row_start + cut, row_left,
        diagonals && mask[up_start + cut] != 0, up_start + cut, up_left);
  }
}

// A warp per chunk of a row: job = row * chunks + chunk. Sets *row_start and *x0, returns the
// chunk's mask.
template <class Mask>
__device__ Mask chunk_of_job(const std::uint8_t* mask, const ImageGeometry& geometry,
                             std::uint32_t job, std::uint32_t* row_start, std::uint32_t* x0) {
  *row_start = job / geometry.chunks * geometry.width;
  *x0 = job % geometry.chunks * kChunkPixels<Mask>;
  return ballot_chunk<Mask>(load_lane_pixels<Mask>(mask + *row_start, *x0, geometry.width));
}

// Every chunk-local run start points at its root; roots mark their components.
template <class Mask>
__global__ void __launch_bounds__(kWarp* kWarpsPerBlock)
    compress_and_mark(const std::uint8_t* __restrict__ mask, std::uint32_t* labels,
                      std::uint32_t* root_bitmap, ImageGeometry geometry, std::uint32_t jobs) {
  std::uint32_t job;
  if (!warp_job(jobs, &job)) return;  // the whole warp
  std::uint32_t row_start, x0;
  const Mask pixels = chunk_of_job<Mask>(mask, geometry, job, &row_start, &x0);
  for_lane_positions(kernels2d::ha4::piece_starts(pixels), [&](std::uint32_t position) {
    kernels2d::ha4::compress_and_mark(labels, root_bitmap, row_start + x0 + position);
  });
}

// Alg. 5: the lane of each chunk-local run start reads the run's root and turns it into the
// component's label; every lane takes it from the lane of its run's start with one shuffle and
// writes its pixels, 0 on background. HA4-64 writes a lane's two pixels with one 8-byte store
// where aligned: the warp writes 256 consecutive bytes.
template <class Mask>
__global__ void __launch_bounds__(kWarp* kWarpsPerBlock)
    final_labeling(const std::uint8_t* __restrict__ mask, std::uint32_t* labels,
                   const std::uint32_t* __restrict__ root_bitmap,
                   const std::uint32_t* __restrict__ words_before, ImageGeometry geometry,
                   std::uint32_t jobs) {
  constexpr std::uint32_t kPerLane = kPixelsPerLane<Mask>;
  std::uint32_t job;
  if (!warp_job(jobs, &job)) return;  // the whole warp
  std::uint32_t row_start, x0;
  const Mask pixels = chunk_of_job<Mask>(mask, geometry, job, &row_start, &x0);
  std::uint32_t* out = labels + row_start + x0;

  std::uint32_t start_label = 0;
  for_lane_positions(kernels2d::ha4::piece_starts(pixels), [&](std::uint32_t position) {
    start_label = component_label(root_bitmap, words_before, out[position]);
  });
  const std::uint32_t label =
      __shfl_sync(kFullWarp, start_label, kernels2d::ha4::start_lane(pixels, threadIdx.x));

  const std::uint32_t first = threadIdx.x * kPerLane;
  const std::uint32_t count = geometry.width - x0;
  std::uint32_t values[kPerLane];
  VOLCCL_UNROLL
  for (std::uint32_t i = 0; i < kPerLane; ++i) {
    values[i] = ((pixels >> (first + i)) & 1) != 0 ? label : 0;
  }
  if constexpr (kPerLane == 2) {
    if (first + 1 < count && reinterpret_cast<std::uintptr_t>(out + first) % 8 == 0) {
      *reinterpret_cast<uint2*>(out + first) = uint2{values[0], values[1]};
      return;
    }
  }
  VOLCCL_UNROLL
  for (std::uint32_t i = 0; i < kPerLane; ++i) {
    if (first + i < count) out[first + i] = values[i];
  }
}

std::uint32_t blocks_for(std::uint32_t warp_jobs) {
  return static_cast<std::uint32_t>((std::uint64_t{warp_jobs} + kWarpsPerBlock - 1) /
                                    kWarpsPerBlock);
}

template <int Connectivity, class Mask>
void label_image(const std::uint8_t* mask, std::uint32_t* labels, const ImageGeometry& geometry,
                 DeviceLabeling& labeling) {
  const cudaStream_t stream = labeling.stream();
  const dim3 threads(kWarp, kStripRows);
  const auto strip_blocks =
      static_cast<std::uint32_t>(std::uint64_t{geometry.strips} * geometry.spans);
  label_strips<Connectivity, Mask><<<strip_blocks, threads, 0, stream>>>(mask, labels, geometry);
  VOLCCL_CUDA_CHECK(cudaGetLastError());
  labeling.end_step(&StepTimings::initialization_ms);

  const auto strip_border_jobs =
      static_cast<std::uint32_t>(std::uint64_t{geometry.strips - 1} * geometry.chunks);
  const auto merge_jobs = static_cast<std::uint32_t>(
      strip_border_jobs + std::uint64_t{geometry.height} * (geometry.spans - 1));
  if (merge_jobs > 0) {
    const dim3 warps(kWarp, kWarpsPerBlock);
    merge_borders<Connectivity, Mask><<<blocks_for(merge_jobs), warps, 0, stream>>>(
        mask, labels, geometry, strip_border_jobs, merge_jobs);
    VOLCCL_CUDA_CHECK(cudaGetLastError());
  }
  labeling.end_step(&StepTimings::merge_ms);

  const auto chunk_jobs =
      static_cast<std::uint32_t>(std::uint64_t{geometry.height} * geometry.chunks);
  const dim3 warps(kWarp, kWarpsPerBlock);
  compress_and_mark<Mask><<<blocks_for(chunk_jobs), warps, 0, stream>>>(
      mask, labels, labeling.root_bitmap(), geometry, chunk_jobs);
  VOLCCL_CUDA_CHECK(cudaGetLastError());
  labeling.end_step(&StepTimings::compression_ms);
  labeling.rank();
  final_labeling<Mask><<<blocks_for(chunk_jobs), warps, 0, stream>>>(
      mask, labels, labeling.root_bitmap(), labeling.words_before(), geometry, chunk_jobs);
  VOLCCL_CUDA_CHECK(cudaGetLastError());
  labeling.end_step(&StepTimings::final_labeling_ms);
}

}  // namespace

LabelResult label_ha4_2d_cuda(const DeviceLabelCall& call) {
  DeviceLabeling labeling(call);
  kernels2d::ha4::with_variant(
      call.options, call.extent,
      [&](auto connectivity, auto mask_type, const ImageGeometry& geometry) {
        using Mask = typename decltype(mask_type)::type;
        label_image<decltype(connectivity)::value, Mask>(call.mask, call.labels, geometry,
                                                         labeling);
      });
  return labeling.finish();
}

}  // namespace volccl::detail
