#include "input_image.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "file_checks.h"
#include "itkImageIOFactory.h"
#include "nifti2_image_io.h"
#include "volccl/volccl.h"

namespace volccl::cli {
namespace {

// ITK's ImageIO for `file`, or for a NIfTI-2 file that ITK does not read, ours.
itk::ImageIOBase::Pointer ImageIOFor(const fs::path& file) {
  itk::ImageIOBase::Pointer io = itk::ImageIOFactory::CreateImageIO(
      file.c_str(), itk::ImageIOFactory::IOFileModeEnum::ReadMode);
  if (!io) {
    auto nifti2 = Nifti2ImageIO::New();
    if (nifti2->CanReadFile(file.c_str())) io = nifti2;
  }
  return io;
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

// ITK's ImageIO class for `file`, its header read, with what the libraries print kept off
// stderr; `named` for messages.
itk::ImageIOBase::Pointer ReadHeader(const fs::path& file, const std::string& named) {
  CheckBeforeReading(file, named);
  const LibraryMessages quiet;
  itk::ImageIOBase::Pointer io = ImageIOFor(file);
  if (!io) {
    throw CommandError("cannot read " + named +
                       ": not an image in a format ITK reads, or a damaged one");
  }
  io->SetFileName(file.string());
  try {
    io->ReadImageInformation();
  } catch (const itk::ExceptionObject& error) {
    throw CommandError("cannot read " + named + ": " + error.GetDescription());
  }
  return io;
}

std::size_t ComponentBytes(itk::IOComponentEnum type) {
  using Component = itk::IOComponentEnum;
  switch (type) {
    case Component::UCHAR:
    case Component::CHAR:
      return 1;
    case Component::USHORT:
    case Component::SHORT:
      return 2;
    case Component::UINT:
    case Component::INT:
    case Component::FLOAT:
      return 4;
    default:
      return 8;
  }
}

// 1 for unsigned integers, 2 for signed ones, 3 for floating point.
int KindOf(itk::IOComponentEnum type) {
  using Component = itk::IOComponentEnum;
  switch (type) {
    case Component::CHAR:
    case Component::SHORT:
    case Component::INT:
    case Component::LONG:
    case Component::LONGLONG:
      return 2;
    case Component::FLOAT:
    case Component::DOUBLE:
      return 3;
    default:
      return 1;
  }
}

// A voxel type that holds every value of both: the wider of one kind, a signed type wider than
// the unsigned one, double once either is floating point.
itk::IOComponentEnum Widest(itk::IOComponentEnum a, itk::IOComponentEnum b) {
  using Component = itk::IOComponentEnum;
  if (a == b) return a;
  const int kind_a = KindOf(a), kind_b = KindOf(b);
  const std::size_t size_a = ComponentBytes(a);
  const std::size_t size_b = ComponentBytes(b);
  if (kind_a == 3 || kind_b == 3) {
    return kind_a == kind_b && std::max(size_a, size_b) == 4 ? Component::FLOAT : Component::DOUBLE;
  }
  std::size_t size = std::max(size_a, size_b);
  if (kind_a != kind_b) {
    size = std::min<std::size_t>(
        8, std::max(kind_a == 2 ? size_a : size_b, 2 * (kind_a == 1 ? size_a : size_b)));
  }
  const bool is_signed = kind_a == 2 || kind_b == 2;
  switch (size) {
    case 1:
      return is_signed ? Component::CHAR : Component::UCHAR;
    case 2:
      return is_signed ? Component::SHORT : Component::USHORT;
    case 4:
      return is_signed ? Component::INT : Component::UINT;
    default:
      return is_signed ? Component::LONGLONG : Component::ULONGLONG;
  }
}

// The sides of a slice: 2D, or 3D of one slice.
std::string SliceProblem(const itk::ImageIOBase& io, const itk::ImageIOBase& first) {
  unsigned dimension = io.GetNumberOfDimensions();
  while (dimension > 2 && io.GetDimensions(dimension - 1) == 1) --dimension;
  if (dimension != 2) return "is not a 2D image";
  if (io.GetDimensions(0) != first.GetDimensions(0) ||
      io.GetDimensions(1) != first.GetDimensions(1)) {
    return "is " + std::to_string(io.GetDimensions(0)) + "x" + std::to_string(io.GetDimensions(1)) +
           " pixels, the first slice " + std::to_string(first.GetDimensions(0)) + "x" +
           std::to_string(first.GetDimensions(1));
  }
  if (io.GetNumberOfComponents() != first.GetNumberOfComponents()) {
    return "has " + std::to_string(io.GetNumberOfComponents()) +
           "-component pixels, the first "
           "slice " +
           std::to_string(first.GetNumberOfComponents());
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
  const auto slice_named = [&](const fs::path& slice) {
    return information.named + " (its slice " + Quoted(slice.filename()) + ")";
  };
  information.io =
      ReadHeader(header, information.slices.empty() ? information.named : slice_named(header));
  itk::ImageIOBase* io = information.io.GetPointer();
  information.component_type = io->GetComponentType();
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
  // One factor at a time, so that no product wraps. An image (z of 1) is cut into rows, a
  // volume into x*y slices.
  const std::uint64_t most = volccl::max_slab_voxel_count;
  const bool too_many = extent.x > most || extent.y > most || extent.z > most ||
                        extent.x * extent.y > volccl::max_voxel_count / extent.z ||
                        (extent.z > 1 && extent.x * extent.y > most);
  if (too_many) {
    throw CommandError(information.named + " has " + extent.to_string() +
                       " voxels; volccl labels at most " + std::to_string(volccl::max_voxel_count) +
                       " voxels (2^40), with at most " + std::to_string(most) +
                       " (2^32 - 2) in each side and in each x*y slice of a volume");
  }
  // Every slice is checked, its voxels included, before any is read: ITK's series reader would
  // take the first slice's pixel type for all of them.
  for (std::size_t i = 1; i < information.slices.size(); ++i) {
    const fs::path slice = information.slices[i];
    const itk::ImageIOBase::Pointer slice_io = ReadHeader(slice, slice_named(slice));
    const std::string problem = SliceProblem(*slice_io, *io);
    if (!problem.empty()) throw CommandError(slice_named(slice) + " " + problem);
    information.component_type = Widest(information.component_type, slice_io->GetComponentType());
    CheckVoxelData(slice, slice_named(slice), slice_io->GetNameOfClass(),
                   slice_io->GetImageSizeInBytes());
  }
  if (!information.slices.empty()) {
    CheckVoxelData(header, slice_named(header), io->GetNameOfClass(), io->GetImageSizeInBytes());
  }
  information.bytes_per_voxel = ComponentBytes(information.component_type);
  return information;
}

void CheckMemoryAvailable(std::uint64_t needed, const std::string& what) {
  const std::uint64_t available = AvailableMemoryBytes();
  if (available != 0 && needed > available) {
    throw CommandError(what + " needs about " + GiB(needed) + " of memory; this machine has " +
                       GiB(available) + " available");
  }
}

void CheckReadable(const InputInformation& information, std::size_t extra_bytes_per_voxel) {
  CheckMemoryAvailable(
      information.extent.voxel_count() * (information.bytes_per_voxel + extra_bytes_per_voxel),
      information.named + " (" + information.extent.to_string() + " voxels)");
  if (!information.slices.empty()) return;  // ReadInputInformation checked every slice
  CheckVoxelData(information.path, information.named, information.io->GetNameOfClass(),
                 information.io->GetImageSizeInBytes());
}

}  // namespace volccl::cli
