// The GPU's Late statistics pass over a label image, and its variant enqueued by a labeling before
// the host knows the component count. Internal; plain C++ declarations.
#pragma once

#include <cstdint>
#include <functional>

#include "volccl/cuda.h"
#include "volccl/statistics.h"
#include "volccl/types.h"

namespace volccl::detail {

// The Late pass (late_moments.cu): the moments of every label of `device_labels`, a row for each
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
// than the pass. The count is then known only on the device, so the table is sized for the most
// components with which late_moments clears the table (one per region: the pass then needs no
// count on the host); where the count is larger, the pass does nothing and finish() runs
// late_moments after the wait. Only for volumes of up to kMaxVoxels: on larger ones the round
// trip is a small part of the pass, and where the pass did nothing (volumes of millions of
// components) the wasted launch cost more than the round trip saved (bench/notes/statistics.md).
class LateBeforeCount {
 public:
  static constexpr std::uint64_t kMaxVoxels = std::uint64_t{1} << 25;

  LateBeforeCount(const std::uint32_t* device_labels, const std::uint8_t* device_mask,
                  Extent3 extent, void* stream);
  // Whether enqueue() will do anything: the volume is small enough.
  bool wanted() const { return wanted_; }
  // A pass of the labeler's own, from its structures rather than the label image (RUF measures
  // from its runs): enqueues the moments of the `*device_count` components into `rows`, cleared,
  // and does nothing where the count exceeds the rows.
  using OwnPass = std::function<void(ComponentMoments* rows, const std::uint32_t* device_count)>;
  // By a labeler before enqueue(): measure with `pass`, whose table has `rows` rows.
  void measure_with(std::uint32_t rows, OwnPass pass);
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
  OwnPass own_pass_;
  bool enqueued_ = false;
  cuda::DeviceMoments table_;
};

}  // namespace volccl::detail
