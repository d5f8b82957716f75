// volccl bench: YACCLAB's tests (BUF/BKE paper, Sec. 6.2) on YACCLAB's datasets and the real
// volumes, every algorithm checked then timed (bench/bench_run.h), with ITK's
// ConnectedComponentImageFilter timed beside it on the CPU. CuPy and scipy are timed on the same
// volumes by bench/peers.py (from --dump-dir) and bench/run_gpu.sh runs both.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "bench_run.h"
#include "bench_volumes.h"
#include "command_support.h"
#include "commands.h"
#include "input_image.h"
#include "itkConnectedComponentImageFilter.h"
#include "itkImage.h"
#include "volccl/volccl.h"
#include "volcclOtsuForeground.h"

namespace volccl::cli {
namespace {

// The real volumes under the data folder (data/fetch's layout, ../shared/data/raw's too).
const char* const kOasisSubjects[] = {"0455", "0456", "0457"};
const char kOasisVolume[] = "brain_oasis1_neurite/OASIS_OAS1_%s_MR1/aligned_norm.nii.gz";
const char kMitochondriaSlices[] = "em_mitochondria_lucchi_pp/Lucchi++/Train_Out";
const char kConnectomics[] = "em_connectomics_cc3d/connectomics.npy.gz";

const std::vector<std::string> kDatasets = {"random", "hilbert",      "statistics",   "cpu",
                                            "oasis",  "mitochondria", "connectomics", "ridge"};

struct BenchRequest {
  std::string device = "auto";
  int connectivity = 26;
  std::vector<std::string> tests;
  std::vector<std::string> datasets;
  std::vector<std::string> volumes;
  std::vector<std::string> npy;
  std::vector<std::string> algorithms;
  unsigned density_step = 10;
  std::vector<unsigned> granularities = {1, 2, 4, 8, 16};
  std::uint64_t ridge_side = 4096;
  std::vector<std::string> peers;
  std::string data;
  bool quick = false;
  bench::Settings settings;
};

// ITK's OASIS foreground, as YACCLAB binarized OASIS: Otsu over 256 bins.
data::Volume OtsuMask(const fs::path& path) {
  using Image = itk::Image<float, 3>;
  const InputInformation information = ReadInputInformation(path, "INPUT");
  const Image::Pointer image = ReadInputImage<Image>(information);
  const auto mask = OtsuForeground(image.GetPointer());
  data::Volume volume;
  volume.extent = information.extent;
  volume.voxels.assign(mask->GetBufferPointer(),
                       mask->GetBufferPointer() + volume.extent.voxel_count());
  return volume;
}

// A stack of 2D slices, non-zero as foreground.
data::Volume SliceMask(const fs::path& path) {
  using Image = itk::Image<std::uint8_t, 3>;
  const InputInformation information = ReadInputInformation(path, "INPUT");
  const Image::Pointer image = ReadInputImage<Image>(information);
  data::Volume volume;
  volume.extent = information.extent;
  volume.voxels.resize(volume.extent.voxel_count());
  std::transform(image->GetBufferPointer(), image->GetBufferPointer() + volume.voxels.size(),
                 volume.voxels.begin(), [](std::uint8_t voxel) { return voxel != 0 ? 1 : 0; });
  return volume;
}

// The real datasets asked for whose files are in `data`; a note on stdout for each missing one.
std::vector<bench::BenchVolume> RealVolumes(const std::set<std::string>& datasets,
                                            const std::string& data) {
  std::vector<bench::BenchVolume> volumes;
  const auto missing = [](const std::string& dataset, const std::string& why) {
    std::cout << "dataset " << dataset << " skipped: " << why << '\n';
  };
  const bool any_real =
      datasets.count("oasis") + datasets.count("mitochondria") + datasets.count("connectomics") > 0;
  if (any_real && data.empty()) {
    missing("oasis, mitochondria and connectomics",
            "no data folder (--data DIR or VOLCCL_DATA; data/fetch downloads them)");
    return volumes;
  }
  const fs::path root = data;
  if (datasets.count("oasis") != 0) {
    for (const char* subject : kOasisSubjects) {
      char relative[sizeof kOasisVolume + 8];
      std::snprintf(relative, sizeof relative, kOasisVolume, subject);
      const fs::path path = root / relative;
      if (!fs::exists(path)) {
        missing("oasis", Quoted(path) + " not found");
        continue;
      }
      bench::BenchVolume volume;
      volume.name = std::string("oasis-") + subject;
      volume.dataset = "oasis";
      volume.load = [path] { return OtsuMask(path); };
      volumes.push_back(volume);
    }
  }
  if (datasets.count("mitochondria") != 0) {
    const fs::path path = root / kMitochondriaSlices;
    if (fs::is_directory(path)) {
      bench::BenchVolume volume;
      volume.name = "mitochondria";
      volume.dataset = "mitochondria";
      volume.load = [path] { return SliceMask(path); };
      volumes.push_back(volume);
    } else {
      missing("mitochondria", Quoted(path) + " not found");
    }
  }
  if (datasets.count("connectomics") != 0) {
    const fs::path path = root / kConnectomics;
    if (fs::exists(path)) {
      volumes.push_back(bench::npy_volume("connectomics", "connectomics", path));
    } else {
      missing("connectomics", Quoted(path) + " not found");
    }
  }
  return volumes;
}

// ITK's ConnectedComponentImageFilter on the volume's own buffer (no copy), a new filter and a
// new output each run, as a pipeline has it.
template <unsigned VDimension>
std::uint32_t ItkLabel(const data::Volume& volume, bool fully_connected) {
  using MaskImage = itk::Image<std::uint8_t, VDimension>;
  using LabelImage = itk::Image<std::uint32_t, VDimension>;
  auto mask = MaskImage::New();
  typename MaskImage::SizeType size;
  const std::uint64_t sides[3] = {volume.extent.x, volume.extent.y, volume.extent.z};
  for (unsigned i = 0; i < VDimension; ++i) size[i] = sides[i];
  mask->SetRegions(size);
  // The filter only reads its input.
  mask->GetPixelContainer()->SetImportPointer(const_cast<std::uint8_t*>(volume.voxels.data()),
                                              volume.voxels.size(), false);
  auto filter = itk::ConnectedComponentImageFilter<MaskImage, LabelImage>::New();
  filter->SetInput(mask);
  filter->SetFullyConnected(fully_connected);
  filter->Update();
  return static_cast<std::uint32_t>(filter->GetObjectCount());
}

bench::CpuPeer ItkPeer() {
  bench::CpuPeer peer;
  peer.name = "itk";
  peer.unsupported = [](int connectivity) -> std::string {
    if (connectivity == 18) return "ITK's filter connects by faces (6) or fully (26) only";
    return "";
  };
  peer.label = [](const data::Volume& volume, int connectivity) {
    const bool fully_connected = connectivity == 26 || connectivity == 8;
    return is_2d_connectivity(connectivity) ? ItkLabel<2>(volume, fully_connected)
                                            : ItkLabel<3>(volume, fully_connected);
  };
  return peer;
}

// "NAME=PATH" of --npy.
bench::BenchVolume NpyArgument(const std::string& argument) {
  const std::size_t equals = argument.find('=');
  if (equals == std::string::npos || equals == 0 || equals + 1 == argument.size()) {
    throw CommandError("--npy takes NAME=PATH, not '" + argument + "'");
  }
  const fs::path path = argument.substr(equals + 1);
  CheckInput(path);
  return bench::npy_volume(argument.substr(0, equals), "npy", path);
}

class BenchCommand : public Command {
 public:
  explicit BenchCommand(CLI::App* app) : Command(app) {
    BenchRequest& request = request_;
    bench::Settings& settings = request.settings;
    app->add_option("--device", request.device,
                    "auto (CUDA when a device is usable, else the CPU), cuda or cpu")
        ->check(CLI::IsMember({"auto", "cuda", "cpu"}))
        ->capture_default_str();
    app->add_option("--connectivity", request.connectivity,
                    "6, 18 or 26 for volumes; 4 or 8 for 2D images (YACCLAB's 2048^2 "
                    "granularity images)")
        ->check(CLI::IsMember({4, 8, 6, 18, 26}))
        ->capture_default_str();
    app->add_option("--tests", request.tests,
                    "YACCLAB's tests, comma-separated: average (the whole labeling, output "
                    "allocation included, on each dataset's volumes), steps (each step timed "
                    "apart, in further runs: YACCLAB's average with steps), granularity (random "
                    "volumes of density 0-100 % and each granularity: 256^3, or 2048^2 in 2D). "
                    "Default average,steps for volumes, granularity,steps for 2D")
        ->check(CLI::IsMember({"average", "steps", "granularity"}))
        ->delimiter(',');
    app->add_option("--datasets", request.datasets,
                    "volumes of the average test, comma-separated: random (256^3 and 512^3, "
                    "density 30 %, granularity 1 and 8), hilbert (Hilbert curves of orders 1-6 "
                    "at 128^3), statistics (512^3 at densities 5, 30 and 60 %, granularity 1 "
                    "and 8), cpu (256^3 at densities 5, 30 and 60 %, granularity 1 and 8), and "
                    "the real ones under --data: oasis (OASIS-1 subjects 0455-0457, "
                    "Otsu), mitochondria (the EPFL Lucchi++ masks, 1024x768x165), connectomics "
                    "(cc3d's 512^3 segmentation, non-zero as foreground), each skipped with a "
                    "note when absent. Default random,hilbert,oasis,mitochondria,connectomics; "
                    "with --statistics statistics,hilbert,oasis,mitochondria. At 4 and 8: ridge "
                    "(the LE/TM paper's six Ridge families, every member, --ridge-side)")
        ->check(CLI::IsMember(kDatasets))
        ->delimiter(',');
    app->add_option("--volumes", request.volumes,
                    "comma-separated names: keep only these volumes of the datasets and tests "
                    "(e.g. random-512-d30-g1, hilbert-128-o6, granularity-2048-d50-g4)")
        ->delimiter(',');
    app->add_option("--npy", request.npy,
                    "NAME=PATH,...: also time these masks, .npy or .npy.gz of unsigned "
                    "integers, shape (z, y, x) or (y, x), non-zero is foreground")
        ->delimiter(',');
    app->add_option("--data", request.data,
                    "folder of the real volumes (data/fetch's layout); default $VOLCCL_DATA");
    app->add_option("--ridge-side", request.ridge_side,
                    "ridge: the images' side, a power of two (the paper's 4096 and 8192)")
        ->check(WholeNumberOf<unsigned>())
        ->check(CLI::IsMember({512u, 1024u, 2048u, 4096u, 8192u, 16384u}))
        ->capture_default_str();
    app->add_option("--density-step", request.density_step,
                    "granularity test: density step in percent")
        ->check(WholeNumber())
        ->check(CLI::Range(1u, 100u))
        ->capture_default_str();
    app->add_option("--granularities", request.granularities,
                    "granularity test: comma-separated cell sides, 1-16 (default 1,2,4,8,16)")
        ->check(WholeNumber())
        ->check(CLI::Range(1u, 16u))
        ->delimiter(',');
    std::string names;
    for (const Algorithm algorithm : all_algorithms()) {
      names += (names.empty() ? "" : ", ") + to_string(algorithm);
    }
    app->add_option("--algorithms", request.algorithms,
                    "comma-separated: " + names +
                        " (default: all that support the connectivity); the first one's labels "
                        "are dumped and the others compared with them")
        ->delimiter(',');
    app->add_option("--peers", request.peers,
                    "CPU labelers timed on the same volumes (not the granularity test): itk "
                    "(ConnectedComponentImageFilter, FullyConnected at 26 and 8)")
        ->check(CLI::IsMember({"itk"}))
        ->delimiter(',');
    app->add_option("--runs", settings.runs, "timed runs per algorithm and volume (5 with --quick)")
        ->check(WholeNumber())
        ->check(CLI::Range(1, 1000000))
        ->capture_default_str();
    app->add_option("--warmup", settings.warmup, "untimed runs before them (1 with --quick)")
        ->check(WholeNumber())
        ->check(CLI::Range(0, 1000000))
        ->capture_default_str();
    app->add_option("--step-runs", settings.step_runs, "timed runs of the steps test")
        ->check(WholeNumber())
        ->check(CLI::Range(1, 1000000))
        ->capture_default_str();
    app->add_option("--peer-runs", settings.peer_runs, "timed runs of each CPU peer")
        ->check(WholeNumber())
        ->check(CLI::Range(1, 1000))
        ->capture_default_str();
    app->add_option("--threads", settings.cpu_threads,
                    "worker threads of volccl's CPU backend (default 0: one per hardware thread)")
        ->check(WholeNumber())
        ->check(CLI::Range(0u, 1024u))
        ->capture_default_str();
    app->add_flag("--statistics", settings.statistics,
                  "also time labeling + component statistics with each strategy the algorithm "
                  "has (rows ALGORITHM+late, +fused, +early), after checking that each gives "
                  "the CPU's moments bit for bit");
    app->add_flag("--quick", request.quick,
                  "a CPU-sized run for CI: random-64-d30-g1 and hilbert-32-o4 (or 256^2 and "
                  "512^2 images), 5 runs after 1");
    app->add_option("--csv", settings.csv, "write the results as CSV (columns as bench/peers.py)");
    app->add_option("--json", settings.json,
                    "write the results, volumes, transfers and copy bandwidth as JSON");
    app->add_option("--dump-dir", settings.dump_dir,
                    "write each volume as DIR/NAME.npy (uint8) and the first algorithm's labels "
                    "as DIR/NAME.cCONNECTIVITY.labels.npy (uint32), for bench/peers.py");
    app->footer(
        "Method: the input is on the device before timing; each run allocates its uint32 output "
        "(counted), labels, and frees it between two CUDA events; the median (and min, max) of "
        "--runs after --warmup. The device-to-device copy bandwidth is measured first and each "
        "time is also given as a multiple of the memory floor (1 byte read and 4 written per "
        "voxel). Transfers to and from pageable host memory are reported apart. Every "
        "algorithm's labels are checked (background 0, raster-order numbering, all algorithms "
        "identical) before timing.\n\nExample: volccl bench --connectivity 6 --peers itk "
        "--csv bench.csv");
  }

  int Run() const override {
    BenchRequest request = request_;
    bench::Settings& settings = request.settings;
    const bool images = is_2d_connectivity(request.connectivity);
    settings.connectivity = request.connectivity;
    settings.device =
        request.device == "auto" ? (cuda_available() ? "cuda" : "cpu") : request.device;
    if (request.quick) {
      if (App().count("--runs") == 0) settings.runs = 5;
      if (App().count("--warmup") == 0) settings.warmup = 1;
      if (App().count("--step-runs") == 0) settings.step_runs = 5;
      if (App().count("--peer-runs") == 0) settings.peer_runs = 1;
    }
    settings.algorithms = Algorithms(request, parse_backend(settings.device));

    std::set<std::string> tests(request.tests.begin(), request.tests.end());
    if (tests.empty()) {
      tests = images && request.datasets.empty() ? std::set<std::string>{"granularity", "steps"}
                                                 : std::set<std::string>{"average", "steps"};
    }
    settings.steps = tests.count("steps") != 0;
    for (const std::string& dataset : request.datasets) {
      if ((dataset == "ridge") != images) {
        throw CommandError("--datasets " + dataset + " holds " +
                           (images ? "volumes: at 4 and 8 the dataset is ridge"
                                   : "2D images: label it at 4 or 8"));
      }
    }
    std::vector<bench::BenchVolume> volumes;
    std::vector<bench::BenchVolume> granularity;
    if (request.quick) {
      volumes = bench::quick_volumes(images ? 2 : 3);
    } else {
      if (tests.count("average") != 0 || tests.count("steps") != 0) {
        volumes = DatasetVolumes(request, images);
      }
      if (tests.count("granularity") != 0) {
        granularity =
            bench::granularity_volumes(images ? 2 : 3, request.density_step, request.granularities);
      }
    }
    for (const std::string& argument : request.npy) volumes.push_back(NpyArgument(argument));
    volumes = Selected(request, volumes, granularity);

    if (volumes.empty()) throw CommandError("no volume to time");
    std::vector<bench::CpuPeer> peers;
    if (!request.peers.empty()) peers.push_back(ItkPeer());
    bench::run(settings, volumes, peers);
    return 0;
  }

 private:
  static std::vector<Algorithm> Algorithms(const BenchRequest& request, Backend backend) {
    std::vector<Algorithm> algorithms;
    if (request.algorithms.empty()) {
      for (const Algorithm algorithm : all_algorithms()) {
        if (supports(algorithm, request.connectivity) && runs_on(algorithm, backend)) {
          algorithms.push_back(algorithm);
        }
      }
      return algorithms;
    }
    for (const std::string& name : request.algorithms) {
      LabelOptions options;
      options.algorithm = parse_algorithm(name);
      options.connectivity = request.connectivity;
      validate({1, 1, 1}, options);
      if (!runs_on(options.algorithm, backend)) {
        throw CommandError(name +
                           " runs on the CPU only; leave it out or time it with --device cpu");
      }
      algorithms.push_back(options.algorithm);
    }
    return algorithms;
  }

  static std::vector<bench::BenchVolume> DatasetVolumes(const BenchRequest& request, bool images) {
    if (images) {
      if (request.datasets.empty()) return {};
      return bench::ridge_volumes(request.ridge_side);
    }
    std::set<std::string> datasets(request.datasets.begin(), request.datasets.end());
    if (datasets.empty()) {
      datasets =
          request.settings.statistics
              ? std::set<std::string>{"statistics", "hilbert", "oasis", "mitochondria"}
              : std::set<std::string>{"random", "hilbert", "oasis", "mitochondria", "connectomics"};
    }
    std::vector<bench::BenchVolume> volumes;
    const auto append = [&volumes](std::vector<bench::BenchVolume> more) {
      volumes.insert(volumes.end(), more.begin(), more.end());
    };
    if (datasets.count("random") != 0) append(bench::random_volumes());
    if (datasets.count("statistics") != 0) append(bench::statistics_volumes());
    if (datasets.count("cpu") != 0) append(bench::cpu_volumes());
    if (datasets.count("hilbert") != 0) append(bench::hilbert_volumes());
    std::string data = request.data;
    if (data.empty()) {
      if (const char* variable = std::getenv("VOLCCL_DATA")) data = variable;
    }
    append(RealVolumes(datasets, data));
    return volumes;
  }

  // The volumes and the granularity test's, kept to --volumes when given (every name must
  // match one).
  static std::vector<bench::BenchVolume> Selected(const BenchRequest& request,
                                                  std::vector<bench::BenchVolume> volumes,
                                                  const std::vector<bench::BenchVolume>& more) {
    volumes.insert(volumes.end(), more.begin(), more.end());
    // Names key the dumps and the peers' rows.
    std::set<std::string> names;
    for (const bench::BenchVolume& volume : volumes) {
      if (!names.insert(volume.name).second) {
        throw CommandError("two volumes are named '" + volume.name +
                           "' (--npy names must differ "
                           "from the datasets' and from each other)");
      }
    }
    if (request.volumes.empty()) return volumes;
    std::vector<bench::BenchVolume> selected;
    for (const std::string& name : request.volumes) {
      const auto found = std::find_if(volumes.begin(), volumes.end(),
                                      [&](const bench::BenchVolume& v) { return v.name == name; });
      if (found == volumes.end()) {
        std::string names;
        for (const bench::BenchVolume& volume : volumes) names += " " + volume.name;
        throw CommandError("--volumes: no volume '" + name + "' in the tests and datasets " +
                           "asked for; they have:" + names);
      }
      selected.push_back(*found);
    }
    return selected;
  }

  BenchRequest request_;
};

}  // namespace

std::unique_ptr<Command> AddBenchCommand(CLI::App& app) {
  return std::make_unique<BenchCommand>(app.add_subcommand(
      "bench",
      "Time volccl's algorithms the YACCLAB way (average, average with steps, granularity) on "
      "the synthetic and real datasets, labels checked first; ITK's filter beside them with "
      "--peers itk; CSV and JSON for bench/peers.py (CuPy, scipy), bench/summary.py and "
      "bench/plot.py"));
}

}  // namespace volccl::cli
