#include "volccl/data/generators.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <random>
#include <string>

#include "volccl/error.h"

namespace volccl::data {
namespace {

Volume empty_volume(Extent3 extent) {
  return Volume{extent, std::vector<std::uint8_t>(extent.voxel_count(), 0)};
}

std::uint64_t ceil_div(std::uint64_t numerator, std::uint64_t denominator) {
  return (numerator + denominator - 1) / denominator;
}

// One draw from raw generator bits: 24 bits are exact in a double on every platform.
bool draw_foreground(std::mt19937& generator, double density) {
  const double unit = static_cast<double>(generator() >> 8) * 0x1p-24;
  return unit < density;
}

// Skilling's "Programming the Hilbert curve" (AIP Conf. Proc. 707, 2004): turns the Hilbert
// index, given in transposed form (its bits dealt round-robin to the three axes, most
// significant first), into the coordinates of the point in place.
void transpose_to_axes(std::array<std::uint32_t, 3>& point, unsigned bits) {
  const std::uint32_t past_top = 2u << (bits - 1);
  std::uint32_t swap_bits = point[2] >> 1;  // Gray decode by H ^ (H / 2)
  for (int axis = 2; axis > 0; --axis) point[axis] ^= point[axis - 1];
  point[0] ^= swap_bits;
  for (std::uint32_t bit = 2; bit != past_top; bit <<= 1) {  // undo the excess work
    const std::uint32_t lower = bit - 1;
    for (int axis = 2; axis >= 0; --axis) {
      if (point[axis] & bit) {
        point[0] ^= lower;  // invert
      } else {
        swap_bits = (point[0] ^ point[axis]) & lower;  // exchange
        point[0] ^= swap_bits;
        point[axis] ^= swap_bits;
      }
    }
  }
}

std::array<std::uint32_t, 3> hilbert_point(std::uint64_t index, unsigned order) {
  std::array<std::uint32_t, 3> transposed{0, 0, 0};
  for (unsigned level = 0; level < order; ++level) {
    for (unsigned axis = 0; axis < 3; ++axis) {
      const std::uint64_t bit = (index >> (3 * level + 2 - axis)) & 1u;
      transposed[axis] |= static_cast<std::uint32_t>(bit << level);
    }
  }
  transpose_to_axes(transposed, order);
  return transposed;
}

// floor(sqrt(value)) without trusting the rounding of std::sqrt.
std::uint64_t integer_sqrt(std::uint64_t value) {
  auto root = static_cast<std::uint64_t>(std::sqrt(static_cast<double>(value)));
  while (root * root > value) --root;
  while ((root + 1) * (root + 1) <= value) ++root;
  return root;
}

// One slice of spiral(): a walker starts at (0, 0) heading +x, goes straight while it can and
// turns clockwise when it cannot. It may enter a voxel only when none of that voxel's
// 4-neighbours, other than the one it comes from, is drawn yet, which keeps the one-voxel
// gap to the turns already drawn.
std::vector<std::uint8_t> spiral_slice(std::int64_t width, std::int64_t height) {
  std::vector<std::uint8_t> slice(static_cast<std::size_t>(width * height), 0);
  auto drawn = [&](std::int64_t x, std::int64_t y) {
    const bool inside = x >= 0 && x < width && y >= 0 && y < height;
    return inside && slice[static_cast<std::size_t>(y * width + x)] != 0;
  };
  constexpr std::int64_t kStepX[4] = {1, 0, -1, 0};  // right, down, left, up
  constexpr std::int64_t kStepY[4] = {0, 1, 0, -1};
  auto can_enter = [&](std::int64_t x, std::int64_t y, std::int64_t from_x, std::int64_t from_y) {
    if (x < 0 || x >= width || y < 0 || y >= height || drawn(x, y)) return false;
    for (int direction = 0; direction < 4; ++direction) {
      const std::int64_t neighbour_x = x + kStepX[direction];
      const std::int64_t neighbour_y = y + kStepY[direction];
      const bool is_origin = neighbour_x == from_x && neighbour_y == from_y;
      if (!is_origin && drawn(neighbour_x, neighbour_y)) return false;
    }
    return true;
  };
  std::int64_t x = 0, y = 0;
  slice[0] = 1;
  for (int leg = 0;; ++leg) {
    const int direction = leg % 4;
    std::int64_t length = 0;
    while (can_enter(x + kStepX[direction], y + kStepY[direction], x, y)) {
      x += kStepX[direction];
      y += kStepY[direction];
      slice[static_cast<std::size_t>(y * width + x)] = 1;
      ++length;
    }
    // Only the first leg may be empty: a one-voxel-wide slice starts by going down.
    if (length == 0 && leg > 0) break;
  }
  return slice;
}

}  // namespace

Volume random_granular(Extent3 extent, double density, unsigned granularity, std::uint32_t seed) {
  if (granularity == 0) throw InvalidArgument("random_granular: granularity must be >= 1");
  if (!(density >= 0.0 && density <= 1.0)) {
    throw InvalidArgument("random_granular: density " + std::to_string(density) +
                          " is outside 0..1");
  }
  Volume volume = empty_volume(extent);
  const std::uint64_t cells_x = ceil_div(extent.x, granularity);
  const std::uint64_t cells_y = ceil_div(extent.y, granularity);
  const std::uint64_t cells_z = ceil_div(extent.z, granularity);
  std::mt19937 generator(seed);
  std::vector<std::uint8_t> row(extent.x);
  for (std::uint64_t cell_z = 0; cell_z < cells_z; ++cell_z) {
    for (std::uint64_t cell_y = 0; cell_y < cells_y; ++cell_y) {
      for (std::uint64_t cell_x = 0; cell_x < cells_x; ++cell_x) {
        const std::uint8_t value = draw_foreground(generator, density) ? 1 : 0;
        const std::uint64_t x_end = std::min<std::uint64_t>((cell_x + 1) * granularity, extent.x);
        std::fill(row.begin() + cell_x * granularity, row.begin() + x_end, value);
      }
      // Every voxel row of this row of cells is the same.
      const std::uint64_t z_end = std::min<std::uint64_t>((cell_z + 1) * granularity, extent.z);
      const std::uint64_t y_end = std::min<std::uint64_t>((cell_y + 1) * granularity, extent.y);
      for (std::uint64_t z = cell_z * granularity; z < z_end; ++z) {
        for (std::uint64_t y = cell_y * granularity; y < y_end; ++y) {
          std::copy(row.begin(), row.end(), volume.voxels.begin() + (z * extent.y + y) * extent.x);
        }
      }
    }
  }
  return volume;
}

Volume hilbert(unsigned order, std::uint64_t side) {
  const bool side_is_power_of_two = side >= 2 && (side & (side - 1)) == 0;
  if (!side_is_power_of_two) {
    throw InvalidArgument("hilbert: side " + std::to_string(side) + " is not a power of two");
  }
  const auto max_order = static_cast<unsigned>(__builtin_ctzll(side));
  if (order < 1 || order > max_order) {
    throw InvalidArgument("hilbert: order " + std::to_string(order) + " is outside 1.." +
                          std::to_string(max_order) + " for side " + std::to_string(side));
  }
  Volume volume = empty_volume(Extent3{side, side, side});
  const std::uint64_t spacing = side >> order;
  const std::uint64_t offset = spacing / 2;
  auto set_voxel = [&](std::uint64_t x, std::uint64_t y, std::uint64_t z) {
    volume.voxels[(z * side + y) * side + x] = 1;
  };
  const std::uint64_t point_count = std::uint64_t{1} << (3 * order);
  std::array<std::uint32_t, 3> previous = hilbert_point(0, order);
  set_voxel(previous[0] * spacing + offset, previous[1] * spacing + offset,
            previous[2] * spacing + offset);
  for (std::uint64_t index = 1; index < point_count; ++index) {
    const std::array<std::uint32_t, 3> point = hilbert_point(index, order);
    // Consecutive points are grid neighbours, so each step moves along one axis by one voxel.
    for (std::uint64_t step = 1; step <= spacing; ++step) {
      std::array<std::uint64_t, 3> voxel{};
      for (int axis = 0; axis < 3; ++axis) {
        const auto start = static_cast<std::int64_t>(previous[axis] * spacing);
        const auto delta = static_cast<std::int64_t>(point[axis]) - previous[axis];
        voxel[axis] =
            static_cast<std::uint64_t>(start + delta * static_cast<std::int64_t>(step)) + offset;
      }
      set_voxel(voxel[0], voxel[1], voxel[2]);
    }
    previous = point;
  }
  return volume;
}

Volume spiral(Extent3 extent) {
  Volume volume = empty_volume(extent);
  const std::vector<std::uint8_t> slice =
      spiral_slice(static_cast<std::int64_t>(extent.x), static_cast<std::int64_t>(extent.y));
  for (std::uint64_t z = 0; z < extent.z; ++z) {
    auto slice_start = volume.voxels.begin() + z * slice.size();
    if (z % 2 == 0) {
      std::copy(slice.begin(), slice.end(), slice_start);
    } else {
      *slice_start = 1;  // joins the outer ends of the spirals below and above
    }
  }
  return volume;
}

Volume checkerboard(Extent3 extent) {
  Volume volume = empty_volume(extent);
  std::uint64_t voxel = 0;
  for (std::uint64_t z = 0; z < extent.z; ++z) {
    for (std::uint64_t y = 0; y < extent.y; ++y) {
      for (std::uint64_t x = 0; x < extent.x; ++x) {
        volume.voxels[voxel++] = (x + y + z) % 2 == 0 ? 1 : 0;
      }
    }
  }
  return volume;
}

Volume shells(Extent3 extent, unsigned gap) {
  Volume volume = empty_volume(extent);
  const std::uint64_t period = std::uint64_t{gap} + 1;
  // Twice the offset from the centre is an integer, so the distance test stays in integers:
  // round(d) == k  <=>  (2k - 1)^2 <= (2d)^2 < (2k + 1)^2  <=>  k == (floor(2d) + 1) / 2.
  auto twice_offset = [](std::uint64_t coordinate, std::uint64_t size) {
    return static_cast<std::int64_t>(2 * coordinate) - static_cast<std::int64_t>(size - 1);
  };
  std::uint64_t voxel = 0;
  for (std::uint64_t z = 0; z < extent.z; ++z) {
    const std::int64_t dz = twice_offset(z, extent.z);
    for (std::uint64_t y = 0; y < extent.y; ++y) {
      const std::int64_t dy = twice_offset(y, extent.y);
      for (std::uint64_t x = 0; x < extent.x; ++x) {
        const std::int64_t dx = twice_offset(x, extent.x);
        const auto twice_distance_squared = static_cast<std::uint64_t>(dx * dx + dy * dy + dz * dz);
        const std::uint64_t rounded_distance = (integer_sqrt(twice_distance_squared) + 1) / 2;
        volume.voxels[voxel++] = rounded_distance % period == 0 ? 1 : 0;
      }
    }
  }
  return volume;
}

}  // namespace volccl::data
