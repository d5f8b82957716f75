// Public value types of volccl: extents, connectivity, algorithms, options, step timings.
// Plain C++17; no CUDA, ITK or VTK headers, so any compiler can include it.
#pragma once

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

// Labeling algorithms. The block-based ones come from Allegretti, Bolelli and Grana,
// "Optimized Block-Based Algorithms to Label Connected Components on GPUs" (TPDS 2020):
// BUF (Sec. 5.1), BKE (Sec. 5.2), their InlineCompression variants (Sec. 2.1) and the 3D
// extension with 2x2x2 blocks (Sec. 5.3).
enum class Algorithm { buf, buf_ic, bke, bke_ic };

// Where the labeling runs. `automatic` picks CUDA when a device is usable, else the CPU.
enum class Backend { automatic, cuda, cpu };

std::string to_string(Algorithm algorithm);          // "buf", "buf-ic", "bke", "bke-ic"
std::string to_string(Backend backend);              // "auto", "cuda", "cpu"
Algorithm parse_algorithm(const std::string& name);  // throws volccl::InvalidArgument
Backend parse_backend(const std::string& name);      // throws volccl::InvalidArgument
const std::vector<Algorithm>& all_algorithms();

struct LabelOptions {
  // BUF: the fastest in 3D on an H100 on four of the five benchmark volumes (bench/RESULTS.md).
  Algorithm algorithm = Algorithm::buf;
  Backend backend = Backend::automatic;
  // 26 (3D) is the only connectivity the block-based labelers support: a 2x2x2 block is one
  // piece only under 26-connectivity (DESIGN.md, Contracts).
  int connectivity = 26;
  // Worker threads of the CPU backend; 0 means std::thread::hardware_concurrency().
  unsigned cpu_threads = 0;
};

// Milliseconds spent in each step of one run, as YACCLAB's "average with steps" test reports
// them (BUF/BKE paper, Sec. 6.2). Steps an algorithm does not have stay 0. GPU steps are timed
// with CUDA events, CPU steps with a steady clock.
struct StepTimings {
  double allocation_ms = 0;      // output and scratch memory
  double upload_ms = 0;          // host -> device copy of the input (host API only)
  double initialization_ms = 0;  // BUF Initialization, BKE Initialization
  double merge_ms = 0;           // BUF Merge, BKE Reduction
  double compression_ms = 0;     // every Compression pass together
  double relabel_ms = 0;         // raster-order ranking of the component roots
  double final_labeling_ms = 0;  // block labels written to every voxel
  double download_ms = 0;        // device -> host copy of the labels (host API only)
  double total_ms = 0;           // the whole call, measured around it

  std::string to_string() const;  // one "step=ms" pair per step, space separated
};

struct LabelResult {
  std::uint32_t component_count = 0;
  Backend backend_used = Backend::cpu;
  StepTimings timings;
};

}  // namespace volccl
