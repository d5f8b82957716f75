// Pixel logic of UF and KE, the 2D union-find baselines for 4- and 8-connectivity, written once
// for the CUDA kernels (uf_ke_2d.cu) and the CPU backend (uf_ke_2d_cpu.cpp). One thread (GPU) or
// loop iteration (CPU) per pixel, as in the BUF/BKE paper's descriptions:
// - UF (Sec. 4.1, Oliveira and Lotufo): Initialization makes every foreground pixel its own
//   tree, Merge unites each pixel with its foreground neighbours earlier in raster order (the
//   mask of Fig. 2a: left and up, plus up-left and up-right for 8-connectivity), Compression
//   points every pixel at its root.
// - KE (Sec. 4.2, Komura): Initialization already links each pixel to its first foreground
//   neighbour in a fixed order (or to itself), Compression flattens those trees, Reduction
//   unites the pixel with the neighbours Initialization did not link it to, and a second
//   Compression flattens again. Komura's KE is 4-connected; the 8-connected one adds the
//   diagonal neighbours to both steps (the paper's ref. [38]); both are here.
// Departures from the paper, each keeping the algorithm's steps:
// - Node keys are raster indices (not index + 1) and background is kNoParent (not 0), so that
//   each final root is its component's first pixel and raster_rank.h numbers the components as
//   ITK and scipy do; a FinalLabeling pass writes those numbers.
// - UF's Tile Merging (Sec. 4.1, last paragraph) is left out: one Merge over the whole image.
// - Merge (UF) and Reduction (KE) skip every Union that another pixel's own links already
//   imply, as Playne and Hawick's KE does (the paper's ref. [25]); "Skipped Unions" below gives
//   the rules and why they lose no connection.
// UF also labels label maps (runtime/voxel_input.h): "foreground neighbour" then reads
// "neighbour of the pixel's value", and since equality is transitive the rules still hold.
#pragma once

#include <cstdint>

#include "runtime/host_device.h"
#include "runtime/raster_rank.h"
#include "runtime/union_find.h"
#include "runtime/voxel_input.h"
#include "volccl/types.h"

namespace volccl::kernels2d {

constexpr std::uint32_t kNoParent = 0xFFFFFFFFu;  // background pixels

struct PixelGrid {
  std::uint32_t width = 1;
  std::uint32_t height = 1;
};

inline PixelGrid make_pixel_grid(Extent3 extent) {
  return PixelGrid{static_cast<std::uint32_t>(extent.x), static_cast<std::uint32_t>(extent.y)};
}

struct Pixel {
  std::uint32_t x, y;
  std::uint32_t index;  // raster index
};

// The union-find forest: a pixel's parent is stored at the pixel (union_find.h's Forest).
struct PixelForest {
  std::uint32_t* labels;
  VOLCCL_HD std::uint32_t* slot(std::uint32_t pixel) const { return labels + pixel; }
  VOLCCL_HD std::uint32_t unite(std::uint32_t a, std::uint32_t b) const {
    return detail::unite(*this, a, b);
  }
};

// Which neighbours before the pixel in raster order (the mask of Fig. 2a) join it.
struct EarlierNeighbours {
  bool left, up_left, up, up_right;
};

// `pixel` is foreground.
template <class Voxels>
VOLCCL_HD EarlierNeighbours earlier_neighbours(const Voxels& voxels, const PixelGrid& grid,
                                               const Pixel& pixel) {
  EarlierNeighbours seen{false, false, false, false};
  const std::uint32_t p = pixel.index;
  seen.left = pixel.x > 0 && voxels.joins(p, p - 1);
  if (pixel.y > 0) {
    const std::uint32_t above = p - grid.width;
    seen.up_left = pixel.x > 0 && voxels.joins(p, above - 1);
    seen.up = voxels.joins(p, above);
    seen.up_right = pixel.x + 1 < grid.width && voxels.joins(p, above + 1);
  }
  return seen;
}

VOLCCL_HD EarlierNeighbours earlier_neighbours(const std::uint8_t* mask, const PixelGrid& grid,
                                               const Pixel& pixel) {
  return earlier_neighbours(detail::BinaryVoxels{mask}, grid, pixel);
}

// Skipped Unions, and why they lose nothing: by induction over the rows. Say every two touching
// foreground pixels of rows 0..y-1 are already in one tree, and take pixel p of row y.
// 4-connectivity, p's neighbours left (L) and up (U):
//   U is always united with p. L is skipped when U and the up-left pixel (UL) are foreground:
//   L is united with its own up neighbour, UL, and UL touches U in row y-1.
// 8-connectivity, neighbours L, UL, U and up-right (UR):
//   With U foreground, p is united with U only: UL and UR touch U in row y-1, and L is united
//   with UL (its up neighbour) when UL is foreground, else with U (its up-right neighbour).
//   Without U: UL is united, or else L; UR is united; and L is skipped when UL is foreground,
//   since L is then united with UL (its up neighbour).
// UF's Merge makes exactly these Unions. KE's Initialization links p to the first foreground of
// U, UL, UR, L (U first: it touches all three others in 8-connectivity, as in the authors'
// YACCLAB implementation), and Reduction makes the Unions that link leaves out.

// --- UF (Sec. 4.1) -----------------------------------------------------------------------------

// Initialization: every foreground pixel is a tree of its own.
template <class Voxels>
struct UfInitialize {
  Voxels voxels;
  std::uint32_t* labels;
  VOLCCL_HD void operator()(const PixelGrid&, const Pixel& pixel) const {
    labels[pixel.index] = voxels.foreground(pixel.index) ? pixel.index : kNoParent;
  }
};

// The Unions of Merge for pixel `node` whose earlier neighbours `seen` are the nodes left,
// up_left, up and up_right (see Skipped Unions); each Union (forest.unite) starts from the root the
// previous one returned. Any forest and numbering whose order is the raster order will do: the
// whole image here, a tile in shared memory in TM (tm_logic_2d.h).
template <int Connectivity, class Forest>
VOLCCL_HD void unite_earlier(const Forest& forest, const EarlierNeighbours& seen,
                             std::uint32_t node, std::uint32_t left, std::uint32_t up_left,
                             std::uint32_t up, std::uint32_t up_right) {
  if (Connectivity == 4) {
    if (seen.up) node = forest.unite(node, up);
    if (seen.left && !(seen.up && seen.up_left)) forest.unite(node, left);
    return;
  }
  if (seen.up) {
    forest.unite(node, up);
    return;
  }
  if (seen.up_left) {
    node = forest.unite(node, up_left);
  } else if (seen.left) {
    node = forest.unite(node, left);
  }
  if (seen.up_right) forest.unite(node, up_right);
}

// Merge: Union with the earlier neighbours that join the pixel.
template <int Connectivity, class Voxels>
struct UfMerge {
  Voxels voxels;
  std::uint32_t* labels;

  VOLCCL_HD void operator()(const PixelGrid& grid, const Pixel& pixel) const {
    if (!voxels.foreground(pixel.index)) return;
    const std::uint32_t above = pixel.index - grid.width;
    unite_earlier<Connectivity>(PixelForest{labels}, earlier_neighbours(voxels, grid, pixel),
                                pixel.index, pixel.index - 1, above - 1, above, above + 1);
  }
};

// --- KE (Sec. 4.2) -----------------------------------------------------------------------------

// Initialization: a foreground pixel's parent is its first foreground neighbour among up,
// up-left, up-right (8-connectivity) and left, or itself. Every parent comes earlier in raster
// order, so each tree's root is its first pixel, as Union by minimum needs.
template <int Connectivity>
struct KeInitialize {
  const std::uint8_t* mask;
  std::uint32_t* labels;

  VOLCCL_HD void operator()(const PixelGrid& grid, const Pixel& pixel) const {
    if (mask[pixel.index] == 0) {
      labels[pixel.index] = kNoParent;
      return;
    }
    const EarlierNeighbours seen = earlier_neighbours(mask, grid, pixel);
    const std::uint32_t above = pixel.index - grid.width;
    std::uint32_t parent = pixel.index;
    if (seen.up) {
      parent = above;
    } else if (Connectivity == 8 && seen.up_left) {
      parent = above - 1;
    } else if (Connectivity == 8 && seen.up_right) {
      parent = above + 1;
    } else if (seen.left) {
      parent = pixel.index - 1;
    }
    labels[pixel.index] = parent;
  }
};

// Reduction: the Unions of UF's Merge that Initialization's link does not make (see Skipped
// Unions). 4: left, when Initialization chose up and up-left is background. 8: without up,
// up-right and the up-left (or else the left) neighbour touch only through this pixel, which
// Initialization linked to one of them.
template <int Connectivity>
struct KeReduce {
  const std::uint8_t* mask;
  std::uint32_t* labels;

  VOLCCL_HD void operator()(const PixelGrid& grid, const Pixel& pixel) const {
    if (mask[pixel.index] == 0) return;
    const EarlierNeighbours seen = earlier_neighbours(mask, grid, pixel);
    const PixelForest forest{labels};
    const std::uint32_t above = pixel.index - grid.width;
    if (Connectivity == 4) {
      if (seen.up && seen.left && !seen.up_left)
        detail::unite(forest, pixel.index, pixel.index - 1);
      return;
    }
    if (!seen.up && seen.up_right && (seen.up_left || seen.left)) {
      detail::unite(forest, above + 1, seen.up_left ? above - 1 : pixel.index - 1);
    }
  }
};

// --- both ----------------------------------------------------------------------------------------

// Calls run(Step<connectivity>{args...}) for connectivity 4 or 8: label_uf_ke launches or loops
// over the step it names.
template <template <int> class Step, class Run, class... Args>
void with_connectivity(int connectivity, const Run& run, Args... args) {
  if (connectivity == 4) {
    run(Step<4>{args...});
  } else {
    run(Step<8>{args...});
  }
}

// Compression (Alg. 1's Compress on every pixel); with a bitmap, also marks the roots for the
// ranking.
struct PixelCompress {
  std::uint32_t* labels;
  std::uint32_t* root_bitmap;  // nullptr: do not mark
  VOLCCL_HD void operator()(const PixelGrid&, const Pixel& pixel) const {
    std::uint32_t* slot = labels + pixel.index;
    if (detail::load_relaxed(slot) == kNoParent) return;
    const std::uint32_t root = detail::compress(PixelForest{labels}, slot);
    if (root_bitmap != nullptr && root == pixel.index) {
      detail::mark_component_start(root_bitmap, root);
    }
  }
};

// FinalLabeling: the root of each foreground pixel becomes its component's consecutive label.
struct PixelFinalLabeling {
  std::uint32_t* labels;
  const std::uint32_t* root_bitmap;
  const std::uint32_t* words_before;
  VOLCCL_HD void operator()(const PixelGrid&, const Pixel& pixel) const {
    const std::uint32_t root = labels[pixel.index];
    labels[pixel.index] =
        root == kNoParent ? 0 : detail::component_label(root_bitmap, words_before, root);
  }
};

// The steps of UF and KE, written once for both backends: `run(step)` applies a step to every
// pixel (a kernel launch or a CPU loop), `labeling` is the call's DeviceLabeling or HostLabeling.
// Compression, ranking and FinalLabeling end both.
template <class Labeling, class Run>
LabelResult finish_uf_ke(Labeling& labeling, const Run& run, std::uint32_t* labels) {
  run(PixelCompress{labels, labeling.root_bitmap()});
  labeling.end_step(&StepTimings::compression_ms);
  labeling.rank();
  run(PixelFinalLabeling{labels, labeling.root_bitmap(), labeling.words_before()});
  labeling.end_step(&StepTimings::final_labeling_ms);
  return labeling.finish();
}

// UF reads `voxels`: a mask or a label map.
template <class Labeling, class Run, class Voxels>
LabelResult label_uf(Labeling& labeling, const Run& run, const Voxels& voxels,
                     std::uint32_t* labels, int connectivity) {
  run(UfInitialize<Voxels>{voxels, labels});
  labeling.end_step(&StepTimings::initialization_ms);
  if (connectivity == 4) {
    run(UfMerge<4, Voxels>{voxels, labels});
  } else {
    run(UfMerge<8, Voxels>{voxels, labels});
  }
  labeling.end_step(&StepTimings::merge_ms);
  return finish_uf_ke(labeling, run, labels);
}

// KE reads masks only.
template <class Labeling, class Run>
LabelResult label_ke(Labeling& labeling, const Run& run, const std::uint8_t* mask,
                     std::uint32_t* labels, int connectivity) {
  with_connectivity<KeInitialize>(connectivity, run, mask, labels);
  labeling.end_step(&StepTimings::initialization_ms);
  run(PixelCompress{labels, nullptr});
  labeling.end_step(&StepTimings::compression_ms);
  with_connectivity<KeReduce>(connectivity, run, mask, labels);
  labeling.end_step(&StepTimings::merge_ms);
  return finish_uf_ke(labeling, run, labels);
}

// The labeling `call` (a HostLabelCall or a DeviceLabelCall) asks for: KE on its mask, or UF on
// its mask or label map.
template <class Labeling, class Run, class Call>
LabelResult label_uf_or_ke(Labeling& labeling, const Run& run, const Call& call) {
  const int connectivity = call.options.connectivity;
  if (call.options.algorithm == Algorithm::ke) {
    return label_ke(labeling, run, call.mask, call.labels, connectivity);
  }
  if (call.input.label_map) {
    return detail::with_label_map(call.input, [&](const auto& voxels) {
      return label_uf(labeling, run, voxels, call.labels, connectivity);
    });
  }
  return label_uf(labeling, run, detail::BinaryVoxels{call.mask}, call.labels, connectivity);
}

}  // namespace volccl::kernels2d
