// CPU labeler RTS for 2D images: the run-based two-pass scan of kernels/rts_scan.h over slabs of
// rows. An image is a one-slice volume, where 6-connectivity gives the labels of 4 and 26 those
// of 8; masks at 8 go through kernels/rts_pair_scan.h, label maps of short runs at 4 (without
// statistics) through kernels/rts_voxel_scan.h.
#include "kernels/rts_pair_scan.h"
#include "kernels/rts_scan.h"
#include "kernels/rts_voxel_scan.h"
#include "runtime/labeler.h"
#include "runtime/voxel_input.h"

namespace volccl::detail {

LabelResult label_rts_2d_cpu(const HostLabelCall& call) {
  const int volume_connectivity = call.options.connectivity == 4 ? 6 : 26;
  if (call.input.label_map) {
    return with_label_map(call.input, [&](const auto& voxels) {
      return rts::label_map(voxels, call.extent, volume_connectivity, call.options, call.labels,
                            call.statistics);
    });
  }
  if (volume_connectivity == 26) {
    return rts::label_mask_at_26(BinaryVoxels{call.mask}, call.extent, call.options, call.labels,
                                 call.statistics);
  }
  return rts::label_runs(BinaryVoxels{call.mask}, call.extent, volume_connectivity, call.options,
                         call.labels, call.statistics);
}

}  // namespace volccl::detail
