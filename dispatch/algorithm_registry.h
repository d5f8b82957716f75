// The algorithm registry: one entry per labeling algorithm (dispatch/algorithms.cpp), read by
// everything that needs to know what an algorithm is or how to run it: supports(),
// parse_algorithm(), all_algorithms(), what `auto` picks, the dispatch of label() and
// cuda::label(), the command line's help, `volccl bench` and the tests. Internal.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <vector>

#include "runtime/labeler.h"
#include "volccl/statistics.h"
#include "volccl/types.h"

namespace volccl::detail {

// A set of small non-negative integers (connectivities, enum values) as bits.
class SmallSet {
 public:
  constexpr SmallSet(std::initializer_list<int> members) {
    for (int member : members) bits_ |= std::uint32_t{1} << member;
  }
  constexpr bool contains(int member) const {
    return member >= 0 && member < 32 && ((bits_ >> member) & 1u) != 0;
  }
  std::vector<int> members() const;  // ascending

 private:
  std::uint32_t bits_ = 0;
};

// What a labeler reads: binary masks (non-zero is foreground) or label maps (LabelInput).
enum class InputKind { binary_mask, label_map };

// The entry points of one dimension: null where the algorithm has none, or the build no CUDA.
struct Labelers {
  HostLabeler cpu = nullptr;
  DeviceLabeler cuda = nullptr;
  // The CPU labeler gathers the Early moments while it labels; else they are measured after it.
  bool cpu_gathers_early = false;
  // The CUDA labeler gathers the Late moments from its own structures where the volume is too
  // large for the pass enqueued before the count (LateBeforeCount); else that pass, or the Late
  // pass after the labeling, measures its labels.
  bool cuda_gathers_late = false;
  // The CPU labeler gathers the Late moments from its runs as it writes the labels.
  bool cpu_gathers_late = false;
  // The CUDA labeler of label maps consults DeviceLabelCall::one_value.
  bool cuda_consults_one_value = false;
};

struct AlgorithmEntry {
  Algorithm algorithm;
  const char* name;     // as parse_algorithm() and the command line take it
  const char* summary;  // one line, for help texts
  // Why the algorithm takes only `connectivities` (empty when it takes all five).
  const char* limitation;
  SmallSet connectivities;         // of 4, 8 (images) and 6, 18, 26 (volumes)
  Labelers image;                  // 2D images, 4 or 8
  Labelers volume;                 // volumes (and one-slice volumes), 6, 18 or 26
  SmallSet statistics_strategies;  // StatisticsStrategy values, as int
  SmallSet inputs;                 // InputKind values, as int
  // The connectivities at which `auto` picks this algorithm, on the GPU and on the CPU.
  SmallSet automatic_on_cuda;
  SmallSet automatic_on_cpu;
  // The same for label maps.
  SmallSet automatic_label_maps_on_cuda = {};
  SmallSet automatic_label_maps_on_cpu = {};
  // The algorithm has no CUDA labeler: `auto`'s backend runs it on the CPU, and asking CUDA for it
  // is an error.
  bool cpu_only = false;

  const Labelers& labelers(int connectivity) const {
    return is_2d_connectivity(connectivity) ? image : volume;
  }
};

// Every entry, in the order of the Algorithm enumeration (automatic excluded).
const std::vector<AlgorithmEntry>& algorithm_registry();
// The entry of a concrete algorithm; throws InvalidArgument for automatic or an unknown value.
const AlgorithmEntry& registry_entry(Algorithm algorithm);

}  // namespace volccl::detail
