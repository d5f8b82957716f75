// volccl generate: the synthetic binary volumes of docs/data.md (random density x granularity,
// Hilbert curve, spiral, checkerboard, shells, the LE/TM paper's Ridge patterns and families)
// as uint8 0/1 files.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "command_support.h"
#include "commands.h"
#include "image_writer.h"
#include "itkImage.h"
#include "volccl/data/generators.h"
#include "volccl/data/ridge.h"
#include "volccl/error.h"
#include "volccl/volccl.h"

namespace volccl::cli {
namespace {

struct GenerateRequest {
  std::string kind;
  std::string output;
  std::vector<std::uint64_t> size = {256, 256, 256};
  double density = 0.3;
  unsigned granularity = 1;
  std::uint32_t seed = 1;
  unsigned order = 4;
  unsigned gap = 2;
  unsigned level = 3;
  unsigned instance = 0;
  std::string family;
  std::size_t index = 0;
  unsigned subdivisions = 5;
  unsigned steps = 0;
  bool force = false;
  bool quiet = false;
};

template <unsigned VDimension>
void WriteMask(const data::Volume& volume, const fs::path& output, bool force) {
  using Image = itk::Image<std::uint8_t, VDimension>;
  auto image = Image::New();
  typename Image::SizeType size;
  const std::uint64_t sides[3] = {volume.extent.x, volume.extent.y, volume.extent.z};
  for (unsigned i = 0; i < VDimension; ++i) size[i] = sides[i];
  image->SetRegions(size);
  image->Allocate();
  std::copy(volume.voxels.begin(), volume.voxels.end(), image->GetBufferPointer());
  const StagingDirectory staging(DirectoryOf(output), output.filename());
  try {
    WriteImageFile(image.GetPointer(), staging.Staged(output.filename()));
  } catch (const itk::ExceptionObject& error) {
    throw CommandError("cannot write OUTPUT " + Quoted(output) + ": " + error.GetDescription());
  }
  staging.Commit("", force);
}

class GenerateCommand : public Command {
 public:
  explicit GenerateCommand(CLI::App* app) : Command(app) {
    GenerateRequest& request = request_;
    app->add_option("KIND", request.kind, "random, hilbert, spiral, checkerboard, shells or ridge")
        ->required()
        ->check(CLI::IsMember({"random", "hilbert", "spiral", "checkerboard", "shells", "ridge"}));
    app->add_option("-o,--output", request.output,
                    "File to write, in any format ITK writes (.nii.gz, .mha, .nrrd, .png, .tif)")
        ->required();
    app->add_option("--size", request.size,
                    "X,Y[,Z]: two numbers for a 2D image (random, spiral, checkerboard); "
                    "hilbert takes one side, a power of two; ridge one side or N,N, a power "
                    "of two (default 256); default 256,256,256")
        ->delimiter(',')
        ->expected(1, 3)
        ->check(WholeNumberOf<std::uint64_t>());
    // CLI::Range lets "nan" through: it compares false with both bounds.
    app->add_option("--density", request.density, "random: foreground fraction, 0..1")
        ->capture_default_str()
        ->check(CLI::Validator(
            [](std::string& text) -> std::string {
              return std::isnan(std::strtod(text.c_str(), nullptr))
                         ? "'" + text + "' is not a number"
                         : "";
            },
            "", "NotNaN"))
        ->check(CLI::Range(0.0, 1.0));
    app->add_option("--granularity", request.granularity, "random: cell side in voxels")
        ->capture_default_str()
        ->check(WholeNumberOf<unsigned>())
        ->check(CLI::Range(1u, 1u << 20));
    app->add_option("--seed", request.seed,
                    "random, ridge random-instancing and random-merging: the MT19937 seed")
        ->capture_default_str()
        ->check(WholeNumberOf<std::uint32_t>());
    app->add_option("--order", request.order, "hilbert: the curve's order, 1..log2(side)")
        ->capture_default_str()
        ->check(WholeNumberOf<unsigned>());
    app->add_option("--gap", request.gap, "shells: voxels between neighbouring shells")
        ->capture_default_str()
        ->check(WholeNumberOf<unsigned>());
    // The Ridge patterns of the LE/TM paper, Sec. IV (volccl/data/ridge.h).
    level_option_ = app->add_option("--level", request.level,
                                    "ridge: the pattern's level l, the number of Label "
                                    "Equivalence iterations it takes; also l of the scaling, "
                                    "subdivision and random families")
                        ->capture_default_str()
                        ->check(WholeNumberOf<unsigned>())
                        ->check(CLI::Range(1u, 62u));
    auto* instance = app->add_option("--instance", request.instance,
                                     "ridge: draw R^K_l, the level-l pattern with its crest 2^K "
                                     "times wider (Eq. 13-16); level + K + 1 <= log2(side)")
                         ->capture_default_str()
                         ->check(WholeNumberOf<unsigned>());
    auto* family =
        app->add_option("--family", request.family,
                        "ridge: a member of one of the paper's image families: leveling "
                        "(x = level), scaling (x = lambda), subdivision (x = subdivisions), "
                        "random-instancing or random-merging (x = p), spiral (x = lambda)")
            ->check(CLI::IsMember({"leveling", "scaling", "subdivision", "random-instancing",
                                   "random-merging", "spiral"}));
    family->excludes(instance);
    auto* index = app->add_option("--index", request.index,
                                  "ridge --family: which member, 0-based in the order of x "
                                  "(the count is printed)")
                      ->capture_default_str()
                      ->check(WholeNumberOf<std::size_t>());
    auto* subdivisions =
        app->add_option("--subdivisions", request.subdivisions,
                        "ridge random-instancing and random-merging: s, the Subdivision "
                        "member the patterns come from, 0..log2(side) - level - 1")
            ->capture_default_str()
            ->check(WholeNumberOf<unsigned>());
    auto* steps = app->add_option("--steps", request.steps,
                                  "ridge scaling, random-* and spiral: lambda or p is index / "
                                  "steps; 0 gives the paper's 15, 20 and 8")
                      ->capture_default_str()
                      ->check(WholeNumberOf<unsigned>());
    index->needs(family);
    subdivisions->needs(family);
    steps->needs(family);
    app->add_flag("--force", request.force, "Overwrite OUTPUT if it exists");
    app->add_flag("-q,--quiet", request.quiet, "Print nothing but errors");
  }

  int Run() const override {
    const GenerateRequest& request = request_;
    CheckImageOutput(request.output, "", request.force, false);
    if (request.kind != "ridge") {
      for (const char* name :
           {"--level", "--instance", "--family", "--index", "--subdivisions", "--steps"}) {
        if (App().count(name) > 0) throw CommandError(std::string(name) + " is only for ridge");
      }
    }
    std::vector<std::uint64_t> size = request.size;
    if (request.kind == "ridge") size = RidgeSize();
    const bool image = size.size() == 2;
    if (request.kind == "hilbert" && size.size() != 1 &&
        size != std::vector<std::uint64_t>(3, size[0])) {
      throw CommandError("hilbert takes one --size, the side of a cube (a power of two)");
    }
    if (request.kind != "hilbert" && size.size() == 1) {
      throw CommandError(request.kind + " takes --size X,Y (an image) or X,Y,Z (a volume)");
    }
    for (std::uint64_t side : size) {
      if (side == 0) throw CommandError("--size: every side must be at least 1");
    }
    const Extent3 extent{size[0], size.size() > 1 ? size[1] : size[0],
                         size.size() > 2 ? size[2] : (image ? 1 : size[0])};
    CheckOutputHoldsVolume(request.output, extent.z);
    // Sides whose product overflows, or more voxels than a label image numbers, are refused
    // before any memory is taken.
    if (extent.x > max_slab_voxel_count || extent.y > max_slab_voxel_count ||
        extent.z > max_slab_voxel_count || extent.x * extent.y > max_slab_voxel_count ||
        extent.voxel_count() > max_slab_voxel_count) {
      throw CommandError("--size " + extent.to_string() + ": volccl labels at most " +
                         std::to_string(max_slab_voxel_count) + " voxels (2^32 - 2)");
    }
    data::Volume volume;
    if (request.kind == "random") {
      volume = data::random_granular(extent, request.density, request.granularity, request.seed);
    } else if (request.kind == "hilbert") {
      volume = data::hilbert(request.order, size[0]);
    } else if (request.kind == "spiral") {
      volume = data::spiral(extent);
    } else if (request.kind == "checkerboard") {
      volume = data::checkerboard(extent);
    } else if (request.kind == "ridge") {
      volume = Ridge(size[0]);
    } else {
      volume = data::shells(extent, request.gap);
    }
    if (image) {
      WriteMask<2>(volume, request.output, request.force);
    } else {
      WriteMask<3>(volume, request.output, request.force);
    }
    if (!request.quiet) {
      const auto foreground = std::count(volume.voxels.begin(), volume.voxels.end(), 1);
      const Extent3& sides = volume.extent;
      std::printf(
          "generated %s: %s, %.2f %% foreground\n", request.kind.c_str(),
          SizeText(sides.x, sides.y, sides.z, image ? 2 : 3).c_str(),
          100.0 * static_cast<double>(foreground) / static_cast<double>(volume.voxels.size()));
    }
    return 0;
  }

 private:
  // ridge takes a square image: --size N or N,N (default 256,256).
  std::vector<std::uint64_t> RidgeSize() const {
    if (App().count("--size") == 0) return {256, 256};
    const std::vector<std::uint64_t>& size = request_.size;
    if (size.size() == 3 || (size.size() == 2 && size[0] != size[1])) {
      throw CommandError("ridge makes a square 2D image: --size N or N,N (a power of two)");
    }
    return {size[0], size[0]};
  }

  data::Volume Ridge(std::uint64_t side) const {
    const GenerateRequest& request = request_;
    try {
      if (request.family.empty()) {
        return data::ridge_instance(request.level, request.instance, side);
      }
      data::RidgeFamilyParameters parameters;
      parameters.family = data::parse_ridge_family(request.family);
      const bool takes_level = parameters.family != data::RidgeFamily::leveling &&
                               parameters.family != data::RidgeFamily::spiral;
      if (!takes_level && level_option_->count() > 0) {
        throw CommandError("--level: the " + request.family +
                           " family has no level parameter (leveling's level is its --index)");
      }
      parameters.level = request.level;
      parameters.subdivisions = request.subdivisions;
      parameters.steps = request.steps;
      parameters.seed = request.seed;
      const std::size_t count = data::ridge_family_size(parameters, side);
      data::Volume volume = data::ridge_family_member(parameters, request.index, side);
      if (!request.quiet) {
        std::printf("ridge %s member %zu of 0..%zu: x = %g\n", request.family.c_str(),
                    request.index, count - 1,
                    data::ridge_family_x(parameters, request.index, side));
      }
      return volume;
    } catch (const InvalidArgument& error) {
      throw CommandError(error.what());
    }
  }

  GenerateRequest request_;
  CLI::Option* level_option_ = nullptr;
};

}  // namespace

std::unique_ptr<Command> AddGenerateCommand(CLI::App& app) {
  return std::make_unique<GenerateCommand>(app.add_subcommand(
      "generate",
      "Write a synthetic binary volume or image (the test and benchmark inputs of docs/data.md) as "
      "uint8 0/1: random (YACCLAB's density x granularity, MT19937), hilbert (a 3D Hilbert "
      "curve), spiral, checkerboard, shells or ridge (the LE/TM paper's Ridge patterns and "
      "image families, Sec. IV)"));
}

}  // namespace volccl::cli
