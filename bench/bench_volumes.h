// The volumes `volccl bench` times: YACCLAB's synthetic datasets (BUF/BKE paper, Sec. 6.1),
// generated on demand, and masks read from .npy files. Each is loaded only when its turn
// comes, so a run over many large volumes holds one at a time.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "volccl/data/generators.h"

namespace volccl::bench {

struct BenchVolume {
  std::string name;     // unique in a run: "random-512-d30-g1", "hilbert-128-o6", "oasis-0455"
  std::string dataset;  // the group the plots average over: "random", "hilbert", "oasis", ...
  std::function<data::Volume()> load;
  bool with_peers = true;  // the CPU peers time it too (not the granularity test's many volumes)
  // What the reports say about a generated volume.
  std::optional<unsigned> granularity;
  std::optional<std::uint32_t> seed;
  std::optional<unsigned> order;
  std::optional<double> x;  // a Ridge family member's free parameter (l, lambda, s or p)
};

// The random volumes of the acceptance tests: 256^3 and 512^3, density 30 %, granularity 1 and 8.
std::vector<BenchVolume> random_volumes();

// YACCLAB's Hilbert dataset: the curves of orders 1 to 6 in 128^3 volumes.
std::vector<BenchVolume> hilbert_volumes();

// YACCLAB's granularity test (BUF/BKE paper, Sec. 6.2): side^dimensions images or volumes (2048^2
// in 2D, 256^3 in 3D), density 0 to 100 % in steps of `density_step` percent, each granularity
// listed, one MT19937 seed each. Dataset "granularity", without the CPU peers.
std::vector<BenchVolume> granularity_volumes(unsigned dimensions, unsigned density_step,
                                             const std::vector<unsigned>& granularities);

// The CPU benchmark's smaller random volumes: 256^3 at densities 5, 30 and 60 %, granularity 1
// and 8 (statistics_volumes() has them at 512^3). Dataset "random".
std::vector<BenchVolume> cpu_volumes();

// The statistics benchmark's random volumes: 512^3 at densities 5, 30 and 60 %, granularity 1
// and 8. Dataset "random".
std::vector<BenchVolume> statistics_volumes();

// The LE/TM paper's Ridge families (Sec. IV-C) on side x side images with the paper's parameters
// (level 3, 5 subdivisions, seed 1): each member in order, dataset "ridge-FAMILY", with its x.
// Without the CPU peers.
std::vector<BenchVolume> ridge_volumes(std::uint64_t side);

// A few small volumes (dimensions 3) or images (2) that a CPU labels in seconds, for CI.
std::vector<BenchVolume> quick_volumes(unsigned dimensions);

// A mask from a .npy or gzip-compressed .npy.gz file (read_npy).
BenchVolume npy_volume(const std::string& name, const std::string& dataset,
                       const std::filesystem::path& path);

// An array of two or three dimensions, of unsigned 8-, 16-, 32- or 64-bit integers in either
// byte order, C order (shape (z, y, x)) or Fortran order (shape (x, y, z)), from a .npy file of
// format 1, 2 or 3, gzip-compressed or not; non-zero is foreground. Throws std::runtime_error
// naming the file when it is something else or truncated.
data::Volume read_npy(const std::filesystem::path& path);

// Writes a C-order array of shape (z, y, x), or (y, x) when `dimensions` is 2, in NumPy's .npy
// format 1.0: `descr` is the NumPy type ("|u1", "<u4"), `data` holds extent.voxel_count() items.
void write_npy(const std::filesystem::path& path, const std::string& descr, unsigned dimensions,
               Extent3 extent, const void* data, std::uint64_t bytes);

}  // namespace volccl::bench
