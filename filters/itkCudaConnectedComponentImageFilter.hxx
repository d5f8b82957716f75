#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

#include "itkCudaConnectedComponentImageFilter.h"
#include "itkImageRegionIterator.h"
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
  // With BackgroundValue 0, ITK's numbering is volccl's: a uint32 output is labeled in place.
  const std::size_t voxels = region.GetNumberOfPixels();
  const bool whole_buffer = output->GetBufferedRegion() == region;
  std::uint32_t* labels = nullptr;
  if constexpr (std::is_same<OutputPixelType, std::uint32_t>::value) {
    if (m_BackgroundValue == 0 && whole_buffer) labels = output->GetBufferPointer();
  }
  std::unique_ptr<std::uint32_t[]> converted_labels;
  if (labels == nullptr) {
    converted_labels.reset(new std::uint32_t[voxels]);
    labels = converted_labels.get();
  }
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
                                         static_cast<std::uint32_t>(m_OriginalNumberOfObjects),
                                         relabeling, m_ComputeStatistics ? &m_Moments : nullptr));
  }

  const LabelType objects = this->GetObjectCount();
  if (objects > static_cast<SizeValueType>(NumericTraits<OutputPixelType>::max())) {
    itkExceptionMacro(<< "Number of objects (" << objects
                      << ") greater than maximum of output pixel type ("
                      << static_cast<typename NumericTraits<OutputImagePixelType>::PrintType>(
                             NumericTraits<OutputPixelType>::max())
                      << ").");
  }

  // ITK numbers the objects 0, 1, 2, ... in raster order, skipping BackgroundValue: from 1 when
  // it is 0, the default. Object k (volccl's label k, from 1) is k - 1, or k from
  // BackgroundValue on.
  if (converted_labels) {
    const auto background = static_cast<std::int64_t>(m_BackgroundValue);
    const OutputPixelType background_value = m_BackgroundValue;
    const auto itk_number = [background, background_value](std::uint32_t label) {
      if (label == 0) return background_value;
      const std::int64_t first = std::int64_t{label} - 1;
      return static_cast<OutputPixelType>(background >= 0 && first >= background ? first + 1
                                                                                 : first);
    };
    if (whole_buffer) {
      OutputPixelType* out = output->GetBufferPointer();
      this->ForEachChunk(voxels, [&](std::size_t begin, std::size_t end) {
        for (std::size_t i = begin; i < end; ++i) out[i] = itk_number(labels[i]);
      });
    } else {
      ImageRegionIterator<OutputImageType> out(output, region);
      for (std::size_t i = 0; i < voxels; ++i, ++out) out.Set(itk_number(labels[i]));
    }
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
