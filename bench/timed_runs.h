// The measurements `volccl bench` takes of one algorithm on one volume, whichever the device.
#pragma once

#include <algorithm>
#include <vector>

#include "volccl/types.h"

namespace volccl::bench {

// Each timed run in run order: the milliseconds measured around it and what the library
// returned (component count, step timings).
struct TimedRuns {
  std::vector<double> ms;
  std::vector<LabelResult> results;
};

// Copies of a volume between pageable host memory and the device, in run order: the uint8 mask
// up, the uint32 labels down.
struct TransferRuns {
  std::vector<double> upload_ms;
  std::vector<double> download_ms;
};

// The median of timed runs (of at least one).
inline double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t middle = values.size() / 2;
  return values.size() % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
}

}  // namespace volccl::bench
