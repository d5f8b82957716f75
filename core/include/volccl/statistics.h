// Connected-component analysis: per component its voxel count, exact integer moments and
// bounding box, and from them (in double, at the end) centroid, covariance, principal moments and
// axes, in index space and in physical space.
//
//   std::vector<volccl::ComponentMoments> moments;
//   volccl::LabelResult r = volccl::label(mask, extent, labels, moments);
//   volccl::ComponentShape s = volccl::describe(moments[0], geometry, 3);  // label 1
//
// The sums are 64-bit integers, so they are the same bits whatever the order of the additions:
// run to run, CPU to GPU, strategy to strategy (LE/TM paper Sec. III-B and App. B).
// Plain C++17; no CUDA, ITK or VTK headers.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "volccl/types.h"

namespace volccl {

// The moments of one component in index space (x, y, z are voxel indices, 0-based). Row i of a
// table of them describes label i + 1. One record is one 128-byte cache line on the GPU, where
// every record receives its sums by atomics; the host table has the same layout.
struct alignas(128) ComponentMoments {
  std::uint64_t count = 0;                                         // voxels
  std::uint64_t sum[3] = {0, 0, 0};                                // sum of x, of y, of z
  std::uint64_t sum_products[6] = {0, 0, 0, 0, 0, 0};              // xx, yy, zz, xy, xz, yz
  std::uint32_t min[3] = {0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu};  // bounding box, inclusive
  std::uint32_t max[3] = {0, 0, 0};
};

bool operator==(const ComponentMoments& a, const ComponentMoments& b);

// StatisticsStrategy (types.h) says how the GPU gathers the moments (the CPU backend computes them
// in one pass after labeling, except LE's and TM's Early, which it gathers as the GPU does, and
// RTS's Late, which it sums from its runs as it writes the labels; the integers, and so every
// derived value, are the same bits):
// - late: after the labels are final, one pass over the label image (LE/TM paper Sec. III-D);
//   runs of voxels along x are summed in registers, relative to the thread block's region,
//   reduced across a warp with warp intrinsics and per region in shared memory; a label that
//   may leave the region (its box there touches a face shared with another region) adds its
//   sums to the table by atomics, one per moment, and the others are written with plain stores,
//   and background runs of the mask skip their labels: both when labeling and measuring in one
//   call, where labels are connected components; cuda::measure of any label image adds every
//   row by atomics. RUF sums its runs instead of reading the label image; BUF and BKE, on
//   volumes above 2^25 voxels with a component per 64 voxels or more, take each component's row
//   from its root block's neighbourhood in their union-find forest before the final labeling,
//   which adds the blocks lying further from the root.
// - fused: gathered while the labels are written (HA4 paper Alg. 6's idea): BUF, BUF-IC, BKE
//   and BKE-IC sum each 2x2x2 (2x2) block in registers in their final labeling step, LE and TM
//   each pixel, which saves reading the labels back.
// - early: every union-find node (a 2x2x2 or 2x2 block of BUF and BKE, a pixel of LE and TM)
//   starts with the moments of its own voxels; once the equivalences are final, every node adds
//   its moments to its root's, and the roots' moments are gathered in label order (LE/TM paper
//   Sec. III-A..C). It needs 128 bytes per node (16 per voxel in 3D, 32 per pixel for BUF and
//   BKE, 128 per pixel for LE and TM) and is refused with OutOfDeviceMemory when that does not
//   fit.

std::string to_string(StatisticsStrategy strategy);                     // "late", "fused", "early"
StatisticsStrategy parse_statistics_strategy(const std::string& name);  // throws InvalidArgument
// Whether `strategy` exists for `algorithm` (resolved, not automatic): late for all, fused and
// early for BUF, BUF-IC, BKE, BKE-IC, LE and TM.
bool supports(StatisticsStrategy strategy, Algorithm algorithm);

// Index to physical space as ITK maps it: physical = origin + direction * (spacing .* index).
// `direction` is row-major. A 2D image uses the upper-left 2x2 block and the first two entries.
struct ImageGeometry {
  std::array<double, 3> spacing = {1, 1, 1};
  std::array<double, 3> origin = {0, 0, 0};
  std::array<double, 9> direction = {1, 0, 0, 0, 1, 0, 0, 0, 1};
};

// What describe() derives from one ComponentMoments. Matrices are symmetric and stored by their
// unique terms xx, yy, zz, xy, xz, yz; 2D images leave the z terms 0.
struct ComponentShape {
  std::uint64_t count = 0;
  double physical_size = 0;  // count times the voxel's volume (area in 2D)
  std::array<double, 3> centroid_index = {0, 0, 0};
  std::array<double, 3> centroid = {0, 0, 0};  // physical
  // Population covariance of the voxel positions (divided by the count), as ITK's
  // LabelShape statistics define the central moments.
  std::array<double, 6> covariance_index = {0, 0, 0, 0, 0, 0};
  std::array<double, 6> covariance = {0, 0, 0, 0, 0, 0};  // physical
  // Eigenvalues of the physical covariance, ascending, and their unit eigenvectors as the rows
  // of principal_axes (row-major), the last row's sign chosen so that the determinant is +1 (as
  // ITK's ShapeLabelObject::PrincipalAxes). 2D images fill the first two of each.
  std::array<double, 3> principal_moments = {0, 0, 0};
  std::array<double, 9> principal_axes = {0, 0, 0, 0, 0, 0, 0, 0, 0};
  std::array<std::uint32_t, 3> bounding_box_min = {0, 0, 0};  // index space, inclusive
  std::array<std::uint32_t, 3> bounding_box_max = {0, 0, 0};
};

// `dimension` is 2 or 3. The covariance comes from the exact integer sums without cancellation
// (the products are formed in 128-bit integers), so it is correctly rounded.
ComponentShape describe(const ComponentMoments& moments, const ImageGeometry& geometry,
                        int dimension);

// Throws InvalidArgument when a volume of `extent` could overflow the 64-bit sums, that is when
// voxel_count * (longest side - 1)^2 reaches 2^64 (never for volumes up to 65536 voxels a side,
// App. B of the LE/TM paper).
void validate_statistics(Extent3 extent);

// The moments of an existing label image (0 background, 1..component_count), host memory, on
// the CPU with `cpu_threads` workers (0: all). Throws InvalidArgument for a label above
// component_count.
std::vector<ComponentMoments> measure(const std::uint32_t* labels, Extent3 extent,
                                      std::uint32_t component_count, unsigned cpu_threads = 0);

}  // namespace volccl
