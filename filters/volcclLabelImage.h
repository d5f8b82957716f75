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
//   auto segmentation = itk::ReadImage<itk::Image<std::uint16_t, 3>>("aseg.nii.gz");
//   volccl::LabeledImage<3> pieces = volccl::LabelEachValue(segmentation.GetPointer());
//   // every connected region of equal non-zero value is a component, as cc3d numbers them
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

// The labels: 32-bit unless TLabel asks for 64, which takes more than 2^32 - 1 components.
template <unsigned VDimension, typename TLabel = std::uint32_t>
using LabelImageType = itk::Image<TLabel, VDimension>;

// The labels written by LabelImage and how volccl computed them; LabelAndMeasureImage also
// fills Moments (row i: label i + 1) and Geometry, the image's index-to-physical mapping.
template <unsigned VDimension, typename TLabel = std::uint32_t>
struct LabeledImage {
  // 0 background, 1..Result.component_count
  typename LabelImageType<VDimension, TLabel>::Pointer Labels;
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

// The fixed-width integer of TPixel's size and signedness (long long -> std::int64_t), whose
// LabelInput volccl::label takes.
template <typename TPixel>
using FixedWidthOf = std::conditional_t<
    std::is_signed<TPixel>::value,
    std::conditional_t<
        sizeof(TPixel) == 1, std::int8_t,
        std::conditional_t<sizeof(TPixel) == 2, std::int16_t,
                           std::conditional_t<sizeof(TPixel) == 4, std::int32_t, std::int64_t>>>,
    std::conditional_t<
        sizeof(TPixel) == 1, std::uint8_t,
        std::conditional_t<sizeof(TPixel) == 2, std::uint16_t,
                           std::conditional_t<sizeof(TPixel) == 4, std::uint32_t, std::uint64_t>>>>;

// LabelImage, and with `measure` the moments of every component.
template <typename TLabel, typename TPixel, unsigned VDimension>
LabeledImage<VDimension, TLabel> LabelImage(const itk::Image<TPixel, VDimension>* image,
                                            const LabelOptions& options, TPixel background,
                                            bool measure, bool each_value = false);

}  // namespace detail

// Labels every voxel of the buffered region of `image` whose value differs from `background`.
// The label image has the same region, spacing, origin and direction as `image`. Throws
// itk::ExceptionObject for a null image and lets volccl::Error (bad size or options, no CUDA
// device, GPU out of memory, TooManyComponents for 32-bit labels) propagate. LabelImage<
// std::uint64_t>(image) writes 64-bit labels.
template <typename TLabel = std::uint32_t, typename TPixel, unsigned VDimension>
LabeledImage<VDimension, TLabel> LabelImage(const itk::Image<TPixel, VDimension>* image,
                                            const LabelOptions& options = {},
                                            TPixel background = TPixel{}) {
  return detail::LabelImage<TLabel>(image, options, background, false);
}

// LabelImage, and the moments of every component (volccl/statistics.h) gathered by
// options.statistics_strategy, timed as Result.timings.statistics_ms.
template <typename TLabel = std::uint32_t, typename TPixel, unsigned VDimension>
LabeledImage<VDimension, TLabel> LabelAndMeasureImage(const itk::Image<TPixel, VDimension>* image,
                                                      const LabelOptions& options = {},
                                                      TPixel background = TPixel{}) {
  return detail::LabelImage<TLabel>(image, options, background, true);
}

// Labels a label map (integer pixels): every connected region of equal value other than
// `background` is a component, numbered in raster order of its first voxel as
// cc3d.connected_components and skimage.measure.label number them. options.algorithm must take
// label maps (volccl::supports_label_maps; `automatic` picks one).
template <typename TLabel = std::uint32_t, typename TPixel, unsigned VDimension>
LabeledImage<VDimension, TLabel> LabelEachValue(const itk::Image<TPixel, VDimension>* image,
                                                const LabelOptions& options = {},
                                                TPixel background = TPixel{}) {
  return detail::LabelImage<TLabel>(image, options, background, false, true);
}

// LabelEachValue, and the moments of every component.
template <typename TLabel = std::uint32_t, typename TPixel, unsigned VDimension>
LabeledImage<VDimension, TLabel> LabelAndMeasureEachValue(
    const itk::Image<TPixel, VDimension>* image, const LabelOptions& options = {},
    TPixel background = TPixel{}) {
  return detail::LabelImage<TLabel>(image, options, background, true, true);
}

namespace detail {

template <typename TLabel, typename TPixel, unsigned VDimension>
LabeledImage<VDimension, TLabel> LabelImage(const itk::Image<TPixel, VDimension>* image,
                                            const LabelOptions& options, TPixel background,
                                            bool measure, bool each_value) {
  static_assert(
      std::is_same<TLabel, std::uint32_t>::value || std::is_same<TLabel, std::uint64_t>::value,
      "volccl writes 32-bit or 64-bit labels");
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

  LabeledImage<VDimension, TLabel> labeled;
  labeled.Labels = LabelImageType<VDimension, TLabel>::New();
  labeled.Labels->SetRegions(region);
  labeled.Labels->SetSpacing(image->GetSpacing());
  labeled.Labels->SetOrigin(image->GetOrigin());
  labeled.Labels->SetDirection(image->GetDirection());
  labeled.Labels->Allocate();
  labeled.Geometry = GeometryOf(image);

  const TPixel* pixels = image->GetBufferPointer();
  TLabel* labels = labeled.Labels->GetBufferPointer();
  if (each_value) {
    if constexpr (std::is_integral<TPixel>::value && !std::is_same<TPixel, bool>::value) {
      using Fixed = FixedWidthOf<TPixel>;
      const LabelInput input = LabelInput::values(reinterpret_cast<const Fixed*>(pixels),
                                                  static_cast<Fixed>(background));
      labeled.Result = measure ? label(input, extent, labels, labeled.Moments, options)
                               : label(input, extent, labels, options);
      return labeled;
    } else {
      itkGenericExceptionMacro(
          "volccl::LabelEachValue: a label map holds integer pixels, not floating-point ones");
    }
  }
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
  labeled.Result = measure ? label(mask, extent, labels, labeled.Moments, options)
                           : label(mask, extent, labels, options);
  return labeled;
}

}  // namespace detail
}  // namespace volccl
