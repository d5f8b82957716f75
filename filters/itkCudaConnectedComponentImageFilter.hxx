#pragma once

#include <cstdint>
#include <vector>

#include "itkCudaConnectedComponentImageFilter.h"
#include "itkImageRegionConstIterator.h"
#include "itkImageRegionIterator.h"
#include "volccl/volccl.h"
#include "volcclLabelImage.h"

namespace itk {

template <typename TInputImage, typename TOutputImage, typename TMaskImage>
CudaConnectedComponentImageFilter<TInputImage, TOutputImage,
                                  TMaskImage>::CudaConnectedComponentImageFilter() {
  // #0 the input, required; #1 the mask, optional.
  Self::AddOptionalInputName("MaskImage", 1);
}

template <typename TInputImage, typename TOutputImage, typename TMaskImage>
void CudaConnectedComponentImageFilter<TInputImage, TOutputImage, TMaskImage>::SetAlgorithm(
    volccl::Algorithm algorithm) {
  if (m_Algorithm != algorithm) {
    m_Algorithm = algorithm;
    this->Modified();
  }
}

template <typename TInputImage, typename TOutputImage, typename TMaskImage>
void CudaConnectedComponentImageFilter<TInputImage, TOutputImage, TMaskImage>::SetBackend(
    volccl::Backend backend) {
  if (m_Backend != backend) {
    m_Backend = backend;
    this->Modified();
  }
}

template <typename TInputImage, typename TOutputImage, typename TMaskImage>
int CudaConnectedComponentImageFilter<TInputImage, TOutputImage, TMaskImage>::ResolvedConnectivity()
    const {
  if (m_Connectivity != 0) return m_Connectivity;
  if (ImageDimension == 2) return m_FullyConnected ? 8 : 4;
  return m_FullyConnected ? 26 : 6;
}

template <typename TInputImage, typename TOutputImage, typename TMaskImage>
void CudaConnectedComponentImageFilter<TInputImage, TOutputImage,
                                       TMaskImage>::GenerateInputRequestedRegion() {
  Superclass::GenerateInputRequestedRegion();
  InputImagePointer input = const_cast<InputImageType*>(this->GetInput());
  if (!input) return;
  input->SetRequestedRegion(input->GetLargestPossibleRegion());
  MaskImagePointer mask = const_cast<MaskImageType*>(this->GetMaskImage());
  if (mask) mask->SetRequestedRegion(input->GetLargestPossibleRegion());
}

template <typename TInputImage, typename TOutputImage, typename TMaskImage>
void CudaConnectedComponentImageFilter<TInputImage, TOutputImage,
                                       TMaskImage>::EnlargeOutputRequestedRegion(DataObject*) {
  this->GetOutput()->SetRequestedRegion(this->GetOutput()->GetLargestPossibleRegion());
}

template <typename TInputImage, typename TOutputImage, typename TMaskImage>
void CudaConnectedComponentImageFilter<TInputImage, TOutputImage, TMaskImage>::GenerateData() {
  this->AllocateOutputs();
  const InputImageType* input = this->GetInput();
  const MaskImageType* mask = this->GetMaskImage();
  OutputImageType* output = this->GetOutput();
  const RegionType region = output->GetRequestedRegion();
  const volccl::Extent3 extent{region.GetSize(0), region.GetSize(1),
                               ImageDimension == 3 ? region.GetSize(ImageDimension - 1) : 1};
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
  this->UpdateProgress(0.2f);

  volccl::LabelOptions options;
  options.connectivity = ResolvedConnectivity();
  options.algorithm = m_Algorithm;
  options.backend = m_Backend;
  std::vector<std::uint32_t> labels(extent.voxel_count());
  try {
    m_Moments.clear();
    m_Geometry = volccl::GeometryOf(output);
    m_LabelResult =
        m_ComputeStatistics
            ? volccl::label(foreground.data(), extent, labels.data(), m_Moments, options)
            : volccl::label(foreground.data(), extent, labels.data(), options);
  } catch (const volccl::Error& error) {
    itkExceptionMacro(<< error.what());
  }
  foreground = std::vector<std::uint8_t>();
  this->UpdateProgress(0.8f);

  const LabelType count = m_LabelResult.component_count;
  if (count > static_cast<SizeValueType>(NumericTraits<OutputPixelType>::max())) {
    itkExceptionMacro(<< "Number of objects (" << count
                      << ") greater than maximum of output pixel type ("
                      << static_cast<typename NumericTraits<OutputImagePixelType>::PrintType>(
                             NumericTraits<OutputPixelType>::max())
                      << ").");
  }
  m_ObjectCount = count;

  // ITK numbers the objects 0, 1, 2, ... in raster order, skipping BackgroundValue: from 1 when
  // it is 0, the default. Object k (volccl's label k, from 1) is k - 1, or k from
  // BackgroundValue on.
  const auto background = static_cast<std::int64_t>(m_BackgroundValue);
  ImageRegionIterator<OutputImageType> out(output, region);
  for (const std::uint32_t label : labels) {
    if (label == 0) {
      out.Set(m_BackgroundValue);
    } else {
      const std::int64_t first = std::int64_t{label} - 1;
      out.Set(
          static_cast<OutputPixelType>(background >= 0 && first >= background ? first + 1 : first));
    }
    ++out;
  }
  this->UpdateProgress(1.0f);
}

template <typename TInputImage, typename TOutputImage, typename TMaskImage>
volccl::ComponentShape CudaConnectedComponentImageFilter<TInputImage, TOutputImage,
                                                         TMaskImage>::GetShape(LabelType k) const {
  if (k == 0 || k > m_Moments.size()) {
    itkExceptionMacro(<< "no statistics for object " << k << " (" << m_Moments.size()
                      << " measured; ComputeStatistics is " << m_ComputeStatistics << ")");
  }
  return volccl::describe(m_Moments[k - 1], m_Geometry, ImageDimension);
}

template <typename TInputImage, typename TOutputImage, typename TMaskImage>
void CudaConnectedComponentImageFilter<TInputImage, TOutputImage, TMaskImage>::PrintSelf(
    std::ostream& os, Indent indent) const {
  Superclass::PrintSelf(os, indent);
  os << indent << "FullyConnected: " << m_FullyConnected << std::endl;
  os << indent << "Connectivity: " << m_Connectivity << " (resolved: " << ResolvedConnectivity()
     << ")" << std::endl;
  os << indent << "ObjectCount: " << m_ObjectCount << std::endl;
  os << indent << "BackgroundValue: "
     << static_cast<typename NumericTraits<OutputImagePixelType>::PrintType>(m_BackgroundValue)
     << std::endl;
  os << indent << "Algorithm: " << volccl::to_string(m_Algorithm) << std::endl;
  os << indent << "Backend: " << volccl::to_string(m_Backend) << std::endl;
  os << indent << "ComputeStatistics: " << m_ComputeStatistics << std::endl;
}

}  // namespace itk
