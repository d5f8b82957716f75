#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "itkCudaConnectedComponentImageFilter.h"
#include "itkImageRegionIterator.h"
#include "volcclLabelImage.h"

namespace itk {

template <typename TInputImage, typename TOutputImage, typename TMaskImage>
void CudaConnectedComponentImageFilter<TInputImage, TOutputImage, TMaskImage>::GenerateData() {
  this->AllocateOutputs();
  OutputImageType* output = this->GetOutput();
  const RegionType region = output->GetRequestedRegion();
  m_Moments.clear();
  m_Geometry = volccl::GeometryOf(output);
  std::vector<std::uint32_t> labels;
  this->Label(region, labels, m_ComputeStatistics ? &m_Moments : nullptr, 0.8f);
  m_OriginalNumberOfObjects = this->GetObjectCount();
  const bool relabel = m_MinimumObjectSize > 0 || m_SortByObjectSize || m_NumberOfObjectsToKeep > 0;
  const std::vector<std::uint32_t> renumbering =
      relabel ? Renumbering(labels) : std::vector<std::uint32_t>();

  const LabelType count = this->GetObjectCount();
  if (count > static_cast<SizeValueType>(NumericTraits<OutputPixelType>::max())) {
    itkExceptionMacro(<< "Number of objects (" << count
                      << ") greater than maximum of output pixel type ("
                      << static_cast<typename NumericTraits<OutputImagePixelType>::PrintType>(
                             NumericTraits<OutputPixelType>::max())
                      << ").");
  }

  // ITK numbers the objects 0, 1, 2, ... in raster order, skipping BackgroundValue: from 1 when
  // it is 0, the default. Object k (volccl's label k, from 1) is k - 1, or k from
  // BackgroundValue on.
  const auto background = static_cast<std::int64_t>(m_BackgroundValue);
  ImageRegionIterator<OutputImageType> out(output, region);
  for (std::uint32_t label : labels) {
    if (relabel) label = renumbering[label];
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
std::vector<std::uint32_t>
CudaConnectedComponentImageFilter<TInputImage, TOutputImage, TMaskImage>::Renumbering(
    const std::vector<std::uint32_t>& labels) {
  const std::uint32_t count = static_cast<std::uint32_t>(m_OriginalNumberOfObjects);
  std::vector<SizeValueType> sizes(count + 1, 0);
  for (const std::uint32_t label : labels) ++sizes[label];
  std::vector<std::uint32_t> kept;  // volccl's labels, in the new order
  for (std::uint32_t label = 1; label <= count; ++label) {
    if (sizes[label] >= m_MinimumObjectSize) kept.push_back(label);
  }
  const auto larger = [&](std::uint32_t a, std::uint32_t b) {
    return sizes[a] > sizes[b] || (sizes[a] == sizes[b] && a < b);
  };
  if (m_NumberOfObjectsToKeep > 0 && kept.size() > m_NumberOfObjectsToKeep) {
    std::vector<std::uint32_t> largest = kept;
    std::nth_element(largest.begin(), largest.begin() + (m_NumberOfObjectsToKeep - 1),
                     largest.end(), larger);
    const std::uint32_t last = largest[m_NumberOfObjectsToKeep - 1];
    kept.erase(std::remove_if(kept.begin(), kept.end(),
                              [&](std::uint32_t label) { return larger(last, label); }),
               kept.end());
  }
  if (m_SortByObjectSize) std::sort(kept.begin(), kept.end(), larger);

  std::vector<std::uint32_t> renumbering(count + 1, 0);
  std::vector<volccl::ComponentMoments> moments;
  for (std::size_t k = 0; k < kept.size(); ++k) {
    renumbering[kept[k]] = static_cast<std::uint32_t>(k + 1);
    if (!m_Moments.empty()) moments.push_back(m_Moments[kept[k] - 1]);
  }
  if (!m_Moments.empty()) m_Moments = std::move(moments);
  this->SetObjectCount(kept.size());
  return renumbering;
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
  os << indent << "BackgroundValue: "
     << static_cast<typename NumericTraits<OutputImagePixelType>::PrintType>(m_BackgroundValue)
     << std::endl;
  os << indent << "MinimumObjectSize: " << m_MinimumObjectSize << std::endl;
  os << indent << "SortByObjectSize: " << m_SortByObjectSize << std::endl;
  os << indent << "NumberOfObjectsToKeep: " << m_NumberOfObjectsToKeep << std::endl;
  os << indent << "OriginalNumberOfObjects: " << m_OriginalNumberOfObjects << std::endl;
  os << indent << "ComputeStatistics: " << m_ComputeStatistics << std::endl;
}

}  // namespace itk
