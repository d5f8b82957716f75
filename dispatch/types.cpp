#include "volccl/types.h"

#include <sstream>

#include "dispatch/algorithm_registry.h"
#include "volccl/error.h"

namespace volccl {

std::string Extent3::to_string() const {
  std::ostringstream text;
  text << x << 'x' << y << 'x' << z;
  return text.str();
}

bool operator==(const Extent3& a, const Extent3& b) {
  return a.x == b.x && a.y == b.y && a.z == b.z;
}

std::string to_string(Algorithm algorithm) {
  if (algorithm == Algorithm::automatic) return "auto";
  return detail::registry_entry(algorithm).name;
}

std::string to_string(Backend backend) {
  switch (backend) {
    case Backend::automatic:
      return "auto";
    case Backend::cuda:
      return "cuda";
    case Backend::cpu:
      return "cpu";
  }
  throw InvalidArgument("unknown volccl::Backend value " +
                        std::to_string(static_cast<int>(backend)));
}

std::string to_string(SlabResidency residency) {
  switch (residency) {
    case SlabResidency::none:
      return "none";
    case SlabResidency::input:
      return "input";
    case SlabResidency::labels:
      return "labels";
  }
  throw InvalidArgument("unknown volccl::SlabResidency value " +
                        std::to_string(static_cast<int>(residency)));
}

const std::vector<Algorithm>& all_algorithms() {
  static const std::vector<Algorithm> algorithms = [] {
    std::vector<Algorithm> list;
    for (const detail::AlgorithmEntry& entry : detail::algorithm_registry()) {
      list.push_back(entry.algorithm);
    }
    return list;
  }();
  return algorithms;
}

namespace {

// What `automatic` takes: every connectivity that exists.
constexpr detail::SmallSet kEveryConnectivity{4, 6, 8, 18, 26};

const detail::SmallSet& connectivities_of(Algorithm algorithm) {
  return algorithm == Algorithm::automatic ? kEveryConnectivity
                                           : detail::registry_entry(algorithm).connectivities;
}

}  // namespace

bool supports(Algorithm algorithm, int connectivity) {
  return connectivities_of(algorithm).contains(connectivity);
}

bool runs_on(Algorithm algorithm, Backend backend) {
  return algorithm == Algorithm::automatic || backend != Backend::cuda ||
         !detail::registry_entry(algorithm).cpu_only;
}

std::vector<int> connectivities(Algorithm algorithm) {
  return connectivities_of(algorithm).members();
}

std::string summary(Algorithm algorithm) {
  if (algorithm == Algorithm::automatic) {
    return "the fastest measured for the connectivity and the device";
  }
  return detail::registry_entry(algorithm).summary;
}

bool supports_label_maps(Algorithm algorithm) {
  return algorithm == Algorithm::automatic || detail::registry_entry(algorithm).inputs.contains(
                                                  static_cast<int>(detail::InputKind::label_map));
}

Algorithm automatic_choice(int connectivity, Backend backend, bool label_map) {
  if (backend == Backend::automatic) {
    throw InvalidArgument("volccl::automatic_choice: the backend must be cuda or cpu");
  }
  for (const detail::AlgorithmEntry& entry : detail::algorithm_registry()) {
    const bool cuda = backend == Backend::cuda;
    const detail::SmallSet& chosen =
        label_map ? (cuda ? entry.automatic_label_maps_on_cuda : entry.automatic_label_maps_on_cpu)
                  : (cuda ? entry.automatic_on_cuda : entry.automatic_on_cpu);
    if (chosen.contains(connectivity)) return entry.algorithm;
  }
  throw InvalidArgument("volccl: connectivity " + std::to_string(connectivity) +
                        " does not exist; use 4 or 8 for 2D images, 6, 18 or 26 for volumes");
}

namespace {

struct ValueTypeInfo {
  ValueType type;
  const char* name;
  std::size_t size;
  bool is_signed;
};

constexpr ValueTypeInfo kValueTypes[] = {
    {ValueType::uint8, "uint8", 1, false},   {ValueType::uint16, "uint16", 2, false},
    {ValueType::uint32, "uint32", 4, false}, {ValueType::uint64, "uint64", 8, false},
    {ValueType::int8, "int8", 1, true},      {ValueType::int16, "int16", 2, true},
    {ValueType::int32, "int32", 4, true},    {ValueType::int64, "int64", 8, true}};

const ValueTypeInfo& info_of(ValueType type) {
  for (const ValueTypeInfo& info : kValueTypes) {
    if (info.type == type) return info;
  }
  throw InvalidArgument("unknown volccl::ValueType value " +
                        std::to_string(static_cast<int>(type)));
}

}  // namespace

std::string to_string(ValueType type) { return info_of(type).name; }
std::size_t size_of(ValueType type) { return info_of(type).size; }
bool is_signed(ValueType type) { return info_of(type).is_signed; }

Algorithm parse_algorithm(const std::string& name) {
  if (name == to_string(Algorithm::automatic)) return Algorithm::automatic;
  std::string expected = "auto";
  for (const detail::AlgorithmEntry& entry : detail::algorithm_registry()) {
    if (entry.name == name) return entry.algorithm;
    expected += std::string(", ") + entry.name;
  }
  throw InvalidArgument("unknown algorithm '" + name + "' (expected " + expected + ")");
}

Backend parse_backend(const std::string& name) {
  for (Backend backend : {Backend::automatic, Backend::cuda, Backend::cpu}) {
    if (to_string(backend) == name) return backend;
  }
  throw InvalidArgument("unknown device '" + name + "' (expected auto, cuda or cpu)");
}

std::string StepTimings::to_string() const {
  std::ostringstream text;
  text << "allocation=" << allocation_ms << " upload=" << upload_ms
       << " initialization=" << initialization_ms << " merge=" << merge_ms
       << " compression=" << compression_ms << " relabel=" << relabel_ms
       << " final_labeling=" << final_labeling_ms << " statistics=" << statistics_ms
       << " download=" << download_ms << " total=" << total_ms;
  return text.str();
}

}  // namespace volccl
