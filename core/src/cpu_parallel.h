// A minimal fork-join loop for the CPU backend: splits [0, count) into contiguous chunks, one per
// worker thread, and returns when all are done.
#pragma once

#include <cstdint>
#include <functional>

namespace volccl::detail {

unsigned resolve_thread_count(unsigned requested);

void parallel_for(std::uint64_t count, unsigned threads,
                  const std::function<void(std::uint64_t begin, std::uint64_t end)>& body);

}  // namespace volccl::detail
