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

#include <ostream>

#include "itkCudaConnectedComponentImageFilter.h"
#include "itkImageToImageFilter.h"
#include "itkLabelMap.h"
#include "itkShapeLabelObject.h"
#include "volccl/types.h"

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
    : public ImageToImageFilter<
          TInputImage, LabelMap<ShapeLabelObject<SizeValueType, TInputImage::ImageDimension>>> {
 public:
  ITK_DISALLOW_COPY_AND_MOVE(CudaShapeLabelMapFilter);

  static constexpr unsigned int ImageDimension = TInputImage::ImageDimension;
  using InputImageType = TInputImage;
  using MaskImageType = TMaskImage;
  using LabelObjectType = ShapeLabelObject<SizeValueType, ImageDimension>;
  using OutputImageType = LabelMap<LabelObjectType>;
  using Self = CudaShapeLabelMapFilter;
  using Superclass = ImageToImageFilter<TInputImage, OutputImageType>;
  using Pointer = SmartPointer<Self>;
  using ConstPointer = SmartPointer<const Self>;
  using InputImagePointer = typename Superclass::InputImagePointer;
  using MaskImagePointer = typename MaskImageType::Pointer;
  using LabelType = SizeValueType;
  using RegionType = typename InputImageType::RegionType;

  itkTypeMacro(CudaShapeLabelMapFilter, ImageToImageFilter);
  itkNewMacro(Self);

  /** As CudaConnectedComponentImageFilter: face (off, the default) or full connectivity, or
   * an explicit volccl connectivity (0: from FullyConnected), the mask, algorithm and backend. */
  itkSetMacro(FullyConnected, bool);
  itkGetConstReferenceMacro(FullyConnected, bool);
  itkBooleanMacro(FullyConnected);
  itkSetMacro(Connectivity, int);
  itkGetConstMacro(Connectivity, int);
  itkSetInputMacro(MaskImage, MaskImageType);
  itkGetInputMacro(MaskImage, MaskImageType);
  void SetAlgorithm(volccl::Algorithm algorithm);
  volccl::Algorithm GetAlgorithm() const { return m_Algorithm; }
  void SetBackend(volccl::Backend backend);
  volccl::Backend GetBackend() const { return m_Backend; }

  /** The number of objects of the last update. */
  itkGetConstReferenceMacro(ObjectCount, LabelType);
  /** What the last update ran and its step timings. */
  const volccl::LabelResult& GetLabelResult() const { return m_LabelResult; }

 protected:
  CudaShapeLabelMapFilter();
  ~CudaShapeLabelMapFilter() override = default;
  void PrintSelf(std::ostream& os, Indent indent) const override;
  void GenerateInputRequestedRegion() override;
  void EnlargeOutputRequestedRegion(DataObject* output) override;
  void GenerateData() override;

 private:
  bool m_FullyConnected = false;
  int m_Connectivity = 0;
  volccl::Algorithm m_Algorithm = volccl::Algorithm::automatic;
  volccl::Backend m_Backend = volccl::Backend::automatic;
  LabelType m_ObjectCount = 0;
  volccl::LabelResult m_LabelResult;
};

}  // namespace itk

#ifndef ITK_MANUAL_INSTANTIATION
#include "itkCudaShapeLabelMapFilter.hxx"
#endif
