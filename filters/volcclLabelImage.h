// volccl::LabelImage: connected-component labeling of an itk::Image with volccl.
//
//   auto image = itk::ReadImage<itk::Image<short, 3>>("brain.nii.gz");
//   volccl::LabeledImage labeled = volccl::LabelImage(image.GetPointer());
//   itk::WriteImage(labeled.Labels, "labels.nii.gz");
//   // labeled.Result.component_count components, numbered as ITK's
//   // ConnectedComponentImageFilter (FullyConnected on) numbers them.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "itkImage.h"
#include "itkMacro.h"
#include "volccl/volccl.h"

namespace volccl {

using LabelImageType = itk::Image<std::uint32_t, 3>;

// The labels written by LabelImage and how volccl computed them.
struct LabeledImage {
  LabelImageType::Pointer Labels;  // 0 background, 1..Result.component_count
  LabelResult Result;
};

// Labels every voxel of the buffered region of `image` whose value differs from `background`.
// The label image has the same region, spacing, origin and direction as `image`. Throws
// itk::ExceptionObject for a null image and lets volccl::Error (bad size or options, no CUDA
// device, GPU out of memory) propagate.
template <typename TPixel>
LabeledImage LabelImage(const itk::Image<TPixel, 3>* image, const LabelOptions& options = {},
                        TPixel background = TPixel{}) {
  static_assert(std::is_arithmetic<TPixel>::value,
                "volccl::LabelImage needs an image of scalar pixels");
  if (image == nullptr) {
    itkGenericExceptionMacro("volccl::LabelImage: the input image is null");
  }
  const typename itk::Image<TPixel, 3>::RegionType& region = image->GetBufferedRegion();
  const Extent3 extent{region.GetSize(0), region.GetSize(1), region.GetSize(2)};
  validate(extent, options);

  LabeledImage labeled;
  labeled.Labels = LabelImageType::New();
  labeled.Labels->SetRegions(region);
  labeled.Labels->SetSpacing(image->GetSpacing());
  labeled.Labels->SetOrigin(image->GetOrigin());
  labeled.Labels->SetDirection(image->GetDirection());
  labeled.Labels->Allocate();

  const TPixel* pixels = image->GetBufferPointer();
  const std::uint8_t* mask = nullptr;
  std::vector<std::uint8_t> foreground;
  if constexpr (std::is_same<TPixel, std::uint8_t>::value) {
    // Already the "non-zero byte is foreground" mask volccl::label reads: no copy needed.
    if (background == 0) mask = pixels;
  }
  if (mask == nullptr) {
    foreground.resize(extent.voxel_count());
    std::transform(pixels, pixels + extent.voxel_count(), foreground.begin(),
                   [background](TPixel value) { return value != background; });
    mask = foreground.data();
  }
  labeled.Result = label(mask, extent, labeled.Labels->GetBufferPointer(), options);
  return labeled;
}

}  // namespace volccl
