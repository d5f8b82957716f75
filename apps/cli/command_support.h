// What every volccl subcommand shares: its error type, the checks on the files it reads and
// writes, the staging of outputs, progress lines and number formatting.
#pragma once

#include <signal.h>

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "volccl/detail/step_clock.h"

namespace volccl::cli {

namespace fs = std::filesystem;

// A failure the user can fix; main prints it on one "volccl: error: " line and exits with 1.
class CommandError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

std::string Quoted(const fs::path& path);

// One line, without the library's "volccl: " prefix that "volccl: error: " already says: ITK's
// descriptions span several lines.
std::string OneLine(std::string message);
std::string WithoutLibraryPrefix(std::string message);

fs::path DirectoryOf(const fs::path& file);

// Without leading and trailing blanks (spaces, tabs, carriage returns); in ASCII lower case.
std::string Trimmed(const std::string& text);
std::string Lowered(std::string text);

// INPUT exists and can be opened: a file, or a directory (of slices; input_image.h reads it).
void CheckInput(const fs::path& input);

// The image files of `directory` (hidden ones left out) that ITK reads, by the last number in
// their names, then by name: the slices of a directory INPUT.
std::vector<std::string> SlicesOf(const fs::path& directory);

// Every file `input` consists of: the file itself or, for a directory, it and its slices, and the
// data files their MetaImage or NRRD headers name. Before ITK sees a header, refuses one that names
// a data file outside the header's folder (after resolving ".." and symbolic links), one that is
// not a regular file, a file pattern it cannot expand, and MetaImage fields that make MetaIO loop
// or overflow (NDims, DimSize, ElementNumberOfChannels, CompressedDataSize). `named`:
// "INPUT 'x'" and the like, for messages.
std::vector<fs::path> InputFiles(const fs::path& input, const std::string& named);

// Refuses `file` (an output, `named` "OUTPUT 'x'" and the like) when it is one of the files
// `input` consists of, --force or not.
void CheckNotInput(const std::string& named, const fs::path& file, const fs::path& input);

// What every file volccl writes must allow: a file name, not a file of the input, not a
// directory, not an existing file without --force, in an existing directory. `named`:
// "OUTPUT 'x'" and the like.
void CheckWritableFile(const std::string& named, const fs::path& file, const fs::path& input,
                       bool force);

// CheckWritableFile for an image, and a format ITK writes; `labels`: a lossless one of more
// than 8-bit RGB (volccl label; volccl generate writes 0/1 masks, which any format holds).
void CheckImageOutput(const fs::path& output, const fs::path& input, bool force, bool labels);

// Refuses to write a volume of `depth` slices to a format of 2D images (PNG, JPEG, BMP), whose
// ITK writers would keep its first slice only.
void CheckOutputHoldsVolume(const fs::path& output, std::uint64_t depth);

// A hidden directory in `destination` that writers fill under their own file names. Commit()
// moves the files into place once all are complete; whatever is left is removed with the
// directory, so a failed run leaves no partial output. Formats of two files (.mhd + .raw) and
// the several files of --vtk work the same way.
class StagingDirectory {
 public:
  // `name`: the file (or directory) the staging is for, which names the hidden directory.
  StagingDirectory(const fs::path& destination, const std::string& name);
  StagingDirectory(const StagingDirectory&) = delete;
  StagingDirectory& operator=(const StagingDirectory&) = delete;
  ~StagingDirectory();

  const fs::path& Path() const { return path_; }
  fs::path Staged(const fs::path& file_name) const { return path_ / file_name; }

  // Refuses to replace a file of `input` or, without `force`, an existing file; then renames.
  void Commit(const fs::path& input, bool force) const;
  // The refusals of Commit, without renaming.
  void CheckCommit(const fs::path& input, bool force) const;

 private:
  fs::path destination_;
  fs::path path_;
  int slot_ = -1;  // in the signal handler's list
};

// SIGINT, SIGTERM and SIGHUP remove every staging directory alive (and the directories given
// to RemoveOnInterrupt, when empty) and end the process by the signal. `directory`: one that
// this run made, such as a --vtk DIR.
void RemoveOnInterrupt(const fs::path& directory);

// The last step of a run: checks every staging directory alive (CheckCommit) before the first
// file is moved, and holds SIGINT, SIGTERM and SIGHUP back until the object dies, so that the
// outputs of a run appear together or, when a check fails, none does. Only SIGKILL or a crash of
// the machine between two renames can leave some of them in place.
class CommitSection {
 public:
  CommitSection(const fs::path& input, bool force);
  CommitSection(const CommitSection&) = delete;
  CommitSection& operator=(const CommitSection&) = delete;
  ~CommitSection();

 private:
  sigset_t previous_;
};

// The steps of long work on stderr, one line each ("volccl: labeling on CUDA ... 12.3 ms"), when
// enabled: stderr is a terminal and not --quiet, or --progress.
class Progress {
 public:
  explicit Progress(bool enabled) : enabled_(enabled) {}
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  // A step a failure interrupted ends its line without a time.
  ~Progress();

  // Ends the step under way, if any, and announces `step`.
  void Start(const std::string& step);
  // Ends the step under way with its time.
  void Finish();

 private:
  bool enabled_;
  bool running_ = false;
  detail::StepClock clock_;
};

// Whether progress lines go to stderr by default: it is a terminal.
bool StderrIsTerminal();

// "128x128x62 voxels" or "640x480 pixels".
std::string SizeText(std::uint64_t x, std::uint64_t y, std::uint64_t z, unsigned dimension);

std::string FormatMs(double ms);   // "12.3", "4567"
std::string Number(double value);  // every digit: "%.17g"

}  // namespace volccl::cli
