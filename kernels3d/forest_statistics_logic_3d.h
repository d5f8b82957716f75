// The Late statistics of BUF's and BKE's components taken from their block forest while it still
// exists, between the ranking of the roots and FinalLabeling, for volumes of many small
// components. Written once for the CUDA kernels (forest_statistics_3d.cu) and the CPU test.
//
// Every block's anchor slot holds its root's key (the component's first voxel) once the last
// Compression has run, so a component's blocks are the blocks whose slot holds that key. The root
// block holds the component's first voxel, so every other block of it lies in the root's layer
// of blocks or a later one. The root gathers the blocks of its window W(root), the 3 x 3 x 2
// blocks (i - 1..i + 1, j - 1..j + 1, k..k + 1), whose slot holds its key, and stores the
// component's row whole: no table to clear, no shared table, no atomics. A block of the
// component outside W(root) (a far block) adds itself to the row by atomics, after every row is
// stored; in volumes of small components such blocks are few.
#pragma once

#include <cstdint>

#include "kernels3d/block_logic_3d.h"
#include "runtime/host_device.h"
#include "runtime/moments.h"

namespace volccl::kernels3d {

// Sums of some blocks' foreground voxels in coordinates relative to an origin voxel, in 32 bits:
// the blocks lie within a few voxels of it (a root's window, a warp's row of blocks).
struct RelativeSums {
  std::int32_t count;
  std::int32_t sum[3];
  std::int32_t sum_products[6];  // xx, yy, zz, xy, xz, yz, as detail::Moments
  std::int32_t min[3];
  std::int32_t max[3];
};

VOLCCL_HD RelativeSums no_relative_sums() {
  RelativeSums s{};
  for (int a = 0; a < 3; ++a) {
    s.min[a] = 0x7FFFFFFF;
    s.max[a] = -0x7FFFFFFF - 1;
  }
  return s;
}

// Adds a block's foreground voxels (bit lx + 2 ly + 4 lz, foreground != 0) whose anchor lies at
// (x, y, z) from the origin. With l in {0, 1}, l^2 = l, so every sum over the block is a
// popcount of the bits that have the coordinates in question: sum (x + lx)^2 = n x^2 + 2 x sum lx
// + sum lx.
VOLCCL_HD void add_block(RelativeSums& s, std::uint32_t foreground, int x, int y, int z) {
  constexpr std::uint32_t kHigh[3] = {0xAA, 0xCC, 0xF0};  // voxels with lx, ly, lz = 1
  const int n = static_cast<int>(detail::popcount(foreground));
  const int anchor[3] = {x, y, z};
  int high[3];
  for (int a = 0; a < 3; ++a) high[a] = static_cast<int>(detail::popcount(foreground & kHigh[a]));
  s.count += n;
  for (int a = 0; a < 3; ++a) {
    s.sum[a] += n * anchor[a] + high[a];
    s.sum_products[a] += n * anchor[a] * anchor[a] + 2 * anchor[a] * high[a] + high[a];
    const int low = anchor[a] + ((foreground & ~kHigh[a] & 0xFFu) != 0 ? 0 : 1);
    const int top = anchor[a] + ((foreground & kHigh[a]) != 0 ? 1 : 0);
    s.min[a] = low < s.min[a] ? low : s.min[a];
    s.max[a] = top > s.max[a] ? top : s.max[a];
  }
  const int first[3] = {0, 0, 1}, second[3] = {1, 2, 2};
  for (int p = 0; p < 3; ++p) {
    const int a = first[p], b = second[p];
    const int both = static_cast<int>(detail::popcount(foreground & kHigh[a] & kHigh[b]));
    s.sum_products[3 + p] +=
        n * anchor[a] * anchor[b] + anchor[a] * high[b] + anchor[b] * high[a] + both;
  }
}

// The sums as moments in the volume's coordinates, the origin at voxel (x, y, z). Unsigned 64-bit
// arithmetic wraps, so the results are exact whenever the true values fit (as core's
// to_absolute); the origin's 32-bit coordinates keep its products to single wide multiplies.
VOLCCL_HD detail::Moments absolute_moments(const RelativeSums& s, std::uint32_t x, std::uint32_t y,
                                           std::uint32_t z) {
  const std::uint32_t o[3] = {x, y, z};
  const auto wide = [](std::int32_t v) {
    return static_cast<std::uint64_t>(static_cast<std::int64_t>(v));
  };
  const auto count = static_cast<std::uint32_t>(s.count);
  detail::Moments m;
  m.count = count;
  for (int a = 0; a < 3; ++a) {
    m.sum[a] = wide(s.sum[a]) + std::uint64_t{count} * o[a];
    m.min[a] = o[a] + static_cast<std::uint32_t>(s.min[a]);
    m.max[a] = o[a] + static_cast<std::uint32_t>(s.max[a]);
  }
  const int first[6] = {0, 1, 2, 0, 0, 1}, second[6] = {0, 1, 2, 1, 2, 2};
  for (int p = 0; p < 6; ++p) {
    const int a = first[p], b = second[p];
    m.sum_products[p] = wide(s.sum_products[p]) + wide(s.sum[b]) * o[a] + wide(s.sum[a]) * o[b] +
                        (std::uint64_t{o[a]} * o[b]) * count;
  }
  return m;
}

// Whether `block` lies in W(root).
VOLCCL_HD bool in_window(const Block& root, const Block& block) {
  return block.i + 1 >= root.i && block.i <= root.i + 1 && block.j + 1 >= root.j &&
         block.j <= root.j + 1 && block.k >= root.k && block.k <= root.k + 1;
}

// Where a block keeps its info word, from its anchor: its first voxel after the anchor
// (kernels/block_forest.h's info_slot); 0 for a block of one voxel, which keeps none.
VOLCCL_HD std::uint32_t info_offset(const BlockGrid& grid, const Block& block) {
  std::uint32_t slot = block.anchor;
  return kernels::info_slot<Dim3>(grid, block, &slot) ? slot - block.anchor : 0;
}

// A block's anchor slot and foreground voxels.
struct BlockSlots {
  std::uint32_t slot;        // the root's key; kNoKey for an empty block or none read
  std::uint32_t foreground;  // bit lx + 2 ly + 4 lz
};

// The slots of the block at `anchor` (`offset`: its info_offset) when `wanted`, else kNoKey and no
// voxels. The reads are made either way, of voxel 0's slot (always written) when not wanted, so
// that the GPU issues them without branches. The foreground is the info word's low byte, for BUF
// and BKE alike (the input's voxel for a block of one voxel).
VOLCCL_HD BlockSlots read_block(const std::uint8_t* mask, const std::uint32_t* labels,
                                std::uint32_t anchor, std::uint32_t offset, bool wanted) {
  const std::uint32_t at = wanted ? anchor : 0;
  const std::uint32_t slot = labels[at];
  const std::uint32_t info = labels[at + (wanted ? offset : 0)];
  std::uint32_t foreground = info & 0xFFu;
  if (wanted && offset == 0) foreground = mask[at] != 0 ? 1u : 0u;
  return wanted ? BlockSlots{slot, foreground} : BlockSlots{kNoKey, 0};
}

// A root's window sums, packed several to a 32-bit word, in coordinates from the window's corner
// (2i - 2, 2j - 2, 2k) for root block (i, j, k): x and y in 0..5, z in 0..3, at most 144 voxels,
// so no field overflows into the next (count < 2^8, sum x, y < 2^10, sum z < 2^9, sum zz < 2^11,
// the other sums of products < 2^12); and the foreground bytes of the members in each column,
// row and slice of blocks, for the bounding box. Adding a block is then a few multiply-adds by
// constants of its position (the kernel is bound by instruction issue).
struct PackedWindowSums {
  std::uint32_t count_x_y;                       // count at 0, sum x at 8, sum y at 18
  std::uint32_t z_zz_xz;                         // sum z at 0, sum zz at 9, sum xz at 20
  std::uint32_t xx_yy;                           // sum xx at 0, sum yy at 12
  std::uint32_t xy_yz;                           // sum xy at 0, sum yz at 12
  std::uint32_t columns[3], rows[3], slices[2];  // ORs of the members' foreground bytes
};

// Adds a block's foreground voxels (bit lx + 2 ly + 4 lz; none adds nothing) at window column
// c, row r and slice l, its anchor (x, y, z) = (2c, 2r, 2l) from the corner. With l in {0, 1},
// l^2 = l: sum (x + lx)^2 = n x^2 + (2 x + 1) sum lx, and sum (x + lx)(y + ly) = n x y + x sum ly
// + y sum lx + sum lx ly.
VOLCCL_HD void add_block(PackedWindowSums& s, std::uint32_t foreground, int c, int r, int l) {
  const auto x = static_cast<std::uint32_t>(2 * c), y = static_cast<std::uint32_t>(2 * r);
  const auto z = static_cast<std::uint32_t>(2 * l);
  const std::uint32_t n = detail::popcount(foreground);
  const std::uint32_t sx = detail::popcount(foreground & 0xAAu);
  const std::uint32_t sy = detail::popcount(foreground & 0xCCu);
  const std::uint32_t sz = detail::popcount(foreground & 0xF0u);
  const std::uint32_t sxy = detail::popcount(foreground & 0x88u);
  const std::uint32_t sxz = detail::popcount(foreground & 0xA0u);
  const std::uint32_t syz = detail::popcount(foreground & 0xC0u);
  s.count_x_y += n * (1 + (x << 8) + (y << 18)) + (sx << 8) + (sy << 18);
  s.z_zz_xz += n * (z + (z * z << 9) + (x * z << 20)) + sz * (1 + ((2 * z + 1) << 9) + (x << 20)) +
               ((z * sx + sxz) << 20);
  s.xx_yy += n * (x * x + (y * y << 12)) + sx * (2 * x + 1) + ((sy * (2 * y + 1)) << 12);
  s.xy_yz += n * (x * y + (y * z << 12)) + x * sy + y * sx + sxy + ((y * sz + z * sy + syz) << 12);
  s.columns[c] |= foreground;
  s.rows[r] |= foreground;
  s.slices[l] |= foreground;
}

// The packed sums as RelativeSums from the root's anchor, 2 voxels from the corner in x and y.
VOLCCL_HD RelativeSums unpacked(const PackedWindowSums& s) {
  const auto field = [](std::uint32_t word, int shift, int bits) {
    return static_cast<std::int32_t>((word >> shift) & ((1u << bits) - 1));
  };
  const std::int32_t n = field(s.count_x_y, 0, 8);
  const std::int32_t sx = field(s.count_x_y, 8, 10), sy = field(s.count_x_y, 18, 10);
  const std::int32_t sz = field(s.z_zz_xz, 0, 9);
  RelativeSums r;
  r.count = n;
  r.sum[0] = sx - 2 * n;
  r.sum[1] = sy - 2 * n;
  r.sum[2] = sz;
  r.sum_products[0] = field(s.xx_yy, 0, 12) - 4 * sx + 4 * n;
  r.sum_products[1] = field(s.xx_yy, 12, 12) - 4 * sy + 4 * n;
  r.sum_products[2] = field(s.z_zz_xz, 9, 11);
  r.sum_products[3] = field(s.xy_yz, 0, 12) - 2 * sx - 2 * sy + 4 * n;
  r.sum_products[4] = field(s.z_zz_xz, 20, 12) - 2 * sz;
  r.sum_products[5] = field(s.xy_yz, 12, 12) - 2 * sz;
  // Bit 2 c + l of a coordinate's occupancy: a member in column (row, slice) c has a voxel at
  // offset l in the block. Written out rather than looped: GCC's UndefinedBehaviorSanitizer at
  // -O1 mistakes the looped form's value for 0.
  const auto offsets = [](std::uint32_t foreground, std::uint32_t at_0, std::uint32_t at_1) {
    return ((foreground & at_0) != 0 ? 1u : 0u) | ((foreground & at_1) != 0 ? 2u : 0u);
  };
  const std::uint32_t occupied[3] = {
      offsets(s.columns[0], 0x55u, 0xAAu) | offsets(s.columns[1], 0x55u, 0xAAu) << 2 |
          offsets(s.columns[2], 0x55u, 0xAAu) << 4,
      offsets(s.rows[0], 0x33u, 0xCCu) | offsets(s.rows[1], 0x33u, 0xCCu) << 2 |
          offsets(s.rows[2], 0x33u, 0xCCu) << 4,
      offsets(s.slices[0], 0x0Fu, 0xF0u) | offsets(s.slices[1], 0x0Fu, 0xF0u) << 2};
  for (int a = 0; a < 3; ++a) {
    const int corner = a < 2 ? 2 : 0;
    r.min[a] = detail::lowest_bit(occupied[a]) - corner;
    r.max[a] = detail::highest_bit(occupied[a]) - corner;
  }
  return r;
}

// A key no slot holds (not a voxel index, as volumes have fewer than 2^32 - 1 voxels, and not
// kNoKey): the lanes that are not roots take part in their warp's reads with it.
constexpr std::uint32_t kNoComponent = kNoKey - 1;

// Three blocks of a row of W(root), dx = -1, 0, 1 (kNoKey outside the volume). The GPU's warps
// read their rows together and pass the neighbours by shuffles (forest_statistics_3d.cu).
struct WindowRow {
  BlockSlots block[3];
};

// The sums of the blocks of W(root) whose slot holds `key`, the root's included; `rows(dy, dz)`
// gives the window's rows (WindowRow). `unite(members)` ORs the 18-bit masks of the members'
// positions over the threads that work alongside (on the GPU, the warp's lanes), so that a
// position is added only where some thread has a member there, and without a branch per thread.
template <class Rows, class Unite>
VOLCCL_HD PackedWindowSums window_sums(std::uint32_t key, const Rows& rows, const Unite& unite) {
  WindowRow window[6];
  std::uint32_t members = 0;  // bit 9 dz + 3 (dy + 1) + dx + 1
  VOLCCL_UNROLL
  for (int r = 0; r < 6; ++r) {
    window[r] = rows(r % 3 - 1, r / 3);
    VOLCCL_UNROLL
    for (int c = 0; c < 3; ++c)
      members |= (window[r].block[c].slot == key ? 1u : 0u) << (3 * r + c);
  }
  const std::uint32_t anywhere = unite(members);
  PackedWindowSums s{0, 0, 0, 0, {0, 0, 0}, {0, 0, 0}, {0, 0}};
  VOLCCL_UNROLL
  for (int w = 0; w < 18; ++w) {
    if (((anywhere >> w) & 1) == 0) continue;
    const std::uint32_t foreground =
        ((members >> w) & 1) != 0 ? window[w / 3].block[w % 3].foreground : 0;
    add_block(s, foreground, w % 3, (w / 3) % 3, w / 9);
  }
  return s;
}

// The root's row: the window's sums in the volume's coordinates.
VOLCCL_HD detail::Moments window_moments(const PackedWindowSums& s, const Block& root) {
  return absolute_moments(unpacked(s), 2 * root.i, 2 * root.j, 2 * root.k);
}

}  // namespace volccl::kernels3d
