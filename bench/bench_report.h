// What `volccl bench` reports: one row per volume and algorithm (or peer), printed as tables and
// written as CSV (the columns bench/peers.py writes too) and JSON.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "volccl/types.h"

namespace volccl::bench {

struct VolumeInfo {
  std::string name;
  std::string dataset;
  unsigned dimensions = 3;
  Extent3 extent;
  std::uint64_t voxels = 0;
  double density = 0;  // measured foreground fraction
  std::optional<unsigned> granularity;
  std::optional<std::uint32_t> seed;
  std::optional<unsigned> order;
  std::optional<double> x;  // a Ridge family member's free parameter
  // The volume's transfers between pageable host memory and the device, medians: the mask up,
  // the uint32 labels down. Reported apart, never inside a labeling time (CUDA only).
  std::optional<double> upload_ms;
  std::optional<double> download_ms;
};

struct Row {
  VolumeInfo volume;
  int connectivity = 26;
  std::string algorithm;  // "buf", "buf+late", or a peer: "itk"
  std::string device;     // "cuda" or "cpu"
  int runs = 0;
  double median_ms = 0;
  double min_ms = 0;
  double max_ms = 0;
  std::uint32_t components = 0;
  std::optional<std::uint32_t> iterations;  // LE's scans, TM's merge levels (LabelResult)
  std::optional<double> floor_ms;
  std::optional<StepTimings> steps;  // medians, when the steps were timed

  std::optional<double> x_floor() const {
    if (!floor_ms) return std::nullopt;
    return median_ms / *floor_ms;
  }
};

struct Report {
  std::string device;
  std::string device_description;
  int connectivity = 26;
  int runs = 0;
  int warmup = 0;
  std::optional<double> bandwidth_bytes_per_s;
  std::optional<std::uint64_t> copy_bytes;
  std::vector<VolumeInfo> volumes;
  std::vector<Row> rows;
};

// `value` with `decimals` digits after the point, for the tables and the progress lines.
std::string fixed(double value, int decimals);

// The table of times, then the table of step medians, on stdout.
void print_tables(const Report& report);
// One row per Row, with the header bench/peers.py also writes.
void write_csv(const std::filesystem::path& path, const Report& report);
void write_json(const std::filesystem::path& path, const Report& report);

}  // namespace volccl::bench
