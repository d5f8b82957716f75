// The Ridge patterns and image families of the LE/TM paper
// (gpu-ccl-evaluation-ridge-patterns-le-tm-properties.txt, Sec. IV-B and IV-C): 2^n x 2^n
// binary images (extent {side, side, 1}, uint8 0/1) whose 8-connected components make Label
// Equivalence take a chosen number of iterations (App. A), with families that vary one
// image property at a time (the x-axes of the paper's Fig. 7-8). Deterministic: the random
// families use only std::mt19937 bits, as generators.h does. Every function throws
// volccl::InvalidArgument, saying which value is wrong, for a side that is not a power of two
// >= 4, a level or scale that does not fit the side, or a family index out of range.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "volccl/data/generators.h"

namespace volccl::data {

// The bounding box of R^k_l and its parts, in pixels (Eq. 9-16). For l >= 2: the crest C^k_l
// (crest_width x crest_height = w(C^k_l) x l, Eq. 13-14) sits on the base T^k_l
// (base_width x base_height = w(T^k_l) x h(T^k_l), Eq. 15-16), a 45-degree parallelogram whose
// rows are crest_width + 1 wide, each one pixel right of the row above; width = base_width
// and height = crest_height + base_height = crest_width. For l == 1 the pattern is the
// 2^(k+1) square (R_1 is 2x2, Sec. IV-B) and has no crest.
struct RidgeGeometry {
  std::uint64_t width = 0;
  std::uint64_t height = 0;
  std::uint64_t crest_width = 0;
  std::uint64_t crest_height = 0;
  std::uint64_t base_width = 0;
  std::uint64_t base_height = 0;
  std::uint64_t peak_count = 0;  // |C_l| = 2^(l-2) + 1 (Eq. 6); 0 for l == 1
};
RidgeGeometry ridge_geometry(unsigned level, unsigned scale);

// The height of peak P_i of C_l (Eq. 8): one plus the number of 2^k, 0 <= k <= l - 2, that
// divide i. level >= 2, i <= 2^(level-2).
unsigned ridge_peak_height(unsigned level, std::uint64_t peak);

// R_l, the level-l Ridge pattern, in a side x side image (side a power of two): its bounding
// box's top-left pixel at (1, 1), the rest background. Level 1..log2(side) - 1, the levels
// whose pattern fits the image with the two-pixel separation of Eq. 17. Label Equivalence
// takes exactly `level` iterations on it (App. A). Same as ridge_instance(level, 0, side).
Volume ridge(unsigned level, std::uint64_t side);

// R^k_l (Sec. IV-C, Eq. 13-16): R_l with the crest's peaks and gaps 2^k times wider, the
// crest's height kept and the base recomputed; R^k_1 is the 2^(k+1) square. Top-left at
// (1, 1); it fits a 2^(k+l+1) cell (Eq. 17), so level + scale + 1 <= log2(side).
Volume ridge_instance(unsigned level, unsigned scale, std::uint64_t side);

// The six families of Sec. IV-C (Table III's names; Spiral is the classical pattern of
// Sec. IV, Fig. 1, which the paper evaluates as a sixth family in Sec. V-C).
enum class RidgeFamily {
  leveling,           // member i: R^(n-l-1)_l with l = i + 1, 1 <= l <= n - 1; x = l
  scaling,            // member i: R^(n-l-1)_l scaled by lambda = i / steps; x = lambda
  subdivision,        // member i: 4^i copies of R^(n-l-1-i)_l, 0 <= i <= n - l - 1; x = i
  random_instancing,  // member i: Subdivision(l) member s, each pattern kept with p = i / steps
  random_merging,     // member i: Subdivision(l) member s, neighbours joined with p = i / steps
  spiral,             // member i: spiral() of side lambda * 2^n, lambda = i / steps; x = lambda
};

// "leveling", "scaling", "subdivision", "random-instancing", "random-merging", "spiral".
const char* to_string(RidgeFamily family);
RidgeFamily parse_ridge_family(const std::string& name);  // throws volccl::InvalidArgument

// A family and its parameters. `level` is l for Scaling, Subdivision and the random families
// (Leveling and Spiral ignore it); `subdivisions` is s for the random families. `steps` is the
// number of equal intervals lambda or p takes from 0 to 1 (steps + 1 members); 0 picks the
// paper's, read from Table III's image counts at 100 runs per member: 15 for Scaling, 20 for
// the random families, 8 for Spiral. `seed` seeds the MT19937 of the random families; all
// members of one seed use the same draws, so with a growing p RandomInstancing only adds
// patterns and RandomMerging only adds joins.
struct RidgeFamilyParameters {
  RidgeFamily family = RidgeFamily::leveling;
  unsigned level = 3;         // the paper's choice for Fig. 7b-d
  unsigned subdivisions = 5;  // the paper's s for Fig. 7c-d
  unsigned steps = 0;
  std::uint32_t seed = 1;
};

// The number of members of the family on a side x side image.
std::size_t ridge_family_size(const RidgeFamilyParameters& parameters, std::uint64_t side);

// The free parameter of member `index`, the x value the paper plots (Fig. 7-8): l, lambda,
// the number of subdivisions, or p.
double ridge_family_x(const RidgeFamilyParameters& parameters, std::size_t index,
                      std::uint64_t side);

// Member `index` (0-based, in the order of the x values) of the family on a side x side image.
// Subdivision and the random families place each pattern's top-left at (1, 1) in its cell of
// the 2^s x 2^s grid. RandomInstancing draws one 32-bit output per pattern, in raster order of
// the cells, and keeps the pattern when (bits >> 8) / 2^24 < p. RandomMerging draws, for each
// cell in raster order, first for its right neighbour and then for the one below (when there
// is one), and joins the two when (bits >> 8) / 2^24 < p: a horizontal line that extends the
// left pattern's bottom row to the right one's, or a vertical line from the upper pattern's
// bottom row down to the top of the lower pattern's last peak (the right edge of the square
// for l == 1). Scaling samples the pattern nearest-neighbour: pixel (x, y) is the pattern's
// pixel (floor(x / lambda), floor(y / lambda)); lambda == 0 gives an empty image. Spiral is
// spiral({m, m, 1}) at the top-left corner, m = floor(lambda * side).
Volume ridge_family_member(const RidgeFamilyParameters& parameters, std::size_t index,
                           std::uint64_t side);

}  // namespace volccl::data
