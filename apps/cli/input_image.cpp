#include "input_image.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include <zlib.h>

#include "itkImageIOFactory.h"
#include "volccl/volccl.h"

namespace volccl::cli {
namespace {

itk::ImageIOBase::Pointer ImageIOFor(const fs::path& file) {
  return itk::ImageIOFactory::CreateImageIO(file.c_str(),
                                            itk::ImageIOFactory::IOFileModeEnum::ReadMode);
}

// MemAvailable of /proc/meminfo, else the free physical pages; 0 when neither is known.
std::uint64_t AvailableMemoryBytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  std::uint64_t kilobytes = 0;
  std::string unit;
  while (meminfo >> key >> kilobytes >> unit) {
    if (key == "MemAvailable:") return kilobytes * 1024;
  }
  const long pages = sysconf(_SC_AVPHYS_PAGES), page_size = sysconf(_SC_PAGESIZE);
  return pages > 0 && page_size > 0 ? static_cast<std::uint64_t>(pages) * page_size : 0;
}

std::string GiB(std::uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f GiB", static_cast<double>(bytes) / (1ull << 30));
  return text;
}

// The bytes a file holds, or the bytes a gzip stream expands to (its trailer's ISIZE, modulo
// 2^32); 0 when unknown.
std::uint64_t FileBytes(const fs::path& file, bool gzipped) {
  std::ifstream stream(file, std::ios::binary | std::ios::ate);
  const std::uint64_t size = stream ? static_cast<std::uint64_t>(stream.tellg()) : 0;
  if (!gzipped) return size;
  unsigned char trailer[4] = {0, 0, 0, 0};
  if (size < 18 || !stream.seekg(-4, std::ios::end) ||
      !stream.read(reinterpret_cast<char*>(trailer), 4)) {
    return 0;
  }
  return trailer[0] | trailer[1] << 8 | trailer[2] << 16 |
         static_cast<std::uint64_t>(trailer[3]) << 24;
}

// NIfTI-1 (.nii, .nii.gz): the header's vox_offset plus the voxels' bytes must be there. ITK's
// reader fills what a short file lacks with zeros, silently.
std::string NiftiShortfall(const fs::path& file, std::uint64_t data_bytes) {
  unsigned char header[352] = {};
  const gzFile stream = gzopen(file.c_str(), "rb");  // reads plain files as they are
  if (stream == nullptr) return {};
  const int read = gzread(stream, header, sizeof header);
  const bool gzipped = gzdirect(stream) == 0;
  gzclose(stream);
  std::uint32_t header_size = 0;
  float offset = 0;
  std::memcpy(&header_size, header, 4);
  std::memcpy(&offset, header + 108, 4);
  if (read < 348 || header_size != 348 || !(offset >= 348)) return {};  // NIfTI-2, swapped
  const std::uint64_t expected = static_cast<std::uint64_t>(offset) + data_bytes;
  const std::uint64_t actual = FileBytes(file, gzipped);
  if (gzipped && actual != (expected & 0xFFFFFFFFull)) {
    return "its compressed data do not expand to the " + std::to_string(expected) +
           " bytes its header promises; the file is truncated or damaged";
  }
  if (!gzipped && actual < expected) {
    return "it holds " + std::to_string(actual) + " bytes, its header promises " +
           std::to_string(expected) + "; the file is truncated";
  }
  return {};
}

std::string Trimmed(const std::string& text) {
  const std::size_t first = text.find_first_not_of(" \t\r");
  const std::size_t last = text.find_last_not_of(" \t\r");
  return first == std::string::npos ? std::string() : text.substr(first, last - first + 1);
}

// MetaImage (.mha, .mhd + .raw), uncompressed: the voxels after the header, or in the data file,
// must be there. ITK's reader warns on stderr and carries on.
std::string MetaImageShortfall(const fs::path& file, std::uint64_t data_bytes) {
  std::ifstream header(file, std::ios::binary);
  std::string line, data_file;
  bool compressed = false, header_size_given = false;
  while (data_file.empty() && std::getline(header, line)) {
    const std::size_t equals = line.find_first_of("=:");  // "Key = value" or "Key: value"
    if (equals == std::string::npos) continue;
    const std::string key = Trimmed(line.substr(0, equals));
    const std::string value = Trimmed(line.substr(equals + 1));
    if (key == "CompressedData") compressed = value == "True" || value == "true";
    if (key == "HeaderSize") header_size_given = true;
    if (key == "ElementDataFile") data_file = value;
  }
  if (data_file.empty() || compressed || header_size_given || data_file == "LIST" ||
      data_file.find('%') != std::string::npos) {
    return {};
  }
  std::uint64_t actual = 0;
  if (data_file == "LOCAL") {
    const std::uint64_t header_bytes = static_cast<std::uint64_t>(header.tellg());
    actual = FileBytes(file, false) - header_bytes;
  } else {
    const fs::path data = file.parent_path() / data_file;
    if (!fs::is_regular_file(data)) return "its data file " + Quoted(data) + " does not exist";
    actual = FileBytes(data, false);
  }
  if (actual < data_bytes) {
    return "it holds " + std::to_string(actual) + " bytes of voxels, its header promises " +
           std::to_string(data_bytes) + "; the file is truncated";
  }
  return {};
}

}  // namespace

InputInformation ReadInputInformation(const fs::path& input, const std::string& role) {
  InputInformation information;
  information.path = input;
  information.named = role + " " + Quoted(input);
  fs::path header = input;
  InputFiles(input, information.named);  // before ITK reads any header
  if (fs::is_directory(input)) {
    information.slices = SlicesOf(input);
    if (information.slices.empty()) {
      throw CommandError(information.named +
                         " is a directory without image slices in a format ITK reads");
    }
    header = information.slices.front();
  }
  information.io = ImageIOFor(header);
  itk::ImageIOBase* io = information.io.GetPointer();
  if (!io) {
    throw CommandError("cannot read " + information.named +
                       ": not an image in a format ITK reads, or a damaged one");
  }
  io->SetFileName(header.string());
  try {
    io->ReadImageInformation();
  } catch (const itk::ExceptionObject& error) {
    throw CommandError("cannot read " + information.named + ": " + error.GetDescription());
  }

  unsigned dimension = io->GetNumberOfDimensions();
  while (dimension > 3 && io->GetDimensions(dimension - 1) == 1) --dimension;
  if (!information.slices.empty()) {
    if (dimension == 3 && io->GetDimensions(2) == 1) dimension = 2;
    if (dimension != 2) {
      throw CommandError(information.named + " holds " + std::to_string(dimension) +
                         "D files; a directory is read as a stack of 2D slices");
    }
  }
  if (dimension != 2 && dimension != 3) {
    throw CommandError(information.named + " is a " + std::to_string(dimension) +
                       "D image; volccl labels 2D images and 3D volumes");
  }
  if (io->GetNumberOfComponents() != 1) {
    throw CommandError(information.named + " has " + std::to_string(io->GetNumberOfComponents()) +
                       "-component " + itk::ImageIOBase::GetPixelTypeAsString(io->GetPixelType()) +
                       " pixels; only images of scalar pixels are supported");
  }
  information.dimension = information.slices.empty() ? dimension : 3;
  information.extent = {io->GetDimensions(0), io->GetDimensions(1),
                        information.slices.empty() ? (dimension == 3 ? io->GetDimensions(2) : 1)
                                                   : information.slices.size()};
  const volccl::Extent3& extent = information.extent;
  if (extent.x == 0 || extent.y == 0 || extent.z == 0) {
    throw CommandError(information.named + " has a side of 0 voxels (" + extent.to_string() +
                       "): there is nothing to label");
  }
  const bool too_many = extent.x > volccl::max_voxel_count || extent.y > volccl::max_voxel_count ||
                        extent.z > volccl::max_voxel_count ||
                        extent.x * extent.y > volccl::max_voxel_count ||
                        extent.voxel_count() > volccl::max_voxel_count;
  if (too_many) {
    throw CommandError(information.named + " has " + extent.to_string() +
                       " voxels; volccl labels at most " + std::to_string(volccl::max_voxel_count) +
                       " voxels (2^32 - 2)");
  }
  information.bytes_per_voxel = io->GetComponentSize();
  return information;
}

void CheckReadable(const InputInformation& information, std::size_t extra_bytes_per_voxel) {
  const std::uint64_t needed =
      information.extent.voxel_count() * (information.bytes_per_voxel + extra_bytes_per_voxel);
  const std::uint64_t available = AvailableMemoryBytes();
  if (available != 0 && needed > available) {
    throw CommandError(information.named + " (" + information.extent.to_string() +
                       " voxels) needs about " + GiB(needed) +
                       " of memory to label; this machine has " + GiB(available) + " available");
  }
  if (!information.slices.empty()) return;  // each slice's reader refuses a short file itself
  const std::string format = information.io->GetNameOfClass();
  const std::uint64_t data_bytes = information.io->GetImageSizeInBytes();
  const std::string shortfall =
      format == "NiftiImageIO"  ? NiftiShortfall(information.path, data_bytes)
      : format == "MetaImageIO" ? MetaImageShortfall(information.path, data_bytes)
                                : std::string();
  if (!shortfall.empty()) {
    throw CommandError("cannot read " + information.named + ": " + shortfall);
  }
}

}  // namespace volccl::cli
