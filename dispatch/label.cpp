// volccl::label: checks the request, picks the backend and calls it.
#include <algorithm>
#include <string>
#include <vector>

#include "dispatch/algorithm_registry.h"
#include "dispatch/dispatch.h"
#include "volccl/detail/step_clock.h"
#include "volccl/volccl.h"

namespace volccl {
namespace {

// Why supports(algorithm, connectivity) is false, and what takes the connectivity instead, for
// the error message.
std::string unsupported_reason(Algorithm algorithm, int connectivity) {
  std::string alternatives;
  for (const detail::AlgorithmEntry& entry : detail::algorithm_registry()) {
    if (!entry.connectivities.contains(connectivity)) continue;
    alternatives += std::string(entry.name) + ", ";
  }
  return std::string(detail::registry_entry(algorithm).limitation) + "; use " + alternatives +
         "or auto for " + std::to_string(connectivity);
}

}  // namespace

void validate(Extent3 extent, const LabelOptions& options) {
  if (extent.x == 0 || extent.y == 0 || extent.z == 0) {
    throw InvalidArgument("volccl: cannot label an empty volume of " + extent.to_string() +
                          " voxels; every dimension must be at least 1");
  }
  // Checked one factor at a time, so that no product wraps around.
  const std::uint64_t side = max_slab_voxel_count;
  const bool too_long = extent.x > side || extent.y > side || extent.z > side;
  const bool slice_too_large = !too_long && extent.z > 1 && extent.x * extent.y > side;
  const bool too_many =
      !too_long && !slice_too_large && extent.x * extent.y > max_voxel_count / extent.z;
  if (too_long || too_many) {
    throw InvalidArgument("volccl: a volume of " + extent.to_string() +
                          " voxels is too large: at most " + std::to_string(max_voxel_count) +
                          " voxels (2^40), and " + std::to_string(side) + " along each side");
  }
  if (slice_too_large) {
    throw InvalidArgument("volccl: a volume of " + extent.to_string() +
                          " voxels has slices of more than " + std::to_string(side) +
                          " voxels (2^32 - 2), the most one slab of slices can hold");
  }
  const int connectivity = options.connectivity;
  if (is_2d_connectivity(connectivity)) {
    if (extent.z != 1) {
      throw InvalidArgument("volccl: " + std::to_string(connectivity) +
                            "-connectivity labels 2D images, but " + extent.to_string() +
                            " is a volume of " + std::to_string(extent.z) +
                            " slices; use 6, 18 or 26");
    }
  } else if (connectivity != 6 && connectivity != 18 && connectivity != 26) {
    throw InvalidArgument("volccl: connectivity " + std::to_string(connectivity) +
                          " does not exist; use 4 or 8 for 2D images, 6, 18 or 26 for volumes");
  }
  if (!supports(options.algorithm, connectivity)) {
    throw InvalidArgument("volccl: " + to_string(options.algorithm) + " cannot label with " +
                          std::to_string(connectivity) +
                          "-connectivity: " + unsupported_reason(options.algorithm, connectivity));
  }
}

namespace detail {

LabelOptions resolve_algorithm(const LabelOptions& options, Backend backend, bool label_map) {
  LabelOptions resolved = options;
  if (options.algorithm == Algorithm::automatic) {
    resolved.algorithm = automatic_choice(options.connectivity, backend, label_map);
  }
  if (!runs_on(resolved.algorithm, backend)) {
    throw InvalidArgument("volccl: " + to_string(resolved.algorithm) +
                          " runs on the CPU only; ask for the CPU backend or another algorithm");
  }
  return resolved;
}

void validate_input(const LabelInput& input, const LabelOptions& options, const char* caller) {
  if (input.label_map && !supports_label_maps(options.algorithm)) {
    std::string takers;
    for (const AlgorithmEntry& entry : algorithm_registry()) {
      if (entry.inputs.contains(static_cast<int>(InputKind::label_map))) {
        takers += std::string(entry.name) + ", ";
      }
    }
    throw InvalidArgument(std::string(caller) + ": " + to_string(options.algorithm) +
                          " labels binary masks only; use " + takers + "or auto for a label map");
  }
  if (!input.label_map && input.type != ValueType::uint8) {
    throw InvalidArgument(std::string(caller) + ": a binary mask holds uint8 voxels, not " +
                          to_string(input.type));
  }
  if (input.label_map &&
      static_cast<unsigned>(input.type) > static_cast<unsigned>(ValueType::int64)) {
    throw InvalidArgument(std::string(caller) + ": unknown value type " +
                          std::to_string(static_cast<int>(input.type)));
  }
}

void validate_measuring(Extent3 extent, const LabelOptions& options) {
  validate_statistics(extent);
  if (!supports(options.statistics_strategy, options.algorithm)) {
    std::string takers;
    for (const AlgorithmEntry& entry : algorithm_registry()) {
      if (entry.statistics_strategies.contains(static_cast<int>(options.statistics_strategy))) {
        takers += std::string(takers.empty() ? "" : ", ") + entry.name;
      }
    }
    throw InvalidArgument("volccl: the " + to_string(options.statistics_strategy) +
                          " statistics strategy exists for " + takers + ", not " +
                          to_string(options.algorithm) + "; late works with every algorithm");
  }
}

LabelResult label_on_cpu(const HostLabelCall& call) {
  const HostLabeler labeler =
      registry_entry(call.options.algorithm).labelers(call.options.connectivity).cpu;
  return labeler(call);
}

}  // namespace detail

namespace {

// Checks the request and returns it resolved, with the backend it runs on.
LabelOptions checked_request(const LabelInput& input, Extent3 extent, const void* labels,
                             const LabelOptions& requested) {
  validate(extent, requested);
  if (input.data == nullptr || labels == nullptr) {
    throw InvalidArgument(std::string("volccl::label: null ") +
                          (input.label_map ? "label map" : "mask") +
                          " or label pointer for a volume of " + extent.to_string());
  }
  detail::validate_input(input, requested, "volccl::label");
  const bool use_cuda = requested.backend == Backend::cuda ||
                        (requested.backend == Backend::automatic &&
                         runs_on(requested.algorithm, Backend::cuda) && cuda_available());
  if (use_cuda && !cuda_available()) {
    throw NoCudaDevice("volccl: the CUDA backend was requested but " + cuda_device_description());
  }
  LabelOptions options = detail::resolve_algorithm(
      requested, use_cuda ? Backend::cuda : Backend::cpu, input.label_map);
  options.backend = use_cuda ? Backend::cuda : Backend::cpu;
  return options;
}

// The host call of `input`: a mask through `mask`, a label map through `input`.
detail::HostLabelCall host_call(const LabelInput& input, Extent3 extent, std::uint32_t* labels,
                                const LabelOptions& options,
                                std::vector<ComponentMoments>* statistics) {
  const auto* mask = input.label_map ? nullptr : static_cast<const std::uint8_t*>(input.data);
  return {mask, extent, labels, options, statistics, input};
}

}  // namespace

namespace detail {

LabelResult label_whole_on_cpu(const LabelInput& input, Extent3 extent, std::uint32_t* labels,
                               const LabelOptions& options,
                               std::vector<ComponentMoments>* statistics) {
  if (statistics == nullptr) {
    return label_on_cpu(host_call(input, extent, labels, options, nullptr));
  }
  // LE and TM gather the Early statistics while they label, on the CPU too, and RTS the Late
  // ones from its runs as it writes the labels (the registry says which); every other case is
  // measured after labeling.
  const Labelers& labelers = registry_entry(options.algorithm).labelers(options.connectivity);
  const bool gathered =
      (options.statistics_strategy == StatisticsStrategy::early && labelers.cpu_gathers_early) ||
      (options.statistics_strategy == StatisticsStrategy::late && labelers.cpu_gathers_late);
  LabelResult result =
      label_on_cpu(host_call(input, extent, labels, options, gathered ? statistics : nullptr));
  if (gathered) {
    // Timed within the final labeling, where the moments are summed.
    return result;
  }
  StepClock clock;
  *statistics = measure(labels, extent, static_cast<std::uint32_t>(result.component_count),
                        options.cpu_threads);
  result.timings.statistics_ms = clock.lap();
  result.timings.total_ms += result.timings.statistics_ms;
  return result;
}

}  // namespace detail

namespace detail {

std::uint64_t slab_voxel_limit(const LabelOptions& options) {
  return options.slab_voxels == 0 ? max_slab_voxel_count
                                  : std::min(options.slab_voxels, max_slab_voxel_count);
}

}  // namespace detail

namespace {

template <class Label>
LabelResult label_on_host(const LabelInput& input, Extent3 extent, Label* labels,
                          std::vector<ComponentMoments>* statistics,
                          const LabelOptions& requested) {
  const LabelOptions options = checked_request(input, extent, labels, requested);
  if (statistics != nullptr) detail::validate_measuring(extent, options);
#if defined(VOLCCL_HAS_CUDA)
  if (options.backend == Backend::cuda) {
    return detail::label_cuda_from_host(input, extent, labels, options, statistics,
                                        requested.algorithm == Algorithm::automatic);
  }
#endif
  if constexpr (sizeof(Label) == 4) {
    if (extent.voxel_count() <= detail::slab_voxel_limit(options)) {
      return detail::label_whole_on_cpu(input, extent, labels, options, statistics);
    }
  }
  return detail::label_slabs_on_cpu(input, extent, labels, options, statistics);
}

}  // namespace

LabelResult label(const LabelInput& input, Extent3 extent, std::uint32_t* labels,
                  const LabelOptions& options) {
  return label_on_host(input, extent, labels, nullptr, options);
}

LabelResult label(const LabelInput& input, Extent3 extent, std::uint32_t* labels,
                  std::vector<ComponentMoments>& statistics, const LabelOptions& options) {
  return label_on_host(input, extent, labels, &statistics, options);
}

LabelResult label(const LabelInput& input, Extent3 extent, std::uint64_t* labels,
                  const LabelOptions& options) {
  return label_on_host(input, extent, labels, nullptr, options);
}

LabelResult label(const LabelInput& input, Extent3 extent, std::uint64_t* labels,
                  std::vector<ComponentMoments>& statistics, const LabelOptions& options) {
  return label_on_host(input, extent, labels, &statistics, options);
}

LabelResult label(const std::uint8_t* mask, Extent3 extent, std::uint32_t* labels,
                  const LabelOptions& options) {
  return label(LabelInput::binary(mask), extent, labels, options);
}

LabelResult label(const std::uint8_t* mask, Extent3 extent, std::uint32_t* labels,
                  std::vector<ComponentMoments>& statistics, const LabelOptions& options) {
  return label(LabelInput::binary(mask), extent, labels, statistics, options);
}

LabelResult label(const std::uint8_t* mask, Extent3 extent, std::uint64_t* labels,
                  const LabelOptions& options) {
  return label(LabelInput::binary(mask), extent, labels, options);
}

LabelResult label(const std::uint8_t* mask, Extent3 extent, std::uint64_t* labels,
                  std::vector<ComponentMoments>& statistics, const LabelOptions& options) {
  return label(LabelInput::binary(mask), extent, labels, statistics, options);
}

#if !defined(VOLCCL_HAS_CUDA)
bool cuda_available() { return false; }
std::string cuda_device_description() {
  return "no CUDA device: this build of volccl has no CUDA support (VOLCCL_CUDA=OFF)";
}
#endif

}  // namespace volccl
