// The CUDA entry points: volccl::cuda::label and cuda::measure on device memory, and the path of
// volccl::label through the device for host memory. The labeler comes from the registry.
#include <cuda_runtime.h>

#include <cstdint>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "dispatch/algorithm_registry.h"
#include "dispatch/dispatch.h"
#include "runtime/cuda_support.cuh"
#include "runtime/labeler.h"
#include "runtime/late_moments.h"
#include "runtime/one_value.cuh"
#include "runtime/pinned_staging.cuh"
#include "volccl/cuda.h"
#include "volccl/detail/step_clock.h"
#include "volccl/volccl.h"

namespace volccl {
namespace detail {
namespace {

// Labels of at least this many bytes are copied through pinned staging (and so the input).
constexpr std::size_t kStagedCopyBytes = std::size_t{64} << 20;

}  // namespace

namespace {

// The registry's labeler of options (resolved), handed the check `one_value` if not null; where
// that finds one value the labeler labels nothing, and neither does this.
LabelResult run_labeler(const LabelInput& device_input, Extent3 extent,
                        std::uint32_t* device_labels, const LabelOptions& options, void* stream,
                        cuda::DeviceMoments* moments, OneValueCheck* one_value) {
  const Labelers& labelers = registry_entry(options.algorithm).labelers(options.connectivity);
  const auto* device_mask =
      device_input.label_map ? nullptr : static_cast<const std::uint8_t*>(device_input.data);
  DeviceLabelCall call{device_mask, extent,  device_labels, options,  stream,
                       moments,     nullptr, device_input,  one_value};
  const bool late = moments != nullptr && options.statistics_strategy == StatisticsStrategy::late;
  if (!late) return labelers.cuda(call);
  LateBeforeCount before_count(device_labels, device_mask, extent, stream);
  // Labelers that measure from their own structures do so through before_count where it runs,
  // else by themselves once they know the count.
  if (labelers.cuda_gathers_late && !before_count.wanted()) return labelers.cuda(call);
  call.moments = nullptr;
  call.late_before_count = &before_count;
  LabelResult result = labelers.cuda(call);
  if (one_value != nullptr && one_value->holds_one_value()) return result;
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

}  // namespace

LabelResult label_on_device(const LabelInput& device_input, Extent3 extent,
                            std::uint32_t* device_labels, const LabelOptions& options, void* stream,
                            cuda::DeviceMoments* moments, bool automatic) {
  const bool may_check =
      automatic && device_input.label_map &&
      registry_entry(options.algorithm).labelers(options.connectivity).cuda_consults_one_value;
  if (!may_check) {
    return run_labeler(device_input, extent, device_labels, options, stream, moments, nullptr);
  }
  LabelOptions as_mask = options;
  as_mask.algorithm = automatic_choice(options.connectivity, Backend::cuda, false);
  if (moments != nullptr && !supports(options.statistics_strategy, as_mask.algorithm)) {
    return run_labeler(device_input, extent, device_labels, options, stream, moments, nullptr);
  }
  StepClock clock;
  OneValueCheck one_value(device_input, extent.voxel_count(), static_cast<cudaStream_t>(stream));
  try {
    LabelResult result =
        run_labeler(device_input, extent, device_labels, options, stream, moments, &one_value);
    if (!one_value.holds_one_value()) return result;
  } catch (const OutOfDeviceMemory&) {
    // The check's mask may have taken the room of the label map's labeler: freed where the map
    // holds several values.
    if (!one_value.holds_one_value()) {
      return run_labeler(device_input, extent, device_labels, options, stream, moments, nullptr);
    }
  }
  const std::uint8_t* mask = one_value.mask();
  if (mask == nullptr) {  // one value, but no room for its mask: labeled as a label map
    return run_labeler(device_input, extent, device_labels, options, stream, moments, nullptr);
  }
  const double checked_ms = clock.lap();
  LabelResult result = label_on_device(LabelInput::binary(mask), extent, device_labels, as_mask,
                                       stream, moments, false);
  result.timings.total_ms += checked_ms;
  return result;
}

LabelResult label_whole_through_device(const LabelInput& input, Extent3 extent,
                                       std::uint32_t* labels, const LabelOptions& options,
                                       std::vector<ComponentMoments>* statistics, bool automatic) {
  StepClock whole_call;
  const cudaStream_t stream = cudaStreamPerThread;
  const std::uint64_t voxels = extent.voxel_count();

  StepClock allocation_clock;
  DeviceBuffer<std::uint8_t> device_input(
      voxels * size_of(input.type), stream,
      input.label_map ? "the input label map" : "the input mask");
  DeviceBuffer<std::uint32_t> device_labels(voxels, stream, "the label image");
  const double allocation_ms = allocation_clock.lap();

  // Large copies go through pinned chunks, at several times the speed of pageable memory.
  std::optional<StagingLease> staging;
  if (device_labels.bytes() >= kStagedCopyBytes)
    staging.emplace(std::thread::hardware_concurrency());
  double upload_ms = 0;
  {
    StepEvents upload(stream, true);
    if (staging) {
      (*staging)->upload(device_input.data(), input.data, device_input.bytes(), stream);
    } else {
      VOLCCL_CUDA_CHECK(cudaMemcpyAsync(device_input.data(), input.data, device_input.bytes(),
                                        cudaMemcpyHostToDevice, stream));
    }
    upload.end_step(&upload_ms);
    upload.resolve();
  }

  cuda::DeviceMoments moments;
  LabelInput on_device = input;
  on_device.data = device_input.data();
  LabelResult result = label_on_device(on_device, extent, device_labels.data(), options, stream,
                                       statistics != nullptr ? &moments : nullptr, automatic);

  StepEvents download(stream, true);
  if (staging) {
    (*staging)->download(labels, device_labels.data(), device_labels.bytes(), stream);
  } else {
    VOLCCL_CUDA_CHECK(cudaMemcpyAsync(labels, device_labels.data(), device_labels.bytes(),
                                      cudaMemcpyDeviceToHost, stream));
  }
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

// Device memory holds the whole volume, labeled in one piece with 32-bit indices.
void require_in_core_extent(Extent3 extent, const char* caller) {
  if (extent.voxel_count() > max_slab_voxel_count) {
    throw InvalidArgument(std::string(caller) + ": a volume of " + extent.to_string() +
                          " voxels is larger than the " + std::to_string(max_slab_voxel_count) +
                          " (2^32 - 2) labeled at once on device memory; volccl::label() takes "
                          "it from host memory, in slabs");
  }
}

LabelOptions checked_device_request(const LabelInput& device_input, Extent3 extent,
                                    const std::uint32_t* device_labels,
                                    const LabelOptions& requested) {
  validate(extent, requested);
  require_in_core_extent(extent, "volccl::cuda::label");
  if (!cuda_available()) {
    throw NoCudaDevice("volccl::cuda::label: " + cuda_device_description());
  }
  const char* input_name = device_input.label_map ? "label map" : "mask";
  if (device_input.data == nullptr || device_labels == nullptr) {
    throw InvalidArgument(std::string("volccl::cuda::label: null ") + input_name +
                          " or label pointer for a volume of " + extent.to_string());
  }
  detail::validate_input(device_input, requested, "volccl::cuda::label");
  detail::require_device_alignment(
      device_input.data, std::string("volccl::cuda::label: the ") + input_name + " pointer");
  detail::require_device_alignment(device_labels, "volccl::cuda::label: the label pointer");
  return detail::resolve_algorithm(requested, Backend::cuda, device_input.label_map);
}

}  // namespace

LabelResult label(const LabelInput& device_input, Extent3 extent, std::uint32_t* device_labels,
                  const LabelOptions& requested, void* stream) {
  const LabelOptions options =
      checked_device_request(device_input, extent, device_labels, requested);
  return detail::label_on_device(device_input, extent, device_labels, options, stream, nullptr,
                                 requested.algorithm == Algorithm::automatic);
}

LabelResult label(const LabelInput& device_input, Extent3 extent, std::uint32_t* device_labels,
                  DeviceMoments& statistics, const LabelOptions& requested, void* stream) {
  const LabelOptions options =
      checked_device_request(device_input, extent, device_labels, requested);
  detail::validate_measuring(extent, options);
  return detail::label_on_device(device_input, extent, device_labels, options, stream, &statistics,
                                 requested.algorithm == Algorithm::automatic);
}

LabelResult label(const std::uint8_t* device_mask, Extent3 extent, std::uint32_t* device_labels,
                  const LabelOptions& options, void* stream) {
  return label(LabelInput::binary(device_mask), extent, device_labels, options, stream);
}

LabelResult label(const std::uint8_t* device_mask, Extent3 extent, std::uint32_t* device_labels,
                  DeviceMoments& statistics, const LabelOptions& options, void* stream) {
  return label(LabelInput::binary(device_mask), extent, device_labels, statistics, options, stream);
}

DeviceMoments measure(const std::uint32_t* device_labels, Extent3 extent,
                      std::uint32_t component_count, void* stream) {
  validate_statistics(extent);
  require_in_core_extent(extent, "volccl::cuda::measure");
  if (!cuda_available()) throw NoCudaDevice("volccl::cuda::measure: " + cuda_device_description());
  if (device_labels == nullptr) {
    throw InvalidArgument("volccl::cuda::measure: null label pointer for a volume of " +
                          extent.to_string());
  }
  detail::require_device_alignment(device_labels, "volccl::cuda::measure: the label pointer");
  const auto cuda_stream = static_cast<cudaStream_t>(stream);
  detail::DeviceBuffer<std::uint32_t> unknown(1, cuda_stream, "a word");
  VOLCCL_CUDA_CHECK(cudaMemsetAsync(unknown.data(), 0, sizeof(std::uint32_t), cuda_stream));
  DeviceMoments table =
      detail::late_moments(device_labels, nullptr, extent, component_count, unknown.data(), stream);
  std::uint32_t largest_unknown = 0;
  VOLCCL_CUDA_CHECK(cudaMemcpyAsync(&largest_unknown, unknown.data(), sizeof largest_unknown,
                                    cudaMemcpyDeviceToHost, cuda_stream));
  VOLCCL_CUDA_CHECK(cudaStreamSynchronize(cuda_stream));
  if (largest_unknown != 0) {
    throw InvalidArgument("volccl::cuda::measure: the label image holds label " +
                          std::to_string(largest_unknown) + " but the component count is " +
                          std::to_string(component_count));
  }
  return table;
}

}  // namespace cuda
}  // namespace volccl
