// volccl info: what an image holds and whether a GPU is usable, before labeling it.
#include <algorithm>
#include <iostream>
#include <sstream>
#include <string>

#include "command_support.h"
#include "commands.h"
#include "input_image.h"
#include "volccl/volccl.h"

namespace volccl::cli {
namespace {

template <unsigned VDimension>
void PrintInfo(const InputInformation& information) {
  using Image = itk::Image<double, VDimension>;
  const typename Image::Pointer image = ReadInputImage<Image>(information);
  const std::size_t voxels = image->GetBufferedRegion().GetNumberOfPixels();
  const double* values = image->GetBufferPointer();
  const auto foreground = std::count_if(values, values + voxels, [](double v) { return v != 0; });
  const auto [lowest, highest] = std::minmax_element(values, values + voxels);
  const Extent3& extent = information.extent;
  std::ostringstream text;
  text.precision(6);
  text << "file: " << information.path.string();
  if (!information.slices.empty()) text << " (" << information.slices.size() << " slices)";
  text << "\nsize: " << SizeText(extent.x, extent.y, extent.z, VDimension) << " (" << VDimension
       << "D)\nspacing:";
  for (unsigned i = 0; i < VDimension; ++i) text << ' ' << image->GetSpacing()[i];
  text << "\norigin:";
  for (unsigned i = 0; i < VDimension; ++i) text << ' ' << image->GetOrigin()[i];
  text << "\ndirection:";
  for (unsigned i = 0; i < VDimension; ++i) {
    for (unsigned j = 0; j < VDimension; ++j) text << ' ' << image->GetDirection()(i, j);
  }
  text << "\npixel type: " << itk::ImageIOBase::GetComponentTypeAsString(information.component_type)
       << "\nvalues: " << *lowest << " to " << *highest << "\nforeground (non-zero): " << foreground
       << " of " << voxels << " voxels, "
       << 100.0 * static_cast<double>(foreground) / static_cast<double>(voxels) << " %\n"
       << "GPU: "
       << (cuda_available() ? cuda_device_description()
                            : "none (" + cuda_device_description() + ")")
       << "\n";
  std::cout << text.str();
}

class InfoCommand : public Command {
 public:
  explicit InfoCommand(CLI::App* app) : Command(app) {
    app->add_option("INPUT", input_, "Image in any format ITK reads, or a directory of slices")
        ->required();
  }

  int Run() const override {
    CheckInput(input_);
    const InputInformation information = ReadInputInformation(input_, "INPUT");
    CheckReadable(information, sizeof(double));
    if (information.dimension == 2) {
      PrintInfo<2>(information);
    } else {
      PrintInfo<3>(information);
    }
    return 0;
  }

 private:
  std::string input_;
};

}  // namespace

std::unique_ptr<Command> AddInfoCommand(CLI::App& app) {
  return std::make_unique<InfoCommand>(app.add_subcommand(
      "info",
      "Print an image's size, spacing, origin, direction, pixel type, value range and "
      "foreground (non-zero) fraction, and whether a CUDA GPU is usable"));
}

}  // namespace volccl::cli
