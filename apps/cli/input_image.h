// Reading INPUT: one file in any format ITK reads, or a directory of 2D slices (PNG, TIFF, ...)
// stacked in the order of the numbers in their names, as EM stacks come. The header is read
// first, so that what volccl cannot label, or this machine cannot hold, is refused before any
// voxel is read.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "command_support.h"
#include "file_checks.h"
#include "itkImage.h"
#include "itkImageFileReader.h"
#include "itkImageIOBase.h"
#include "itkImageSeriesReader.h"
#include "volccl/types.h"

namespace volccl::cli {

// What INPUT holds, learned from its header (the first slice's, for a directory).
struct InputInformation {
  fs::path path;
  std::string named;                // "INPUT 'x'" or "LABELS 'x'", for messages
  itk::ImageIOBase::Pointer io;     // of the file, or of the first slice
  std::vector<std::string> slices;  // a directory: its slices, in stacking order
  unsigned dimension = 3;           // 2 for a 2D image, 3 for a volume (maybe one slice)
  volccl::Extent3 extent;
  // The voxels' type: the file's, or for a directory one that holds every slice's values.
  itk::IOComponentEnum component_type = itk::IOComponentEnum::UNKNOWNCOMPONENTTYPE;
  std::size_t bytes_per_voxel = 0;  // as stored in memory once read
};

// Learns the dimension, size and pixel type of `input` and refuses what volccl cannot label: no
// image, a damaged header, 4D data (trailing sides of 1 are dropped), vector pixels, a side of
// 0, more voxels than volccl labels. `role` is "INPUT" or "LABELS".
InputInformation ReadInputInformation(const fs::path& input, const std::string& role);

// Refuses the work when it needs more memory than this machine has available (the voxels read
// plus `extra_bytes_per_voxel`, labels and mask, for every voxel), and a NIfTI or MetaImage file
// that holds fewer voxels than its header promises, which ITK's readers would fill with zeros.
void CheckReadable(const InputInformation& information, std::size_t extra_bytes_per_voxel);

// Refuses work that needs more than the memory this machine has available: `what` ("labeling
// N components in 64 bits") needs `needed` bytes.
void CheckMemoryAvailable(std::uint64_t needed, const std::string& what);

// Reads the voxels as TImage (any scalar pixel type; ITK converts). NaN and infinite values
// read as 0, background, whatever the format: ITK's NIfTI reader already turns them into 0,
// MetaImage and NRRD would keep them.
template <typename TImage>
typename TImage::Pointer ReadInputImage(const InputInformation& information) {
  typename TImage::Pointer image;
  try {
    const LibraryMessages quiet;
    if (information.slices.empty()) {
      auto reader = itk::ImageFileReader<TImage>::New();
      reader->SetFileName(information.path.string());
      reader->SetImageIO(information.io);  // the one that read the header, NIfTI-2's included
      reader->Update();
      image = reader->GetOutput();
    } else {
      auto reader = itk::ImageSeriesReader<TImage>::New();
      reader->SetFileNames(information.slices);
      reader->Update();
      image = reader->GetOutput();
    }
  } catch (const itk::ExceptionObject& error) {
    throw CommandError("cannot read " + information.named + ": " + error.GetDescription());
  }
  using Pixel = typename TImage::PixelType;
  if constexpr (std::is_floating_point<Pixel>::value) {
    Pixel* values = image->GetBufferPointer();
    const std::size_t count = image->GetBufferedRegion().GetNumberOfPixels();
    for (std::size_t i = 0; i < count; ++i) {
      if (!std::isfinite(values[i])) values[i] = 0;
    }
  }
  return image;
}

// Calls visitor(TPixel{}) with the C++ type of the input's voxels, so that they are read without
// rounding.
template <typename TVisitor>
decltype(auto) VisitPixelType(const InputInformation& information, TVisitor&& visitor) {
  using Component = itk::IOComponentEnum;
  switch (information.component_type) {
    case Component::UCHAR:
      return visitor(std::uint8_t{});
    case Component::CHAR:
      return visitor(std::int8_t{});
    case Component::USHORT:
      return visitor(std::uint16_t{});
    case Component::SHORT:
      return visitor(std::int16_t{});
    case Component::UINT:
      return visitor(std::uint32_t{});
    case Component::INT:
      return visitor(std::int32_t{});
    case Component::ULONG:
    case Component::ULONGLONG:
      return visitor(std::uint64_t{});
    case Component::LONG:
    case Component::LONGLONG:
      return visitor(std::int64_t{});
    case Component::FLOAT:
      return visitor(float{});
    case Component::DOUBLE:
      return visitor(double{});
    default:
      throw CommandError(information.named + " has " +
                         itk::ImageIOBase::GetComponentTypeAsString(information.component_type) +
                         " voxels, which volccl cannot read");
  }
}

}  // namespace volccl::cli
