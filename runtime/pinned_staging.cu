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
  for (unsigned part = 1; part < std::max(1u, threads); ++part) {
    helpers_.emplace_back([this, part] { serve(part); });
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

void CopyTeam::copy_part(unsigned part) const {
  const std::size_t parts = helpers_.size() + 1;
  const std::size_t begin = bytes_ * part / parts;
  const std::size_t end = bytes_ * (part + 1) / parts;
  copy_streaming(to_ + begin, from_ + begin, end - begin);
}

void CopyTeam::serve(unsigned part) {
  std::uint64_t served = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      started_.wait(lock, [&] { return stopping_ || round_ != served; });
      if (stopping_) return;
      served = round_;
    }
    copy_part(part);
    const std::lock_guard<std::mutex> lock(mutex_);
    if (--pending_ == 0) finished_.notify_one();
  }
}

void CopyTeam::copy(void* to, const void* from, std::size_t bytes) {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    to_ = static_cast<unsigned char*>(to);
    from_ = static_cast<const unsigned char*>(from);
    bytes_ = bytes;
    pending_ = static_cast<unsigned>(helpers_.size());
    ++round_;
  }
  started_.notify_all();
  copy_part(0);
  std::unique_lock<std::mutex> lock(mutex_);
  finished_.wait(lock, [&] { return pending_ == 0; });
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
