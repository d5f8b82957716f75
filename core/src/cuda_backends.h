// The CUDA labelers behind volccl::cuda::label. Internal; plain C++ declarations.
#pragma once

#include <cstdint>
#include <optional>

#include "kernels3d/ruf_logic_3d.h"
#include "volccl/cuda.h"
#include "volccl/types.h"

namespace volccl::detail {

// What RUF leaves once its roots are ranked: the rows' words, every run pointing at its root, and
// the ranking of the roots.
struct RufRuns {
  kernels3d::RunGrid grid;
  const kernels3d::RowWord* words;
  const std::uint32_t* parents;
  const std::uint32_t* root_bitmap;
  const std::uint32_t* words_before;
};

// One per family and dimension; `stream` is a cudaStream_t and options.algorithm is resolved
// (not automatic). The 3D ones are in kernels3d/, the 2D ones (extent.z == 1, connectivity 4
// or 8) in kernels2d/.
// The block labelers, LE and TM gather the moments into `moments` when it is not null and
// options.statistics_strategy is fused or early; RUF gathers them from its runs when it is not
// null (the Late strategy: label_on_device passes it then, on volumes LateBeforeCount does not
// take), and the 3D block labelers under Late from their forest or after their final labeling.
LabelResult label_buf_bke_3d_cuda(const std::uint8_t* device_mask, Extent3 extent,
                                  std::uint32_t* device_labels, const LabelOptions& options,
                                  void* stream, cuda::DeviceMoments* moments);
LabelResult label_uf_3d_cuda(const std::uint8_t* device_mask, Extent3 extent,
                             std::uint32_t* device_labels, const LabelOptions& options,
                             void* stream);
LabelResult label_ufb_3d_cuda(const std::uint8_t* device_mask, Extent3 extent,
                              std::uint32_t* device_labels, const LabelOptions& options,
                              void* stream);
LabelResult label_ruf_3d_cuda(const std::uint8_t* device_mask, Extent3 extent,
                              std::uint32_t* device_labels, const LabelOptions& options,
                              void* stream, cuda::DeviceMoments* moments);
LabelResult label_buf_bke_2d_cuda(const std::uint8_t* device_mask, Extent3 extent,
                                  std::uint32_t* device_labels, const LabelOptions& options,
                                  void* stream, cuda::DeviceMoments* moments);
LabelResult label_uf_ke_2d_cuda(const std::uint8_t* device_mask, Extent3 extent,
                                std::uint32_t* device_labels, const LabelOptions& options,
                                void* stream);
LabelResult label_ha4_2d_cuda(const std::uint8_t* device_mask, Extent3 extent,
                              std::uint32_t* device_labels, const LabelOptions& options,
                              void* stream);
LabelResult label_le_2d_cuda(const std::uint8_t* device_mask, Extent3 extent,
                             std::uint32_t* device_labels, const LabelOptions& options,
                             void* stream, cuda::DeviceMoments* moments);
LabelResult label_tm_2d_cuda(const std::uint8_t* device_mask, Extent3 extent,
                             std::uint32_t* device_labels, const LabelOptions& options,
                             void* stream, cuda::DeviceMoments* moments);

// Picks one of the above by options.algorithm and options.connectivity, and measures the
// components into `moments` unless it is null (core/src/cuda_device.cu).
LabelResult label_on_device(const std::uint8_t* device_mask, Extent3 extent,
                            std::uint32_t* device_labels, const LabelOptions& options, void* stream,
                            cuda::DeviceMoments* moments);

// The Late pass (moments_late.cu): the moments of every label of `device_labels`, a row for each
// of labels 1..count; labels above `count` are left out and the largest of them is written to
// `largest_unknown_label` unless it is null. `device_mask`, when not null, is the labeler's input,
// nonzero exactly where the labels are, and says that the labels are connected components, each
// of them present: the pass then skips background, stores the rows of components inside one
// region without atomics and, with more components than regions, writes every row itself
// instead of clearing the table first. Null for any other label image.
cuda::DeviceMoments late_moments(const std::uint32_t* device_labels,
                                 const std::uint8_t* device_mask, Extent3 extent,
                                 std::uint32_t count, std::uint32_t* largest_unknown_label,
                                 void* stream);

// The Late pass of a labeling, enqueued by the labeling itself after its final labeling and
// before its host waits for the component count (DeviceLabeling::finish), so that the GPU goes
// from one to the other without a round trip through the host, which cost small volumes more
// than the pass (bench/NOTES.md, S-24). The count is then known only on the device, so the table
// is sized for the most components with which late_moments clears the table (one per region:
// the pass then needs no count on the host); where the count is larger, the pass does nothing
// and finish() runs late_moments after the wait. Only for volumes of up to kMaxVoxels: on larger
// ones the round trip is a few percent of the pass, and where the pass did nothing (512^3
// volumes of millions of components) the calls took 0.7-0.9 ms longer (NOTES S-24).
class LateBeforeCount {
 public:
  static constexpr std::uint64_t kMaxVoxels = std::uint64_t{1} << 25;

  LateBeforeCount(const std::uint32_t* device_labels, const std::uint8_t* device_mask,
                  Extent3 extent, void* stream);
  // Whether enqueue() will do anything: the volume is small enough.
  bool wanted() const { return wanted_; }
  // By RUF before enqueue(): measure from its runs (kernels3d/ruf_statistics_3d.cu), not from
  // the label image.
  void use_runs(const RufRuns& runs);
  // By the labeling, after its final labeling; `device_count`: the count in device memory.
  void enqueue(const std::uint32_t* device_count);
  // After the wait: the table, from the pass enqueued or, if it did nothing, from late_moments.
  cuda::DeviceMoments finish(std::uint32_t count);
  // Whether finish(count) has nothing left to run.
  bool done(std::uint32_t count) const { return enqueued_ && count <= capacity_; }

 private:
  const std::uint32_t* labels_;
  const std::uint8_t* mask_;
  Extent3 extent_;
  void* stream_;
  bool wanted_;
  std::uint32_t capacity_;
  std::optional<RufRuns> runs_;
  bool enqueued_ = false;
  cuda::DeviceMoments table_;
};

}  // namespace volccl::detail
