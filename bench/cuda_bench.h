// The CUDA side of `volccl bench`, timed the YACCLAB way (BUF/BKE paper, Sec. 6.2): the input is
// on the device before timing starts, each timed run allocates its output, labels and frees it
// between two CUDA events on one stream. Plain C++ header; cuda_bench.cpp holds the CUDA
// runtime calls and is built only with VOLCCL_HAS_CUDA.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "timed_runs.h"
#include "volccl/statistics.h"
#include "volccl/types.h"

namespace volccl::bench {

// Device-to-device copies of `bytes` each, in run order.
struct CopyRuns {
  std::uint64_t bytes = 0;
  std::vector<double> ms;
};

class CudaBench {
 public:
  // Uses the current CUDA device (device 0 unless the caller chose another). Throws
  // volccl::CudaError when no device is usable.
  CudaBench();
  ~CudaBench();
  CudaBench(const CudaBench&) = delete;
  CudaBench& operator=(const CudaBench&) = delete;

  // "NAME (sm_XY, N MiB, driver A.B, runtime C.D)".
  std::string device_description() const;

  // Times `runs` device-to-device cudaMemcpyAsync calls of `bytes` (fewer when the device lacks
  // the free memory) after two untimed ones.
  CopyRuns time_copies(std::uint64_t bytes, int runs);

  // Copies the mask to the device; later calls label it. Not timed.
  void set_volume(const std::uint8_t* mask, Extent3 extent);

  // Times `runs` copies of the volume's mask from `mask` (pageable host memory, as users have
  // it) to the device and of its uint32 labels back, after one untimed copy each.
  std::optional<TransferRuns> time_transfers(const std::uint8_t* mask, int runs);

  // Labels the volume once into a buffer filled with 0xFF bytes beforehand and copies the labels
  // to `labels` (resized to the voxel count), for the correctness checks.
  LabelResult label_once(Algorithm algorithm, int connectivity, std::vector<std::uint32_t>& labels);

  // Labels and measures once with `strategy`; copies the moments to `moments`.
  LabelResult measure_once(Algorithm algorithm, int connectivity, StatisticsStrategy strategy,
                           std::vector<ComponentMoments>& moments);

  // `warmup` untimed runs, then `runs` timed ones: cudaMallocAsync of the labels,
  // volccl::cuda::label, cudaFreeAsync, all between two events on the bench's stream. With
  // `step_timings` the library also times each step (LabelOptions::step_timings). With
  // `statistics` each run also measures the components by that strategy into a table that it
  // allocates (from volccl's pool) and frees.
  TimedRuns time(Algorithm algorithm, int connectivity, int runs, int warmup, bool step_timings,
                 std::optional<StatisticsStrategy> statistics = std::nullopt);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace volccl::bench
