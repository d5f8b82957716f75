// Helpers shared by the test programs: running volccl on a poisoned buffer, comparing label
// volumes voxel for voxel, and the seed of the random volumes.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "volccl/data/generators.h"
#include "volccl/statistics.h"
#include "volccl/volccl.h"

#if defined(VOLCCL_HAS_CUDA)
#include <cuda_runtime.h>
#endif

namespace volccl {

// gtest prints test parameters with these instead of their bytes.
inline void PrintTo(Algorithm algorithm, std::ostream* out) { *out << to_string(algorithm); }
inline void PrintTo(Backend backend, std::ostream* out) { *out << to_string(backend); }

}  // namespace volccl

namespace volccl::test {

// Written into every label buffer before a run, so voxels a labeler never writes show up.
constexpr std::uint32_t kPoison = 0xDEADBEEF;

#if defined(VOLCCL_HAS_CUDA)
// A device copy of a host vector, freed at the end of its scope.
template <class T>
class DeviceArray {
 public:
  explicit DeviceArray(const std::vector<T>& host) : size_(host.size()) {
    if (cudaMalloc(&data_, size_ * sizeof(T)) != cudaSuccess ||
        cudaMemcpy(data_, host.data(), size_ * sizeof(T), cudaMemcpyHostToDevice) != cudaSuccess) {
      throw CudaError("the test could not copy " + std::to_string(size_) + " values to the GPU");
    }
  }
  ~DeviceArray() { cudaFree(data_); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  T* data() const { return data_; }
  // The values back on the host.
  std::vector<T> to_host() const {
    std::vector<T> host(size_);
    if (cudaMemcpy(host.data(), data_, size_ * sizeof(T), cudaMemcpyDeviceToHost) != cudaSuccess) {
      throw CudaError("the test could not copy " + std::to_string(size_) + " values from the GPU");
    }
    return host;
  }

 private:
  T* data_ = nullptr;
  std::size_t size_;
};
#endif

struct VolcclRun {
  std::vector<std::uint32_t> labels;
  LabelResult result;
};

// volccl::label on `volume` into a buffer filled with kPoison beforehand.
VolcclRun run_volccl(const data::Volume& volume, const LabelOptions& options);

// Success when `actual` equals `expected` voxel for voxel; otherwise says how many voxels
// differ and where the first one is (index, x, y, z, expected, actual).
::testing::AssertionResult labels_equal(const std::vector<std::uint32_t>& expected,
                                        const std::vector<std::uint32_t>& actual, Extent3 extent);

// Runs volccl with `options` and checks labels, component count, algorithm_used and
// backend_used against the reference labeler at options.connectivity.
::testing::AssertionResult matches_reference(const data::Volume& volume,
                                             const LabelOptions& options);

// Success when result.timings fit options: every field finite and >= 0, the total > 0; the
// steps (initialization, final labeling > 0) measured inside the total when options.step_timings
// is on or the backend is the CPU, else 0; transfers > 0 exactly on the CUDA backend.
::testing::AssertionResult timings_are_sane(const LabelResult& result, const LabelOptions& options);

// The moments of every label of `labels` (1..count), one voxel at a time: shares nothing with
// the closed forms of the labelers' runs and blocks.
std::vector<ComponentMoments> voxel_sums(const std::vector<std::uint32_t>& labels, Extent3 extent,
                                         std::uint32_t count);

// Success when the tables are equal row for row; otherwise names the first row that differs.
::testing::AssertionResult tables_equal(const std::vector<ComponentMoments>& expected,
                                        const std::vector<ComponentMoments>& actual);

// The backend a run with `requested` must report.
Backend expected_backend(Backend requested);
// The algorithm a run with `options` must report: the one asked for, or for
// Algorithm::automatic BUF at 26, on CUDA RUF at 6 and UFB at 18 (UF on the CPU), BKE-IC at 8
// and HA4-64 at 4.
Algorithm expected_algorithm(const LabelOptions& options);

// The (algorithm, connectivity) pairs volccl::supports, for every concrete algorithm and
// connectivity 6, 18 and 26 (volumes) or 4 and 8 (2D images).
std::vector<std::pair<Algorithm, int>> supported_pairs_3d();
std::vector<std::pair<Algorithm, int>> supported_pairs_2d();

// "uf_c6", "buf_ic_c26", "ha4_64_c4": a gtest name for an (algorithm, connectivity) pair.
std::string parameter_name(Algorithm algorithm, int connectivity);

// Whether the algorithm has no CUDA labeler (the registry's cpu_only).
bool runs_on_cpu_only(Algorithm algorithm);

// (algorithm, connectivity, backend): a parameter of the labeling suites.
using LabelingParameter = std::tuple<Algorithm, int, Backend>;

// The fixture of the labeling suites: the options of the parameter, a skip of the CUDA cases
// without a device, and matches_reference with those options.
class LabelingFixture : public ::testing::TestWithParam<LabelingParameter> {
 protected:
  void SetUp() override {
    if (backend() == Backend::cuda && !cuda_available()) {
      GTEST_SKIP() << cuda_device_description();
    }
    if (backend() == Backend::cuda && runs_on_cpu_only(std::get<0>(GetParam()))) {
      GTEST_SKIP() << to_string(std::get<0>(GetParam())) << " runs on the CPU only";
    }
  }

  int connectivity() const { return std::get<1>(GetParam()); }
  Backend backend() const { return std::get<2>(GetParam()); }

  LabelOptions options() const {
    LabelOptions options;
    options.algorithm = std::get<0>(GetParam());
    options.connectivity = connectivity();
    options.backend = backend();
    return options;
  }

  ::testing::AssertionResult matches_reference(const data::Volume& volume) const {
    return test::matches_reference(volume, options());
  }
};

// "bke_ic_c8_cuda": the gtest name of a labeling parameter.
std::string labeling_name(const ::testing::TestParamInfo<LabelingParameter>& info);

// The seed of this test's random volumes: VOLCCL_TEST_SEED when set, else a fresh one from
// std::random_device, so every run explores new volumes.
std::uint32_t test_seed();
// For SCOPED_TRACE: the seed and how to run the test with it again.
std::string describe_seed(std::uint32_t seed);

}  // namespace volccl::test
