// volccl-bench: times volccl's labeling algorithms on the acceptance volumes the way DESIGN.md
// (Performance) and YACCLAB (BUF/BKE paper, Sec. 6.2) ask, checks their labels, and writes a
// table, CSV, JSON and, for bench/peers.py, the volumes and labels as .npy files. One
// connectivity per run (26 by default), with every algorithm that supports it. With 4 or 8 the
// images are YACCLAB's 2D granularity test: 2048^2, density 0-100 % in steps of 10,
// granularity 1, 4 and 16.
//
//   volccl-bench --device cuda --csv bench.csv --dump-dir /tmp/volumes
//   volccl-bench --device cuda --connectivity 6
//   volccl-bench --device cuda --connectivity 8
//   volccl-bench --quick --device cpu
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "timed_runs.h"
#include "volccl/data/generators.h"
#include "volccl/detail/json_string.h"
#include "volccl/volccl.h"
#ifdef VOLCCL_HAS_CUDA
#include "cuda_bench.h"
#endif

namespace {

namespace fs = std::filesystem;
using volccl::Algorithm;
using volccl::Extent3;
using volccl::LabelResult;
using volccl::StepTimings;
using volccl::bench::TimedRuns;
using volccl::detail::json_string;

// Bytes of the memory floor per voxel: the uint8 mask read once, the uint32 labels written once.
constexpr double kFloorBytesPerVoxel = 1 + 4;
// The device-to-device copy that measures the bandwidth of the floor.
constexpr std::uint64_t kCopyBytes = 1ull << 30;
constexpr int kCopyRuns = 20;
// Runs of the "average with steps" test, after the whole-labeling runs.
constexpr int kSteppedRuns = 20;

// ---- volumes ------------------------------------------------------------------------------------

struct VolumeSpec {
  enum class Kind { random, hilbert, file };
  Kind kind = Kind::random;
  std::string name;
  unsigned dimensions = 3;  // 2: a side x side image
  std::uint64_t side = 0;
  unsigned density_percent = 0;  // random
  unsigned granularity = 0;      // random
  std::uint32_t seed = 0;        // random
  unsigned order = 0;            // hilbert
  std::string path;              // file: a uint8 .npy of shape (z, y, x) or (y, x)
};

VolumeSpec random_volume(std::uint64_t side, unsigned density_percent, unsigned granularity,
                         std::uint32_t seed) {
  VolumeSpec spec;
  spec.kind = VolumeSpec::Kind::random;
  spec.name = "random-" + std::to_string(side) + "-d" + std::to_string(density_percent) + "-g" +
              std::to_string(granularity);
  spec.side = side;
  spec.density_percent = density_percent;
  spec.granularity = granularity;
  spec.seed = seed;
  return spec;
}

// "image-2048-d30-g1": a side x side 2D image of YACCLAB's granularity test.
VolumeSpec random_image(std::uint64_t side, unsigned density_percent, unsigned granularity,
                        std::uint32_t seed) {
  VolumeSpec spec = random_volume(side, density_percent, granularity, seed);
  spec.name.replace(0, std::string("random").size(), "image");
  spec.dimensions = 2;
  return spec;
}

VolumeSpec hilbert_volume(unsigned order, std::uint64_t side) {
  VolumeSpec spec;
  spec.kind = VolumeSpec::Kind::hilbert;
  spec.name = "hilbert-" + std::to_string(side) + "-o" + std::to_string(order);
  spec.side = side;
  spec.order = order;
  return spec;
}

// The volumes of the performance acceptance test (DESIGN.md, Performance).
std::vector<VolumeSpec> acceptance_volumes() {
  return {random_volume(256, 30, 1, 1), random_volume(256, 30, 8, 2), random_volume(512, 30, 1, 3),
          random_volume(512, 30, 8, 4), hilbert_volume(6, 128)};
}

// YACCLAB's 2D granularity test (BUF/BKE paper, Sec. 6.1.3 and 6.2): 2048^2 images, density 0
// to 100 % in steps of 10, granularity 1, 4 and 16, one MT19937 seed each.
std::vector<VolumeSpec> granularity_images() {
  std::vector<VolumeSpec> images;
  std::uint32_t seed = 100;
  for (unsigned granularity : {1u, 4u, 16u}) {
    for (unsigned density = 0; density <= 100; density += 10) {
      images.push_back(random_image(2048, density, granularity, seed++));
    }
  }
  return images;
}

// Small volumes and images for --quick (a few seconds on a CPU) and for compute-sanitizer.
std::vector<VolumeSpec> quick_volumes() {
  return {random_volume(64, 30, 1, 5), hilbert_volume(4, 32)};
}
std::vector<VolumeSpec> quick_images() {
  return {random_image(256, 50, 1, 6), random_image(512, 50, 1, 7)};
}

// The volumes of the statistics benchmark (the statistics issue): random 512^3 at densities 5,
// 30 and 60 % and granularity 1 and 8, and the Hilbert volume; real ones come with --npy.
std::vector<VolumeSpec> statistics_volumes() {
  std::vector<VolumeSpec> volumes;
  std::uint32_t seed = 20;
  for (unsigned density : {5u, 30u, 60u}) {
    for (unsigned granularity : {1u, 8u}) {
      volumes.push_back(random_volume(512, density, granularity, seed++));
    }
  }
  volumes.push_back(hilbert_volume(6, 128));
  return volumes;
}

// "NAME=PATH": a mask from a .npy file (bench/real_volumes.py writes them).
VolumeSpec file_volume(const std::string& argument) {
  const std::size_t equals = argument.find('=');
  if (equals == std::string::npos || equals == 0 || equals + 1 == argument.size()) {
    throw std::invalid_argument("--npy takes NAME=PATH, not '" + argument + "'");
  }
  VolumeSpec spec;
  spec.kind = VolumeSpec::Kind::file;
  spec.name = argument.substr(0, equals);
  spec.path = argument.substr(equals + 1);
  return spec;
}

// A C-order uint8 .npy (version 1 or 2) of two or three dimensions; non-zero is foreground.
volccl::data::Volume read_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[8];
  if (!in.read(magic, 8) || std::string(magic, 6) != "\x93NUMPY") {
    throw std::runtime_error(path + " is not a .npy file");
  }
  std::uint32_t header_size = 0;
  unsigned char size_bytes[4] = {0, 0, 0, 0};
  in.read(reinterpret_cast<char*>(size_bytes), magic[6] == 1 ? 2 : 4);
  for (int i = 3; i >= 0; --i) header_size = header_size << 8 | size_bytes[i];
  std::string header(header_size, ' ');
  in.read(header.data(), header_size);
  if (header.find("'|u1'") == std::string::npos && header.find("'<u1'") == std::string::npos) {
    throw std::runtime_error(path + ": expected uint8 voxels, header " + header);
  }
  if (header.find("'fortran_order': False") == std::string::npos) {
    throw std::runtime_error(path + ": expected C order, header " + header);
  }
  const std::size_t open = header.find('(', header.find("'shape'"));
  const std::size_t close = header.find(')', open);
  std::vector<std::uint64_t> shape;
  std::istringstream numbers(header.substr(open + 1, close - open - 1));
  for (std::string item; std::getline(numbers, item, ',');) {
    if (item.find_first_not_of(' ') != std::string::npos) shape.push_back(std::stoull(item));
  }
  if (shape.size() != 2 && shape.size() != 3) {
    throw std::runtime_error(path + ": expected 2 or 3 dimensions, header " + header);
  }
  volccl::data::Volume volume;
  volume.extent =
      shape.size() == 3 ? Extent3{shape[2], shape[1], shape[0]} : Extent3{shape[1], shape[0], 1};
  volume.voxels.resize(volume.extent.voxel_count());
  if (!in.read(reinterpret_cast<char*>(volume.voxels.data()),
               static_cast<std::streamsize>(volume.voxels.size()))) {
    throw std::runtime_error(path + " is truncated");
  }
  return volume;
}

volccl::data::Volume generate(const VolumeSpec& spec) {
  if (spec.kind == VolumeSpec::Kind::hilbert) return volccl::data::hilbert(spec.order, spec.side);
  if (spec.kind == VolumeSpec::Kind::file) return read_npy(spec.path);
  const std::uint64_t depth = spec.dimensions == 2 ? 1 : spec.side;
  return volccl::data::random_granular({spec.side, spec.side, depth}, spec.density_percent / 100.0,
                                       spec.granularity, spec.seed);
}

// What the reports say about a generated volume.
struct VolumeInfo {
  std::string name;
  unsigned dimensions = 3;
  Extent3 extent;
  std::uint64_t voxels = 0;
  double density = 0;  // measured foreground fraction
  std::optional<unsigned> granularity;
  std::optional<std::uint32_t> seed;
  std::optional<unsigned> order;
};

VolumeInfo describe(const VolumeSpec& spec, const volccl::data::Volume& volume) {
  VolumeInfo info;
  info.name = spec.name;
  info.dimensions = spec.dimensions;
  info.extent = volume.extent;
  info.voxels = volume.extent.voxel_count();
  const auto foreground = std::count_if(volume.voxels.begin(), volume.voxels.end(),
                                        [](std::uint8_t voxel) { return voxel != 0; });
  info.density = static_cast<double>(foreground) / static_cast<double>(info.voxels);
  info.dimensions = volume.extent.z == 1 ? 2 : 3;
  if (spec.kind == VolumeSpec::Kind::random) {
    info.granularity = spec.granularity;
    info.seed = spec.seed;
  } else if (spec.kind == VolumeSpec::Kind::hilbert) {
    info.order = spec.order;
  }
  return info;
}

// ---- formatting ---------------------------------------------------------------------------------

std::string fixed(double value, int decimals) {
  std::ostringstream text;
  text.setf(std::ios::fixed);
  text.precision(decimals);
  text << value;
  return text.str();
}

// Six significant digits: enough for every timing and floor, small or large.
std::string number(double value) {
  std::ostringstream text;
  text.precision(6);
  text << value;
  return text.str();
}

template <typename T>
std::string optional_text(const std::optional<T>& value) {
  if (!value) return "";
  if constexpr (std::is_floating_point_v<T>) {
    return number(*value);
  } else {
    return std::to_string(*value);
  }
}

std::string coordinates(std::uint64_t index, Extent3 extent) {
  return "(x " + std::to_string(index % extent.x) + ", y " +
         std::to_string(index / extent.x % extent.y) + ", z " +
         std::to_string(index / (extent.x * extent.y)) + ")";
}

template <typename T>
std::string json_optional(const std::optional<T>& value) {
  return value ? optional_text(value) : "null";
}

// ---- statistics ---------------------------------------------------------------------------------

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t middle = values.size() / 2;
  return values.size() % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
}

struct StepField {
  const char* name;
  double StepTimings::*milliseconds;
};

constexpr StepField kSteps[] = {{"allocation", &StepTimings::allocation_ms},
                                {"upload", &StepTimings::upload_ms},
                                {"initialization", &StepTimings::initialization_ms},
                                {"merge", &StepTimings::merge_ms},
                                {"compression", &StepTimings::compression_ms},
                                {"relabel", &StepTimings::relabel_ms},
                                {"final_labeling", &StepTimings::final_labeling_ms},
                                {"statistics", &StepTimings::statistics_ms},
                                {"download", &StepTimings::download_ms},
                                {"total", &StepTimings::total_ms}};

// The median of each step over the runs.
StepTimings median_steps(const std::vector<LabelResult>& results) {
  StepTimings medians;
  for (const StepField& step : kSteps) {
    std::vector<double> values;
    for (const LabelResult& result : results) values.push_back(result.timings.*step.milliseconds);
    medians.*step.milliseconds = median(std::move(values));
  }
  return medians;
}

// ---- files --------------------------------------------------------------------------------------

// Writes `path` through `write(std::ostream&)` under a temporary name, renamed when complete.
template <typename Write>
void write_file(const fs::path& path, Write write) {
  fs::path temporary = path;
  temporary += ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error("cannot open " + temporary.string() + " for writing");
    write(out);
    out.close();
    if (!out) throw std::runtime_error("writing " + temporary.string() + " failed");
  }
  fs::rename(temporary, path);
}

bool little_endian() {
  const std::uint16_t probe = 1;
  return *reinterpret_cast<const unsigned char*>(&probe) == 1;
}

// A C-order array of shape (z, y, x), or (y, x) for a 2D image, in NumPy's .npy format,
// version 1.0.
void write_npy(const fs::path& path, const std::string& descr, const VolumeInfo& info,
               const void* data, std::uint64_t bytes) {
  const Extent3& extent = info.extent;
  const std::string shape =
      (info.dimensions == 3 ? std::to_string(extent.z) + ", " : std::string()) +
      std::to_string(extent.y) + ", " + std::to_string(extent.x);
  std::string header =
      "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (" + shape + "), }";
  // Magic, version and header length take 10 bytes; the header ends in '\n' and is padded with
  // spaces so that the data starts at a multiple of 64 bytes.
  const std::size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  write_file(path, [&](std::ostream& out) {
    const char preamble[] = {'\x93',
                             'N',
                             'U',
                             'M',
                             'P',
                             'Y',
                             1,
                             0,
                             static_cast<char>(header.size() & 0xFF),
                             static_cast<char>(header.size() >> 8)};
    out.write(preamble, sizeof preamble);
    out << header;
    out.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
  });
}

// ---- the CPU backend ----------------------------------------------------------------------------

// volccl::label on host memory; each timed run allocates its labels, as the CUDA runs do.
class CpuBench {
 public:
  void set_volume(const std::uint8_t* mask, Extent3 extent) {
    mask_ = mask;
    extent_ = extent;
  }

  LabelResult label_once(Algorithm algorithm, int connectivity,
                         std::vector<std::uint32_t>& labels) {
    labels.assign(extent_.voxel_count(), 0xFFFFFFFFu);
    return volccl::label(mask_, extent_, labels.data(), options(algorithm, connectivity));
  }

  LabelResult measure_once(Algorithm algorithm, int connectivity,
                           volccl::StatisticsStrategy strategy,
                           std::vector<volccl::ComponentMoments>& moments) {
    std::vector<std::uint32_t> labels(extent_.voxel_count());
    volccl::LabelOptions label_options = options(algorithm, connectivity);
    label_options.statistics_strategy = strategy;
    return volccl::label(mask_, extent_, labels.data(), moments, label_options);
  }

  TimedRuns time(Algorithm algorithm, int connectivity, int runs, int warmup, bool step_timings,
                 std::optional<volccl::StatisticsStrategy> statistics = std::nullopt) {
    volccl::LabelOptions label_options = options(algorithm, connectivity);
    label_options.step_timings = step_timings;
    if (statistics) label_options.statistics_strategy = *statistics;
    TimedRuns timed;
    for (int run = -warmup; run < runs; ++run) {
      const auto start = std::chrono::steady_clock::now();
      std::unique_ptr<std::uint32_t[]> labels(new std::uint32_t[extent_.voxel_count()]);
      LabelResult result;
      if (statistics) {
        std::vector<volccl::ComponentMoments> moments;
        result = volccl::label(mask_, extent_, labels.get(), moments, label_options);
      } else {
        result = volccl::label(mask_, extent_, labels.get(), label_options);
      }
      labels.reset();
      const std::chrono::duration<double, std::milli> elapsed =
          std::chrono::steady_clock::now() - start;
      if (run >= 0) {
        timed.ms.push_back(elapsed.count());
        timed.results.push_back(result);
      }
    }
    return timed;
  }

 private:
  static volccl::LabelOptions options(Algorithm algorithm, int connectivity) {
    volccl::LabelOptions options;
    options.algorithm = algorithm;
    options.connectivity = connectivity;
    options.backend = volccl::Backend::cpu;
    return options;
  }

  const std::uint8_t* mask_ = nullptr;
  Extent3 extent_;
};

// ---- checks -------------------------------------------------------------------------------------

// Throws unless `labels` keep the contract: background 0, foreground 1..count, and the labels
// first met in raster order are 1, 2, ..., count.
void check_numbering(const VolumeInfo& info, Algorithm algorithm,
                     const volccl::data::Volume& volume, const std::vector<std::uint32_t>& labels,
                     std::uint32_t count) {
  const std::string what = info.name + ", " + volccl::to_string(algorithm) + ": ";
  std::uint64_t next = 1;
  const auto where = [&](std::uint64_t i) {
    return "voxel " + std::to_string(i) + " " + coordinates(i, info.extent);
  };
  for (std::uint64_t i = 0; i < info.voxels; ++i) {
    const std::uint32_t label = labels[i];
    if (volume.voxels[i] == 0) {
      if (label != 0) {
        throw std::runtime_error(what + "background " + where(i) + " has label " +
                                 std::to_string(label));
      }
    } else if (label == 0 || label > count) {
      throw std::runtime_error(what + "foreground " + where(i) + " has label " +
                               std::to_string(label) + ", outside 1.." + std::to_string(count));
    } else if (label > next) {
      throw std::runtime_error(what + "label " + std::to_string(label) + " first appears at " +
                               where(i) + ", before label " + std::to_string(next) +
                               ": not numbered in raster order");
    } else if (label == next) {
      ++next;
    }
  }
  if (next != std::uint64_t{count} + 1) {
    throw std::runtime_error(what + "reports " + std::to_string(count) +
                             " components but labels only 1.." + std::to_string(next - 1));
  }
}

void check_identical(const VolumeInfo& info, Algorithm reference_algorithm,
                     const std::vector<std::uint32_t>& reference, Algorithm algorithm,
                     const std::vector<std::uint32_t>& labels) {
  std::uint64_t differing = 0;
  std::uint64_t first = 0;
  for (std::uint64_t i = 0; i < info.voxels; ++i) {
    if (labels[i] != reference[i] && differing++ == 0) first = i;
  }
  if (differing > 0) {
    throw std::runtime_error(
        info.name + ": " + volccl::to_string(algorithm) + " labels differ from " +
        volccl::to_string(reference_algorithm) + " at " + std::to_string(differing) +
        " voxels; first at voxel " + std::to_string(first) + " " + coordinates(first, info.extent) +
        ": " + std::to_string(labels[first]) + " against " + std::to_string(reference[first]));
  }
}

// The file of the labels at `connectivity` in a dump folder: NAME.cN.labels.npy, so that
// bench/peers.py checks each with scipy's structure of that connectivity.
fs::path labels_file(const fs::path& dump_dir, const VolumeInfo& info, int connectivity) {
  return dump_dir / (info.name + ".c" + std::to_string(connectivity) + ".labels.npy");
}

// Labels the volume once with every algorithm, checks each result and that all are identical,
// writes the first algorithm's labels to `dump_dir` when given, and returns the component count.
template <typename Bench>
std::uint32_t check_algorithms(Bench& bench, const VolumeInfo& info,
                               const volccl::data::Volume& volume,
                               const std::vector<Algorithm>& algorithms, int connectivity,
                               const std::optional<fs::path>& dump_dir) {
  std::vector<std::uint32_t> reference;
  std::vector<std::uint32_t> labels;
  std::uint32_t count = 0;
  for (std::size_t i = 0; i < algorithms.size(); ++i) {
    std::vector<std::uint32_t>& target = i == 0 ? reference : labels;
    const LabelResult result = bench.label_once(algorithms[i], connectivity, target);
    check_numbering(info, algorithms[i], volume, target, result.component_count);
    if (i == 0) {
      count = result.component_count;
      if (dump_dir) {
        write_npy(labels_file(*dump_dir, info, connectivity), little_endian() ? "<u4" : ">u4", info,
                  reference.data(), info.voxels * sizeof(std::uint32_t));
      }
    } else {
      check_identical(info, algorithms[0], reference, algorithms[i], labels);
    }
    std::cout << "  " << volccl::to_string(algorithms[i]) << ": labels OK, "
              << result.component_count << " components\n";
  }
  return count;
}

// ---- results ------------------------------------------------------------------------------------

struct Row {
  VolumeInfo volume;
  int connectivity = 26;
  std::string algorithm;
  std::string device;
  int runs = 0;
  double median_ms = 0;
  double min_ms = 0;
  double max_ms = 0;
  std::uint32_t components = 0;
  std::optional<double> floor_ms;
  StepTimings steps;  // medians

  std::optional<double> x_floor() const {
    if (!floor_ms) return std::nullopt;
    return median_ms / *floor_ms;
  }
};

// `timed`: YACCLAB's "average" test, the whole labeling; `stepped`: its "average with steps",
// each step timed apart (which costs the host time between the steps).
Row summarize(const VolumeInfo& volume, const std::string& algorithm, int connectivity,
              const std::string& device, const TimedRuns& timed, const TimedRuns& stepped,
              std::uint32_t components, std::optional<double> bandwidth_bytes_per_s) {
  for (const TimedRuns* runs : {&timed, &stepped}) {
    for (std::size_t run = 0; run < runs->results.size(); ++run) {
      if (runs->results[run].component_count != components) {
        throw std::runtime_error(volume.name + ", " + algorithm + ": run " + std::to_string(run) +
                                 " found " + std::to_string(runs->results[run].component_count) +
                                 " components, the check found " + std::to_string(components));
      }
    }
  }
  Row row;
  row.volume = volume;
  row.connectivity = connectivity;
  row.algorithm = algorithm;
  row.device = device;
  row.runs = static_cast<int>(timed.ms.size());
  row.median_ms = median(timed.ms);
  row.min_ms = *std::min_element(timed.ms.begin(), timed.ms.end());
  row.max_ms = *std::max_element(timed.ms.begin(), timed.ms.end());
  row.components = components;
  if (bandwidth_bytes_per_s) {
    row.floor_ms =
        static_cast<double>(volume.voxels) * kFloorBytesPerVoxel / *bandwidth_bytes_per_s * 1e3;
  }
  row.steps = median_steps(stepped.results);
  return row;
}

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

void print_tables(const Report& report) {
  std::printf("\n%d-connectivity\n", report.connectivity);
  std::printf("%-20s %-12s %-6s %10s %10s %10s %11s %8s\n", "volume", "algorithm", "device",
              "median ms", "min ms", "max ms", "components", "x floor");
  for (const Row& row : report.rows) {
    const std::optional<double> x_floor = row.x_floor();
    std::printf("%-20s %-12s %-6s %10.3f %10.3f %10.3f %11u %8s\n", row.volume.name.c_str(),
                row.algorithm.c_str(), row.device.c_str(), row.median_ms, row.min_ms, row.max_ms,
                row.components, x_floor ? fixed(*x_floor, 1).c_str() : "-");
  }
  std::printf(
      "\nstep medians (ms) of separate runs that time each step, as the library "
      "reports them\n");
  std::printf("%-20s %-12s %9s %9s %9s %9s %9s %9s %9s %9s\n", "volume", "algorithm", "alloc",
              "init", "merge", "compress", "relabel", "final", "stats", "total");
  for (const Row& row : report.rows) {
    const StepTimings& s = row.steps;
    std::printf("%-20s %-12s %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f\n",
                row.volume.name.c_str(), row.algorithm.c_str(), s.allocation_ms,
                s.initialization_ms, s.merge_ms, s.compression_ms, s.relabel_ms,
                s.final_labeling_ms, s.statistics_ms, s.total_ms);
  }
  std::fflush(stdout);
}

// The columns bench/peers.py writes too.
constexpr const char* kCsvHeader =
    "volume,voxels,density,granularity,connectivity,algorithm,device,runs,median_ms,min_ms,max_ms,"
    "components,floor_ms,x_floor,allocation_ms,initialization_ms,merge_ms,compression_ms,"
    "relabel_ms,final_labeling_ms,statistics_ms";

void write_csv(const fs::path& path, const Report& report) {
  write_file(path, [&](std::ostream& out) {
    out << kCsvHeader << '\n';
    for (const Row& row : report.rows) {
      const StepTimings& s = row.steps;
      out << row.volume.name << ',' << row.volume.voxels << ',' << fixed(row.volume.density, 6)
          << ',' << optional_text(row.volume.granularity) << ',' << row.connectivity << ','
          << row.algorithm << ',' << row.device << ',' << row.runs << ',' << number(row.median_ms)
          << ',' << number(row.min_ms) << ',' << number(row.max_ms) << ',' << row.components << ','
          << optional_text(row.floor_ms) << ',' << optional_text(row.x_floor()) << ','
          << number(s.allocation_ms) << ',' << number(s.initialization_ms) << ','
          << number(s.merge_ms) << ',' << number(s.compression_ms) << ',' << number(s.relabel_ms)
          << ',' << number(s.final_labeling_ms) << ',' << number(s.statistics_ms) << '\n';
    }
  });
}

void write_json(const fs::path& path, const Report& report) {
  std::optional<double> gigabytes_per_s;
  if (report.bandwidth_bytes_per_s) gigabytes_per_s = *report.bandwidth_bytes_per_s / 1e9;
  write_file(path, [&](std::ostream& out) {
    out << "{\n  \"device\": " << json_string(report.device)
        << ",\n  \"device_description\": " << json_string(report.device_description)
        << ",\n  \"connectivity\": " << report.connectivity << ",\n  \"runs\": " << report.runs
        << ",\n  \"warmup\": " << report.warmup
        << ",\n  \"copy_bytes\": " << json_optional(report.copy_bytes)
        << ",\n  \"copy_bandwidth_gbps\": " << json_optional(gigabytes_per_s)
        << ",\n  \"volumes\": [";
    for (std::size_t i = 0; i < report.volumes.size(); ++i) {
      const VolumeInfo& v = report.volumes[i];
      out << (i == 0 ? "\n" : ",\n") << "    {\"name\": " << json_string(v.name)
          << ", \"extent\": [" << v.extent.x << ", " << v.extent.y << ", " << v.extent.z
          << "], \"voxels\": " << v.voxels << ", \"density\": " << fixed(v.density, 6)
          << ", \"granularity\": " << json_optional(v.granularity)
          << ", \"seed\": " << json_optional(v.seed) << ", \"order\": " << json_optional(v.order)
          << '}';
    }
    out << "\n  ],\n  \"results\": [";
    for (std::size_t i = 0; i < report.rows.size(); ++i) {
      const Row& row = report.rows[i];
      const StepTimings& s = row.steps;
      out << (i == 0 ? "\n" : ",\n") << "    {\"volume\": " << json_string(row.volume.name)
          << ", \"connectivity\": " << row.connectivity
          << ", \"algorithm\": " << json_string(row.algorithm)
          << ", \"device\": " << json_string(row.device) << ", \"runs\": " << row.runs
          << ", \"median_ms\": " << number(row.median_ms) << ", \"min_ms\": " << number(row.min_ms)
          << ", \"max_ms\": " << number(row.max_ms) << ", \"components\": " << row.components
          << ", \"floor_ms\": " << json_optional(row.floor_ms)
          << ", \"x_floor\": " << json_optional(row.x_floor()) << ", \"steps_median_ms\": {";
      const char* separator = "";
      for (const StepField& step : kSteps) {
        out << separator << json_string(step.name) << ": " << number(s.*step.milliseconds);
        separator = ", ";
      }
      out << "}}";
    }
    out << "\n  ]\n}\n";
  });
}

// ---- driver -------------------------------------------------------------------------------------

struct Settings {
  std::string device = "cuda";
  int connectivity = 26;
  std::vector<std::string> algorithms;
  int runs = 50;
  int warmup = 5;
  bool quick = false;
  std::string csv;
  std::string json;
  std::string dump_dir;
  std::vector<std::string> volumes;
  std::vector<std::string> npy;
  bool statistics = false;
};

// The algorithms named, each checked against the connectivity (volccl::validate says why one
// cannot label with it), or every algorithm that supports the connectivity.
std::vector<Algorithm> selected_algorithms(const Settings& settings) {
  std::vector<Algorithm> algorithms;
  if (settings.algorithms.empty()) {
    for (const Algorithm algorithm : volccl::all_algorithms()) {
      if (volccl::supports(algorithm, settings.connectivity)) algorithms.push_back(algorithm);
    }
    return algorithms;
  }
  for (const std::string& name : settings.algorithms) {
    volccl::LabelOptions options;
    options.algorithm = volccl::parse_algorithm(name);
    options.connectivity = settings.connectivity;
    volccl::validate({1, 1, 1}, options);
    algorithms.push_back(options.algorithm);
  }
  return algorithms;
}

// The volumes (connectivity 6, 18, 26) or images (4, 8) named, or the default ones.
std::vector<VolumeSpec> selected_volumes(const Settings& settings) {
  const bool images = volccl::is_2d_connectivity(settings.connectivity);
  std::vector<VolumeSpec> files;
  for (const std::string& argument : settings.npy) files.push_back(file_volume(argument));
  if (settings.volumes.empty()) {
    std::vector<VolumeSpec> volumes = images
                                          ? (settings.quick ? quick_images() : granularity_images())
                                          : (settings.quick        ? quick_volumes()
                                             : settings.statistics ? statistics_volumes()
                                                                   : acceptance_volumes());
    volumes.insert(volumes.end(), files.begin(), files.end());
    return volumes;
  }
  std::vector<VolumeSpec> known = images ? granularity_images() : acceptance_volumes();
  if (!images) {
    for (VolumeSpec& spec : statistics_volumes()) known.push_back(std::move(spec));
  }
  for (VolumeSpec& spec : images ? quick_images() : quick_volumes()) {
    known.push_back(std::move(spec));
  }
  std::vector<VolumeSpec> selected;
  for (const std::string& name : settings.volumes) {
    const auto found = std::find_if(known.begin(), known.end(),
                                    [&](const VolumeSpec& spec) { return spec.name == name; });
    if (found == known.end()) {
      std::string names;
      for (const VolumeSpec& spec : known) names += " " + spec.name;
      throw std::invalid_argument("unknown " + std::string(images ? "image" : "volume") + " '" +
                                  name + "' at " + std::to_string(settings.connectivity) +
                                  "-connectivity; known:" + names);
    }
    selected.push_back(*found);
  }
  selected.insert(selected.end(), files.begin(), files.end());
  return selected;
}

constexpr volccl::StatisticsStrategy kStrategies[] = {volccl::StatisticsStrategy::late,
                                                      volccl::StatisticsStrategy::fused,
                                                      volccl::StatisticsStrategy::early};

// The moments of the first algorithm's labels, measured by the CPU's own pass: what every
// strategy on the device must reproduce bit for bit.
template <typename Bench>
std::vector<volccl::ComponentMoments> reference_statistics(Bench& bench, const VolumeInfo& info,
                                                           const std::vector<Algorithm>& algorithms,
                                                           int connectivity) {
  std::vector<std::uint32_t> labels;
  const LabelResult result = bench.label_once(algorithms.front(), connectivity, labels);
  return volccl::measure(labels.data(), info.extent, result.component_count);
}

template <typename Bench>
void check_statistics(Bench& bench, const VolumeInfo& info, Algorithm algorithm, int connectivity,
                      volccl::StatisticsStrategy strategy,
                      const std::vector<volccl::ComponentMoments>& reference) {
  std::vector<volccl::ComponentMoments> moments;
  bench.measure_once(algorithm, connectivity, strategy, moments);
  const std::string what =
      info.name + ", " + volccl::to_string(algorithm) + "+" + volccl::to_string(strategy) + ": ";
  if (moments.size() != reference.size()) {
    throw std::runtime_error(what + std::to_string(moments.size()) + " rows of moments, expected " +
                             std::to_string(reference.size()));
  }
  for (std::size_t i = 0; i < moments.size(); ++i) {
    if (!(moments[i] == reference[i])) {
      throw std::runtime_error(what + "the moments of label " + std::to_string(i + 1) +
                               " differ from the CPU's measure() of the labels");
    }
  }
  std::cout << "  " << volccl::to_string(algorithm) << "+" << volccl::to_string(strategy)
            << ": moments identical to the CPU's\n";
}

template <typename Bench>
void run_all(Bench& bench, const Settings& settings, const std::vector<VolumeSpec>& volumes,
             const std::vector<Algorithm>& algorithms, Report& report) {
  std::optional<fs::path> dump_dir;
  if (!settings.dump_dir.empty()) {
    dump_dir = settings.dump_dir;
    fs::create_directories(*dump_dir);
  }
  for (const VolumeSpec& spec : volumes) {
    const volccl::data::Volume volume = generate(spec);
    const VolumeInfo info = describe(spec, volume);
    report.volumes.push_back(info);
    std::cout << info.name << ": " << info.extent.to_string() << ", density "
              << fixed(info.density, 4);
    if (info.granularity) std::cout << ", granularity " << *info.granularity;
    if (info.seed) std::cout << ", MT19937 seed " << *info.seed;
    if (info.order) std::cout << ", Hilbert order " << *info.order;
    std::cout << '\n';
    if (dump_dir) {
      write_npy(*dump_dir / (info.name + ".npy"), "|u1", info, volume.voxels.data(), info.voxels);
    }
    bench.set_volume(volume.voxels.data(), volume.extent);
    const std::uint32_t components =
        check_algorithms(bench, info, volume, algorithms, settings.connectivity, dump_dir);
    const std::vector<volccl::ComponentMoments> reference_moments =
        settings.statistics ? reference_statistics(bench, info, algorithms, settings.connectivity)
                            : std::vector<volccl::ComponentMoments>();
    for (const Algorithm algorithm : algorithms) {
      std::vector<std::optional<volccl::StatisticsStrategy>> variants = {std::nullopt};
      if (settings.statistics) {
        for (const auto strategy : kStrategies) {
          if (!volccl::supports(strategy, algorithm)) continue;
          check_statistics(bench, info, algorithm, settings.connectivity, strategy,
                           reference_moments);
          variants.push_back(strategy);
        }
      }
      for (const auto& statistics : variants) {
        const std::string name =
            volccl::to_string(algorithm) + (statistics ? "+" + volccl::to_string(*statistics) : "");
        const TimedRuns timed = bench.time(algorithm, settings.connectivity, settings.runs,
                                           settings.warmup, false, statistics);
        const TimedRuns stepped =
            bench.time(algorithm, settings.connectivity, std::min(settings.runs, kSteppedRuns),
                       std::min(settings.warmup, 1), true, statistics);
        report.rows.push_back(summarize(info, name, settings.connectivity, settings.device, timed,
                                        stepped, components, report.bandwidth_bytes_per_s));
        std::cout << "  " << name << ": median " << fixed(report.rows.back().median_ms, 3)
                  << " ms over " << settings.runs << " runs\n"
                  << std::flush;
      }
    }
  }
}

void run(const Settings& settings) {
  const std::vector<VolumeSpec> volumes = selected_volumes(settings);
  const std::vector<Algorithm> algorithms = selected_algorithms(settings);
  Report report;
  report.device = settings.device;
  report.connectivity = settings.connectivity;
  report.runs = settings.runs;
  report.warmup = settings.warmup;
  if (settings.device == "cuda") {
#ifdef VOLCCL_HAS_CUDA
    volccl::bench::CudaBench bench;
    report.device_description = bench.device_description();
    std::cout << "device: " << report.device_description << ", " << settings.connectivity
              << "-connectivity\n";
    const volccl::bench::CopyRuns copies = bench.time_copies(kCopyBytes, kCopyRuns);
    report.copy_bytes = copies.bytes;
    report.bandwidth_bytes_per_s =
        2.0 * static_cast<double>(copies.bytes) / median(copies.ms) * 1e3;
    std::cout << "device-to-device copy of " << copies.bytes << " bytes, median of " << kCopyRuns
              << ": " << fixed(median(copies.ms), 3) << " ms, "
              << fixed(*report.bandwidth_bytes_per_s / 1e9, 1)
              << " GB/s (read + written); floor = voxels * " << kFloorBytesPerVoxel
              << " bytes at this bandwidth\n";
    run_all(bench, settings, volumes, algorithms, report);
#else
    throw volccl::NoCudaDevice("this volccl-bench was built without CUDA; use --device cpu");
#endif
  } else {
    CpuBench bench;
    report.device_description =
        "CPU, " + std::to_string(std::thread::hardware_concurrency()) + " hardware threads";
    std::cout << "device: " << report.device_description << ", " << settings.connectivity
              << "-connectivity\n";
    run_all(bench, settings, volumes, algorithms, report);
  }
  print_tables(report);
  if (!settings.csv.empty()) write_csv(settings.csv, report);
  if (!settings.json.empty()) write_json(settings.json, report);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "volccl-bench: times volccl's labeling algorithms on the acceptance volumes (input on the "
      "device, output allocation counted, median of the runs) and checks their labels."};
  Settings settings;
  app.add_option("--device", settings.device, "cuda or cpu")
      ->check(CLI::IsMember({"cuda", "cpu"}))
      ->capture_default_str();
  app.add_option("--connectivity", settings.connectivity,
                 "6, 18 or 26 for volumes (voxels touching by a face, also by an edge, also by "
                 "a corner); 4 or 8 for the 2D images (pixels touching by an edge, also by a "
                 "corner)")
      ->check(CLI::IsMember({4, 8, 6, 18, 26}))
      ->capture_default_str();
  app.add_option("--algorithms", settings.algorithms,
                 "comma-separated: buf,buf-ic,bke,bke-ic,uf,ke,ha4,ha4-64 (default: all that "
                 "support the connectivity); the first one's labels are dumped and the others "
                 "compared with them")
      ->delimiter(',');
  app.add_option("--runs", settings.runs, "timed runs per algorithm and volume (5 with --quick)")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  app.add_option("--warmup", settings.warmup, "untimed runs before them (1 with --quick)")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  app.add_flag("--quick", settings.quick,
               "small volumes (random-64-d30-g1, hilbert-32-o4) or images (image-256-d50-g1, "
               "image-512-d50-g1) and few runs, for CI");
  app.add_option("--csv", settings.csv, "write the results as CSV");
  app.add_option("--json", settings.json, "write the results, volumes and bandwidth as JSON");
  app.add_option("--dump-dir", settings.dump_dir,
                 "write each volume as DIR/NAME.npy (uint8, shape (z, y, x)) and the first "
                 "algorithm's labels as DIR/NAME.cCONNECTIVITY.labels.npy (uint32), for "
                 "bench/peers.py");
  app.add_option("--volumes", settings.volumes,
                 "comma-separated names: random-256-d30-g1, random-256-d30-g8, "
                 "random-512-d30-g1, random-512-d30-g8, hilbert-128-o6 (default), "
                 "random-64-d30-g1, hilbert-32-o4 (default with --quick); at 4 and 8 "
                 "image-2048-dD-gG for D = 0, 10, ..., 100 and G = 1, 4, 16 (default), "
                 "image-256-d50-g1, image-512-d50-g1 (default with --quick)")
      ->delimiter(',');
  app.add_option("--npy", settings.npy,
                 "NAME=PATH,...: also time these masks (uint8 .npy of shape (z, y, x) or (y, x); "
                 "non-zero is foreground), e.g. the real volumes bench/real_volumes.py writes")
      ->delimiter(',');
  app.add_flag("--statistics", settings.statistics,
               "also time labeling + component statistics with each strategy the algorithm has "
               "(rows ALGORITHM+late, +fused, +early), after checking that each gives the CPU's "
               "moments bit for bit; the default volumes become random-512-dD-gG for D = 5, 30, "
               "60 and G = 1, 8 and hilbert-128-o6");
  CLI11_PARSE(app, argc, argv);
  if (settings.quick) {
    if (app.count("--runs") == 0) settings.runs = 5;
    if (app.count("--warmup") == 0) settings.warmup = 1;
  }
  try {
    run(settings);
  } catch (const std::exception& error) {
    // The library's messages start with "volccl: ", which the prefix below already says.
    std::string message = error.what();
    const std::string library_prefix = "volccl: ";
    if (message.rfind(library_prefix, 0) == 0) message.erase(0, library_prefix.size());
    std::cout << std::flush;
    std::cerr << "volccl-bench: error: " << message << '\n';
    return 1;
  }
  return 0;
}
