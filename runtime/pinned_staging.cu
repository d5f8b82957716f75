#include "runtime/pinned_staging.cuh"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <utility>

#include "runtime/cuda_support.cuh"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace volccl::detail {
namespace {

// Large enough that a chunk's copy dwarfs starting its threads, small enough that a few chunks
// keep both the host and the DMA engine busy.
constexpr std::size_t kChunkBytes = std::size_t{32} << 20;
constexpr std::size_t kChunks = 4;
// The share of a copy a thread takes at a time: a few dozen to a chunk, so that the threads
// finish together, yet each long enough to hide taking it.
constexpr std::size_t kPieceBytes = std::size_t{1} << 20;

// memcpy with stores that bypass the cache. A staged byte is written once and next read by
// another agent (the DMA engine, or the caller much later): plain stores would first read every
// destination line into the cache, a third pass over host memory, whose bandwidth bounds staged
// copies.
void copy_streaming(unsigned char* to, const unsigned char* from, std::size_t bytes) {
#if defined(__SSE2__)
  constexpr std::size_t kLine = 64;
  const std::size_t head =
      std::min(bytes, (kLine - reinterpret_cast<std::uintptr_t>(to) % kLine) % kLine);
  std::memcpy(to, from, head);
  to += head;
  from += head;
  bytes -= head;
  const std::size_t lines = bytes / kLine;
  for (std::size_t line = 0; line < lines; ++line) {
    const auto* source = reinterpret_cast<const __m128i*>(from + line * kLine);
    auto* target = reinterpret_cast<__m128i*>(to + line * kLine);
    const __m128i a = _mm_loadu_si128(source), b = _mm_loadu_si128(source + 1),
                  c = _mm_loadu_si128(source + 2), d = _mm_loadu_si128(source + 3);
    _mm_stream_si128(target, a);
    _mm_stream_si128(target + 1, b);
    _mm_stream_si128(target + 2, c);
    _mm_stream_si128(target + 3, d);
  }
  // Streaming stores are not ordered by the lock that reports the part done.
  _mm_sfence();
  std::memcpy(to + lines * kLine, from + lines * kLine, bytes - lines * kLine);
#else
  std::memcpy(to, from, bytes);
#endif
}

}  // namespace

CopyTeam::CopyTeam(unsigned threads) {
  for (unsigned helper = 1; helper < std::max(1u, threads); ++helper) {
    helpers_.emplace_back([this] { serve(); });
  }
}

CopyTeam::~CopyTeam() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  started_.notify_all();
  for (std::thread& helper : helpers_) helper.join();
}

void CopyTeam::copy_pieces(const Round& round) {
  const std::uint64_t pieces = (round.bytes + kPieceBytes - 1) / kPieceBytes;
  const std::uint64_t first_ticket = std::uint64_t{round.number} << 32;
  std::uint64_t ticket = next_piece_.load(std::memory_order_relaxed);
  for (;;) {
    if (ticket < first_ticket || ticket >= first_ticket + pieces) return;
    if (!next_piece_.compare_exchange_weak(ticket, ticket + 1, std::memory_order_relaxed)) {
      continue;
    }
    const std::size_t begin = (ticket - first_ticket) * kPieceBytes;
    copy_streaming(round.to + begin, round.from + begin,
                   std::min(kPieceBytes, round.bytes - begin));
    pieces_done_.fetch_add(1, std::memory_order_release);
    ticket = next_piece_.load(std::memory_order_relaxed);
  }
}

void CopyTeam::serve() {
  std::uint32_t served = 0;
  for (;;) {
    Round round;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      started_.wait(lock, [&] { return stopping_ || round_.number != served; });
      if (stopping_) return;
      round = round_;
    }
    served = round.number;
    copy_pieces(round);
  }
}

void CopyTeam::copy(void* to, const void* from, std::size_t bytes) {
  const std::size_t pieces = (bytes + kPieceBytes - 1) / kPieceBytes;
  if (helpers_.empty() || pieces <= 1) {
    copy_streaming(static_cast<unsigned char*>(to), static_cast<const unsigned char*>(from), bytes);
    return;
  }
  Round round;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    round_.to = static_cast<unsigned char*>(to);
    round_.from = static_cast<const unsigned char*>(from);
    round_.bytes = bytes;
    // Zero is no round: a helper that has served none waits for the first.
    round_.number = round_.number == UINT32_MAX ? 1 : round_.number + 1;
    pieces_done_.store(0, std::memory_order_relaxed);
    next_piece_.store(std::uint64_t{round_.number} << 32, std::memory_order_relaxed);
    round = round_;
  }
  started_.notify_all();
  copy_pieces(round);
  // What is left are the pieces other threads are copying: a piece's time at most.
  while (pieces_done_.load(std::memory_order_acquire) < pieces) std::this_thread::yield();
}

PinnedStaging::PinnedStaging(unsigned copy_threads)
    : chunk_bytes_(kChunkBytes), team_(copy_threads) {
  try {
    for (std::size_t c = 0; c < kChunks; ++c) {
      void* chunk = nullptr;
      VOLCCL_CUDA_CHECK(cudaHostAlloc(&chunk, chunk_bytes_, cudaHostAllocDefault));
      chunks_.push_back(static_cast<unsigned char*>(chunk));
      cudaEvent_t event = nullptr;
      VOLCCL_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
      done_.push_back(event);
    }
  } catch (...) {
    for (cudaEvent_t event : done_) cudaEventDestroy(event);
    for (unsigned char* chunk : chunks_) cudaFreeHost(chunk);
    throw;
  }
}

PinnedStaging::~PinnedStaging() {
  for (cudaEvent_t event : done_) {
    cudaEventSynchronize(event);
    cudaEventDestroy(event);
  }
  for (unsigned char* chunk : chunks_) cudaFreeHost(chunk);
}

void PinnedStaging::upload(void* device, const void* host, std::size_t bytes, cudaStream_t stream) {
  const std::size_t chunks = (bytes + chunk_bytes_ - 1) / chunk_bytes_;
  for (std::size_t k = 0; k < chunks; ++k) {
    const std::size_t b = k % chunks_.size();
    const std::size_t offset = k * chunk_bytes_;
    const std::size_t size = std::min(chunk_bytes_, bytes - offset);
    VOLCCL_CUDA_CHECK(cudaEventSynchronize(done_[b]));
    team_.copy(chunks_[b], static_cast<const unsigned char*>(host) + offset, size);
    VOLCCL_CUDA_CHECK(cudaMemcpyAsync(static_cast<unsigned char*>(device) + offset, chunks_[b],
                                      size, cudaMemcpyHostToDevice, stream));
    VOLCCL_CUDA_CHECK(cudaEventRecord(done_[b], stream));
  }
}

void PinnedStaging::download(void* host, const void* device, std::size_t bytes,
                             cudaStream_t stream) {
  const std::size_t chunks = (bytes + chunk_bytes_ - 1) / chunk_bytes_;
  const auto enqueue = [&](std::size_t k) {
    const std::size_t b = k % chunks_.size();
    const std::size_t offset = k * chunk_bytes_;
    VOLCCL_CUDA_CHECK(
        cudaMemcpyAsync(chunks_[b], static_cast<const unsigned char*>(device) + offset,
                        std::min(chunk_bytes_, bytes - offset), cudaMemcpyDeviceToHost, stream));
    VOLCCL_CUDA_CHECK(cudaEventRecord(done_[b], stream));
  };
  for (std::size_t k = 0; k < std::min(chunks, chunks_.size()); ++k) enqueue(k);
  for (std::size_t k = 0; k < chunks; ++k) {
    const std::size_t b = k % chunks_.size();
    const std::size_t offset = k * chunk_bytes_;
    VOLCCL_CUDA_CHECK(cudaEventSynchronize(done_[b]));
    team_.copy(static_cast<unsigned char*>(host) + offset, chunks_[b],
               std::min(chunk_bytes_, bytes - offset));
    if (k + chunks_.size() < chunks) enqueue(k + chunks_.size());
  }
}

namespace {

struct StagingCache {
  std::mutex mutex;
  std::vector<std::pair<unsigned, std::unique_ptr<PinnedStaging>>> free;
};

// Never destroyed: the stagings' threads and pinned memory live as long as the process, and no
// destructor runs after the CUDA runtime has unloaded.
StagingCache& staging_cache() {
  static StagingCache* cache = new StagingCache;
  return *cache;
}

}  // namespace

StagingLease::StagingLease(unsigned copy_threads) : copy_threads_(copy_threads) {
  StagingCache& cache = staging_cache();
  {
    const std::lock_guard<std::mutex> lock(cache.mutex);
    for (auto it = cache.free.begin(); it != cache.free.end(); ++it) {
      if (it->first == copy_threads) {
        staging_ = it->second.release();
        cache.free.erase(it);
        return;
      }
    }
  }
  staging_ = new PinnedStaging(copy_threads);
}

StagingLease::~StagingLease() {
  StagingCache& cache = staging_cache();
  const std::lock_guard<std::mutex> lock(cache.mutex);
  cache.free.emplace_back(copy_threads_, std::unique_ptr<PinnedStaging>(staging_));
}

}  // namespace volccl::detail
