// itk::CudaShapeLabelMapFilter: the connected components of an image as an itk::LabelMap of
// itk::ShapeLabelObject, labeled and measured by volccl, for ITK's label-map filters
// (ShapeOpeningLabelMapFilter, ShapeKeepNObjectsLabelMapFilter, LabelMapToLabelImageFilter, ...).
//
//   auto shapes = itk::CudaShapeLabelMapFilter<InputImage>::New();
//   shapes->SetInput(image);
//   shapes->SetFullyConnected(true);
//   auto opening = itk::ShapeOpeningLabelMapFilter<Filter::OutputImageType>::New();
//   opening->SetInput(shapes->GetOutput());
//   opening->SetAttribute("NumberOfPixels");
//   opening->SetLambda(100);
#pragma once

#include "itkCudaLabelingImageFilterBase.h"
#include "itkLabelMap.h"
#include "itkShapeLabelObject.h"

namespace itk {

/** \class CudaShapeLabelMapFilter
 * \brief Labels the connected components of an image as CudaConnectedComponentImageFilter does
 * and returns them as a LabelMap of ShapeLabelObjects: label k is the k-th object in raster
 * order, with its lines (the runs of the image) and, from volccl's exact moments in the input's
 * physical space, NumberOfPixels, PhysicalSize, Centroid, BoundingBox, PrincipalMoments and
 * PrincipalAxes, equal to LabelImageToShapeLabelMapFilter's to 1e-9. The other attributes
 * (perimeter, Feret diameter, roundness, elongation, ...) are not computed and stay 0.
 *
 * \ingroup volccl
 */
template <typename TInputImage, typename TMaskImage = TInputImage>
class ITK_TEMPLATE_EXPORT CudaShapeLabelMapFilter
    : public CudaLabelingImageFilterBase<
          TInputImage, LabelMap<ShapeLabelObject<SizeValueType, TInputImage::ImageDimension>>,
          TMaskImage> {
 public:
  ITK_DISALLOW_COPY_AND_MOVE(CudaShapeLabelMapFilter);

  static constexpr unsigned int ImageDimension = TInputImage::ImageDimension;
  using LabelObjectType = ShapeLabelObject<SizeValueType, ImageDimension>;
  using OutputImageType = LabelMap<LabelObjectType>;
  using Self = CudaShapeLabelMapFilter;
  using Superclass = CudaLabelingImageFilterBase<TInputImage, OutputImageType, TMaskImage>;
  using Pointer = SmartPointer<Self>;
  using ConstPointer = SmartPointer<const Self>;
  using typename Superclass::InputImageType;
  using typename Superclass::InputRegionType;
  using typename Superclass::LabelType;

  itkTypeMacro(CudaShapeLabelMapFilter, CudaLabelingImageFilterBase);
  itkNewMacro(Self);

 protected:
  CudaShapeLabelMapFilter() = default;
  ~CudaShapeLabelMapFilter() override = default;
  void GenerateData() override;
};

}  // namespace itk

#ifndef ITK_MANUAL_INSTANTIATION
#include "itkCudaShapeLabelMapFilter.hxx"
#endif
