// Logic of TM, Tile Merging (Oliveira and Lotufo; Stava and Benes; summarized in the LE/TM paper
// Sec. II-A and III-C), written once for the CUDA kernels (tm_2d.cu) and the CPU backend
// (tm_2d_cpu.cpp). Three kernels, as in the paper's description:
// - Local Merge: each tile of kTileWidth x kTileHeight pixels (one thread block, a thread per
//   pixel) labels itself in shared memory with union-find (the Unions of UF's Merge,
//   uf_ke_logic_2d.h, inside the tile), then writes every pixel's tile root as a global raster
//   index: after it, the label image is a forest whose trees do not cross tile borders.
// - Global Merge, one launch per level: level k joins the tiles in groups of 2 x 2 tiles of the
//   previous level (kTileWidth 2^k x kTileHeight 2^k pixels) by Unions across the two seams
//   inside each group, a thread per seam pixel; between levels the pixels on the groups' borders,
//   the only ones later levels read, are path-compressed (Stava's border update).
// - Path Compression of every pixel, which also marks the roots for the ranking.
// Union links the larger root under the smaller (union_find.h), so every root is its
// component's first pixel in raster order, and the raster-order ranking (raster_rank.h, the
// paper's Sequential Relabeling, App. C) numbers the components as scipy and ITK do. The level
// count (LabelResult::iterations) is the number of Global Merge levels: 0 when the image is one
// tile, else ceil(log2) of the tiles along the longer side (in tiles).
#pragma once

#include <cstdint>

#include "kernels2d/uf_ke_logic_2d.h"
#include "runtime/host_device.h"
#include "runtime/union_find.h"
#include "volccl/types.h"

namespace volccl::kernels2d {

constexpr std::uint32_t kTileWidth = 32;
constexpr std::uint32_t kTileHeight = 16;

// A tile's first pixel and its size, smaller than kTileWidth x kTileHeight at the image's right
// and bottom edges.
struct Tile {
  std::uint32_t x0, y0, width, height;
};

VOLCCL_HD Tile tile_at(const PixelGrid& grid, std::uint32_t tile_x, std::uint32_t tile_y) {
  Tile tile{tile_x * kTileWidth, tile_y * kTileHeight, 0, 0};
  tile.width = grid.width - tile.x0 < kTileWidth ? grid.width - tile.x0 : kTileWidth;
  tile.height = grid.height - tile.y0 < kTileHeight ? grid.height - tile.y0 : kTileHeight;
  return tile;
}

// The forest of a tile in shared memory during the Local Merge, whose threads unite at the same
// time: Union and Find with path halving (union_find.h), but with every write an atomicMin,
// halving's too. A plain store beside another thread's load of the same slot is a race to
// compute-sanitizer's racecheck, while loads beside atomics are not; and a parent only ever
// decreases, to an ancestor, so the minimum keeps whichever shortcut is shorter.
struct TileForest {
  std::uint32_t* parents;

  VOLCCL_HD std::uint32_t root(std::uint32_t node) const {
    for (;;) {
      const std::uint32_t parent = detail::load_relaxed(parents + node);
      if (parent == node) return node;
      const std::uint32_t grandparent = detail::load_relaxed(parents + parent);
      if (grandparent == parent) return parent;
      detail::atomic_min(parents + node, grandparent);
      node = grandparent;
    }
  }

  VOLCCL_HD std::uint32_t unite(std::uint32_t a, std::uint32_t b) const {
    a = root(a);
    b = root(b);
    while (a != b) {
      if (a > b) {
        const std::uint32_t larger = a;
        a = b;
        b = larger;
      }
      const std::uint32_t old = detail::atomic_min(parents + b, a);
      if (old == b) return a;
      b = root(old);
      a = root(a);
    }
    return a;
  }
};

// Local Merge, in three phases separated by a barrier (__syncthreads on the GPU, the end of a
// loop on the CPU), each called for every pixel (x, y) of the tile (tile coordinates). `local` is
// the tile's forest, kTileWidth x kTileHeight slots in shared memory, keyed by x + kTileWidth y,
// an order that is the raster order.
template <int Connectivity>
struct TmLocalMerge {
  const std::uint8_t* mask;
  std::uint32_t* labels;

  VOLCCL_HD std::uint32_t global_index(const PixelGrid& grid, const Tile& tile, std::uint32_t x,
                                       std::uint32_t y) const {
    return (tile.y0 + y) * grid.width + tile.x0 + x;
  }

  VOLCCL_HD void initialize(const PixelGrid& grid, const Tile& tile, std::uint32_t x,
                            std::uint32_t y, std::uint32_t* local) const {
    const std::uint32_t key = x + kTileWidth * y;
    local[key] = mask[global_index(grid, tile, x, y)] != 0 ? key : kNoParent;
  }

  VOLCCL_HD void merge(const PixelGrid& grid, const Tile& tile, std::uint32_t x, std::uint32_t y,
                       std::uint32_t* local) const {
    const std::uint32_t index = global_index(grid, tile, x, y);
    if (mask[index] == 0) return;
    const std::uint32_t above = index - grid.width;
    EarlierNeighbours seen{false, false, false, false};
    seen.left = x > 0 && mask[index - 1] != 0;
    if (y > 0) {
      seen.up_left = x > 0 && mask[above - 1] != 0;
      seen.up = mask[above] != 0;
      seen.up_right = x + 1 < tile.width && mask[above + 1] != 0;
    }
    const std::uint32_t key = x + kTileWidth * y;
    const std::uint32_t key_above = key - kTileWidth;
    unite_earlier<Connectivity>(TileForest{local}, seen, key, key - 1, key_above - 1, key_above,
                                key_above + 1);
  }

  VOLCCL_HD void write(const PixelGrid& grid, const Tile& tile, std::uint32_t x, std::uint32_t y,
                       const std::uint32_t* local) const {
    const std::uint32_t key = x + kTileWidth * y;
    std::uint32_t root = local[key];
    if (root != kNoParent) {
      while (local[root] != root) root = local[root];
      root = global_index(grid, tile, root % kTileWidth, root / kTileWidth);
    }
    labels[global_index(grid, tile, x, y)] = root;
  }
};

// One Global Merge level: its groups of 2 x 2 tiles of the previous level and how many seams
// inside them cross the image, vertical (columns x = group_width (j + 1/2)) and horizontal (rows
// y = group_height (j + 1/2)).
struct MergeLevel {
  std::uint64_t group_width, group_height;
  std::uint32_t seam_columns, seam_rows;

  VOLCCL_HD std::uint64_t seam_pixels(const PixelGrid& grid) const {
    return std::uint64_t{seam_columns} * grid.height + std::uint64_t{seam_rows} * grid.width;
  }
  // Columns x = group_width j and group_width (j + 1) - 1 for every group j, and the same rows.
  VOLCCL_HD std::uint32_t border_columns(const PixelGrid& grid) const {
    return static_cast<std::uint32_t>(2 * ((grid.width + group_width - 1) / group_width));
  }
  VOLCCL_HD std::uint32_t border_rows(const PixelGrid& grid) const {
    return static_cast<std::uint32_t>(2 * ((grid.height + group_height - 1) / group_height));
  }
  VOLCCL_HD std::uint64_t border_pixels(const PixelGrid& grid) const {
    return std::uint64_t{border_columns(grid)} * grid.height +
           std::uint64_t{border_rows(grid)} * grid.width;
  }
};

inline std::uint32_t seams_across(std::uint64_t side, std::uint64_t group) {
  return side <= group / 2 ? 0 : static_cast<std::uint32_t>((side - group / 2 - 1) / group + 1);
}

inline MergeLevel merge_level(const PixelGrid& grid, unsigned level) {
  MergeLevel merge{std::uint64_t{kTileWidth} << level, std::uint64_t{kTileHeight} << level, 0, 0};
  merge.seam_columns = seams_across(grid.width, merge.group_width);
  merge.seam_rows = seams_across(grid.height, merge.group_height);
  return merge;
}

// Levels until one group covers the image.
inline unsigned merge_level_count(const PixelGrid& grid) {
  unsigned levels = 0;
  while ((std::uint64_t{kTileWidth} << levels) < grid.width ||
         (std::uint64_t{kTileHeight} << levels) < grid.height) {
    ++levels;
  }
  return levels;
}

// Global Merge: seam pixel `item` (the vertical seams' pixels first, a seam's rows consecutive
// in item order across seams; then the horizontal seams', x fastest) unites with its foreground
// neighbours on the other side of the seam. At 8-connectivity the two diagonal ones are skipped
// when the one straight across is foreground: they touch it, and are or will be joined to it.
template <int Connectivity>
struct TmMergeSeams {
  const std::uint8_t* mask;
  std::uint32_t* labels;
  MergeLevel level;

  VOLCCL_HD void operator()(const PixelGrid& grid, std::uint64_t item) const {
    const std::uint64_t vertical = std::uint64_t{level.seam_columns} * grid.height;
    std::uint32_t index, across, step, along, length;
    if (item < vertical) {
      const auto y = static_cast<std::uint32_t>(item / level.seam_columns);
      const auto x = static_cast<std::uint32_t>(level.group_width * (item % level.seam_columns) +
                                                level.group_width / 2);
      index = y * grid.width + x;
      across = index - 1;
      step = grid.width;
      along = y;
      length = grid.height;
    } else {
      item -= vertical;
      const auto x = static_cast<std::uint32_t>(item % grid.width);
      const auto y = static_cast<std::uint32_t>(level.group_height * (item / grid.width) +
                                                level.group_height / 2);
      index = y * grid.width + x;
      across = index - grid.width;
      step = 1;
      along = x;
      length = grid.width;
    }
    if (mask[index] == 0) return;
    const PixelForest forest{labels};
    if (mask[across] != 0) {
      detail::unite(forest, index, across);
      return;
    }
    if (Connectivity == 4) return;
    std::uint32_t node = index;
    if (along > 0 && mask[across - step] != 0) node = detail::unite(forest, node, across - step);
    if (along + 1 < length && mask[across + step] != 0) detail::unite(forest, node, across + step);
  }
};

// Between levels: path compression of the pixels on the borders of the level's groups, where
// the next levels' seams lie, so that their Finds are short. Items: border columns first (a
// column's rows consecutive across columns), then border rows.
struct TmCompressBorders {
  std::uint32_t* labels;
  MergeLevel level;

  VOLCCL_HD void operator()(const PixelGrid& grid, std::uint64_t item) const {
    const std::uint32_t columns = level.border_columns(grid);
    const std::uint64_t vertical = std::uint64_t{columns} * grid.height;
    std::uint64_t x, y;
    if (item < vertical) {
      const std::uint64_t border = item % columns;
      y = item / columns;
      x = level.group_width * (border / 2) + (border % 2 != 0 ? level.group_width - 1 : 0);
    } else {
      item -= vertical;
      const std::uint64_t border = item / grid.width;
      x = item % grid.width;
      y = level.group_height * (border / 2) + (border % 2 != 0 ? level.group_height - 1 : 0);
    }
    if (x >= grid.width || y >= grid.height) return;
    std::uint32_t* slot = labels + (static_cast<std::uint32_t>(y) * grid.width + x);
    if (detail::load_relaxed(slot) != kNoParent) detail::compress(PixelForest{labels}, slot);
  }
};

// The step sequence of TM, written once for both backends: `run_tiles(local_merge)` runs the
// Local Merge on every tile, `run_items(step, count)` a step on items 0..count-1 and
// `run_pixels(step)` a step on every pixel; `labeling` is the call's DeviceLabeling or
// HostLabeling, `statistics` its PixelStatistics or HostPixelStatistics (le_tm_statistics_2d.h:
// Early's records start after the Local Merge, as the paper's first alternative of Sec. III-C,
// and reach the roots after the final Path Compression).
template <int Connectivity, class Labeling, class Statistics, class RunTiles, class RunItems,
          class RunPixels>
LabelResult label_tm(Labeling& labeling, Statistics& statistics, const RunTiles& run_tiles,
                     const RunItems& run_items, const RunPixels& run_pixels, const PixelGrid& grid,
                     const std::uint8_t* mask, std::uint32_t* labels) {
  run_tiles(TmLocalMerge<Connectivity>{mask, labels});
  statistics.initialize(run_pixels);
  labeling.end_step(&StepTimings::initialization_ms);
  const unsigned levels = merge_level_count(grid);
  for (unsigned level = 1; level <= levels; ++level) {
    const MergeLevel merge = merge_level(grid, level);
    run_items(TmMergeSeams<Connectivity>{mask, labels, merge}, merge.seam_pixels(grid));
    labeling.end_step(&StepTimings::merge_ms);
    if (level == levels) break;
    run_items(TmCompressBorders{labels, merge}, merge.border_pixels(grid));
    labeling.end_step(&StepTimings::compression_ms);
  }
  run_pixels(PixelCompress{labels, labeling.root_bitmap()});
  labeling.end_step(&StepTimings::compression_ms);
  labeling.rank();
  statistics.final_labeling(
      run_pixels, PixelFinalLabeling{labels, labeling.root_bitmap(), labeling.words_before()});
  labeling.end_step(&StepTimings::final_labeling_ms);
  LabelResult result = labeling.finish();
  result.iterations = levels;
  return result;
}

}  // namespace volccl::kernels2d
