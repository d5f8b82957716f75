// What every labeler is handed, on each backend: the input, the output, the resolved options and
// what the call also wants measured. The registry (dispatch/algorithms.cpp) points at one entry
// point of these types per algorithm, dimension and backend. Internal; plain C++.
#pragma once

#include <cstdint>
#include <vector>

#include "volccl/cuda.h"
#include "volccl/statistics.h"
#include "volccl/types.h"

namespace volccl::detail {

class LateBeforeCount;  // runtime/late_moments.h
class OneValueCheck;    // runtime/one_value.cuh

// A labeling in host memory. `options.algorithm` is resolved (never automatic) and
// `options.connectivity` is one the algorithm takes for the call's dimension.
struct HostLabelCall {
  const std::uint8_t* mask;  // a binary mask; null when `input` is a label map
  Extent3 extent;
  std::uint32_t* labels;
  LabelOptions options;
  // Not null: the labeler gathers the moments into it while it labels (the Early strategy of LE
  // and TM; RTS's Late, from its runs as it writes the labels: Labelers::cpu_gathers_late); the
  // others leave it alone and the caller measures after them.
  std::vector<ComponentMoments>* statistics = nullptr;
  // A label map, for the labelers that take one (AlgorithmEntry::inputs); else the mask.
  LabelInput input = {};
};

// A labeling in device memory, enqueued on `stream` (a cudaStream_t).
struct DeviceLabelCall {
  const std::uint8_t* mask;  // a binary mask; null when `input` is a label map
  Extent3 extent;
  std::uint32_t* labels;
  LabelOptions options;
  void* stream;
  // Not null: the moments the labeler itself gathers, by options.statistics_strategy (Fused or
  // Early for the block labelers, LE and TM; Late from their own structures for RUF and the 3D
  // block labelers).
  cuda::DeviceMoments* moments = nullptr;
  // Not null: the Late pass the labeling enqueues after its final labeling and before its host
  // waits for the count (DeviceLabeling::finish).
  LateBeforeCount* late_before_count = nullptr;
  // A label map, for the labelers that take one (AlgorithmEntry::inputs); else the mask.
  LabelInput input = {};
  // Not null: whether the label map holds one value, enqueued before the call. A labeler that
  // consults it (Labelers::cuda_consults_one_value) returns an empty result, having labeled
  // nothing, where it does: the caller then labels the map's mask.
  OneValueCheck* one_value = nullptr;
};

using HostLabeler = LabelResult (*)(const HostLabelCall& call);
using DeviceLabeler = LabelResult (*)(const DeviceLabelCall& call);

}  // namespace volccl::detail
