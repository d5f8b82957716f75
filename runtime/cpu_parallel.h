// What the CPU labelers share: a minimal fork-join loop, which splits [0, count) into contiguous
// chunks, one per worker thread (the calling thread and threads of a pool kept for the process),
// and returns when all are done; and the frame of one labeling.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "volccl/detail/step_clock.h"
#include "volccl/types.h"

namespace volccl::detail {

// The worker count for `requested` threads (0: all cores, but no more than a volume of `voxels`
// keeps busy; an explicit count is taken as it is).
unsigned resolve_thread_count(unsigned requested, std::uint64_t voxels);

void parallel_for(std::uint64_t count, unsigned threads,
                  const std::function<void(std::uint64_t begin, std::uint64_t end)>& body);

// Calls row_body(row, slice) for each of the `rows` x `slices` rows of a volume (of voxels or of
// blocks), contiguous runs of rows to each worker.
template <class RowBody>
void parallel_for_rows(std::uint32_t rows, std::uint32_t slices, unsigned threads,
                       const RowBody& row_body) {
  parallel_for(std::uint64_t{rows} * slices, threads, [&](std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t r = begin; r < end; ++r) {
      row_body(static_cast<std::uint32_t>(r % rows), static_cast<std::uint32_t>(r / rows));
    }
  });
}

// The frame of one labeling on the CPU, shared by every CPU labeler, as DeviceLabeling is on the
// GPU: the clock of the whole call, the root bitmap and its ranks (their allocation timed), the
// worker count, and the result they fill. A labeler runs its steps between end_step() calls,
// ranks the roots it marked with rank(), and returns finish().
class HostLabeling {
 public:
  HostLabeling(Extent3 extent, const LabelOptions& options);
  unsigned threads() const { return threads_; }
  std::uint32_t* root_bitmap() { return root_bitmap_.data(); }
  const std::uint32_t* words_before() const { return words_before_.data(); }
  // Adds the time since the previous call (or the allocation) to `step`.
  void end_step(double StepTimings::*step) { result_.timings.*step += step_clock_.lap(); }
  // Ranks the roots marked in root_bitmap(), the relabel step.
  void rank();
  std::uint32_t component_count() const { return result_.component_count; }  // after rank()
  LabelResult finish();

 private:
  StepClock whole_call_;
  StepClock step_clock_;  // started before the bitmap's allocation
  LabelResult result_;
  unsigned threads_;
  std::vector<std::uint32_t> root_bitmap_;
  std::vector<std::uint32_t> words_before_;
};

}  // namespace volccl::detail
