#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

#include "itkCudaLabelingImageFilterBase.h"
#include "itkImageRegionConstIterator.h"
#include "itkImageRegionIterator.h"
#include "volccl/volccl.h"

namespace itk {

template <typename TInputImage, typename TOutputImage, typename TMaskImage>
int CudaLabelingImageFilterBase<TInputImage, TOutputImage, TMaskImage>::ResolvedConnectivity()
    const {
  if (m_Connectivity != 0) return m_Connectivity;
  if (InputImageDimension == 2) return m_FullyConnected ? 8 : 4;
  return m_FullyConnected ? 26 : 6;
}

template <typename TInputImage, typename TOutputImage, typename TMaskImage>
void CudaLabelingImageFilterBase<TInputImage, TOutputImage,
                                 TMaskImage>::GenerateInputRequestedRegion() {
  Superclass::GenerateInputRequestedRegion();
  InputImagePointer input = const_cast<InputImageType*>(this->GetInput());
  if (!input) return;
  input->SetRequestedRegion(input->GetLargestPossibleRegion());
  MaskImagePointer mask = const_cast<MaskImageType*>(this->GetMaskImage());
  if (mask) mask->SetRequestedRegion(input->GetLargestPossibleRegion());
}

template <typename TInputImage, typename TOutputImage, typename TMaskImage>
void CudaLabelingImageFilterBase<TInputImage, TOutputImage,
                                 TMaskImage>::EnlargeOutputRequestedRegion(DataObject*) {
  this->GetOutput()->SetRequestedRegion(this->GetOutput()->GetLargestPossibleRegion());
}

template <typename TInputImage, typename TOutputImage, typename TMaskImage>
template <typename TLabel>
void CudaLabelingImageFilterBase<TInputImage, TOutputImage, TMaskImage>::Label(
    const InputRegionType& region, TLabel* labels, std::vector<volccl::ComponentMoments>* moments,
    float progress_after) {
  const InputImageType* input = this->GetInput();
  const MaskImageType* mask = MaskCovering(region);
  const volccl::Extent3 extent{region.GetSize(0), region.GetSize(1),
                               InputImageDimension == 3 ? region.GetSize(2) : 1};

  // Foreground as ConnectedComponentImageFilter has it: non-zero input where the mask is
  // non-zero (its MaskImageFilter sets the rest to zero).
  const std::size_t count = extent.voxel_count();
  const std::unique_ptr<std::uint8_t[]> foreground(new std::uint8_t[count]);
  const InputPixelType zero = NumericTraits<InputPixelType>::ZeroValue();
  const MaskPixelType outside = NumericTraits<MaskPixelType>::ZeroValue();
  const bool whole_buffers =
      input->GetBufferedRegion() == region && (!mask || mask->GetBufferedRegion() == region);
  if (whole_buffers) {  // the usual case: the buffers in raster order, on every thread
    const InputPixelType* values = input->GetBufferPointer();
    const MaskPixelType* inside = mask ? mask->GetBufferPointer() : nullptr;
    ForEachChunk(count, [&](std::size_t begin, std::size_t end) {
      for (std::size_t i = begin; i < end; ++i) {
        foreground[i] = values[i] != zero && (!inside || inside[i] != outside);
      }
    });
  } else {
    ImageRegionConstIterator<InputImageType> in(input, region);
    if (mask) {
      ImageRegionConstIterator<MaskImageType> inside(mask, region);
      for (std::size_t i = 0; i < count; ++i, ++in, ++inside) {
        foreground[i] = in.Get() != zero && inside.Get() != outside;
      }
    } else {
      for (std::size_t i = 0; i < count; ++i, ++in) foreground[i] = in.Get() != zero;
    }
  }
  this->UpdateProgress(0.2f * progress_after);
  LabelWithVolccl(volccl::LabelInput::binary(foreground.get()), region, labels, moments,
                  progress_after);
}

template <typename TInputImage, typename TOutputImage, typename TMaskImage>
template <typename TLabel>
void CudaLabelingImageFilterBase<TInputImage, TOutputImage, TMaskImage>::LabelWithVolccl(
    const volccl::LabelInput& input, const InputRegionType& region, TLabel* labels,
    std::vector<volccl::ComponentMoments>* moments, float progress_after) {
  const volccl::Extent3 extent{region.GetSize(0), region.GetSize(1),
                               InputImageDimension == 3 ? region.GetSize(2) : 1};
  volccl::LabelOptions options;
  options.connectivity = ResolvedConnectivity();
  options.algorithm = m_Algorithm;
  options.backend = m_Backend;
  try {
    m_LabelResult = moments != nullptr ? volccl::label(input, extent, labels, *moments, options)
                                       : volccl::label(input, extent, labels, options);
  } catch (const volccl::Error& error) {
    itkExceptionMacro(<< error.what());
  }
  m_ObjectCount = m_LabelResult.component_count;
  this->UpdateProgress(progress_after);
}

template <typename TInputImage, typename TOutputImage, typename TMaskImage>
auto CudaLabelingImageFilterBase<TInputImage, TOutputImage, TMaskImage>::MaskCovering(
    const InputRegionType& region) const -> const MaskImageType* {
  const MaskImageType* mask = this->GetMaskImage();
  if (mask && !mask->GetBufferedRegion().IsInside(region)) {
    itkExceptionMacro(<< "the mask's buffered region " << mask->GetBufferedRegion()
                      << " does not cover the input's region " << region);
  }
  return mask;
}

template <typename TInputImage, typename TOutputImage, typename TMaskImage>
template <typename TOutput>
auto CudaLabelingImageFilterBase<TInputImage, TOutputImage, TMaskImage>::ObjectNumberBuffer(
    TOutput* output, const typename TOutput::RegionType& region,
    typename TOutput::PixelType background, std::unique_ptr<ObjectNumber<TOutput>[]>& scratch)
    -> ObjectNumber<TOutput>* {
  if constexpr (std::is_same<typename TOutput::PixelType, ObjectNumber<TOutput>>::value) {
    if (background == 0 && output->GetBufferedRegion() == region) {
      return output->GetBufferPointer();
    }
  }
  scratch.reset(new ObjectNumber<TOutput>[region.GetNumberOfPixels()]);
  return scratch.get();
}

template <typename TInputImage, typename TOutputImage, typename TMaskImage>
template <typename TOutput, typename TLabel>
void CudaLabelingImageFilterBase<TInputImage, TOutputImage, TMaskImage>::WriteObjectNumbers(
    TOutput* output, const typename TOutput::RegionType& region, const TLabel* labels,
    typename TOutput::PixelType background) {
  using OutputPixelType = typename TOutput::PixelType;
  if (m_ObjectCount > static_cast<SizeValueType>(NumericTraits<OutputPixelType>::max())) {
    itkExceptionMacro(<< "Number of objects (" << m_ObjectCount
                      << ") greater than maximum of output pixel type ("
                      << static_cast<typename NumericTraits<OutputPixelType>::PrintType>(
                             NumericTraits<OutputPixelType>::max())
                      << ").");
  }
  const bool whole_buffer = output->GetBufferedRegion() == region;
  if (whole_buffer && static_cast<const void*>(labels) == output->GetBufferPointer()) return;

  // ITK numbers the objects 0, 1, 2, ... in raster order, skipping BackgroundValue: from 1 when
  // it is 0, the default. Object k (volccl's label k, from 1) is k - 1, or k from
  // BackgroundValue on.
  const auto skipped = static_cast<std::int64_t>(background);
  const auto itk_number = [skipped, background](TLabel label) {
    if (label == 0) return background;
    const auto first = static_cast<std::int64_t>(label - 1);
    return static_cast<OutputPixelType>(skipped >= 0 && first >= skipped ? first + 1 : first);
  };
  const std::size_t voxels = region.GetNumberOfPixels();
  if (whole_buffer) {
    OutputPixelType* out = output->GetBufferPointer();
    ForEachChunk(voxels, [&](std::size_t begin, std::size_t end) {
      for (std::size_t i = begin; i < end; ++i) out[i] = itk_number(labels[i]);
    });
  } else {
    ImageRegionIterator<TOutput> out(output, region);
    for (std::size_t i = 0; i < voxels; ++i, ++out) out.Set(itk_number(labels[i]));
  }
}

template <typename TInputImage, typename TOutputImage, typename TMaskImage>
void CudaLabelingImageFilterBase<TInputImage, TOutputImage, TMaskImage>::PrintSelf(
    std::ostream& os, Indent indent) const {
  Superclass::PrintSelf(os, indent);
  os << indent << "FullyConnected: " << m_FullyConnected << std::endl;
  os << indent << "Connectivity: " << m_Connectivity << " (resolved: " << ResolvedConnectivity()
     << ")" << std::endl;
  os << indent << "ObjectCount: " << m_ObjectCount << std::endl;
  os << indent << "Algorithm: " << volccl::to_string(m_Algorithm) << std::endl;
  os << indent << "Backend: " << volccl::to_string(m_Backend) << std::endl;
}

}  // namespace itk
