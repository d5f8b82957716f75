// Synthetic binary volumes for tests and benchmarks (docs/data.md). Deterministic for a
// given seed on every platform: only std::mt19937 bits are used, never the distributions of
// the standard library, whose results differ between implementations.
#pragma once

#include <cstdint>
#include <vector>

#include "volccl/types.h"

namespace volccl::data {

// A binary mask, x fastest, 0 background and 1 foreground.
struct Volume {
  Extent3 extent;
  std::vector<std::uint8_t> voxels;
};

// YACCLAB's random density x granularity volumes (BUF/BKE paper Sec. 6.1.3): the volume is cut
// into granularity^3 cells (granularity^2 in 2D, extent.z == 1), each cell is foreground with
// probability `density` (0..1) drawn from an MT19937 seeded with `seed`. Cells are drawn in
// raster order, one 32-bit output each: foreground when (bits >> 8) / 2^24 < density, so
// density 0 gives an empty and density 1 a full volume. Cells cut by the volume's edge keep
// their draw. Throws InvalidArgument for granularity 0 or a density outside 0..1.
Volume random_granular(Extent3 extent, double density, unsigned granularity, std::uint32_t seed);

// The 3D Hilbert curve of `order` (1..log2(side)) drawn as one-voxel lines in a side^3 volume,
// side a power of two: consecutive curve points, spaced side / 2^order apart, joined by
// straight segments. One 6-connected component. Point (i, j, k) of the curve's 2^order grid
// sits at voxel (i, j, k) * spacing + spacing / 2, so the curve is centred; at
// order == log2(side) it fills the volume. Throws InvalidArgument for other orders or sides.
Volume hilbert(unsigned order, std::uint64_t side = 128);

// A square spiral of one-voxel lines with one-voxel gaps, drawn in every even z slice, the
// slices joined at the spiral's outer end: a long snake and one component. The spiral starts
// at (0, 0), runs along the slice's border and winds inwards; odd slices hold only the
// joining voxel (0, 0).
Volume spiral(Extent3 extent);

// Voxels whose coordinate sum is even (period 1) are foreground: under 26-connectivity one
// component, under 6-connectivity one per voxel.
Volume checkerboard(Extent3 extent);

// Concentric spherical shells of one voxel thickness around the centre, `gap` voxels apart:
// a voxel is foreground when its distance from the volume's centre, rounded to the nearest
// integer, is a multiple of gap + 1 (the centre voxels are shell 0; gap 0 fills the volume).
// With gap >= 2 neighbouring shells do not touch even under 26-connectivity.
Volume shells(Extent3 extent, unsigned gap);

}  // namespace volccl::data
