// CUDA plumbing for the kernels: checked calls, stream-ordered RAII buffers from volccl's own
// memory pool, and per-step CUDA event timing. Internal; included only by .cu files.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "volccl/detail/step_clock.h"
#include "volccl/error.h"
#include "volccl/types.h"

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

// The 3D labelers' launch shape: thread blocks of 32 x kLaunchRows threads over a grid of
// `columns` x `rows` x `slices` work items (voxels, quads, pairs or blocks), a warp per 32
// consecutive items of a row. gridDim.z stops at 65535, so a deeper grid is launched in slabs:
// launch(blocks, threads, first_slice) once per slab, its kernel adding first_slice to
// blockIdx.z.
constexpr std::uint32_t kLaunchRows = 4;
template <class Launch>
void launch_in_slabs(std::uint32_t columns, std::uint32_t rows, std::uint32_t slices,
                     Launch launch) {
  constexpr std::uint32_t kMaxSlices = 65535;
  const dim3 threads(32, kLaunchRows);
  for (std::uint32_t first = 0; first < slices; first += kMaxSlices) {
    const dim3 blocks((columns + 31) / 32, (rows + kLaunchRows - 1) / kLaunchRows,
                      std::min(kMaxSlices, slices - first));
    launch(blocks, threads, first);
    VOLCCL_CUDA_CHECK(cudaGetLastError());
  }
}

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
// step's milliseconds to its field. Disabled (LabelOptions::step_timings off), it records
// nothing and resolve() only waits: the events' creation and recording cost the host a few
// microseconds per step, which a GPU labeling a 2048^2 image in 0.1 ms would spend idle.
class StepEvents {
 public:
  StepEvents(cudaStream_t stream, bool enabled);
  ~StepEvents();
  StepEvents(const StepEvents&) = delete;
  StepEvents& operator=(const StepEvents&) = delete;

  void end_step(double* field);
  void resolve();

 private:
  cudaStream_t stream_;
  bool enabled_;
  std::vector<cudaEvent_t> events_;
  std::vector<double*> fields_;
};

// The device side of raster_rank.h for one labeling: the root bitmap, the ranks of its words
// (an exclusive scan in one kernel, raster_rank.cu) and the component count, in one allocation.
class RootRanking {
 public:
  RootRanking(std::uint64_t voxel_count, cudaStream_t stream);
  std::uint32_t* bitmap() const { return bitmap_; }
  const std::uint32_t* words_before() const { return words_before_; }
  void clear();  // before the roots are marked
  void scan();   // after: words_before[w] = set bits in words 0..w-1, for w = 0..words
  // Copies words_before[words], the component count, to pinned host memory on the stream;
  // count() reads it once the stream has reached the copy.
  void copy_count();
  std::uint32_t count() const { return *host_count_; }

 private:
  std::uint64_t words_;
  cudaStream_t stream_;
  std::size_t state_bytes_;
  DeviceBuffer<std::uint8_t> storage_;  // the scan's tile states, bitmap, words_before
  std::uint32_t* bitmap_;
  std::uint32_t* words_before_;
  std::uint32_t* host_count_;  // pinned, one per host thread
};

// The frame of one labeling on the device, shared by every CUDA labeler: the clock of the whole
// call, the root ranking (its allocation timed, its bitmap cleared as the first relabel step),
// the step events, and the result they fill. A labeler launches its steps between end_step()
// calls, ranks the roots it marked with rank(), and returns finish().
class DeviceLabeling {
 public:
  // `keys`: how many root keys the labeler ranks; 0 for one per voxel.
  DeviceLabeling(Extent3 extent, const LabelOptions& options, cudaStream_t stream,
                 std::uint64_t keys = 0);
  cudaStream_t stream() const { return stream_; }
  std::uint32_t* root_bitmap() const { return ranking_.bitmap(); }
  const std::uint32_t* words_before() const { return ranking_.words_before(); }
  // Closes the step begun at the previous call and adds its time to `step`.
  void end_step(double StepTimings::*step) { events_.end_step(&(result_.timings.*step)); }
  // Ranks the roots marked in root_bitmap(), the relabel step.
  void rank();
  // After rank(): waits for the stream and returns the component count (what the fused
  // statistics need to size their table before the final labeling).
  std::uint32_t wait_for_count();
  // Waits for the stream and returns the component count and the timings.
  LabelResult finish();

 private:
  StepClock whole_call_;
  cudaStream_t stream_;
  LabelResult result_;
  StepEvents events_;
  StepClock allocation_clock_;  // started right before ranking_ allocates
  RootRanking ranking_;
};

}  // namespace volccl::detail
