// volccl label: reads a volume or an image, selects its foreground, labels the connected
// components with volccl (through volccl::LabelImage, the ITK layer of filters/), and writes the
// labels, their statistics and a VTK scene for ParaView. A Zarr INPUT goes to volccl.dask's
// command line (python -m volccl.dask label), which labels it on a Dask cluster.
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <iterator>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <type_traits>
#include <variant>
#include <vector>

#include "command_support.h"
#include "commands.h"
#include "image_writer.h"
#include "input_image.h"
#include "itkImageIOFactory.h"
#include "stats_table.h"
#include "volccl/detail/json_string.h"
#include "volccl/detail/step_clock.h"
#include "volccl/relabel.h"
#include "volcclLabelImage.h"
#include "volcclOtsuForeground.h"
#include "vtk_output.h"

namespace volccl::cli {
namespace {

template <unsigned VDimension>
using MaskImage = itk::Image<std::uint8_t, VDimension>;

// Which input voxels are foreground. --label V is the range V..V.
struct Foreground {
  enum class Rule { nonzero, range, otsu };
  Rule rule = Rule::nonzero;
  double low = 0;  // Rule::range: low <= value <= high
  double high = 0;
};

// The integer type of OUTPUT's voxels: automatic picks the narrowest that holds every label.
enum class OutputType { automatic, uint8, uint16, uint32, uint64 };

// Each type's name on the command line (--output-type) and the largest label it holds.
struct OutputTypeInfo {
  OutputType type;
  const char* name;
  std::uint64_t largest;
};
constexpr OutputTypeInfo kOutputTypes[] = {
    {OutputType::automatic, "auto", std::numeric_limits<std::uint64_t>::max()},
    {OutputType::uint8, "uint8", std::numeric_limits<std::uint8_t>::max()},
    {OutputType::uint16, "uint16", std::numeric_limits<std::uint16_t>::max()},
    {OutputType::uint32, "uint32", std::numeric_limits<std::uint32_t>::max()},
    {OutputType::uint64, "uint64", std::numeric_limits<std::uint64_t>::max()}};

template <typename TPredicate>
const OutputTypeInfo& FindOutputType(TPredicate predicate) {
  return *std::find_if(std::begin(kOutputTypes), std::end(kOutputTypes), predicate);
}
const char* ToString(OutputType type) {
  return FindOutputType([type](const OutputTypeInfo& info) { return info.type == type; }).name;
}
std::uint64_t LargestValue(OutputType type) {
  return FindOutputType([type](const OutputTypeInfo& info) { return info.type == type; }).largest;
}
// `name` passed the option's IsMember check.
OutputType ParseOutputType(const std::string& name) {
  return FindOutputType([&name](const OutputTypeInfo& info) { return name == info.name; }).type;
}

struct LabelRequest {
  std::string input;
  std::string output;    // empty: no label image (--stats or --vtk only)
  int connectivity = 0;  // 0: not given; 26 for volumes, 8 for 2D images
  std::string algorithm = to_string(LabelOptions{}.algorithm);
  std::string device = "auto";
  std::uint64_t max_gpu_memory = 0;  // 0: the GPU's free memory
  Foreground foreground;
  // Every connected region of equal value is a component (a label map); voxels of
  // `background` are left unlabeled. With --label V only the voxels of V are labeled.
  bool multi_label = false;
  std::string background = "0";
  RelabelOptions relabeling;
  std::string output_type = "auto";
  std::string stats;  // empty: no statistics file
  std::string statistics_strategy = to_string(LabelOptions{}.statistics_strategy);
  std::string vtk;  // empty: no VTK output
  std::string vtk_labels = "point";
  bool surfaces = false;
  bool force = false;
  bool quiet = false;
  bool progress = false;
  bool timings = false;
  // A Zarr INPUT only: where volccl.dask labels it.
  std::string scheduler;  // an existing Dask cluster's scheduler address
  int workers = 0;        // 0: not given
  std::string chunks;     // rechunk the input to Z,Y,X first

  bool Measures() const { return !stats.empty() || !vtk.empty(); }
};

// Milliseconds of the steps around the labeling, for --timings.
struct CommandTimings {
  double read_ms = 0;
  double binarize_ms = 0;
  double relabel_ms = 0;
  double write_ms = 0;
  double stats_write_ms = 0;
  double vtk_write_ms = 0;
};

// ---- the options ------------------------------------------------------------------------------

double ParseValue(const std::string& option, const std::string& text) {
  std::size_t parsed = 0;
  double value = 0;
  try {
    value = std::stod(text, &parsed);
  } catch (const std::exception&) {
    parsed = 0;
  }
  if (parsed == 0 || parsed != text.size() || std::isnan(value)) {
    throw CLI::ValidationError(option, "'" + text + "' is not a number");
  }
  return value;
}

// "LOW" (foreground: LOW <= value) or "LOW:HIGH" (foreground: LOW <= value <= HIGH).
Foreground ParseThreshold(const std::string& text) {
  Foreground foreground;
  foreground.rule = Foreground::Rule::range;
  const std::size_t colon = text.find(':');
  foreground.low = ParseValue("--threshold", text.substr(0, colon));
  foreground.high = colon == std::string::npos ? std::numeric_limits<double>::infinity()
                                               : ParseValue("--threshold", text.substr(colon + 1));
  if (foreground.low > foreground.high) {
    throw CLI::ValidationError(
        "--threshold", "LOW " + text.substr(0, colon) + " is above HIGH " + text.substr(colon + 1));
  }
  return foreground;
}

// --chunks: one to three positive whole numbers separated by commas.
CLI::Validator ChunkSizes() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        std::istringstream parts(text);
        std::string part;
        int count = 0;
        const CLI::Validator whole = WholeNumber(1, std::numeric_limits<std::uint32_t>::max());
        while (std::getline(parts, part, ',')) {
          if (!whole(part).empty() || ++count > 3) count = 4;
        }
        if (count >= 1 && count <= 3 && text.back() != ',') return {};
        return "'" + text + "' is not Z,Y,X (1 to 3 positive whole numbers separated by commas)";
      },
      "", "ChunkSizes");
}

// ---- a Zarr INPUT: volccl.dask's command line -------------------------------------------------

// A directory holding zarr.json (Zarr 3), .zarray or .zgroup (Zarr 2), or any name ending in
// .zarr (a store not made yet fails in volccl.dask with its reason, as does a URL).
bool IsZarrStore(const std::string& input) {
  std::string name = input;
  while (name.size() > 1 && name.back() == '/') name.pop_back();
  const std::string suffix = ".zarr";
  if (name.size() >= suffix.size() &&
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
    return true;
  }
  std::error_code error;
  if (!fs::is_directory(input, error)) return false;
  for (const char* marker : {"zarr.json", ".zarray", ".zgroup"}) {
    if (fs::exists(fs::path(input) / marker, error)) return true;
  }
  return false;
}

// The options of volccl label that volccl.dask does not take.
const std::vector<std::string>& OptionsRefusedForZarr() {
  static const std::vector<std::string> names = {
      "--vtk",          "--vtk-labels",  "--surfaces",       "--otsu",     "--threshold",
      "--label",        "--multi-label", "--background",     "--min-size", "--largest",
      "--sort-by-size", "--timings",     "--stats-strategy", "--progress", "--max-gpu-memory"};
  return names;
}

// The Python that runs volccl.dask: $VOLCCL_PYTHON, else the .venv of the source tree this
// volccl was built from (when it is there), else python3 on the PATH.
std::string DaskPython() {
  const char* chosen = std::getenv("VOLCCL_PYTHON");
  if (chosen != nullptr && *chosen != '\0') return chosen;
#ifdef VOLCCL_SOURCE_DIR
  const std::string venv = std::string(VOLCCL_SOURCE_DIR) + "/.venv/bin/python";
  if (access(venv.c_str(), X_OK) == 0) return venv;
#endif
  return "python3";
}

std::vector<std::string> DaskArguments(const std::string& python, const LabelRequest& request) {
  std::vector<std::string> arguments = {python, "-m", "volccl.dask", "label", request.input};
  const auto add = [&arguments](const std::string& option, const std::string& value) {
    if (!value.empty()) arguments.insert(arguments.end(), {option, value});
  };
  add("-o", request.output);
  add("--scheduler", request.scheduler);
  if (request.workers != 0) add("--workers", std::to_string(request.workers));
  add("--chunks", request.chunks);
  if (request.connectivity != 0) add("-c", std::to_string(request.connectivity));
  add("--stats", request.stats);
  add("--device", request.device);
  add("--algorithm", request.algorithm);
  // auto is volccl.dask's default: uint64, the type every label of a chunked volume fits.
  if (request.output_type != "auto") add("--dtype", request.output_type);
  if (request.force) arguments.push_back("-f");
  if (request.quiet) arguments.push_back("-q");
  return arguments;
}

// Runs volccl.dask with this process's standard streams and returns its exit status (0, 1 with
// its error line on stderr, 2 for a command line it refuses); a signal that ends it ends volccl.
int RunDask(const LabelRequest& request) {
  const std::string python = DaskPython();
  const std::vector<std::string> arguments = DaskArguments(python, request);
  std::vector<char*> argv;
  for (const std::string& argument : arguments) argv.push_back(const_cast<char*>(argument.c_str()));
  argv.push_back(nullptr);
  std::cout.flush();
  pid_t child = 0;
  const int failed = posix_spawnp(&child, python.c_str(), nullptr, nullptr, argv.data(), ::environ);
  if (failed != 0) {
    throw CommandError("Zarr INPUT " + Quoted(request.input) + ": cannot run " + Quoted(python) +
                       " for volccl.dask: " + std::strerror(failed) +
                       "; set VOLCCL_PYTHON to a Python with volccl, dask, distributed and zarr");
  }
  int status = 0;
  while (waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) {
      throw CommandError(std::string("waiting for volccl.dask: ") + std::strerror(errno));
    }
  }
  if (WIFSIGNALED(status)) {
    std::signal(WTERMSIG(status), SIG_DFL);
    std::raise(WTERMSIG(status));
    return 128 + WTERMSIG(status);
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

// Why the library refuses `options` for an image of `extent` (a connectivity that does not
// exist, a block-based algorithm with 4, 6 or 18, HA4 or KE on a volume), in its own words;
// empty when it accepts them. The default extent, one voxel, takes every connectivity.
std::string Refusal(const LabelOptions& options, Extent3 extent = {}) {
  try {
    validate(extent, options);
  } catch (const InvalidArgument& error) {
    return WithoutLibraryPrefix(error.what());
  }
  return {};
}

CLI::Validator SupportedConnectivity() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        LabelOptions options;
        try {
          options.connectivity = std::stoi(value);
        } catch (const std::exception&) {
          return "connectivity '" + value + "' is not a number; use 4 or 8 (2D), 6, 18 or 26";
        }
        return Refusal(options);
      },
      "{4,8,6,18,26}", "SupportedConnectivity");
}

// "auto", then the concrete algorithms.
std::vector<std::string> AlgorithmNames() {
  std::vector<std::string> names{to_string(Algorithm::automatic)};
  for (Algorithm algorithm : all_algorithms()) names.push_back(to_string(algorithm));
  return names;
}

// What `auto` picks on `backend`, connectivity by connectivity: "buf for 26, ruf for 6, ...".
std::string AutomaticChoices(Backend backend) {
  std::string text;
  for (int connectivity : {26, 18, 6, 8, 4}) {
    text += (text.empty() ? "" : ", ") + to_string(automatic_choice(connectivity, backend)) +
            " for " + std::to_string(connectivity);
  }
  return text;
}

// The algorithms that gather the statistics by `strategy`, comma separated.
std::string AlgorithmsMeasuringBy(StatisticsStrategy strategy) {
  std::string names;
  for (Algorithm algorithm : all_algorithms()) {
    if (supports(strategy, algorithm)) names += (names.empty() ? "" : ", ") + to_string(algorithm);
  }
  return names;
}

// The --algorithm help, from the registry: what auto picks, then each algorithm with its
// connectivities.
std::string AlgorithmHelp() {
  std::string text = "Labeling algorithm. auto picks " + AutomaticChoices(Backend::cuda) +
                     " on the GPU, and " + AutomaticChoices(Backend::cpu) + " on the CPU.";
  for (Algorithm algorithm : all_algorithms()) {
    std::string taken;
    for (int connectivity : connectivities(algorithm)) {
      taken += (taken.empty() ? "" : "/") + std::to_string(connectivity);
    }
    text += " " + to_string(algorithm) + " (" + taken + "): " + summary(algorithm) + ".";
  }
  return text;
}

LabelOptions MakeLabelOptions(const LabelRequest& request) {
  LabelOptions options;
  options.algorithm = parse_algorithm(request.algorithm);
  options.backend = parse_backend(request.device);
  if (request.connectivity != 0) options.connectivity = request.connectivity;
  options.step_timings = request.timings;
  options.statistics_strategy = parse_statistics_strategy(request.statistics_strategy);
  options.max_gpu_memory = request.max_gpu_memory;
  return options;
}

void AddOptions(CLI::App& label, LabelRequest& request) {
  label
      .add_option("INPUT", request.input,
                  "Volume or image to label, in any format ITK reads (.nii, .nii.gz, .mha, .mhd, "
                  ".nrrd, .png, .tif), or a directory of 2D slices stacked in the order of the "
                  "numbers in their names (0.png, 1.png, ..., 10.png), or a Zarr store "
                  "(labeled by volccl.dask on a Dask cluster)")
      ->required();
  label.add_option("-o,--output", request.output,
                   "Label image to write (0 background, 1..N in raster order); its extension "
                   "picks the format: .nii.gz, .nii, .mha, .nrrd, .tif, or .png for up to 65535 "
                   "labels of a 2D image");
  label
      .add_option("--connectivity", request.connectivity,
                  "Volumes: voxels touching by a face (6), a face or an edge (18), or a face, "
                  "an edge or a corner (26) are connected; default 26. 2D images: pixels "
                  "touching by an edge (4) or an edge or a corner (8); default 8. A one-slice "
                  "volume takes either. ITK's ConnectedComponentImageFilter defaults to 6 / 4 "
                  "(FullyConnected off); 26 / 8 is its FullyConnected on")
      ->type_name("INT")
      ->check(SupportedConnectivity());
  label.add_option("--algorithm", request.algorithm, AlgorithmHelp())
      ->capture_default_str()
      ->check(CLI::IsMember(AlgorithmNames()));
  label
      .add_option("--device", request.device,
                  "Where to label: auto uses a CUDA GPU when one is usable, cuda insists on the "
                  "GPU, cpu never uses it. A volume larger than the GPU's free memory is "
                  "streamed through it in slabs, with the same labels")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "cuda", "cpu"}));
  label
      .add_option("--max-gpu-memory", request.max_gpu_memory,
                  "The most GPU memory to use, in bytes or with a unit (512M, 16G: powers of "
                  "1024); a volume that needs more is labeled in slabs within it. Default: the "
                  "GPU's free memory")
      ->transform(CLI::AsSizeValue(false));

  CLI::Option* otsu = label.add_flag_callback(
      "--otsu", [&request] { request.foreground.rule = Foreground::Rule::otsu; },
      "Foreground: voxels above the Otsu threshold of the image (ITK's OtsuThresholdImageFilter "
      "with 256 bins, as YACCLAB binarized its volumes)");
  CLI::Option* threshold =
      label
          .add_option_function<std::string>(
              "--threshold",
              [&request](const std::string& text) { request.foreground = ParseThreshold(text); },
              "Foreground: voxels with LOW <= value <= HIGH (no HIGH: no upper bound)")
          ->type_name("LOW[:HIGH]");
  CLI::Option* value =
      label
          .add_option_function<std::string>(
              "--label",
              [&request](const std::string& text) {
                const double label_value = ParseValue("--label", text);
                request.foreground = {Foreground::Rule::range, label_value, label_value};
              },
              "Foreground: voxels of value V, one structure of a segmentation (e.g. 17 for the "
              "left hippocampus of a FreeSurfer aseg)")
          ->type_name("V");
  otsu->excludes(threshold)->excludes(value);
  threshold->excludes(value);
  CLI::Option* multi_label = label.add_flag(
      "--multi-label", request.multi_label,
      "INPUT is a label map (a segmentation of integer values): every connected region of equal "
      "value is a component, as cc3d.connected_components (its default) and "
      "skimage.measure.label label them; voxels of the --background value are not labeled. "
      "Without it every non-zero voxel is foreground and neighbours of different values join, as "
      "in ITK's ConnectedComponentImageFilter and cc3d's binary_image=True");
  label
      .add_option("--background", request.background,
                  "--multi-label: the value left unlabeled (default 0); an integer in the range "
                  "of INPUT's voxel type")
      ->type_name("V")
      ->needs(multi_label);
  multi_label->excludes(otsu)->excludes(threshold);

  label
      .add_option("--min-size", request.relabeling.minimum_size,
                  "Components of fewer voxels become background (dust removal)")
      ->type_name("N")
      ->check(WholeNumberOf<std::uint64_t>());
  label
      .add_option("--largest", request.relabeling.keep_largest,
                  "Keep only the K largest components (ties: the first in raster order)")
      ->type_name("K")
      ->check(WholeNumberOf<std::uint32_t>());
  label.add_flag("--sort-by-size", request.relabeling.sort_by_size,
                 "Number the components largest first (ties in raster order), as ITK's "
                 "RelabelComponentImageFilter; without it, in raster order of their first voxel");
  label
      .add_option("--output-type", request.output_type,
                  "Voxel type of OUTPUT: auto picks the narrowest of uint8, uint16, uint32 and "
                  "uint64 that holds every label; a type too narrow for the labels is an error. "
                  "uint64 also labels in 64 bits (8 bytes a voxel in memory, not 4)")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "uint8", "uint16", "uint32", "uint64"}));

  label
      .add_option("--stats", request.stats,
                  "Also measure every component and write one row per label to FILE: .csv "
                  "(a header of column names) or .json. Count, physical size, centroid "
                  "(physical and index), covariance (physical, 6 or 3 unique terms), principal "
                  "moments and axes, bounding box (indices); units in docs/cli.md")
      ->type_name("FILE");
  label
      .add_option("--stats-strategy", request.statistics_strategy,
                  "How the GPU gathers the statistics: late (a pass over the labels; every "
                  "algorithm), fused (in the final labeling step; " +
                      AlgorithmsMeasuringBy(StatisticsStrategy::fused) +
                      ") or early (per-node moments merged into their roots; " +
                      AlgorithmsMeasuringBy(StatisticsStrategy::early) +
                      "). The numbers are the same")
      ->capture_default_str()
      ->check(CLI::IsMember({"late", "fused", "early"}));
  CLI::Option* vtk = label.add_option(
      "--vtk", request.vtk,
      "Write a ParaView scene to directory DIR (made if absent): labels.vti (the labels, with "
      "spacing, origin and direction), components.vtp (one point per component at its "
      "centroid, with count, bounding box, principal moments and axes, and an ellipsoid tensor "
      "for Tensor Glyph) and volccl.pvd, which opens them in one step");
  vtk->type_name("DIR");
  label
      .add_option("--vtk-labels", request.vtk_labels,
                  "--vtk: the labels as point data (one point per voxel centre, as ITK places "
                  "them) or cell data (one cell per voxel)")
      ->capture_default_str()
      ->check(CLI::IsMember({"point", "cell"}))
      ->needs(vtk);
  label
      .add_flag("--surfaces", request.surfaces,
                "--vtk: also surfaces.vtp, the boundary surface of every component (VTK's "
                "discrete flying edges), coloured by label")
      ->needs(vtk);

  label.add_flag("--force", request.force,
                 "Overwrite OUTPUT, the --stats FILE and the --vtk files if they exist");
  CLI::Option* quiet = label.add_flag("-q,--quiet", request.quiet, "Print nothing but errors");
  label
      .add_flag("--progress", request.progress,
                "Report each step on stderr even when it is not a terminal (it is reported "
                "when it is one)")
      ->excludes(quiet);
  label.add_flag("--timings", request.timings,
                 "Print the step timings as one JSON object on stdout (the summary line then "
                 "goes to stderr)");
  CLI::Option* scheduler =
      label
          .add_option("--scheduler", request.scheduler,
                      "Zarr INPUT: label it on the running Dask cluster of this scheduler "
                      "(tcp://host:8786)")
          ->type_name("ADDRESS");
  label
      .add_option("--workers", request.workers,
                  "Zarr INPUT: label it on a local Dask cluster of N worker processes (default: "
                  "one per core)")
      ->type_name("N")
      ->check(WholeNumber(1, std::numeric_limits<int>::max()))
      ->excludes(scheduler);
  label
      .add_option("--chunks", request.chunks,
                  "Zarr INPUT: rechunk it to chunks of Z,Y,X voxels (one size for every axis, or "
                  "one per axis) before labeling")
      ->type_name("Z,Y,X")
      ->check(ChunkSizes());
  label.footer(
      "Without --otsu, --threshold or --label every non-zero voxel is foreground. OUTPUT keeps "
      "the spacing, origin and direction of INPUT. Give at least one of -o, --stats and --vtk. "
      "A Zarr INPUT (a directory with zarr.json, .zarray or .zgroup, or a name ending in .zarr) "
      "is labeled by python -m volccl.dask label on a Dask cluster (docs/cli.md).");
}

// ---- checks before any voxel is read ----------------------------------------------------------

// The files --vtk writes into DIR, for the checks before labeling.
const std::vector<std::string>& VtkFileNames() {
  static const std::vector<std::string> names = {
      vtk_output::kImageFile, vtk_output::kComponentsFile, vtk_output::kSurfacesFile,
      vtk_output::kCollectionFile};
  return names;
}

void CheckVtkDirectory(const fs::path& directory, const fs::path& input, bool force) {
  const std::string named = "--vtk " + Quoted(directory);
  if (fs::exists(directory)) {
    if (!fs::is_directory(directory)) throw CommandError(named + " is not a directory");
    if (fs::equivalent(directory, input)) {
      throw CommandError(named + " is the INPUT; volccl never writes into it");
    }
    for (const std::string& name : VtkFileNames()) {
      CheckNotInput("--vtk file " + Quoted(directory / name), directory / name, input);
      if (fs::exists(directory / name) && !force) {
        throw CommandError(Quoted(directory / name) + " exists; --force overwrites it");
      }
    }
    return;
  }
  fs::path normal = directory.lexically_normal();
  if (!normal.has_filename()) normal = normal.parent_path();  // "scene/"
  const fs::path parent = DirectoryOf(normal);
  if (!fs::is_directory(parent)) {
    throw CommandError("cannot make " + named + ": " + Quoted(parent) + " does not exist");
  }
}

// VTK counts an image's points along a side in an int, and the scene adds up to two to the
// voxels (cell data, the surfaces' padding).
void CheckVtkHoldsVolume(const LabelRequest& request, const Extent3& extent) {
  const std::uint64_t largest = std::max({extent.x, extent.y, extent.z});
  const std::uint64_t most = std::numeric_limits<int>::max() - 2;
  if (largest > most) {
    throw CommandError("--vtk " + Quoted(request.vtk) + ": INPUT " + Quoted(request.input) +
                       " has a side of " + std::to_string(largest) +
                       " voxels, more than VTK's image data holds (" + std::to_string(most) +
                       "); write OUTPUT and --stats without --vtk");
  }
}

// The connectivity to label INPUT with: the one asked for, else 8 for a 2D image or a one-slice
// volume and 26 for other volumes. Refuses volume connectivities on a 2D file and anything the
// library refuses for this extent (4 or 8 on a volume, ha4 on a volume).
int ResolveConnectivity(const LabelRequest& request, const InputInformation& information) {
  const Extent3& extent = information.extent;
  int connectivity = request.connectivity;
  if (connectivity == 0) connectivity = extent.z == 1 ? 8 : 26;
  if (information.dimension == 2 && !is_2d_connectivity(connectivity)) {
    throw CommandError("INPUT " + Quoted(request.input) + " is a 2D image of " +
                       std::to_string(extent.x) + "x" + std::to_string(extent.y) +
                       " pixels; use --connectivity 4 or 8 (" + std::to_string(connectivity) +
                       " is for volumes)");
  }
  LabelOptions options = MakeLabelOptions(request);
  options.connectivity = connectivity;
  const std::string refusal = Refusal(options, extent);
  if (!refusal.empty()) throw CommandError("INPUT " + Quoted(request.input) + ": " + refusal);
  return connectivity;
}

bool IsPng(const fs::path& output) {
  const itk::ImageIOBase::Pointer writer = itk::ImageIOFactory::CreateImageIO(
      output.c_str(), itk::ImageIOFactory::IOFileModeEnum::WriteMode);
  return writer && std::string(writer->GetNameOfClass()) == "PNGImageIO";
}

// ---- reading, binarizing and labeling -----------------------------------------------------

template <typename TPixel, unsigned VDimension>
typename MaskImage<VDimension>::Pointer Binarize(const itk::Image<TPixel, VDimension>* image,
                                                 const Foreground& foreground) {
  if (foreground.rule == Foreground::Rule::otsu) return OtsuForeground(image);
  auto mask = MaskImage<VDimension>::New();
  mask->CopyInformation(image);  // spacing, origin and direction
  mask->SetRegions(image->GetBufferedRegion());
  mask->Allocate();
  const TPixel* values = image->GetBufferPointer();
  std::uint8_t* foreground_voxels = mask->GetBufferPointer();
  const std::size_t count = image->GetBufferedRegion().GetNumberOfPixels();
  for (std::size_t i = 0; i < count; ++i) {
    const double value = static_cast<double>(values[i]);
    foreground_voxels[i] = foreground.low <= value && value <= foreground.high;
  }
  return mask;
}

// The labels, 32-bit or (more than 2^32 - 1 components, or --output-type uint64) 64-bit.
template <unsigned VDimension>
using AnyLabeledImage =
    std::variant<LabeledImage<VDimension, std::uint32_t>, LabeledImage<VDimension, std::uint64_t>>;

// Labels `image`'s non-zero voxels, or with `each_value` its regions of equal value other than
// `background`, on the CPU when the device is auto and the GPU has too little memory. Into
// 64-bit labels when `wide`, else into 32-bit ones, and again into 64-bit ones when the
// components outnumber those (a volume of more than 2^32 - 1 voxels).
template <typename TPixel, unsigned VDimension>
AnyLabeledImage<VDimension> LabelWithFallback(const itk::Image<TPixel, VDimension>* image,
                                              LabelOptions options, bool measure, bool quiet,
                                              bool wide, bool each_value = false,
                                              TPixel background = TPixel{}) {
  const auto label_into = [&](auto label_type) -> AnyLabeledImage<VDimension> {
    using Label = decltype(label_type);
    try {
      return detail::LabelImage<Label>(image, options, background, measure, each_value);
    } catch (const OutOfDeviceMemory& error) {
      if (options.backend != Backend::automatic) throw;
      if (!quiet) {
        std::cerr << "volccl: " << OneLine(error.what()) << "; labeling on the CPU instead\n";
      }
      options.backend = Backend::cpu;
      return detail::LabelImage<Label>(image, options, background, measure, each_value);
    }
  };
  if (wide) return label_into(std::uint64_t{});
  try {
    return label_into(std::uint32_t{});
  } catch (const TooManyComponents& error) {
    const std::uint64_t voxels = image->GetBufferedRegion().GetNumberOfPixels();
    CheckMemoryAvailable(
        voxels * sizeof(std::uint64_t),
        "labeling " + std::to_string(error.component_count()) + " components in 64 bits");
    if (!quiet) {
      std::cerr << "volccl: " << error.component_count()
                << " components need 64-bit labels; labeling again into them\n";
    }
    return label_into(std::uint64_t{});
  }
}

// --background's text as a value of TPixel; refuses text that is not an integer in its range.
template <typename TPixel>
TPixel ParseBackground(const std::string& text) {
  const bool negative = !text.empty() && text[0] == '-';
  const std::optional<std::uint64_t> parsed = ParseWholeNumber(negative ? text.substr(1) : text);
  const bool valid = parsed.has_value();
  const std::uint64_t magnitude = parsed.value_or(0);
  using Limits = std::numeric_limits<TPixel>;
  // |min| computed without overflow: -(min + 1) fits, then one more.
  const std::uint64_t lowest_magnitude =
      Limits::is_signed ? static_cast<std::uint64_t>(-(Limits::min() + 1)) + 1 : 0;
  const bool in_range = negative ? Limits::is_signed && magnitude <= lowest_magnitude
                                 : magnitude <= static_cast<std::uint64_t>(Limits::max());
  if (!valid || !in_range) {
    throw CommandError("--background " + text + ": not a whole number from " +
                       std::to_string(+Limits::min()) + " to " + std::to_string(+Limits::max()) +
                       ", the range of INPUT's voxels");
  }
  // Two's complement: the value -magnitude has the bits of 0 - magnitude.
  return negative ? static_cast<TPixel>(std::uint64_t{0} - magnitude)
                  : static_cast<TPixel>(magnitude);
}

// A labeling, and for a label map what reads each component's value off the input (which it
// keeps) once the components are final.
template <unsigned VDimension>
struct LabeledInput {
  AnyLabeledImage<VDimension> labeled;
  std::function<vtk_output::ComponentValues(const AnyLabeledImage<VDimension>& labeled,
                                            std::uint64_t count)>
      values_of;
};

// Reads INPUT as TPixel voxels (its own type: no rounding), binarizes it (a mask) or not (a label
// map) and labels it.
template <unsigned VDimension, typename TPixel>
LabeledInput<VDimension> ReadAndLabel(const InputInformation& information,
                                      const LabelRequest& request, Progress& progress,
                                      CommandTimings& timings) {
  detail::StepClock stopwatch;
  progress.Start("reading " + Quoted(request.input));
  typename itk::Image<TPixel, VDimension>::Pointer image =
      ReadInputImage<itk::Image<TPixel, VDimension>>(information);
  timings.read_ms = stopwatch.lap();
  const LabelOptions options = MakeLabelOptions(request);
  const bool wide = ParseOutputType(request.output_type) == OutputType::uint64;
  const std::string labeling = request.Measures() ? "labeling and measuring" : "labeling";
  if (request.multi_label && request.foreground.rule == Foreground::Rule::nonzero) {
    if constexpr (std::is_integral<TPixel>::value) {
      progress.Start(labeling);
      LabeledInput<VDimension> result;
      result.labeled =
          LabelWithFallback(image.GetPointer(), options, request.Measures(), request.quiet, wide,
                            true, ParseBackground<TPixel>(request.background));
      result.values_of = [image](const AnyLabeledImage<VDimension>& labeled, std::uint64_t count) {
        const auto& size = image->GetBufferedRegion().GetSize();
        const Extent3 extent{size[0], size[1], VDimension == 3 ? size[VDimension - 1] : 1};
        const std::vector<TPixel> found = std::visit(
            [&](const auto& labels) {
              return component_values(image->GetBufferPointer(), extent,
                                      labels.Labels->GetBufferPointer(), count);
            },
            labeled);
        vtk_output::ComponentValues values;
        values.is_unsigned = !std::is_signed<TPixel>::value;
        values.values.assign(found.begin(), found.end());
        return values;
      };
      return result;
    } else {
      throw CommandError("--multi-label: INPUT " + Quoted(request.input) +
                         " holds floating-point voxels; a label map holds integers");
    }
  }
  if (request.foreground.rule == Foreground::Rule::nonzero) {
    progress.Start(labeling);
    return {LabelWithFallback(image.GetPointer(), options, request.Measures(), request.quiet, wide),
            {}};
  }
  progress.Start(request.foreground.rule == Foreground::Rule::otsu ? "thresholding (Otsu)"
                                                                   : "selecting the foreground");
  typename MaskImage<VDimension>::Pointer mask = Binarize(image.GetPointer(), request.foreground);
  image = nullptr;  // frees the input before the labels are allocated
  timings.binarize_ms = stopwatch.lap();
  progress.Start(labeling);
  return {LabelWithFallback(mask.GetPointer(), options, request.Measures(), request.quiet, wide),
          {}};
}

// ---- writing ----------------------------------------------------------------------------------

// The voxel type OUTPUT gets for `component_count` labels; refuses a forced type too narrow for
// them, and a type PNG cannot hold (before the labeling, with a count of 0, for a forced one).
OutputType ChooseOutputType(OutputType requested, std::uint64_t component_count,
                            const fs::path& output) {
  OutputType type = requested;
  if (requested == OutputType::automatic) {
    type = component_count <= LargestValue(OutputType::uint8)    ? OutputType::uint8
           : component_count <= LargestValue(OutputType::uint16) ? OutputType::uint16
           : component_count <= LargestValue(OutputType::uint32) ? OutputType::uint32
                                                                 : OutputType::uint64;
  } else if (component_count > LargestValue(requested)) {
    throw CommandError("--output-type " + std::string(ToString(requested)) + ": " +
                       std::to_string(component_count) + " labels do not fit (at most " +
                       std::to_string(LargestValue(requested)) +
                       "); use --output-type auto or a wider type");
  }
  if ((type == OutputType::uint32 || type == OutputType::uint64) && IsPng(output)) {
    const std::string why = requested == OutputType::automatic
                                ? std::to_string(component_count) + " labels need them; "
                                : "";
    throw CommandError("OUTPUT " + Quoted(output) + ": PNG files cannot hold " + ToString(type) +
                       " voxels (" + why + "use .nii.gz, .mha, .nrrd or .tif)");
  }
  return type;
}

template <typename TValue, unsigned VDimension, typename TLabel>
void WriteLabelsAs(const LabelImageType<VDimension, TLabel>* labels, const fs::path& staged) {
  if constexpr (std::is_same<TValue, TLabel>::value) {
    WriteImageFile(labels, staged);
  } else {
    using OutputImage = itk::Image<TValue, VDimension>;
    auto converted = OutputImage::New();
    converted->CopyInformation(labels);
    converted->SetRegions(labels->GetBufferedRegion());
    converted->Allocate();
    const TLabel* values = labels->GetBufferPointer();
    std::transform(values, values + labels->GetBufferedRegion().GetNumberOfPixels(),
                   converted->GetBufferPointer(),
                   [](TLabel label) { return static_cast<TValue>(label); });
    WriteImageFile(converted.GetPointer(), staged);
  }
}

template <unsigned VDimension, typename TLabel>
void WriteLabels(const LabelImageType<VDimension, TLabel>* labels, OutputType type,
                 const fs::path& output, const fs::path& staged) {
  try {
    switch (type) {
      case OutputType::uint8:
        WriteLabelsAs<std::uint8_t>(labels, staged);
        break;
      case OutputType::uint16:
        WriteLabelsAs<std::uint16_t>(labels, staged);
        break;
      case OutputType::uint64:
        WriteLabelsAs<std::uint64_t>(labels, staged);
        break;
      default:
        WriteLabelsAs<std::uint32_t>(labels, staged);
    }
  } catch (const itk::ExceptionObject& error) {
    throw CommandError("cannot write OUTPUT " + Quoted(output) + " as " + ToString(type) + ": " +
                       error.GetDescription());
  }
}

// --vtk DIR: made when absent (and removed again when the run fails), its files staged in a
// hidden directory inside it.
class VtkDirectory {
 public:
  explicit VtkDirectory(const fs::path& directory)
      : directory_(directory), made_(!fs::exists(directory)) {
    std::error_code error;
    if (made_ && !fs::create_directory(directory, error)) {
      throw CommandError("cannot make --vtk " + Quoted(directory) + ": " + error.message());
    }
    if (made_) RemoveOnInterrupt(directory);
    staging_.emplace(directory, "volccl-vtk");
  }
  VtkDirectory(const VtkDirectory&) = delete;
  VtkDirectory& operator=(const VtkDirectory&) = delete;
  ~VtkDirectory() {
    staging_.reset();
    std::error_code ignored;
    if (made_ && !committed_) fs::remove(directory_, ignored);
  }

  const StagingDirectory& Staging() const { return *staging_; }
  void Commit(const fs::path& input, bool force) {
    staging_->Commit(input, force);
    committed_ = true;
  }

 private:
  fs::path directory_;
  bool made_;
  bool committed_ = false;
  std::optional<StagingDirectory> staging_;
};

// ---- reporting --------------------------------------------------------------------------------

std::string DeviceDescription(const LabelResult& result) {
  if (result.backend_used == Backend::cuda) return "CUDA: " + cuda_device_description();
  return "CPU, " + std::to_string(std::max(1u, std::thread::hardware_concurrency())) + " threads";
}

template <typename TImage>
std::string SizeOf(const TImage* image) {
  constexpr unsigned VDimension = TImage::ImageDimension;
  const auto& size = image->GetBufferedRegion().GetSize();
  return SizeText(size[0], size[1], VDimension == 3 ? size[VDimension - 1] : 1, VDimension);
}

// "labeled 128x128x62 voxels: 17 components (buf, 26-connectivity, on CPU, 2 threads,
// 12.3 ms)", with the algorithm that ran (what auto chose).
template <typename TLabeled>
std::string Summary(const LabelRequest& request, const TLabeled& labeled) {
  const std::uint64_t count = labeled.Result.component_count;
  return "labeled " + SizeOf(labeled.Labels.GetPointer()) + ": " + std::to_string(count) +
         (count == 1 ? " component (" : " components (") +
         to_string(labeled.Result.algorithm_used) + ", " + std::to_string(request.connectivity) +
         "-connectivity, on " + DeviceDescription(labeled.Result) + ", " +
         FormatMs(labeled.Result.timings.total_ms) + " ms)";
}

template <typename TLabeled>
std::string TimingsJson(const LabelRequest& request, const TLabeled& labeled,
                        OutputType output_type, const CommandTimings& timings) {
  constexpr unsigned VDimension = decltype(labeled.Labels)::ObjectType::ImageDimension;
  const auto& size = labeled.Labels->GetBufferedRegion().GetSize();
  const StepTimings& steps = labeled.Result.timings;
  std::ostringstream json;
  json.precision(6);
  json << "{\"input\": " << detail::json_string(request.input)
       << ", \"output\": " << detail::json_string(request.output) << ", \"output_type\": "
       << detail::json_string(request.output.empty() ? "" : ToString(output_type))
       << ", \"size\": [" << size[0];
  for (unsigned axis = 1; axis < VDimension; ++axis) json << ", " << size[axis];
  json << "], \"components\": " << labeled.Result.component_count
       << ", \"algorithm\": " << detail::json_string(to_string(labeled.Result.algorithm_used))
       << ", \"connectivity\": " << request.connectivity
       << ", \"device\": " << detail::json_string(to_string(labeled.Result.backend_used))
       << ", \"device_description\": " << detail::json_string(DeviceDescription(labeled.Result))
       << ", \"read_ms\": " << timings.read_ms << ", \"binarize_ms\": " << timings.binarize_ms
       << ", \"label_ms\": {\"allocation\": " << steps.allocation_ms
       << ", \"upload\": " << steps.upload_ms << ", \"initialization\": " << steps.initialization_ms
       << ", \"merge\": " << steps.merge_ms << ", \"compression\": " << steps.compression_ms
       << ", \"relabel\": " << steps.relabel_ms
       << ", \"final_labeling\": " << steps.final_labeling_ms
       << ", \"statistics\": " << steps.statistics_ms << ", \"download\": " << steps.download_ms
       << ", \"total\": " << steps.total_ms << "}, \"relabel_ms\": " << timings.relabel_ms
       << ", \"write_ms\": " << timings.write_ms
       << ", \"stats_write_ms\": " << timings.stats_write_ms
       << ", \"vtk_write_ms\": " << timings.vtk_write_ms << "}";
  return json.str();
}

// ---- the command ------------------------------------------------------------------------------

// Relabels (--min-size, --largest, --sort-by-size) and writes OUTPUT, the statistics and the
// ParaView scene, staged, then puts them in place.
template <unsigned VDimension, typename TLabel>
int WriteResults(const LabelRequest& request, LabeledImage<VDimension, TLabel>& labeled,
                 const LabeledInput<VDimension>& labeled_input,
                 std::optional<StagingDirectory>& output_staging,
                 std::optional<StagingDirectory>& stats_staging,
                 std::optional<VtkDirectory>& vtk_directory, Progress& progress,
                 CommandTimings& timings) {
  if (vtk_directory && labeled.Result.component_count > std::numeric_limits<std::uint32_t>::max()) {
    throw CommandError("--vtk " + Quoted(request.vtk) + ": " +
                       std::to_string(labeled.Result.component_count) +
                       " components are more than the ParaView scene numbers (2^32 - 1, its "
                       "32-bit label arrays); write OUTPUT and --stats without --vtk");
  }
  TLabel* labels = labeled.Labels->GetBufferPointer();
  const auto& size = labeled.Labels->GetBufferedRegion().GetSize();
  const Extent3 extent{size[0], size[1], VDimension == 3 ? size[VDimension - 1] : 1};
  detail::StepClock stopwatch;
  if (relabels(request.relabeling)) {
    progress.Start("removing and renumbering components");
    labeled.Result.component_count =
        relabel(labels, extent, static_cast<TLabel>(labeled.Result.component_count),
                request.relabeling, request.Measures() ? &labeled.Moments : nullptr);
    timings.relabel_ms = stopwatch.lap();
  }

  OutputType output_type = OutputType::automatic;
  if (output_staging) {
    output_type = ChooseOutputType(ParseOutputType(request.output_type),
                                   labeled.Result.component_count, request.output);
    progress.Start("writing " + Quoted(request.output) + " (" + ToString(output_type) + ")");
    WriteLabels<VDimension, TLabel>(labeled.Labels.GetPointer(), output_type, request.output,
                                    output_staging->Staged(fs::path(request.output).filename()));
    timings.write_ms = stopwatch.lap();
  }
  std::vector<ComponentShape> shapes;
  if (request.Measures()) {
    shapes = DescribeComponents(labeled.Moments, labeled.Geometry, VDimension);
  }
  std::optional<vtk_output::ComponentValues> values;
  if (labeled_input.values_of && request.Measures()) {
    values = labeled_input.values_of(labeled_input.labeled, labeled.Result.component_count);
  }
  const vtk_output::ComponentValues* component_values = values ? &*values : nullptr;
  if (stats_staging) {
    progress.Start("writing " + Quoted(request.stats));
    WriteStatsTable(shapes, VDimension, request.stats,
                    stats_staging->Staged(fs::path(request.stats).filename()),
                    "--stats " + Quoted(request.stats), component_values);
    timings.stats_write_ms = stopwatch.lap();
  }
  if (vtk_directory) {
    progress.Start(std::string("writing the ParaView scene") +
                   (request.surfaces ? " and surfaces" : "") + " to " + Quoted(request.vtk));
    vtk_output::LabelVolume volume{nullptr, extent, VDimension, labeled.Geometry, component_values};
    if constexpr (std::is_same<TLabel, std::uint32_t>::value) {
      volume.labels = labels;
    } else {
      volume.wide_labels = labels;
    }
    vtk_output::Options options;
    options.label_data =
        request.vtk_labels == "cell" ? vtk_output::LabelData::cell : vtk_output::LabelData::point;
    options.surfaces = request.surfaces;
    try {
      vtk_output::write(vtk_directory->Staging().Path(), volume, shapes, options);
    } catch (const std::runtime_error& error) {
      throw CommandError("cannot write --vtk " + Quoted(request.vtk) + ": " +
                         WithoutLibraryPrefix(error.what()));
    }
    timings.vtk_write_ms = stopwatch.lap();
  }
  progress.Finish();

  const CommitSection commit(request.input, request.force);
  if (output_staging) output_staging->Commit(request.input, request.force);
  if (stats_staging) stats_staging->Commit(request.input, request.force);
  if (vtk_directory) vtk_directory->Commit(request.input, request.force);

  if (request.timings) {
    if (!request.quiet) std::cerr << Summary(request, labeled) << '\n';
    std::cout << TimingsJson(request, labeled, output_type, timings) << '\n';
  } else if (!request.quiet) {
    std::cout << Summary(request, labeled) << '\n';
  }
  return 0;
}

template <unsigned VDimension>
int LabelAndWrite(const InputInformation& information, const LabelRequest& request) {
  // Staging first: an unwritable destination fails before the labeling.
  std::optional<StagingDirectory> output_staging, stats_staging;
  if (!request.output.empty()) {
    output_staging.emplace(DirectoryOf(request.output), fs::path(request.output).filename());
  }
  if (!request.stats.empty()) {
    stats_staging.emplace(DirectoryOf(request.stats), fs::path(request.stats).filename());
  }
  std::optional<VtkDirectory> vtk_directory;
  if (!request.vtk.empty()) vtk_directory.emplace(request.vtk);

  Progress progress(!request.quiet && (request.progress || StderrIsTerminal()));
  CommandTimings timings;
  LabeledInput<VDimension> labeled_input = VisitPixelType(information, [&](auto pixel) {
    return ReadAndLabel<VDimension, decltype(pixel)>(information, request, progress, timings);
  });
  return std::visit(
      [&](auto& labeled) {
        return WriteResults(request, labeled, labeled_input, output_staging, stats_staging,
                            vtk_directory, progress, timings);
      },
      labeled_input.labeled);
}

class LabelCommand : public Command {
 public:
  explicit LabelCommand(CLI::App* app) : Command(app) {
    AddOptions(*app, request_);
    // An algorithm that cannot label with the connectivity asked for (buf with 6, ha4 with 26).
    app->callback([this, app] {
      const bool zarr = IsZarrStore(request_.input);
      for (const char* option : {"--scheduler", "--workers", "--chunks"}) {
        if (!zarr && app->count(option) > 0) {
          throw CLI::ValidationError(option,
                                     "only for a Zarr INPUT (a directory with zarr.json, "
                                     ".zarray or .zgroup, or a name ending in .zarr)");
        }
      }
      for (const std::string& option : OptionsRefusedForZarr()) {
        if (zarr && app->count(option) > 0) {
          throw CLI::ValidationError(option,
                                     "not for a Zarr INPUT, which volccl.dask labels "
                                     "(every non-zero voxel is foreground; docs/cli.md)");
        }
      }
      if (zarr && request_.output_type != "auto" && request_.output_type != "uint32" &&
          request_.output_type != "uint64") {
        throw CLI::ValidationError("--output-type",
                                   "a Zarr INPUT's labels are uint32 or uint64 (auto: uint64)");
      }
      const std::string csv = ".csv";
      if (zarr && !request_.stats.empty() &&
          (request_.stats.size() < csv.size() ||
           request_.stats.compare(request_.stats.size() - csv.size(), csv.size(), csv) != 0)) {
        throw CLI::ValidationError("--stats",
                                   "a Zarr INPUT's statistics are a CSV file: name it "
                                   "FILE.csv");
      }
      if (request_.connectivity != 0) {
        const std::string refusal = Refusal(MakeLabelOptions(request_));
        if (!refusal.empty()) throw CLI::ValidationError(refusal);
      }
      const Algorithm algorithm = parse_algorithm(request_.algorithm);
      if (request_.multi_label && !supports_label_maps(algorithm)) {
        throw CLI::ValidationError("--multi-label: " + to_string(algorithm) +
                                   " labels binary masks only; use auto or an algorithm that "
                                   "takes label maps (docs/cli.md)");
      }
    });
  }

  int Run() const override {
    const LabelRequest& request = request_;
    if (IsZarrStore(request.input)) return RunDask(request);
    if (request.output.empty() && request.stats.empty() && request.vtk.empty()) {
      throw CommandError("nothing to write: give -o OUTPUT, --stats FILE or --vtk DIR");
    }
    CheckInput(request.input);
    if (!request.output.empty()) {
      CheckImageOutput(request.output, request.input, request.force, true);
      ChooseOutputType(ParseOutputType(request.output_type), 0,
                       request.output);  // PNG and uint32, say
    }
    if (!request.stats.empty()) {
      CheckStatsOutput("--stats", request.stats, request.input, request.output, request.force);
    }
    if (!request.vtk.empty()) CheckVtkDirectory(request.vtk, request.input, request.force);
    const InputInformation information = ReadInputInformation(request.input, "INPUT");
    if (!request.output.empty()) CheckOutputHoldsVolume(request.output, information.extent.z);
    if (!request.vtk.empty()) CheckVtkHoldsVolume(request, information.extent);
    if (request.Measures()) {
      try {
        validate_statistics(information.extent);
      } catch (const InvalidArgument& error) {
        throw CommandError((request.stats.empty() ? "--vtk: " : "--stats: ") +
                           WithoutLibraryPrefix(error.what()));
      }
    }
    const bool wide = ParseOutputType(request.output_type) == OutputType::uint64;
    CheckReadable(information,
                  (wide ? sizeof(std::uint64_t) : sizeof(std::uint32_t)) + sizeof(std::uint8_t));
    LabelRequest resolved = request;
    resolved.connectivity = ResolveConnectivity(request, information);
    return information.dimension == 2 ? LabelAndWrite<2>(information, resolved)
                                      : LabelAndWrite<3>(information, resolved);
  }

 private:
  LabelRequest request_;
};

}  // namespace

std::unique_ptr<Command> AddLabelCommand(CLI::App& app) {
  return std::make_unique<LabelCommand>(app.add_subcommand(
      "label",
      "Label the connected components of a 3D volume or a 2D image; write the labels, their "
      "statistics (--stats) and a ParaView scene (--vtk)"));
}

}  // namespace volccl::cli
