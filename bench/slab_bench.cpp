// volccl-slab-bench: volccl::label on host memory through the GPU, whole and in slabs under a
// memory budget, against the host<->device copy floor measured in the same run (the bytes that
// must cross at the pinned bandwidth). Each case is checked first: the budgeted labels must
// equal the unbudgeted ones and keep the numbering contract. Host code against
// <cuda_runtime.h>, built with CUDA only.
//
//   volccl-slab-bench --volumes random-2048-d30-g4,connectomics-2048 --connectivity 26,6
//                     --budget 17179869184 --runs 5 --connectomics PATH.npy.gz
//                     [--slab-voxels 1073741824,536870912] [--caller-pages huge|4k]
//
// --budget 0 leaves the budgeted cases out. --slab-voxels adds cases of slabs of at most that many
// voxels within the device's free memory. The step columns, of the first (checked) run, are summed
// over the slabs (two streams run at once). The caller's mask and labels are allocated as NumPy
// allocates a large array (2 MiB pages asked for), or with --caller-pages 4k as new[] does.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "bench_volumes.h"
#include "runtime/page_array.h"
#include "timed_runs.h"
#include "volccl/data/generators.h"
#include "volccl/volccl.h"

namespace {

using volccl::Extent3;
using volccl::bench::median;

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
  }
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::vector<std::string> split(const std::string& text, char separator = ',') {
  std::vector<std::string> parts;
  std::stringstream stream(text);
  for (std::string part; std::getline(stream, part, separator);) {
    if (!part.empty()) parts.push_back(part);
  }
  return parts;
}

// Pinned host<->device bandwidth, bytes per second, each way: median of five 1 GiB copies.
struct PinnedBandwidth {
  double upload = 0, download = 0;
};

PinnedBandwidth measure_pinned_bandwidth() {
  constexpr std::size_t kBytes = std::size_t{1} << 30;
  void* host = nullptr;
  void* device = nullptr;
  check(cudaHostAlloc(&host, kBytes, cudaHostAllocDefault), "cudaHostAlloc");
  check(cudaMalloc(&device, kBytes), "cudaMalloc");
  std::vector<double> up, down;
  for (int run = -1; run < 5; ++run) {
    auto start = std::chrono::steady_clock::now();
    check(cudaMemcpy(device, host, kBytes, cudaMemcpyHostToDevice), "upload");
    const double up_s = seconds_since(start);
    start = std::chrono::steady_clock::now();
    check(cudaMemcpy(host, device, kBytes, cudaMemcpyDeviceToHost), "download");
    const double down_s = seconds_since(start);
    if (run >= 0) {
      up.push_back(kBytes / up_s);
      down.push_back(kBytes / down_s);
    }
  }
  check(cudaFree(device), "cudaFree");
  check(cudaFreeHost(host), "cudaFreeHost");
  return {median(up), median(down)};
}

// The caller's array of `count` values, uninitialized: on 2 MiB pages, or from new[].
template <class T>
class CallerArray {
 public:
  CallerArray(std::uint64_t count, bool huge_pages)
      : huge_(huge_pages ? volccl::detail::PageArray<T>(count) : volccl::detail::PageArray<T>()),
        plain_(huge_pages ? nullptr : new T[count]) {}
  T* data() const { return plain_ ? plain_.get() : huge_.get(); }

 private:
  volccl::detail::PageArray<T> huge_;
  std::unique_ptr<T[]> plain_;
};

// "random-SIDE-dD-gG" or "connectomics-SIDE" (the 512^3 segmentation's non-zero voxels, tiled).
volccl::data::Volume make_volume(const std::string& name, const std::string& connectomics) {
  const std::vector<std::string> parts = split(name, '-');
  if (parts.size() == 4 && parts[0] == "random") {
    const std::uint64_t side = std::stoull(parts[1]);
    const double density = std::stod(parts[2].substr(1)) / 100;
    const unsigned granularity = static_cast<unsigned>(std::stoul(parts[3].substr(1)));
    return volccl::data::random_granular({side, side, side}, density, granularity, 1);
  }
  if (parts.size() == 2 && parts[0] == "connectomics") {
    const std::uint64_t side = std::stoull(parts[1]);
    const volccl::data::Volume tile = volccl::bench::read_npy(connectomics);
    const Extent3 t = tile.extent;
    if (side % t.x != 0 || side % t.y != 0 || side % t.z != 0) {
      throw std::runtime_error(name + ": " + std::to_string(side) + " is not a multiple of " +
                               t.to_string());
    }
    volccl::data::Volume volume{{side, side, side}, {}};
    volume.voxels.resize(volume.extent.voxel_count());
    for (std::uint64_t z = 0; z < side; ++z) {
      for (std::uint64_t y = 0; y < side; ++y) {
        const std::uint8_t* row = tile.voxels.data() + ((z % t.z) * t.y + y % t.y) * t.x;
        std::uint8_t* out = volume.voxels.data() + (z * side + y) * side;
        for (std::uint64_t x = 0; x < side; x += t.x) std::copy(row, row + t.x, out + x);
      }
    }
    return volume;
  }
  throw std::runtime_error("unknown volume " + name +
                           ": use random-SIDE-dD-gG or connectomics-SIDE");
}

// Background 0, foreground 1..count, first met in raster order 1, 2, ..., count.
void check_numbering(const std::uint8_t* mask, std::uint64_t voxels, const std::uint32_t* labels,
                     std::uint64_t count, const std::string& what) {
  std::uint64_t next = 1;
  for (std::uint64_t i = 0; i < voxels; ++i) {
    const std::uint64_t label = labels[i];
    const bool foreground = mask[i] != 0;
    if (foreground != (label != 0) || label > next || label > count) {
      throw std::runtime_error(what + ": label " + std::to_string(label) + " at voxel " +
                               std::to_string(i) + " breaks the numbering");
    }
    if (label == next) ++next;
  }
  if (next != count + 1) throw std::runtime_error(what + ": the labels stop before the count");
}

struct Case {
  std::string mode;
  std::uint64_t budget;
  std::uint64_t slab_voxels;
};

}  // namespace

int main(int argc, char** argv) {
  try {
    std::vector<std::string> volumes = {"random-1024-d30-g4"};
    std::vector<int> connectivities = {26, 6};
    std::uint64_t budget = std::uint64_t{16} << 30;
    int runs = 5;
    std::string connectomics = "connectomics.npy.gz";
    std::vector<std::uint64_t> slab_voxels;
    bool huge_pages = true;
    for (int a = 1; a + 1 < argc; a += 2) {
      const std::string option = argv[a];
      const std::string value = argv[a + 1];
      if (option == "--volumes") {
        volumes = split(value);
      } else if (option == "--connectivity") {
        connectivities.clear();
        for (const std::string& c : split(value)) connectivities.push_back(std::stoi(c));
      } else if (option == "--budget") {
        budget = std::stoull(value);
      } else if (option == "--runs") {
        runs = std::stoi(value);
      } else if (option == "--connectomics") {
        connectomics = value;
      } else if (option == "--caller-pages") {
        if (value != "huge" && value != "4k")
          throw std::runtime_error("--caller-pages: huge or 4k");
        huge_pages = value == "huge";
      } else if (option == "--slab-voxels") {
        for (const std::string& v : split(value)) slab_voxels.push_back(std::stoull(v));
      } else {
        throw std::runtime_error("unknown option " + option);
      }
    }
    if (argc % 2 == 0) throw std::runtime_error("every option takes a value");
    std::cout << "device: " << volccl::cuda_device_description() << ", "
              << std::thread::hardware_concurrency() << " host threads\n";
    const PinnedBandwidth bandwidth = measure_pinned_bandwidth();
    std::cout << std::fixed << std::setprecision(1) << "pinned copies of 1 GiB: upload "
              << bandwidth.upload / 1e9 << " GB/s, download " << bandwidth.download / 1e9
              << " GB/s\ncaller's arrays on " << (huge_pages ? "2 MiB" : "4 KiB") << " pages\n";
    std::cout
        << "volume,connectivity,mode,budget_bytes,slabs,kept_on_device,components,median_ms,min_ms,"
           "ns_per_voxel,floor_ms,over_floor,peak_device_bytes,upload_ms,labeling_ms,"
           "join_ms,download_ms\n";
    for (const std::string& name : volumes) {
      auto start = std::chrono::steady_clock::now();
      volccl::data::Volume volume = make_volume(name, connectomics);
      std::cerr << name << ": " << volume.extent.to_string() << " made in " << std::setprecision(1)
                << seconds_since(start) << " s\n";
      const std::uint64_t voxels = volume.extent.voxel_count();
      const double floor_ms = (voxels / bandwidth.upload + 4.0 * voxels / bandwidth.download) * 1e3;
      CallerArray<std::uint8_t> mask(voxels, huge_pages);
      std::copy(volume.voxels.begin(), volume.voxels.end(), mask.data());
      std::vector<std::uint8_t>().swap(volume.voxels);
      CallerArray<std::uint32_t> labels(voxels, huge_pages);
      std::vector<std::uint32_t> first(voxels);
      for (const int connectivity : connectivities) {
        std::uint64_t components = 0;
        std::vector<Case> cases = {{"free-memory", 0, 0}};
        if (budget != 0) cases.push_back({"budget", budget, 0});
        for (std::uint64_t v : slab_voxels)
          cases.push_back({"slab-voxels-" + std::to_string(v), 0, v});
        for (const Case& c : cases) {
          volccl::LabelOptions options;
          options.backend = volccl::Backend::cuda;
          options.connectivity = connectivity;
          options.max_gpu_memory = c.budget;
          options.slab_voxels = c.slab_voxels;
          options.step_timings = true;
          const std::string what = name + " at " + std::to_string(connectivity) + ", " + c.mode;
          volccl::LabelResult result =
              volccl::label(mask.data(), volume.extent, labels.data(), options);
          if (c.budget == 0 && c.slab_voxels == 0) {
            check_numbering(mask.data(), voxels, labels.data(), result.component_count, what);
            std::copy(labels.data(), labels.data() + voxels, first.begin());
            components = result.component_count;
          } else if (!std::equal(first.begin(), first.end(), labels.data()) ||
                     result.component_count != components) {
            throw std::runtime_error(what + ": labels differ from those without a budget");
          }
          // The steps of the checked run: timing them synchronizes, so the timed runs do not.
          const volccl::StepTimings steps = result.timings;
          options.step_timings = false;
          std::vector<double> ms;
          for (int run = 0; run < runs; ++run) {
            start = std::chrono::steady_clock::now();
            result = volccl::label(mask.data(), volume.extent, labels.data(), options);
            ms.push_back(seconds_since(start) * 1e3);
          }
          const double median_ms = median(ms);
          const double labeling_ms = steps.initialization_ms + steps.merge_ms +
                                     steps.compression_ms + steps.final_labeling_ms;
          std::cout << std::setprecision(3) << name << ',' << connectivity << ',' << c.mode << ','
                    << c.budget << ',' << result.slab_count << ','
                    << volccl::to_string(result.slab_residency) << ',' << result.component_count
                    << ',' << median_ms << ',' << *std::min_element(ms.begin(), ms.end()) << ','
                    << median_ms * 1e6 / voxels << ',' << floor_ms << ',' << median_ms / floor_ms
                    << ',' << result.peak_device_bytes << ',' << steps.upload_ms << ','
                    << labeling_ms << ',' << steps.relabel_ms << ',' << steps.download_ms << '\n'
                    << std::flush;
        }
      }
    }
    return 0;
  } catch (const std::exception& error) {
    std::cerr << "volccl-slab-bench: " << error.what() << '\n';
    return 1;
  }
}
