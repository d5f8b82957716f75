// volccl: the command line.
//
//   volccl label brain.nii.gz --otsu -o labels.nii.gz
//   volccl label cells.png --connectivity 4 -o labels.mha
//
// reads a 3D volume or a 2D image with ITK, turns it into a foreground mask, labels the connected
// components of the mask with volccl and writes them as uint32 labels with the input's geometry.
// Output files are written in a hidden directory beside OUTPUT and moved into place when
// complete.
#include <stdlib.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "itkImageFileReader.h"
#include "itkImageFileWriter.h"
#include "itkImageIOFactory.h"
#include "volccl/data/generators.h"
#include "volccl/detail/step_clock.h"
#include "volccl/relabel.h"
#include "volcclLabelImage.h"
#include "volcclOtsuForeground.h"

namespace fs = std::filesystem;

namespace {

template <unsigned VDimension>
using MaskImage = itk::Image<std::uint8_t, VDimension>;

// A failure the user can fix; main prints it on one "volccl: error: " line and exits with 1.
class CommandError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Which input voxels are foreground.
struct Foreground {
  enum class Rule { nonzero, range, otsu };
  Rule rule = Rule::nonzero;
  double low = 0;  // Rule::range: low <= value <= high
  double high = 0;
};

struct LabelCommand {
  std::string input;
  std::string output;
  int connectivity = 0;  // 0: not given; 26 for volumes, 8 for 2D images
  std::string algorithm = volccl::to_string(volccl::LabelOptions{}.algorithm);
  std::string device = "auto";
  Foreground foreground;
  volccl::RelabelOptions relabeling;
  std::string stats;  // empty: no statistics
  std::string statistics_strategy = volccl::to_string(volccl::LabelOptions{}.statistics_strategy);
  bool force = false;
  bool quiet = false;
  bool timings = false;
};

struct StatsCommand {
  std::string input;
  std::string output;
  bool force = false;
  bool quiet = false;
};

struct GenerateCommand {
  std::string kind;
  std::string output;
  std::vector<std::uint64_t> size = {256, 256, 256};
  double density = 0.3;
  unsigned granularity = 1;
  std::uint32_t seed = 1;
  unsigned order = 4;
  unsigned gap = 2;
  bool force = false;
  bool quiet = false;
};

struct InfoCommand {
  std::string input;
};

// Milliseconds of the steps around the labeling, for --timings.
struct CommandTimings {
  double read_ms = 0;
  double binarize_ms = 0;
  double write_ms = 0;
  double relabel_ms = 0;
  double stats_write_ms = 0;
};

std::string Quoted(const fs::path& path) { return "'" + path.string() + "'"; }

// ---- the command line ---------------------------------------------------------------------

double ParseThresholdValue(const std::string& text) {
  std::size_t parsed = 0;
  double value = 0;
  try {
    value = std::stod(text, &parsed);
  } catch (const std::exception&) {
    parsed = 0;
  }
  if (parsed == 0 || parsed != text.size() || std::isnan(value)) {
    throw CLI::ValidationError("--threshold", "'" + text + "' is not a number");
  }
  return value;
}

// "LOW" (foreground: LOW <= value) or "LOW:HIGH" (foreground: LOW <= value <= HIGH).
Foreground ParseThreshold(const std::string& text) {
  Foreground foreground;
  foreground.rule = Foreground::Rule::range;
  const std::size_t colon = text.find(':');
  foreground.low = ParseThresholdValue(text.substr(0, colon));
  foreground.high = colon == std::string::npos ? std::numeric_limits<double>::infinity()
                                               : ParseThresholdValue(text.substr(colon + 1));
  if (foreground.low > foreground.high) {
    throw CLI::ValidationError(
        "--threshold", "LOW " + text.substr(0, colon) + " is above HIGH " + text.substr(colon + 1));
  }
  return foreground;
}

// The library's message without its "volccl: " prefix, which "volccl: error: " already says.
std::string WithoutLibraryPrefix(std::string message) {
  const std::string library_prefix = "volccl: ";
  if (message.rfind(library_prefix, 0) == 0) message.erase(0, library_prefix.size());
  return message;
}

// Why the library refuses `options` for an image of `extent` (a connectivity that does not
// exist, a block-based algorithm with 4, 6 or 18, HA4 or KE on a volume), in its own words;
// empty when it accepts them. The default extent, one voxel, takes every connectivity.
std::string Refusal(const volccl::LabelOptions& options, volccl::Extent3 extent = {}) {
  try {
    volccl::validate(extent, options);
  } catch (const volccl::InvalidArgument& error) {
    return WithoutLibraryPrefix(error.what());
  }
  return {};
}

CLI::Validator SupportedConnectivity() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        volccl::LabelOptions options;
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
  std::vector<std::string> names{volccl::to_string(volccl::Algorithm::automatic)};
  for (volccl::Algorithm algorithm : volccl::all_algorithms()) {
    names.push_back(volccl::to_string(algorithm));
  }
  return names;
}

CLI::App* AddLabelCommand(CLI::App& app, LabelCommand& command) {
  CLI::App* label = app.add_subcommand(
      "label",
      "Label the connected components of a 3D volume or a 2D image and write them as uint32 "
      "labels");
  label
      ->add_option("INPUT", command.input,
                   "Volume or image to label, in any format ITK reads (.nii, .nii.gz, .mha, .mhd, "
                   ".nrrd, .png, .tif)")
      ->required();
  label
      ->add_option("-o,--output", command.output,
                   "Label image to write (0 background, 1..N in raster order); its extension "
                   "picks the format (one that stores uint32: .nii.gz, .nii, .mha, .nrrd, .tif)")
      ->required();
  label
      ->add_option("--connectivity", command.connectivity,
                   "Volumes: voxels touching by a face (6), a face or an edge (18), or a face, "
                   "an edge or a corner (26) are connected; default 26. 2D images: pixels "
                   "touching by an edge (4) or an edge or a corner (8); default 8. A one-slice "
                   "volume takes either. ITK's ConnectedComponentImageFilter defaults to 6 / 4 "
                   "(FullyConnected off); 26 / 8 is its FullyConnected on")
      ->type_name("INT")
      ->check(SupportedConnectivity());
  label
      ->add_option("--algorithm", command.algorithm,
                   "Labeling algorithm: auto picks buf for 26, uf for 6 and 18, bke-ic for 8 and "
                   "ha4-64 for 4; the block-based buf, buf-ic, bke and bke-ic need 26 or 8; uf "
                   "(voxel union-find) takes every connectivity; ke, ha4 and ha4-64 label 2D "
                   "images (4 or 8)")
      ->capture_default_str()
      ->check(CLI::IsMember(AlgorithmNames()));
  label
      ->add_option("--device", command.device,
                   "Where to label: auto uses a CUDA GPU when one is usable, else the CPU")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "cuda", "cpu"}));
  CLI::Option* otsu = label->add_flag_callback(
      "--otsu", [&command] { command.foreground.rule = Foreground::Rule::otsu; },
      "Foreground: voxels above the Otsu threshold of the image");
  CLI::Option* threshold =
      label
          ->add_option_function<std::string>(
              "--threshold",
              [&command](const std::string& text) { command.foreground = ParseThreshold(text); },
              "Foreground: voxels with LOW <= value <= HIGH (no HIGH: no upper bound)")
          ->type_name("LOW[:HIGH]");
  otsu->excludes(threshold);
  label
      ->add_option("--min-size", command.relabeling.minimum_size,
                   "Components of fewer voxels become background (dust removal)")
      ->type_name("N");
  label
      ->add_option("--largest", command.relabeling.keep_largest,
                   "Keep only the K largest components (ties: the first in raster order)")
      ->type_name("K");
  label->add_flag("--sort-by-size", command.relabeling.sort_by_size,
                  "Number the components largest first (ties in raster order), as ITK's "
                  "RelabelComponentImageFilter; without it, in raster order of their first voxel");
  label
      ->add_option("--stats", command.stats,
                   "Also measure every component and write one row per label to FILE: .csv "
                   "(a header of column names) or .json. Count, physical size, centroid "
                   "(physical and index), covariance (physical, 6 or 3 unique terms), principal "
                   "moments and axes, bounding box (indices); units in the README")
      ->type_name("FILE");
  label
      ->add_option("--stats-strategy", command.statistics_strategy,
                   "How the GPU gathers the statistics: late (a pass over the labels; every "
                   "algorithm), fused (in the final labeling step) or early (per-block moments "
                   "merged as the blocks are; both for buf, buf-ic, bke and bke-ic). The numbers "
                   "are the same")
      ->capture_default_str()
      ->check(CLI::IsMember({"late", "fused", "early"}));
  label->add_flag("--force", command.force, "Overwrite OUTPUT (and the --stats FILE) if it exists");
  label->add_flag("-q,--quiet", command.quiet, "Print nothing but errors");
  label->add_flag("--timings", command.timings,
                  "Print the step timings as one JSON object on stdout (the summary line then "
                  "goes to stderr)");
  label->footer(
      "Without --otsu or --threshold every non-zero voxel is foreground. OUTPUT keeps the "
      "spacing, origin and direction of INPUT.");
  return label;
}

CLI::App* AddStatsCommand(CLI::App& app, StatsCommand& command) {
  CLI::App* stats = app.add_subcommand(
      "stats",
      "Measure the components of an existing label image (0 background, labels 1..N, from "
      "volccl, ITK or anywhere) on the CPU and write the statistics of `volccl label --stats`");
  stats
      ->add_option("LABELS", command.input,
                   "Label image of non-negative integer values, in any format ITK reads")
      ->required();
  stats
      ->add_option("-o,--output", command.output,
                   "Statistics to write: FILE.csv or FILE.json, one row per label present, "
                   "the columns of volccl label --stats")
      ->required();
  stats->add_flag("--force", command.force, "Overwrite OUTPUT if it exists");
  stats->add_flag("-q,--quiet", command.quiet, "Print nothing but errors");
  return stats;
}

CLI::App* AddGenerateCommand(CLI::App& app, GenerateCommand& command) {
  CLI::App* generate = app.add_subcommand(
      "generate",
      "Write a synthetic binary volume or image (DESIGN.md's test and benchmark inputs) as uint8 "
      "0/1: random (YACCLAB's density x granularity, MT19937), hilbert (a 3D Hilbert curve), "
      "spiral, checkerboard or shells");
  generate->add_option("KIND", command.kind, "random, hilbert, spiral, checkerboard or shells")
      ->required()
      ->check(CLI::IsMember({"random", "hilbert", "spiral", "checkerboard", "shells"}));
  generate
      ->add_option("-o,--output", command.output,
                   "File to write, in any format ITK writes (.nii.gz, .mha, .nrrd, .png, .tif)")
      ->required();
  generate
      ->add_option("--size", command.size,
                   "X,Y[,Z]: two numbers for a 2D image (random, spiral, checkerboard); hilbert "
                   "takes one side, a power of two; default 256,256,256")
      ->delimiter(',')
      ->expected(1, 3);
  generate->add_option("--density", command.density, "random: foreground fraction, 0..1")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  generate->add_option("--granularity", command.granularity, "random: cell side in voxels")
      ->capture_default_str()
      ->check(CLI::Range(1u, 1u << 20));
  generate->add_option("--seed", command.seed, "random: the MT19937 seed")->capture_default_str();
  generate->add_option("--order", command.order, "hilbert: the curve's order, 1..log2(side)")
      ->capture_default_str();
  generate->add_option("--gap", command.gap, "shells: voxels between neighbouring shells")
      ->capture_default_str();
  generate->add_flag("--force", command.force, "Overwrite OUTPUT if it exists");
  generate->add_flag("-q,--quiet", command.quiet, "Print nothing but errors");
  return generate;
}

CLI::App* AddInfoCommand(CLI::App& app, InfoCommand& command) {
  CLI::App* info = app.add_subcommand(
      "info",
      "Print an image's size, spacing, origin, pixel type and foreground (non-zero) fraction, "
      "and whether a CUDA GPU is usable");
  info->add_option("INPUT", command.input, "Image in any format ITK reads")->required();
  return info;
}

volccl::LabelOptions MakeLabelOptions(const LabelCommand& command) {
  volccl::LabelOptions options;
  options.algorithm = volccl::parse_algorithm(command.algorithm);
  options.backend = volccl::parse_backend(command.device);
  if (command.connectivity != 0) options.connectivity = command.connectivity;
  options.step_timings = command.timings;
  options.statistics_strategy = volccl::parse_statistics_strategy(command.statistics_strategy);
  return options;
}

// ---- checks before any work -----------------------------------------------------------------

void CheckInput(const fs::path& input) {
  if (!fs::exists(input)) throw CommandError("INPUT " + Quoted(input) + " does not exist");
  if (fs::is_directory(input)) throw CommandError("INPUT " + Quoted(input) + " is a directory");
  if (!std::ifstream(input)) {
    throw CommandError("cannot open INPUT " + Quoted(input) + ": " + std::strerror(errno));
  }
}

fs::path DirectoryOf(const fs::path& file) {
  return file.has_parent_path() ? file.parent_path() : fs::path(".");
}

// `labels`: OUTPUT must hold uint32 (volccl label); volccl generate writes uint8 masks.
// What every file volccl writes must allow: a file name, not the input, not a directory, not an
// existing file without --force, in an existing directory. `named`: "OUTPUT 'x'" and the like.
void CheckWritableFile(const std::string& named, const fs::path& file, const fs::path& input,
                       bool force) {
  if (!file.has_filename()) throw CommandError(named + " names no file");
  if (fs::exists(file)) {
    if (fs::equivalent(file, input)) {
      throw CommandError(named + " is the INPUT; volccl never overwrites it");
    }
    if (fs::is_directory(file)) throw CommandError(named + " is a directory");
    if (!force) throw CommandError(named + " exists; --force overwrites it");
  }
  const fs::path directory = DirectoryOf(file);
  if (!fs::is_directory(directory)) {
    throw CommandError("cannot write " + named + ": " + Quoted(directory) +
                       (fs::exists(directory) ? " is not a directory" : " does not exist"));
  }
}

void CheckOutput(const fs::path& output, const fs::path& input, bool force, bool labels = true) {
  CheckWritableFile("OUTPUT " + Quoted(output), output, input, force);
  const itk::ImageIOBase::Pointer writer = itk::ImageIOFactory::CreateImageIO(
      output.c_str(), itk::ImageIOFactory::IOFileModeEnum::WriteMode);
  if (!writer) {
    throw CommandError("cannot write OUTPUT " + Quoted(output) + ": ITK has no writer for " +
                       Quoted(output.extension()) + " files (use .nii.gz, .nii, .mha or .nrrd)");
  }
  const std::string format = writer->GetNameOfClass();
  if (labels && (format == "PNGImageIO" || format == "JPEGImageIO" || format == "BMPImageIO")) {
    throw CommandError("cannot write OUTPUT " + Quoted(output) + ": " + Quoted(output.extension()) +
                       " files cannot hold uint32 labels (use .nii.gz, .nii, .mha, .nrrd or .tif)");
  }
}

// `what` names the file in messages: "--stats" (volccl label) or "OUTPUT" (volccl stats).
void CheckStatsOutput(const std::string& what, const fs::path& stats, const fs::path& input,
                      const fs::path& output, bool force) {
  const std::string named = what + " " + Quoted(stats);
  const std::string extension = stats.extension().string();
  if (stats.has_filename() && extension != ".csv" && extension != ".json") {
    throw CommandError(named + ": the file must end in .csv or .json");
  }
  if (!output.empty() &&
      fs::absolute(stats).lexically_normal() == fs::absolute(output).lexically_normal()) {
    throw CommandError(named + " is also OUTPUT");
  }
  CheckWritableFile(named, stats, input, force);
}

// What INPUT holds, learned from its header.
struct InputInformation {
  itk::ImageIOBase::Pointer io;
  unsigned dimension = 3;  // 2 for a 2D image, 3 for a volume (possibly of one slice)
  volccl::Extent3 extent;
};

// Learns the dimension, size and pixel type of INPUT without reading its voxels, and refuses
// what volccl cannot label. Trailing dimensions of size 1 beyond the third (a 4D NIfTI with one
// time point) are dropped.
InputInformation ReadInputInformation(const fs::path& input) {
  InputInformation information;
  information.io = itk::ImageIOFactory::CreateImageIO(
      input.c_str(), itk::ImageIOFactory::IOFileModeEnum::ReadMode);
  itk::ImageIOBase* io = information.io.GetPointer();
  if (!io) {
    throw CommandError("cannot read INPUT " + Quoted(input) +
                       ": not an image in a format ITK reads, or a damaged one");
  }
  io->SetFileName(input.string());
  try {
    io->ReadImageInformation();
  } catch (const itk::ExceptionObject& error) {
    throw CommandError("cannot read INPUT " + Quoted(input) + ": " + error.GetDescription());
  }

  unsigned dimension = io->GetNumberOfDimensions();
  while (dimension > 3 && io->GetDimensions(dimension - 1) == 1) --dimension;
  if (dimension != 2 && dimension != 3) {
    throw CommandError(Quoted(input) + " is a " + std::to_string(dimension) +
                       "D image; volccl labels 2D images and 3D volumes");
  }
  if (io->GetNumberOfComponents() != 1) {
    throw CommandError(Quoted(input) + " has " + std::to_string(io->GetNumberOfComponents()) +
                       "-component " + itk::ImageIOBase::GetPixelTypeAsString(io->GetPixelType()) +
                       " pixels; only images of scalar pixels are supported");
  }
  information.dimension = dimension;
  information.extent = {io->GetDimensions(0), io->GetDimensions(1),
                        dimension == 3 ? io->GetDimensions(2) : 1};
  return information;
}

// The connectivity to label INPUT with: the one asked for, else 8 for a 2D image or a one-slice
// volume and 26 for other volumes. Refuses volume connectivities on a 2D file and anything the
// library refuses for this extent (4 or 8 on a volume, ha4 on a volume).
int ResolveConnectivity(const LabelCommand& command, const InputInformation& information) {
  const volccl::Extent3& extent = information.extent;
  int connectivity = command.connectivity;
  if (connectivity == 0) connectivity = extent.z == 1 ? 8 : 26;
  if (information.dimension == 2 && !volccl::is_2d_connectivity(connectivity)) {
    throw CommandError("INPUT " + Quoted(command.input) + " is a 2D image of " +
                       std::to_string(extent.x) + "x" + std::to_string(extent.y) +
                       " pixels; use --connectivity 4 or 8 (" + std::to_string(connectivity) +
                       " is for volumes)");
  }
  volccl::LabelOptions options = MakeLabelOptions(command);
  options.connectivity = connectivity;
  const std::string refusal = Refusal(options, extent);
  if (!refusal.empty()) throw CommandError("INPUT " + Quoted(command.input) + ": " + refusal);
  return connectivity;
}

// ---- reading, binarizing and labeling -------------------------------------------------------

template <typename TPixel, unsigned VDimension>
typename MaskImage<VDimension>::Pointer Binarize(const itk::Image<TPixel, VDimension>* image,
                                                 const Foreground& foreground) {
  if (foreground.rule == Foreground::Rule::otsu) return volccl::OtsuForeground(image);
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

// Reads INPUT as TPixel voxels (its own type: no rounding), binarizes it and labels it.
template <unsigned VDimension, typename TPixel>
volccl::LabeledImage<VDimension> ReadAndLabel(const fs::path& input, const LabelCommand& command,
                                              CommandTimings& timings) {
  volccl::detail::StepClock stopwatch;
  typename itk::Image<TPixel, VDimension>::Pointer image;
  try {
    image = itk::ReadImage<itk::Image<TPixel, VDimension>>(input.string());
  } catch (const itk::ExceptionObject& error) {
    throw CommandError("cannot read INPUT " + Quoted(input) + ": " + error.GetDescription());
  }
  timings.read_ms = stopwatch.lap();
  const volccl::LabelOptions options = MakeLabelOptions(command);
  const bool measure = !command.stats.empty();
  if (command.foreground.rule == Foreground::Rule::nonzero) {
    return volccl::detail::LabelImage(image.GetPointer(), options, TPixel{}, measure);
  }
  typename MaskImage<VDimension>::Pointer mask = Binarize(image.GetPointer(), command.foreground);
  image = nullptr;  // frees the input before the labels are allocated
  timings.binarize_ms = stopwatch.lap();
  return volccl::detail::LabelImage(mask.GetPointer(), options, std::uint8_t{0}, measure);
}

template <unsigned VDimension>
volccl::LabeledImage<VDimension> ReadAndLabel(const itk::ImageIOBase& io, const fs::path& input,
                                              const LabelCommand& command,
                                              CommandTimings& timings) {
  using Component = itk::IOComponentEnum;
  switch (io.GetComponentType()) {
    case Component::UCHAR:
      return ReadAndLabel<VDimension, std::uint8_t>(input, command, timings);
    case Component::CHAR:
      return ReadAndLabel<VDimension, std::int8_t>(input, command, timings);
    case Component::USHORT:
      return ReadAndLabel<VDimension, std::uint16_t>(input, command, timings);
    case Component::SHORT:
      return ReadAndLabel<VDimension, std::int16_t>(input, command, timings);
    case Component::UINT:
      return ReadAndLabel<VDimension, std::uint32_t>(input, command, timings);
    case Component::INT:
      return ReadAndLabel<VDimension, std::int32_t>(input, command, timings);
    case Component::ULONG:
    case Component::ULONGLONG:
      return ReadAndLabel<VDimension, std::uint64_t>(input, command, timings);
    case Component::LONG:
    case Component::LONGLONG:
      return ReadAndLabel<VDimension, std::int64_t>(input, command, timings);
    case Component::FLOAT:
      return ReadAndLabel<VDimension, float>(input, command, timings);
    case Component::DOUBLE:
      return ReadAndLabel<VDimension, double>(input, command, timings);
    default:
      throw CommandError(Quoted(input) + " has " +
                         itk::ImageIOBase::GetComponentTypeAsString(io.GetComponentType()) +
                         " voxels, which volccl cannot read");
  }
}

// ---- writing ----------------------------------------------------------------------------------

// A hidden directory beside OUTPUT that the writer fills under OUTPUT's own file name. Commit()
// moves the files into place once they are complete; whatever is left is removed, so a failed
// run leaves no partial OUTPUT. Formats of two files (.mhd + .raw) work the same way.
class StagingDirectory {
 public:
  explicit StagingDirectory(const fs::path& output)
      : output_(output), destination_(DirectoryOf(output)) {
    std::string pattern =
        (destination_ / ("." + output.filename().string() + ".tmp-XXXXXX")).string();
    if (mkdtemp(pattern.data()) == nullptr) {
      throw CommandError("cannot write to directory " + Quoted(destination_) + ": " +
                         std::strerror(errno));
    }
    path_ = pattern;
  }
  StagingDirectory(const StagingDirectory&) = delete;
  StagingDirectory& operator=(const StagingDirectory&) = delete;
  ~StagingDirectory() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }

  fs::path StagedOutput() const { return path_ / output_.filename(); }

  void Commit(const fs::path& input, bool force) const {
    std::vector<fs::path> staged;
    for (const fs::directory_entry& entry : fs::directory_iterator(path_)) {
      const fs::path target = destination_ / entry.path().filename();
      if (fs::exists(target) && fs::equivalent(target, input)) {
        throw CommandError("writing OUTPUT would replace INPUT " + Quoted(target));
      }
      if (fs::exists(target) && !force) {
        throw CommandError(Quoted(target) + " exists; --force overwrites it");
      }
      staged.push_back(entry.path());
    }
    for (const fs::path& file : staged) fs::rename(file, destination_ / file.filename());
  }

 private:
  fs::path output_;
  fs::path destination_;
  fs::path path_;
};

template <unsigned VDimension>
void WriteLabels(const volccl::LabelImageType<VDimension>* labels, const fs::path& output,
                 const StagingDirectory& staging) {
  try {
    itk::WriteImage(labels, staging.StagedOutput().string());
  } catch (const itk::ExceptionObject& error) {
    throw CommandError("cannot write OUTPUT " + Quoted(output) + ": " + error.GetDescription());
  }
}

// ---- reporting ----------------------------------------------------------------------------------

std::string FormatMs(double ms) {
  char text[32];
  std::snprintf(text, sizeof text, ms < 100 ? "%.3g" : "%.0f", ms);
  return text;
}

std::string JsonString(const std::string& text) {
  std::string json = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      json += '\\';
      json += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
      json += escaped;
    } else {
      json += c;
    }
  }
  return json + "\"";
}

std::string DeviceDescription(const volccl::LabelResult& result) {
  if (result.backend_used == volccl::Backend::cuda) {
    return "CUDA: " + volccl::cuda_device_description();
  }
  return "CPU, " + std::to_string(std::max(1u, std::thread::hardware_concurrency())) + " threads";
}

// "128x128x62 voxels" or "640x480 pixels".
template <typename TPixel, unsigned VDimension>
std::string SizeOf(const itk::Image<TPixel, VDimension>* image) {
  const auto& size = image->GetBufferedRegion().GetSize();
  std::string text = std::to_string(size[0]);
  for (unsigned axis = 1; axis < VDimension; ++axis) text += "x" + std::to_string(size[axis]);
  return text + (VDimension == 3 ? " voxels" : " pixels");
}

// "labeled 128x128x62 voxels: 17 components (buf, 26-connectivity, on CPU, 2 threads,
// 12.3 ms)", with the algorithm that ran (what auto chose).
template <unsigned VDimension>
std::string Summary(const LabelCommand& command, const volccl::LabeledImage<VDimension>& labeled) {
  const std::uint32_t count = labeled.Result.component_count;
  return "labeled " + SizeOf(labeled.Labels.GetPointer()) + ": " + std::to_string(count) +
         (count == 1 ? " component (" : " components (") +
         volccl::to_string(labeled.Result.algorithm_used) + ", " +
         std::to_string(command.connectivity) + "-connectivity, on " +
         DeviceDescription(labeled.Result) + ", " + FormatMs(labeled.Result.timings.total_ms) +
         " ms)";
}

template <unsigned VDimension>
std::string TimingsJson(const LabelCommand& command,
                        const volccl::LabeledImage<VDimension>& labeled,
                        const CommandTimings& timings) {
  const auto& size = labeled.Labels->GetBufferedRegion().GetSize();
  const volccl::StepTimings& steps = labeled.Result.timings;
  std::ostringstream json;
  json.precision(6);
  json << "{\"input\": " << JsonString(command.input)
       << ", \"output\": " << JsonString(command.output) << ", \"size\": [" << size[0];
  for (unsigned axis = 1; axis < VDimension; ++axis) json << ", " << size[axis];
  json << "], \"components\": " << labeled.Result.component_count
       << ", \"algorithm\": " << JsonString(volccl::to_string(labeled.Result.algorithm_used))
       << ", \"connectivity\": " << command.connectivity
       << ", \"device\": " << JsonString(volccl::to_string(labeled.Result.backend_used))
       << ", \"device_description\": " << JsonString(DeviceDescription(labeled.Result))
       << ", \"read_ms\": " << timings.read_ms << ", \"binarize_ms\": " << timings.binarize_ms
       << ", \"label_ms\": {\"allocation\": " << steps.allocation_ms
       << ", \"upload\": " << steps.upload_ms << ", \"initialization\": " << steps.initialization_ms
       << ", \"merge\": " << steps.merge_ms << ", \"compression\": " << steps.compression_ms
       << ", \"relabel\": " << steps.relabel_ms
       << ", \"final_labeling\": " << steps.final_labeling_ms
       << ", \"statistics\": " << steps.statistics_ms << ", \"download\": " << steps.download_ms
       << ", \"total\": " << steps.total_ms << "}, \"relabel_ms\": " << timings.relabel_ms
       << ", \"write_ms\": " << timings.write_ms
       << ", \"stats_write_ms\": " << timings.stats_write_ms << "}";
  return json.str();
}

// The columns of --stats: one row per label, the numbers of volccl::describe. 2D images have
// no z terms.
std::string Number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", value);
  return text;
}

template <unsigned VDimension>
std::vector<std::string> StatsColumns() {
  const char* axes[] = {"x", "y", "z"};
  const char* terms3[] = {"xx", "yy", "zz", "xy", "xz", "yz"};
  const char* terms2[] = {"xx", "yy", "xy"};
  std::vector<std::string> columns = {"label", "count", "physical_size"};
  for (unsigned i = 0; i < VDimension; ++i) columns.push_back(std::string("centroid_") + axes[i]);
  for (unsigned i = 0; i < VDimension; ++i) {
    columns.push_back(std::string("centroid_index_") + axes[i]);
  }
  for (const char* term : VDimension == 3 ? std::vector<const char*>(terms3, terms3 + 6)
                                          : std::vector<const char*>(terms2, terms2 + 3)) {
    columns.push_back(std::string("covariance_") + term);
  }
  for (unsigned r = 0; r < VDimension; ++r) {
    columns.push_back("principal_moment_" + std::to_string(r + 1));
  }
  for (unsigned r = 0; r < VDimension; ++r) {
    for (unsigned i = 0; i < VDimension; ++i) {
      columns.push_back("principal_axis_" + std::to_string(r + 1) + "_" + axes[i]);
    }
  }
  for (const char* end : {"min", "max"}) {
    for (unsigned i = 0; i < VDimension; ++i) {
      columns.push_back(std::string("bounding_box_") + end + "_" + axes[i]);
    }
  }
  return columns;
}

// The values of StatsColumns for one label.
template <unsigned VDimension>
std::vector<std::string> StatsRow(std::uint32_t label, const volccl::ComponentShape& shape) {
  std::vector<std::string> row = {std::to_string(label), std::to_string(shape.count),
                                  Number(shape.physical_size)};
  for (unsigned i = 0; i < VDimension; ++i) row.push_back(Number(shape.centroid[i]));
  for (unsigned i = 0; i < VDimension; ++i) row.push_back(Number(shape.centroid_index[i]));
  const int terms3[] = {0, 1, 2, 3, 4, 5}, terms2[] = {0, 1, 3};
  for (unsigned t = 0; t < (VDimension == 3 ? 6u : 3u); ++t) {
    row.push_back(Number(shape.covariance[VDimension == 3 ? terms3[t] : terms2[t]]));
  }
  for (unsigned r = 0; r < VDimension; ++r) row.push_back(Number(shape.principal_moments[r]));
  for (unsigned r = 0; r < VDimension; ++r) {
    for (unsigned i = 0; i < VDimension; ++i) {
      row.push_back(Number(shape.principal_axes[3 * r + i]));
    }
  }
  for (unsigned i = 0; i < VDimension; ++i)
    row.push_back(std::to_string(shape.bounding_box_min[i]));
  for (unsigned i = 0; i < VDimension; ++i)
    row.push_back(std::to_string(shape.bounding_box_max[i]));
  return row;
}

// One row per label that has voxels (a label image from elsewhere may skip some).
template <unsigned VDimension>
void WriteStatsFile(const std::vector<volccl::ComponentMoments>& moments,
                    const volccl::ImageGeometry& geometry, const fs::path& stats,
                    const fs::path& staged) {
  std::ofstream file(staged);
  const std::vector<std::string> columns = StatsColumns<VDimension>();
  const bool json = stats.extension() == ".json";
  if (json) {
    file << "{\"dimension\": " << VDimension << ", \"columns\": [";
    for (std::size_t c = 0; c < columns.size(); ++c) {
      file << (c ? ", " : "") << JsonString(columns[c]);
    }
    file << "],\n \"rows\": [";
  } else {
    for (std::size_t c = 0; c < columns.size(); ++c) file << (c ? "," : "") << columns[c];
    file << '\n';
  }
  bool first = true;
  for (std::size_t i = 0; i < moments.size(); ++i) {
    if (moments[i].count == 0) continue;
    const volccl::ComponentShape shape = volccl::describe(moments[i], geometry, VDimension);
    const std::vector<std::string> row =
        StatsRow<VDimension>(static_cast<std::uint32_t>(i + 1), shape);
    if (json) file << (first ? "\n  [" : ",\n  [");
    first = false;
    for (std::size_t c = 0; c < row.size(); ++c) file << (c ? (json ? ", " : ",") : "") << row[c];
    if (json)
      file << ']';
    else
      file << '\n';
  }
  if (json) file << "]}\n";
  file.close();
  if (!file) {
    throw CommandError("cannot write --stats " + Quoted(stats) + ": " + std::strerror(errno));
  }
}

// ---- volccl label -------------------------------------------------------------------------------

template <unsigned VDimension>
int LabelAndWrite(const itk::ImageIOBase& io, const LabelCommand& command) {
  const fs::path input = command.input;
  const fs::path output = command.output;
  const StagingDirectory staging(output);  // before the labeling: an unwritable OUTPUT fails fast
  std::optional<StagingDirectory> stats_staging;
  if (!command.stats.empty()) stats_staging.emplace(command.stats);

  CommandTimings timings;
  volccl::LabeledImage<VDimension> labeled = ReadAndLabel<VDimension>(io, input, command, timings);
  volccl::detail::StepClock stopwatch;
  if (volccl::relabels(command.relabeling)) {
    const auto& size = labeled.Labels->GetBufferedRegion().GetSize();
    const volccl::Extent3 extent{size[0], size[1], VDimension == 3 ? size[VDimension - 1] : 1};
    labeled.Result.component_count =
        volccl::relabel(labeled.Labels->GetBufferPointer(), extent, labeled.Result.component_count,
                        command.relabeling, command.stats.empty() ? nullptr : &labeled.Moments);
    timings.relabel_ms = stopwatch.lap();
  }
  WriteLabels(labeled.Labels.GetPointer(), output, staging);
  timings.write_ms = stopwatch.lap();
  if (stats_staging) {
    WriteStatsFile<VDimension>(labeled.Moments, labeled.Geometry, command.stats,
                               stats_staging->StagedOutput());
    timings.stats_write_ms = stopwatch.lap();
  }
  staging.Commit(input, command.force);
  if (stats_staging) stats_staging->Commit(input, command.force);

  if (command.timings) {
    if (!command.quiet) std::cerr << Summary(command, labeled) << '\n';
    std::cout << TimingsJson(command, labeled, timings) << '\n';
  } else if (!command.quiet) {
    std::cout << Summary(command, labeled) << '\n';
  }
  return 0;
}

int RunLabel(const LabelCommand& requested) {
  CheckInput(requested.input);
  CheckOutput(requested.output, requested.input, requested.force);
  if (!requested.stats.empty()) {
    CheckStatsOutput("--stats", requested.stats, requested.input, requested.output,
                     requested.force);
  }
  const InputInformation information = ReadInputInformation(requested.input);
  LabelCommand command = requested;
  command.connectivity = ResolveConnectivity(requested, information);
  return information.dimension == 2 ? LabelAndWrite<2>(*information.io, command)
                                    : LabelAndWrite<3>(*information.io, command);
}

// ---- volccl generate and volccl info ------------------------------------------------------------

template <unsigned VDimension>
void WriteMask(const volccl::data::Volume& volume, const fs::path& output, bool force) {
  using Image = itk::Image<std::uint8_t, VDimension>;
  auto image = Image::New();
  typename Image::SizeType size;
  const std::uint64_t sides[3] = {volume.extent.x, volume.extent.y, volume.extent.z};
  for (unsigned i = 0; i < VDimension; ++i) size[i] = sides[i];
  image->SetRegions(size);
  image->Allocate();
  std::copy(volume.voxels.begin(), volume.voxels.end(), image->GetBufferPointer());
  const StagingDirectory staging(output);
  try {
    itk::WriteImage(image.GetPointer(), staging.StagedOutput().string());
  } catch (const itk::ExceptionObject& error) {
    throw CommandError("cannot write OUTPUT " + Quoted(output) + ": " + error.GetDescription());
  }
  staging.Commit("", force);
}

int RunGenerate(const GenerateCommand& command) {
  CheckOutput(command.output, "", command.force, false);
  const std::vector<std::uint64_t>& size = command.size;
  const bool image = size.size() == 2;
  if (command.kind == "hilbert" && size.size() != 1 &&
      size != std::vector<std::uint64_t>(3, size[0])) {
    throw CommandError("hilbert takes one --size, the side of a cube (a power of two)");
  }
  if (command.kind != "hilbert" && size.size() == 1) {
    throw CommandError(command.kind + " takes --size X,Y (an image) or X,Y,Z (a volume)");
  }
  for (std::uint64_t side : size) {
    if (side == 0) throw CommandError("--size: every side must be at least 1");
  }
  const volccl::Extent3 extent{size[0], size.size() > 1 ? size[1] : size[0],
                               size.size() > 2 ? size[2] : (image ? 1 : size[0])};
  volccl::data::Volume volume;
  if (command.kind == "random") {
    volume =
        volccl::data::random_granular(extent, command.density, command.granularity, command.seed);
  } else if (command.kind == "hilbert") {
    volume = volccl::data::hilbert(command.order, size[0]);
  } else if (command.kind == "spiral") {
    volume = volccl::data::spiral(extent);
  } else if (command.kind == "checkerboard") {
    volume = volccl::data::checkerboard(extent);
  } else {
    volume = volccl::data::shells(extent, command.gap);
  }
  if (image) {
    WriteMask<2>(volume, command.output, command.force);
  } else {
    WriteMask<3>(volume, command.output, command.force);
  }
  if (!command.quiet) {
    const auto foreground = std::count(volume.voxels.begin(), volume.voxels.end(), 1);
    std::printf(
        "generated %s: %s %s, %.2f %% foreground\n", command.kind.c_str(),
        image ? (std::to_string(extent.x) + "x" + std::to_string(extent.y)).c_str()
              : volume.extent.to_string().c_str(),
        image ? "pixels" : "voxels",
        100.0 * static_cast<double>(foreground) / static_cast<double>(volume.voxels.size()));
  }
  return 0;
}

template <unsigned VDimension>
void PrintInfo(const fs::path& input, const itk::ImageIOBase& io) {
  using Image = itk::Image<double, VDimension>;
  typename Image::Pointer image;
  try {
    image = itk::ReadImage<Image>(input.string());
  } catch (const itk::ExceptionObject& error) {
    throw CommandError("cannot read INPUT " + Quoted(input) + ": " + error.GetDescription());
  }
  const std::size_t voxels = image->GetBufferedRegion().GetNumberOfPixels();
  const double* values = image->GetBufferPointer();
  const auto foreground = std::count_if(values, values + voxels, [](double v) { return v != 0; });
  std::ostringstream text;
  text.precision(6);
  text << "file: " << input.string() << "\n"
       << "size: " << SizeOf(image.GetPointer()) << " (" << VDimension << "D)\n"
       << "spacing:";
  for (unsigned i = 0; i < VDimension; ++i) text << ' ' << image->GetSpacing()[i];
  text << "\norigin:";
  for (unsigned i = 0; i < VDimension; ++i) text << ' ' << image->GetOrigin()[i];
  text << "\npixel type: " << itk::ImageIOBase::GetComponentTypeAsString(io.GetComponentType())
       << "\nforeground (non-zero): " << foreground << " of " << voxels << " voxels, "
       << 100.0 * static_cast<double>(foreground) / static_cast<double>(voxels) << " %\n"
       << "GPU: "
       << (volccl::cuda_available() ? volccl::cuda_device_description()
                                    : "none (" + volccl::cuda_device_description() + ")")
       << "\n";
  std::cout << text.str();
}

int RunInfo(const InfoCommand& command) {
  CheckInput(command.input);
  const InputInformation information = ReadInputInformation(command.input);
  if (information.dimension == 2) {
    PrintInfo<2>(command.input, *information.io);
  } else {
    PrintInfo<3>(command.input, *information.io);
  }
  return 0;
}

// ---- volccl stats -------------------------------------------------------------------------------

template <unsigned VDimension>
int MeasureAndWrite(const StatsCommand& command) {
  using LabelImage = itk::Image<std::uint32_t, VDimension>;
  using ValueImage = itk::Image<double, VDimension>;
  const fs::path input = command.input;
  typename ValueImage::Pointer values;
  try {
    values = itk::ReadImage<ValueImage>(input.string());
  } catch (const itk::ExceptionObject& error) {
    throw CommandError("cannot read LABELS " + Quoted(input) + ": " + error.GetDescription());
  }
  // Labels as uint32, refusing what is not one: a negative, fractional or too large value.
  auto labels = LabelImage::New();
  labels->CopyInformation(values);
  labels->SetRegions(values->GetBufferedRegion());
  labels->Allocate();
  const std::size_t voxels = values->GetBufferedRegion().GetNumberOfPixels();
  std::uint32_t largest = 0;
  for (std::size_t i = 0; i < voxels; ++i) {
    const double value = values->GetBufferPointer()[i];
    if (!(value >= 0 && value <= volccl::max_voxel_count && value == std::floor(value))) {
      throw CommandError(Quoted(input) + " holds the value " + std::to_string(value) +
                         ", which is not a label (labels are integers from 0 to " +
                         std::to_string(volccl::max_voxel_count) + ")");
    }
    const auto label = static_cast<std::uint32_t>(value);
    labels->GetBufferPointer()[i] = label;
    largest = std::max(largest, label);
  }
  values = nullptr;
  const auto& size = labels->GetBufferedRegion().GetSize();
  const volccl::Extent3 extent{size[0], size[1], VDimension == 3 ? size[VDimension - 1] : 1};

  volccl::detail::StepClock stopwatch;
  const std::vector<volccl::ComponentMoments> moments =
      volccl::measure(labels->GetBufferPointer(), extent, largest);
  const double measure_ms = stopwatch.lap();

  const StagingDirectory staging(command.output);
  WriteStatsFile<VDimension>(moments, volccl::GeometryOf(labels.GetPointer()), command.output,
                             staging.StagedOutput());
  staging.Commit(input, command.force);
  if (!command.quiet) {
    const auto present = std::count_if(moments.begin(), moments.end(),
                                       [](const volccl::ComponentMoments& m) { return m.count; });
    std::cout << "measured " << SizeOf(labels.GetPointer()) << ": " << present
              << (present == 1 ? " label" : " labels") << " (on CPU, " << FormatMs(measure_ms)
              << " ms)\n";
  }
  return 0;
}

int RunStats(const StatsCommand& command) {
  CheckInput(command.input);
  CheckStatsOutput("OUTPUT", command.output, command.input, "", command.force);
  const InputInformation information = ReadInputInformation(command.input);
  return information.dimension == 2 ? MeasureAndWrite<2>(command) : MeasureAndWrite<3>(command);
}

// One line: ITK descriptions span several lines, and the library's messages start with
// "volccl: ", which the "volccl: error: " prefix already says.
std::string OneLine(std::string message) {
  for (char& c : message) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  message = WithoutLibraryPrefix(std::move(message));
  while (!message.empty() && message.back() == ' ') message.pop_back();
  return message;
}

void PrintError(const std::string& message) {
  std::cerr << "volccl: error: " << OneLine(message) << std::endl;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "volccl: connected-component labeling of 3D volumes and 2D images on NVIDIA GPUs "
      "and CPUs",
      "volccl"};
  app.set_version_flag("--version", "volccl " VOLCCL_VERSION);
  app.require_subcommand(1);
  app.footer("Example: volccl label data/samples/brain_t1.nii.gz --otsu -o labels.nii.gz");
  LabelCommand command;
  const CLI::App* label = AddLabelCommand(app, command);
  StatsCommand stats_command;
  const CLI::App* stats = AddStatsCommand(app, stats_command);
  GenerateCommand generate_command;
  const CLI::App* generate = AddGenerateCommand(app, generate_command);
  InfoCommand info_command;
  const CLI::App* info = AddInfoCommand(app, info_command);
  try {
    app.parse(argc, argv);
    // An algorithm that cannot label with the connectivity asked for (buf with 6, ha4 with 26).
    if (command.connectivity != 0) {
      const std::string refusal = Refusal(MakeLabelOptions(command));
      if (!refusal.empty()) throw CLI::ValidationError(refusal);
    }
  } catch (const CLI::ParseError& error) {
    if (error.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) {
      return app.exit(error);  // --help, --version
    }
    PrintError(std::string(error.what()) + (label->parsed()   ? " (see volccl label --help)"
                                            : stats->parsed() ? " (see volccl stats --help)"
                                                              : " (see volccl --help)"));
    return 2;
  }

  try {
    if (stats->parsed()) return RunStats(stats_command);
    if (generate->parsed()) return RunGenerate(generate_command);
    if (info->parsed()) return RunInfo(info_command);
    return RunLabel(command);
  } catch (const volccl::NoCudaDevice& error) {
    PrintError(std::string(error.what()) + "; --device cpu or --device auto labels on the CPU");
  } catch (const itk::ExceptionObject& error) {
    PrintError(error.GetDescription());
  } catch (const std::exception& error) {
    PrintError(error.what());
  }
  return 1;
}
