// The CUDA runtime side of volccl: device discovery, errors, the memory pool, step events and the
// frame of a labeling on the device (DeviceLabeling).
#include <cuda_runtime.h>

#include <cstdint>
#include <limits>
#include <mutex>
#include <sstream>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "runtime/cuda_support.cuh"
#include "runtime/labeler.h"
#include "runtime/late_moments.h"
#include "volccl/cuda.h"
#include "volccl/detail/step_clock.h"
#include "volccl/volccl.h"

namespace volccl {
namespace {

struct DeviceProbe {
  bool available = false;
  std::string description;
};

DeviceProbe probe_device() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    cudaGetLastError();  // not sticky; leave no error behind for the caller
    return {false, std::string("no CUDA device: ") + cudaGetErrorString(status)};
  }
  if (count == 0) return {false, "no CUDA device: the CUDA runtime found none"};
  int device = 0;
  cudaDeviceProp properties{};
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaGetDeviceProperties(&properties, device) != cudaSuccess) {
    cudaGetLastError();
    return {false, "no CUDA device: the device's properties could not be read"};
  }
  // Start the device's context now, so that the first labeling's step timings do not include
  // its creation, which takes far longer than a small labeling.
  if (cudaFree(nullptr) != cudaSuccess) {
    cudaGetLastError();
    return {false, "no CUDA device: the CUDA context could not be created"};
  }
  std::ostringstream text;
  text << properties.name << " (compute capability " << properties.major << '.' << properties.minor
       << ", " << (properties.totalGlobalMem >> 20) << " MiB)";
  return {true, text.str()};
}

const DeviceProbe& device_probe() {
  static const DeviceProbe probe = probe_device();
  return probe;
}

}  // namespace

bool cuda_available() { return device_probe().available; }
std::string cuda_device_description() { return device_probe().description; }

namespace detail {

void throw_cuda_error(cudaError_t status, const char* call, const char* file, int line) {
  cudaGetLastError();
  std::ostringstream text;
  text << "volccl: CUDA error " << cudaGetErrorName(status) << " (" << cudaGetErrorString(status)
       << ") in " << call << " at " << file << ':' << line;
  throw CudaError(text.str());
}

namespace {

// `make(device)` for the current device, made on first use and kept for the process's life
// (each caller's Make its own table).
template <class Value, class Make>
Value once_per_device(Make make) {
  static std::mutex mutex;
  static std::unordered_map<int, Value> values;
  int device = 0;
  VOLCCL_CUDA_CHECK(cudaGetDevice(&device));
  const std::lock_guard<std::mutex> lock(mutex);
  auto found = values.find(device);
  if (found == values.end()) found = values.emplace(device, make(device)).first;
  return found->second;
}

// One pool per device.
cudaMemPool_t memory_pool() {
  return once_per_device<cudaMemPool_t>([](int device) {
    cudaMemPoolProps properties{};
    properties.allocType = cudaMemAllocationTypePinned;
    properties.location.type = cudaMemLocationTypeDevice;
    properties.location.id = device;
    cudaMemPool_t pool = nullptr;
    VOLCCL_CUDA_CHECK(cudaMemPoolCreate(&pool, &properties));
    std::uint64_t keep_everything = std::numeric_limits<std::uint64_t>::max();
    VOLCCL_CUDA_CHECK(
        cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep_everything));
    return pool;
  });
}

}  // namespace

DeviceTraits device_traits() {
  return once_per_device<DeviceTraits>([](int device) {
    int major = 0, l2_bytes = 0, sms = 0, threads_per_sm = 0;
    VOLCCL_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    VOLCCL_CUDA_CHECK(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device));
    VOLCCL_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    VOLCCL_CUDA_CHECK(
        cudaDeviceGetAttribute(&threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, device));
    return DeviceTraits{
        major >= 9, static_cast<std::size_t>(l2_bytes),
        std::uint64_t{static_cast<std::uint32_t>(sms)} * static_cast<std::uint32_t>(threads_per_sm),
        static_cast<std::uint32_t>(sms)};
  });
}

void* allocate_async(std::size_t bytes, cudaStream_t stream, const char* what) {
  void* pointer = nullptr;
  if (bytes == 0) return nullptr;
  const cudaError_t status = cudaMallocFromPoolAsync(&pointer, bytes, memory_pool(), stream);
  if (status == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    std::size_t free_bytes = 0, total_bytes = 0;
    cudaMemGetInfo(&free_bytes, &total_bytes);
    std::ostringstream text;
    text << "volccl: out of GPU memory: " << what << " needs " << bytes << " bytes, " << free_bytes
         << " of " << total_bytes
         << " bytes are free; the CPU backend (--device cpu) needs no GPU memory";
    throw OutOfDeviceMemory(text.str(), bytes);
  }
  VOLCCL_CUDA_CHECK(status);
  return pointer;
}

std::uint64_t device_memory_available() {
  std::size_t free_bytes = 0, total_bytes = 0;
  VOLCCL_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  std::uint64_t reserved = 0, used = 0;
  VOLCCL_CUDA_CHECK(
      cudaMemPoolGetAttribute(memory_pool(), cudaMemPoolAttrReservedMemCurrent, &reserved));
  VOLCCL_CUDA_CHECK(cudaMemPoolGetAttribute(memory_pool(), cudaMemPoolAttrUsedMemCurrent, &used));
  return free_bytes + (reserved - used);
}

void reset_peak_device_memory() {
  std::uint64_t zero = 0;
  VOLCCL_CUDA_CHECK(cudaMemPoolSetAttribute(memory_pool(), cudaMemPoolAttrUsedMemHigh, &zero));
}

std::uint64_t peak_device_memory() {
  std::uint64_t high = 0;
  VOLCCL_CUDA_CHECK(cudaMemPoolGetAttribute(memory_pool(), cudaMemPoolAttrUsedMemHigh, &high));
  return high;
}

namespace {

struct PinnedWordPool {
  std::mutex mutex;
  std::vector<std::pair<std::uint32_t*, std::uint32_t*>> free_words;  // host, device
};

PinnedWordPool& pinned_word_pool() {
  static PinnedWordPool pool;
  return pool;
}

}  // namespace

PinnedWord::PinnedWord() {
  PinnedWordPool& pool = pinned_word_pool();
  {
    const std::lock_guard<std::mutex> lock(pool.mutex);
    if (!pool.free_words.empty()) {
      std::tie(host_, device_) = pool.free_words.back();
      pool.free_words.pop_back();
      return;
    }
  }
  VOLCCL_CUDA_CHECK(
      cudaHostAlloc(&host_, sizeof(std::uint32_t), cudaHostAllocMapped | cudaHostAllocPortable));
  VOLCCL_CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&device_), host_, 0));
}

PinnedWord::~PinnedWord() {
  PinnedWordPool& pool = pinned_word_pool();
  const std::lock_guard<std::mutex> lock(pool.mutex);
  pool.free_words.emplace_back(host_, device_);
}

namespace {

struct LeasedEventPool {
  std::mutex mutex;
  std::unordered_map<int, std::vector<cudaEvent_t>> free_events;  // by device
};

LeasedEventPool& leased_event_pool() {
  static LeasedEventPool pool;
  return pool;
}

}  // namespace

LeasedEvent::LeasedEvent() {
  VOLCCL_CUDA_CHECK(cudaGetDevice(&device_));
  LeasedEventPool& pool = leased_event_pool();
  {
    const std::lock_guard<std::mutex> lock(pool.mutex);
    std::vector<cudaEvent_t>& free_events = pool.free_events[device_];
    if (!free_events.empty()) {
      event_ = free_events.back();
      free_events.pop_back();
      return;
    }
  }
  VOLCCL_CUDA_CHECK(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming));
}

LeasedEvent::~LeasedEvent() {
  // An event whose recorded work is still pending (a call left by an exception) is destroyed,
  // which CUDA defers until that work is done, so that no later lease shares it.
  if (cudaEventQuery(event_) != cudaSuccess) {
    cudaGetLastError();
    cudaEventDestroy(event_);
    return;
  }
  LeasedEventPool& pool = leased_event_pool();
  const std::lock_guard<std::mutex> lock(pool.mutex);
  pool.free_events[device_].push_back(event_);
}

StepEvents::StepEvents(cudaStream_t stream, bool enabled) : stream_(stream), enabled_(enabled) {
  if (!enabled_) return;
  events_.emplace_back();
  VOLCCL_CUDA_CHECK(cudaEventCreate(&events_.back()));
  VOLCCL_CUDA_CHECK(cudaEventRecord(events_.back(), stream_));
}

StepEvents::~StepEvents() {
  for (cudaEvent_t event : events_) cudaEventDestroy(event);
}

void StepEvents::end_step(double* field) {
  if (!enabled_) return;
  events_.emplace_back();
  VOLCCL_CUDA_CHECK(cudaEventCreate(&events_.back()));
  VOLCCL_CUDA_CHECK(cudaEventRecord(events_.back(), stream_));
  fields_.push_back(field);
}

void StepEvents::resolve() {
  if (!enabled_) {
    VOLCCL_CUDA_CHECK(cudaStreamSynchronize(stream_));
    return;
  }
  VOLCCL_CUDA_CHECK(cudaEventSynchronize(events_.back()));
  for (std::size_t step = 0; step < fields_.size(); ++step) {
    float ms = 0;
    VOLCCL_CUDA_CHECK(cudaEventElapsedTime(&ms, events_[step], events_[step + 1]));
    *fields_[step] += ms;
  }
}

namespace {

LabelResult started_result(const LabelOptions& options) {
  LabelResult result;
  result.backend_used = Backend::cuda;
  result.algorithm_used = options.algorithm;
  return result;
}

}  // namespace

DeviceLabeling::DeviceLabeling(const DeviceLabelCall& call, std::uint64_t keys, Scratch scratch,
                               Clear clear)
    : stream_(static_cast<cudaStream_t>(call.stream)),
      result_(started_result(call.options)),
      events_(stream_, call.options.step_timings),
      ranking_(keys != 0 ? keys : call.extent.voxel_count(), stream_, scratch.bytes),
      evict_labels_first_(call.extent.voxel_count() * sizeof(std::uint32_t) >
                          device_traits().l2_cache_bytes),
      late_(call.late_before_count) {
  result_.timings.allocation_ms = allocation_clock_.lap();
  if (clear == Clear::by_labeler) return;
  ranking_.clear();
  end_step(&StepTimings::relabel_ms);
}

void DeviceLabeling::rank() {
  ranking_.scan();
  end_step(&StepTimings::relabel_ms);
}

std::uint32_t DeviceLabeling::wait_for_count() {
  VOLCCL_CUDA_CHECK(cudaStreamSynchronize(stream_));
  return ranking_.count();
}

void DeviceLabeling::mark_ranked() {
  if (!ranked_) ranked_.emplace();
  VOLCCL_CUDA_CHECK(cudaEventRecord(ranked_->get(), stream_));
}

std::uint32_t DeviceLabeling::count_when_ranked() {
  VOLCCL_CUDA_CHECK(cudaEventSynchronize(ranked_->get()));
  return ranking_.count();
}

LabelResult DeviceLabeling::finish() {
  if (late_ != nullptr && late_->wanted()) {
    late_->enqueue(ranking_.count_on_device());
    end_step(&StepTimings::statistics_ms);
  }
  ranking_.release();
  events_.resolve();
  result_.component_count = ranking_.count();
  result_.timings.total_ms = whole_call_.lap();
  return result_;
}

}  // namespace detail
}  // namespace volccl
