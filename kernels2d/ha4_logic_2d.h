// Segment logic of HA4, the warp-level run-based labeler of Hennequin, Lacassagne, Cabaret and
// Meunier (DASIP 2018, Sec. IV), written once for the CUDA kernels (ha4_2d.cu) and the CPU
// backend (ha4_2d_cpu.cpp).
//
// A warp sees one row of the image a chunk at a time: 32 pixels (HA4, one per thread) or 64
// (HA4-64, two per thread, Sec. IV-E), as a bitmask that __ballot_sync builds on the GPU and a
// loop over the bytes builds on the CPU. Everything below works on those masks: the runs of
// foreground ("segments") and where they start come from the distance operators (Alg. 1 and 7),
// and the unions between the runs of two rows are the positions of a few bitwise expressions,
// so the GPU lane tests its bits and the CPU loops over the set bits of the same mask.
//
// Union-find nodes (the numbering contract of raster_rank.h): the node of a run is the raster
// index of its start and its parent lives in the label image there. A run that enters a chunk
// from the left also has a node at the chunk's first pixel, whose parent is the run's start
// (Alg. 3 line 10), so a kernel that sees one chunk finds a node for every run it sees. Every
// parent is a smaller index and Union links the larger root under the smaller, so each root is
// its component's first pixel in raster order.
//
// Strip labeling (Alg. 3) works on blocks of kStripRows rows by kSpanPixels columns and cuts
// the runs at a block's left edge, where a run gets a node of its own (a root until merging), as
// the block must not read the nodes of its left neighbour, which it may not have written yet.
// Border merging (Alg. 4) unites the runs of the rows on either side of each strip border, and
// joins the runs cut at each span's left edge.
#pragma once

#include <cstdint>
#include <type_traits>

#include "runtime/host_device.h"
#include "runtime/raster_rank.h"
#include "runtime/union_find.h"
#include "volccl/types.h"

namespace volccl::kernels2d::ha4 {

// The paper's block of 32 x 4 threads: a warp per row of a 4-row strip (Sec. IV-A).
constexpr std::uint32_t kStripRows = 4;
// Columns of a strip labeled by one block. The paper loops over the whole width; a block per
// span gives the GPU more warps on images of a few thousand rows, at the price of the cuts that
// border merging joins. Spans of 128, 256 and 512 measured about the same (bench/notes/2d.md).
constexpr std::uint32_t kSpanPixels = 512;

template <class Mask>
constexpr std::uint32_t kChunkPixels = 8 * sizeof(Mask);  // 32 (HA4) or 64 (HA4-64)
template <class Mask>
constexpr std::uint32_t kPixelsPerLane = kChunkPixels<Mask> / 32;

struct ImageGeometry {
  std::uint32_t width = 1, height = 1;
  std::uint32_t chunks = 1;  // chunks per row
  std::uint32_t spans = 1;   // spans per row
  std::uint32_t strips = 1;
};

template <class Mask>
ImageGeometry make_geometry(Extent3 extent) {
  ImageGeometry geometry;
  geometry.width = static_cast<std::uint32_t>(extent.x);
  geometry.height = static_cast<std::uint32_t>(extent.y);
  geometry.chunks =
      static_cast<std::uint32_t>((extent.x + kChunkPixels<Mask> - 1) / kChunkPixels<Mask>);
  geometry.spans = static_cast<std::uint32_t>((extent.x + kSpanPixels - 1) / kSpanPixels);
  geometry.strips = static_cast<std::uint32_t>((extent.y + kStripRows - 1) / kStripRows);
  return geometry;
}

// --- distance operators (Alg. 1 and 7) ---------------------------------------------------------

VOLCCL_HD std::uint32_t leading_zeros(std::uint32_t bits) {
#if defined(__CUDA_ARCH__)
  return static_cast<std::uint32_t>(__clz(static_cast<int>(bits)));
#else
  return bits == 0 ? 32 : static_cast<std::uint32_t>(__builtin_clz(bits));
#endif
}

VOLCCL_HD std::uint32_t leading_zeros(std::uint64_t bits) {
#if defined(__CUDA_ARCH__)
  return static_cast<std::uint32_t>(__clzll(static_cast<long long>(bits)));
#else
  return bits == 0 ? 64 : static_cast<std::uint32_t>(__builtin_clzll(bits));
#endif
}

// start_distance (Alg. 1, Alg. 7 for 64 bits): how many foreground pixels lie right before
// `position` in the chunk; 0 at the start of a run. Position kChunkPixels gives the length of
// the run that ends the chunk. The paper's shift by 32 - position is written out for position
// 0, where C++ leaves a shift by the full width undefined.
template <class Mask>
VOLCCL_HD std::uint32_t start_distance(Mask pixels, std::uint32_t position) {
  if (position == 0) return 0;
  return leading_zeros(static_cast<Mask>(~(pixels << (kChunkPixels<Mask> - position))));
}

// end_distance (Alg. 1): at a foreground pixel, how many pixels of its run lie from it to the
// run's end within the chunk; at the start of a run, the run's length.
template <class Mask>
VOLCCL_HD std::uint32_t end_distance(Mask pixels, std::uint32_t position) {
  if (position + 1 == kChunkPixels<Mask>) return 1;
  return static_cast<std::uint32_t>(
             detail::lowest_bit(static_cast<Mask>(~(pixels >> (position + 1))))) +
         1;
}

// The first foreground pixel among a lane's pixels, or its last pixel when it has none: the
// pixel whose start_distance tells the lane where its run starts (Alg. 7's "txb").
template <class Mask>
VOLCCL_HD std::uint32_t lane_pixel(Mask pixels, std::uint32_t lane) {
  const std::uint32_t first = lane * kPixelsPerLane<Mask>;
  if (kPixelsPerLane<Mask> == 1) return first;
  return first + static_cast<std::uint32_t>(((pixels >> first) & 1) == 0);
}

// The lane that holds the chunk-local start of the run of the calling lane's foreground pixels
// (Alg. 5's tx - s_dist): where the final labeling takes the run's label from. A lane of HA4-64
// holds at most one run start, as a run start at its second pixel needs background at its first.
template <class Mask>
VOLCCL_HD std::uint32_t start_lane(Mask pixels, std::uint32_t lane) {
  const std::uint32_t pixel = lane_pixel(pixels, lane);
  return (pixel - start_distance(pixels, pixel)) / kPixelsPerLane<Mask>;
}

// Chunk-local run starts: the pixels whose left neighbour in the chunk is background, the
// chunk's first pixel included. Each holds a node (see the file comment).
template <class Mask>
VOLCCL_HD Mask piece_starts(Mask pixels) {
  return pixels & static_cast<Mask>(~(pixels << 1));
}

// --- a row's chunk and its runs ----------------------------------------------------------------

// The pixel left of a chunk, in the same row: whether it is foreground (and joined to the chunk
// in this kernel) and the node of its run.
struct LeftNeighbour {
  bool foreground = false;
  std::uint32_t node = 0;
};

template <class Mask>
struct RowChunk {
  Mask pixels = 0;         // bit i: pixel base + i is foreground
  std::uint32_t base = 0;  // raster index of the chunk's first pixel
  LeftNeighbour left;
};

// Bit i set when pixel i - 1 of the row is foreground.
template <class Mask>
VOLCCL_HD Mask left_neighbours(const RowChunk<Mask>& row) {
  return static_cast<Mask>(row.pixels << 1) | static_cast<Mask>(row.left.foreground);
}

// The node of the run holding foreground pixel `position`: the run's start in the chunk, or the
// left neighbour's node when the run enters the chunk from the left.
template <class Mask>
VOLCCL_HD std::uint32_t node_of(const RowChunk<Mask>& row, std::uint32_t position) {
  const std::uint32_t distance = start_distance(row.pixels, position);
  return distance == position && row.left.foreground ? row.left.node
                                                     : row.base + position - distance;
}

// The node of the run holding pixel `position` - 1, which must be foreground.
template <class Mask>
VOLCCL_HD std::uint32_t node_before(const RowChunk<Mask>& row, std::uint32_t position) {
  return position == 0 ? row.left.node : node_of(row, position - 1);
}

// What the next chunk of the row sees on its left (Alg. 3 lines 23-26).
template <class Mask>
VOLCCL_HD LeftNeighbour left_of_next(const RowChunk<Mask>& row) {
  constexpr std::uint32_t last = kChunkPixels<Mask> - 1;
  LeftNeighbour next;
  next.foreground = ((row.pixels >> last) & 1) != 0;
  if (next.foreground) next.node = node_of(row, last);
  return next;
}

// --- unions between the runs of a row and the row above (Alg. 3 lines 19-22, Alg. 4) ----------

// The positions where a run of `row` is united with a run of `up`, one per pair of runs that
// touch. 4-connectivity (the paper): where two runs overlap and one of them starts. 8: runs
// [s, e] and [s', e'] touch when s' <= e + 1 and s <= e' + 1; their union sits at max(s, s'):
// at s when the run above holds s - 1 or s, else at s', where the run above starts right after
// a pixel of the run of `row`. Every position needs only the pixels at it and on its left, so a
// chunk needs no more than its left neighbours.
template <int Connectivity, class Mask>
VOLCCL_HD Mask union_positions(const RowChunk<Mask>& row, const RowChunk<Mask>& up) {
  const Mask row_left = left_neighbours(row);
  const Mask up_left = left_neighbours(up);
  if (Connectivity == 4) return row.pixels & up.pixels & static_cast<Mask>(~(row_left & up_left));
  const Mask row_starts_touching =
      row.pixels & static_cast<Mask>(~row_left) & (up.pixels | up_left);
  const Mask up_starts_touching = up.pixels & static_cast<Mask>(~up_left) & row_left;
  return row_starts_touching | up_starts_touching;
}

// The union at a position of union_positions (Alg. 2's merge, through union_find.h's Union).
template <int Connectivity, class Mask, class Forest>
VOLCCL_HD void unite_at(const Forest& forest, const RowChunk<Mask>& row, const RowChunk<Mask>& up,
                        std::uint32_t position) {
  if (Connectivity == 4) {
    detail::unite(forest, node_of(row, position), node_of(up, position));
    return;
  }
  const Mask bit = Mask{1} << position;
  if ((left_neighbours(row) & bit) != 0) {
    // A run above starts at `position`, next to the run of `row` on its left.
    detail::unite(forest, node_before(row, position), node_of(up, position));
  } else {
    // A run of `row` starts at `position`: the run above on its left, else the one over it.
    const std::uint32_t above =
        (left_neighbours(up) & bit) != 0 ? node_before(up, position) : node_of(up, position);
    detail::unite(forest, node_of(row, position), above);
  }
}

// Border merging at the left edge of a span, where strip labeling cut the runs: pixel `cut` of
// the row (and of the row above, when the cut is inside a strip and diagonals count) starts a
// run there, and the runs ending right before it are `row_left` and `up_left`.
template <int Connectivity, class Forest>
VOLCCL_HD void unite_across_cut(const Forest& forest, bool row_at_cut, std::uint32_t row_cut,
                                LeftNeighbour row_left, bool up_at_cut, std::uint32_t up_cut,
                                LeftNeighbour up_left) {
  if (row_at_cut && row_left.foreground) detail::unite(forest, row_cut, row_left.node);
  if (Connectivity == 8) {
    if (row_at_cut && up_left.foreground) detail::unite(forest, row_cut, up_left.node);
    if (up_at_cut && row_left.foreground) detail::unite(forest, up_cut, row_left.node);
  }
}

// --- per-node steps -----------------------------------------------------------------------------

// The union-find forest: a node's parent is stored at its pixel.
struct PixelForest {
  std::uint32_t* labels;
  VOLCCL_HD std::uint32_t* slot(std::uint32_t pixel) const { return labels + pixel; }
};

// Strip labeling (Alg. 3 lines 9-10): a chunk-local run start takes its run's node, itself at
// the start of a run.
template <class Mask>
VOLCCL_HD void write_piece_start(std::uint32_t* labels, const RowChunk<Mask>& row,
                                 std::uint32_t position) {
  labels[row.base + position] = node_of(row, position);
}

// After merging: the node at chunk-local run start `pixel` points straight at its root, and a
// root marks its component for the ranking. Afterwards every chunk-local run start holds its
// root, so the final labeling reads one word per run and writes over the forest safely.
VOLCCL_HD void compress_and_mark(std::uint32_t* labels, std::uint32_t* root_bitmap,
                                 std::uint32_t pixel) {
  const std::uint32_t root = detail::compress(PixelForest{labels}, labels + pixel);
  if (root == pixel) detail::mark_component_start(root_bitmap, root);
}

// Calls label(connectivity, mask_type, geometry) for the variant `options` ask for: connectivity
// a std::integral_constant<int, 4 or 8>, mask_type a std::common_type of the chunk mask
// (uint32 for HA4, uint64 for HA4-64), geometry the image's chunks for that mask.
template <class Label>
void with_variant(const LabelOptions& options, Extent3 extent, const Label& label) {
  const auto with_mask = [&](auto mask_type) {
    using Mask = typename decltype(mask_type)::type;
    const ImageGeometry geometry = make_geometry<Mask>(extent);
    if (options.connectivity == 4) {
      label(std::integral_constant<int, 4>{}, mask_type, geometry);
    } else {
      label(std::integral_constant<int, 8>{}, mask_type, geometry);
    }
  };
  if (options.algorithm == Algorithm::ha4_64) {
    with_mask(std::common_type<std::uint64_t>{});
  } else {
    with_mask(std::common_type<std::uint32_t>{});
  }
}

}  // namespace volccl::kernels2d::ha4
