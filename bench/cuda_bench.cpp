// CUDA runtime side of `volccl bench`. A host-compiler translation unit: it includes
// <cuda_runtime.h> and volccl/cuda.h, never a kernel.
#include "cuda_bench.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <iostream>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "volccl/cuda.h"
#include "volccl/error.h"

namespace volccl::bench {
namespace {

std::string describe(cudaError_t status) {
  return std::string(cudaGetErrorName(status)) + " (" + cudaGetErrorString(status) + ")";
}

void check_cuda(cudaError_t status, const char* call) {
  if (status != cudaSuccess) {
    throw CudaError(std::string(call) + " failed: " + describe(status));
  }
}

// check_cuda for an allocation of `bytes`, which an out-of-memory message names.
void check_allocation(cudaError_t status, const char* call, std::uint64_t bytes) {
  if (status == cudaErrorMemoryAllocation) {
    throw OutOfDeviceMemory(
        std::string(call) + " failed for " + std::to_string(bytes) + " bytes: " + describe(status),
        bytes);
  }
  check_cuda(status, call);
}

// Destructors cannot throw: a failure there is reported and otherwise ignored.
void report_cuda(cudaError_t status, const char* call) {
  if (status != cudaSuccess) {
    std::cerr << "volccl bench: " << call << " failed: " << describe(status) << '\n';
  }
}

#define VOLCCL_BENCH_CUDA(call) check_cuda((call), #call)
#define VOLCCL_BENCH_ALLOC(call, bytes) check_allocation((call), #call, (bytes))
#define VOLCCL_BENCH_REPORT(call) report_cuda((call), #call)

// cudaMalloc'ed memory, freed when it goes out of scope.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::uint64_t bytes) {
    VOLCCL_BENCH_ALLOC(cudaMalloc(&pointer_, bytes), bytes);
  }
  ~DeviceBuffer() { VOLCCL_BENCH_REPORT(cudaFree(pointer_)); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  template <typename T>
  T* as() const {
    return static_cast<T*>(pointer_);
  }

 private:
  void* pointer_ = nullptr;
};

LabelOptions cuda_options(Algorithm algorithm, int connectivity, bool step_timings) {
  LabelOptions options;
  options.algorithm = algorithm;
  options.connectivity = connectivity;
  options.backend = Backend::cuda;
  options.step_timings = step_timings;
  return options;
}

}  // namespace

struct CudaBench::State {
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr;
  cudaEvent_t stop = nullptr;
  std::optional<DeviceBuffer> mask;
  Extent3 extent;

  ~State() {
    mask.reset();
    if (stop != nullptr) VOLCCL_BENCH_REPORT(cudaEventDestroy(stop));
    if (start != nullptr) VOLCCL_BENCH_REPORT(cudaEventDestroy(start));
    if (stream != nullptr) VOLCCL_BENCH_REPORT(cudaStreamDestroy(stream));
  }

  // Milliseconds between `start` and `stop`, waiting for `stop`.
  double elapsed_ms() const {
    VOLCCL_BENCH_CUDA(cudaEventSynchronize(stop));
    float ms = 0;
    VOLCCL_BENCH_CUDA(cudaEventElapsedTime(&ms, start, stop));
    return ms;
  }
};

CudaBench::CudaBench() : state_(std::make_unique<State>()) {
  int device_count = 0;
  VOLCCL_BENCH_CUDA(cudaGetDeviceCount(&device_count));
  if (device_count == 0) throw CudaError("no CUDA device found");
  // The output comes from the device's default pool; keep what it frees, as CuPy's memory pool
  // does, so that both sides of the comparison pay the same for allocating their labels.
  int device = 0;
  VOLCCL_BENCH_CUDA(cudaGetDevice(&device));
  cudaMemPool_t pool = nullptr;
  VOLCCL_BENCH_CUDA(cudaDeviceGetDefaultMemPool(&pool, device));
  std::uint64_t keep_everything = std::numeric_limits<std::uint64_t>::max();
  VOLCCL_BENCH_CUDA(
      cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep_everything));
  VOLCCL_BENCH_CUDA(cudaStreamCreateWithFlags(&state_->stream, cudaStreamNonBlocking));
  VOLCCL_BENCH_CUDA(cudaEventCreate(&state_->start));
  VOLCCL_BENCH_CUDA(cudaEventCreate(&state_->stop));
}

CudaBench::~CudaBench() = default;

std::string CudaBench::device_description() const {
  int device = 0;
  VOLCCL_BENCH_CUDA(cudaGetDevice(&device));
  cudaDeviceProp properties{};
  VOLCCL_BENCH_CUDA(cudaGetDeviceProperties(&properties, device));
  int driver = 0;
  int runtime = 0;
  VOLCCL_BENCH_CUDA(cudaDriverGetVersion(&driver));
  VOLCCL_BENCH_CUDA(cudaRuntimeGetVersion(&runtime));
  std::ostringstream text;
  text << properties.name << " (sm_" << properties.major << properties.minor << ", "
       << properties.totalGlobalMem / (1ull << 20) << " MiB, driver " << driver / 1000 << '.'
       << driver % 1000 / 10 << ", runtime " << runtime / 1000 << '.' << runtime % 1000 / 10 << ')';
  return text.str();
}

CopyRuns CudaBench::time_copies(std::uint64_t bytes, int runs) {
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
  VOLCCL_BENCH_CUDA(cudaMemGetInfo(&free_bytes, &total_bytes));
  CopyRuns copies;
  copies.bytes = std::min<std::uint64_t>(bytes, free_bytes / 4);
  const DeviceBuffer source(copies.bytes);
  const DeviceBuffer target(copies.bytes);
  VOLCCL_BENCH_CUDA(cudaMemsetAsync(source.as<void>(), 1, copies.bytes, state_->stream));
  // The first copies touch the target pages for the first time: not timed.
  for (int run = -2; run < runs; ++run) {
    VOLCCL_BENCH_CUDA(cudaEventRecord(state_->start, state_->stream));
    VOLCCL_BENCH_CUDA(cudaMemcpyAsync(target.as<void>(), source.as<void>(), copies.bytes,
                                      cudaMemcpyDeviceToDevice, state_->stream));
    VOLCCL_BENCH_CUDA(cudaEventRecord(state_->stop, state_->stream));
    const double ms = state_->elapsed_ms();
    if (run >= 0) copies.ms.push_back(ms);
  }
  return copies;
}

void CudaBench::set_volume(const std::uint8_t* mask, Extent3 extent) {
  state_->mask.reset();
  state_->mask.emplace(extent.voxel_count());
  state_->extent = extent;
  VOLCCL_BENCH_CUDA(
      cudaMemcpy(state_->mask->as<void>(), mask, extent.voxel_count(), cudaMemcpyHostToDevice));
}

std::optional<TransferRuns> CudaBench::time_transfers(const std::uint8_t* mask, int runs) {
  const std::uint64_t voxels = state_->extent.voxel_count();
  const std::uint64_t label_bytes = voxels * sizeof(std::uint32_t);
  const DeviceBuffer mask_copy(voxels);
  const DeviceBuffer labels(label_bytes);
  VOLCCL_BENCH_CUDA(cudaMemsetAsync(labels.as<void>(), 0, label_bytes, state_->stream));
  std::vector<std::uint32_t> host_labels(voxels);
  TransferRuns transfers;
  for (int run = -1; run < runs; ++run) {
    VOLCCL_BENCH_CUDA(cudaEventRecord(state_->start, state_->stream));
    VOLCCL_BENCH_CUDA(cudaMemcpyAsync(mask_copy.as<void>(), mask, voxels, cudaMemcpyHostToDevice,
                                      state_->stream));
    VOLCCL_BENCH_CUDA(cudaEventRecord(state_->stop, state_->stream));
    const double upload_ms = state_->elapsed_ms();
    VOLCCL_BENCH_CUDA(cudaEventRecord(state_->start, state_->stream));
    VOLCCL_BENCH_CUDA(cudaMemcpyAsync(host_labels.data(), labels.as<void>(), label_bytes,
                                      cudaMemcpyDeviceToHost, state_->stream));
    VOLCCL_BENCH_CUDA(cudaEventRecord(state_->stop, state_->stream));
    const double download_ms = state_->elapsed_ms();
    if (run >= 0) {
      transfers.upload_ms.push_back(upload_ms);
      transfers.download_ms.push_back(download_ms);
    }
  }
  return transfers;
}

LabelResult CudaBench::label_once(Algorithm algorithm, int connectivity,
                                  std::vector<std::uint32_t>& labels) {
  const std::uint64_t voxels = state_->extent.voxel_count();
  const std::uint64_t bytes = voxels * sizeof(std::uint32_t);
  const DeviceBuffer device_labels(bytes);
  VOLCCL_BENCH_CUDA(cudaMemsetAsync(device_labels.as<void>(), 0xFF, bytes, state_->stream));
  const LabelResult result = cuda::label(
      state_->mask->as<std::uint8_t>(), state_->extent, device_labels.as<std::uint32_t>(),
      cuda_options(algorithm, connectivity, false), state_->stream);
  labels.resize(voxels);
  VOLCCL_BENCH_CUDA(cudaMemcpyAsync(labels.data(), device_labels.as<void>(), bytes,
                                    cudaMemcpyDeviceToHost, state_->stream));
  VOLCCL_BENCH_CUDA(cudaStreamSynchronize(state_->stream));
  return result;
}

LabelResult CudaBench::measure_once(Algorithm algorithm, int connectivity,
                                    StatisticsStrategy strategy,
                                    std::vector<ComponentMoments>& moments) {
  const std::uint64_t bytes = state_->extent.voxel_count() * sizeof(std::uint32_t);
  const DeviceBuffer device_labels(bytes);
  LabelOptions options = cuda_options(algorithm, connectivity, false);
  options.statistics_strategy = strategy;
  cuda::DeviceMoments table;
  const LabelResult result =
      cuda::label(state_->mask->as<std::uint8_t>(), state_->extent,
                  device_labels.as<std::uint32_t>(), table, options, state_->stream);
  moments = table.to_host();
  return result;
}

TimedRuns CudaBench::time(Algorithm algorithm, int connectivity, int runs, int warmup,
                          bool step_timings, std::optional<StatisticsStrategy> statistics) {
  const std::uint64_t bytes = state_->extent.voxel_count() * sizeof(std::uint32_t);
  LabelOptions options = cuda_options(algorithm, connectivity, step_timings);
  if (statistics) options.statistics_strategy = *statistics;
  TimedRuns timed;
  for (int run = -warmup; run < runs; ++run) {
    VOLCCL_BENCH_CUDA(cudaEventRecord(state_->start, state_->stream));
    std::uint32_t* device_labels = nullptr;
    VOLCCL_BENCH_ALLOC(cudaMallocAsync(&device_labels, bytes, state_->stream), bytes);
    LabelResult result;
    try {
      if (statistics) {
        cuda::DeviceMoments table;  // freed on the stream before the stop event
        result = cuda::label(state_->mask->as<std::uint8_t>(), state_->extent, device_labels, table,
                             options, state_->stream);
      } else {
        result = cuda::label(state_->mask->as<std::uint8_t>(), state_->extent, device_labels,
                             options, state_->stream);
      }
    } catch (...) {
      VOLCCL_BENCH_REPORT(cudaFreeAsync(device_labels, state_->stream));
      throw;
    }
    VOLCCL_BENCH_CUDA(cudaFreeAsync(device_labels, state_->stream));
    VOLCCL_BENCH_CUDA(cudaEventRecord(state_->stop, state_->stream));
    const double ms = state_->elapsed_ms();
    if (run >= 0) {
      timed.ms.push_back(ms);
      timed.results.push_back(result);
    }
  }
  return timed;
}

}  // namespace volccl::bench
