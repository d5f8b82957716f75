// Public value types of volccl: extents, connectivity, algorithms, options, step timings.
// Plain C++17; no CUDA, ITK or VTK headers, so any compiler can include it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace volccl {

// Voxel counts along x (fastest in memory), y and z. A 2D image has z == 1.
struct Extent3 {
  std::uint64_t x = 1;
  std::uint64_t y = 1;
  std::uint64_t z = 1;

  std::uint64_t voxel_count() const { return x * y * z; }
  std::string to_string() const;  // "XxYxZ"
};

bool operator==(const Extent3& a, const Extent3& b);

// Labeling algorithms: BUF, BKE and their InlineCompression variants (Allegretti, Bolelli and
// Grana, TPDS 2020) over 2x2x2 blocks (2x2 in images), so 26 or 8 only; UF, a union-find over
// voxels, every connectivity; UFB over 2x1x1 and 2x2x1 blocks and RUF over the runs of the rows,
// volumes at 6 and 18; KE, HA4, HA4-64, LE and TM, 2D images at 4 and 8; RTS, a run-based
// two-pass scan on the CPU only, every connectivity. summary() and
// connectivities() describe each, from the registry (docs/design.md); `automatic` picks the
// fastest measured for the connectivity and the device (automatic_choice()).
enum class Algorithm {
  automatic,
  buf,
  buf_ic,
  bke,
  bke_ic,
  uf,
  ufb,
  ruf,
  ke,
  ha4,
  ha4_64,
  le,
  tm,
  rts
};

// Where the labeling runs. `automatic` picks CUDA when a device is usable, else the CPU.
enum class Backend { automatic, cuda, cpu };

// How the GPU gathers component statistics: see volccl/statistics.h.
enum class StatisticsStrategy { late, fused, early };

// "auto", "buf", "buf-ic", "bke", "bke-ic", "uf", "ufb", "ruf", "ke", "ha4", "ha4-64", "le", "tm"
std::string to_string(Algorithm algorithm);
// One line on what the algorithm is, for help texts.
std::string summary(Algorithm algorithm);
std::string to_string(Backend backend);              // "auto", "cuda", "cpu"
Algorithm parse_algorithm(const std::string& name);  // throws volccl::InvalidArgument
Backend parse_backend(const std::string& name);      // throws volccl::InvalidArgument
// The concrete algorithms (all but `automatic`).
const std::vector<Algorithm>& all_algorithms();
// Whether `algorithm` can label with `connectivity`: 4 or 8 for 2D images, 6, 18 or 26 for
// volumes.
bool supports(Algorithm algorithm, int connectivity);
// The connectivities `algorithm` labels with, ascending.
std::vector<int> connectivities(Algorithm algorithm);
// Whether `algorithm` has a labeler on `backend`: every one on the CPU, all but the CPU-only
// ones (RTS) on CUDA; `automatic` on both.
bool runs_on(Algorithm algorithm, Backend backend);
// Whether `algorithm` labels label maps (LabelInput::label_map); every algorithm labels masks.
bool supports_label_maps(Algorithm algorithm);
// The algorithm `automatic` stands for at `connectivity` on `backend` (cuda or cpu), for masks or
// for label maps.
Algorithm automatic_choice(int connectivity, Backend backend, bool label_map = false);
// 4 and 8 label 2D images (extent.z == 1); 6, 18 and 26 label volumes of any depth.
constexpr bool is_2d_connectivity(int connectivity) {
  return connectivity == 4 || connectivity == 8;
}

// The integer types a label map may hold. Equality is all that labeling asks of a value, so
// signed and unsigned types of one width label alike; the sign matters only when values are
// reported.
enum class ValueType { uint8, uint16, uint32, uint64, int8, int16, int32, int64 };

std::string to_string(ValueType type);  // "uint8", ..., "int64"
std::size_t size_of(ValueType type);    // bytes per voxel
bool is_signed(ValueType type);

template <typename T>
constexpr ValueType value_type_of();  // defined for the eight integer types above only
template <>
constexpr ValueType value_type_of<std::uint8_t>() {
  return ValueType::uint8;
}
template <>
constexpr ValueType value_type_of<std::uint16_t>() {
  return ValueType::uint16;
}
template <>
constexpr ValueType value_type_of<std::uint32_t>() {
  return ValueType::uint32;
}
template <>
constexpr ValueType value_type_of<std::uint64_t>() {
  return ValueType::uint64;
}
template <>
constexpr ValueType value_type_of<std::int8_t>() {
  return ValueType::int8;
}
template <>
constexpr ValueType value_type_of<std::int16_t>() {
  return ValueType::int16;
}
template <>
constexpr ValueType value_type_of<std::int32_t>() {
  return ValueType::int32;
}
template <>
constexpr ValueType value_type_of<std::int64_t>() {
  return ValueType::int64;
}

// What a labeling reads, x fastest, then y, then z: a binary mask (non-zero bytes are
// foreground, every foreground voxel joins its foreground neighbours) or a label map (every
// connected region of equal value is a component, as cc3d.connected_components and
// skimage.measure.label number them; voxels of the background value are not labeled).
struct LabelInput {
  const void* data = nullptr;
  ValueType type = ValueType::uint8;
  bool label_map = false;
  // Label maps: the value left unlabeled, as its bits (the value converted to uint64, so
  // negative values are sign-extended; only the type's width is compared).
  std::uint64_t background = 0;

  static LabelInput binary(const std::uint8_t* mask) { return {mask, ValueType::uint8, false, 0}; }
  template <typename T>
  static LabelInput values(const T* label_map, T background_value = T{0}) {
    return {label_map, value_type_of<T>(), true, static_cast<std::uint64_t>(background_value)};
  }
};

struct LabelOptions {
  // `automatic`: the algorithm automatic_choice() names for the connectivity and the backend, the
  // fastest measured there (docs/benchmarks.md).
  Algorithm algorithm = Algorithm::automatic;
  Backend backend = Backend::automatic;
  // Volumes: 6 (faces), 18 (faces and edges) or 26 (faces, edges and corners). 2D images
  // (extent.z == 1): 4 (edges) or 8 (edges and corners). A one-slice volume may also be labeled
  // with 6, 18 or 26, which give the labels of 4, 8 and 8.
  int connectivity = 26;
  // Worker threads of the CPU backend; 0: all cores, or fewer for a volume too small to use them.
  unsigned cpu_threads = 0;
  // Time each step of the CUDA backend with CUDA events (YACCLAB's "average with steps" test).
  // Off, only allocation_ms and total_ms (and the host API's transfers) are measured: the
  // events cost the host a few microseconds per step, which shows on small images. The CPU
  // backend always times its steps (a clock read each).
  bool step_timings = false;
  // How the GPU gathers component statistics when a label() overload that measures is called
  // (volccl/statistics.h); ignored otherwise and by the CPU backend.
  StatisticsStrategy statistics_strategy = StatisticsStrategy::late;
  // The most device memory the CUDA backend of label() may take for this call, in bytes; 0: what
  // the device has free. A volume whose input, labels and scratch do not fit is labeled in
  // z-slabs (row slabs for a 2D image) streamed through the device, with the same labels.
  std::uint64_t max_gpu_memory = 0;
  // The most voxels label() hands one labeler at a time, on either backend; 0: the whole volume
  // where it fits (max_slab_voxel_count and max_gpu_memory), else as many whole slices as fit.
  std::uint64_t slab_voxels = 0;
};

// Milliseconds spent in each step of one run, as YACCLAB's "average with steps" test reports
// them (BUF/BKE paper, Sec. 6.2). Steps an algorithm does not have stay 0. GPU steps are timed
// with CUDA events when LabelOptions::step_timings is on, CPU steps with a steady clock.
struct StepTimings {
  double allocation_ms = 0;      // output and scratch memory
  double upload_ms = 0;          // host -> device copy of the input (host API only)
  double initialization_ms = 0;  // BUF Initialization, BKE Initialization
  double merge_ms = 0;           // BUF Merge, BKE Reduction
  double compression_ms = 0;     // every Compression pass together
  double relabel_ms = 0;         // raster-order ranking of the component roots
  double final_labeling_ms = 0;  // block labels written to every voxel
  double statistics_ms = 0;      // component moments, their table's allocation included
  double download_ms = 0;        // device -> host copy of the labels (host API only)
  double total_ms = 0;           // the whole call, measured around it

  std::string to_string() const;  // one "step=ms" pair per step, space separated
};

// What the CUDA backend kept on the device between its two passes over slabs: nothing (each
// slab uploaded and labeled again), the whole input (each slab labeled again), or every slab's
// local labels (neither).
enum class SlabResidency { none, input, labels };
std::string to_string(SlabResidency residency);  // "none", "input", "labels"

struct LabelResult {
  std::uint64_t component_count = 0;
  Algorithm algorithm_used = Algorithm::buf;  // what `automatic` chose, or the one asked for
  Backend backend_used = Backend::cpu;
  // The rounds of the iterative labelers: LE's Scan-Analysis iterations (the first Scan
  // included; the last Scan, which finds nothing to change, not), as many on the CPU as on the
  // GPU; TM's Global Merge levels (0 for an image of one tile). 0 for the other algorithms.
  std::uint32_t iterations = 0;
  // How many slabs label() cut the volume into (1: labeled whole); with more than one, the
  // iterations and step timings are the sums over the slabs', and relabel_ms includes the
  // joining of the slabs' components across their faces.
  std::uint64_t slab_count = 1;
  SlabResidency slab_residency = SlabResidency::none;  // CUDA backend, more than one slab
  // CUDA backend: the most device memory the call's own buffers held at once, in bytes.
  std::uint64_t peak_device_bytes = 0;
  StepTimings timings;
};

}  // namespace volccl
