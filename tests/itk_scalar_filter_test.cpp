// itk::CudaScalarConnectedComponentImageFilter against itk::ScalarConnectedComponentImageFilter
// with DistanceThreshold 0: random label maps of uint8 (one holding all 256 values), int8,
// int16 with negative values, uint32, int64 and uint64 with both ends of the type present; 2D
// and 3D, odd and one-pixel extents, both FullyConnected settings, with and without a mask, a
// non-zero BackgroundValue. The output must equal ITK's byte for byte once ITK's object numbers
// (which keep gaps) are ranked in increasing order, and GetObjectCount() must be their number.
// On the CPU backend, and on CUDA where a device exists.
#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include <gtest/gtest.h>
#include <itkImage.h>
#include <itkScalarConnectedComponentImageFilter.h>

#include "itkCudaScalarConnectedComponentImageFilter.h"
#include "itk_test_image.h"
#include "test_support.h"
#include "volccl/volccl.h"

namespace volccl::test {
namespace {

template <unsigned D>
using MaskImage = itk::Image<unsigned char, D>;
using Extent = std::array<std::size_t, 3>;

// An image of `size` (z ignored in 2D) with region index (3, -2, 5), spacing and origin away
// from 1 and 0, and pixels from `pick`, constant over cubes of side `granularity`.
template <unsigned D, class Pixel, class Pick>
typename itk::Image<Pixel, D>::Pointer make_image(const Extent& size, unsigned granularity,
                                                  Pick pick) {
  auto image = allocate_offset_image<Pixel, D>(size);
  const std::size_t depth = D == 3 ? size[2] : 1;
  const std::size_t cells_x = (size[0] + granularity - 1) / granularity;
  const std::size_t cells_y = (size[1] + granularity - 1) / granularity;
  const std::size_t cells_z = (depth + granularity - 1) / granularity;
  std::vector<Pixel> cells(cells_x * cells_y * cells_z);
  for (Pixel& cell : cells) cell = pick();
  Pixel* pixels = image->GetBufferPointer();
  for (std::size_t z = 0; z < depth; ++z) {
    for (std::size_t y = 0; y < size[1]; ++y) {
      for (std::size_t x = 0; x < size[0]; ++x) {
        pixels[(z * size[1] + y) * size[0] + x] =
            cells[((z / granularity) * cells_y + y / granularity) * cells_x + x / granularity];
      }
    }
  }
  return image;
}

// A label map of values drawn from `palette`.
template <unsigned D, class Pixel>
typename itk::Image<Pixel, D>::Pointer label_map(const Extent& size, unsigned granularity,
                                                 const std::vector<Pixel>& palette,
                                                 std::mt19937& random) {
  std::uniform_int_distribution<std::size_t> index(0, palette.size() - 1);
  return make_image<D, Pixel>(size, granularity, [&] { return palette[index(random)]; });
}

// A mask of the image's geometry, 1 with probability `density`.
template <unsigned D, class Image>
typename MaskImage<D>::Pointer random_mask(const Image* image, double density,
                                           std::mt19937& random) {
  auto mask = MaskImage<D>::New();
  mask->CopyInformation(image);
  mask->SetRegions(image->GetBufferedRegion());
  mask->Allocate();
  std::bernoulli_distribution inside(density);
  const std::size_t pixels = image->GetBufferedRegion().GetNumberOfPixels();
  for (std::size_t i = 0; i < pixels; ++i) mask->GetBufferPointer()[i] = inside(random);
  return mask;
}

// ITK's functor compares |a - b|, computed in double and converted back to the pixel type, with
// the threshold: a difference beyond the type's range wraps (or, for 64-bit values, rounds) to
// something <= 0 and joins unequal neighbours. Where that can happen ITK labels the rank of each
// value instead (a uint32 image of the same partition into equal values), which it compares
// exactly.
template <unsigned D, class Pixel>
std::vector<std::uint32_t> itk_labels(const itk::Image<Pixel, D>* input, const MaskImage<D>* mask,
                                      bool fully_connected) {
  using Output = itk::Image<std::uint32_t, D>;
  const std::size_t pixels = input->GetBufferedRegion().GetNumberOfPixels();
  const Pixel* values = input->GetBufferPointer();
  const auto [low, high] = std::minmax_element(values, values + pixels);
  const bool exact = sizeof(Pixel) <= 4 &&
                     static_cast<long double>(*high) - *low <= std::numeric_limits<Pixel>::max();
  const auto run = [&](const auto* image) {
    using Image = std::remove_const_t<std::remove_pointer_t<decltype(image)>>;
    auto filter = itk::ScalarConnectedComponentImageFilter<Image, Output, MaskImage<D>>::New();
    filter->SetInput(image);
    if (mask) filter->SetMaskImage(mask);
    filter->SetDistanceThreshold(0);
    filter->SetFullyConnected(fully_connected);
    filter->Update();
    const std::uint32_t* out = filter->GetOutput()->GetBufferPointer();
    return std::vector<std::uint32_t>(out, out + pixels);
  };
  if (exact) return run(input);
  std::vector<Pixel> distinct(values, values + pixels);
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  auto ranks = itk::Image<std::uint32_t, D>::New();
  ranks->CopyInformation(input);
  ranks->SetRegions(input->GetBufferedRegion());
  ranks->Allocate();
  for (std::size_t i = 0; i < pixels; ++i) {
    ranks->GetBufferPointer()[i] = static_cast<std::uint32_t>(
        std::lower_bound(distinct.begin(), distinct.end(), values[i]) - distinct.begin());
  }
  return run(ranks.GetPointer());
}

// Ours against ITK's: ITK's object numbers ranked in increasing order (r = 1, 2, ...) become
// 0, 1, 2, ... skipping `background` (from 1 when it is 0), ITK's 0 (masked out) `background`.
template <unsigned D, class Pixel, class Output = std::uint32_t>
::testing::AssertionResult matches_itk(const itk::Image<Pixel, D>* input, const MaskImage<D>* mask,
                                       bool fully_connected, Backend backend,
                                       Output background = 0) {
  const std::vector<std::uint32_t> theirs = itk_labels<D, Pixel>(input, mask, fully_connected);
  std::vector<std::uint32_t> numbers(theirs);
  std::sort(numbers.begin(), numbers.end());
  numbers.erase(std::unique(numbers.begin(), numbers.end()), numbers.end());
  numbers.erase(std::remove(numbers.begin(), numbers.end(), 0u), numbers.end());

  using Filter = itk::CudaScalarConnectedComponentImageFilter<itk::Image<Pixel, D>,
                                                              itk::Image<Output, D>, MaskImage<D>>;
  auto ours = Filter::New();
  ours->SetInput(input);
  if (mask) ours->SetMaskImage(mask);
  ours->SetFullyConnected(fully_connected);
  ours->SetBackgroundValue(background);
  ours->SetBackend(backend);
  ours->Update();
  if (ours->GetLabelResult().backend_used != backend) {
    return ::testing::AssertionFailure()
           << "ran on " << to_string(ours->GetLabelResult().backend_used);
  }
  if (ours->GetObjectCount() != numbers.size()) {
    return ::testing::AssertionFailure()
           << "ITK has " << numbers.size() << " objects, volccl " << ours->GetObjectCount();
  }
  const auto skipped = static_cast<long long>(background);
  const Output* out = ours->GetOutput()->GetBufferPointer();
  for (std::size_t i = 0; i < theirs.size(); ++i) {
    Output expected = background;
    if (theirs[i] != 0) {
      long long number =
          std::lower_bound(numbers.begin(), numbers.end(), theirs[i]) - numbers.begin();
      if (skipped >= 0 && number >= skipped) ++number;
      expected = static_cast<Output>(number);
    }
    if (out[i] != expected) {
      return ::testing::AssertionFailure() << "pixel " << i << " of " << theirs.size() << " (value "
                                           << +input->GetBufferPointer()[i] << "): volccl "
                                           << +out[i] << ", ITK ranked " << +expected;
    }
  }
  return ::testing::AssertionSuccess();
}

class CudaScalarConnectedComponentImageFilterTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    if (GetParam() == Backend::cuda && !cuda_available()) {
      GTEST_SKIP() << "no usable CUDA device: the CUDA backend is not tested here";
    }
  }
  Backend backend() const { return GetParam(); }
};

const std::vector<Extent> extents_2d = {{1, 1, 1}, {1, 13, 1}, {17, 9, 1}, {65, 31, 1}};
const std::vector<Extent> extents_3d = {{1, 1, 1}, {1, 1, 11}, {13, 7, 5}, {31, 17, 9}};

std::string describe(const Extent& size, unsigned granularity, bool fully_connected, bool mask) {
  return std::to_string(size[0]) + "x" + std::to_string(size[1]) + "x" + std::to_string(size[2]) +
         ", granularity " + std::to_string(granularity) + ", fully connected " +
         std::to_string(fully_connected) + (mask ? ", masked" : ", no mask");
}

// Every extent, granularity, FullyConnected setting, with and without a mask, in 2D and 3D.
template <class Pixel>
void check_palette(const std::vector<Pixel>& palette, Backend backend, std::mt19937& random) {
  for (unsigned granularity : {1u, 3u}) {
    for (bool fully_connected : {false, true}) {
      for (const Extent& size : extents_2d) {
        const auto image = label_map<2, Pixel>(size, granularity, palette, random);
        const auto mask = random_mask<2>(image.GetPointer(), 0.7, random);
        EXPECT_TRUE((matches_itk<2, Pixel>(image.GetPointer(), nullptr, fully_connected, backend)))
            << describe(size, granularity, fully_connected, false);
        EXPECT_TRUE((
            matches_itk<2, Pixel>(image.GetPointer(), mask.GetPointer(), fully_connected, backend)))
            << describe(size, granularity, fully_connected, true);
      }
      for (const Extent& size : extents_3d) {
        const auto volume = label_map<3, Pixel>(size, granularity, palette, random);
        const auto mask = random_mask<3>(volume.GetPointer(), 0.7, random);
        EXPECT_TRUE((matches_itk<3, Pixel>(volume.GetPointer(), nullptr, fully_connected, backend)))
            << describe(size, granularity, fully_connected, false);
        EXPECT_TRUE((matches_itk<3, Pixel>(volume.GetPointer(), mask.GetPointer(), fully_connected,
                                           backend)))
            << describe(size, granularity, fully_connected, true);
      }
    }
  }
}

// An image holding every value of its 8-bit type (random values, then 0..255 at random
// places), so that no value is left for volccl's unlabeled one.
template <unsigned D, class Pixel>
typename itk::Image<Pixel, D>::Pointer every_value(const Extent& size, std::mt19937& random) {
  std::uniform_int_distribution<int> value(std::numeric_limits<Pixel>::lowest(),
                                           std::numeric_limits<Pixel>::max());
  auto image = make_image<D, Pixel>(size, 1, [&] { return static_cast<Pixel>(value(random)); });
  const std::size_t pixels = image->GetBufferedRegion().GetNumberOfPixels();
  std::vector<std::size_t> places(pixels);
  std::iota(places.begin(), places.end(), std::size_t{0});
  std::shuffle(places.begin(), places.end(), random);
  for (int v = std::numeric_limits<Pixel>::lowest(); v <= std::numeric_limits<Pixel>::max(); ++v) {
    image->GetBufferPointer()[places[v - std::numeric_limits<Pixel>::lowest()]] =
        static_cast<Pixel>(v);
  }
  return image;
}

TEST_P(CudaScalarConnectedComponentImageFilterTest, Uint8LabelMaps) {
  const std::uint32_t seed = test_seed();
  SCOPED_TRACE(describe_seed(seed));
  std::mt19937 random(seed);
  check_palette<std::uint8_t>({0, 1, 2, 7, 255}, backend(), random);
  check_palette<std::uint8_t>({0, 1}, backend(), random);
}

TEST_P(CudaScalarConnectedComponentImageFilterTest, EveryValueOfAByte) {
  const std::uint32_t seed = test_seed();
  SCOPED_TRACE(describe_seed(seed));
  std::mt19937 random(seed);
  for (bool fully_connected : {false, true}) {
    const auto image = every_value<2, std::uint8_t>({37, 29, 1}, random);
    const auto volume = every_value<3, std::uint8_t>({9, 8, 7}, random);
    const auto signed_volume = every_value<3, std::int8_t>({11, 7, 5}, random);
    // A sparse mask: the labeled pixels may or may not hold every value.
    const auto mask = random_mask<3>(volume.GetPointer(), 0.95, random);
    EXPECT_TRUE(
        (matches_itk<2, std::uint8_t>(image.GetPointer(), nullptr, fully_connected, backend())));
    EXPECT_TRUE(
        (matches_itk<3, std::uint8_t>(volume.GetPointer(), nullptr, fully_connected, backend())));
    EXPECT_TRUE((matches_itk<3, std::uint8_t>(volume.GetPointer(), mask.GetPointer(),
                                              fully_connected, backend())));
    EXPECT_TRUE((matches_itk<3, std::int8_t>(signed_volume.GetPointer(), nullptr, fully_connected,
                                             backend())));
  }
}

TEST_P(CudaScalarConnectedComponentImageFilterTest, Int16WithNegativeValues) {
  const std::uint32_t seed = test_seed();
  SCOPED_TRACE(describe_seed(seed));
  std::mt19937 random(seed);
  check_palette<std::int16_t>({-300, -7, -1, 0, 1, 2, 300}, backend(), random);
  check_palette<std::int16_t>({-32768, -1, 0, 32767}, backend(), random);
}

TEST_P(CudaScalarConnectedComponentImageFilterTest, Uint32LabelMaps) {
  const std::uint32_t seed = test_seed();
  SCOPED_TRACE(describe_seed(seed));
  std::mt19937 random(seed);
  check_palette<std::uint32_t>({0, 1, 5, 0x80000000u, 0xFFFFFFFEu, 0xFFFFFFFFu}, backend(), random);
}

TEST_P(CudaScalarConnectedComponentImageFilterTest, SixtyFourBitsWithBothEnds) {
  const std::uint32_t seed = test_seed();
  SCOPED_TRACE(describe_seed(seed));
  std::mt19937 random(seed);
  constexpr std::int64_t min = std::numeric_limits<std::int64_t>::min();
  constexpr std::int64_t max = std::numeric_limits<std::int64_t>::max();
  check_palette<std::int64_t>({min, min + 1, -1, 0, 1, max - 1, max}, backend(), random);
  constexpr std::uint64_t top = std::numeric_limits<std::uint64_t>::max();
  check_palette<std::uint64_t>({0, 1, top - 1, top}, backend(), random);
}

TEST_P(CudaScalarConnectedComponentImageFilterTest, NonZeroBackgroundValue) {
  const std::uint32_t seed = test_seed();
  SCOPED_TRACE(describe_seed(seed));
  std::mt19937 random(seed);
  for (bool fully_connected : {false, true}) {
    const auto volume = label_map<3, std::int16_t>({23, 13, 7}, 2, {-4, 0, 3, 9}, random);
    const auto mask = random_mask<3>(volume.GetPointer(), 0.6, random);
    const auto image = label_map<2, std::uint8_t>({41, 27, 1}, 1, {0, 1, 2}, random);
    const auto image_mask = random_mask<2>(image.GetPointer(), 0.6, random);
    EXPECT_TRUE((matches_itk<3, std::int16_t, std::uint16_t>(volume.GetPointer(), mask.GetPointer(),
                                                             fully_connected, backend(), 3)));
    EXPECT_TRUE((matches_itk<3, std::int16_t, int>(volume.GetPointer(), nullptr, fully_connected,
                                                   backend(), -1)));
    EXPECT_TRUE((matches_itk<2, std::uint8_t, std::uint32_t>(
        image.GetPointer(), image_mask.GetPointer(), fully_connected, backend(), 5)));
  }
}

TEST_P(CudaScalarConnectedComponentImageFilterTest, EmptyMaskLabelsNothing) {
  const std::uint32_t seed = test_seed();
  SCOPED_TRACE(describe_seed(seed));
  std::mt19937 random(seed);
  const auto volume = label_map<3, std::uint8_t>({9, 5, 3}, 1, {0, 255}, random);
  const auto mask = random_mask<3>(volume.GetPointer(), 0.0, random);
  EXPECT_TRUE(
      (matches_itk<3, std::uint8_t>(volume.GetPointer(), mask.GetPointer(), false, backend())));
}

TEST_P(CudaScalarConnectedComponentImageFilterTest, TooManyObjectsForTheOutputTypeThrow) {
  // A checkerboard of two values: one object per pixel at face connectivity.
  std::size_t i = 0;
  const auto image = make_image<2, std::uint8_t>({40, 20, 1}, 1, [&i] {
    const std::size_t x = i % 40, y = i / 40;
    ++i;
    return static_cast<std::uint8_t>((x + y) % 2);
  });
  auto filter = itk::CudaScalarConnectedComponentImageFilter<itk::Image<std::uint8_t, 2>,
                                                             itk::Image<std::uint8_t, 2>>::New();
  filter->SetInput(image);
  filter->SetBackend(backend());
  EXPECT_THROW(filter->Update(), itk::ExceptionObject);
}

TEST_P(CudaScalarConnectedComponentImageFilterTest, DistanceThresholdOtherThanZeroThrows) {
  std::mt19937 random(1);
  const auto image = label_map<2, std::int16_t>({9, 7, 1}, 1, {0, 1, 2}, random);
  auto filter = itk::CudaScalarConnectedComponentImageFilter<itk::Image<std::int16_t, 2>,
                                                             itk::Image<std::uint32_t, 2>>::New();
  filter->SetInput(image);
  filter->SetBackend(backend());
  filter->SetDistanceThreshold(1);
  EXPECT_EQ(filter->GetDistanceThreshold(), 1);
  try {
    filter->Update();
    ADD_FAILURE() << "DistanceThreshold 1 was accepted";
  } catch (const itk::ExceptionObject& error) {
    EXPECT_NE(std::string(error.GetDescription()).find("DistanceThreshold 1 is not supported"),
              std::string::npos)
        << error.GetDescription();
  }
  filter->SetDistanceThreshold(0);
  filter->Update();
  EXPECT_GT(filter->GetObjectCount(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Backend, CudaScalarConnectedComponentImageFilterTest,
                         ::testing::Values(Backend::cpu, Backend::cuda),
                         [](const ::testing::TestParamInfo<Backend>& info) {
                           return to_string(info.param);
                         });

}  // namespace
}  // namespace volccl::test
