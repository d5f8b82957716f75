#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <type_traits>
#include <vector>

#include "itkCudaScalarConnectedComponentImageFilter.h"
#include "itkImageRegionConstIterator.h"
#include "volcclLabelImage.h"

namespace volccl::detail {

// A signed type wider than T (of up to 32 bits): its lowest value is none of T's.
template <typename T>
using WiderSigned =
    std::conditional_t<sizeof(T) == 1, std::int16_t,
                       std::conditional_t<sizeof(T) == 2, std::int32_t, std::int64_t>>;

// The first value above the smallest of `values` that is not among them. `values` holds T's
// lowest and highest values but, having fewer elements than T has values, not all of T's.
template <typename T>
T FirstUnusedValue(std::vector<T>& values) {
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  std::size_t i = 0;
  while (values[i + 1] == static_cast<T>(values[i] + 1)) ++i;
  return static_cast<T>(values[i] + 1);
}

}  // namespace volccl::detail

namespace itk {

template <typename TInputImage, typename TOutputImage, typename TMaskImage>
void CudaScalarConnectedComponentImageFilter<TInputImage, TOutputImage,
                                             TMaskImage>::GenerateData() {
  if (m_DistanceThreshold != NumericTraits<InputPixelType>::ZeroValue()) {
    itkExceptionMacro(
        << "DistanceThreshold "
        << static_cast<typename NumericTraits<InputPixelType>::PrintType>(m_DistanceThreshold)
        << " is not supported: volccl joins neighbouring pixels of equal value only "
           "(DistanceThreshold 0); use itk::ScalarConnectedComponentImageFilter for a tolerance");
  }
  this->AllocateOutputs();
  OutputImageType* output = this->GetOutput();
  const RegionType region = output->GetRequestedRegion();
  using Number = typename Superclass::template ObjectNumber<OutputImageType>;
  std::unique_ptr<Number[]> scratch;
  Number* labels = this->ObjectNumberBuffer(output, region, m_BackgroundValue, scratch);
  LabelValues(region, labels);
  this->WriteObjectNumbers(output, region, labels, m_BackgroundValue);
  this->UpdateProgress(1.0f);
}

template <typename TInputImage, typename TOutputImage, typename TMaskImage>
template <typename TLabel>
void CudaScalarConnectedComponentImageFilter<TInputImage, TOutputImage, TMaskImage>::LabelValues(
    const RegionType& region, TLabel* labels) {
  using Fixed = volccl::detail::FixedWidthOf<InputPixelType>;
  const InputImageType* input = this->GetInput();
  const MaskImageType* mask = this->MaskCovering(region);
  const std::size_t count = region.GetNumberOfPixels();

  // The pixels in raster order: the input's buffer, or a copy of the region.
  const Fixed* values = reinterpret_cast<const Fixed*>(input->GetBufferPointer());
  std::unique_ptr<Fixed[]> gathered;
  if (input->GetBufferedRegion() != region) {
    gathered.reset(new Fixed[count]);
    ImageRegionConstIterator<InputImageType> in(input, region);
    for (std::size_t i = 0; i < count; ++i, ++in) gathered[i] = static_cast<Fixed>(in.Get());
    values = gathered.get();
  }
  // Where the mask is 0: ITK leaves those pixels unlabeled.
  std::unique_ptr<std::uint8_t[]> outside;
  if (mask) {
    outside.reset(new std::uint8_t[count]);
    const MaskPixelType zero = NumericTraits<MaskPixelType>::ZeroValue();
    if (mask->GetBufferedRegion() == region) {
      const MaskPixelType* inside = mask->GetBufferPointer();
      this->ForEachChunk(count, [&](std::size_t begin, std::size_t end) {
        for (std::size_t i = begin; i < end; ++i) outside[i] = inside[i] == zero;
      });
    } else {
      ImageRegionConstIterator<MaskImageType> inside(mask, region);
      for (std::size_t i = 0; i < count; ++i, ++inside) outside[i] = inside.Get() == zero;
    }
  }
  const auto labeled = [&outside](std::size_t i) { return !outside || !outside[i]; };

  // The extremes of the labeled values, to find a value none of them holds.
  constexpr Fixed lowest = std::numeric_limits<Fixed>::lowest();
  constexpr Fixed highest = std::numeric_limits<Fixed>::max();
  Fixed low = highest;
  Fixed high = lowest;
  bool any = false;
  std::mutex merge;
  this->ForEachChunk(count, [&](std::size_t begin, std::size_t end) {
    Fixed chunk_low = highest;
    Fixed chunk_high = lowest;
    bool chunk_any = false;
    for (std::size_t i = begin; i < end; ++i) {
      if (!labeled(i)) continue;
      chunk_any = true;
      chunk_low = std::min(chunk_low, values[i]);
      chunk_high = std::max(chunk_high, values[i]);
    }
    const std::lock_guard<std::mutex> lock(merge);
    any = any || chunk_any;
    low = std::min(low, chunk_low);
    high = std::max(high, chunk_high);
  });
  this->UpdateProgress(0.2f);

  // Labels the values as a label map of Value pixels whose unlabeled value is `background`:
  // the pixels themselves when they are already that, else a copy with masked-out pixels
  // `background`.
  const auto label_as = [&](auto background) {
    using Value = decltype(background);
    const Value* map = nullptr;
    std::unique_ptr<Value[]> copy;
    if constexpr (std::is_same<Value, Fixed>::value) {
      if (!outside) map = values;
    }
    if (map == nullptr) {
      copy.reset(new Value[count]);
      this->ForEachChunk(count, [&](std::size_t begin, std::size_t end) {
        for (std::size_t i = begin; i < end; ++i) {
          copy[i] = labeled(i) ? static_cast<Value>(values[i]) : background;
        }
      });
      map = copy.get();
    }
    this->LabelWithVolccl(volccl::LabelInput::values(map, background), region, labels, nullptr,
                          0.8f);
  };
  if (!any) {
    label_as(Fixed{0});
  } else if (low != lowest) {
    label_as(static_cast<Fixed>(low - 1));
  } else if (high != highest) {
    label_as(static_cast<Fixed>(high + 1));
  } else if constexpr (sizeof(Fixed) < 8) {
    label_as(std::numeric_limits<volccl::detail::WiderSigned<Fixed>>::lowest());
  } else {
    std::vector<Fixed> present;
    present.reserve(count);
    for (std::size_t i = 0; i < count; ++i) {
      if (labeled(i)) present.push_back(values[i]);
    }
    label_as(volccl::detail::FirstUnusedValue(present));
  }
}

template <typename TInputImage, typename TOutputImage, typename TMaskImage>
void CudaScalarConnectedComponentImageFilter<TInputImage, TOutputImage, TMaskImage>::PrintSelf(
    std::ostream& os, Indent indent) const {
  Superclass::PrintSelf(os, indent);
  os << indent << "DistanceThreshold: "
     << static_cast<typename NumericTraits<InputPixelType>::PrintType>(m_DistanceThreshold)
     << std::endl;
  os << indent << "BackgroundValue: "
     << static_cast<typename NumericTraits<OutputImagePixelType>::PrintType>(m_BackgroundValue)
     << std::endl;
}

}  // namespace itk
