#include "runtime/cpu_parallel.h"

#include "runtime/host_device.h"
#include "runtime/raster_rank.h"

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace volccl::detail {

unsigned resolve_thread_count(unsigned requested, std::uint64_t voxels) {
  if (requested > 0) return requested;
  // Handing work to a thread and waiting for it costs about as much as labeling thousands of
  // voxels, so a small volume asked to use "all cores" uses only as many as it can keep busy.
  constexpr std::uint64_t kVoxelsPerThread = std::uint64_t{1} << 15;
  const std::uint64_t useful = std::max<std::uint64_t>(1, voxels / kVoxelsPerThread);
  return static_cast<unsigned>(
      std::min<std::uint64_t>(std::max(1u, std::thread::hardware_concurrency()), useful));
}

namespace {

using Body = std::function<void(std::uint64_t, std::uint64_t)>;

// One parallel_for call: its chunks, taken one at a time by whoever runs the job.
struct Job {
  const Body* body;
  std::uint64_t count;
  std::uint64_t chunks;
  std::atomic<std::uint64_t> next{0};
  std::vector<std::exception_ptr> errors;
  unsigned holders = 0;  // pool threads inside the job, under the pool's mutex
};

// Threads started once per process and kept, waiting for work, so that a labeling's steps do not
// each start and join threads, which costs as much as labeling a small image. A caller runs
// chunks of its own job too, and waits only for its own job: calls from several threads at once,
// or from inside a job, finish even when every pool thread is busy.
class WorkerPool {
 public:
  static WorkerPool& instance() {
    // Never destroyed: its threads wait until the process ends. A child of fork() gets a new
    // pool, since the parent's threads are not in it.
    static const bool made = [] {
      current() = new WorkerPool;
      pthread_atfork(nullptr, nullptr, [] { current() = new WorkerPool; });
      return true;
    }();
    (void)made;
    return *current();
  }

  void run(Job& job) {
    const auto helpers = job.chunks - 1;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      // As many free threads as the job wants helpers, beyond the tickets already waiting.
      while (free_ < queue_.size() + helpers) {
        std::thread([this] { serve(); }).detach();
        ++free_;
      }
      for (std::uint64_t h = 0; h < helpers; ++h) queue_.push_back(&job);
    }
    work_.notify_all();
    run_chunks(job);
    // Every chunk is taken now, by this thread or by a holder: once the tickets left are gone
    // and the holders are out, the job is done.
    std::unique_lock<std::mutex> lock(mutex_);
    queue_.erase(std::remove(queue_.begin(), queue_.end(), &job), queue_.end());
    done_.wait(lock, [&] { return job.holders == 0; });
  }

 private:
  static WorkerPool*& current() {
    static WorkerPool* pool = nullptr;
    return pool;
  }

  void serve() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      work_.wait(lock, [&] { return !queue_.empty(); });
      Job& job = *queue_.front();
      queue_.pop_front();
      --free_;
      ++job.holders;
      lock.unlock();
      run_chunks(job);
      lock.lock();
      --job.holders;
      ++free_;
      done_.notify_all();
    }
  }

  void run_chunks(Job& job) {
    for (std::uint64_t chunk = job.next++; chunk < job.chunks; chunk = job.next++) {
      try {
        (*job.body)(job.count * chunk / job.chunks, job.count * (chunk + 1) / job.chunks);
      } catch (...) {
        job.errors[chunk] = std::current_exception();
      }
    }
  }

  std::mutex mutex_;
  std::condition_variable work_;
  std::condition_variable done_;
  std::deque<Job*> queue_;
  std::uint64_t free_ = 0;  // threads not inside a job
};

}  // namespace

void parallel_for(std::uint64_t count, unsigned threads, const Body& body) {
  const std::uint64_t chunks = std::min<std::uint64_t>(threads, count);
  if (chunks <= 1) {
    if (count > 0) body(0, count);
    return;
  }
  Job job;
  job.body = &body;
  job.count = count;
  job.chunks = chunks;
  job.errors.resize(chunks);
  WorkerPool::instance().run(job);
  for (const auto& error : job.errors) {
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
