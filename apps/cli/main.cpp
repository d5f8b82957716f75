// volccl: the command line.
//
//   volccl label brain.nii.gz --otsu -o labels.nii.gz --stats components.csv --vtk scene
//   volccl label em_slices/ -o labels.nrrd --min-size 100 --sort-by-size
//   volccl stats labels.nii.gz -o components.json
//   volccl generate random --size 512,512,512 --density 0.3 -o random.nii.gz
//   volccl info brain.nii.gz
//   volccl bench --connectivity 6 --peers itk --csv bench.csv
//
// Every subcommand lives in its own file (commands.h); this one parses the command line, runs
// the subcommand asked for and turns failures into one "volccl: error: " line and exit status
// 1 (2 for a command line that does not parse). Outputs are staged in hidden directories and
// moved into place when complete, so a failed run leaves none behind.
#include <iostream>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "command_support.h"
#include "commands.h"
#include "itkMacro.h"
#include "volccl/error.h"

namespace {

void PrintError(const std::string& message) {
  std::cerr << "volccl: error: " << volccl::cli::OneLine(message) << std::endl;
}

}  // namespace

int main(int argc, char** argv) {
  using volccl::cli::Command;
  CLI::App app{
      "volccl: connected-component labeling of 3D volumes and 2D images on NVIDIA GPUs "
      "and CPUs",
      "volccl"};
  app.set_version_flag("--version", "volccl " VOLCCL_VERSION);
  app.require_subcommand(1);
  app.footer("Example: volccl label data/samples/brain_t1.nii.gz --otsu -o labels.nii.gz");
  std::vector<std::unique_ptr<Command>> commands;
  commands.push_back(volccl::cli::AddLabelCommand(app));
  commands.push_back(volccl::cli::AddStatsCommand(app));
  commands.push_back(volccl::cli::AddGenerateCommand(app));
  commands.push_back(volccl::cli::AddInfoCommand(app));
  commands.push_back(volccl::cli::AddBenchCommand(app));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    if (error.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) {
      return app.exit(error);  // --help, --version
    }
    std::string help = "volccl --help";
    for (const auto& command : commands) {
      if (command->App().parsed()) help = "volccl " + command->App().get_name() + " --help";
    }
    PrintError(std::string(error.what()) + " (see " + help + ")");
    return 2;
  }

  try {
    for (const auto& command : commands) {
      if (command->App().parsed()) return command->Run();
    }
  } catch (const volccl::NoCudaDevice& error) {
    PrintError(std::string(error.what()) + "; --device cpu or --device auto labels on the CPU");
  } catch (const itk::ExceptionObject& error) {
    PrintError(error.GetDescription());
  } catch (const std::bad_alloc&) {
    PrintError("out of memory: this machine cannot hold what the command needs");
  } catch (const std::exception& error) {
    PrintError(error.what());
  }
  return 1;
}
