#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "itkCudaLabelingImageFilterBase.h"
#include "itkImageRegionConstIterator.h"
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
void CudaLabelingImageFilterBase<TInputImage, TOutputImage, TMaskImage>::Label(
    const InputRegionType& region, std::uint32_t* labels,
    std::vector<volccl::ComponentMoments>* moments, float progress_after) {
  const InputImageType* input = this->GetInput();
  const MaskImageType* mask = this->GetMaskImage();
  const volccl::Extent3 extent{region.GetSize(0), region.GetSize(1),
                               InputImageDimension == 3 ? region.GetSize(2) : 1};
  if (mask && !mask->GetBufferedRegion().IsInside(region)) {
    itkExceptionMacro(<< "the mask's buffered region " << mask->GetBufferedRegion()
                      << " does not cover the input's region " << region);
  }

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

  volccl::LabelOptions options;
  options.connectivity = ResolvedConnectivity();
  options.algorithm = m_Algorithm;
  options.backend = m_Backend;
  try {
    m_LabelResult = moments != nullptr
                        ? volccl::label(foreground.get(), extent, labels, *moments, options)
                        : volccl::label(foreground.get(), extent, labels, options);
  } catch (const volccl::Error& error) {
    itkExceptionMacro(<< error.what());
  }
  m_ObjectCount = m_LabelResult.component_count;
  this->UpdateProgress(progress_after);
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
