// What volccl derives from the exact integer moments (centroid, covariance, principal moments
// and axes, index and physical space), the strategies' names, and the overflow check.
#include "volccl/statistics.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "dispatch/algorithm_registry.h"
#include "volccl/error.h"

namespace volccl {
namespace {

__extension__ using Wide = unsigned __int128;
using Matrix3 = std::array<std::array<double, 3>, 3>;

// Index pairs of the unique terms xx, yy, zz, xy, xz, yz.
constexpr int kFirst[6] = {0, 1, 2, 0, 0, 1};
constexpr int kSecond[6] = {0, 1, 2, 1, 2, 2};

// (count * sum_ab - sum_a * sum_b) / count^2, the numerator exact in 128 bits: no cancellation
// however far the component lies from the origin.
double covariance_term(std::uint64_t count, std::uint64_t sum_ab, std::uint64_t sum_a,
                       std::uint64_t sum_b) {
  const Wide positive = static_cast<Wide>(count) * sum_ab;
  const Wide negative = static_cast<Wide>(sum_a) * sum_b;
  const double numerator = positive >= negative ? static_cast<double>(positive - negative)
                                                : -static_cast<double>(negative - positive);
  const double n = static_cast<double>(count);
  return numerator / n / n;
}

Matrix3 unpack(const std::array<double, 6>& terms) {
  Matrix3 m{};
  for (int t = 0; t < 6; ++t) m[kFirst[t]][kSecond[t]] = m[kSecond[t]][kFirst[t]] = terms[t];
  return m;
}

// Eigenvalues (ascending) and unit eigenvectors (rows) of the symmetric n x n block of `a`, by
// cyclic Jacobi rotations, which keep small eigenvalues accurate relative to the matrix's norm.
void symmetric_eigen(int n, Matrix3 a, std::array<double, 3>& values, Matrix3& rows) {
  Matrix3 v{};
  for (int i = 0; i < n; ++i) v[i][i] = 1;
  for (int sweep = 0; sweep < 64; ++sweep) {
    double off = 0;
    for (int p = 0; p < n; ++p) {
      for (int q = p + 1; q < n; ++q) off += a[p][q] * a[p][q];
    }
    double diagonal = 0;
    for (int p = 0; p < n; ++p) diagonal += a[p][p] * a[p][p];
    // Off-diagonal terms this small move the eigenvalues by less than 1e-20 of the norm.
    if (off <= 1e-40 * diagonal || off == 0) break;
    for (int p = 0; p < n; ++p) {
      for (int q = p + 1; q < n; ++q) {
        if (a[p][q] == 0) continue;
        const double theta = (a[q][q] - a[p][p]) / (2 * a[p][q]);
        const double t = (theta >= 0 ? 1.0 : -1.0) / (std::fabs(theta) + std::hypot(theta, 1.0));
        const double c = 1 / std::hypot(t, 1.0);
        const double s = t * c;
        for (int k = 0; k < n; ++k) {  // a = J^T a J, columns then rows
          const double akp = a[k][p], akq = a[k][q];
          a[k][p] = c * akp - s * akq;
          a[k][q] = s * akp + c * akq;
        }
        for (int k = 0; k < n; ++k) {
          const double apk = a[p][k], aqk = a[q][k];
          a[p][k] = c * apk - s * aqk;
          a[q][k] = s * apk + c * aqk;
        }
        for (int k = 0; k < n; ++k) {  // v = v J: its columns are the eigenvectors
          const double vkp = v[k][p], vkq = v[k][q];
          v[k][p] = c * vkp - s * vkq;
          v[k][q] = s * vkp + c * vkq;
        }
      }
    }
  }
  int order[3] = {0, 1, 2};  // by ascending eigenvalue; an insertion sort of at most 3
  for (int r = 1; r < n; ++r) {
    for (int k = r; k > 0 && a[order[k]][order[k]] < a[order[k - 1]][order[k - 1]]; --k) {
      std::swap(order[k], order[k - 1]);
    }
  }
  rows = Matrix3{};
  values = {0, 0, 0};
  for (int r = 0; r < n; ++r) {
    values[r] = a[order[r]][order[r]];
    for (int k = 0; k < n; ++k) rows[r][k] = v[k][order[r]];
  }
  const double determinant =
      n == 2 ? rows[0][0] * rows[1][1] - rows[0][1] * rows[1][0]
             : rows[0][0] * (rows[1][1] * rows[2][2] - rows[1][2] * rows[2][1]) -
                   rows[0][1] * (rows[1][0] * rows[2][2] - rows[1][2] * rows[2][0]) +
                   rows[0][2] * (rows[1][0] * rows[2][1] - rows[1][1] * rows[2][0]);
  if (determinant < 0) {
    for (int k = 0; k < n; ++k) rows[n - 1][k] = -rows[n - 1][k];
  }
}

}  // namespace

bool operator==(const ComponentMoments& a, const ComponentMoments& b) {
  return a.count == b.count && std::equal(a.sum, a.sum + 3, b.sum) &&
         std::equal(a.sum_products, a.sum_products + 6, b.sum_products) &&
         std::equal(a.min, a.min + 3, b.min) && std::equal(a.max, a.max + 3, b.max);
}

std::string to_string(StatisticsStrategy strategy) {
  switch (strategy) {
    case StatisticsStrategy::late:
      return "late";
    case StatisticsStrategy::fused:
      return "fused";
    case StatisticsStrategy::early:
      return "early";
  }
  throw InvalidArgument("unknown volccl::StatisticsStrategy value " +
                        std::to_string(static_cast<int>(strategy)));
}

StatisticsStrategy parse_statistics_strategy(const std::string& name) {
  for (StatisticsStrategy strategy :
       {StatisticsStrategy::late, StatisticsStrategy::fused, StatisticsStrategy::early}) {
    if (to_string(strategy) == name) return strategy;
  }
  throw InvalidArgument("unknown statistics strategy '" + name +
                        "' (expected late, fused or early)");
}

bool supports(StatisticsStrategy strategy, Algorithm algorithm) {
  if (strategy == StatisticsStrategy::late) return true;
  if (algorithm == Algorithm::automatic) return false;
  return detail::registry_entry(algorithm).statistics_strategies.contains(
      static_cast<int>(strategy));
}

void validate_statistics(Extent3 extent) {
  if (extent.voxel_count() == 0) {
    throw InvalidArgument("volccl: cannot measure an empty volume of " + extent.to_string() +
                          " voxels");
  }
  const std::uint64_t longest = std::max({extent.x, extent.y, extent.z}) - 1;
  const Wide bound = static_cast<Wide>(extent.voxel_count()) * longest * longest;
  if (bound >> 64 != 0) {
    throw InvalidArgument("volccl: the 64-bit moment sums of a volume of " + extent.to_string() +
                          " voxels could overflow (voxels x (longest side - 1)^2 >= 2^64)");
  }
}

ComponentShape describe(const ComponentMoments& m, const ImageGeometry& geometry, int dimension) {
  if (dimension != 2 && dimension != 3) {
    throw InvalidArgument("volccl::describe: dimension " + std::to_string(dimension) +
                          " (expected 2 or 3)");
  }
  ComponentShape shape;
  shape.count = m.count;
  if (m.count == 0) return shape;
  const int n = dimension;
  // A = direction * diag(spacing) maps index offsets to physical offsets.
  Matrix3 a{};
  double voxel_size = 1;
  for (int i = 0; i < n; ++i) {
    voxel_size *= geometry.spacing[i];
    for (int j = 0; j < n; ++j) a[i][j] = geometry.direction[3 * i + j] * geometry.spacing[j];
  }
  shape.physical_size = static_cast<double>(m.count) * voxel_size;
  for (int i = 0; i < n; ++i) {
    shape.centroid_index[i] = static_cast<double>(m.sum[i]) / static_cast<double>(m.count);
    shape.bounding_box_min[i] = m.min[i];
    shape.bounding_box_max[i] = m.max[i];
  }
  for (int i = 0; i < n; ++i) {
    double position = geometry.origin[i];
    for (int j = 0; j < n; ++j) position += a[i][j] * shape.centroid_index[j];
    shape.centroid[i] = position;
  }
  for (int t = 0; t < 6; ++t) {
    if (kFirst[t] >= n || kSecond[t] >= n) continue;
    shape.covariance_index[t] =
        covariance_term(m.count, m.sum_products[t], m.sum[kFirst[t]], m.sum[kSecond[t]]);
  }
  // Physical covariance A C A^T.
  const Matrix3 c = unpack(shape.covariance_index);
  Matrix3 physical{};
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      double sum = 0;
      for (int k = 0; k < n; ++k) {
        for (int l = 0; l < n; ++l) sum += a[i][k] * c[k][l] * a[j][l];
      }
      physical[i][j] = sum;
    }
  }
  for (int t = 0; t < 6; ++t) shape.covariance[t] = physical[kFirst[t]][kSecond[t]];
  Matrix3 axes{};
  symmetric_eigen(n, physical, shape.principal_moments, axes);
  for (int r = 0; r < 3; ++r) {
    for (int k = 0; k < 3; ++k) shape.principal_axes[3 * r + k] = axes[r][k];
  }
  return shape;
}

}  // namespace volccl
