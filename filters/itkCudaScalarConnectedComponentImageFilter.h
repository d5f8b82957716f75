// itk::CudaScalarConnectedComponentImageFilter: a drop-in for
// itk::ScalarConnectedComponentImageFilter with DistanceThreshold 0 that labels with volccl, on a
// CUDA GPU when one is usable and on the CPU otherwise.
//
//   using Filter = itk::CudaScalarConnectedComponentImageFilter<LabelMap, LabelImage>;
//   auto filter = Filter::New();       // was itk::ScalarConnectedComponentImageFilter<...>::New()
//   filter->SetInput(segmentation);
//   filter->SetFullyConnected(true);
//   filter->Update();                   // ITK's components, numbered 1..GetObjectCount()
#pragma once

#include <cstdint>
#include <ostream>
#include <type_traits>

#include "itkCudaLabelingImageFilterBase.h"
#include "itkNumericTraits.h"

namespace itk {

/** \class CudaScalarConnectedComponentImageFilter
 * \brief Labels every connected region of equal pixel value with volccl, as
 * ScalarConnectedComponentImageFilter does with DistanceThreshold 0.
 *
 * Same template parameters and setters as ScalarConnectedComponentImageFilter. Neighbouring
 * pixels (FullyConnected off: faces, on: faces, edges and corners; SetConnectivity(18) too) join
 * when their values are equal. Without a mask every pixel is labeled, 0-valued ones included,
 * since ITK's scalar filter has no background value; with a mask, pixels where it is 0 are not
 * labeled and get BackgroundValue.
 *
 * volccl's label maps always leave one value unlabeled, so the filter picks one that no labeled
 * pixel holds (below the smallest or above the largest; for pixels up to 32 bits whose labeled
 * values reach both ends of the type, a copy in a wider type; for 64-bit ones the first gap
 * between the distinct values) and gives masked-out pixels that value in a copy of the input.
 *
 * The objects are numbered in raster order of their first pixel, from 1 (from 0 when
 * BackgroundValue is not 0, skipping BackgroundValue, as CudaConnectedComponentImageFilter
 * does), and GetObjectCount() is their number. ITK's filter leaves gaps between its numbers
 * (each object keeps one of its provisional labels), writes 0 for masked-out pixels whatever
 * BackgroundValue is, and its GetObjectCount() stays 0: the output equals ITK's once ITK's
 * object numbers are ranked in increasing order, which the tests check.
 *
 * Only DistanceThreshold 0 is supported: another value throws itk::ExceptionObject at Update.
 * Pixels are integers of 8 to 64 bits, signed or not; floating-point pixels do not compile, since
 * ITK compares them by a threshold on their difference and volccl by equality. For the same
 * reason 64-bit values are compared exactly, where ITK's difference through double rounds or
 * overflows. Throws itk::ExceptionObject for an output pixel type too small for the object count
 * and for what volccl refuses (a too large image, no GPU when cuda was asked).
 *
 * \ingroup volccl
 */
template <typename TInputImage, typename TOutputImage, typename TMaskImage = TInputImage>
class ITK_TEMPLATE_EXPORT CudaScalarConnectedComponentImageFilter
    : public CudaLabelingImageFilterBase<TInputImage, TOutputImage, TMaskImage> {
 public:
  ITK_DISALLOW_COPY_AND_MOVE(CudaScalarConnectedComponentImageFilter);

  using Self = CudaScalarConnectedComponentImageFilter;
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

  static_assert(std::is_integral<InputPixelType>::value &&
                    !std::is_same<InputPixelType, bool>::value,
                "CudaScalarConnectedComponentImageFilter labels integer pixels: DistanceThreshold "
                "0 on floating-point pixels is not supported");

  itkTypeMacro(CudaScalarConnectedComponentImageFilter, CudaLabelingImageFilterBase);
  itkNewMacro(Self);

  /** Neighbours join when their values differ by at most this; only 0 (the default) is
   * supported, another value throws at Update. */
  itkSetMacro(DistanceThreshold, InputPixelType);
  itkGetConstMacro(DistanceThreshold, InputPixelType);

  /** The value of masked-out pixels in the output; object numbers skip it. */
  itkSetMacro(BackgroundValue, OutputImagePixelType);
  itkGetConstMacro(BackgroundValue, OutputImagePixelType);

#ifdef ITK_USE_CONCEPT_CHECKING
  itkConceptMacro(SameDimension,
                  (Concept::SameDimension<InputImageDimension, OutputImageDimension>));
  itkConceptMacro(OutputIntegerCheck, (Concept::IsInteger<OutputPixelType>));
#endif

 protected:
  CudaScalarConnectedComponentImageFilter() = default;
  ~CudaScalarConnectedComponentImageFilter() override = default;

  void PrintSelf(std::ostream& os, Indent indent) const override;
  void GenerateData() override;

 private:
  // Labels the input's `region` into `labels` (volccl's numbering) as a label map.
  template <typename TLabel>
  void LabelValues(const RegionType& region, TLabel* labels);

  InputPixelType m_DistanceThreshold = NumericTraits<InputPixelType>::ZeroValue();
  OutputImagePixelType m_BackgroundValue = NumericTraits<OutputImagePixelType>::ZeroValue();
};

}  // namespace itk

#ifndef ITK_MANUAL_INSTANTIATION
#include "itkCudaScalarConnectedComponentImageFilter.hxx"
#endif
