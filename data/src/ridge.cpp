// The Ridge patterns of the LE/TM paper, Sec. IV-B and IV-C (see ridge.h).
#include "volccl/data/ridge.h"

#include <algorithm>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "volccl/error.h"

namespace volccl::data {
namespace {

// Each pattern's bounding box starts one pixel into its cell, so neighbouring patterns are
// two pixels apart (Sec. IV-C, before Eq. 17) and none touches the image's border.
constexpr std::uint64_t kMargin = 1;

[[noreturn]] void fail(const std::string& message) { throw InvalidArgument(message); }

// log2(side); refuses what is not 2^n x 2^n with n >= 2 (R_1 with its margins needs 4).
unsigned image_order(const char* who, std::uint64_t side) {
  if (side < 4 || (side & (side - 1)) != 0) {
    fail(std::string(who) + ": side " + std::to_string(side) +
         " is not a power of two >= 4 (the paper's images are 2^n x 2^n, Sec. IV-C)");
  }
  return static_cast<unsigned>(__builtin_ctzll(side));
}

// R^k_l fits a 2^(k+l+1) cell (Eq. 17), so it needs k + l + 1 <= n.
void require_fit(const char* who, unsigned level, unsigned scale, unsigned order) {
  if (level < 1) fail(std::string(who) + ": level must be >= 1");
  if (std::uint64_t{level} + scale + 1 > order) {
    fail(std::string(who) + ": level " + std::to_string(level) + " at scale " +
         std::to_string(scale) + " needs a 2^" + std::to_string(std::uint64_t{level} + scale + 1) +
         " image (Eq. 17: level + scale + 1 <= n), the image is 2^" + std::to_string(order) +
         "; levels 1.." + std::to_string(order > scale + 1 ? order - scale - 1 : 0) + " fit");
  }
}

Volume empty_image(std::uint64_t side) {
  return Volume{Extent3{side, side, 1}, std::vector<std::uint8_t>(side * side, 0)};
}

void fill_row(Volume& image, std::uint64_t y, std::uint64_t x_begin, std::uint64_t x_end) {
  const std::uint64_t side = image.extent.x;
  std::fill(image.voxels.begin() + y * side + x_begin, image.voxels.begin() + y * side + x_end, 1);
}

// Draws R^k_l with its bounding box's top-left pixel at (left, top).
void draw_pattern(Volume& image, unsigned level, unsigned scale, std::uint64_t left,
                  std::uint64_t top) {
  const RidgeGeometry geometry = ridge_geometry(level, scale);
  if (level == 1) {  // R_1 is 2x2 (Sec. IV-B), R^k_1 the same square 2^k times larger
    for (std::uint64_t y = 0; y < geometry.height; ++y) {
      fill_row(image, top + y, left, left + geometry.width);
    }
    return;
  }
  // The crest: peak P_i is 2^k pixels wide at x = 3i 2^k (Eq. 7, widened as in Eq. 13) and
  // h(P_i) tall (Eq. 8); the peaks stand on the base, so the tallest ones start at row 0.
  const std::uint64_t peak_width = std::uint64_t{1} << scale;
  for (std::uint64_t peak = 0; peak < geometry.peak_count; ++peak) {
    const std::uint64_t peak_left = left + 3 * peak * peak_width;
    for (std::uint64_t y = geometry.crest_height - ridge_peak_height(level, peak);
         y < geometry.crest_height; ++y) {
      fill_row(image, top + y, peak_left, peak_left + peak_width);
    }
  }
  // The base: h(T) rows (Eq. 16) of w(C) + 1 pixels, each one pixel right of the row above,
  // so the bounding box is w(T) = 2 w(C) - l wide (Eq. 15). The 45-degree side lets every
  // base pixel reach the crest by up-left steps, which spreads the base evenly over the
  // peaks' sub-components in LE's first iteration (Sec. IV-A, Fig. 4).
  for (std::uint64_t row = 0; row < geometry.base_height; ++row) {
    const std::uint64_t x = left + row;
    fill_row(image, top + geometry.crest_height + row, x, x + geometry.crest_width + 1);
  }
}

std::uint64_t default_steps(RidgeFamily family) {
  switch (family) {
    case RidgeFamily::scaling:
      return 15;  // Table III: 1600 images = 16 members x 100 runs
    case RidgeFamily::random_instancing:
    case RidgeFamily::random_merging:
      return 20;  // Table III: 2100 images = 21 members x 100 runs
    case RidgeFamily::spiral:
      return 8;  // Table III: 900 images = 9 members x 100 runs
    default:
      return 0;
  }
}

std::uint64_t steps_of(const RidgeFamilyParameters& parameters) {
  return parameters.steps != 0 ? parameters.steps : default_steps(parameters.family);
}

// 24 bits of one MT19937 output, exact in a double (generators.cpp's draw).
bool draw_below(std::mt19937& generator, double probability) {
  return static_cast<double>(generator() >> 8) * 0x1p-24 < probability;
}

// Checks the parameters that the family uses and the index; returns the member count.
std::size_t checked_size(const RidgeFamilyParameters& parameters, std::uint64_t side) {
  const unsigned order = image_order("ridge family", side);
  const std::uint64_t steps = steps_of(parameters);
  switch (parameters.family) {
    case RidgeFamily::leveling:
      return order - 1;  // l = 1..n-1
    case RidgeFamily::scaling:
      require_fit("ridge scaling", parameters.level, 0, order);
      return steps + 1;
    case RidgeFamily::subdivision:
      require_fit("ridge subdivision", parameters.level, 0, order);
      return order - parameters.level;  // s = 0..n-l-1
    case RidgeFamily::random_instancing:
    case RidgeFamily::random_merging:
      require_fit(to_string(parameters.family), parameters.level, 0, order);
      if (parameters.subdivisions > order - parameters.level - 1) {
        fail(std::string(to_string(parameters.family)) + ": " +
             std::to_string(parameters.subdivisions) + " subdivisions of level " +
             std::to_string(parameters.level) + " patterns do not fit a 2^" +
             std::to_string(order) + " image (0 <= s <= n - l - 1 = " +
             std::to_string(order - parameters.level - 1) + ", Sec. IV-C)");
      }
      return steps + 1;
    case RidgeFamily::spiral:
      return steps + 1;
  }
  fail("ridge family: unknown family");
}

std::size_t checked_index(const RidgeFamilyParameters& parameters, std::size_t index,
                          std::uint64_t side) {
  const std::size_t size = checked_size(parameters, side);
  if (index >= size) {
    fail(std::string(to_string(parameters.family)) + ": member " + std::to_string(index) +
         " is outside 0.." + std::to_string(size - 1) + " for a " + std::to_string(side) + "x" +
         std::to_string(side) + " image");
  }
  return size;
}

// Member s of Subdivision(l): 4^s patterns R^(n-l-1-s)_l in the cells of a 2^s x 2^s grid
// (Sec. IV-C.3). `keep` says which cells get their pattern; `merge` (may be empty) which
// neighbours to join, two flags per cell in raster order: right, below.
Volume subdivided(unsigned level, unsigned subdivisions, std::uint64_t side,
                  const std::vector<bool>& keep, const std::vector<bool>& merge) {
  Volume image = empty_image(side);
  const unsigned order = image_order("ridge subdivision", side);
  const unsigned scale = order - level - 1 - subdivisions;
  const std::uint64_t cells = std::uint64_t{1} << subdivisions;
  const std::uint64_t cell = side >> subdivisions;  // 2^(k+l+1), Eq. 17
  const RidgeGeometry geometry = ridge_geometry(level, scale);
  for (std::uint64_t cy = 0; cy < cells; ++cy) {
    for (std::uint64_t cx = 0; cx < cells; ++cx) {
      if (keep.empty() || keep[cy * cells + cx]) {
        draw_pattern(image, level, scale, cx * cell + kMargin, cy * cell + kMargin);
      }
    }
  }
  if (merge.empty()) return image;
  // The bottom row of a pattern: at y = height - 1 of its box, from x = base_height - 1 (the
  // base's last row; 0 for the square) to the box's right edge.
  const std::uint64_t bottom_y = kMargin + geometry.height - 1;
  const std::uint64_t bottom_left = kMargin + (level == 1 ? 0 : geometry.base_height - 1);
  const std::uint64_t right_x = kMargin + geometry.width - 1;
  // A column in both the bottom row and the top row: the last peak's right column (l >= 2,
  // the last peak is l tall, Eq. 8) or the square's right column.
  const std::uint64_t join_x = kMargin + (level == 1 ? geometry.width : geometry.crest_width) - 1;
  for (std::uint64_t cy = 0; cy < cells; ++cy) {
    for (std::uint64_t cx = 0; cx < cells; ++cx) {
      const std::uint64_t flags = 2 * (cy * cells + cx);
      if (merge[flags]) {  // extend the bottom row to the right neighbour's
        fill_row(image, cy * cell + bottom_y, cx * cell + right_x + 1,
                 (cx + 1) * cell + bottom_left);
      }
      if (merge[flags + 1]) {  // from below the bottom row down to the lower neighbour's top
        for (std::uint64_t y = cy * cell + bottom_y + 1; y < (cy + 1) * cell + kMargin; ++y) {
          image.voxels[y * side + cx * cell + join_x] = 1;
        }
      }
    }
  }
  return image;
}

}  // namespace

unsigned ridge_peak_height(unsigned level, std::uint64_t peak) {
  if (level < 2 || level > 63 || peak > (std::uint64_t{1} << (level - 2))) {
    fail("ridge_peak_height: no peak " + std::to_string(peak) + " at level " +
         std::to_string(level) + " (peaks 0..2^(l-2) exist for l >= 2, Eq. 6)");
  }
  // Eq. 8: h(P_i) = 1 + sum_{k=0}^{l-2} floor((2^k - (i mod 2^k)) / 2^k).
  unsigned height = 1;
  for (unsigned k = 0; k + 2 <= level; ++k) {
    const std::uint64_t power = std::uint64_t{1} << k;
    height += static_cast<unsigned>((power - peak % power) / power);
  }
  return height;
}

RidgeGeometry ridge_geometry(unsigned level, unsigned scale) {
  if (level < 1 || std::uint64_t{level} + scale + 1 > 63) {
    fail("ridge_geometry: level " + std::to_string(level) + " at scale " + std::to_string(scale) +
         " is outside level >= 1, level + scale <= 62");
  }
  RidgeGeometry geometry;
  if (level == 1) {
    geometry.width = geometry.height = std::uint64_t{2} << scale;
    return geometry;
  }
  const std::uint64_t wide = std::uint64_t{1} << scale;                       // 2^k
  geometry.peak_count = (std::uint64_t{1} << (level - 2)) + 1;                // Eq. 6
  geometry.crest_width = (3 * (std::uint64_t{1} << (level - 2)) + 1) * wide;  // Eq. 9, 13
  geometry.crest_height = level;                                              // Eq. 10, 14
  geometry.base_width = 2 * geometry.crest_width - level;                     // Eq. 11, 15
  geometry.base_height = geometry.crest_width - level;                        // Eq. 12, 16
  geometry.width = geometry.base_width;
  geometry.height = geometry.crest_height + geometry.base_height;
  return geometry;
}

Volume ridge(unsigned level, std::uint64_t side) { return ridge_instance(level, 0, side); }

Volume ridge_instance(unsigned level, unsigned scale, std::uint64_t side) {
  const unsigned order = image_order("ridge", side);
  require_fit("ridge", level, scale, order);
  Volume image = empty_image(side);
  draw_pattern(image, level, scale, kMargin, kMargin);
  return image;
}

const char* to_string(RidgeFamily family) {
  switch (family) {
    case RidgeFamily::leveling:
      return "leveling";
    case RidgeFamily::scaling:
      return "scaling";
    case RidgeFamily::subdivision:
      return "subdivision";
    case RidgeFamily::random_instancing:
      return "random-instancing";
    case RidgeFamily::random_merging:
      return "random-merging";
    case RidgeFamily::spiral:
      return "spiral";
  }
  return "unknown";
}

RidgeFamily parse_ridge_family(const std::string& name) {
  for (RidgeFamily family :
       {RidgeFamily::leveling, RidgeFamily::scaling, RidgeFamily::subdivision,
        RidgeFamily::random_instancing, RidgeFamily::random_merging, RidgeFamily::spiral}) {
    if (name == to_string(family)) return family;
  }
  fail("unknown ridge family '" + name +
       "' (leveling, scaling, subdivision, random-instancing, random-merging or spiral)");
}

std::size_t ridge_family_size(const RidgeFamilyParameters& parameters, std::uint64_t side) {
  return checked_size(parameters, side);
}

double ridge_family_x(const RidgeFamilyParameters& parameters, std::size_t index,
                      std::uint64_t side) {
  checked_index(parameters, index, side);
  switch (parameters.family) {
    case RidgeFamily::leveling:
      return static_cast<double>(index + 1);
    case RidgeFamily::subdivision:
      return static_cast<double>(index);
    default:
      return static_cast<double>(index) / static_cast<double>(steps_of(parameters));
  }
}

Volume ridge_family_member(const RidgeFamilyParameters& parameters, std::size_t index,
                           std::uint64_t side) {
  checked_index(parameters, index, side);
  const unsigned order = image_order("ridge family", side);
  const std::uint64_t steps = steps_of(parameters);
  const unsigned level = parameters.level;
  switch (parameters.family) {
    case RidgeFamily::leveling: {  // Sec. IV-C.1: R^(n-l-1)_l, the largest level-l pattern
      const auto member_level = static_cast<unsigned>(index + 1);
      return ridge_instance(member_level, order - member_level - 1, side);
    }
    case RidgeFamily::scaling: {  // Sec. IV-C.2: R^(n-l-1)_l scaled by lambda = index / steps
      const Volume full = ridge_instance(level, order - level - 1, side);
      Volume image = empty_image(side);
      if (index == 0) return image;
      // Source pixel floor(x / lambda) = floor(x steps / index), in integers.
      std::vector<std::uint64_t> source;
      for (std::uint64_t x = 0; x * steps / index < side; ++x) source.push_back(x * steps / index);
      for (std::uint64_t y = 0; y < source.size(); ++y) {
        for (std::uint64_t x = 0; x < source.size(); ++x) {
          image.voxels[y * side + x] = full.voxels[source[y] * side + source[x]];
        }
      }
      return image;
    }
    case RidgeFamily::subdivision:  // Sec. IV-C.3
      return subdivided(level, static_cast<unsigned>(index), side, {}, {});
    case RidgeFamily::random_instancing: {  // Sec. IV-C.4: each pattern kept with p
      const double p = static_cast<double>(index) / static_cast<double>(steps);
      const std::uint64_t cells = std::uint64_t{1} << (2 * parameters.subdivisions);
      std::mt19937 generator(parameters.seed);
      std::vector<bool> keep(cells);
      for (std::uint64_t cell = 0; cell < cells; ++cell) keep[cell] = draw_below(generator, p);
      return subdivided(level, parameters.subdivisions, side, keep, {});
    }
    case RidgeFamily::random_merging: {  // Sec. IV-C.5: neighbours joined with p
      const double p = static_cast<double>(index) / static_cast<double>(steps);
      const std::uint64_t cells = std::uint64_t{1} << parameters.subdivisions;
      std::mt19937 generator(parameters.seed);
      std::vector<bool> merge(2 * cells * cells, false);
      for (std::uint64_t cy = 0; cy < cells; ++cy) {
        for (std::uint64_t cx = 0; cx < cells; ++cx) {
          const std::uint64_t flags = 2 * (cy * cells + cx);
          if (cx + 1 < cells) merge[flags] = draw_below(generator, p);
          if (cy + 1 < cells) merge[flags + 1] = draw_below(generator, p);
        }
      }
      return subdivided(level, parameters.subdivisions, side, {}, merge);
    }
    case RidgeFamily::spiral: {  // Sec. IV, Fig. 1 and Sec. V-C, Fig. 8a
      Volume image = empty_image(side);
      const std::uint64_t spiral_side = index * side / steps;
      if (spiral_side == 0) return image;
      const Volume drawn = spiral(Extent3{spiral_side, spiral_side, 1});
      for (std::uint64_t y = 0; y < spiral_side; ++y) {
        std::copy(drawn.voxels.begin() + y * spiral_side,
                  drawn.voxels.begin() + (y + 1) * spiral_side, image.voxels.begin() + y * side);
      }
      return image;
    }
  }
  fail("ridge family: unknown family");
}

}  // namespace volccl::data
