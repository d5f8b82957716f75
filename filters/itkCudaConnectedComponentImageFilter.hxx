#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "itkCudaConnectedComponentImageFilter.h"
#include "volccl/relabel.h"
#include "volcclLabelImage.h"

namespace itk {

template <typename TInputImage, typename TOutputImage, typename TMaskImage>
void CudaConnectedComponentImageFilter<TInputImage, TOutputImage, TMaskImage>::GenerateData() {
  this->AllocateOutputs();
  OutputImageType* output = this->GetOutput();
  const RegionType region = output->GetRequestedRegion();
  m_Moments.clear();
  m_Geometry = volccl::GeometryOf(output);
  using Number = typename Superclass::template ObjectNumber<OutputImageType>;
  std::unique_ptr<Number[]> scratch;
  Number* labels = this->ObjectNumberBuffer(output, region, m_BackgroundValue, scratch);
  this->Label(region, labels, m_ComputeStatistics ? &m_Moments : nullptr, 0.8f);
  m_OriginalNumberOfObjects = this->GetObjectCount();
  volccl::RelabelOptions relabeling;
  relabeling.minimum_size = m_MinimumObjectSize;
  relabeling.keep_largest = static_cast<std::uint32_t>(m_NumberOfObjectsToKeep);
  relabeling.sort_by_size = m_SortByObjectSize;
  if (volccl::relabels(relabeling)) {
    const volccl::Extent3 extent{region.GetSize(0), region.GetSize(1),
                                 ImageDimension == 3 ? region.GetSize(ImageDimension - 1) : 1};
    this->SetObjectCount(volccl::relabel(labels, extent,
                                         static_cast<Number>(m_OriginalNumberOfObjects), relabeling,
                                         m_ComputeStatistics ? &m_Moments : nullptr));
  }
  this->WriteObjectNumbers(output, region, labels, m_BackgroundValue);
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
