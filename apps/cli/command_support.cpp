#include "command_support.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <iostream>
#include <limits>
#include <sstream>
#include <system_error>
#include <utility>
#include <vector>

#include "itkImageIOFactory.h"

namespace volccl::cli {

std::string Trimmed(const std::string& text) {
  const std::size_t first = text.find_first_not_of(" \t\r");
  const std::size_t last = text.find_last_not_of(" \t\r");
  return first == std::string::npos ? std::string() : text.substr(first, last - first + 1);
}

std::string Lowered(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

std::string Quoted(const fs::path& path) { return "'" + path.string() + "'"; }

std::string WithoutLibraryPrefix(std::string message) {
  const std::string library_prefix = "volccl: ";
  if (message.rfind(library_prefix, 0) == 0) message.erase(0, library_prefix.size());
  return message;
}

std::string OneLine(std::string message) {
  // Control characters, and the UTF-8 line and paragraph separators, would break the line (or
  // the terminal): a damaged header's bytes end up in messages.
  std::string line;
  line.reserve(message.size());
  for (std::size_t i = 0; i < message.size(); ++i) {
    const auto byte = static_cast<unsigned char>(message[i]);
    const bool next_line = byte == 0xC2 && i + 1 < message.size() &&
                           static_cast<unsigned char>(message[i + 1]) == 0x85;
    const bool separator = byte == 0xE2 && i + 2 < message.size() &&
                           static_cast<unsigned char>(message[i + 1]) == 0x80 &&
                           (static_cast<unsigned char>(message[i + 2]) & 0xFE) == 0xA8;
    if (byte < 0x20 || byte == 0x7F || next_line || separator) {
      line += ' ';
      i += next_line ? 1 : (separator ? 2 : 0);
    } else {
      line += message[i];
    }
  }
  message = WithoutLibraryPrefix(std::move(line));
  while (!message.empty() && message.back() == ' ') message.pop_back();
  return message;
}

fs::path DirectoryOf(const fs::path& file) {
  return file.has_parent_path() ? file.parent_path() : fs::path(".");
}

namespace {

// The last run of digits in the file name ("mask0012.png": 12), which orders slices whose
// numbers are not zero-padded (0.png, 1.png, ..., 10.png) as they were cut.
std::pair<bool, unsigned long long> SliceNumber(const fs::path& file) {
  const std::string stem = file.stem().string();
  std::size_t end = stem.size();
  while (end > 0 && !std::isdigit(static_cast<unsigned char>(stem[end - 1]))) --end;
  std::size_t begin = end;
  while (begin > 0 && std::isdigit(static_cast<unsigned char>(stem[begin - 1]))) --begin;
  if (begin == end || end - begin > 18) return {false, 0};
  return {true, std::stoull(stem.substr(begin, end - begin))};
}

std::vector<std::string> Words(const std::string& text) {
  std::istringstream stream(text);
  std::vector<std::string> words;
  for (std::string word; stream >> word;) words.push_back(word);
  return words;
}

// A decimal integer of digits only (an optional leading '-'), within [low, high]; MetaIO and
// Teem read such fields with atoi, which makes "1e308" 1 and wraps large values.
bool ParseInteger(const std::string& text, long long low, long long high, long long& value) {
  const bool negative = !text.empty() && text[0] == '-';
  const std::string digits = negative ? text.substr(1) : text;
  if (digits.empty() || digits.size() > 18 ||
      !std::all_of(digits.begin(), digits.end(),
                   [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
    return false;
  }
  value = std::stoll(digits) * (negative ? -1 : 1);
  return low <= value && value <= high;
}

// The header of a MetaImage or NRRD file: its text up to the voxels, at most this many bytes
// (a longer one is not a header ITK writes, and is refused).
constexpr std::size_t kMaxHeaderBytes = 1 << 20;

// The header's lines. `nrrd`: up to the first blank line (the voxels of a .nrrd follow it);
// otherwise every line of the first kMaxHeaderBytes (a MetaImage's fields end with
// ElementDataFile, which the parser stops at).
std::vector<std::string> HeaderLines(const fs::path& file, bool nrrd) {
  std::ifstream stream(file, std::ios::binary);
  std::string text(kMaxHeaderBytes, '\0');
  stream.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(stream.gcount()));
  std::vector<std::string> lines;
  std::size_t position = 0;
  while (position < text.size()) {
    std::size_t end = text.find('\n', position);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(position, end - position);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (nrrd && line.empty()) break;
    lines.push_back(std::move(line));
    position = end + 1;
  }
  return lines;
}

// Expands a printf-style data file pattern ("slice%03d.raw 1 10 1"): one %d conversion (flags
// 0 and a width), then first, last and an optional positive step, as MetaIO and Teem read them.
// Refuses what it cannot expand safely, which would otherwise reach their own printf.
std::vector<std::string> ExpandPattern(const std::string& named, const std::string& field,
                                       const std::vector<std::string>& words) {
  const std::string refusal = named + ": its " + field + " pattern " + Quoted(words[0]);
  const std::string& pattern = words[0];
  const std::size_t percent = pattern.find('%');
  std::size_t conversion = percent + 1;
  while (conversion < pattern.size() &&
         std::isdigit(static_cast<unsigned char>(pattern[conversion]))) {
    ++conversion;
  }
  if (conversion >= pattern.size() || pattern[conversion] != 'd' || conversion - percent > 3 ||
      pattern.size() > 900 || pattern.find('%', conversion) != std::string::npos) {
    throw CommandError(refusal + " is not one %d conversion; volccl reads only those patterns");
  }
  long long first = 0, last = 0, step = 1;
  if (words.size() < 3 || words.size() > 5 || !ParseInteger(words[1], 0, 999999999, first) ||
      !ParseInteger(words[2], first, 999999999, last) ||
      (words.size() >= 4 && !ParseInteger(words[3], 1, 999999999, step))) {
    throw CommandError(refusal +
                       " needs FIRST LAST [STEP]: integers, 0 <= FIRST <= LAST, "
                       "STEP >= 1");
  }
  if ((last - first) / step >= 100000) {
    throw CommandError(refusal + " names more than 100000 files");
  }
  std::vector<std::string> names;
  for (long long number = first; number <= last; number += step) {
    char text[1024];
    std::snprintf(text, sizeof text, pattern.c_str(), static_cast<int>(number));
    names.push_back(text);
  }
  return names;
}

// The data file `name` that the header `file` names in `field` must be a regular file in the
// header's folder or below it; a missing one is left for the reader to report.
fs::path CheckDataFile(const fs::path& file, const std::string& named, const std::string& field,
                       const std::string& name) {
  if (name.empty()) throw CommandError(named + ": its " + field + " names no file");
  const fs::path folder = DirectoryOf(file);
  const fs::path data = fs::path(name).is_absolute() ? fs::path(name) : folder / name;
  std::error_code error;
  const fs::path base = fs::canonical(folder, error);
  const fs::path resolved = fs::weakly_canonical(data, error);
  const std::string rule =
      "volccl reads only data files in the header's folder or below it (after resolving '..' "
      "and symbolic links)";
  if (error || base.empty()) {
    throw CommandError(named + ": cannot resolve its data file " + Quoted(name) + " (" + field +
                       "): " + error.message());
  }
  const auto [base_end, unused] =
      std::mismatch(base.begin(), base.end(), resolved.begin(), resolved.end());
  if (base_end != base.end()) {
    throw CommandError(named + " names the data file " + Quoted(name) + " (" + field +
                       "), which is " + Quoted(resolved) + ", outside the header's folder " +
                       Quoted(base) + "; " + rule);
  }
  if (fs::exists(resolved) && !fs::is_regular_file(resolved)) {
    throw CommandError(named + " names the data file " + Quoted(name) + " (" + field +
                       "), which is not a regular file; volccl reads data files only from "
                       "regular files");
  }
  return data;
}

bool IsMetaImage(const fs::path& file) {
  const std::string extension = Lowered(file.extension().string());
  return extension == ".mha" || extension == ".mhd";
}

bool IsNrrd(const fs::path& file) {
  std::ifstream stream(file, std::ios::binary);
  char magic[4] = {};
  return stream.read(magic, 4) && std::string(magic, 4) == "NRRD";
}

// The MetaImage fields that made MetaIO spin or overflow, checked before ITK reads the header;
// returns the data files it names (none for LOCAL).
std::vector<fs::path> MetaImageDataFiles(const fs::path& file, const std::string& named) {
  const std::vector<std::string> lines = HeaderLines(file, false);
  long long dimensions = 0;
  std::vector<std::string> sizes;
  std::vector<fs::path> files;
  bool ended = false;
  for (std::size_t i = 0; i < lines.size() && !ended; ++i) {
    // MetaIO takes "Key = value" and "Key: value" alike.
    const std::size_t equals = lines[i].find_first_of("=:");
    if (equals == std::string::npos) continue;
    const std::string key = Lowered(Trimmed(lines[i].substr(0, equals)));
    const std::string value = Trimmed(lines[i].substr(equals + 1));
    long long number = 0;
    if (key == "ndims") {
      if (!ParseInteger(value, 1, 4, dimensions)) {
        throw CommandError(named + ": its NDims " + Quoted(value) +
                           " is not an integer from 1 to 4");
      }
    } else if (key == "dimsize") {
      sizes = Words(value);
    } else if (key == "elementnumberofchannels" && !ParseInteger(value, 1, 16, number)) {
      throw CommandError(named + ": its ElementNumberOfChannels " + Quoted(value) +
                         " is not an integer from 1 to 16");
    } else if (key == "compresseddatasize" && !ParseInteger(value, 0, 1ll << 62, number)) {
      throw CommandError(named + ": its CompressedDataSize " + Quoted(value) +
                         " is not a non-negative integer");
    } else if (key == "elementdatafile") {
      ended = true;  // MetaIO's last field: the voxels, or the list of files, follow it
      const std::vector<std::string> words = Words(value);
      std::vector<std::string> names;
      if (words.empty()) {
        names.push_back("");
      } else if (Lowered(words[0]) == "local") {
        continue;
      } else if (Lowered(words[0]) == "list") {
        for (std::size_t j = i + 1; j < lines.size(); ++j) {
          if (!Trimmed(lines[j]).empty()) names.push_back(Trimmed(lines[j]));
        }
        if (names.empty()) throw CommandError(named + ": its ElementDataFile LIST lists no file");
      } else if (value.find('%') != std::string::npos) {
        names = ExpandPattern(named, "ElementDataFile", words);
      } else {
        names.push_back(value);
      }
      for (const std::string& name : names) {
        files.push_back(CheckDataFile(file, named, "ElementDataFile", name));
      }
    }
  }
  if (dimensions == 0) throw CommandError(named + ": its MetaImage header has no NDims");
  const std::string size_rule = " positive integers whose product is at most 2^62";
  if (sizes.size() != static_cast<std::size_t>(dimensions)) {
    throw CommandError(named + ": its DimSize is not NDims = " + std::to_string(dimensions) +
                       size_rule);
  }
  long long product = 1;
  for (const std::string& size : sizes) {
    long long side = 0;
    // A side of 0 is left to ReadInputInformation, which says there is nothing to label.
    if (!ParseInteger(size, 0, 1ll << 62, side) || (side != 0 && product > (1ll << 62) / side)) {
      throw CommandError(named + ": its DimSize is not " + std::to_string(dimensions) + size_rule);
    }
    product *= std::max(side, 1ll);
  }
  return files;
}

// The files an NRRD header names in its "data file" (or "datafile") field: one, a LIST of the
// lines after it, or a %d pattern.
std::vector<fs::path> NrrdDataFiles(const fs::path& file, const std::string& named) {
  const std::vector<std::string> lines = HeaderLines(file, true);
  std::vector<fs::path> files;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const std::size_t colon = lines[i].find(':');
    if (lines[i].rfind('#', 0) == 0 || colon == std::string::npos) continue;
    if (colon + 1 < lines[i].size() && lines[i][colon + 1] == '=') continue;  // key/value pair
    const std::string field = Lowered(Trimmed(lines[i].substr(0, colon)));
    if (field != "data file" && field != "datafile") continue;
    const std::string value = Trimmed(lines[i].substr(colon + 1));
    const std::vector<std::string> words = Words(value);
    std::vector<std::string> names;
    if (!words.empty() && words[0] == "LIST") {
      for (std::size_t j = i + 1; j < lines.size(); ++j) {
        if (!Trimmed(lines[j]).empty()) names.push_back(Trimmed(lines[j]));
      }
      if (names.empty()) throw CommandError(named + ": its data file LIST lists no file");
      i = lines.size();
    } else if (value.find('%') != std::string::npos) {
      names = ExpandPattern(named, "data file", words);
    } else {
      names.push_back(value);
    }
    for (const std::string& name : names) {
      files.push_back(CheckDataFile(file, named, "data file", name));
    }
  }
  return files;
}

// `file` and the data files its header names.
void AddFileOf(const fs::path& file, const std::string& named, std::vector<fs::path>& files) {
  files.push_back(file);
  if (!fs::is_regular_file(file)) return;
  const std::vector<fs::path> data = IsNrrd(file)        ? NrrdDataFiles(file, named)
                                     : IsMetaImage(file) ? MetaImageDataFiles(file, named)
                                                         : std::vector<fs::path>();
  files.insert(files.end(), data.begin(), data.end());
}

}  // namespace

std::vector<std::string> SlicesOf(const fs::path& directory) {
  std::vector<fs::path> files;
  for (const fs::directory_entry& entry : fs::directory_iterator(directory)) {
    const fs::path& file = entry.path();
    if (!entry.is_regular_file() || file.filename().string().front() == '.') continue;
    if (itk::ImageIOFactory::CreateImageIO(file.c_str(),
                                           itk::ImageIOFactory::IOFileModeEnum::ReadMode)) {
      files.push_back(file);
    }
  }
  std::sort(files.begin(), files.end(), [](const fs::path& a, const fs::path& b) {
    const auto number_a = SliceNumber(a), number_b = SliceNumber(b);
    if (number_a != number_b) return number_a < number_b;
    return a.filename() < b.filename();
  });
  std::vector<std::string> slices;
  for (const fs::path& file : files) slices.push_back(file.string());
  return slices;
}

std::vector<fs::path> InputFiles(const fs::path& input, const std::string& named) {
  std::vector<fs::path> files;
  if (!fs::is_directory(input)) {
    AddFileOf(input, named, files);
    return files;
  }
  files.push_back(input);  // the directory itself: no output replaces it either
  for (const std::string& slice : SlicesOf(input)) {
    AddFileOf(slice, named + " (its slice " + Quoted(fs::path(slice).filename()) + ")", files);
  }
  return files;
}

void CheckNotInput(const std::string& named, const fs::path& file, const fs::path& input) {
  if (input.empty() || !fs::exists(input) || !fs::exists(file)) return;
  std::vector<fs::path> files{input};
  try {
    files = InputFiles(input, "INPUT " + Quoted(input));
  } catch (const CommandError&) {
    // A refused header: reading the input reports it, and reads none of its data files.
  }
  for (const fs::path& part : files) {
    std::error_code error;
    if (fs::equivalent(file, part, error)) {
      throw CommandError(
          named +
          (part == input ? " is the INPUT" : " is a file of the INPUT (" + Quoted(part) + ")") +
          "; volccl never overwrites the files it reads, even with --force");
    }
  }
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
    CheckNotInput(named, file, input);
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

void CheckOutputHoldsVolume(const fs::path& output, std::uint64_t depth) {
  if (depth <= 1) return;
  const itk::ImageIOBase::Pointer writer = itk::ImageIOFactory::CreateImageIO(
      output.c_str(), itk::ImageIOFactory::IOFileModeEnum::WriteMode);
  const std::string format = writer ? writer->GetNameOfClass() : "";
  if (format == "PNGImageIO" || format == "JPEGImageIO" || format == "BMPImageIO") {
    throw CommandError("cannot write OUTPUT " + Quoted(output) + ": " + Quoted(output.extension()) +
                       " files hold 2D images, and this is a volume of " + std::to_string(depth) +
                       " slices (use .nii.gz, .mha, .nrrd or .tif)");
  }
}

namespace {

// What the signal handler removes: fixed buffers, as it may only call async-signal-safe
// functions. kind 0: free; 1: a staging directory and the files in it; 2: a directory, if empty.
constexpr int kCleanupSlots = 16;
char cleanup_paths[kCleanupSlots][4096];
volatile sig_atomic_t cleanup_kinds[kCleanupSlots];
std::vector<const StagingDirectory*> live_stagings;
constexpr int kInterrupts[] = {SIGINT, SIGTERM, SIGHUP};

void RemoveFilesIn(const char* directory) {
  const int descriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (descriptor < 0) return;
  alignas(8) char entries[4096];
  for (;;) {
    const long bytes = syscall(SYS_getdents64, descriptor, entries, sizeof entries);
    if (bytes <= 0) break;
    for (long offset = 0; offset < bytes;) {
      struct Entry {
        std::uint64_t inode;
        std::int64_t next;
        unsigned short length;
        unsigned char type;
        char name[1];
      };
      const auto* entry = reinterpret_cast<const Entry*>(entries + offset);
      const bool dots =
          entry->name[0] == '.' &&
          (entry->name[1] == '\0' || (entry->name[1] == '.' && entry->name[2] == '\0'));
      if (!dots) unlinkat(descriptor, entry->name, 0);
      offset += entry->length;
    }
  }
  close(descriptor);
}

void CleanUpAndDie(int signal_number) {
  for (int kind = 1; kind <= 2; ++kind) {
    for (int slot = 0; slot < kCleanupSlots; ++slot) {
      if (cleanup_kinds[slot] != kind) continue;
      if (kind == 1) RemoveFilesIn(cleanup_paths[slot]);
      rmdir(cleanup_paths[slot]);
    }
  }
  signal(signal_number, SIG_DFL);
  raise(signal_number);
}

int Register(const fs::path& path, int kind) {
  static const bool installed = [] {
    struct sigaction action {};
    action.sa_handler = CleanUpAndDie;
    sigemptyset(&action.sa_mask);
    for (const int signal_number : kInterrupts) sigaddset(&action.sa_mask, signal_number);
    for (const int signal_number : kInterrupts) sigaction(signal_number, &action, nullptr);
    return true;
  }();
  (void)installed;
  const std::string text = fs::absolute(path).string();
  for (int slot = 0; slot < kCleanupSlots; ++slot) {
    if (cleanup_kinds[slot] != 0 || text.size() >= sizeof cleanup_paths[slot]) continue;
    std::memcpy(cleanup_paths[slot], text.c_str(), text.size() + 1);
    cleanup_kinds[slot] = kind;
    return slot;
  }
  return -1;
}

}  // namespace

void RemoveOnInterrupt(const fs::path& directory) { Register(directory, 2); }

StagingDirectory::StagingDirectory(const fs::path& destination, const std::string& name)
    : destination_(destination) {
  std::string pattern = (destination_ / ("." + name + ".tmp-XXXXXX")).string();
  if (mkdtemp(pattern.data()) == nullptr) {
    const int error = errno;
    // mkdtemp says ENOENT where a file system such as /proc takes no new files.
    const bool exists = fs::is_directory(destination_);
    throw CommandError(
        "cannot write to directory " + Quoted(destination_) + ": " +
        (error == ENOENT && exists ? "it does not accept new files" : std::strerror(error)));
  }
  path_ = pattern;
  slot_ = Register(path_, 1);
  live_stagings.push_back(this);
}

StagingDirectory::~StagingDirectory() {
  live_stagings.erase(std::remove(live_stagings.begin(), live_stagings.end(), this),
                      live_stagings.end());
  std::error_code ignored;
  fs::remove_all(path_, ignored);
  if (slot_ >= 0) cleanup_kinds[slot_] = 0;
}

void StagingDirectory::CheckCommit(const fs::path& input, bool force) const {
  for (const fs::directory_entry& entry : fs::directory_iterator(path_)) {
    const fs::path target = destination_ / entry.path().filename();
    CheckNotInput("the output file " + Quoted(target), target, input);
    if (fs::exists(target) && !force) {
      throw CommandError(Quoted(target) + " exists; --force overwrites it");
    }
  }
}

void StagingDirectory::Commit(const fs::path& input, bool force) const {
  CheckCommit(input, force);
  std::vector<fs::path> staged;
  for (const fs::directory_entry& entry : fs::directory_iterator(path_)) {
    staged.push_back(entry.path());
  }
  for (const fs::path& file : staged) fs::rename(file, destination_ / file.filename());
}

CommitSection::CommitSection(const fs::path& input, bool force) {
  sigset_t interrupts;
  sigemptyset(&interrupts);
  for (const int signal_number : kInterrupts) sigaddset(&interrupts, signal_number);
  sigprocmask(SIG_BLOCK, &interrupts, &previous_);
  try {
    for (const StagingDirectory* staging : live_stagings) staging->CheckCommit(input, force);
  } catch (...) {
    sigprocmask(SIG_SETMASK, &previous_, nullptr);
    throw;
  }
}

CommitSection::~CommitSection() { sigprocmask(SIG_SETMASK, &previous_, nullptr); }

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
