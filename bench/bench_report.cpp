#include "bench_report.h"

#include <cstdio>
#include <sstream>
#include <type_traits>

#include "volccl/detail/json_string.h"
#include "write_file.h"

namespace volccl::bench {
namespace {

using volccl::detail::json_string;

// Six significant digits: enough for every timing and floor, small or large.
std::string number(double value) {
  std::ostringstream text;
  text.precision(6);
  text << value;
  return text.str();
}

// The value, or "" (CSV) / "null" (JSON) when there is none.
template <typename T>
std::string optional_text(const std::optional<T>& value, const char* none = "") {
  if (!value) return none;
  if constexpr (std::is_floating_point_v<T>) {
    return number(*value);
  } else {
    return std::to_string(*value);
  }
}

template <typename T>
std::string json_optional(const std::optional<T>& value) {
  return optional_text(value, "null");
}

struct StepField {
  const char* name;
  double StepTimings::*milliseconds;
};

// The steps of the CSV's columns, in order.
constexpr StepField kCsvSteps[] = {{"allocation", &StepTimings::allocation_ms},
                                   {"initialization", &StepTimings::initialization_ms},
                                   {"merge", &StepTimings::merge_ms},
                                   {"compression", &StepTimings::compression_ms},
                                   {"relabel", &StepTimings::relabel_ms},
                                   {"final_labeling", &StepTimings::final_labeling_ms},
                                   {"statistics", &StepTimings::statistics_ms}};

std::optional<double> step(const Row& row, double StepTimings::*milliseconds) {
  if (!row.steps) return std::nullopt;
  return (*row.steps).*milliseconds;
}

}  // namespace

std::string fixed(double value, int decimals) {
  std::ostringstream text;
  text.setf(std::ios::fixed);
  text.precision(decimals);
  text << value;
  return text.str();
}

void print_tables(const Report& report) {
  std::printf("\n%d-connectivity\n", report.connectivity);
  std::printf("%-22s %-12s %-6s %10s %10s %10s %11s %8s\n", "volume", "algorithm", "device",
              "median ms", "min ms", "max ms", "components", "x floor");
  for (const Row& row : report.rows) {
    const std::optional<double> x_floor = row.x_floor();
    std::printf("%-22s %-12s %-6s %10.3f %10.3f %10.3f %11u %8s\n", row.volume.name.c_str(),
                row.algorithm.c_str(), row.device.c_str(), row.median_ms, row.min_ms, row.max_ms,
                row.components, x_floor ? fixed(*x_floor, 1).c_str() : "-");
  }
  bool any_steps = false;
  for (const Row& row : report.rows) any_steps |= row.steps.has_value();
  if (any_steps) {
    std::printf(
        "\nstep medians (ms) of separate runs that time each step, as the library reports them\n");
    std::printf("%-22s %-12s %9s %9s %9s %9s %9s %9s %9s %9s\n", "volume", "algorithm", "alloc",
                "init", "merge", "compress", "relabel", "final", "stats", "total");
    for (const Row& row : report.rows) {
      if (!row.steps) continue;
      const StepTimings& s = *row.steps;
      std::printf("%-22s %-12s %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f\n",
                  row.volume.name.c_str(), row.algorithm.c_str(), s.allocation_ms,
                  s.initialization_ms, s.merge_ms, s.compression_ms, s.relabel_ms,
                  s.final_labeling_ms, s.statistics_ms, s.total_ms);
    }
  }
  bool any_transfers = false;
  for (const VolumeInfo& volume : report.volumes) any_transfers |= volume.upload_ms.has_value();
  if (any_transfers) {
    std::printf("\ntransfers from and to pageable host memory, medians (not in the times above)\n");
    std::printf("%-22s %12s %12s\n", "volume", "mask up ms", "labels down");
    for (const VolumeInfo& volume : report.volumes) {
      if (!volume.upload_ms || !volume.download_ms) continue;
      std::printf("%-22s %12.3f %12.3f\n", volume.name.c_str(), *volume.upload_ms,
                  *volume.download_ms);
    }
  }
  std::fflush(stdout);
}

void write_csv(const std::filesystem::path& path, const Report& report) {
  write_file(path, [&](std::ostream& out) {
    out << "volume,dataset,voxels,density,granularity,x,connectivity,algorithm,device,runs,"
           "median_ms,min_ms,max_ms,components,iterations,floor_ms,x_floor,upload_ms,download_ms";
    for (const StepField& field : kCsvSteps) out << ',' << field.name << "_ms";
    out << '\n';
    for (const Row& row : report.rows) {
      const VolumeInfo& v = row.volume;
      out << v.name << ',' << v.dataset << ',' << v.voxels << ',' << fixed(v.density, 6) << ','
          << optional_text(v.granularity) << ',' << optional_text(v.x) << ',' << row.connectivity
          << ',' << row.algorithm << ',' << row.device << ',' << row.runs << ','
          << number(row.median_ms) << ',' << number(row.min_ms) << ',' << number(row.max_ms) << ','
          << row.components << ',' << optional_text(row.iterations) << ','
          << optional_text(row.floor_ms) << ',' << optional_text(row.x_floor()) << ','
          << optional_text(v.upload_ms) << ',' << optional_text(v.download_ms);
      for (const StepField& field : kCsvSteps) {
        out << ',' << optional_text(step(row, field.milliseconds));
      }
      out << '\n';
    }
  });
}

void write_json(const std::filesystem::path& path, const Report& report) {
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
          << ", \"dataset\": " << json_string(v.dataset) << ", \"extent\": [" << v.extent.x << ", "
          << v.extent.y << ", " << v.extent.z << "], \"voxels\": " << v.voxels
          << ", \"density\": " << fixed(v.density, 6)
          << ", \"granularity\": " << json_optional(v.granularity)
          << ", \"seed\": " << json_optional(v.seed) << ", \"order\": " << json_optional(v.order)
          << ", \"x\": " << json_optional(v.x) << ", \"upload_ms\": " << json_optional(v.upload_ms)
          << ", \"download_ms\": " << json_optional(v.download_ms) << '}';
    }
    out << "\n  ],\n  \"results\": [";
    for (std::size_t i = 0; i < report.rows.size(); ++i) {
      const Row& row = report.rows[i];
      out << (i == 0 ? "\n" : ",\n") << "    {\"volume\": " << json_string(row.volume.name)
          << ", \"connectivity\": " << row.connectivity
          << ", \"algorithm\": " << json_string(row.algorithm)
          << ", \"device\": " << json_string(row.device) << ", \"runs\": " << row.runs
          << ", \"median_ms\": " << number(row.median_ms) << ", \"min_ms\": " << number(row.min_ms)
          << ", \"max_ms\": " << number(row.max_ms) << ", \"components\": " << row.components
          << ", \"iterations\": " << json_optional(row.iterations)
          << ", \"floor_ms\": " << json_optional(row.floor_ms)
          << ", \"x_floor\": " << json_optional(row.x_floor()) << ", \"steps_median_ms\": ";
      if (row.steps) {
        out << '{';
        const char* separator = "";
        for (const StepField& field : kCsvSteps) {
          out << separator << json_string(field.name) << ": "
              << number((*row.steps).*field.milliseconds);
          separator = ", ";
        }
        out << ", \"total\": " << number(row.steps->total_ms) << '}';
      } else {
        out << "null";
      }
      out << '}';
    }
    out << "\n  ]\n}\n";
  });
}

}  // namespace volccl::bench
