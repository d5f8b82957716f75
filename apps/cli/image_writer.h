// Writing an image file: with ITK's writer for its extension, or as NIfTI-2 for a .nii or
// .nii.gz whose sides NIfTI-1 cannot hold (nifti2_image_io.h).
#pragma once

#include <cstdint>
#include <filesystem>

#include "itkImageFileWriter.h"
#include "nifti2_image_io.h"

namespace volccl::cli {

// Throws itk::ExceptionObject when the file cannot be written.
template <typename TImage>
void WriteImageFile(const TImage* image, const std::filesystem::path& path) {
  auto writer = itk::ImageFileWriter<TImage>::New();
  writer->SetInput(image);
  writer->SetFileName(path.string());
  const auto& size = image->GetBufferedRegion().GetSize();
  std::uint64_t sides[TImage::ImageDimension];
  for (unsigned i = 0; i < TImage::ImageDimension; ++i) sides[i] = size[i];
  if (IsNiftiName(path) && !NiftiOneHolds(sides, TImage::ImageDimension)) {
    writer->SetImageIO(Nifti2ImageIO::New());
  }
  writer->Update();
}

}  // namespace volccl::cli
