// CPU labeler RTS for volumes: the run-based two-pass scan of kernels/rts_scan.h over z-slabs of
// rows, for binary masks and label maps.
#include "kernels/rts_scan.h"
#include "runtime/labeler.h"
#include "runtime/voxel_input.h"

namespace volccl::detail {

LabelResult label_rts_3d_cpu(const HostLabelCall& call) {
  const auto label = [&](const auto& voxels) {
    return rts::label_runs(voxels, call.extent, call.options.connectivity, call.options,
                           call.labels, call.statistics);
  };
  if (call.input.label_map) return with_label_map(call.input, label);
  return label(BinaryVoxels{call.mask});
}

}  // namespace volccl::detail
