// CUDA plumbing for the kernels: checked calls, stream-ordered RAII buffers from volccl's own
// memory pool, and per-step CUDA event timing. Internal; included only by .cu files.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "volccl/error.h"

namespace volccl::detail {

[[noreturn]] void throw_cuda_error(cudaError_t status, const char* call, const char* file,
                                   int line);

}  // namespace volccl::detail

// Checks a CUDA runtime call; after a kernel launch, check cudaGetLastError() with it.
#define VOLCCL_CUDA_CHECK(call)                                                     \
  do {                                                                              \
    const cudaError_t volccl_status = (call);                                       \
    if (volccl_status != cudaSuccess) {                                             \
      ::volccl::detail::throw_cuda_error(volccl_status, #call, __FILE__, __LINE__); \
    }                                                                               \
  } while (0)

namespace volccl::detail {

// Allocates `bytes` on `stream` from volccl's memory pool of the current device. The pool keeps
// freed memory for the next call (as CuPy's pool does), so repeated labeling of same-sized
// volumes allocates in microseconds. Throws OutOfDeviceMemory naming `what` and the bytes.
void* allocate_async(std::size_t bytes, cudaStream_t stream, const char* what);

// A stream-ordered device array; freed on its stream when it goes out of scope.
template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer(std::size_t count, cudaStream_t stream, const char* what)
      : data_(static_cast<T*>(allocate_async(count * sizeof(T), stream, what))),
        count_(count),
        stream_(stream) {}
  ~DeviceBuffer() {
    if (data_ != nullptr) cudaFreeAsync(data_, stream_);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  T* data() const { return data_; }
  std::size_t size() const { return count_; }
  std::size_t bytes() const { return count_ * sizeof(T); }

 private:
  T* data_;
  std::size_t count_;
  cudaStream_t stream_;
};

// Times the steps of one run with CUDA events on its stream: end_step(&field) closes the step
// begun at the previous call (or at construction); resolve() waits for the stream and adds each
// step's milliseconds to its field.
class StepEvents {
 public:
  explicit StepEvents(cudaStream_t stream);
  ~StepEvents();
  StepEvents(const StepEvents&) = delete;
  StepEvents& operator=(const StepEvents&) = delete;

  void end_step(double* field);
  void resolve();

 private:
  cudaStream_t stream_;
  std::vector<cudaEvent_t> events_;
  std::vector<double*> fields_;
};

// words_before[w] = set bits in bitmap words 0..w-1, for w = 0..words; words_before[words] is
// the number of components. CUB's device-wide exclusive scan (raster_rank.cu).
std::size_t rank_scan_temp_bytes(std::uint64_t words);
void rank_scan(const std::uint32_t* bitmap, std::uint32_t* words_before, std::uint64_t words,
               void* temp, std::size_t temp_bytes, cudaStream_t stream);

}  // namespace volccl::detail
