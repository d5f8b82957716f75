// volccl::LabelImage: connected-component labeling of an itk::Image with volccl.
//
//   auto image = itk::ReadImage<itk::Image<short, 3>>("brain.nii.gz");
//   volccl::LabeledImage<3> labeled = volccl::LabelImage(image.GetPointer());
//   itk::WriteImage(labeled.Labels, "labels.nii.gz");
//   // labeled.Result.component_count components, numbered as ITK's
//   // ConnectedComponentImageFilter (FullyConnected on) numbers them.
//
//   volccl::LabeledImage<3> measured = volccl::LabelAndMeasureImage(image.GetPointer());
//   volccl::ComponentShape s = volccl::describe(measured.Moments[0], measured.Geometry, 3);
//
// 2D images (itk::Image<T, 2>) are labeled with options.connectivity 4 or 8.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "itkImage.h"
#include "itkMacro.h"
#include "volccl/statistics.h"
#include "volccl/volccl.h"

namespace volccl {

template <unsigned VDimension>
using LabelImageType = itk::Image<std::uint32_t, VDimension>;

// The labels written by LabelImage and how volccl computed them; LabelAndMeasureImage also
// fills Moments (row i: label i + 1) and Geometry, the image's index-to-physical mapping.
template <unsigned VDimension>
struct LabeledImage {
  typename LabelImageType<VDimension>::Pointer Labels;  // 0 background, 1..Result.component_count
  LabelResult Result;
  std::vector<ComponentMoments> Moments;
  ImageGeometry Geometry;
};

// The spacing, origin and direction of `image` as volccl::describe takes them, with index 0 at
// the first voxel of the buffered region (ITK indices may start elsewhere).
template <typename TImage>
ImageGeometry GeometryOf(const TImage* image) {
  ImageGeometry geometry;
  constexpr unsigned dimension = TImage::ImageDimension;
  typename TImage::PointType first;
  image->TransformIndexToPhysicalPoint(image->GetBufferedRegion().GetIndex(), first);
  for (unsigned i = 0; i < dimension; ++i) {
    geometry.spacing[i] = image->GetSpacing()[i];
    geometry.origin[i] = first[i];
    for (unsigned j = 0; j < dimension; ++j) {
      geometry.direction[3 * i + j] = image->GetDirection()(i, j);
    }
  }
  return geometry;
}

namespace detail {

// LabelImage, and with `measure` the moments of every component.
template <typename TPixel, unsigned VDimension>
LabeledImage<VDimension> LabelImage(const itk::Image<TPixel, VDimension>* image,
                                    const LabelOptions& options, TPixel background, bool measure);

}  // namespace detail

// Labels every voxel of the buffered region of `image` whose value differs from `background`.
// The label image has the same region, spacing, origin and direction as `image`. Throws
// itk::ExceptionObject for a null image and lets volccl::Error (bad size or options, no CUDA
// device, GPU out of memory) propagate.
template <typename TPixel, unsigned VDimension>
LabeledImage<VDimension> LabelImage(const itk::Image<TPixel, VDimension>* image,
                                    const LabelOptions& options = {},
                                    TPixel background = TPixel{}) {
  return detail::LabelImage(image, options, background, false);
}

// LabelImage, and the moments of every component (volccl/statistics.h) gathered by
// options.statistics_strategy, timed as Result.timings.statistics_ms.
template <typename TPixel, unsigned VDimension>
LabeledImage<VDimension> LabelAndMeasureImage(const itk::Image<TPixel, VDimension>* image,
                                              const LabelOptions& options = {},
                                              TPixel background = TPixel{}) {
  return detail::LabelImage(image, options, background, true);
}

namespace detail {

template <typename TPixel, unsigned VDimension>
LabeledImage<VDimension> LabelImage(const itk::Image<TPixel, VDimension>* image,
                                    const LabelOptions& options, TPixel background, bool measure) {
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
  labeled.Geometry = GeometryOf(image);

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
  std::uint32_t* labels = labeled.Labels->GetBufferPointer();
  labeled.Result = measure ? label(mask, extent, labels, labeled.Moments, options)
                           : label(mask, extent, labels, options);
  return labeled;
}

}  // namespace detail
}  // namespace volccl
