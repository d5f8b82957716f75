#include "bench_run.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "bench_report.h"
#include "timed_runs.h"
#include "volccl/volccl.h"
#ifdef VOLCCL_HAS_CUDA
#include "cuda_bench.h"
#endif

namespace volccl::bench {
namespace {

namespace fs = std::filesystem;

// Bytes of the memory floor per voxel: the uint8 mask read once, the uint32 labels written once.
constexpr double kFloorBytesPerVoxel = 1 + 4;
// The device-to-device copy that measures the bandwidth of the floor.
constexpr std::uint64_t kCopyBytes = 1ull << 30;
constexpr int kCopyRuns = 20;
constexpr int kTransferRuns = 5;

std::string coordinates(std::uint64_t index, Extent3 extent) {
  return "(x " + std::to_string(index % extent.x) + ", y " +
         std::to_string(index / extent.x % extent.y) + ", z " +
         std::to_string(index / (extent.x * extent.y)) + ")";
}

double StepTimings::*const kAllSteps[] = {
    &StepTimings::allocation_ms,     &StepTimings::upload_ms,      &StepTimings::initialization_ms,
    &StepTimings::merge_ms,          &StepTimings::compression_ms, &StepTimings::relabel_ms,
    &StepTimings::final_labeling_ms, &StepTimings::statistics_ms,  &StepTimings::download_ms,
    &StepTimings::total_ms};

// The median of each step over the runs.
StepTimings median_steps(const std::vector<LabelResult>& results) {
  StepTimings medians;
  for (double StepTimings::*const step : kAllSteps) {
    std::vector<double> values;
    for (const LabelResult& result : results) values.push_back(result.timings.*step);
    medians.*step = median(std::move(values));
  }
  return medians;
}

bool little_endian() {
  const std::uint16_t probe = 1;
  return *reinterpret_cast<const unsigned char*>(&probe) == 1;
}

// ---- the CPU backend ----------------------------------------------------------------------------

// The labels of one timed run, allocated as NumPy allocates a large array (2 MiB aligned, huge
// pages asked for with madvise), so that volccl's output costs what cc3d's and scipy's NumPy
// outputs cost in bench/peers.py: with 4 KiB pages the page faults alone take about as long as
// labeling a granular volume.
class HostLabels {
 public:
  explicit HostLabels(std::uint64_t voxels) {
    constexpr std::size_t kHugePage = std::size_t{1} << 21;
    const std::size_t bytes =
        (std::max<std::size_t>(voxels * sizeof(std::uint32_t), 1) + kHugePage - 1) / kHugePage *
        kHugePage;
    data_ = static_cast<std::uint32_t*>(std::aligned_alloc(kHugePage, bytes));
    if (data_ == nullptr) throw std::bad_alloc();
#if defined(__linux__)
    madvise(data_, bytes, MADV_HUGEPAGE);
#endif
  }
  HostLabels(const HostLabels&) = delete;
  HostLabels& operator=(const HostLabels&) = delete;
  ~HostLabels() { std::free(data_); }
  std::uint32_t* get() const { return data_; }

 private:
  std::uint32_t* data_;
};

// volccl::label on host memory; each timed run allocates its labels, as the CUDA runs do.
class CpuBench {
 public:
  explicit CpuBench(unsigned threads) : threads_(threads) {}

  void set_volume(const std::uint8_t* mask, Extent3 extent) {
    mask_ = mask;
    extent_ = extent;
  }

  // Host memory needs no transfers.
  std::optional<TransferRuns> time_transfers(const std::uint8_t*, int) { return std::nullopt; }

  LabelResult label_once(Algorithm algorithm, int connectivity,
                         std::vector<std::uint32_t>& labels) {
    labels.assign(extent_.voxel_count(), 0xFFFFFFFFu);
    return volccl::label(mask_, extent_, labels.data(), options(algorithm, connectivity));
  }

  LabelResult measure_once(Algorithm algorithm, int connectivity, StatisticsStrategy strategy,
                           std::vector<ComponentMoments>& moments) {
    std::vector<std::uint32_t> labels(extent_.voxel_count());
    LabelOptions label_options = options(algorithm, connectivity);
    label_options.statistics_strategy = strategy;
    return volccl::label(mask_, extent_, labels.data(), moments, label_options);
  }

  TimedRuns time(Algorithm algorithm, int connectivity, int runs, int warmup, bool step_timings,
                 std::optional<StatisticsStrategy> statistics = std::nullopt) {
    LabelOptions label_options = options(algorithm, connectivity);
    label_options.step_timings = step_timings;
    if (statistics) label_options.statistics_strategy = *statistics;
    TimedRuns timed;
    for (int run = -warmup; run < runs; ++run) {
      const auto start = std::chrono::steady_clock::now();
      std::optional<HostLabels> labels(std::in_place, extent_.voxel_count());
      LabelResult result;
      if (statistics) {
        std::vector<ComponentMoments> moments;
        result = volccl::label(mask_, extent_, labels->get(), moments, label_options);
      } else {
        result = volccl::label(mask_, extent_, labels->get(), label_options);
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
  LabelOptions options(Algorithm algorithm, int connectivity) const {
    LabelOptions options;
    options.algorithm = algorithm;
    options.connectivity = connectivity;
    options.backend = Backend::cpu;
    options.cpu_threads = threads_;
    return options;
  }

  unsigned threads_;
  const std::uint8_t* mask_ = nullptr;
  Extent3 extent_;
};

// ---- checks -------------------------------------------------------------------------------------

// Throws unless `labels` keep the contract: background 0, foreground 1..count, and the labels
// first met in raster order are 1, 2, ..., count.
void check_numbering(const VolumeInfo& info, Algorithm algorithm, const data::Volume& volume,
                     const std::vector<std::uint32_t>& labels, std::uint32_t count) {
  const std::string what = info.name + ", " + to_string(algorithm) + ": ";
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
        info.name + ": " + to_string(algorithm) + " labels differ from " +
        to_string(reference_algorithm) + " at " + std::to_string(differing) +
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
std::uint32_t check_algorithms(Bench& bench, const VolumeInfo& info, const data::Volume& volume,
                               const Settings& settings, const std::optional<fs::path>& dump_dir) {
  std::vector<std::uint32_t> reference;
  std::vector<std::uint32_t> labels;
  std::uint32_t count = 0;
  const std::vector<Algorithm>& algorithms = settings.algorithms;
  for (std::size_t i = 0; i < algorithms.size(); ++i) {
    std::vector<std::uint32_t>& target = i == 0 ? reference : labels;
    const LabelResult result = bench.label_once(algorithms[i], settings.connectivity, target);
    check_numbering(info, algorithms[i], volume, target, result.component_count);
    if (i == 0) {
      count = result.component_count;
      if (dump_dir) {
        write_npy(labels_file(*dump_dir, info, settings.connectivity),
                  little_endian() ? "<u4" : ">u4", info.dimensions, info.extent, reference.data(),
                  info.voxels * sizeof(std::uint32_t));
      }
    } else {
      check_identical(info, algorithms[0], reference, algorithms[i], labels);
    }
    std::cout << "  " << to_string(algorithms[i]) << ": labels OK, " << result.component_count
              << " components\n";
  }
  return count;
}

// The moments of the first algorithm's labels, measured by the CPU's own pass: what every
// strategy on the device must reproduce bit for bit.
template <typename Bench>
std::vector<ComponentMoments> reference_statistics(Bench& bench, const VolumeInfo& info,
                                                   const Settings& settings) {
  std::vector<std::uint32_t> labels;
  const LabelResult result =
      bench.label_once(settings.algorithms.front(), settings.connectivity, labels);
  return measure(labels.data(), info.extent, result.component_count);
}

template <typename Bench>
void check_statistics(Bench& bench, const VolumeInfo& info, Algorithm algorithm, int connectivity,
                      StatisticsStrategy strategy, const std::vector<ComponentMoments>& reference) {
  std::vector<ComponentMoments> moments;
  bench.measure_once(algorithm, connectivity, strategy, moments);
  const std::string what =
      info.name + ", " + to_string(algorithm) + "+" + to_string(strategy) + ": ";
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
  std::cout << "  " << to_string(algorithm) << "+" << to_string(strategy)
            << ": moments identical to the CPU's\n";
}

// ---- rows ---------------------------------------------------------------------------------------

Row make_row(const VolumeInfo& volume, const std::string& algorithm, const std::string& device,
             int connectivity, const std::vector<double>& ms, std::uint32_t components) {
  Row row;
  row.volume = volume;
  row.connectivity = connectivity;
  row.algorithm = algorithm;
  row.device = device;
  row.runs = static_cast<int>(ms.size());
  row.median_ms = median(ms);
  row.min_ms = *std::min_element(ms.begin(), ms.end());
  row.max_ms = *std::max_element(ms.begin(), ms.end());
  row.components = components;
  return row;
}

void check_counts(const VolumeInfo& volume, const std::string& algorithm, const TimedRuns& runs,
                  std::uint32_t components) {
  for (std::size_t run = 0; run < runs.results.size(); ++run) {
    if (runs.results[run].component_count != components) {
      throw std::runtime_error(volume.name + ", " + algorithm + ": run " + std::to_string(run) +
                               " found " + std::to_string(runs.results[run].component_count) +
                               " components, the check found " + std::to_string(components));
    }
  }
}

VolumeInfo describe(const BenchVolume& spec, const data::Volume& volume) {
  VolumeInfo info;
  info.name = spec.name;
  info.dataset = spec.dataset;
  info.extent = volume.extent;
  info.voxels = volume.extent.voxel_count();
  info.dimensions = volume.extent.z == 1 ? 2 : 3;
  const auto foreground = std::count_if(volume.voxels.begin(), volume.voxels.end(),
                                        [](std::uint8_t voxel) { return voxel != 0; });
  info.density = info.voxels == 0 ? 0 : static_cast<double>(foreground) / info.voxels;
  info.granularity = spec.granularity;
  info.seed = spec.seed;
  info.order = spec.order;
  info.x = spec.x;
  return info;
}

constexpr StatisticsStrategy kStrategies[] = {StatisticsStrategy::late, StatisticsStrategy::fused,
                                              StatisticsStrategy::early};

// Checks and times every algorithm (and statistics strategy) on the volume; returns its
// component count.
template <typename Bench>
std::uint32_t run_volume(Bench& bench, const Settings& settings, const data::Volume& volume,
                         const VolumeInfo& info, const std::optional<fs::path>& dump_dir,
                         Report& report) {
  const std::uint32_t components = check_algorithms(bench, info, volume, settings, dump_dir);
  const std::vector<ComponentMoments> reference_moments =
      settings.statistics ? reference_statistics(bench, info, settings)
                          : std::vector<ComponentMoments>();
  for (const Algorithm algorithm : settings.algorithms) {
    std::vector<std::optional<StatisticsStrategy>> variants = {std::nullopt};
    if (settings.statistics) {
      for (const auto strategy : kStrategies) {
        if (!supports(strategy, algorithm)) continue;
        check_statistics(bench, info, algorithm, settings.connectivity, strategy,
                         reference_moments);
        variants.push_back(strategy);
      }
    }
    for (const auto& statistics : variants) {
      const std::string name =
          to_string(algorithm) + (statistics ? "+" + to_string(*statistics) : "");
      const TimedRuns timed = bench.time(algorithm, settings.connectivity, settings.runs,
                                         settings.warmup, false, statistics);
      check_counts(info, name, timed, components);
      Row row = make_row(info, name, settings.device, settings.connectivity, timed.ms, components);
      row.iterations = timed.results.front().iterations;
      if (settings.steps) {
        const TimedRuns stepped = bench.time(algorithm, settings.connectivity, settings.step_runs,
                                             std::min(settings.warmup, 1), true, statistics);
        check_counts(info, name, stepped, components);
        row.steps = median_steps(stepped.results);
      }
      if (report.bandwidth_bytes_per_s) {
        row.floor_ms = static_cast<double>(info.voxels) * kFloorBytesPerVoxel /
                       *report.bandwidth_bytes_per_s * 1e3;
      }
      report.rows.push_back(row);
      std::cout << "  " << name << ": median " << fixed(row.median_ms, 3) << " ms over "
                << settings.runs << " runs\n"
                << std::flush;
    }
  }
  return components;
}

// Times each peer that can label at the connectivity; its count must be volccl's.
void run_peers(const std::vector<CpuPeer>& peers, const Settings& settings,
               const data::Volume& volume, const VolumeInfo& info, std::uint32_t components,
               Report& report) {
  for (const CpuPeer& peer : peers) {
    const std::string why_not = peer.unsupported(settings.connectivity);
    if (!why_not.empty()) {
      std::cout << "  " << peer.name << ": skipped, " << why_not << '\n';
      continue;
    }
    std::vector<double> ms;
    for (int run = 0; run < settings.peer_runs; ++run) {
      const auto start = std::chrono::steady_clock::now();
      const std::uint32_t count = peer.label(volume, settings.connectivity);
      const std::chrono::duration<double, std::milli> elapsed =
          std::chrono::steady_clock::now() - start;
      if (count != components) {
        throw std::runtime_error(info.name + ": " + peer.name + " finds " + std::to_string(count) +
                                 " components, volccl " + std::to_string(components));
      }
      ms.push_back(elapsed.count());
    }
    report.rows.push_back(make_row(info, peer.name, "cpu", settings.connectivity, ms, components));
    std::cout << "  " << peer.name << " (CPU): median " << fixed(report.rows.back().median_ms, 1)
              << " ms over " << ms.size() << " runs, " << components << " components\n"
              << std::flush;
  }
}

template <typename Bench>
void run_all(Bench& bench, const Settings& settings, const std::vector<BenchVolume>& volumes,
             const std::vector<CpuPeer>& peers, Report& report) {
  std::optional<fs::path> dump_dir;
  if (!settings.dump_dir.empty()) {
    dump_dir = settings.dump_dir;
    fs::create_directories(*dump_dir);
  }
  for (const BenchVolume& spec : volumes) {
    const data::Volume volume = spec.load();
    VolumeInfo info = describe(spec, volume);
    std::cout << info.name << ": " << info.extent.to_string() << ", density "
              << fixed(info.density, 4);
    if (info.granularity) std::cout << ", granularity " << *info.granularity;
    if (info.seed) std::cout << ", MT19937 seed " << *info.seed;
    if (info.order) std::cout << ", Hilbert order " << *info.order;
    std::cout << '\n';
    if (dump_dir) {
      write_npy(*dump_dir / (info.name + ".npy"), "|u1", info.dimensions, info.extent,
                volume.voxels.data(), info.voxels);
    }
    bench.set_volume(volume.voxels.data(), volume.extent);
    if (const std::optional<TransferRuns> transfers =
            bench.time_transfers(volume.voxels.data(), kTransferRuns)) {
      info.upload_ms = median(transfers->upload_ms);
      info.download_ms = median(transfers->download_ms);
    }
    const std::uint32_t components = run_volume(bench, settings, volume, info, dump_dir, report);
    if (spec.with_peers) run_peers(peers, settings, volume, info, components, report);
    report.volumes.push_back(info);
  }
}

}  // namespace

void run(const Settings& settings, const std::vector<BenchVolume>& volumes,
         const std::vector<CpuPeer>& peers) {
  if (settings.algorithms.empty()) throw std::invalid_argument("no algorithm to time");
  Report report;
  report.device = settings.device;
  report.connectivity = settings.connectivity;
  report.runs = settings.runs;
  report.warmup = settings.warmup;
  const std::string threads =
      std::to_string(std::thread::hardware_concurrency()) + " hardware threads";
  if (settings.device == "cuda") {
#ifdef VOLCCL_HAS_CUDA
    CudaBench bench;
    report.device_description = bench.device_description() + "; CPU peers on " + threads;
    std::cout << "device: " << report.device_description << ", " << settings.connectivity
              << "-connectivity\n";
    const CopyRuns copies = bench.time_copies(kCopyBytes, kCopyRuns);
    report.copy_bytes = copies.bytes;
    report.bandwidth_bytes_per_s =
        2.0 * static_cast<double>(copies.bytes) / median(copies.ms) * 1e3;
    std::cout << "device-to-device copy of " << copies.bytes << " bytes, median of " << kCopyRuns
              << ": " << fixed(median(copies.ms), 3) << " ms, "
              << fixed(*report.bandwidth_bytes_per_s / 1e9, 1)
              << " GB/s (read + written); floor = voxels * " << kFloorBytesPerVoxel
              << " bytes at this bandwidth\n";
    run_all(bench, settings, volumes, peers, report);
#else
    throw NoCudaDevice("this volccl was built without CUDA; use --device cpu");
#endif
  } else {
    CpuBench bench(settings.cpu_threads);
    report.device_description =
        "CPU, " + threads + ", volccl on " +
        (settings.cpu_threads == 0 ? "all of them" : std::to_string(settings.cpu_threads));
    std::cout << "device: " << report.device_description << ", " << settings.connectivity
              << "-connectivity\n";
    run_all(bench, settings, volumes, peers, report);
  }
  print_tables(report);
  if (!settings.csv.empty()) write_csv(settings.csv, report);
  if (!settings.json.empty()) write_json(settings.json, report);
}

}  // namespace volccl::bench
