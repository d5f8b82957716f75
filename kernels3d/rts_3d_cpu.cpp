// CPU labeler RTS for volumes: the run-based two-pass scan of kernels/rts_scan.h over z-slabs of
// rows, for binary masks and label maps; masks at 26 go through
// kernels/rts_pair_scan.h, which scans pairs of rows where they hold far fewer runs, label maps
// of short runs at 6 without statistics through kernels/rts_voxel_scan.h, and label maps mostly
// of the value of the voxel behind through kernels/rts_settled_scan.h.
#include "kernels/rts_pair_scan.h"
#include "kernels/rts_scan.h"
#include "kernels/rts_voxel_scan.h"
#include "runtime/labeler.h"
#include "runtime/voxel_input.h"

namespace volccl::detail {

LabelResult label_rts_3d_cpu(const HostLabelCall& call) {
  if (call.input.label_map) {
    return with_label_map(call.input, [&](const auto& voxels) {
      return rts::label_map(voxels, call.extent, call.options.connectivity, call.options,
                            call.labels, call.statistics);
    });
  }
  if (call.options.connectivity == 26) {
    return rts::label_mask_at_26(BinaryVoxels{call.mask}, call.extent, call.options, call.labels,
                                 call.statistics);
  }
  return rts::label_runs(BinaryVoxels{call.mask}, call.extent, call.options.connectivity,
                         call.options, call.labels, call.statistics);
}

}  // namespace volccl::detail
