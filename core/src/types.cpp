#include "volccl/types.h"

#include <sstream>

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
  switch (algorithm) {
    case Algorithm::automatic:
      return "auto";
    case Algorithm::buf:
      return "buf";
    case Algorithm::buf_ic:
      return "buf-ic";
    case Algorithm::bke:
      return "bke";
    case Algorithm::bke_ic:
      return "bke-ic";
    case Algorithm::uf:
      return "uf";
    case Algorithm::ufb:
      return "ufb";
    case Algorithm::ruf:
      return "ruf";
    case Algorithm::ke:
      return "ke";
    case Algorithm::ha4:
      return "ha4";
    case Algorithm::ha4_64:
      return "ha4-64";
    case Algorithm::le:
      return "le";
    case Algorithm::tm:
      return "tm";
  }
  throw InvalidArgument("unknown volccl::Algorithm value " +
                        std::to_string(static_cast<int>(algorithm)));
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

const std::vector<Algorithm>& all_algorithms() {
  static const std::vector<Algorithm> algorithms = {
      Algorithm::buf, Algorithm::buf_ic, Algorithm::bke, Algorithm::bke_ic,
      Algorithm::uf,  Algorithm::ufb,    Algorithm::ruf, Algorithm::ke,
      Algorithm::ha4, Algorithm::ha4_64, Algorithm::le,  Algorithm::tm};
  return algorithms;
}

bool supports(Algorithm algorithm, int connectivity) {
  switch (algorithm) {
    case Algorithm::automatic:
    case Algorithm::uf:
      return is_2d_connectivity(connectivity) || connectivity == 6 || connectivity == 18 ||
             connectivity == 26;
    case Algorithm::buf:
    case Algorithm::buf_ic:
    case Algorithm::bke:
    case Algorithm::bke_ic:
      return connectivity == 8 || connectivity == 26;
    case Algorithm::ufb:
    case Algorithm::ruf:
      return connectivity == 6 || connectivity == 18;
    case Algorithm::ke:
    case Algorithm::ha4:
    case Algorithm::ha4_64:
    case Algorithm::le:
    case Algorithm::tm:
      return is_2d_connectivity(connectivity);
  }
  return false;
}

Algorithm parse_algorithm(const std::string& name) {
  if (name == to_string(Algorithm::automatic)) return Algorithm::automatic;
  for (Algorithm algorithm : all_algorithms()) {
    if (to_string(algorithm) == name) return algorithm;
  }
  throw InvalidArgument(
      "unknown algorithm '" + name +
      "' (expected auto, buf, buf-ic, bke, bke-ic, uf, ufb, ruf, ke, ha4, ha4-64, le or tm)");
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
