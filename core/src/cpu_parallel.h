// A minimal fork-join loop for the CPU backend: splits [0, count) into contiguous chunks, one per
// worker thread, and returns when all are done.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

namespace volccl::detail {

unsigned resolve_thread_count(unsigned requested);

void parallel_for(std::uint64_t count, unsigned threads,
                  const std::function<void(std::uint64_t begin, std::uint64_t end)>& body);

// The host side of raster_rank.h: words_before[w] = set bits in bitmap words 0..w-1; returns
// the number of set bits, the component count.
std::uint32_t rank_roots(const std::vector<std::uint32_t>& bitmap,
                         std::vector<std::uint32_t>& words_before);

}  // namespace volccl::detail
