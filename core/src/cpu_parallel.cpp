#include "cpu_parallel.h"

#include "volccl/detail/host_device.h"

#include <algorithm>
#include <exception>
#include <thread>
#include <vector>

namespace volccl::detail {

unsigned resolve_thread_count(unsigned requested) {
  if (requested > 0) return requested;
  return std::max(1u, std::thread::hardware_concurrency());
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

std::uint32_t rank_roots(const std::vector<std::uint32_t>& bitmap,
                         std::vector<std::uint32_t>& words_before) {
  std::uint32_t roots = 0;
  for (std::size_t w = 0; w < bitmap.size(); ++w) {
    words_before[w] = roots;
    roots += popcount(bitmap[w]);
  }
  return roots;
}

}  // namespace volccl::detail
