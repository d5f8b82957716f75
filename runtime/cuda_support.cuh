// CUDA plumbing for the kernels: checked calls, stream-ordered RAII buffers from volccl's own
// memory pool, and per-step CUDA event timing. Internal; included only by .cu files.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
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

// Device memory a call can take: the device's free memory and what volccl's pool holds unused.
std::uint64_t device_memory_available();
// The most memory volccl's pool has lent at once since reset_peak_device_memory(), by any
// thread of the process.
void reset_peak_device_memory();
std::uint64_t peak_device_memory();

// The 3D labelers' launch shape: thread blocks of 32 x kLaunchRows threads over a grid of
// `columns` x `rows` x `slices` work items (voxels, quads, pairs or blocks), a warp per 32
// consecutive items of a row. gridDim.z stops at 65535, so a deeper grid is launched in slabs:
// launch(blocks, threads, first_slice) once per slab, its kernel adding first_slice to
// blockIdx.z. With `depth` > 1 a thread block covers that many slices (threadIdx.z), and the
// last one may reach past the volume.
constexpr std::uint32_t kLaunchRows = 4;
template <class Launch>
void launch_in_slabs(std::uint32_t columns, std::uint32_t rows, std::uint32_t slices, Launch launch,
                     std::uint32_t depth = 1) {
  constexpr std::uint32_t kMaxBlocksZ = 65535;
  const dim3 threads(32, kLaunchRows, depth);
  const std::uint32_t slab = kMaxBlocksZ * depth;
  for (std::uint32_t first = 0; first < slices; first += slab) {
    const std::uint32_t slab_slices = std::min(slab, slices - first);
    const dim3 blocks((columns + 31) / 32, (rows + kLaunchRows - 1) / kLaunchRows,
                      (slab_slices + depth - 1) / depth);
    launch(blocks, threads, first);
    VOLCCL_CUDA_CHECK(cudaGetLastError());
  }
}

// What the current device offers, read once per device.
struct DeviceTraits {
  bool programmatic_launch;  // compute capability 9.0 on
  std::size_t l2_cache_bytes;
  std::uint64_t resident_threads;  // multiprocessors times threads a multiprocessor
  std::uint32_t multiprocessors;
};
DeviceTraits device_traits();

// Programmatic dependent launch (compute capability 9.0 on): a kernel launched by
// launch_after_previous() is launched while the kernel before it on the stream finishes (once
// all of that one's warps have exited, before its grid completes), and its threads wait in
// wait_for_previous_kernel() until that grid has completed and its writes are visible. That hides
// the launch between two kernels, a visible share of a labeling whose steps are each a few tens
// of microseconds. Triggering the launch earlier, at the start of each block
// (griddepcontrol.launch_dependents), made UFB's root marking much slower, for reasons not
// established (bench/notes/union-find-3d.md). Elsewhere wait_for_previous_kernel() does nothing
// and the launch is an ordinary one.
__device__ inline void wait_for_previous_kernel() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// The kernels read and write the caller's device buffers in words of up to 16 bytes (uint4 loads,
// 8-byte cp.async copies), so volccl::cuda's entry points refuse pointers that are not aligned to
// 16 bytes, as cudaMalloc's and the pool's are (256): a misaligned word access would fail the
// launch. `what` names the call and the buffer.
inline void require_device_alignment(const void* pointer, const std::string& what) {
  constexpr std::uintptr_t kWordBytes = 16;
  if (reinterpret_cast<std::uintptr_t>(pointer) % kWordBytes != 0) {
    throw InvalidArgument(what + " is not aligned to 16 bytes (as cudaMalloc's pointers are)");
  }
}

// Copies 8 bytes (8-aligned) from global to shared memory; from compute capability 8.0 on
// without registers and without waiting (cp.async), so that a warp can have dozens of copies in
// flight: wait_for_async_copies() waits for the thread's own, then a __syncwarp or a barrier
// shows them to the others.
__device__ __forceinline__ void copy_async_8(void* shared, const void* global) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const auto address = static_cast<unsigned>(__cvta_generic_to_shared(shared));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8;" ::"r"(address), "l"(global) : "memory");
#else
  *static_cast<uint2*>(shared) = *static_cast<const uint2*>(global);
#endif
}

__device__ __forceinline__ void wait_for_async_copies() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_all;" ::: "memory");
#endif
}

template <class... Parameters, class... Arguments>
void launch_after_previous(void (*kernel)(Parameters...), dim3 blocks, dim3 threads,
                           cudaStream_t stream, Arguments&&... arguments) {
  cudaLaunchConfig_t config{};
  config.gridDim = blocks;
  config.blockDim = threads;
  config.stream = stream;
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute.val.programmaticStreamSerializationAllowed = 1;
  config.attrs = &attribute;
  config.numAttrs = device_traits().programmatic_launch ? 1 : 0;
  VOLCCL_CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, std::forward<Arguments>(arguments)...));
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
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), count_(other.count_), stream_(other.stream_) {}
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  T* data() const { return data_; }
  std::size_t size() const { return count_; }
  std::size_t bytes() const { return count_ * sizeof(T); }
  // Frees it on its stream now, before the host waits for the stream: a free enqueued after the
  // wait would keep the GPU idle while the host makes the call.
  void release() {
    if (data_ != nullptr) VOLCCL_CUDA_CHECK(cudaFreeAsync(data_, stream_));
    data_ = nullptr;
  }

 private:
  T* data_;
  std::size_t count_;
  cudaStream_t stream_;
};

// Times the steps of one run with CUDA events on its stream: end_step(&field) closes the step
// begun at the previous call (or at construction); resolve() waits for the stream and adds each
// step's milliseconds to its field. Disabled (LabelOptions::step_timings off), it records
// nothing and resolve() only waits: the events' creation and recording cost the host a few
// microseconds per step, which a GPU labeling a small image would spend idle.
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

// Bytes that a labeler wants beside the ranking, in the same allocation (one allocation, and one
// free enqueued before the host waits, instead of one of each per array).
struct Scratch {
  std::size_t bytes = 0;
  // The offset of an array of `count` T after those reserved so far, aligned for vector loads.
  template <class T>
  std::size_t reserve(std::uint64_t count) {
    const std::size_t offset = bytes;
    bytes += (count * sizeof(T) + 255) / 256 * 256;
    return offset;
  }
};

// The bytes that a kernel must zero before the roots are marked, for labelers that clear the
// ranking in their first kernel rather than by a memset (a call less before the first kernel).
struct ClearSpan {
  std::uint32_t* words;
  std::uint64_t count;
};

// Zeroes `span` with every thread of the launch (one launch of launch_in_slabs: give the others an
// empty span).
__device__ inline void zero_by_grid(ClearSpan span) {
  const std::uint64_t threads =
      std::uint64_t{gridDim.x} * gridDim.y * gridDim.z * blockDim.x * blockDim.y * blockDim.z;
  const std::uint64_t block =
      (std::uint64_t{blockIdx.z} * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
  const std::uint64_t first = block * blockDim.x * blockDim.y * blockDim.z +
                              threadIdx.y * blockDim.x + threadIdx.x +
                              std::uint64_t{threadIdx.z} * blockDim.x * blockDim.y;
  for (std::uint64_t i = first; i < span.count; i += threads) span.words[i] = 0;
}

// A word of pinned host memory mapped into the device's address space, leased from a pool that
// the host threads share and given back when this object dies: where a kernel writes what the
// host waits for (a count, a flag), with no copy to enqueue and no allocation per call (which
// would synchronize the device).
class PinnedWord {
 public:
  PinnedWord();
  ~PinnedWord();
  PinnedWord(const PinnedWord&) = delete;
  PinnedWord& operator=(const PinnedWord&) = delete;
  std::uint32_t* host() const { return host_; }
  std::uint32_t* device() const { return device_; }

 private:
  std::uint32_t* host_;
  std::uint32_t* device_;
};

// An event without timing on the current device, leased from a pool per device that the host
// threads share and given back when this object dies: what the host waits for in a call (a check's
// verdict, a count), without an event made and destroyed per call.
class LeasedEvent {
 public:
  LeasedEvent();
  ~LeasedEvent();
  LeasedEvent(const LeasedEvent&) = delete;
  LeasedEvent& operator=(const LeasedEvent&) = delete;
  cudaEvent_t get() const { return event_; }

 private:
  int device_;
  cudaEvent_t event_;
};

// The device side of raster_rank.h for one labeling: the root bitmap, the ranks of its words
// (an exclusive scan in one kernel, raster_rank.cu) and the labeler's scratch, in one
// allocation; the component count, written by the scan straight into mapped pinned host memory
// (no copy to enqueue).
class RootRanking {
 public:
  RootRanking(std::uint64_t voxel_count, cudaStream_t stream, std::size_t scratch_bytes);
  std::uint32_t* bitmap() const { return bitmap_; }
  const std::uint32_t* words_before() const { return words_before_; }
  void* scratch() const { return storage_.data() + scratch_offset_; }
  ClearSpan clear_span() const;
  void clear();  // before the roots are marked (or a kernel zeroes clear_span())
  void scan();   // after: words_before[w] = set bits in words 0..w-1, for w = 0..words, and the
                 // count written to the host
  void release() { storage_.release(); }
  // Once the stream has passed scan().
  std::uint32_t count() const { return *static_cast<volatile std::uint32_t*>(count_.host()); }
  // The count in device memory, for kernels enqueued after scan() and before release().
  const std::uint32_t* count_on_device() const { return words_before_ + words_; }

 private:
  std::uint64_t words_;
  cudaStream_t stream_;
  std::size_t state_bytes_, scratch_offset_;
  DeviceBuffer<std::uint8_t> storage_;  // the scan's tile states, bitmap, words_before, scratch
  std::uint32_t* bitmap_;
  std::uint32_t* words_before_;
  PinnedWord count_;
};

class LateBeforeCount;   // runtime/late_moments.h
struct DeviceLabelCall;  // runtime/labeler.h

// The frame of one labeling on the device, shared by every CUDA labeler: the clock of the whole
// call, the root ranking (its allocation timed, its bitmap cleared as the first relabel step),
// the step events, and the result they fill. A labeler launches its steps between end_step()
// calls, ranks the roots it marked with rank(), and returns finish().
class DeviceLabeling {
 public:
  // How the ranking is cleared: by a memset, or by the labeler's first kernel (clear_span()).
  enum class Clear { by_memset, by_labeler };
  // `keys`: how many root keys the labeler ranks; 0 for one per voxel. `scratch`: the labeler's
  // arrays, allocated with the ranking.
  explicit DeviceLabeling(const DeviceLabelCall& call, std::uint64_t keys = 0, Scratch scratch = {},
                          Clear clear = Clear::by_memset);
  DeviceLabeling(const DeviceLabeling&) = delete;
  DeviceLabeling& operator=(const DeviceLabeling&) = delete;
  cudaStream_t stream() const { return stream_; }
  std::uint32_t* root_bitmap() const { return ranking_.bitmap(); }
  const std::uint32_t* words_before() const { return ranking_.words_before(); }
  ClearSpan clear_span() const { return ranking_.clear_span(); }
  // Whether FinalLabeling should store the labels evict-first: a label image larger than the L2
  // cache cannot stay there, and its lines would evict the forest's and the ranking's, which
  // FinalLabeling reads (it helps only where the labels do not fit in L2:
  // bench/notes/union-find-3d.md).
  bool evict_labels_first() const { return evict_labels_first_; }
  template <class T>
  T* scratch(std::size_t offset) const {
    return reinterpret_cast<T*>(static_cast<std::uint8_t*>(ranking_.scratch()) + offset);
  }
  // Closes the step begun at the previous call and adds its time to `step`.
  void end_step(double StepTimings::*step) { events_.end_step(&(result_.timings.*step)); }
  // Ranks the roots marked in root_bitmap(), the relabel step.
  void rank();
  // After rank(): waits for the stream and returns the component count (what the fused
  // statistics need to size their table before the final labeling).
  std::uint32_t wait_for_count();
  // The Late pass the call asked the labeling to enqueue before its wait, or null.
  LateBeforeCount* late_before_count() const { return late_; }
  // Right after rank(): marks the stream there, so that count_when_ranked() waits for the ranking
  // alone and the GPU goes on with the steps enqueued after it.
  void mark_ranked();
  std::uint32_t count_when_ranked();
  // Enqueues the Late pass that the call asked for, if any (LateBeforeCount), frees the
  // ranking and the scratch on the stream, waits for it and returns the component count and the
  // timings.
  LabelResult finish();

 private:
  StepClock whole_call_;
  cudaStream_t stream_;
  LabelResult result_;
  StepEvents events_;
  StepClock allocation_clock_;  // started right before ranking_ allocates
  RootRanking ranking_;
  bool evict_labels_first_;
  LateBeforeCount* late_;  // null unless the call measures with Late before the count
  std::optional<LeasedEvent> ranked_;
};

}  // namespace volccl::detail
