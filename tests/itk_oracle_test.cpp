// ITK's ConnectedComponentImageFilter as a second, independent oracle: FullyConnected on is
// 26-connectivity, off (ITK's default) is 6-connectivity; ITK has no 18. volccl, ITK and the
// reference labeler must agree byte for byte at both, on synthetic volumes and on real brain
// MRI and EM masks. And ITK's LabelImageToShapeLabelMapFilter as the oracle of the statistics
// in physical space. The only ITK translation unit of the tests, in its own program, so the
// labeling tests run where ITK is not installed.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <ostream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <itkConnectedComponentImageFilter.h>
#include <itkImage.h>
#include <itkImageFileReader.h>
#include <itkLabelImageToShapeLabelMapFilter.h>
#include <itkScalarConnectedComponentImageFilter.h>

#include "reference_labeler.h"
#include "test_support.h"
#include "volccl/data/generators.h"
#include "volccl/statistics.h"
#include "volccl/volccl.h"
#include "volcclLabelImage.h"
#include "volcclOtsuForeground.h"

namespace volccl::test {
namespace {

using data::Volume;
using MaskImage = itk::Image<unsigned char, 3>;
using LabelImage = itk::Image<unsigned int, 3>;

struct OracleLabels {
  std::vector<std::uint32_t> labels;
  std::uint32_t component_count = 0;
};

// ITK's labels of `volume` at `connectivity`, 6 (FullyConnected off) or 26 (on).
OracleLabels itk_label(const Volume& volume, int connectivity) {
  auto image = MaskImage::New();
  MaskImage::SizeType size;
  size[0] = volume.extent.x;
  size[1] = volume.extent.y;
  size[2] = volume.extent.z;
  image->SetRegions(size);
  image->Allocate();
  std::copy(volume.voxels.begin(), volume.voxels.end(), image->GetBufferPointer());

  auto filter = itk::ConnectedComponentImageFilter<MaskImage, LabelImage>::New();
  filter->SetInput(image);
  filter->SetFullyConnected(connectivity == 26);
  filter->Update();
  const unsigned int* labels = filter->GetOutput()->GetBufferPointer();
  return {std::vector<std::uint32_t>(labels, labels + volume.extent.voxel_count()),
          static_cast<std::uint32_t>(filter->GetObjectCount())};
}

// Every algorithm that supports `connectivity`, on the CPU and, when a device is present, on
// CUDA.
std::vector<LabelOptions> volccl_configurations(int connectivity) {
  std::vector<LabelOptions> configurations;
  for (Backend backend : {Backend::cpu, Backend::cuda}) {
    if (backend == Backend::cuda && !cuda_available()) continue;
    for (Algorithm algorithm : all_algorithms()) {
      if (!supports(algorithm, connectivity)) continue;
      if (backend == Backend::cuda && runs_on_cpu_only(algorithm)) continue;
      LabelOptions options;
      options.algorithm = algorithm;
      options.connectivity = connectivity;
      options.backend = backend;
      configurations.push_back(options);
    }
  }
  return configurations;
}

::testing::AssertionResult agree(const char* who, const OracleLabels& actual,
                                 const OracleLabels& expected, Extent3 extent) {
  if (actual.component_count != expected.component_count) {
    return ::testing::AssertionFailure() << who << " finds " << actual.component_count
                                         << " components, ITK " << expected.component_count;
  }
  ::testing::AssertionResult equal = labels_equal(expected.labels, actual.labels, extent);
  if (!equal) return ::testing::AssertionFailure() << who << ": " << equal.message();
  return equal;
}

// The reference labeler, and volccl in every configuration, against ITK's labels of `volume`
// at `connectivity`.
::testing::AssertionResult all_agree_with(const OracleLabels& itk, const Volume& volume,
                                          int connectivity) {
  ReferenceLabels reference = reference_label(volume.voxels, volume.extent, connectivity);
  ::testing::AssertionResult result =
      agree("the reference labeler", {std::move(reference.labels), reference.component_count}, itk,
            volume.extent);
  if (!result) return result;
  for (const LabelOptions& options : volccl_configurations(connectivity)) {
    VolcclRun run = run_volccl(volume, options);
    const std::string who = "volccl " + to_string(options.algorithm) + " at " +
                            std::to_string(connectivity) + "-connectivity on " +
                            to_string(run.result.backend_used);
    result = agree(who.c_str(),
                   {std::move(run.labels), static_cast<std::uint32_t>(run.result.component_count)},
                   itk, volume.extent);
    if (!result) return result;
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult all_agree_with_itk(const Volume& volume, int connectivity) {
  return all_agree_with(itk_label(volume, connectivity), volume, connectivity);
}

// ITK's two connectivities: 6 (FullyConnected off) and 26 (on).
class ItkOracle : public ::testing::TestWithParam<int> {
 protected:
  int connectivity() const { return GetParam(); }
  ::testing::AssertionResult all_agree_with_itk(const Volume& volume) const {
    return test::all_agree_with_itk(volume, connectivity());
  }
};

std::string connectivity_name(const ::testing::TestParamInfo<int>& info) {
  return "c" + std::to_string(info.param);
}

TEST_P(ItkOracle, RandomGranularVolumes) {
  const std::uint32_t seed = test_seed();
  SCOPED_TRACE(describe_seed(seed));
  const Extent3 extents[] = {{33, 17, 9}, {64, 64, 64}, {31, 45, 20}, {100, 3, 7}, {1, 1, 50}};
  std::uint32_t volume_seed = seed;
  for (const Extent3& extent : extents) {
    for (double density : {0.1, 0.3, 0.5, 0.7, 0.9}) {
      for (unsigned granularity : {1u, 2u, 4u, 7u}) {
        const Volume volume = data::random_granular(extent, density, granularity, volume_seed++);
        ASSERT_TRUE(all_agree_with_itk(volume))
            << extent.to_string() << ", density " << density << ", granularity " << granularity;
      }
    }
  }
}

TEST_P(ItkOracle, HilbertCurves) {
  for (unsigned order = 1; order <= 6; ++order) {
    ASSERT_TRUE(all_agree_with_itk(data::hilbert(order, 128))) << "order " << order;
  }
}

TEST_P(ItkOracle, CheckerboardsSpiralsAndShells) {
  ASSERT_TRUE(all_agree_with_itk(data::checkerboard({33, 17, 9})));
  ASSERT_TRUE(all_agree_with_itk(data::spiral({64, 33, 7})));
  ASSERT_TRUE(all_agree_with_itk(data::shells({65, 48, 33}, 2)));
}

INSTANTIATE_TEST_SUITE_P(Connectivity, ItkOracle, ::testing::Values(6, 26), connectivity_name);

std::filesystem::path data_directory() {
  if (const char* directory = std::getenv("VOLCCL_DATA")) return directory;
  return VOLCCL_SHARED_DATA;
}

// A brain MRI binarized as YACCLAB does (volccl::OtsuForeground).
Volume read_otsu_binarized(const std::filesystem::path& path) {
  using IntensityImage = itk::Image<float, 3>;
  auto reader = itk::ImageFileReader<IntensityImage>::New();
  reader->SetFileName(path.string());
  reader->Update();
  const MaskImage::Pointer mask = OtsuForeground(reader->GetOutput());
  const MaskImage::SizeType size = mask->GetLargestPossibleRegion().GetSize();
  Volume volume{{size[0], size[1], size[2]}, {}};
  volume.voxels.assign(mask->GetBufferPointer(),
                       mask->GetBufferPointer() + volume.extent.voxel_count());
  return volume;
}

struct BrainVolume {
  const char* path;  // relative to the data directory
  // The data directory's README gives them, except KmeansTest's, which numpy's Otsu and
  // scipy.ndimage.label gave here.
  std::uint32_t components_6;
  std::uint32_t components_26;
};

void PrintTo(const BrainVolume& volume, std::ostream* out) { *out << volume.path; }

class RealBrainVolumes : public ::testing::TestWithParam<std::tuple<BrainVolume, int>> {};

TEST_P(RealBrainVolumes, OtsuMaskAgreesWithItk) {
  const auto& [brain, connectivity] = GetParam();
  const std::filesystem::path path = data_directory() / brain.path;
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "missing " << path;
  const Volume volume = read_otsu_binarized(path);
  const OracleLabels itk = itk_label(volume, connectivity);
  ASSERT_TRUE(all_agree_with(itk, volume, connectivity)) << path;
  EXPECT_EQ(itk.component_count, connectivity == 6 ? brain.components_6 : brain.components_26)
      << path << " at " << connectivity << "-connectivity";
}

INSTANTIATE_TEST_SUITE_P(
    Brains, RealBrainVolumes,
    ::testing::Combine(
        ::testing::Values(
            BrainVolume{"brain_itk_example/KmeansTest_T1UCharRaw.nii.gz", 344, 17},
            BrainVolume{"brain_colin27_mricron/ch2bet.nii.gz", 133, 49},
            BrainVolume{"brain_oasis1_neurite/OASIS_OAS1_0455_MR1/aligned_norm.nii.gz", 397, 107}),
        ::testing::Values(6, 26)),
    [](const ::testing::TestParamInfo<std::tuple<BrainVolume, int>>& info) {
      return std::filesystem::path(std::get<0>(info.param).path).begin()->string() + "_c" +
             std::to_string(std::get<1>(info.param));
    });

// The Lucchi++ mitochondria masks of the EPFL CA1 hippocampus stack: 165 slices of
// 1024x768, named 0.png .. 164.png.
class RealEmVolumes : public ::testing::TestWithParam<int> {};

// The masks as one volume, or an empty one when the data directory lacks them.
Volume read_lucchi_mitochondria(std::string* missing) {
  const std::filesystem::path directory =
      data_directory() / "em_mitochondria_lucchi_pp" / "Lucchi++" / "Train_Out";
  const Extent3 extent{1024, 768, 165};
  const std::uint64_t slice_size = extent.x * extent.y;
  Volume volume{extent, std::vector<std::uint8_t>(extent.voxel_count())};
  for (std::uint64_t z = 0; z < extent.z; ++z) {
    const std::filesystem::path path = directory / (std::to_string(z) + ".png");
    if (!std::filesystem::exists(path)) {
      *missing = path.string();
      return {};
    }
    using SliceImage = itk::Image<unsigned char, 2>;
    auto reader = itk::ImageFileReader<SliceImage>::New();
    reader->SetFileName(path.string());
    reader->Update();
    const SliceImage::SizeType size = reader->GetOutput()->GetLargestPossibleRegion().GetSize();
    if (size[0] != extent.x || size[1] != extent.y) {
      throw std::runtime_error(path.string() + " is not 1024x768");
    }
    const unsigned char* pixels = reader->GetOutput()->GetBufferPointer();
    for (std::uint64_t i = 0; i < slice_size; ++i) {
      volume.voxels[z * slice_size + i] = pixels[i] > 0 ? 1 : 0;
    }
  }
  return volume;
}

TEST_P(RealEmVolumes, LucchiMitochondriaAgreeWithItk) {
  const int connectivity = GetParam();
  std::string missing;
  const Volume volume = read_lucchi_mitochondria(&missing);
  if (!missing.empty()) GTEST_SKIP() << "missing " << missing;
  const OracleLabels itk = itk_label(volume, connectivity);
  ASSERT_TRUE(all_agree_with(itk, volume, connectivity));
  // The count the data directory's README gives; scipy.ndimage.label finds 43 at 6 as well.
  EXPECT_EQ(itk.component_count, 43u);
}

INSTANTIATE_TEST_SUITE_P(Connectivity, RealEmVolumes, ::testing::Values(6, 26), connectivity_name);

// --- statistics in physical space against ITK's LabelImageToShapeLabelMapFilter ------------

// A non-unit anisotropic spacing, an origin away from 0 and a rotation (0.6 rad about
// (1, 2, 2) / 3 in 3D, 0.6 rad in 2D) as the direction.
ImageGeometry rotated_geometry(int dimension) {
  ImageGeometry geometry;
  geometry.spacing = {0.7, 1.3, 2.1};
  geometry.origin = {-12.5, 40.25, 3.0};
  const double c = std::cos(0.6), s = std::sin(0.6);
  if (dimension == 2) {
    geometry.direction = {c, -s, 0, s, c, 0, 0, 0, 1};
    return geometry;
  }
  const double axis[3] = {1.0 / 3, 2.0 / 3, 2.0 / 3};
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      double r = (1 - c) * axis[i] * axis[j] + (i == j ? c : 0);
      if (i != j) r += ((j == (i + 1) % 3) ? -1 : 1) * s * axis[3 - i - j];
      geometry.direction[3 * i + j] = r;
    }
  }
  return geometry;
}

// ITK's shape statistics of `labels` against describe() of `moments`: counts and bounding boxes
// equal; centroid, physical size, principal moments, and the covariance V^T diag(moments) V that
// ITK's axes and moments give, within 1e-9 of the largest covariance term. ITK forms
// E[p p^T] - E[p] E[p]^T in physical coordinates, whose rounding reaches ~1e-16 |centroid|^2,
// so 1e-12 |centroid|^2 is allowed on top (it matters only for components of a few voxels,
// whose covariance is near 0).
template <unsigned D>
::testing::AssertionResult shapes_match_itk(const std::vector<std::uint32_t>& labels,
                                            Extent3 extent,
                                            const std::vector<ComponentMoments>& moments,
                                            const ImageGeometry& geometry) {
  using Image = itk::Image<unsigned int, D>;
  auto image = Image::New();
  typename Image::SizeType size;
  typename Image::SpacingType spacing;
  typename Image::PointType origin;
  typename Image::DirectionType direction;
  const std::uint64_t dimensions[3] = {extent.x, extent.y, extent.z};
  for (unsigned i = 0; i < D; ++i) {
    size[i] = dimensions[i];
    spacing[i] = geometry.spacing[i];
    origin[i] = geometry.origin[i];
    for (unsigned j = 0; j < D; ++j) direction(i, j) = geometry.direction[3 * i + j];
  }
  image->SetRegions(size);
  image->SetSpacing(spacing);
  image->SetOrigin(origin);
  image->SetDirection(direction);
  image->Allocate();
  std::copy(labels.begin(), labels.end(), image->GetBufferPointer());
  auto shapes = itk::LabelImageToShapeLabelMapFilter<Image>::New();
  shapes->SetInput(image);
  shapes->SetComputePerimeter(false);
  shapes->SetComputeFeretDiameter(false);
  shapes->Update();
  const auto* map = shapes->GetOutput();
  if (map->GetNumberOfLabelObjects() != moments.size()) {
    return ::testing::AssertionFailure() << "ITK finds " << map->GetNumberOfLabelObjects()
                                         << " labels, volccl " << moments.size();
  }
  for (std::size_t row = 0; row < moments.size(); ++row) {
    const auto* object = map->GetLabelObject(static_cast<unsigned int>(row + 1));
    const ComponentShape ours = describe(moments[row], geometry, D);
    std::ostringstream where;
    where << "label " << row + 1 << " (" << ours.count << " voxels): ";
    if (object->GetNumberOfPixels() != ours.count) {
      return ::testing::AssertionFailure()
             << where.str() << "ITK counts " << object->GetNumberOfPixels();
    }
    const auto box = object->GetBoundingBox();
    for (unsigned i = 0; i < D; ++i) {
      const auto low = static_cast<std::uint32_t>(box.GetIndex()[i]);
      const auto high = static_cast<std::uint32_t>(box.GetIndex()[i] + box.GetSize()[i] - 1);
      if (low != ours.bounding_box_min[i] || high != ours.bounding_box_max[i]) {
        return ::testing::AssertionFailure() << where.str() << "bounding box differs on axis " << i;
      }
    }
    double centroid_squared = 0;
    for (unsigned i = 0; i < D; ++i) centroid_squared += ours.centroid[i] * ours.centroid[i];
    const auto close = [](double a, double b, double allowed) {
      return std::fabs(a - b) <= allowed;
    };
    for (unsigned i = 0; i < D; ++i) {
      if (!close(object->GetCentroid()[i], ours.centroid[i], 1e-9 * std::sqrt(centroid_squared))) {
        return ::testing::AssertionFailure()
               << where.str() << "centroid " << i << ": ITK " << object->GetCentroid()[i]
               << ", volccl " << ours.centroid[i];
      }
    }
    if (!close(object->GetPhysicalSize(), ours.physical_size, 1e-9 * ours.physical_size)) {
      return ::testing::AssertionFailure() << where.str() << "physical size differs";
    }
    const int first[6] = {0, 1, 2, 0, 0, 1}, second[6] = {0, 1, 2, 1, 2, 2};
    double norm = 0;
    for (double term : ours.covariance) norm = std::max(norm, std::fabs(term));
    const double allowed = 1e-9 * norm + 1e-12 * centroid_squared;
    const auto axes = object->GetPrincipalAxes();
    const auto principal = object->GetPrincipalMoments();
    for (unsigned r = 0; r < D; ++r) {
      if (!close(principal[r], ours.principal_moments[r], allowed)) {
        return ::testing::AssertionFailure()
               << where.str() << "principal moment " << r << ": ITK " << principal[r] << ", volccl "
               << ours.principal_moments[r];
      }
    }
    for (int t = 0; t < 6; ++t) {
      if (static_cast<unsigned>(second[t]) >= D) continue;
      double itk_term = 0;
      for (unsigned r = 0; r < D; ++r) {
        itk_term += axes(r, first[t]) * principal[r] * axes(r, second[t]);
      }
      if (!close(itk_term, ours.covariance[t], allowed)) {
        return ::testing::AssertionFailure() << where.str() << "covariance term " << t << ": ITK "
                                             << itk_term << ", volccl " << ours.covariance[t];
      }
    }
  }
  return ::testing::AssertionSuccess();
}

// Labels and measures `volume` with every configuration of volccl_configurations and every
// statistics strategy of each on the GPU, and compares with ITK.
::testing::AssertionResult statistics_match_itk(const Volume& volume, int connectivity) {
  const int dimension = is_2d_connectivity(connectivity) ? 2 : 3;
  const ImageGeometry geometry = rotated_geometry(dimension);
  for (LabelOptions options : volccl_configurations(connectivity)) {
    for (StatisticsStrategy strategy :
         {StatisticsStrategy::late, StatisticsStrategy::fused, StatisticsStrategy::early}) {
      if (!supports(strategy, options.algorithm)) continue;
      if (options.backend == Backend::cpu && strategy != StatisticsStrategy::late) continue;
      options.statistics_strategy = strategy;
      std::vector<std::uint32_t> labels(volume.extent.voxel_count(), kPoison);
      std::vector<ComponentMoments> moments;
      label(volume.voxels.data(), volume.extent, labels.data(), moments, options);
      const ::testing::AssertionResult result =
          dimension == 2 ? shapes_match_itk<2>(labels, volume.extent, moments, geometry)
                         : shapes_match_itk<3>(labels, volume.extent, moments, geometry);
      if (!result) {
        return ::testing::AssertionFailure()
               << to_string(options.algorithm) << " on " << to_string(options.backend) << ", "
               << to_string(strategy) << " statistics: " << result.message();
      }
    }
  }
  return ::testing::AssertionSuccess();
}

class ItkShapeStatistics : public ::testing::TestWithParam<int> {};

TEST_P(ItkShapeStatistics, RandomVolumesAndImagesInRotatedAnisotropicSpace) {
  const int connectivity = GetParam();
  const std::uint32_t seed = test_seed();
  SCOPED_TRACE(describe_seed(seed));
  const std::vector<Extent3> extents =
      is_2d_connectivity(connectivity)
          ? std::vector<Extent3>{{1, 1, 1}, {37, 1, 1}, {129, 67, 1}, {513, 255, 1}}
          : std::vector<Extent3>{{1, 1, 1}, {1, 13, 1}, {33, 17, 9}, {64, 48, 40}};
  std::uint32_t volume_seed = seed;
  for (const Extent3& extent : extents) {
    for (double density : {0.05, 0.3, 0.6, 1.0}) {
      for (unsigned granularity : {1u, 4u}) {
        ASSERT_TRUE(statistics_match_itk(
            data::random_granular(extent, density, granularity, volume_seed++), connectivity))
            << extent.to_string() << ", density " << density << ", granularity " << granularity;
      }
    }
  }
}

TEST_P(ItkShapeStatistics, HilbertCurveAndRealVolumes) {
  const int connectivity = GetParam();
  if (is_2d_connectivity(connectivity)) {
    ASSERT_TRUE(statistics_match_itk(data::spiral({255, 129, 1}), connectivity));
    return;
  }
  ASSERT_TRUE(statistics_match_itk(data::hilbert(5, 128), connectivity));
  const std::filesystem::path brain =
      data_directory() / "brain_oasis1_neurite/OASIS_OAS1_0455_MR1/aligned_norm.nii.gz";
  if (!std::filesystem::exists(brain)) GTEST_SKIP() << "missing " << brain;
  ASSERT_TRUE(statistics_match_itk(read_otsu_binarized(brain), connectivity)) << brain;
  std::string missing;
  const Volume mitochondria = read_lucchi_mitochondria(&missing);
  if (!missing.empty()) GTEST_SKIP() << "missing " << missing;
  ASSERT_TRUE(statistics_match_itk(mitochondria, connectivity));
}

INSTANTIATE_TEST_SUITE_P(Connectivity, ItkShapeStatistics, ::testing::Values(6, 26, 4, 8),
                         connectivity_name);

// Label maps against ITK's ScalarConnectedComponentImageFilter with DistanceThreshold 0 and a
// mask of the non-background voxels: where the semantics agree (docs/itk.md), the same bytes.
template <typename TPixel>
::testing::AssertionResult label_map_matches_itk(
    const typename itk::Image<TPixel, 3>::Pointer& values, bool fully_connected, Backend backend) {
  using ValueImage = itk::Image<TPixel, 3>;
  auto mask = MaskImage::New();
  mask->CopyInformation(values);  // ITK checks that the mask lies where the image does
  mask->SetRegions(values->GetBufferedRegion());
  mask->Allocate();
  const std::size_t voxels = values->GetBufferedRegion().GetNumberOfPixels();
  for (std::size_t i = 0; i < voxels; ++i) {
    mask->GetBufferPointer()[i] = values->GetBufferPointer()[i] != 0;
  }
  using Filter = itk::ScalarConnectedComponentImageFilter<ValueImage, LabelImage, MaskImage>;
  auto filter = Filter::New();
  filter->SetInput(values);
  filter->SetMaskImage(mask);
  filter->SetDistanceThreshold(0);
  filter->SetFullyConnected(fully_connected);
  filter->Update();
  LabelOptions options;
  options.connectivity = fully_connected ? 26 : 6;
  options.backend = backend;
  const LabeledImage<3> ours = LabelEachValue(values.GetPointer(), options);
  // The functor filter leaves GetObjectCount() at 0 and gaps between its labels (each
  // component keeps a provisional label of its own): renumber them in raster order of their
  // first voxel, the partition compared as it is.
  const unsigned int* itk_labels = filter->GetOutput()->GetBufferPointer();
  std::vector<unsigned int> theirs(voxels, 0);
  std::unordered_map<unsigned int, unsigned int> renumbered;
  for (std::size_t i = 0; i < voxels; ++i) {
    if (itk_labels[i] == 0) continue;
    const auto next = static_cast<unsigned int>(renumbered.size() + 1);
    theirs[i] = renumbered.emplace(itk_labels[i], next).first->second;
  }
  const auto their_count = static_cast<unsigned int>(renumbered.size());
  if (ours.Result.component_count != their_count) {
    return ::testing::AssertionFailure()
           << ours.Result.component_count << " components, ITK " << their_count;
  }
  // The same into 64-bit labels (LabelEachValue<std::uint64_t>).
  const LabeledImage<3, std::uint64_t> wide =
      LabelEachValue<std::uint64_t>(values.GetPointer(), options);
  if (wide.Result.component_count != their_count) {
    return ::testing::AssertionFailure()
           << wide.Result.component_count << " components in 64-bit labels, ITK " << their_count;
  }
  for (std::size_t i = 0; i < voxels; ++i) {
    if (ours.Labels->GetBufferPointer()[i] != theirs[i] ||
        wide.Labels->GetBufferPointer()[i] != theirs[i]) {
      return ::testing::AssertionFailure()
             << "voxel " << i << ": " << ours.Labels->GetBufferPointer()[i] << ", in 64 bits "
             << wide.Labels->GetBufferPointer()[i] << ", ITK " << theirs[i];
    }
  }
  return ::testing::AssertionSuccess();
}

TEST(ItkScalarConnectedComponents, RandomLabelMapsAndTheSeg35Map) {
  const std::uint32_t seed = test_seed();
  SCOPED_TRACE(describe_seed(seed));
  std::mt19937 random(seed);
  for (Backend backend : {Backend::cpu, Backend::cuda}) {
    if (backend == Backend::cuda && !cuda_available()) continue;
    for (unsigned granularity : {1u, 3u}) {
      for (unsigned value_count : {2u, 9u, 300u}) {
        using ValueImage = itk::Image<std::int16_t, 3>;
        auto values = ValueImage::New();
        ValueImage::SizeType size = {{37, 29, 23}};
        values->SetRegions(size);
        values->Allocate();
        std::int16_t* voxels = values->GetBufferPointer();
        std::uniform_int_distribution<int> pick(-static_cast<int>(value_count) / 2,
                                                static_cast<int>(value_count) / 2);
        std::vector<std::int16_t> cells(37 * 29 * 23);
        for (auto& cell : cells) cell = static_cast<std::int16_t>(pick(random));
        for (unsigned z = 0; z < 23; ++z) {
          for (unsigned y = 0; y < 29; ++y) {
            for (unsigned x = 0; x < 37; ++x) {
              voxels[(z * 29 + y) * 37 + x] =
                  cells[((z / granularity) * 29 + y / granularity) * 37 + x / granularity];
            }
          }
        }
        for (bool fully_connected : {false, true}) {
          EXPECT_TRUE(label_map_matches_itk<std::int16_t>(values, fully_connected, backend))
              << value_count << " values, granularity " << granularity << ", "
              << to_string(backend);
        }
      }
    }
    const std::filesystem::path seg35 =
        data_directory() / "brain_oasis1_neurite/OASIS_OAS1_0455_MR1/aligned_seg35.nii.gz";
    if (!std::filesystem::exists(seg35)) continue;
    const auto map = itk::ReadImage<itk::Image<std::uint8_t, 3>>(seg35.string());
    for (bool fully_connected : {false, true}) {
      EXPECT_TRUE(label_map_matches_itk<std::uint8_t>(map, fully_connected, backend)) << seg35;
    }
  }
}

}  // namespace
}  // namespace volccl::test
