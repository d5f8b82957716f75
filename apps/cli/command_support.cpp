#include "command_support.h"

#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <iostream>
#include <system_error>
#include <vector>

#include "itkImageIOFactory.h"

namespace volccl::cli {

std::string Quoted(const fs::path& path) { return "'" + path.string() + "'"; }

std::string WithoutLibraryPrefix(std::string message) {
  const std::string library_prefix = "volccl: ";
  if (message.rfind(library_prefix, 0) == 0) message.erase(0, library_prefix.size());
  return message;
}

std::string OneLine(std::string message) {
  for (char& c : message) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  message = WithoutLibraryPrefix(std::move(message));
  while (!message.empty() && message.back() == ' ') message.pop_back();
  return message;
}

fs::path DirectoryOf(const fs::path& file) {
  return file.has_parent_path() ? file.parent_path() : fs::path(".");
}

void CheckInput(const fs::path& input) {
  if (!fs::exists(input)) throw CommandError("INPUT " + Quoted(input) + " does not exist");
  if (fs::is_directory(input)) {
    std::error_code error;
    fs::directory_iterator listing(input, error);
    if (error) {
      throw CommandError("cannot open INPUT " + Quoted(input) + ": " + error.message());
    }
    return;
  }
  if (!std::ifstream(input)) {
    throw CommandError("cannot open INPUT " + Quoted(input) + ": " + std::strerror(errno));
  }
}

void CheckWritableFile(const std::string& named, const fs::path& file, const fs::path& input,
                       bool force) {
  if (!file.has_filename()) throw CommandError(named + " names no file");
  if (fs::exists(file)) {
    if (!input.empty() && fs::exists(input) && fs::equivalent(file, input)) {
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

void CheckImageOutput(const fs::path& output, const fs::path& input, bool force, bool labels) {
  CheckWritableFile("OUTPUT " + Quoted(output), output, input, force);
  const itk::ImageIOBase::Pointer writer = itk::ImageIOFactory::CreateImageIO(
      output.c_str(), itk::ImageIOFactory::IOFileModeEnum::WriteMode);
  if (!writer) {
    throw CommandError("cannot write OUTPUT " + Quoted(output) + ": ITK has no writer for " +
                       Quoted(output.extension()) + " files (use .nii.gz, .nii, .mha or .nrrd)");
  }
  const std::string format = writer->GetNameOfClass();
  if (labels && (format == "JPEGImageIO" || format == "BMPImageIO")) {
    throw CommandError("cannot write OUTPUT " + Quoted(output) + ": " + Quoted(output.extension()) +
                       " files cannot hold labels (use .nii.gz, .nii, .mha, .nrrd, .tif or, up "
                       "to 65535 labels, .png)");
  }
}

StagingDirectory::StagingDirectory(const fs::path& destination, const std::string& name)
    : destination_(destination) {
  std::string pattern = (destination_ / ("." + name + ".tmp-XXXXXX")).string();
  if (mkdtemp(pattern.data()) == nullptr) {
    throw CommandError("cannot write to directory " + Quoted(destination_) + ": " +
                       std::strerror(errno));
  }
  path_ = pattern;
}

StagingDirectory::~StagingDirectory() {
  std::error_code ignored;
  fs::remove_all(path_, ignored);
}

void StagingDirectory::Commit(const fs::path& input, bool force) const {
  std::vector<fs::path> staged;
  for (const fs::directory_entry& entry : fs::directory_iterator(path_)) {
    const fs::path target = destination_ / entry.path().filename();
    if (fs::exists(target) && !input.empty() && fs::exists(input) &&
        fs::equivalent(target, input)) {
      throw CommandError("writing the output would replace INPUT " + Quoted(target));
    }
    if (fs::exists(target) && !force) {
      throw CommandError(Quoted(target) + " exists; --force overwrites it");
    }
    staged.push_back(entry.path());
  }
  for (const fs::path& file : staged) fs::rename(file, destination_ / file.filename());
}

void Progress::Start(const std::string& step) {
  Finish();
  if (!enabled_) return;
  std::cerr << "volccl: " << step << " ..." << std::flush;
  running_ = true;
  clock_.lap();
}

Progress::~Progress() {
  if (running_ && std::uncaught_exceptions() > 0) {
    std::cerr << std::endl;
    running_ = false;
  }
  Finish();
}

void Progress::Finish() {
  if (!running_) return;
  std::cerr << ' ' << FormatMs(clock_.lap()) << " ms" << std::endl;
  running_ = false;
}

bool StderrIsTerminal() { return isatty(STDERR_FILENO) == 1; }

std::string SizeText(std::uint64_t x, std::uint64_t y, std::uint64_t z, unsigned dimension) {
  std::string text = std::to_string(x) + "x" + std::to_string(y);
  if (dimension == 3) text += "x" + std::to_string(z);
  return text + (dimension == 3 ? " voxels" : " pixels");
}

std::string FormatMs(double ms) {
  char text[32];
  std::snprintf(text, sizeof text, ms < 100 ? "%.3g" : "%.0f", ms);
  return text;
}

std::string Number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", value);
  return text;
}

}  // namespace volccl::cli
