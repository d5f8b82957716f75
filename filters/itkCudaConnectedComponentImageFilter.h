// itk::CudaConnectedComponentImageFilter: a drop-in for itk::ConnectedComponentImageFilter that
// labels with volccl, on a CUDA GPU when one is usable and on the CPU otherwise.
//
//   using Filter = itk::CudaConnectedComponentImageFilter<InputImage, LabelImage>;
//   auto filter = Filter::New();          // was itk::ConnectedComponentImageFilter<...>::New()
//   filter->SetInput(image);
//   filter->SetFullyConnected(true);
//   filter->Update();                      // same output bytes, same GetObjectCount()
#pragma once

#include <cstdint>
#include <ostream>
#include <vector>

#include "itkCudaLabelingImageFilterBase.h"
#include "itkNumericTraits.h"
#include "volccl/statistics.h"

namespace itk {

/** \class CudaConnectedComponentImageFilter
 * \brief Labels the connected components of an image with volccl, as
 * ConnectedComponentImageFilter does.
 *
 * Same template parameters, setters and output bytes as ConnectedComponentImageFilter (the
 * foreground, FullyConnected and the mask as in CudaLabelingImageFilterBase): the objects are
 * numbered in raster order of their first pixel from 1 (from 0 when BackgroundValue is not 0,
 * skipping BackgroundValue, as ITK does), and background pixels get BackgroundValue. Beyond it:
 * SetConnectivity(18), SetAlgorithm, SetBackend, ComputeStatisticsOn() with GetMoments() and
 * GetShape(k), and RelabelComponentImageFilter's options in the same pass: MinimumObjectSize
 * (smaller objects become background), SortByObjectSize (largest first, ties in raster order, as
 * ITK sorts) and NumberOfObjectsToKeep (the largest k; 0 keeps all). Throws itk::ExceptionObject
 * for an output pixel type too small for the object count and for what volccl refuses (a too large
 * image, no GPU when cuda was asked).
 *
 * \ingroup volccl
 */
template <typename TInputImage, typename TOutputImage, typename TMaskImage = TInputImage>
class ITK_TEMPLATE_EXPORT CudaConnectedComponentImageFilter
    : public CudaLabelingImageFilterBase<TInputImage, TOutputImage, TMaskImage> {
 public:
  ITK_DISALLOW_COPY_AND_MOVE(CudaConnectedComponentImageFilter);

  using Self = CudaConnectedComponentImageFilter;
  using Superclass = CudaLabelingImageFilterBase<TInputImage, TOutputImage, TMaskImage>;
  using Pointer = SmartPointer<Self>;
  using ConstPointer = SmartPointer<const Self>;

  using typename Superclass::InputImageType;
  using typename Superclass::InputPixelType;
  using typename Superclass::LabelType;
  using typename Superclass::MaskImageType;
  using typename Superclass::MaskPixelType;
  using OutputImageType = TOutputImage;
  using OutputPixelType = typename TOutputImage::PixelType;
  using OutputImagePixelType = typename TOutputImage::PixelType;
  using RegionType = typename TOutputImage::RegionType;
  using IndexType = typename TInputImage::IndexType;
  using SizeType = typename TInputImage::SizeType;

  static constexpr unsigned int ImageDimension = TOutputImage::ImageDimension;
  static constexpr unsigned int InputImageDimension = TInputImage::ImageDimension;
  static constexpr unsigned int OutputImageDimension = TOutputImage::ImageDimension;

  itkTypeMacro(CudaConnectedComponentImageFilter, CudaLabelingImageFilterBase);
  itkNewMacro(Self);

  /** The value of background pixels in the output; labels skip it. */
  itkSetMacro(BackgroundValue, OutputImagePixelType);
  itkGetConstMacro(BackgroundValue, OutputImagePixelType);

  /** Objects of fewer pixels become background (0, the default: none). */
  itkSetMacro(MinimumObjectSize, SizeValueType);
  itkGetConstMacro(MinimumObjectSize, SizeValueType);

  /** Number the objects largest first (off by default: raster order of their first pixel). */
  itkSetMacro(SortByObjectSize, bool);
  itkGetConstReferenceMacro(SortByObjectSize, bool);
  itkBooleanMacro(SortByObjectSize);

  /** Keep only the largest k objects (ties: the first in raster order); 0, the default, keeps
   * all. */
  itkSetMacro(NumberOfObjectsToKeep, SizeValueType);
  itkGetConstMacro(NumberOfObjectsToKeep, SizeValueType);

  /** The number of objects before MinimumObjectSize and NumberOfObjectsToKeep removed some. */
  itkGetConstMacro(OriginalNumberOfObjects, SizeValueType);

  /** Also measure every object (volccl/statistics.h): off by default. */
  itkSetMacro(ComputeStatistics, bool);
  itkGetConstReferenceMacro(ComputeStatistics, bool);
  itkBooleanMacro(ComputeStatistics);

  /** With ComputeStatistics, the exact moments of the last update: row k - 1 for the k-th
   * object (label k when BackgroundValue is 0). */
  const std::vector<volccl::ComponentMoments>& GetMoments() const { return m_Moments; }

  /** The k-th object's (k from 1) centroid, covariance, principal moments and axes and
   * bounding box, in the physical space of the output. */
  volccl::ComponentShape GetShape(LabelType k) const;

#ifdef ITK_USE_CONCEPT_CHECKING
  itkConceptMacro(SameDimension,
                  (Concept::SameDimension<InputImageDimension, OutputImageDimension>));
  itkConceptMacro(OutputIntegerCheck, (Concept::IsInteger<OutputPixelType>));
#endif

 protected:
  CudaConnectedComponentImageFilter() = default;
  ~CudaConnectedComponentImageFilter() override = default;

  void PrintSelf(std::ostream& os, Indent indent) const override;
  void GenerateData() override;

 private:
  OutputImagePixelType m_BackgroundValue = NumericTraits<OutputImagePixelType>::ZeroValue();
  SizeValueType m_MinimumObjectSize = 0;
  bool m_SortByObjectSize = false;
  SizeValueType m_NumberOfObjectsToKeep = 0;
  SizeValueType m_OriginalNumberOfObjects = 0;
  bool m_ComputeStatistics = false;
  std::vector<volccl::ComponentMoments> m_Moments;
  volccl::ImageGeometry m_Geometry;
};

}  // namespace itk

#ifndef ITK_MANUAL_INSTANTIATION
#include "itkCudaConnectedComponentImageFilter.hxx"
#endif
