// The CUDA runtime side of volccl: device discovery, errors, the memory pool, step events, and
// the entry points volccl::cuda::label and the host-memory path of volccl::label.
#include <cuda_runtime.h>

#include <cstdint>
#include <limits>
#include <mutex>
#include <sstream>
#include <string>
#include <unordered_map>
#include <utility>

#include "backends.h"
#include "cuda_backends.h"
#include "cuda_support.cuh"
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
  // its creation (a fifth of a second on an H100).
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
    return DeviceTraits{major >= 9, static_cast<std::size_t>(l2_bytes),
                        std::uint64_t{static_cast<std::uint32_t>(sms)} *
                            static_cast<std::uint32_t>(threads_per_sm)};
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

// The Late pass that label_on_device wants the labeling it calls to enqueue before that
// labeling's wait: a labeling runs on its caller's thread and makes one DeviceLabeling, which
// takes it at construction (LateScope).
thread_local LateBeforeCount* late_of_next_labeling = nullptr;

class LateScope {
 public:
  explicit LateScope(LateBeforeCount* late) { late_of_next_labeling = late; }
  ~LateScope() { late_of_next_labeling = nullptr; }
  LateScope(const LateScope&) = delete;
  LateScope& operator=(const LateScope&) = delete;
};

LabelResult started_result(const LabelOptions& options) {
  LabelResult result;
  result.backend_used = Backend::cuda;
  result.algorithm_used = options.algorithm;
  return result;
}

}  // namespace

DeviceLabeling::DeviceLabeling(Extent3 extent, const LabelOptions& options, cudaStream_t stream,
                               std::uint64_t keys, Scratch scratch, Clear clear)
    : stream_(stream),
      result_(started_result(options)),
      events_(stream, options.step_timings),
      ranking_(keys != 0 ? keys : extent.voxel_count(), stream, scratch.bytes),
      evict_labels_first_(extent.voxel_count() * sizeof(std::uint32_t) >
                          device_traits().l2_cache_bytes),
      late_(std::exchange(late_of_next_labeling, nullptr)) {
  result_.timings.allocation_ms = allocation_clock_.lap();
  if (clear == Clear::by_labeler) return;
  ranking_.clear();
  end_step(&StepTimings::relabel_ms);
}

void DeviceLabeling::rank() {
  ranking_.scan();
  end_step(&StepTimings::relabel_ms);
}

DeviceLabeling::~DeviceLabeling() {
  if (ranked_ != nullptr) cudaEventDestroy(ranked_);
}

std::uint32_t DeviceLabeling::wait_for_count() {
  VOLCCL_CUDA_CHECK(cudaStreamSynchronize(stream_));
  return ranking_.count();
}

void DeviceLabeling::measure_runs(const RufRuns& runs) {
  if (late_ != nullptr && late_->wanted()) late_->use_runs(runs);
}

void DeviceLabeling::mark_ranked() {
  if (ranked_ == nullptr) {
    VOLCCL_CUDA_CHECK(cudaEventCreateWithFlags(&ranked_, cudaEventDisableTiming));
  }
  VOLCCL_CUDA_CHECK(cudaEventRecord(ranked_, stream_));
}

std::uint32_t DeviceLabeling::count_when_ranked() {
  VOLCCL_CUDA_CHECK(cudaEventSynchronize(ranked_));
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

namespace {

LabelResult label_with_algorithm(const std::uint8_t* device_mask, Extent3 extent,
                                 std::uint32_t* device_labels, const LabelOptions& options,
                                 void* stream, cuda::DeviceMoments* moments) {
  const bool image = is_2d_connectivity(options.connectivity);
  switch (options.algorithm) {
    case Algorithm::uf:
      return image ? label_uf_ke_2d_cuda(device_mask, extent, device_labels, options, stream)
                   : label_uf_3d_cuda(device_mask, extent, device_labels, options, stream);
    case Algorithm::ufb:
      return label_ufb_3d_cuda(device_mask, extent, device_labels, options, stream);
    case Algorithm::ruf:
      return label_ruf_3d_cuda(device_mask, extent, device_labels, options, stream, moments);
    case Algorithm::ke:
      return label_uf_ke_2d_cuda(device_mask, extent, device_labels, options, stream);
    case Algorithm::ha4:
    case Algorithm::ha4_64:
      return label_ha4_2d_cuda(device_mask, extent, device_labels, options, stream);
    case Algorithm::le:
      return label_le_2d_cuda(device_mask, extent, device_labels, options, stream, moments);
    case Algorithm::tm:
      return label_tm_2d_cuda(device_mask, extent, device_labels, options, stream, moments);
    default:
      return image ? label_buf_bke_2d_cuda(device_mask, extent, device_labels, options, stream,
                                           moments)
                   : label_buf_bke_3d_cuda(device_mask, extent, device_labels, options, stream,
                                           moments);
  }
}

// BUF, BUF-IC, BKE and BKE-IC in 3D.
bool measures_from_forest(const LabelOptions& options) {
  switch (options.algorithm) {
    case Algorithm::buf:
    case Algorithm::buf_ic:
    case Algorithm::bke:
    case Algorithm::bke_ic:
      return !is_2d_connectivity(options.connectivity);
    default:
      return false;
  }
}

}  // namespace

LabelResult label_on_device(const std::uint8_t* device_mask, Extent3 extent,
                            std::uint32_t* device_labels, const LabelOptions& options, void* stream,
                            cuda::DeviceMoments* moments) {
  const bool late = moments != nullptr && options.statistics_strategy == StatisticsStrategy::late;
  if (!late) {
    return label_with_algorithm(device_mask, extent, device_labels, options, stream, moments);
  }
  LateBeforeCount before_count(device_labels, device_mask, extent, stream);
  // RUF measures from its runs (kernels3d/ruf_statistics_3d.cu): through before_count where it
  // runs, else itself once it knows the count; so do the 3D block labelers, from their forest or
  // after their final labeling (kernels3d/buf_bke_3d.cu).
  if ((options.algorithm == Algorithm::ruf || measures_from_forest(options)) &&
      !before_count.wanted()) {
    return label_with_algorithm(device_mask, extent, device_labels, options, stream, moments);
  }
  LabelResult result;
  {
    const LateScope scope(&before_count);
    result = label_with_algorithm(device_mask, extent, device_labels, options, stream, nullptr);
  }
  if (before_count.done(result.component_count)) {
    *moments = before_count.finish(result.component_count);
    return result;
  }
  // The table's size is the component count, known only now.
  StepClock clock;
  const auto cuda_stream = static_cast<cudaStream_t>(stream);
  StepEvents events(cuda_stream, options.step_timings);
  *moments = before_count.finish(result.component_count);
  double statistics_ms = 0;
  events.end_step(&statistics_ms);
  events.resolve();
  const double elapsed_ms = clock.lap();
  result.timings.statistics_ms += options.step_timings ? statistics_ms : elapsed_ms;
  result.timings.total_ms += elapsed_ms;
  return result;
}

LabelResult label_cuda_from_host(const std::uint8_t* mask, Extent3 extent, std::uint32_t* labels,
                                 const LabelOptions& options,
                                 std::vector<ComponentMoments>* statistics) {
  StepClock whole_call;
  const cudaStream_t stream = cudaStreamPerThread;
  const std::uint64_t voxels = extent.voxel_count();

  StepClock allocation_clock;
  DeviceBuffer<std::uint8_t> device_mask(voxels, stream, "the input mask");
  DeviceBuffer<std::uint32_t> device_labels(voxels, stream, "the label image");
  const double allocation_ms = allocation_clock.lap();

  double upload_ms = 0;
  {
    StepEvents upload(stream, true);
    VOLCCL_CUDA_CHECK(cudaMemcpyAsync(device_mask.data(), mask, device_mask.bytes(),
                                      cudaMemcpyHostToDevice, stream));
    upload.end_step(&upload_ms);
    upload.resolve();
  }

  cuda::DeviceMoments moments;
  LabelResult result = label_on_device(device_mask.data(), extent, device_labels.data(), options,
                                       stream, statistics != nullptr ? &moments : nullptr);

  StepEvents download(stream, true);
  VOLCCL_CUDA_CHECK(cudaMemcpyAsync(labels, device_labels.data(), device_labels.bytes(),
                                    cudaMemcpyDeviceToHost, stream));
  if (statistics != nullptr) {
    statistics->resize(moments.size());
    VOLCCL_CUDA_CHECK(cudaMemcpyAsync(statistics->data(), moments.data(),
                                      moments.size() * sizeof(ComponentMoments),
                                      cudaMemcpyDeviceToHost, stream));
  }
  download.end_step(&result.timings.download_ms);
  download.resolve();

  result.timings.allocation_ms += allocation_ms;
  result.timings.upload_ms = upload_ms;
  result.timings.total_ms = whole_call.lap();
  return result;
}

}  // namespace detail

namespace cuda {

namespace {

LabelOptions checked_device_request(const std::uint8_t* device_mask, Extent3 extent,
                                    const std::uint32_t* device_labels,
                                    const LabelOptions& requested) {
  validate(extent, requested);
  if (!cuda_available()) {
    throw NoCudaDevice("volccl::cuda::label: " + cuda_device_description());
  }
  if (device_mask == nullptr || device_labels == nullptr) {
    throw InvalidArgument("volccl::cuda::label: null mask or label pointer for a volume of " +
                          extent.to_string());
  }
  detail::require_device_alignment(device_mask, "volccl::cuda::label: the mask pointer");
  detail::require_device_alignment(device_labels, "volccl::cuda::label: the label pointer");
  return detail::resolve_algorithm(requested, Backend::cuda);
}

}  // namespace

LabelResult label(const std::uint8_t* device_mask, Extent3 extent, std::uint32_t* device_labels,
                  const LabelOptions& requested, void* stream) {
  const LabelOptions options =
      checked_device_request(device_mask, extent, device_labels, requested);
  return detail::label_on_device(device_mask, extent, device_labels, options, stream, nullptr);
}

LabelResult label(const std::uint8_t* device_mask, Extent3 extent, std::uint32_t* device_labels,
                  DeviceMoments& statistics, const LabelOptions& requested, void* stream) {
  const LabelOptions options =
      checked_device_request(device_mask, extent, device_labels, requested);
  detail::validate_measuring(extent, options);
  return detail::label_on_device(device_mask, extent, device_labels, options, stream, &statistics);
}

}  // namespace cuda
}  // namespace volccl
