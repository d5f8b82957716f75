#pragma once

#include <cstdint>
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
    const InputRegionType& region, std::vector<std::uint32_t>& labels,
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
  std::vector<std::uint8_t> foreground(extent.voxel_count());
  ImageRegionConstIterator<InputImageType> in(input, region);
  const InputPixelType zero = NumericTraits<InputPixelType>::ZeroValue();
  if (mask) {
    ImageRegionConstIterator<MaskImageType> inside(mask, region);
    const MaskPixelType outside = NumericTraits<MaskPixelType>::ZeroValue();
    for (std::uint8_t& voxel : foreground) {
      voxel = in.Get() != zero && inside.Get() != outside;
      ++in;
      ++inside;
    }
  } else {
    for (std::uint8_t& voxel : foreground) {
      voxel = in.Get() != zero;
      ++in;
    }
  }
  this->UpdateProgress(0.2f * progress_after);

  volccl::LabelOptions options;
  options.connectivity = ResolvedConnectivity();
  options.algorithm = m_Algorithm;
  options.backend = m_Backend;
  labels.resize(extent.voxel_count());
  try {
    m_LabelResult = moments != nullptr
                        ? volccl::label(foreground.data(), extent, labels.data(), *moments, options)
                        : volccl::label(foreground.data(), extent, labels.data(), options);
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
