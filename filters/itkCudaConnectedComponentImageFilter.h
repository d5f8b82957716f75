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

#include "itkConceptChecking.h"
#include "itkImageToImageFilter.h"
#include "itkNumericTraits.h"
#include "volccl/statistics.h"
#include "volccl/types.h"

namespace itk {

/** \class CudaConnectedComponentImageFilter
 * \brief Labels the connected components of an image with volccl, as
 * ConnectedComponentImageFilter does.
 *
 * Same template parameters, setters and output bytes as ConnectedComponentImageFilter: non-zero
 * input pixels (where the optional mask is non-zero) are foreground; FullyConnected picks face
 * connectivity (off, the default: 4 in 2D, 6 in 3D) or full connectivity (8, 26); the objects
 * are numbered in raster order of their first pixel from 1 (from 0 when BackgroundValue is not
 * 0, skipping BackgroundValue, as ITK does); background pixels get BackgroundValue; the filter
 * needs its whole input and produces its whole output. Beyond it: SetConnectivity(18) (or any of
 * 4, 8, 6, 18, 26, overriding FullyConnected), SetAlgorithm and SetBackend (volccl::Backend:
 * automatic, cuda or cpu). Throws itk::ExceptionObject for an output pixel type too small for
 * the object count and for what volccl refuses (a too large image, no GPU when cuda was asked).
 *
 * \ingroup volccl
 */
template <typename TInputImage, typename TOutputImage, typename TMaskImage = TInputImage>
class ITK_TEMPLATE_EXPORT CudaConnectedComponentImageFilter
    : public ImageToImageFilter<TInputImage, TOutputImage> {
 public:
  ITK_DISALLOW_COPY_AND_MOVE(CudaConnectedComponentImageFilter);

  using Self = CudaConnectedComponentImageFilter;
  using Superclass = ImageToImageFilter<TInputImage, TOutputImage>;
  using Pointer = SmartPointer<Self>;
  using ConstPointer = SmartPointer<const Self>;

  using InputImageType = TInputImage;
  using OutputImageType = TOutputImage;
  using MaskImageType = TMaskImage;
  using InputPixelType = typename TInputImage::PixelType;
  using OutputPixelType = typename TOutputImage::PixelType;
  using OutputImagePixelType = typename TOutputImage::PixelType;
  using MaskPixelType = typename TMaskImage::PixelType;
  using InputImagePointer = typename Superclass::InputImagePointer;
  using MaskImagePointer = typename MaskImageType::Pointer;
  using RegionType = typename TOutputImage::RegionType;
  using IndexType = typename TInputImage::IndexType;
  using SizeType = typename TInputImage::SizeType;
  /** Type used as identifier of the different component labels. */
  using LabelType = IdentifierType;

  static constexpr unsigned int ImageDimension = TOutputImage::ImageDimension;
  static constexpr unsigned int InputImageDimension = TInputImage::ImageDimension;
  static constexpr unsigned int OutputImageDimension = TOutputImage::ImageDimension;
  static_assert(ImageDimension == 2 || ImageDimension == 3,
                "volccl labels 2D images and 3D volumes");

  itkTypeMacro(CudaConnectedComponentImageFilter, ImageToImageFilter);
  itkNewMacro(Self);

  /** Face connectivity (off, the default) or face + edge + vertex connectivity (on). */
  itkSetMacro(FullyConnected, bool);
  itkGetConstReferenceMacro(FullyConnected, bool);
  itkBooleanMacro(FullyConnected);

  /** The number of objects of the last update. */
  itkGetConstReferenceMacro(ObjectCount, LabelType);

  itkSetInputMacro(MaskImage, MaskImageType);
  itkGetInputMacro(MaskImage, MaskImageType);

  /** The value of background pixels in the output; labels skip it. */
  itkSetMacro(BackgroundValue, OutputImagePixelType);
  itkGetConstMacro(BackgroundValue, OutputImagePixelType);

  /** 0 (the default): from FullyConnected. Else 4 or 8 for 2D images, 6, 18 or 26 for volumes. */
  itkSetMacro(Connectivity, int);
  itkGetConstMacro(Connectivity, int);

  /** volccl's labeling algorithm; volccl::Algorithm::automatic (the default) picks the fastest
   * measured for the connectivity. */
  void SetAlgorithm(volccl::Algorithm algorithm);
  volccl::Algorithm GetAlgorithm() const { return m_Algorithm; }

  /** Where to label: automatic (the default; the GPU when usable), cuda or cpu. */
  void SetBackend(volccl::Backend backend);
  volccl::Backend GetBackend() const { return m_Backend; }

  /** What the last update ran (algorithm, backend) and its step timings. */
  const volccl::LabelResult& GetLabelResult() const { return m_LabelResult; }

  /** Also measure every object (volccl/statistics.h): off by default. */
  itkSetMacro(ComputeStatistics, bool);
  itkGetConstReferenceMacro(ComputeStatistics, bool);
  itkBooleanMacro(ComputeStatistics);

  /** With ComputeStatistics, the exact moments of the last update: row k - 1 for the k-th
   * object in raster order (label k when BackgroundValue is 0). */
  const std::vector<volccl::ComponentMoments>& GetMoments() const { return m_Moments; }

  /** The k-th object's (k from 1) centroid, covariance, principal moments and axes and
   * bounding box, in the physical space of the output. */
  volccl::ComponentShape GetShape(LabelType k) const;

#ifdef ITK_USE_CONCEPT_CHECKING
  itkConceptMacro(SameDimension,
                  (Concept::SameDimension<InputImageDimension, OutputImageDimension>));
  itkConceptMacro(InputEqualityComparableCheck, (Concept::EqualityComparable<InputPixelType>));
  itkConceptMacro(MaskEqualityComparableCheck, (Concept::EqualityComparable<MaskPixelType>));
  itkConceptMacro(OutputIntegerCheck, (Concept::IsInteger<OutputPixelType>));
#endif

 protected:
  CudaConnectedComponentImageFilter();
  ~CudaConnectedComponentImageFilter() override = default;

  void PrintSelf(std::ostream& os, Indent indent) const override;

  /** The filter needs all of its input and its mask. */
  void GenerateInputRequestedRegion() override;

  /** The filter produces all of its output. */
  void EnlargeOutputRequestedRegion(DataObject* output) override;

  void GenerateData() override;

 private:
  // The volccl connectivity of an update: m_Connectivity, or FullyConnected's.
  int ResolvedConnectivity() const;

  bool m_FullyConnected = false;
  OutputImagePixelType m_BackgroundValue = NumericTraits<OutputImagePixelType>::ZeroValue();
  LabelType m_ObjectCount = 0;
  int m_Connectivity = 0;
  volccl::Algorithm m_Algorithm = volccl::Algorithm::automatic;
  volccl::Backend m_Backend = volccl::Backend::automatic;
  volccl::LabelResult m_LabelResult;
  bool m_ComputeStatistics = false;
  std::vector<volccl::ComponentMoments> m_Moments;
  volccl::ImageGeometry m_Geometry;
};

}  // namespace itk

#ifndef ITK_MANUAL_INSTANTIATION
#include "itkCudaConnectedComponentImageFilter.hxx"
#endif
