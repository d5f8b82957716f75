// volccl-itk-bench: itk::CudaConnectedComponentImageFilter against
// itk::ConnectedComponentImageFilter in the same process, on the same images: the OASIS-1 brain
// (Otsu-binarized as the tests and `volccl bench` do) and a random 512^3 volume (density
// 30 %, granularity 1), FullyConnected off and on, on the CPU backend and on CUDA when a device
// is usable. Each timing is the median of --runs Update() calls of a filter whose input was
// marked modified: the whole filter, foreground extraction and output conversion included.
//
//   volccl-itk-bench [--data DIR] [--runs N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "itkConnectedComponentImageFilter.h"
#include "itkCudaConnectedComponentImageFilter.h"
#include "itkImage.h"
#include "itkImageFileReader.h"
#include "volccl/data/generators.h"
#include "volccl/volccl.h"
#include "volcclOtsuForeground.h"

namespace {

using MaskImage = itk::Image<unsigned char, 3>;
using LabelImage = itk::Image<unsigned int, 3>;

MaskImage::Pointer otsu_mask(const std::string& path) {
  using Intensity = itk::Image<float, 3>;
  auto reader = itk::ImageFileReader<Intensity>::New();
  reader->SetFileName(path);
  reader->Update();
  return volccl::OtsuForeground(reader->GetOutput());
}

MaskImage::Pointer random_mask() {
  const volccl::data::Volume volume = volccl::data::random_granular({512, 512, 512}, 0.3, 1, 3);
  auto mask = MaskImage::New();
  mask->SetRegions(MaskImage::SizeType{{512, 512, 512}});
  mask->Allocate();
  std::copy(volume.voxels.begin(), volume.voxels.end(), mask->GetBufferPointer());
  return mask;
}

// The median milliseconds of `runs` updates of `filter`, its input modified before each.
template <class Filter>
double median_update_ms(Filter* filter, MaskImage* input, int runs) {
  std::vector<double> times;
  for (int run = -1; run < runs; ++run) {  // one warm-up
    input->Modified();
    const auto start = std::chrono::steady_clock::now();
    filter->Update();
    const std::chrono::duration<double, std::milli> elapsed =
        std::chrono::steady_clock::now() - start;
    if (run >= 0) times.push_back(elapsed.count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

void compare(const char* name, MaskImage* mask, int runs) {
  for (bool fully_connected : {false, true}) {
    auto itk_filter = itk::ConnectedComponentImageFilter<MaskImage, LabelImage>::New();
    itk_filter->SetInput(mask);
    itk_filter->SetFullyConnected(fully_connected);
    const double itk_ms = median_update_ms(itk_filter.GetPointer(), mask, runs);
    std::printf("%-14s %-6s %-28s %10.2f ms  %8lu objects\n", name,
                fully_connected ? "full" : "face", "ConnectedComponentImageFilter", itk_ms,
                static_cast<unsigned long>(itk_filter->GetObjectCount()));
    std::vector<volccl::Backend> backends = {volccl::Backend::cpu};
    if (volccl::cuda_available()) backends.push_back(volccl::Backend::cuda);
    for (volccl::Backend backend : backends) {
      auto ours = itk::CudaConnectedComponentImageFilter<MaskImage, LabelImage>::New();
      ours->SetInput(mask);
      ours->SetFullyConnected(fully_connected);
      ours->SetBackend(backend);
      const double ms = median_update_ms(ours.GetPointer(), mask, runs);
      const std::string who = "CudaConnectedComponent, " + volccl::to_string(backend);
      const bool same = ours->GetObjectCount() == itk_filter->GetObjectCount() &&
                        std::equal(itk_filter->GetOutput()->GetBufferPointer(),
                                   itk_filter->GetOutput()->GetBufferPointer() +
                                       mask->GetBufferedRegion().GetNumberOfPixels(),
                                   ours->GetOutput()->GetBufferPointer());
      std::printf("%-14s %-6s %-28s %10.2f ms  %8lu objects  %5.1fx  %s\n", name,
                  fully_connected ? "full" : "face", who.c_str(), ms,
                  static_cast<unsigned long>(ours->GetObjectCount()), itk_ms / ms,
                  same ? "same bytes" : "DIFFERENT");
      if (!same) std::exit(1);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::filesystem::path data =
      std::getenv("VOLCCL_DATA") ? std::getenv("VOLCCL_DATA") : "../shared/data/raw";
  int runs = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string option = argv[i];
    if (option == "--data") {
      data = argv[i + 1];
    } else if (option == "--runs") {
      runs = std::max(1, std::atoi(argv[i + 1]));
    } else {
      std::fprintf(stderr, "usage: %s [--data DIR] [--runs N]\n", argv[0]);
      return 2;
    }
  }
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // each row as it is measured, also into a file
  std::printf("%s; %u hardware threads; median of %d updates after one\n",
              volccl::cuda_device_description().c_str(), std::thread::hardware_concurrency(), runs);
  const std::filesystem::path oasis =
      data / "brain_oasis1_neurite/OASIS_OAS1_0455_MR1/aligned_norm.nii.gz";
  if (std::filesystem::exists(oasis)) {
    compare("oasis-0455", otsu_mask(oasis.string()), runs);
  } else {
    std::printf("oasis-0455: %s is missing, skipped\n", oasis.c_str());
  }
  compare("random-512-d30", random_mask(), runs);
  return 0;
}
