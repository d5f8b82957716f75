#include "runtime/cpu_parallel.h"

#include "runtime/host_device.h"
#include "runtime/raster_rank.h"

#include <algorithm>
#include <exception>
#include <thread>
#include <vector>

namespace volccl::detail {

unsigned resolve_thread_count(unsigned requested, std::uint64_t voxels) {
  if (requested > 0) return requested;
  // Starting and joining a thread costs about as much as labeling tens of thousands of voxels,
  // so a small volume asked to use "all cores" uses only as many as it can keep busy.
  constexpr std::uint64_t kVoxelsPerThread = std::uint64_t{1} << 15;
  const std::uint64_t useful = std::max<std::uint64_t>(1, voxels / kVoxelsPerThread);
  return static_cast<unsigned>(
      std::min<std::uint64_t>(std::max(1u, std::thread::hardware_concurrency()), useful));
}

void parallel_for(std::uint64_t count, unsigned threads,
                  const std::function<void(std::uint64_t, std::uint64_t)>& body) {
  const std::uint64_t workers = std::min<std::uint64_t>(threads, count);
  if (workers <= 1) {
    if (count > 0) body(0, count);
    return;
  }
  std::vector<std::thread> pool;
  std::vector<std::exception_ptr> errors(workers);
  pool.reserve(workers);
  for (std::uint64_t w = 0; w < workers; ++w) {
    const std::uint64_t begin = count * w / workers;
    const std::uint64_t end = count * (w + 1) / workers;
    pool.emplace_back([&, w, begin, end] {
      try {
        body(begin, end);
      } catch (...) {
        errors[w] = std::current_exception();
      }
    });
  }
  for (auto& thread : pool) thread.join();
  for (const auto& error : errors) {
    if (error) std::rethrow_exception(error);
  }
}

HostLabeling::HostLabeling(Extent3 extent, const LabelOptions& options)
    : threads_(resolve_thread_count(options.cpu_threads, extent.voxel_count())),
      root_bitmap_(rank_words(extent.voxel_count()), 0),
      words_before_(root_bitmap_.size()) {
  result_.backend_used = Backend::cpu;
  result_.algorithm_used = options.algorithm;
  end_step(&StepTimings::allocation_ms);
}

// The host side of raster_rank.h: words_before[w] = set bits in bitmap words 0..w-1; the
// total is the component count.
void HostLabeling::rank() {
  std::uint32_t roots = 0;
  for (std::size_t w = 0; w < root_bitmap_.size(); ++w) {
    words_before_[w] = roots;
    roots += popcount(root_bitmap_[w]);
  }
  result_.component_count = roots;
  end_step(&StepTimings::relabel_ms);
}

LabelResult HostLabeling::finish() {
  result_.timings.total_ms = whole_call_.lap();
  return result_;
}

}  // namespace volccl::detail
