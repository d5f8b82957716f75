#include "test_support.h"

#include <algorithm>
#include <cstdlib>
#include <initializer_list>
#include <random>
#include <sstream>

#include "dispatch/algorithm_registry.h"
#include "reference_labeler.h"

namespace volccl::test {

VolcclRun run_volccl(const data::Volume& volume, const LabelOptions& options) {
  VolcclRun run;
  run.labels.assign(volume.extent.voxel_count(), kPoison);
  run.result = label(volume.voxels.data(), volume.extent, run.labels.data(), options);
  return run;
}

::testing::AssertionResult labels_equal(const std::vector<std::uint32_t>& expected,
                                        const std::vector<std::uint32_t>& actual, Extent3 extent) {
  if (expected.size() != actual.size()) {
    return ::testing::AssertionFailure()
           << "label volumes have " << expected.size() << " and " << actual.size() << " voxels";
  }
  std::uint64_t first = 0, differing = 0;
  for (std::uint64_t index = 0; index < expected.size(); ++index) {
    if (expected[index] == actual[index]) continue;
    if (differing++ == 0) first = index;
  }
  if (differing == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << differing << " of " << expected.size() << " voxels differ in " << extent.to_string()
         << "; first at index " << first << " (x " << first % extent.x << ", y "
         << first / extent.x % extent.y << ", z " << first / extent.x / extent.y << "): expected "
         << expected[first] << ", actual " << actual[first]
         << (actual[first] == kPoison ? " (never written)" : "");
}

::testing::AssertionResult timings_are_sane(const LabelResult& result,
                                            const LabelOptions& options) {
  const StepTimings& t = result.timings;
  const double steps =
      t.initialization_ms + t.merge_ms + t.compression_ms + t.relabel_ms + t.final_labeling_ms;
  const double transfers = t.upload_ms + t.download_ms;
  for (double ms : {t.allocation_ms, t.upload_ms, t.initialization_ms, t.merge_ms, t.compression_ms,
                    t.relabel_ms, t.final_labeling_ms, t.download_ms}) {
    if (!(ms >= 0 && ms < 1e6)) return ::testing::AssertionFailure() << t.to_string();
  }
  if (!(t.total_ms > 0)) return ::testing::AssertionFailure() << "no total: " << t.to_string();
  const bool on_gpu = result.backend_used == Backend::cuda;
  if (on_gpu != (transfers > 0)) {
    return ::testing::AssertionFailure()
           << "transfers on " << to_string(result.backend_used) << ": " << t.to_string();
  }
  if (options.step_timings || !on_gpu) {
    if (!(t.initialization_ms > 0 && t.final_labeling_ms > 0)) {
      return ::testing::AssertionFailure() << "steps not timed: " << t.to_string();
    }
    // Event and clock resolutions are far below 0.01 ms.
    if (steps + t.allocation_ms + transfers > t.total_ms + 0.01) {
      return ::testing::AssertionFailure() << "steps exceed the total: " << t.to_string();
    }
  } else if (steps != 0) {
    return ::testing::AssertionFailure() << "steps timed without step_timings: " << t.to_string();
  }
  return ::testing::AssertionSuccess();
}

Backend expected_backend(Backend requested) {
  if (requested != Backend::automatic) return requested;
  return cuda_available() ? Backend::cuda : Backend::cpu;
}

Algorithm expected_algorithm(const LabelOptions& options) {
  if (options.algorithm != Algorithm::automatic) return options.algorithm;
  if (expected_backend(options.backend) == Backend::cpu) return Algorithm::rts;
  switch (options.connectivity) {
    case 4:
      return Algorithm::ha4_64;
    case 8:
      return Algorithm::bke_ic;
    case 26:
      return Algorithm::buf;
    case 6:
      return Algorithm::ruf;
    default:
      return Algorithm::ufb;
  }
}

namespace {

std::vector<std::pair<Algorithm, int>> supported_pairs(std::initializer_list<int> connectivities) {
  std::vector<std::pair<Algorithm, int>> pairs;
  for (Algorithm algorithm : all_algorithms()) {
    for (int connectivity : connectivities) {
      if (supports(algorithm, connectivity)) pairs.emplace_back(algorithm, connectivity);
    }
  }
  return pairs;
}

}  // namespace

std::vector<std::pair<Algorithm, int>> supported_pairs_3d() { return supported_pairs({6, 18, 26}); }
std::vector<std::pair<Algorithm, int>> supported_pairs_2d() { return supported_pairs({4, 8}); }

bool runs_on_cpu_only(Algorithm algorithm) { return !runs_on(algorithm, Backend::cuda); }

std::string parameter_name(Algorithm algorithm, int connectivity) {
  std::string name = to_string(algorithm);
  for (char& c : name) {
    if (c == '-') c = '_';  // test names allow letters, digits and underscores only
  }
  return name + "_c" + std::to_string(connectivity);
}

::testing::AssertionResult matches_reference(const data::Volume& volume,
                                             const LabelOptions& options) {
  const VolcclRun run = run_volccl(volume, options);
  const ReferenceLabels reference =
      reference_label(volume.voxels, volume.extent, options.connectivity);
  const std::string where = volume.extent.to_string() + ", " + to_string(options.algorithm) +
                            " at " + std::to_string(options.connectivity) + "-connectivity on " +
                            to_string(options.backend);
  if (run.result.backend_used != expected_backend(options.backend)) {
    return ::testing::AssertionFailure()
           << where << ": ran on " << to_string(run.result.backend_used);
  }
  if (run.result.algorithm_used != expected_algorithm(options)) {
    return ::testing::AssertionFailure()
           << where << ": algorithm_used is " << to_string(run.result.algorithm_used)
           << ", expected " << to_string(expected_algorithm(options));
  }
  if (run.result.component_count != reference.component_count) {
    return ::testing::AssertionFailure()
           << where << ": " << run.result.component_count << " components, the reference finds "
           << reference.component_count;
  }
  ::testing::AssertionResult equal = labels_equal(reference.labels, run.labels, volume.extent);
  if (!equal) return ::testing::AssertionFailure() << where << ": " << equal.message();
  return equal;
}

std::string labeling_name(const ::testing::TestParamInfo<LabelingParameter>& info) {
  return parameter_name(std::get<0>(info.param), std::get<1>(info.param)) + "_" +
         to_string(std::get<2>(info.param));
}

std::uint32_t test_seed() {
  if (const char* fixed = std::getenv("VOLCCL_TEST_SEED")) {
    return static_cast<std::uint32_t>(std::strtoul(fixed, nullptr, 0));
  }
  return std::random_device{}();
}

std::string describe_seed(std::uint32_t seed) {
  std::ostringstream text;
  text << "seed " << seed << " (VOLCCL_TEST_SEED=" << seed << " repeats this run)";
  return text.str();
}

// The moments of every label, one voxel at a time: shares nothing with the closed forms of
// the labelers' runs.
std::vector<ComponentMoments> voxel_sums(const std::vector<std::uint32_t>& labels, Extent3 extent,
                                         std::uint32_t count) {
  std::vector<ComponentMoments> table(count);
  std::uint64_t index = 0;
  for (std::uint64_t z = 0; z < extent.z; ++z) {
    for (std::uint64_t y = 0; y < extent.y; ++y) {
      for (std::uint64_t x = 0; x < extent.x; ++x, ++index) {
        if (labels[index] == 0) continue;
        ComponentMoments& m = table.at(labels[index] - 1);
        const std::uint64_t p[3] = {x, y, z};
        m.count += 1;
        for (int a = 0; a < 3; ++a) {
          m.sum[a] += p[a];
          m.min[a] = std::min<std::uint32_t>(m.min[a], static_cast<std::uint32_t>(p[a]));
          m.max[a] = std::max<std::uint32_t>(m.max[a], static_cast<std::uint32_t>(p[a]));
        }
        m.sum_products[0] += x * x;
        m.sum_products[1] += y * y;
        m.sum_products[2] += z * z;
        m.sum_products[3] += x * y;
        m.sum_products[4] += x * z;
        m.sum_products[5] += y * z;
      }
    }
  }
  return table;
}

::testing::AssertionResult tables_equal(const std::vector<ComponentMoments>& expected,
                                        const std::vector<ComponentMoments>& actual) {
  if (expected.size() != actual.size()) {
    return ::testing::AssertionFailure()
           << "tables of " << expected.size() << " and " << actual.size() << " rows";
  }
  for (std::size_t i = 0; i < expected.size(); ++i) {
    if (expected[i] == actual[i]) continue;
    const ComponentMoments& e = expected[i];
    const ComponentMoments& a = actual[i];
    return ::testing::AssertionFailure()
           << "label " << i + 1 << " differs: count " << e.count << " / " << a.count << ", sum x "
           << e.sum[0] << " / " << a.sum[0] << ", sum y " << e.sum[1] << " / " << a.sum[1]
           << ", sum xx " << e.sum_products[0] << " / " << a.sum_products[0] << ", sum xy "
           << e.sum_products[3] << " / " << a.sum_products[3] << ", sum yz " << e.sum_products[5]
           << " / " << a.sum_products[5] << ", box " << e.min[0] << "," << e.min[1] << ".."
           << e.max[0] << "," << e.max[1] << " / " << a.min[0] << "," << a.min[1] << ".."
           << a.max[0] << "," << a.max[1];
  }
  return ::testing::AssertionSuccess();
}

}  // namespace volccl::test
