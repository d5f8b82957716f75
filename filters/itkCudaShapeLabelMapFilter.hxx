#pragma once

#include <cstdint>
#include <vector>

#include "itkCudaShapeLabelMapFilter.h"
#include "itkProgressAccumulator.h"

namespace itk {

template <typename TInputImage, typename TMaskImage>
CudaShapeLabelMapFilter<TInputImage, TMaskImage>::CudaShapeLabelMapFilter() {
  Self::AddOptionalInputName("MaskImage", 1);
}

template <typename TInputImage, typename TMaskImage>
void CudaShapeLabelMapFilter<TInputImage, TMaskImage>::SetAlgorithm(volccl::Algorithm algorithm) {
  if (m_Algorithm != algorithm) {
    m_Algorithm = algorithm;
    this->Modified();
  }
}

template <typename TInputImage, typename TMaskImage>
void CudaShapeLabelMapFilter<TInputImage, TMaskImage>::SetBackend(volccl::Backend backend) {
  if (m_Backend != backend) {
    m_Backend = backend;
    this->Modified();
  }
}

template <typename TInputImage, typename TMaskImage>
void CudaShapeLabelMapFilter<TInputImage, TMaskImage>::GenerateInputRequestedRegion() {
  Superclass::GenerateInputRequestedRegion();
  InputImagePointer input = const_cast<InputImageType*>(this->GetInput());
  if (!input) return;
  input->SetRequestedRegion(input->GetLargestPossibleRegion());
  MaskImagePointer mask = const_cast<MaskImageType*>(this->GetMaskImage());
  if (mask) mask->SetRequestedRegion(input->GetLargestPossibleRegion());
}

template <typename TInputImage, typename TMaskImage>
void CudaShapeLabelMapFilter<TInputImage, TMaskImage>::EnlargeOutputRequestedRegion(DataObject*) {
  this->GetOutput()->SetRequestedRegion(this->GetOutput()->GetLargestPossibleRegion());
}

template <typename TInputImage, typename TMaskImage>
void CudaShapeLabelMapFilter<TInputImage, TMaskImage>::GenerateData() {
  this->AllocateOutputs();
  OutputImageType* output = this->GetOutput();
  output->SetBackgroundValue(0);
  output->ClearLabels();

  // The labeling and the moments, by the image filter on the same input.
  using LabelImageType = Image<std::uint32_t, ImageDimension>;
  using Labeler = CudaConnectedComponentImageFilter<InputImageType, LabelImageType, MaskImageType>;
  auto labeler = Labeler::New();
  labeler->SetInput(this->GetInput());
  if (this->GetMaskImage()) labeler->SetMaskImage(this->GetMaskImage());
  labeler->SetFullyConnected(m_FullyConnected);
  labeler->SetConnectivity(m_Connectivity);
  labeler->SetAlgorithm(m_Algorithm);
  labeler->SetBackend(m_Backend);
  labeler->ComputeStatisticsOn();
  auto progress = ProgressAccumulator::New();
  progress->SetMiniPipelineFilter(this);
  progress->RegisterInternalFilter(labeler, 0.8f);
  labeler->Update();
  m_LabelResult = labeler->GetLabelResult();
  m_ObjectCount = labeler->GetObjectCount();

  std::vector<typename LabelObjectType::Pointer> objects(m_ObjectCount);
  for (LabelType k = 1; k <= m_ObjectCount; ++k) {
    auto object = LabelObjectType::New();
    object->SetLabel(k);
    const volccl::ComponentShape shape = labeler->GetShape(k);
    object->SetNumberOfPixels(shape.count);
    object->SetPhysicalSize(shape.physical_size);
    typename LabelObjectType::CentroidType centroid;
    typename LabelObjectType::VectorType moments;
    typename LabelObjectType::MatrixType axes;
    typename LabelObjectType::RegionType::IndexType first;
    typename LabelObjectType::RegionType::SizeType size;
    const auto start = this->GetInput()->GetLargestPossibleRegion().GetIndex();
    for (unsigned i = 0; i < ImageDimension; ++i) {
      centroid[i] = shape.centroid[i];
      moments[i] = shape.principal_moments[i];
      first[i] = start[i] + shape.bounding_box_min[i];
      size[i] = shape.bounding_box_max[i] - shape.bounding_box_min[i] + 1;
      for (unsigned j = 0; j < ImageDimension; ++j) axes(i, j) = shape.principal_axes[3 * i + j];
    }
    object->SetCentroid(centroid);
    object->SetPrincipalMoments(moments);
    object->SetPrincipalAxes(axes);
    object->SetBoundingBox(typename LabelObjectType::RegionType(first, size));
    objects[k - 1] = object;
  }

  // The lines: the runs of each label along x.
  const LabelImageType* labels = labeler->GetOutput();
  const RegionType region = labels->GetBufferedRegion();
  const std::uint32_t* voxel = labels->GetBufferPointer();
  const SizeValueType width = region.GetSize(0);
  const SizeValueType rows = region.GetNumberOfPixels() / width;
  for (SizeValueType row = 0; row < rows; ++row, voxel += width) {
    typename RegionType::IndexType index = region.GetIndex();
    SizeValueType rest = row;
    for (unsigned i = 1; i < ImageDimension; ++i) {
      index[i] += static_cast<IndexValueType>(rest % region.GetSize(i));
      rest /= region.GetSize(i);
    }
    for (SizeValueType x = 0; x < width;) {
      SizeValueType end = x + 1;
      while (end < width && voxel[end] == voxel[x]) ++end;
      if (voxel[x] != 0) {
        typename RegionType::IndexType line = index;
        line[0] += static_cast<IndexValueType>(x);
        objects[voxel[x] - 1]->AddLine(line, end - x);
      }
      x = end;
    }
  }
  for (auto& object : objects) output->AddLabelObject(object);
}

template <typename TInputImage, typename TMaskImage>
void CudaShapeLabelMapFilter<TInputImage, TMaskImage>::PrintSelf(std::ostream& os,
                                                                 Indent indent) const {
  Superclass::PrintSelf(os, indent);
  os << indent << "FullyConnected: " << m_FullyConnected << std::endl;
  os << indent << "Connectivity: " << m_Connectivity << std::endl;
  os << indent << "Algorithm: " << volccl::to_string(m_Algorithm) << std::endl;
  os << indent << "Backend: " << volccl::to_string(m_Backend) << std::endl;
  os << indent << "ObjectCount: " << m_ObjectCount << std::endl;
}

}  // namespace itk
