// volccl::OtsuForeground: the foreground YACCLAB labels in the OASIS volumes, voxels above the
// Otsu threshold, with the threshold as scikit-image's threshold_otsu computes it (the midpoint
// of the best of 256 histogram bins): with it the real volumes have the component counts
// published with them (../shared/data/raw/README.txt). ITK's defaults (128 bins, the bin's upper
// edge) give other counts, e.g. 48 instead of 49 for Colin27's brain.
#pragma once

#include <cstdint>

#include "itkImage.h"
#include "itkOtsuThresholdImageFilter.h"

namespace volccl {

// A mask of `image`'s geometry: 1 above the threshold, 0 at or below it.
template <typename TImage>
typename itk::Image<std::uint8_t, TImage::ImageDimension>::Pointer OtsuForeground(
    const TImage* image) {
  using MaskImage = itk::Image<std::uint8_t, TImage::ImageDimension>;
  auto otsu = itk::OtsuThresholdImageFilter<TImage, MaskImage>::New();
  otsu->SetInput(image);
  // ITK puts voxels at or below the threshold "inside".
  otsu->SetInsideValue(0);
  otsu->SetOutsideValue(1);
  otsu->SetNumberOfHistogramBins(256);
  otsu->SetReturnBinMidpoint(true);
  otsu->Update();
  typename MaskImage::Pointer mask = otsu->GetOutput();
  mask->DisconnectPipeline();
  return mask;
}

}  // namespace volccl
