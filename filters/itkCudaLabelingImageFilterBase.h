// What the volccl ITK filters share: the settings of the labeling (FullyConnected or an explicit
// connectivity, the mask, volccl's algorithm and backend), the whole-image requested regions,
// and the labeling itself, from the foreground ConnectedComponentImageFilter defines.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <ostream>
#include <type_traits>
#include <vector>

#include "itkImageToImageFilter.h"
#include "itkNumericTraits.h"
#include "volccl/statistics.h"
#include "volccl/types.h"

namespace itk {

/** \class CudaLabelingImageFilterBase
 * \brief Base of CudaConnectedComponentImageFilter and CudaShapeLabelMapFilter.
 *
 * Non-zero input pixels where the optional mask is non-zero are foreground. FullyConnected picks
 * face connectivity (off, the default: 4 in 2D, 6 in 3D) or full connectivity (8, 26);
 * SetConnectivity (4, 8, 6, 18, 26; 0 for FullyConnected's) overrides it. The filter needs its
 * whole input and produces its whole output.
 *
 * \ingroup volccl
 */
template <typename TInputImage, typename TOutputImage, typename TMaskImage>
class ITK_TEMPLATE_EXPORT CudaLabelingImageFilterBase
    : public ImageToImageFilter<TInputImage, TOutputImage> {
 public:
  ITK_DISALLOW_COPY_AND_MOVE(CudaLabelingImageFilterBase);

  using Self = CudaLabelingImageFilterBase;
  using Superclass = ImageToImageFilter<TInputImage, TOutputImage>;
  using Pointer = SmartPointer<Self>;
  using ConstPointer = SmartPointer<const Self>;

  using InputImageType = TInputImage;
  using MaskImageType = TMaskImage;
  using InputPixelType = typename TInputImage::PixelType;
  using MaskPixelType = typename TMaskImage::PixelType;
  using InputImagePointer = typename Superclass::InputImagePointer;
  using MaskImagePointer = typename MaskImageType::Pointer;
  using InputRegionType = typename TInputImage::RegionType;
  /** Type used as identifier of the different component labels. */
  using LabelType = IdentifierType;

  static constexpr unsigned int InputImageDimension = TInputImage::ImageDimension;
  static_assert(InputImageDimension == 2 || InputImageDimension == 3,
                "volccl labels 2D images and 3D volumes");

  itkTypeMacro(CudaLabelingImageFilterBase, ImageToImageFilter);

  /** Face connectivity (off, the default) or face + edge + vertex connectivity (on). */
  itkSetMacro(FullyConnected, bool);
  itkGetConstReferenceMacro(FullyConnected, bool);
  itkBooleanMacro(FullyConnected);

  /** 0 (the default): from FullyConnected. Else 4 or 8 for 2D images, 6, 18 or 26 for volumes. */
  itkSetMacro(Connectivity, int);
  itkGetConstMacro(Connectivity, int);

  itkSetInputMacro(MaskImage, MaskImageType);
  itkGetInputMacro(MaskImage, MaskImageType);

  /** volccl's labeling algorithm; volccl::Algorithm::automatic (the default) picks the fastest
   * measured for the connectivity. */
  void SetAlgorithm(volccl::Algorithm algorithm) { SetAndModify(m_Algorithm, algorithm); }
  volccl::Algorithm GetAlgorithm() const { return m_Algorithm; }

  /** Where to label: automatic (the default; the GPU when usable), cuda or cpu. */
  void SetBackend(volccl::Backend backend) { SetAndModify(m_Backend, backend); }
  volccl::Backend GetBackend() const { return m_Backend; }

  /** The number of objects of the last update. */
  itkGetConstReferenceMacro(ObjectCount, LabelType);

  /** What the last update ran (algorithm, backend) and its step timings. */
  const volccl::LabelResult& GetLabelResult() const { return m_LabelResult; }

#ifdef ITK_USE_CONCEPT_CHECKING
  itkConceptMacro(InputEqualityComparableCheck, (Concept::EqualityComparable<InputPixelType>));
  itkConceptMacro(MaskEqualityComparableCheck, (Concept::EqualityComparable<MaskPixelType>));
#endif

 protected:
  CudaLabelingImageFilterBase() { Self::AddOptionalInputName("MaskImage", 1); }
  ~CudaLabelingImageFilterBase() override = default;

  void PrintSelf(std::ostream& os, Indent indent) const override;

  /** The filter needs all of its input and its mask. */
  void GenerateInputRequestedRegion() override;

  /** The filter produces all of its output. */
  void EnlargeOutputRequestedRegion(DataObject* output) override;

  /** Labels the input's `region` into `labels`, one per voxel of the region, every one written
   * (volccl's numbering: 0 background, 1..count in raster order) and, unless `moments` is null,
   * measures the components; sets ObjectCount and LabelResult and reports progress up to
   * `progress_after`. Throws itk::ExceptionObject for what volccl refuses. */
  template <typename TLabel>
  void Label(const InputRegionType& region, TLabel* labels,
             std::vector<volccl::ComponentMoments>* moments, float progress_after);

  /** Label's second half, for a subclass that builds its own volccl input (a label map) of
   * `region`'s extent. */
  template <typename TLabel>
  void LabelWithVolccl(const volccl::LabelInput& input, const InputRegionType& region,
                       TLabel* labels, std::vector<volccl::ComponentMoments>* moments,
                       float progress_after);

  /** The mask image, or null; throws when its buffered region does not cover `region`. */
  const MaskImageType* MaskCovering(const InputRegionType& region) const;

  /** The labels volccl writes for an output of TOutput: 64-bit for 64-bit pixels, which can
   * number more than 2^32 - 1 objects, else 32-bit. */
  template <typename TOutput>
  using ObjectNumber =
      std::conditional_t<(sizeof(typename TOutput::PixelType) > 4), std::uint64_t, std::uint32_t>;

  /** Where volccl's labels of the output's `region` go: the output's own buffer when they are
   * already its numbers (pixels of the labels' type, BackgroundValue 0, the whole buffer), else
   * `scratch`. */
  template <typename TOutput>
  ObjectNumber<TOutput>* ObjectNumberBuffer(TOutput* output,
                                            const typename TOutput::RegionType& region,
                                            typename TOutput::PixelType background,
                                            std::unique_ptr<ObjectNumber<TOutput>[]>& scratch);

  /** Writes volccl's `labels` of `region` (from ObjectNumberBuffer) as ITK numbers the objects:
   * 0, 1, 2, ... in raster order skipping `background` (from 1 when it is 0), background pixels
   * `background`. Throws when ObjectCount does not fit the output pixel type. */
  template <typename TOutput, typename TLabel>
  void WriteObjectNumbers(TOutput* output, const typename TOutput::RegionType& region,
                          const TLabel* labels, typename TOutput::PixelType background);

  /** Calls work(begin, end) on contiguous chunks of [0, count) on the filter's threads: the
   * per-voxel passes around the labeling, which one thread makes as slow as ITK's own filter
   * on large volumes. */
  template <typename TWork>
  void ForEachChunk(std::size_t count, const TWork& work) {
    constexpr std::size_t chunk = std::size_t{1} << 20;
    this->GetMultiThreader()->ParallelizeArray(
        0, (count + chunk - 1) / chunk,
        [&](SizeValueType index) { work(index * chunk, std::min(count, (index + 1) * chunk)); },
        nullptr);
  }

  // The volccl connectivity of an update: m_Connectivity, or FullyConnected's.
  int ResolvedConnectivity() const;

  // For subclasses that remove objects after the labeling.
  void SetObjectCount(LabelType count) { m_ObjectCount = count; }

 private:
  template <typename T>
  void SetAndModify(T& field, T value) {
    if (field != value) {
      field = value;
      this->Modified();
    }
  }

  bool m_FullyConnected = false;
  int m_Connectivity = 0;
  volccl::Algorithm m_Algorithm = volccl::Algorithm::automatic;
  volccl::Backend m_Backend = volccl::Backend::automatic;
  LabelType m_ObjectCount = 0;
  volccl::LabelResult m_LabelResult;
};

}  // namespace itk

#ifndef ITK_MANUAL_INSTANTIATION
#include "itkCudaLabelingImageFilterBase.hxx"
#endif
