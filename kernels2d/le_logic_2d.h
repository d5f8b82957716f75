// Pixel logic of LE, Label Equivalence (LE/TM paper Sec. II-A and V-B), written once for the CUDA
// kernels (le_2d.cu) and the CPU backend (le_2d_cpu.cpp). One thread (GPU) or loop iteration
// (CPU) per pixel. As the paper's LE, it borrows from HLE and KLE (Sec. V-B):
// - the equivalence chains live in the label array itself (KLE): a pixel's label is the raster
//   index of its representative, and a representative r's slot L[r] is the equivalence table's
//   entry, so no table and no Update kernel;
// - Scan replaces labels with atomicMin (HLE), so the iteration count is the same run to run;
// - the first Scan is F4: it looks only at the neighbours earlier in raster order, whose
//   provisional labels are their own indices, so the smallest is the first foreground one; it
//   is fused with Prelabel, since it reads nothing Prelabel wrote (Sec. V-B1);
// - later Scans are F8 (all neighbours at 8-connectivity, the four edge neighbours at 4) and
//   note a change in a per-thread-block flag in shared memory, which one thread per block copies
//   to the global flag (Sec. V-B2, steps 1-4);
// - Analysis points every pixel at the end of its equivalence chain.
// The loop: initial scan, Analysis, then Scan and Analysis until a Scan changes nothing. The
// iteration count (LabelResult::iterations) is the number of Scan-Analysis rounds, the first
// included and the last Scan, which only finds that nothing changes, not.
//
// Scans are Jacobi steps: every pixel reads the labels as the previous Analysis left them, as
// in the paper's model of an iteration (Fig. 2, App. A), where a Ridge pattern R_l takes exactly
// l iterations. A Scan writes only into representatives' slots (every label is one after
// Analysis), so the only labels that can change under a reader are those of representatives,
// and a representative's label before the Scan is its own index. Analysis marks the
// representatives in a bitmap, one bit per pixel, which Scan does not change; a Scan reads a
// marked pixel's label as its index and any other's from L. Without this, a thread could read a
// label lowered in the same Scan and run ahead (the CPU, scanning in raster order, would finish
// R_l in fewer than l iterations). The bitmap is DeviceLabeling's or HostLabeling's root bitmap:
// once nothing changes its marks are the components' first pixels, which the raster-order
// ranking numbers (raster_rank.h is the paper's Sequential Relabeling, App. C: a prefix sum over
// the representatives' marks, then LS(p) = S(L(p))).
#pragma once

#include <cstdint>

#include "kernels2d/uf_ke_logic_2d.h"
#include "runtime/host_device.h"
#include "runtime/raster_rank.h"
#include "volccl/types.h"

namespace volccl::kernels2d {

VOLCCL_HD bool is_representative(const std::uint32_t* bitmap, std::uint32_t pixel) {
  return ((detail::load_relaxed(bitmap + (pixel >> 5)) >> (pixel & 31)) & 1u) != 0;
}

// A foreground pixel's label as the previous Analysis left it.
VOLCCL_HD std::uint32_t label_before_scan(const std::uint32_t* labels,
                                          const std::uint32_t* representatives,
                                          std::uint32_t pixel) {
  return is_representative(representatives, pixel) ? pixel : detail::load_relaxed(labels + pixel);
}

// Prelabel and the first (F4) Scan: a foreground pixel's label is the first foreground among its
// earlier neighbours (up-left, up, up-right, left at 8-connectivity; up, left at 4), or itself,
// in which case it is a representative.
template <int Connectivity>
struct LeInitialScan {
  const std::uint8_t* mask;
  std::uint32_t* labels;
  std::uint32_t* representatives;

  VOLCCL_HD void operator()(const PixelGrid& grid, const Pixel& pixel) const {
    if (mask[pixel.index] == 0) {
      labels[pixel.index] = kNoParent;
      return;
    }
    const EarlierNeighbours seen = earlier_neighbours(mask, grid, pixel);
    const std::uint32_t above = pixel.index - grid.width;
    std::uint32_t label = pixel.index;
    if (Connectivity == 8 && seen.up_left) {
      label = above - 1;
    } else if (seen.up) {
      label = above;
    } else if (Connectivity == 8 && seen.up_right) {
      label = above + 1;
    } else if (seen.left) {
      label = pixel.index - 1;
    }
    labels[pixel.index] = label;
    if (label == pixel.index) detail::mark_component_start(representatives, label);
  }
};

// A later (F8) Scan: the smallest label among the pixel's foreground neighbours, when smaller than
// its own, goes to its representative's slot by atomicMin. Returns whether it issued the
// atomic: then that slot changes (it held the representative's own index, which is larger).
template <int Connectivity>
struct LeScan {
  const std::uint8_t* mask;
  std::uint32_t* labels;
  const std::uint32_t* representatives;

  VOLCCL_HD bool operator()(const PixelGrid& grid, const Pixel& pixel) const {
    if (mask[pixel.index] == 0) return false;
    const std::uint32_t own = label_before_scan(labels, representatives, pixel.index);
    std::uint32_t smallest = own;
    const auto visit = [&](std::uint32_t neighbour) {
      if (mask[neighbour] == 0) return;
      const std::uint32_t label = label_before_scan(labels, representatives, neighbour);
      if (label < smallest) smallest = label;
    };
    const bool left = pixel.x > 0, right = pixel.x + 1 < grid.width;
    for (int dy = -1; dy <= 1; ++dy) {
      if ((dy < 0 && pixel.y == 0) || (dy > 0 && pixel.y + 1 >= grid.height)) continue;
      const std::uint32_t centre = pixel.index + static_cast<std::uint32_t>(dy) * grid.width;
      if (dy != 0) visit(centre);
      if (dy != 0 && Connectivity == 4) continue;
      if (left) visit(centre - 1);
      if (right) visit(centre + 1);
    }
    if (smallest == own) return false;
    detail::atomic_min(labels + own, smallest);
    return true;
  }
};

// Analysis: every foreground pixel takes the label at the end of its chain; a representative whose
// slot the Scan lowered is one no longer. Concurrent Analyses only replace a label by a later one
// of the same chain, whose end stays where it is.
struct LeAnalysis {
  std::uint32_t* labels;
  std::uint32_t* representatives;

  VOLCCL_HD void operator()(const PixelGrid&, const Pixel& pixel) const {
    std::uint32_t* slot = labels + pixel.index;
    if (detail::load_relaxed(slot) == kNoParent) return;
    const std::uint32_t end = detail::compress(PixelForest{labels}, slot);
    if (end != pixel.index && is_representative(representatives, pixel.index)) {
      detail::atomic_and(representatives + (pixel.index >> 5), ~(1u << (pixel.index & 31)));
    }
  }
};

// The step sequence of LE, written once for both backends: `run(step)` applies a step to every
// pixel, `scan(step)` too and returns whether any pixel's step returned true; `labeling` is the
// call's DeviceLabeling or HostLabeling, `statistics` its PixelStatistics or HostPixelStatistics
// (le_tm_statistics_2d.h: Early's records start with the Prelabel, Sec. III-A, and reach the
// roots once the last Scan has changed nothing).
template <int Connectivity, class Labeling, class Statistics, class Run, class Scan>
LabelResult label_le(Labeling& labeling, Statistics& statistics, const Run& run, const Scan& scan,
                     const std::uint8_t* mask, std::uint32_t* labels) {
  std::uint32_t* representatives = labeling.root_bitmap();
  run(LeInitialScan<Connectivity>{mask, labels, representatives});
  statistics.initialize(run);
  labeling.end_step(&StepTimings::initialization_ms);
  std::uint32_t iterations = 1;
  for (;;) {
    run(LeAnalysis{labels, representatives});
    labeling.end_step(&StepTimings::compression_ms);
    const bool changed = scan(LeScan<Connectivity>{mask, labels, representatives});
    labeling.end_step(&StepTimings::merge_ms);
    if (!changed) break;
    ++iterations;
  }
  labeling.rank();
  statistics.final_labeling(
      run, PixelFinalLabeling{labels, labeling.root_bitmap(), labeling.words_before()});
  labeling.end_step(&StepTimings::final_labeling_ms);
  LabelResult result = labeling.finish();
  result.iterations = iterations;
  return result;
}

}  // namespace volccl::kernels2d
