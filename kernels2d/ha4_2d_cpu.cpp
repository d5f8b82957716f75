// CPU backend of HA4 and HA4-64 (ha4_logic_2d.h): each kernel of the GPU version becomes a loop
// over the same jobs split among threads, a warp's chunk becomes a bitmask built from its bytes,
// and the lanes become a loop over the set bits of the masks the lanes would test. The unions
// use the same atomics, so both backends produce the same labels.
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "kernels2d/ha4_logic_2d.h"
#include "runtime/cpu_parallel.h"
#include "runtime/labeler.h"

namespace volccl::detail {
namespace {

using kernels2d::ha4::ImageGeometry;
using kernels2d::ha4::kChunkPixels;
using kernels2d::ha4::kSpanPixels;
using kernels2d::ha4::kStripRows;
using kernels2d::ha4::left_of_next;
using kernels2d::ha4::LeftNeighbour;
using kernels2d::ha4::PixelForest;
using kernels2d::ha4::RowChunk;

template <class Mask, class Body>
void for_each_set_bit(Mask bits, const Body& body) {
  for (; bits != 0; bits &= bits - 1) body(static_cast<std::uint32_t>(lowest_bit(bits)));
}

// What __ballot_sync gives the warp on the GPU: bit i set when pixel x0 + i of the row is
// foreground; pixels past the row's end are background.
template <class Mask>
Mask chunk_pixels(const std::uint8_t* row, std::uint32_t x0, std::uint32_t width) {
  const std::uint32_t count = std::min(kChunkPixels<Mask>, width - x0);
  Mask pixels = 0;
  for (std::uint32_t i = 0; i < count; ++i) {
    pixels |= static_cast<Mask>(row[x0 + i] != 0) << i;
  }
  return pixels;
}

template <class Mask>
RowChunk<Mask> row_chunk(const std::uint8_t* mask, const ImageGeometry& geometry, std::uint32_t y,
                         std::uint32_t x0, LeftNeighbour left) {
  const std::uint32_t row_start = y * geometry.width;
  return RowChunk<Mask>{chunk_pixels<Mask>(mask + row_start, x0, geometry.width), row_start + x0,
                        left};
}

// A chunk seen by a kernel that handles it alone: its left neighbour's node is the chunk-local
// start of the run that ends the chunk before.
template <class Mask>
RowChunk<Mask> row_chunk_with_left(const std::uint8_t* mask, const ImageGeometry& geometry,
                                   std::uint32_t y, std::uint32_t x0) {
  LeftNeighbour left;
  if (x0 > 0) {
    left = left_of_next(row_chunk<Mask>(mask, geometry, y, x0 - kChunkPixels<Mask>, {}));
  }
  return row_chunk<Mask>(mask, geometry, y, x0, left);
}

// Strip labeling (Alg. 3): per block of kStripRows rows by a span, the chunks from left to
// right, and within a chunk the rows from top to bottom, so the row above has written its run
// starts before the row below unites with them (what __syncthreads orders on the GPU).
template <int Connectivity, class Mask>
void label_strips(const std::uint8_t* mask, std::uint32_t* labels, const ImageGeometry& geometry,
                  unsigned threads) {
  const PixelForest forest{labels};
  const std::uint64_t blocks = std::uint64_t{geometry.strips} * geometry.spans;
  parallel_for(blocks, threads, [&](std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t block = begin; block < end; ++block) {
      const auto first_row = static_cast<std::uint32_t>(block / geometry.spans) * kStripRows;
      const auto x_begin = static_cast<std::uint32_t>(block % geometry.spans) * kSpanPixels;
      const std::uint32_t rows = std::min(kStripRows, geometry.height - first_row);
      const std::uint32_t span_width = std::min(kSpanPixels, geometry.width - x_begin);
      LeftNeighbour left[kStripRows] = {};
      for (std::uint32_t offset = 0; offset < span_width; offset += kChunkPixels<Mask>) {
        RowChunk<Mask> up;
        for (std::uint32_t r = 0; r < rows; ++r) {
          const RowChunk<Mask> row =
              row_chunk<Mask>(mask, geometry, first_row + r, x_begin + offset, left[r]);
          for_each_set_bit(kernels2d::ha4::piece_starts(row.pixels), [&](std::uint32_t position) {
            kernels2d::ha4::write_piece_start(labels, row, position);
          });
          if (r > 0) {
            for_each_set_bit(kernels2d::ha4::union_positions<Connectivity>(row, up),
                             [&](std::uint32_t position) {
                               kernels2d::ha4::unite_at<Connectivity>(forest, row, up, position);
                             });
          }
          left[r] = left_of_next(row);
          up = row;
        }
      }
    }
  });
}

// Border merging (Alg. 4): the jobs of the GPU's warps, first the chunks of the row pairs
// across strip borders, then the span cuts of every row.
template <int Connectivity, class Mask>
void merge_borders(const std::uint8_t* mask, std::uint32_t* labels, const ImageGeometry& geometry,
                   unsigned threads) {
  const PixelForest forest{labels};
  const std::uint64_t strip_border_jobs = std::uint64_t{geometry.strips - 1} * geometry.chunks;
  const std::uint64_t cut_jobs = std::uint64_t{geometry.height} * (geometry.spans - 1);
  parallel_for(strip_border_jobs + cut_jobs, threads, [&](std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t job = begin; job < end; ++job) {
      if (job < strip_border_jobs) {
        const auto y = static_cast<std::uint32_t>(job / geometry.chunks + 1) * kStripRows;
        const auto x0 = static_cast<std::uint32_t>(job % geometry.chunks) * kChunkPixels<Mask>;
        const RowChunk<Mask> row = row_chunk_with_left<Mask>(mask, geometry, y, x0);
        const RowChunk<Mask> up = row_chunk_with_left<Mask>(mask, geometry, y - 1, x0);
        for_each_set_bit(kernels2d::ha4::union_positions<Connectivity>(row, up),
                         [&](std::uint32_t position) {
                           kernels2d::ha4::unite_at<Connectivity>(forest, row, up, position);
                         });
        continue;
      }
      const std::uint64_t cut_job = job - strip_border_jobs;
      const auto y = static_cast<std::uint32_t>(cut_job / (geometry.spans - 1));
      const auto cut = static_cast<std::uint32_t>(cut_job % (geometry.spans - 1) + 1) * kSpanPixels;
      const std::uint32_t row_cut = y * geometry.width + cut;
      const LeftNeighbour row_left =
          left_of_next(row_chunk<Mask>(mask, geometry, y, cut - kChunkPixels<Mask>, {}));
      const bool diagonals = Connectivity == 8 && y % kStripRows != 0;
      const LeftNeighbour up_left =
          diagonals
              ? left_of_next(row_chunk<Mask>(mask, geometry, y - 1, cut - kChunkPixels<Mask>, {}))
              : LeftNeighbour{};
      kernels2d::ha4::unite_across_cut<Connectivity>(
          forest, mask[row_cut] != 0, row_cut, row_left,
          diagonals && mask[row_cut - geometry.width] != 0, row_cut - geometry.width, up_left);
    }
  });
}

// Calls chunk_body(row, pixels in the chunk) for every chunk of every row, rows split among
// threads.
template <class Mask, class ChunkBody>
void for_each_chunk(const std::uint8_t* mask, const ImageGeometry& geometry, unsigned threads,
                    const ChunkBody& chunk_body) {
  parallel_for(geometry.height, threads, [&](std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t y = begin; y < end; ++y) {
      for (std::uint32_t chunk = 0; chunk < geometry.chunks; ++chunk) {
        const std::uint32_t x0 = chunk * kChunkPixels<Mask>;
        chunk_body(row_chunk<Mask>(mask, geometry, static_cast<std::uint32_t>(y), x0, {}),
                   std::min(kChunkPixels<Mask>, geometry.width - x0));
      }
    }
  });
}

template <class Mask>
void compress_and_mark(const std::uint8_t* mask, std::uint32_t* labels, std::uint32_t* bitmap,
                       const ImageGeometry& geometry, unsigned threads) {
  for_each_chunk<Mask>(mask, geometry, threads, [&](const RowChunk<Mask>& row, std::uint32_t) {
    for_each_set_bit(kernels2d::ha4::piece_starts(row.pixels), [&](std::uint32_t position) {
      kernels2d::ha4::compress_and_mark(labels, bitmap, row.base + position);
    });
  });
}

// Final labeling (Alg. 5): each chunk-local run start turns its root into the component's
// label, which fills the run (end_distance pixels); background gets 0.
template <class Mask>
void final_labeling(const std::uint8_t* mask, std::uint32_t* labels, const std::uint32_t* bitmap,
                    const std::uint32_t* words_before, const ImageGeometry& geometry,
                    unsigned threads) {
  for_each_chunk<Mask>(
      mask, geometry, threads, [&](const RowChunk<Mask>& row, std::uint32_t count) {
        std::uint32_t* out = labels + row.base;
        std::uint32_t position = 0;
        for_each_set_bit(kernels2d::ha4::piece_starts(row.pixels), [&](std::uint32_t start) {
          for (; position < start; ++position) out[position] = 0;
          const std::uint32_t label = component_label(bitmap, words_before, out[start]);
          const std::uint32_t end = start + kernels2d::ha4::end_distance(row.pixels, start);
          for (; position < end; ++position) out[position] = label;
        });
        for (; position < count; ++position) out[position] = 0;
      });
}

template <int Connectivity, class Mask>
void label_image(const std::uint8_t* mask, std::uint32_t* labels, const ImageGeometry& geometry,
                 HostLabeling& labeling) {
  const unsigned threads = labeling.threads();
  label_strips<Connectivity, Mask>(mask, labels, geometry, threads);
  labeling.end_step(&StepTimings::initialization_ms);
  merge_borders<Connectivity, Mask>(mask, labels, geometry, threads);
  labeling.end_step(&StepTimings::merge_ms);
  compress_and_mark<Mask>(mask, labels, labeling.root_bitmap(), geometry, threads);
  labeling.end_step(&StepTimings::compression_ms);
  labeling.rank();
  final_labeling<Mask>(mask, labels, labeling.root_bitmap(), labeling.words_before(), geometry,
                       threads);
  labeling.end_step(&StepTimings::final_labeling_ms);
}

}  // namespace

LabelResult label_ha4_2d_cpu(const HostLabelCall& call) {
  HostLabeling labeling(call.extent, call.options);
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
