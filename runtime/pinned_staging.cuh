// Copies between pageable host memory and the device through a few chunks of pinned host memory,
// so that the DMA engines run at their pinned speed while host threads fill and empty the
// chunks: the copy of one chunk overlaps the transfer of the others. Internal; .cu files only.
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace volccl::detail {

// Host threads that share each memcpy, started once: a chunk of tens of megabytes takes about a
// millisecond to copy, too little to start threads for each. The threads take the copy's pieces
// from a counter, so a thread that the scheduler wakes late or preempts delays the copy by one
// piece at most, not by an equal share of it.
class CopyTeam {
 public:
  explicit CopyTeam(unsigned threads);  // the caller of copy() is one of them
  ~CopyTeam();
  CopyTeam(const CopyTeam&) = delete;
  CopyTeam& operator=(const CopyTeam&) = delete;

  void copy(void* to, const void* from, std::size_t bytes);

 private:
  struct Round {
    unsigned char* to = nullptr;
    const unsigned char* from = nullptr;
    std::size_t bytes = 0;
    std::uint32_t number = 0;
  };

  void copy_pieces(const Round& round);
  void serve();

  std::mutex mutex_;
  std::condition_variable started_;
  std::vector<std::thread> helpers_;
  Round round_;  // under mutex_
  bool stopping_ = false;
  // The round's number in the high half, the next piece to take in the low half: a helper that
  // wakes after its round has ended takes nothing from the next one.
  std::atomic<std::uint64_t> next_piece_{0};
  std::atomic<std::size_t> pieces_done_{0};
};

class PinnedStaging {
 public:
  // `copy_threads` host threads copy each chunk.
  explicit PinnedStaging(unsigned copy_threads);
  ~PinnedStaging();
  PinnedStaging(const PinnedStaging&) = delete;
  PinnedStaging& operator=(const PinnedStaging&) = delete;

  // Host to device on `stream`; returns once `host` has been read (the last chunks' transfers
  // may still run on the stream).
  void upload(void* device, const void* host, std::size_t bytes, cudaStream_t stream);
  // Device to host after what `stream` has enqueued; returns once `host` holds the bytes.
  void download(void* host, const void* device, std::size_t bytes, cudaStream_t stream);

 private:
  std::size_t chunk_bytes_;
  CopyTeam team_;
  std::vector<unsigned char*> chunks_;
  std::vector<cudaEvent_t> done_;  // the last transfer through each chunk
};

// A staging from the process's cache, made on first use with `copy_threads` threads and kept
// for the next call (as CuPy keeps its pinned memory): allocating pinned memory costs tens of
// milliseconds. Handed back when the lease ends.
class StagingLease {
 public:
  explicit StagingLease(unsigned copy_threads);
  ~StagingLease();
  StagingLease(const StagingLease&) = delete;
  StagingLease& operator=(const StagingLease&) = delete;
  PinnedStaging& operator*() const { return *staging_; }
  PinnedStaging* operator->() const { return staging_; }

 private:
  unsigned copy_threads_;
  PinnedStaging* staging_;
};

}  // namespace volccl::detail
