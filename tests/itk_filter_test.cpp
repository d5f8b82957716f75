// itk::CudaConnectedComponentImageFilter against itk::ConnectedComponentImageFilter, output
// buffer byte for byte and object count: 2D and 3D, with and without a mask, both
// FullyConnected settings, non-binary and negative input values, a non-zero BackgroundValue,
// several output pixel types, an origin, spacing and region index away from the defaults, and
// inside a streamed pipeline that asks for pieces of the output. On the CPU backend, and on
// CUDA where a device exists.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include <gtest/gtest.h>
#include <itkConnectedComponentImageFilter.h>
#include <itkImage.h>
#include <itkImageRegionIterator.h>
#include <itkLabelImageToShapeLabelMapFilter.h>
#include <itkLabelMapToLabelImageFilter.h>
#include <itkRelabelComponentImageFilter.h>
#include <itkShapeOpeningLabelMapFilter.h>
#include <itkStreamingImageFilter.h>

#include "itkCudaConnectedComponentImageFilter.h"
#include "itkCudaShapeLabelMapFilter.h"
#include "itk_test_image.h"
#include "reference_labeler.h"
#include "test_support.h"
#include "volccl/volccl.h"

namespace volccl::test {
namespace {

template <unsigned D>
using InputImage = itk::Image<short, D>;
template <unsigned D>
using MaskImage = itk::Image<unsigned char, D>;

// An image of `size` whose pixels are 0 with probability 1 - density and otherwise a value in
// -3..3 other than 0; region index (3, -2, 5), spacing and origin away from 1 and 0.
template <unsigned D, class Pixel = short>
typename itk::Image<Pixel, D>::Pointer random_image(const std::uint64_t (&size)[3], double density,
                                                    std::uint32_t seed) {
  using Image = itk::Image<Pixel, D>;
  auto image = allocate_offset_image<Pixel, D>(size);
  std::mt19937 bits(seed);
  for (itk::ImageRegionIterator<Image> it(image, image->GetBufferedRegion()); !it.IsAtEnd(); ++it) {
    const bool foreground = (bits() >> 8) < density * (1u << 24);
    const int value = static_cast<int>(bits() % 6);  // 0..5 -> -3..-1, 1..3
    it.Set(foreground ? static_cast<Pixel>(value < 3 ? value - 3 : value - 2) : Pixel{0});
  }
  return image;
}

template <class Image>
::testing::AssertionResult same_buffers(const Image* expected, const Image* actual) {
  if (expected->GetBufferedRegion() != actual->GetBufferedRegion()) {
    return ::testing::AssertionFailure() << "regions differ: " << expected->GetBufferedRegion()
                                         << " / " << actual->GetBufferedRegion();
  }
  if (expected->GetSpacing() != actual->GetSpacing() ||
      expected->GetOrigin() != actual->GetOrigin() ||
      expected->GetDirection() != actual->GetDirection()) {
    return ::testing::AssertionFailure() << "geometry differs";
  }
  const std::size_t pixels = expected->GetBufferedRegion().GetNumberOfPixels();
  const auto* e = expected->GetBufferPointer();
  const auto* a = actual->GetBufferPointer();
  for (std::size_t i = 0; i < pixels; ++i) {
    if (e[i] != a[i]) {
      return ::testing::AssertionFailure()
             << "pixel " << i << " of " << pixels << ": ITK " << +e[i] << ", volccl " << +a[i];
    }
  }
  return ::testing::AssertionSuccess();
}

std::vector<Backend> backends() {
  std::vector<Backend> list = {Backend::cpu};
  if (cuda_available()) list.push_back(Backend::cuda);
  return list;
}

// ITK's filter and ours on the same input (and mask), same settings; same bytes and count.
template <unsigned D, class Output>
::testing::AssertionResult matches_itk(const InputImage<D>* input, const MaskImage<D>* mask,
                                       bool fully_connected, Output background, Backend backend) {
  using OutputImage = itk::Image<Output, D>;
  auto itk_filter =
      itk::ConnectedComponentImageFilter<InputImage<D>, OutputImage, MaskImage<D>>::New();
  auto ours =
      itk::CudaConnectedComponentImageFilter<InputImage<D>, OutputImage, MaskImage<D>>::New();
  itk_filter->SetInput(input);
  ours->SetInput(input);
  if (mask) {
    itk_filter->SetMaskImage(mask);
    ours->SetMaskImage(mask);
  }
  itk_filter->SetFullyConnected(fully_connected);
  ours->SetFullyConnected(fully_connected);
  itk_filter->SetBackgroundValue(background);
  ours->SetBackgroundValue(background);
  ours->SetBackend(backend);
  itk_filter->Update();
  ours->Update();
  if (itk_filter->GetObjectCount() != ours->GetObjectCount()) {
    return ::testing::AssertionFailure() << "ITK counts " << itk_filter->GetObjectCount()
                                         << " objects, volccl " << ours->GetObjectCount();
  }
  if (ours->GetLabelResult().backend_used != backend) {
    return ::testing::AssertionFailure()
           << "ran on " << to_string(ours->GetLabelResult().backend_used);
  }
  return same_buffers(itk_filter->GetOutput(), ours->GetOutput());
}

TEST(CudaConnectedComponentImageFilter, SameBytesAsItkIn2DAnd3D) {
  const std::uint32_t seed = test_seed();
  SCOPED_TRACE(describe_seed(seed));
  std::uint32_t image_seed = seed;
  for (Backend backend : backends()) {
    for (double density : {0.1, 0.45, 0.8}) {
      for (bool fully_connected : {false, true}) {
        const auto volume = random_image<3>({37, 21, 13}, density, image_seed++);
        const auto mask = random_image<3, unsigned char>({37, 21, 13}, 0.7, image_seed++);
        const auto image = random_image<2>({131, 67, 1}, density, image_seed++);
        const auto image_mask = random_image<2, unsigned char>({131, 67, 1}, 0.7, image_seed++);
        const std::string where = "density " + std::to_string(density) + ", fully connected " +
                                  std::to_string(fully_connected) + ", " + to_string(backend);
        EXPECT_TRUE((matches_itk<3, std::uint32_t>(volume, nullptr, fully_connected, 0, backend)))
            << where;
        EXPECT_TRUE((matches_itk<3, std::uint32_t>(volume, mask, fully_connected, 0, backend)))
            << where;
        EXPECT_TRUE((matches_itk<3, int>(volume, mask, fully_connected, 7, backend))) << where;
        EXPECT_TRUE((matches_itk<3, int>(volume, nullptr, fully_connected, -4, backend))) << where;
        // 64-bit outputs take 64-bit labels, in the output's own buffer when they can.
        EXPECT_TRUE((matches_itk<3, std::uint64_t>(volume, mask, fully_connected, 0, backend)))
            << where;
        EXPECT_TRUE((matches_itk<3, std::int64_t>(volume, nullptr, fully_connected, -4, backend)))
            << where;
        EXPECT_TRUE((matches_itk<2, std::uint64_t>(image, nullptr, fully_connected, 2, backend)))
            << where;
        EXPECT_TRUE((matches_itk<2, std::uint16_t>(image, nullptr, fully_connected, 0, backend)))
            << where;
        EXPECT_TRUE((matches_itk<2, std::uint32_t>(image, image_mask, fully_connected, 3, backend)))
            << where;
      }
    }
  }
}

// 18-connectivity, which ITK does not have, against the reference labeler.
TEST(CudaConnectedComponentImageFilter, EighteenConnectivityMatchesTheReference) {
  const auto volume = random_image<3>({29, 23, 17}, 0.35, test_seed());
  for (Backend backend : backends()) {
    auto filter =
        itk::CudaConnectedComponentImageFilter<InputImage<3>, itk::Image<unsigned, 3>>::New();
    filter->SetInput(volume);
    filter->SetConnectivity(18);
    filter->SetBackend(backend);
    filter->Update();
    const std::size_t voxels = volume->GetBufferedRegion().GetNumberOfPixels();
    std::vector<std::uint8_t> mask(voxels);
    for (std::size_t i = 0; i < voxels; ++i) mask[i] = volume->GetBufferPointer()[i] != 0;
    const ReferenceLabels reference = reference_label(mask, {29, 23, 17}, 18);
    EXPECT_EQ(filter->GetObjectCount(), reference.component_count);
    const unsigned* labels = filter->GetOutput()->GetBufferPointer();
    EXPECT_TRUE(labels_equal(reference.labels, std::vector<std::uint32_t>(labels, labels + voxels),
                             {29, 23, 17}));
  }
}

// Downstream filters that ask for pieces of the output still get the whole labeling's labels.
TEST(CudaConnectedComponentImageFilter, StreamedPipelineGetsTheWholeLabeling) {
  const auto volume = random_image<3>({40, 33, 24}, 0.4, test_seed());
  using OutputImage = itk::Image<std::uint32_t, 3>;
  auto itk_filter = itk::ConnectedComponentImageFilter<InputImage<3>, OutputImage>::New();
  itk_filter->SetInput(volume);
  itk_filter->Update();
  auto ours = itk::CudaConnectedComponentImageFilter<InputImage<3>, OutputImage>::New();
  ours->SetInput(volume);
  auto streamer = itk::StreamingImageFilter<OutputImage, OutputImage>::New();
  streamer->SetInput(ours->GetOutput());
  streamer->SetNumberOfStreamDivisions(5);
  streamer->Update();
  EXPECT_TRUE(same_buffers(itk_filter->GetOutput(), streamer->GetOutput()));
  // A second update after a change of setting reruns; without one it does not.
  const auto count = ours->GetObjectCount();
  ours->SetFullyConnected(true);
  streamer->Update();
  itk_filter->SetFullyConnected(true);
  itk_filter->Update();
  EXPECT_NE(ours->GetObjectCount(), count);
  EXPECT_TRUE(same_buffers(itk_filter->GetOutput(), streamer->GetOutput()));
}

TEST(CudaConnectedComponentImageFilter, TooManyObjectsForTheOutputTypeThrowsAsItkDoes) {
  // A checkerboard: one object per foreground pixel at face connectivity, 1250 > 255.
  auto image = InputImage<2>::New();
  image->SetRegions(InputImage<2>::SizeType{{50, 50}});
  image->Allocate();
  for (itk::ImageRegionIterator<InputImage<2>> it(image, image->GetBufferedRegion()); !it.IsAtEnd();
       ++it) {
    it.Set((it.GetIndex()[0] + it.GetIndex()[1]) % 2 == 0 ? 1 : 0);
  }
  using Small = itk::Image<unsigned char, 2>;
  auto itk_filter = itk::ConnectedComponentImageFilter<InputImage<2>, Small>::New();
  auto ours = itk::CudaConnectedComponentImageFilter<InputImage<2>, Small>::New();
  itk_filter->SetInput(image);
  ours->SetInput(image);
  EXPECT_THROW(itk_filter->Update(), itk::ExceptionObject);
  EXPECT_THROW(ours->Update(), itk::ExceptionObject);
  ours->SetFullyConnected(true);  // one object
  EXPECT_NO_THROW(ours->Update());
  EXPECT_EQ(ours->GetObjectCount(), 1u);
}

TEST(CudaConnectedComponentImageFilter, ProgressPrintSelfAndErrors) {
  const auto image = random_image<2>({64, 48, 1}, 0.5, 3);
  auto filter =
      itk::CudaConnectedComponentImageFilter<InputImage<2>, itk::Image<unsigned, 2>>::New();
  filter->SetInput(image);
  filter->SetBackend(Backend::cpu);
  filter->SetAlgorithm(Algorithm::uf);
  std::vector<float> progress;
  filter->AddObserver(itk::ProgressEvent(),
                      [&](const itk::EventObject&) { progress.push_back(filter->GetProgress()); });
  filter->Update();
  ASSERT_GE(progress.size(), 3u);
  for (std::size_t i = 1; i < progress.size(); ++i) EXPECT_GE(progress[i], progress[i - 1]);
  EXPECT_FLOAT_EQ(progress.back(), 1.0f);
  EXPECT_EQ(filter->GetLabelResult().algorithm_used, Algorithm::uf);
  std::ostringstream printed;
  filter->Print(printed);
  for (const char* field : {"FullyConnected: 0", "Connectivity: 0 (resolved: 4)", "Algorithm: uf",
                            "Backend: cpu", "ObjectCount: "}) {
    EXPECT_NE(printed.str().find(field), std::string::npos) << field << " in\n" << printed.str();
  }
  filter->SetConnectivity(5);  // no such connectivity: volccl refuses, ITK's way
  EXPECT_THROW(filter->Update(), itk::ExceptionObject);
  filter->SetConnectivity(8);
  filter->SetAlgorithm(Algorithm::ke);
  EXPECT_NO_THROW(filter->Update());
}

// The relabel options against ConnectedComponentImageFilter + RelabelComponentImageFilter:
// minimum size, sorting by size, and the largest k (ITK's sorted labels above k set to 0).
template <class Output>
void expect_relabeling_as_itk() {
  const std::uint32_t seed = test_seed();
  SCOPED_TRACE(describe_seed(seed));
  using OutputImage = itk::Image<Output, 3>;
  const auto volume = random_image<3>({41, 29, 17}, 0.3, seed);
  for (Backend backend : backends()) {
    for (bool sort : {false, true}) {
      for (itk::SizeValueType minimum : {0, 1, 3, 10}) {
        for (itk::SizeValueType keep : {0, 1, 5}) {
          auto itk_labels = itk::ConnectedComponentImageFilter<InputImage<3>, OutputImage>::New();
          itk_labels->SetInput(volume);
          auto relabel = itk::RelabelComponentImageFilter<OutputImage, OutputImage>::New();
          relabel->SetInput(itk_labels->GetOutput());
          relabel->SetMinimumObjectSize(minimum);
          relabel->SetSortByObjectSize(sort || keep > 0);
          relabel->Update();
          auto ours = itk::CudaConnectedComponentImageFilter<InputImage<3>, OutputImage>::New();
          ours->SetInput(volume);
          ours->SetBackend(backend);
          ours->SetMinimumObjectSize(minimum);
          ours->SetSortByObjectSize(sort || keep > 0);
          ours->SetNumberOfObjectsToKeep(keep);
          ours->ComputeStatisticsOn();
          ours->Update();
          const std::string where = "minimum " + std::to_string(minimum) + ", sort " +
                                    std::to_string(sort) + ", keep " + std::to_string(keep);
          typename OutputImage::Pointer expected = relabel->GetOutput();
          auto count = static_cast<itk::SizeValueType>(relabel->GetNumberOfObjects());
          if (keep > 0) {
            for (auto it =
                     itk::ImageRegionIterator<OutputImage>(expected, expected->GetBufferedRegion());
                 !it.IsAtEnd(); ++it) {
              if (it.Get() > keep) it.Set(0);
            }
            count = std::min(count, keep);
          }
          EXPECT_EQ(ours->GetObjectCount(), count) << where;
          EXPECT_EQ(ours->GetOriginalNumberOfObjects(), itk_labels->GetObjectCount()) << where;
          EXPECT_TRUE(same_buffers(expected.GetPointer(), ours->GetOutput())) << where;
          // The moments follow the new numbering.
          ASSERT_EQ(ours->GetMoments().size(), count) << where;
          for (itk::SizeValueType k = 1; k <= count; ++k) {
            const auto& sizes = relabel->GetSizeOfObjectsInPixels();
            EXPECT_EQ(ours->GetShape(k).count, sizes[k - 1]) << where << ", object " << k;
          }
        }
      }
    }
  }
}

TEST(CudaConnectedComponentImageFilter, RelabelOptionsMatchRelabelComponentImageFilter) {
  expect_relabeling_as_itk<std::uint32_t>();
  expect_relabeling_as_itk<std::uint64_t>();
}

// The LabelMap route: our map against LabelImageToShapeLabelMapFilter on ITK's labels (same
// numbering), in a rotated, anisotropic space; painted back by LabelMapToLabelImageFilter it is
// ITK's label image; after ShapeOpeningLabelMapFilter both maps paint the same image.
template <unsigned D>
void expect_shape_map_matches_itk(const InputImage<D>* input, bool fully_connected,
                                  Backend backend) {
  using LabelImage = itk::Image<unsigned, D>;
  auto itk_labels = itk::ConnectedComponentImageFilter<InputImage<D>, LabelImage>::New();
  itk_labels->SetInput(input);
  itk_labels->SetFullyConnected(fully_connected);
  auto itk_shapes = itk::LabelImageToShapeLabelMapFilter<LabelImage>::New();
  itk_shapes->SetInput(itk_labels->GetOutput());
  itk_shapes->Update();
  using Ours = itk::CudaShapeLabelMapFilter<InputImage<D>>;
  auto ours = Ours::New();
  ours->SetInput(input);
  ours->SetFullyConnected(fully_connected);
  ours->SetBackend(backend);
  ours->Update();
  const auto* expected = itk_shapes->GetOutput();
  const auto* actual = ours->GetOutput();
  ASSERT_EQ(actual->GetNumberOfLabelObjects(), expected->GetNumberOfLabelObjects());
  for (unsigned label = 1; label <= actual->GetNumberOfLabelObjects(); ++label) {
    const auto* e = expected->GetLabelObject(label);
    const auto* a = actual->GetLabelObject(label);
    ASSERT_EQ(a->GetNumberOfPixels(), e->GetNumberOfPixels()) << "label " << label;
    ASSERT_EQ(a->GetBoundingBox(), e->GetBoundingBox()) << "label " << label;
    EXPECT_NEAR(a->GetPhysicalSize(), e->GetPhysicalSize(), 1e-9 * e->GetPhysicalSize());
    double centroid_norm = 0, norm = 0;
    for (unsigned i = 0; i < D; ++i) {
      centroid_norm += e->GetCentroid()[i] * e->GetCentroid()[i];
      norm = std::max(norm, std::fabs(e->GetPrincipalMoments()[i]));
    }
    for (unsigned i = 0; i < D; ++i) {
      EXPECT_NEAR(a->GetCentroid()[i], e->GetCentroid()[i], 1e-9 * std::sqrt(centroid_norm));
      EXPECT_NEAR(a->GetPrincipalMoments()[i], e->GetPrincipalMoments()[i],
                  1e-9 * norm + 1e-12 * centroid_norm);
    }
    // Axes up to sign, where the moments are distinct and above ITK's rounding (a single voxel
    // has moments of 1e-14 there, and any axes).
    for (unsigned r = 0; r + 1 < D && norm > 1e-9 * centroid_norm; ++r) {
      const double gap = e->GetPrincipalMoments()[r + 1] - e->GetPrincipalMoments()[r];
      if (gap < 1e-6 * norm ||
          (r > 0 && e->GetPrincipalMoments()[r] - e->GetPrincipalMoments()[r - 1] < 1e-6 * norm)) {
        continue;
      }
      double dot = 0;
      for (unsigned i = 0; i < D; ++i)
        dot += a->GetPrincipalAxes()(r, i) * e->GetPrincipalAxes()(r, i);
      EXPECT_NEAR(std::fabs(dot), 1.0, 1e-6)
          << D << "D, label " << label << ", axis " << r << ": ITK " << e->GetPrincipalAxes()
          << " volccl " << a->GetPrincipalAxes() << " moments " << e->GetPrincipalMoments();
    }
  }
  auto painted = itk::LabelMapToLabelImageFilter<typename Ours::OutputImageType, LabelImage>::New();
  painted->SetInput(ours->GetOutput());
  painted->Update();
  EXPECT_TRUE(same_buffers(itk_labels->GetOutput(), painted->GetOutput()));

  auto open = [](const auto* map) {
    using ShapeMap = std::remove_cv_t<std::remove_pointer_t<decltype(map)>>;
    auto opening = itk::ShapeOpeningLabelMapFilter<ShapeMap>::New();
    opening->SetInput(map);
    opening->SetAttribute("NumberOfPixels");
    opening->SetLambda(4);
    auto paint = itk::LabelMapToLabelImageFilter<ShapeMap, LabelImage>::New();
    paint->SetInput(opening->GetOutput());
    paint->Update();
    typename LabelImage::Pointer image = paint->GetOutput();
    image->DisconnectPipeline();
    return image;
  };
  EXPECT_TRUE(same_buffers(open(expected).GetPointer(), open(actual).GetPointer()));
}

TEST(CudaShapeLabelMapFilter, MatchesItksShapeLabelMapAndWorksWithItksLabelMapFilters) {
  const std::uint32_t seed = test_seed();
  SCOPED_TRACE(describe_seed(seed));
  for (Backend backend : backends()) {
    for (bool fully_connected : {false, true}) {
      auto volume = random_image<3>({33, 27, 19}, 0.4, seed);
      auto image = random_image<2>({97, 75, 1}, 0.5, seed + 1);
      // A rotated direction, as in the statistics oracle.
      itk::Image<short, 3>::DirectionType rotation;
      const double c = std::cos(0.6), s = std::sin(0.6);
      rotation.SetIdentity();
      rotation(0, 0) = c, rotation(0, 1) = -s, rotation(1, 0) = s, rotation(1, 1) = c;
      volume->SetDirection(rotation);
      itk::Image<short, 2>::DirectionType rotation2;
      rotation2(0, 0) = c, rotation2(0, 1) = -s, rotation2(1, 0) = s, rotation2(1, 1) = c;
      image->SetDirection(rotation2);
      expect_shape_map_matches_itk<3>(volume, fully_connected, backend);
      expect_shape_map_matches_itk<2>(image, fully_connected, backend);
    }
  }
}

}  // namespace
}  // namespace volccl::test
