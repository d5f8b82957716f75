// Bad input is refused with volccl's exceptions, and names survive a round trip.
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "volccl/volccl.h"

namespace volccl::test {
namespace {

TEST(Errors, ZeroExtentIsInvalid) {
  std::uint8_t mask = 1;
  std::uint32_t label_buffer = 0;
  for (const Extent3& extent : {Extent3{0, 4, 4}, Extent3{4, 0, 4}, Extent3{4, 4, 0}}) {
    EXPECT_THROW(validate(extent, {}), InvalidArgument) << extent.to_string();
    EXPECT_THROW(label(&mask, extent, &label_buffer), InvalidArgument) << extent.to_string();
  }
}

TEST(Errors, MessagesNameTheExtent) {
  const Extent3 extent{7, 0, 3};
  try {
    validate(extent, {});
    FAIL() << "validate accepted " << extent.to_string();
  } catch (const InvalidArgument& error) {
    EXPECT_NE(std::string(error.what()).find(extent.to_string()), std::string::npos)
        << error.what();
  }
}

TEST(Errors, OnlyConnectivity26IsSupported) {
  std::vector<std::uint8_t> mask(8, 1);
  std::vector<std::uint32_t> labels(8);
  for (int connectivity : {4, 6, 8, 18, 0, 27}) {
    LabelOptions options;
    options.connectivity = connectivity;
    EXPECT_THROW(validate({2, 2, 2}, options), InvalidArgument) << connectivity;
    EXPECT_THROW(label(mask.data(), {2, 2, 2}, labels.data(), options), InvalidArgument)
        << connectivity;
  }
  EXPECT_NO_THROW(validate({2, 2, 2}, {}));
}

TEST(Errors, TooManyVoxelsIsInvalid) {
  EXPECT_NO_THROW(validate({max_voxel_count, 1, 1}, {}));
  EXPECT_THROW(validate({max_voxel_count + 1, 1, 1}, {}), InvalidArgument);
  EXPECT_THROW(validate({2048, 2048, 1025}, {}), InvalidArgument);
  // A product that wraps around 64 bits must not pass as small.
  EXPECT_THROW(validate({std::uint64_t{1} << 32, std::uint64_t{1} << 32, 1}, {}), InvalidArgument);
}

TEST(Errors, CudaBackendWithoutDeviceThrowsNoCudaDevice) {
  if (cuda_available()) GTEST_SKIP() << "a CUDA device is present: " << cuda_device_description();
  std::vector<std::uint8_t> mask(8, 1);
  std::vector<std::uint32_t> labels(8);
  LabelOptions options;
  options.backend = Backend::cuda;
  EXPECT_THROW(label(mask.data(), {2, 2, 2}, labels.data(), options), NoCudaDevice);
  EXPECT_FALSE(cuda_device_description().empty());
}

TEST(Names, UnknownNamesAreInvalid) {
  EXPECT_THROW(parse_algorithm("nope"), InvalidArgument);
  EXPECT_THROW(parse_algorithm(""), InvalidArgument);
  EXPECT_THROW(parse_backend("nope"), InvalidArgument);
}

TEST(Names, RoundTrip) {
  EXPECT_EQ(all_algorithms().size(), 4u);
  for (Algorithm algorithm : all_algorithms()) {
    EXPECT_EQ(parse_algorithm(to_string(algorithm)), algorithm) << to_string(algorithm);
  }
  for (Backend backend : {Backend::automatic, Backend::cuda, Backend::cpu}) {
    EXPECT_EQ(parse_backend(to_string(backend)), backend) << to_string(backend);
  }
  EXPECT_EQ(to_string(Algorithm::buf), "buf");
  EXPECT_EQ(to_string(Algorithm::buf_ic), "buf-ic");
  EXPECT_EQ(to_string(Algorithm::bke), "bke");
  EXPECT_EQ(to_string(Algorithm::bke_ic), "bke-ic");
  EXPECT_EQ(to_string(Backend::automatic), "auto");
  EXPECT_EQ((Extent3{3, 2, 1}).to_string(), "3x2x1");
}

}  // namespace
}  // namespace volccl::test
