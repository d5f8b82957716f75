// The step sequence of BUF, BUF-IC, BKE and BKE-IC (BUF/BKE paper Alg. 2), written once for both
// dimensions and both backends. `Steps` names the per-block step functors of one dimension
// (block_forest.h's BufBkeSteps, as kernels2d::BufBkeSteps and kernels3d::BufBkeSteps);
// `run(step)` applies a step to every block, as one kernel launch or one loop over the blocks on
// the CPU; `labeling` is the DeviceLabeling or HostLabeling of the call. Internal; plain C++.
#pragma once

#include <cstdint>

#include "volccl/types.h"

namespace volccl::detail {

template <class Steps, class Labeling, class Run>
LabelResult label_buf_bke(Labeling& labeling, Run&& run, const std::uint8_t* mask,
                          std::uint32_t* labels, Algorithm algorithm) {
  const bool bke = algorithm == Algorithm::bke || algorithm == Algorithm::bke_ic;
  const bool inline_compression = algorithm == Algorithm::buf_ic || algorithm == Algorithm::bke_ic;
  if (bke) {
    run(typename Steps::BkeInitialize{mask, labels});
    labeling.end_step(&StepTimings::initialization_ms);
    run(typename Steps::Compress{labels, inline_compression, nullptr});
    labeling.end_step(&StepTimings::compression_ms);
    run(typename Steps::BkeReduce{mask, labels});
    labeling.end_step(&StepTimings::merge_ms);
  } else {
    run(typename Steps::BufInitialize{mask, labels});
    labeling.end_step(&StepTimings::initialization_ms);
    run(typename Steps::BufMerge{mask, labels});
    labeling.end_step(&StepTimings::merge_ms);
  }
  run(typename Steps::Compress{labels, inline_compression, labeling.root_bitmap()});
  labeling.end_step(&StepTimings::compression_ms);
  labeling.rank();
  run(typename Steps::FinalLabeling{mask, labels, labeling.root_bitmap(), labeling.words_before(),
                                    bke});
  labeling.end_step(&StepTimings::final_labeling_ms);
  return labeling.finish();
}

}  // namespace volccl::detail
