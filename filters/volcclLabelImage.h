// volccl::LabelImage: connected-component labeling of an itk::Image with volccl.
//
//   auto image = itk::ReadImage<itk::Image<short, 3>>("brain.nii.gz");
//   volccl::LabeledImage<3> labeled = volccl::LabelImage(image.GetPointer());
//   itk::WriteImage(labeled.Labels, "labels.nii.gz");
//   // labeled.Result.component_count components, numbered as ITK's
//   // ConnectedComponentImageFilter (FullyConnected on) numbers them.
//
// 2D images (itk::Image<T, 2>) are labeled with options.connectivity 4 or 8.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "itkImage.h"
#include "itkMacro.h"
#include "volccl/volccl.h"

namespace volccl {

template <unsigned VDimension>
using LabelImageType = itk::Image<std::uint32_t, VDimension>;

// The labels written by LabelImage and how volccl computed them.
template <unsigned VDimension>
struct LabeledImage {
  typename LabelImageType<VDimension>::Pointer Labels;  // 0 background, 1..Result.component_count
  LabelResult Result;
};

// Labels every voxel of the buffered region of `image` whose value differs from `background`.
// The label image has the same region, spacing, origin and direction as `image`. Throws
// itk::ExceptionObject for a null image and lets volccl::Error (bad size or options, no CUDA
// device, GPU out of memory) propagate.
template <typename TPixel, unsigned VDimension>
LabeledImage<VDimension> LabelImage(const itk::Image<TPixel, VDimension>* image,
                                    const LabelOptions& options = {},
                                    TPixel background = TPixel{}) {
  static_assert(std::is_arithmetic<TPixel>::value,
                "volccl::LabelImage needs an image of scalar pixels");
  static_assert(VDimension == 2 || VDimension == 3, "volccl labels 2D images and 3D volumes");
  if (image == nullptr) {
    itkGenericExceptionMacro("volccl::LabelImage: the input image is null");
  }
  const typename itk::Image<TPixel, VDimension>::RegionType& region = image->GetBufferedRegion();
  const Extent3 extent{region.GetSize(0), region.GetSize(1),
                       VDimension == 3 ? region.GetSize(VDimension - 1) : 1};
  validate(extent, options);

  LabeledImage<VDimension> labeled;
  labeled.Labels = LabelImageType<VDimension>::New();
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
