// Voxel logic of UF, the 3D union-find labeler for 6-, 18- and 26-connectivity, written once for
// the CUDA kernels (uf_3d.cu) and the CPU backend (uf_3d_cpu.cpp).
//
// Why a voxel union-find: a 2x2x2 block is one piece only under 26-connectivity, so the
// block-based BUF/BKE cannot serve 6 or 18 (BUF/BKE paper Sec. 4.3). UF follows Oliveira and
// Lotufo's union-find (Sec. 4.1 of the same paper) with two savings:
// - Initialization links every voxel to the start of its run along x within its segment of 128
//   voxels (a warp's stretch of the row; the threads find where their runs start with a scan of
//   warp shuffles), so runs need no Union at all except where they cross a segment boundary;
// - Merge skips every Union that a neighbour's thread makes for it: when the voxel on the left
//   is foreground and itself touches the neighbour's left voxel (dx = 0 directions), or when
//   the voxel on the left (dx = -1 directions) or the voxel next to the neighbour (dx = +1
//   directions) already links the two runs. On random volumes most voxels then make no Union.
// Keys are raster indices and each voxel's parent lives at its own voxel of the label image, so
// Find needs no arithmetic; Union links the larger root under the smaller, so every root is its
// component's first voxel and raster_rank.h numbers the components as ITK and scipy do.
// The steps read the input through runtime/voxel_input.h, so label maps take the same path: a
// run is then a stretch of one value, and "foreground neighbour" reads "neighbour of the voxel's
// value". Equality is transitive, so every skipped Union below stays implied by others.
#pragma once

#include <cstdint>

#include "runtime/host_device.h"
#include "runtime/raster_rank.h"
#include "runtime/union_find.h"
#include "runtime/voxel_input.h"
#include "volccl/types.h"

namespace volccl::kernels3d {

constexpr std::uint32_t kNoParent = 0xFFFFFFFFu;  // background voxels
constexpr std::uint32_t kVoxelsPerThread = 4;
// A warp's stretch of a row: 32 threads of 4 voxels. Runs are linked to their start within it.
constexpr std::uint32_t kSegment = 32 * kVoxelsPerThread;

struct VoxelGrid {
  std::uint32_t nx = 1, ny = 1, nz = 1;
  std::uint32_t row = 1;    // nx
  std::uint32_t slice = 1;  // nx * ny
};

inline VoxelGrid make_voxel_grid(Extent3 extent) {
  VoxelGrid grid;
  grid.nx = static_cast<std::uint32_t>(extent.x);
  grid.ny = static_cast<std::uint32_t>(extent.y);
  grid.nz = static_cast<std::uint32_t>(extent.z);
  grid.row = grid.nx;
  grid.slice = grid.nx * grid.ny;
  return grid;
}

struct Voxel {
  std::uint32_t x, y, z;
  std::uint32_t index;  // raster index
};

// Up to four consecutive voxels of a row: the work of one thread, so that each thread moves
// enough bytes for the memory-bound steps to run near the bandwidth.
struct Quad {
  Voxel first;
  std::uint32_t count;  // 1..4, fewer at the end of a row
};

// Where runs begin and end in a quad: bit j of `foreground` when voxel j is foreground, bit j of
// `value_starts` when it is foreground, follows a foreground voxel of the row and does not join
// it (label maps only: in a mask every run starts after a background voxel).
struct QuadRuns {
  std::uint32_t foreground = 0;
  std::uint32_t value_starts = 0;
};

template <class Voxels>
VOLCCL_HD QuadRuns quad_runs(const Voxels& voxels, const Quad& quad) {
  QuadRuns runs;
  for (std::uint32_t j = 0; j < quad.count; ++j) {
    const std::uint32_t index = quad.first.index + j;
    const bool foreground = voxels.foreground(index);
    runs.foreground |= std::uint32_t{foreground} << j;
    if (Voxels::kValuesSplitRuns && foreground && quad.first.x + j > 0 &&
        voxels.foreground(index - 1) && !voxels.joins(index, index - 1)) {
      runs.value_starts |= std::uint32_t{1} << j;
    }
  }
  return runs;
}

// The start of the run that reaches past the quad, given the start of the run reaching its first
// voxel: the voxel after its last background voxel or its last voxel that starts a run of its
// value, or `entering` when it has neither.
VOLCCL_HD std::uint32_t run_start_after(const Quad& quad, const QuadRuns& runs,
                                        std::uint32_t entering) {
  for (std::uint32_t j = 0; j < quad.count; ++j) {
    if (((runs.foreground >> j) & 1) == 0) entering = quad.first.index + j + 1;
    if ((runs.value_starts >> j) & 1) entering = quad.first.index + j;
  }
  return entering;
}

// The union-find forest: a voxel's parent is stored at the voxel.
struct VoxelForest {
  std::uint32_t* labels;
  VOLCCL_HD std::uint32_t* slot(std::uint32_t voxel) const { return labels + voxel; }
};

// The lower neighbours other than the voxel on the left, as (dx, dy, dz): 2 for 6-connectivity,
// 8 for 18, 12 for 26. The first `kFaceDirections` have dx == 0 and come first.
constexpr int kFaceDirections = 4;  // (0,-1,0) (0,0,-1) (0,-1,-1) (0,1,-1)
VOLCCL_HD constexpr int lower_direction_count(int connectivity) {
  return connectivity == 6 ? 2 : (connectivity == 18 ? 8 : 12);
}

// Directions 0..3: dx == 0; 4..11: the same (dy, dz) with dx = -1 and then dx = +1. Order:
// (0,-1,0) (0,0,-1) | (0,-1,-1) (0,1,-1) | (-1,-1,0) (1,-1,0) (-1,0,-1) (1,0,-1) | (-1,-1,-1)
// (1,-1,-1) (-1,1,-1) (1,1,-1): the first 2 for 6-connectivity, 8 for 18, 12 for 26.
// dx != 0 directions pair with a face direction: 4,5 -> 0; 6,7 -> 1; 8,9 -> 2; 10,11 -> 3.
VOLCCL_HD constexpr int direction_face(int d) {
  return d < kFaceDirections ? d : (d - kFaceDirections) / 2;
}
VOLCCL_HD constexpr int direction_dx(int d) {
  return d < kFaceDirections ? 0 : ((d - kFaceDirections) % 2 == 0 ? -1 : 1);
}
VOLCCL_HD constexpr int direction_dy(int d) {
  return direction_face(d) == 0 ? -1
                                : (direction_face(d) == 3 ? 1 : (direction_face(d) == 2 ? -1 : 0));
}
VOLCCL_HD constexpr int direction_dz(int d) { return direction_face(d) == 0 ? 0 : -1; }

VOLCCL_HD bool inside(const VoxelGrid& grid, const Voxel& voxel, int dx, int dy, int dz) {
  return !(dx < 0 && voxel.x == 0) && !(dx > 0 && voxel.x + 1 >= grid.nx) &&
         !(dy < 0 && voxel.y == 0) && !(dy > 0 && voxel.y + 1 >= grid.ny) &&
         !(dz < 0 && voxel.z == 0);
}

VOLCCL_HD std::uint32_t offset(const VoxelGrid& grid, int dx, int dy, int dz) {
  return static_cast<std::uint32_t>(dx) + static_cast<std::uint32_t>(dy) * grid.row +
         static_cast<std::uint32_t>(dz) * grid.slice;
}

// Whether the neighbour at (dx, dy, dz) exists and joins the foreground `voxel`.
template <class Voxels>
VOLCCL_HD bool joins_at(const Voxels& voxels, const VoxelGrid& grid, const Voxel& voxel, int dx,
                        int dy, int dz) {
  return inside(grid, voxel, dx, dy, dz) &&
         voxels.joins(voxel.index, voxel.index + offset(grid, dx, dy, dz));
}

// --- per-voxel steps ---------------------------------------------------------------------------

// Initialization: background -> kNoParent; foreground -> the start of its run within the
// segment. `run_start` is where the run reaching the quad's first voxel began (the GPU finds it
// with a scan over the warp's threads, the CPU with a loop along the row).
struct UfInitialize {
  std::uint32_t* labels;
  VOLCCL_HD void operator()(const Quad& quad, const QuadRuns& runs, std::uint32_t run_start) const {
    for (std::uint32_t j = 0; j < quad.count; ++j) {
      const std::uint32_t index = quad.first.index + j;
      if ((runs.value_starts >> j) & 1) run_start = index;
      if ((runs.foreground >> j) & 1) {
        labels[index] = run_start;
      } else {
        labels[index] = kNoParent;
        run_start = index + 1;
      }
    }
  }
};

// Merge: the Unions this voxel's thread is responsible for (see the file comment); one thread a
// voxel, since its Find walks are latency-bound and want every thread the GPU can keep. The
// connectivity is a template argument so that the loop over directions unrolls into constants.
template <int Connectivity, class Voxels>
struct UfMerge {
  Voxels voxels;
  std::uint32_t* labels;

  VOLCCL_HD void operator()(const VoxelGrid& grid, const Voxel& voxel) const {
    if (!voxels.foreground(voxel.index)) return;
    const VoxelForest forest{labels};
    std::uint32_t node = voxel.index;
    const bool left = joins_at(voxels, grid, voxel, -1, 0, 0);
    if (left && voxel.x % kSegment == 0) node = detail::unite(forest, node, voxel.index - 1);
    bool face_foreground[kFaceDirections] = {false, false, false, false};
    constexpr int kDirections = lower_direction_count(Connectivity);
    VOLCCL_UNROLL
    for (int d = 0; d < kDirections; ++d) {
      const int dx = direction_dx(d), dy = direction_dy(d), dz = direction_dz(d);
      if (!joins_at(voxels, grid, voxel, dx, dy, dz)) continue;
      if (d < kFaceDirections) {
        face_foreground[d] = true;
        // The voxel on the left unites with the neighbour's left voxel, its run holds ours.
        if (left && joins_at(voxels, grid, voxel, dx - 1, dy, dz)) continue;
      } else if (dx < 0 ? left : face_foreground[direction_face(d)]) {
        // dx = -1: the voxel on the left links to it through the face direction;
        // dx = +1: our own face neighbour lies in the same run as it.
        continue;
      }
      node = detail::unite(forest, node, voxel.index + offset(grid, dx, dy, dz));
    }
  }
};

// Calls run(merge) with the Merge step of `connectivity` (6, 18 or 26), for the drivers that
// launch or loop over it.
template <class Voxels, class Run>
void with_merge_step(int connectivity, const Voxels& voxels, std::uint32_t* labels,
                     const Run& run) {
  switch (connectivity) {
    case 6:
      run(UfMerge<6, Voxels>{voxels, labels});
      return;
    case 18:
      run(UfMerge<18, Voxels>{voxels, labels});
      return;
    default:
      run(UfMerge<26, Voxels>{voxels, labels});
  }
}

// Compression; with a bitmap, also marks the roots for the ranking.
struct UfCompress {
  std::uint32_t* labels;
  std::uint32_t* root_bitmap;  // nullptr: do not mark
  VOLCCL_HD void operator()(const VoxelGrid&, const Quad& quad) const {
    for (std::uint32_t j = 0; j < quad.count; ++j) {
      std::uint32_t* slot = labels + quad.first.index + j;
      if (detail::load_relaxed(slot) == kNoParent) continue;
      const std::uint32_t root = detail::compress(VoxelForest{labels}, slot);
      if (root_bitmap != nullptr && root == quad.first.index + j) {
        detail::mark_component_start(root_bitmap, root);
      }
    }
  }
};

// FinalLabeling: the root of each foreground voxel becomes its component's consecutive label.
struct UfFinalLabeling {
  std::uint32_t* labels;
  const std::uint32_t* root_bitmap;
  const std::uint32_t* words_before;
  VOLCCL_HD std::uint32_t label_of(std::uint32_t root) const {
    return root == kNoParent ? 0 : detail::component_label(root_bitmap, words_before, root);
  }
  VOLCCL_HD void operator()(const VoxelGrid&, const Quad& quad) const {
    std::uint32_t* first = labels + quad.first.index;
#if defined(__CUDA_ARCH__)
    // Whole aligned quads as one 16-byte load and store: this step is bound by memory.
    if (quad.count == kVoxelsPerThread && reinterpret_cast<std::uintptr_t>(first) % 16 == 0) {
      uint4 roots = *reinterpret_cast<const uint4*>(first);
      roots = {label_of(roots.x), label_of(roots.y), label_of(roots.z), label_of(roots.w)};
      *reinterpret_cast<uint4*>(first) = roots;
      return;
    }
#endif
    for (std::uint32_t j = 0; j < quad.count; ++j) first[j] = label_of(first[j]);
  }
};

}  // namespace volccl::kernels3d
