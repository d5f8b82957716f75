// The moments of a run of voxels along x, a block's voxels, and their merging, written once for
// the CUDA kernels and the CPU backend. A run of n voxels from (x0, y, z) has closed-form sums
// (HA4 paper Sec. IV-D sums segments the same way):
//   sum x  = n x0 + n(n-1)/2
//   sum xx = n x0^2 + x0 n(n-1) + (n-1)n(2n-1)/6
// and y, z are constant along it. Every sum is an unsigned 64-bit integer, so merging in any
// order gives the same bits.
#pragma once

#include <cstdint>

#include "runtime/host_device.h"
#include "volccl/statistics.h"

namespace volccl::detail {

// Partial moments of a few voxels of one label, in registers; the fields of ComponentMoments
// without its alignment.
struct Moments {
  std::uint64_t count;
  std::uint64_t sum[3];
  std::uint64_t sum_products[6];  // xx, yy, zz, xy, xz, yz
  std::uint32_t min[3];
  std::uint32_t max[3];
};

// A point of the volume, in voxels: where a thread block's relative moments start.
struct Origin {
  std::uint64_t x, y, z;
};

VOLCCL_HD Moments no_moments() {
  Moments m{};
  for (int a = 0; a < 3; ++a) m.min[a] = 0xFFFFFFFFu;
  return m;
}

// The moments of voxels of one row (y, z): `count` of them from min_x to max_x, their x summing to
// sum_x and their squares to sum_xx.
VOLCCL_HD Moments row_moments(std::uint64_t count, std::uint64_t sum_x, std::uint64_t sum_xx,
                              std::uint32_t min_x, std::uint32_t max_x, std::uint32_t y,
                              std::uint32_t z) {
  Moments m;
  m.count = count;
  m.sum[0] = sum_x;
  m.sum[1] = count * y;
  m.sum[2] = count * z;
  m.sum_products[0] = sum_xx;
  m.sum_products[1] = count * y * y;
  m.sum_products[2] = count * z * z;
  m.sum_products[3] = sum_x * y;
  m.sum_products[4] = sum_x * z;
  m.sum_products[5] = count * y * z;
  m.min[0] = min_x;
  m.min[1] = y;
  m.min[2] = z;
  m.max[0] = max_x;
  m.max[1] = y;
  m.max[2] = z;
  return m;
}

// The moments of a run of `length` voxels from x0 along the row (y, z), in closed form.
VOLCCL_HD Moments run_moments(std::uint32_t x0, std::uint32_t length, std::uint32_t y,
                              std::uint32_t z) {
  const std::uint64_t n = length;
  const std::uint64_t x = x0;
  // (n-1)n/2 first, so that no intermediate exceeds the final sum (validate_statistics).
  const std::uint64_t sum_xx = n * x * x + x * n * (n - 1) + (n - 1) * n / 2 * (2 * n - 1) / 3;
  return row_moments(n, n * x + n * (n - 1) / 2, sum_xx, x0, x0 + length - 1, y, z);
}

VOLCCL_HD void merge(Moments& into, const Moments& m) {
  into.count += m.count;
  for (int a = 0; a < 3; ++a) into.sum[a] += m.sum[a];
  for (int p = 0; p < 6; ++p) into.sum_products[p] += m.sum_products[p];
  for (int a = 0; a < 3; ++a) {
    into.min[a] = into.min[a] < m.min[a] ? into.min[a] : m.min[a];
    into.max[a] = into.max[a] > m.max[a] ? into.max[a] : m.max[a];
  }
}

// A record's moments, and moments written into a record field by field (its padding untouched):
// the nodes of the Early statistics and the table rows.
VOLCCL_HD Moments moments_of(const ComponentMoments& record) {
  Moments m;
  m.count = record.count;
  for (int a = 0; a < 3; ++a) m.sum[a] = record.sum[a];
  for (int p = 0; p < 6; ++p) m.sum_products[p] = record.sum_products[p];
  for (int a = 0; a < 3; ++a) {
    m.min[a] = record.min[a];
    m.max[a] = record.max[a];
  }
  return m;
}

VOLCCL_HD void store(ComponentMoments& record, const Moments& m) {
  record.count = m.count;
  for (int a = 0; a < 3; ++a) record.sum[a] = m.sum[a];
  for (int p = 0; p < 6; ++p) record.sum_products[p] = m.sum_products[p];
  for (int a = 0; a < 3; ++a) {
    record.min[a] = m.min[a];
    record.max[a] = m.max[a];
  }
}

// Accumulation into a row that other threads add to at the same time: one atomic per moment.
VOLCCL_HD void add_atomically(ComponentMoments& row, const Moments& m) {
  atomic_add(&row.count, m.count);
  for (int a = 0; a < 3; ++a) atomic_add(&row.sum[a], m.sum[a]);
  for (int p = 0; p < 6; ++p) atomic_add(&row.sum_products[p], m.sum_products[p]);
  for (int a = 0; a < 3; ++a) {
    atomic_min(&row.min[a], m.min[a]);
    atomic_max(&row.max[a], m.max[a]);
  }
}

// The CPU's accumulation into a table row, which no other thread writes at the same time.
inline void merge(ComponentMoments& into, const Moments& m) {
  into.count += m.count;
  for (int a = 0; a < 3; ++a) into.sum[a] += m.sum[a];
  for (int p = 0; p < 6; ++p) into.sum_products[p] += m.sum_products[p];
  for (int a = 0; a < 3; ++a) {
    if (m.min[a] < into.min[a]) into.min[a] = m.min[a];
    if (m.max[a] > into.max[a]) into.max[a] = m.max[a];
  }
}

}  // namespace volccl::detail
