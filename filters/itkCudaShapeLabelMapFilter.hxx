#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "itkCudaShapeLabelMapFilter.h"
#include "volcclLabelImage.h"

namespace itk {

template <typename TInputImage, typename TMaskImage>
void CudaShapeLabelMapFilter<TInputImage, TMaskImage>::GenerateData() {
  this->AllocateOutputs();
  OutputImageType* output = this->GetOutput();
  output->SetBackgroundValue(0);
  output->ClearLabels();
  const InputImageType* input = this->GetInput();
  const InputRegionType region = input->GetRequestedRegion();
  const std::unique_ptr<std::uint32_t[]> labels(new std::uint32_t[region.GetNumberOfPixels()]);
  std::vector<volccl::ComponentMoments> moments;
  this->Label(region, labels.get(), &moments, 0.8f);
  const volccl::ImageGeometry geometry = volccl::GeometryOf(input);

  std::vector<typename LabelObjectType::Pointer> objects(moments.size());
  for (LabelType k = 1; k <= moments.size(); ++k) {
    const volccl::ComponentShape shape = volccl::describe(moments[k - 1], geometry, ImageDimension);
    auto object = LabelObjectType::New();
    object->SetLabel(k);
    object->SetNumberOfPixels(shape.count);
    object->SetPhysicalSize(shape.physical_size);
    typename LabelObjectType::CentroidType centroid;
    typename LabelObjectType::VectorType principal_moments;
    typename LabelObjectType::MatrixType axes;
    typename InputRegionType::IndexType first;
    typename InputRegionType::SizeType size;
    for (unsigned i = 0; i < ImageDimension; ++i) {
      centroid[i] = shape.centroid[i];
      principal_moments[i] = shape.principal_moments[i];
      first[i] = region.GetIndex(i) + shape.bounding_box_min[i];
      size[i] = shape.bounding_box_max[i] - shape.bounding_box_min[i] + 1;
      for (unsigned j = 0; j < ImageDimension; ++j) axes(i, j) = shape.principal_axes[3 * i + j];
    }
    object->SetCentroid(centroid);
    object->SetPrincipalMoments(principal_moments);
    object->SetPrincipalAxes(axes);
    object->SetBoundingBox(InputRegionType(first, size));
    objects[k - 1] = object;
  }

  // The lines: the runs of each label along x.
  const SizeValueType width = region.GetSize(0);
  const SizeValueType rows = region.GetNumberOfPixels() / width;
  const std::uint32_t* voxel = labels.get();
  for (SizeValueType row = 0; row < rows; ++row, voxel += width) {
    typename InputRegionType::IndexType index = region.GetIndex();
    SizeValueType rest = row;
    for (unsigned i = 1; i < ImageDimension; ++i) {
      index[i] += static_cast<IndexValueType>(rest % region.GetSize(i));
      rest /= region.GetSize(i);
    }
    for (SizeValueType x = 0; x < width;) {
      SizeValueType end = x + 1;
      while (end < width && voxel[end] == voxel[x]) ++end;
      if (voxel[x] != 0) {
        typename InputRegionType::IndexType line = index;
        line[0] += static_cast<IndexValueType>(x);
        objects[voxel[x] - 1]->AddLine(line, end - x);
      }
      x = end;
    }
  }
  for (auto& object : objects) output->AddLabelObject(object);
  this->UpdateProgress(1.0f);
}

}  // namespace itk
