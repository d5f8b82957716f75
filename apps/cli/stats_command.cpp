// volccl stats: the statistics of an existing label image (from volccl, ITK or anywhere), on the
// CPU, in the file format of volccl label --stats.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "command_support.h"
#include "commands.h"
#include "input_image.h"
#include "stats_table.h"
#include "volccl/detail/step_clock.h"
#include "volccl/volccl.h"
#include "volcclLabelImage.h"

namespace volccl::cli {
namespace {

struct StatsRequest {
  std::string input;
  std::string output;
  bool force = false;
  bool quiet = false;
};

// Renumbers the labels of `labels` to 1..K in the order of their values (0 stays 0) and returns
// the original label of each new one, so that measuring takes memory in proportion to the labels
// present, not to the largest value. A direct table when `largest` is at most the voxel count
// (memory in proportion to the image), else a hash table.
std::vector<std::uint64_t> CompactLabels(std::uint32_t* labels, std::size_t voxels,
                                         std::uint32_t largest) {
  std::vector<std::uint64_t> originals;
  if (largest <= voxels) {
    std::vector<std::uint32_t> renumbered(static_cast<std::size_t>(largest) + 1, 0);
    for (std::size_t i = 0; i < voxels; ++i) renumbered[labels[i]] = 1;
    renumbered[0] = 0;  // the background stays 0
    for (std::uint32_t label = 1; label <= largest; ++label) {
      if (renumbered[label] == 0) continue;
      originals.push_back(label);
      renumbered[label] = static_cast<std::uint32_t>(originals.size());
    }
    for (std::size_t i = 0; i < voxels; ++i) labels[i] = renumbered[labels[i]];
    return originals;
  }
  // Neighbouring voxels mostly share a label: the last one found skips the hash tables.
  std::unordered_set<std::uint32_t> present;
  std::uint32_t last = 0;
  for (std::size_t i = 0; i < voxels; ++i) {
    if (labels[i] != 0 && labels[i] != last) {
      last = labels[i];
      present.insert(last);
    }
  }
  originals.assign(present.begin(), present.end());
  present = {};
  std::sort(originals.begin(), originals.end());
  std::unordered_map<std::uint32_t, std::uint32_t> renumbered(originals.size());
  for (std::size_t k = 0; k < originals.size(); ++k) {
    renumbered.emplace(static_cast<std::uint32_t>(originals[k]), static_cast<std::uint32_t>(k + 1));
  }
  last = 0;
  std::uint32_t last_renumbered = 0;
  for (std::size_t i = 0; i < voxels; ++i) {
    if (labels[i] == 0) continue;
    if (labels[i] != last) {
      last = labels[i];
      last_renumbered = renumbered.at(last);
    }
    labels[i] = last_renumbered;
  }
  return originals;
}

template <unsigned VDimension>
int MeasureAndWrite(const InputInformation& information, const StatsRequest& request) {
  using ValueImage = itk::Image<double, VDimension>;
  const typename ValueImage::Pointer values = ReadInputImage<ValueImage>(information);
  // Labels as uint32, refusing what is not one: a negative, fractional or too large value.
  auto labels = LabelImageType<VDimension>::New();
  labels->CopyInformation(values);
  labels->SetRegions(values->GetBufferedRegion());
  labels->Allocate();
  const std::size_t voxels = values->GetBufferedRegion().GetNumberOfPixels();
  std::uint32_t largest = 0;
  for (std::size_t i = 0; i < voxels; ++i) {
    const double value = values->GetBufferPointer()[i];
    if (!(value >= 0 && value <= max_slab_voxel_count && value == std::floor(value))) {
      throw CommandError(information.named + " holds the value " + std::to_string(value) +
                         ", which is not a label (labels are integers from 0 to " +
                         std::to_string(max_slab_voxel_count) + ")");
    }
    const auto label = static_cast<std::uint32_t>(value);
    labels->GetBufferPointer()[i] = label;
    largest = std::max(largest, label);
  }

  detail::StepClock stopwatch;
  const std::vector<std::uint64_t> row_labels =
      CompactLabels(labels->GetBufferPointer(), voxels, largest);
  const std::vector<ComponentMoments> moments =
      measure(labels->GetBufferPointer(), information.extent,
              static_cast<std::uint32_t>(row_labels.size()));
  const double measure_ms = stopwatch.lap();

  const StagingDirectory staging(DirectoryOf(request.output), fs::path(request.output).filename());
  WriteStatsTable(DescribeComponents(moments, GeometryOf(labels.GetPointer()), VDimension),
                  VDimension, request.output, staging.Staged(fs::path(request.output).filename()),
                  "OUTPUT " + Quoted(request.output), nullptr, &row_labels);
  {
    const CommitSection commit(request.input, request.force);
    staging.Commit(request.input, request.force);
  }
  if (!request.quiet) {
    const std::size_t present = row_labels.size();
    const Extent3& extent = information.extent;
    std::cout << "measured " << SizeText(extent.x, extent.y, extent.z, VDimension) << ": "
              << present << (present == 1 ? " label" : " labels") << " (on CPU, "
              << FormatMs(measure_ms) << " ms)\n";
  }
  return 0;
}

class StatsCommand : public Command {
 public:
  explicit StatsCommand(CLI::App* app) : Command(app) {
    app->add_option("LABELS", request_.input,
                    "Label image of non-negative integer values, in any format ITK reads, or a "
                    "directory of 2D label slices")
        ->required();
    app->add_option("-o,--output", request_.output,
                    "Statistics to write: FILE.csv or FILE.json, one row per label present, "
                    "the columns of volccl label --stats")
        ->required();
    app->add_flag("--force", request_.force, "Overwrite OUTPUT if it exists");
    app->add_flag("-q,--quiet", request_.quiet, "Print nothing but errors");
  }

  int Run() const override {
    CheckInput(request_.input);
    CheckStatsOutput("OUTPUT", request_.output, request_.input, "", request_.force);
    const InputInformation information = ReadInputInformation(request_.input, "LABELS");
    CheckReadable(information, sizeof(double) + 2 * sizeof(std::uint32_t));
    return information.dimension == 2 ? MeasureAndWrite<2>(information, request_)
                                      : MeasureAndWrite<3>(information, request_);
  }

 private:
  StatsRequest request_;
};

}  // namespace

std::unique_ptr<Command> AddStatsCommand(CLI::App& app) {
  return std::make_unique<StatsCommand>(app.add_subcommand(
      "stats",
      "Measure the components of an existing label image (0 background, labels 1..N, from "
      "volccl, ITK or anywhere) on the CPU and write the statistics of `volccl label --stats`"));
}

}  // namespace volccl::cli
