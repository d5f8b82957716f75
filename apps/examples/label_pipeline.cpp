// A pipeline to copy: read an image, threshold it, label its connected components with volccl
// (on the GPU when one is usable), write the labels.
//
//   label_pipeline INPUT OUTPUT LOWER [UPPER]
//
// Voxels with LOWER <= value <= UPPER are foreground; the labels are uint32, 0 background and
// 1..N in raster order, as itk::ConnectedComponentImageFilter (FullyConnected on) writes them.
#include <cstdlib>
#include <iostream>
#include <limits>

#include "itkBinaryThresholdImageFilter.h"
#include "itkCudaConnectedComponentImageFilter.h"
#include "itkImage.h"
#include "itkImageFileReader.h"
#include "itkImageFileWriter.h"

int main(int argc, char* argv[]) {
  if (argc < 4 || argc > 5) {
    std::cerr << "usage: " << argv[0] << " INPUT OUTPUT LOWER [UPPER]\n";
    return EXIT_FAILURE;
  }
  using InputImage = itk::Image<float, 3>;
  using MaskImage = itk::Image<unsigned char, 3>;
  using LabelImage = itk::Image<unsigned int, 3>;

  auto reader = itk::ImageFileReader<InputImage>::New();
  reader->SetFileName(argv[1]);

  auto threshold = itk::BinaryThresholdImageFilter<InputImage, MaskImage>::New();
  threshold->SetInput(reader->GetOutput());
  threshold->SetLowerThreshold(std::atof(argv[3]));
  threshold->SetUpperThreshold(argc == 5 ? std::atof(argv[4]) : std::numeric_limits<float>::max());
  threshold->SetInsideValue(1);
  threshold->SetOutsideValue(0);

  // The one line that differs from a plain ITK pipeline: CudaConnectedComponentImageFilter
  // instead of ConnectedComponentImageFilter.
  auto components = itk::CudaConnectedComponentImageFilter<MaskImage, LabelImage>::New();
  components->SetInput(threshold->GetOutput());
  components->SetFullyConnected(true);

  auto writer = itk::ImageFileWriter<LabelImage>::New();
  writer->SetInput(components->GetOutput());
  writer->SetFileName(argv[2]);
  try {
    writer->Update();
  } catch (const itk::ExceptionObject& error) {
    std::cerr << error << '\n';
    return EXIT_FAILURE;
  }
  std::cout << components->GetObjectCount() << " components ("
            << volccl::to_string(components->GetLabelResult().algorithm_used) << " on "
            << volccl::to_string(components->GetLabelResult().backend_used) << ", "
            << components->GetLabelResult().timings.total_ms << " ms)\n";
  return EXIT_SUCCESS;
}
