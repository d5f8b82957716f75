// An itk::Image for the ITK tests: allocated with a region index away from 0, anisotropic spacing
// and an origin away from 0, so that the filters' handling of regions and geometry is exercised.
#pragma once

#include <itkImage.h>

namespace volccl::test {

template <class Pixel, unsigned D, class Size>
typename itk::Image<Pixel, D>::Pointer allocate_offset_image(const Size& size) {
  using Image = itk::Image<Pixel, D>;
  auto image = Image::New();
  typename Image::IndexType index;
  typename Image::SizeType extent;
  typename Image::SpacingType spacing;
  typename Image::PointType origin;
  const long starts[3] = {3, -2, 5};
  for (unsigned i = 0; i < D; ++i) {
    index[i] = starts[i];
    extent[i] = size[i];
    spacing[i] = 0.5 + i;
    origin[i] = -10.0 * (i + 1);
  }
  image->SetRegions(typename Image::RegionType(index, extent));
  image->SetSpacing(spacing);
  image->SetOrigin(origin);
  image->Allocate();
  return image;
}

}  // namespace volccl::test
