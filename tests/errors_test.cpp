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

TEST(Errors, ConnectivityThatDoesNotExistIsInvalid) {
  std::vector<std::uint8_t> mask(8, 1);
  std::vector<std::uint32_t> labels(8);
  for (Algorithm algorithm : {Algorithm::automatic, Algorithm::uf, Algorithm::buf}) {
    for (int connectivity : {27, 0, -6, 10, 5}) {
      LabelOptions options;
      options.algorithm = algorithm;
      options.connectivity = connectivity;
      for (const Extent3& extent : {Extent3{2, 2, 2}, Extent3{4, 2, 1}}) {
        EXPECT_THROW(validate(extent, options), InvalidArgument) << connectivity;
        EXPECT_THROW(label(mask.data(), extent, labels.data(), options), InvalidArgument)
            << connectivity;
      }
    }
  }
  LabelOptions options;
  options.connectivity = 10;
  try {
    validate({2, 2, 2}, options);
    FAIL() << "validate accepted connectivity 10";
  } catch (const InvalidArgument& error) {
    EXPECT_NE(std::string(error.what()).find("connectivity 10"), std::string::npos) << error.what();
  }
}

// 4 and 8 label 2D images: a volume of more than one slice is refused, with its extent named.
TEST(Errors, TwoDimensionalConnectivityNeedsOneSlice) {
  std::vector<std::uint8_t> mask(8, 1);
  std::vector<std::uint32_t> labels(8);
  for (Algorithm algorithm : {Algorithm::automatic, Algorithm::uf, Algorithm::ha4}) {
    for (int connectivity : {4, 8}) {
      LabelOptions options;
      options.algorithm = algorithm;
      options.connectivity = connectivity;
      EXPECT_THROW(label(mask.data(), {2, 2, 2}, labels.data(), options), InvalidArgument);
      try {
        validate({2, 2, 2}, options);
        ADD_FAILURE() << "validate accepted " << connectivity << " on a volume";
      } catch (const InvalidArgument& error) {
        EXPECT_NE(std::string(error.what()).find("2x2x2"), std::string::npos) << error.what();
      }
      EXPECT_NO_THROW(validate({8, 1, 1}, options));
    }
  }
}

// KE, HA4, LE and TM are 2D algorithms: a volume connectivity is refused with the algorithm named,
// never silently handed to another labeler.
TEST(Errors, TwoDimensionalAlgorithmsRefuseVolumes) {
  std::vector<std::uint8_t> mask(8, 1);
  std::vector<std::uint32_t> labels(8);
  for (Algorithm algorithm :
       {Algorithm::ke, Algorithm::ha4, Algorithm::ha4_64, Algorithm::le, Algorithm::tm}) {
    for (int connectivity : {6, 18, 26}) {
      LabelOptions options;
      options.algorithm = algorithm;
      options.connectivity = connectivity;
      for (const Extent3& extent : {Extent3{2, 2, 2}, Extent3{8, 1, 1}}) {
        EXPECT_THROW(label(mask.data(), extent, labels.data(), options), InvalidArgument);
        try {
          validate(extent, options);
          ADD_FAILURE() << "validate accepted " << to_string(algorithm) << " at " << connectivity;
        } catch (const InvalidArgument& error) {
          const std::string message = error.what();
          EXPECT_NE(message.find(to_string(algorithm)), std::string::npos) << message;
          EXPECT_NE(message.find("2D"), std::string::npos) << message;
        }
      }
    }
  }
}

// A 2x2x2 block is one piece only under 26-connectivity: the block-based algorithms refuse 6
// and 18 and name themselves; UF and automatic take all three.
TEST(Errors, BlockAlgorithmsNeedConnectivity26) {
  std::vector<std::uint8_t> mask(8, 1);
  std::vector<std::uint32_t> labels(8);
  for (Algorithm algorithm :
       {Algorithm::buf, Algorithm::buf_ic, Algorithm::bke, Algorithm::bke_ic}) {
    for (int connectivity : {6, 18}) {
      LabelOptions options;
      options.algorithm = algorithm;
      options.connectivity = connectivity;
      EXPECT_THROW(label(mask.data(), {2, 2, 2}, labels.data(), options), InvalidArgument);
      try {
        validate({2, 2, 2}, options);
        ADD_FAILURE() << "validate accepted " << to_string(algorithm) << " at " << connectivity;
      } catch (const InvalidArgument& error) {
        const std::string message = error.what();
        EXPECT_NE(message.find(to_string(algorithm)), std::string::npos) << message;
        EXPECT_NE(message.find(std::to_string(connectivity)), std::string::npos) << message;
      }
    }
    LabelOptions options;
    options.algorithm = algorithm;
    EXPECT_NO_THROW(validate({2, 2, 2}, options)) << to_string(algorithm);
    options.connectivity = 4;
    EXPECT_THROW(validate({2, 2, 1}, options), InvalidArgument) << to_string(algorithm);
    options.connectivity = 8;
    EXPECT_NO_THROW(validate({2, 2, 1}, options)) << to_string(algorithm);
  }
  for (Algorithm algorithm : {Algorithm::uf, Algorithm::automatic}) {
    for (int connectivity : {6, 18, 26}) {
      LabelOptions options;
      options.algorithm = algorithm;
      options.connectivity = connectivity;
      EXPECT_NO_THROW(validate({2, 2, 2}, options)) << to_string(algorithm) << " " << connectivity;
    }
  }
  EXPECT_NO_THROW(validate({2, 2, 2}, {}));
}

// UFB's 2x1x1 and 2x2x1 blocks serve 6 and 18 only, RUF's runs every volume connectivity: the
// others are refused with the algorithm and the connectivity named.
TEST(Errors, UfbAndRufRefuseTheConnectivitiesTheyLack) {
  std::vector<std::uint8_t> mask(8, 1);
  std::vector<std::uint32_t> labels(8);
  struct Connectivities {
    Algorithm algorithm;
    std::vector<int> refused, taken;
  };
  for (const Connectivities& entry : {Connectivities{Algorithm::ufb, {26, 8, 4}, {6, 18}},
                                      Connectivities{Algorithm::ruf, {8, 4}, {6, 18, 26}}}) {
    const std::string name = to_string(entry.algorithm);
    LabelOptions options;
    options.algorithm = entry.algorithm;
    for (int connectivity : entry.refused) {
      options.connectivity = connectivity;
      const Extent3 extent = connectivity == 26 ? Extent3{2, 2, 2} : Extent3{4, 2, 1};
      EXPECT_THROW(label(mask.data(), extent, labels.data(), options), InvalidArgument);
      try {
        validate(extent, options);
        ADD_FAILURE() << "validate accepted " << name << " at " << connectivity;
      } catch (const InvalidArgument& error) {
        const std::string message = error.what();
        EXPECT_NE(message.find(name), std::string::npos) << message;
        EXPECT_NE(message.find(std::to_string(connectivity)), std::string::npos) << message;
      }
    }
    for (int connectivity : entry.taken) {
      options.connectivity = connectivity;
      EXPECT_NO_THROW(validate({2, 2, 2}, options)) << name << " " << connectivity;
      EXPECT_NO_THROW(validate({4, 2, 1}, options)) << name << " " << connectivity;
    }
  }
}

TEST(Names, SupportsTable) {
  for (int connectivity : {6, 18, 26}) {
    EXPECT_TRUE(supports(Algorithm::automatic, connectivity)) << connectivity;
    EXPECT_TRUE(supports(Algorithm::uf, connectivity)) << connectivity;
    EXPECT_EQ(supports(Algorithm::ufb, connectivity), connectivity != 26) << connectivity;
    EXPECT_TRUE(supports(Algorithm::ruf, connectivity)) << connectivity;
    for (Algorithm algorithm :
         {Algorithm::buf, Algorithm::buf_ic, Algorithm::bke, Algorithm::bke_ic}) {
      EXPECT_EQ(supports(algorithm, connectivity), connectivity == 26)
          << to_string(algorithm) << " " << connectivity;
    }
    for (Algorithm algorithm :
         {Algorithm::ke, Algorithm::ha4, Algorithm::ha4_64, Algorithm::le, Algorithm::tm}) {
      EXPECT_FALSE(supports(algorithm, connectivity))
          << to_string(algorithm) << " " << connectivity;
    }
  }
  for (int connectivity : {4, 8}) {
    for (Algorithm algorithm : {Algorithm::automatic, Algorithm::uf, Algorithm::ke, Algorithm::ha4,
                                Algorithm::ha4_64, Algorithm::le, Algorithm::tm}) {
      EXPECT_TRUE(supports(algorithm, connectivity)) << to_string(algorithm) << " " << connectivity;
    }
    EXPECT_FALSE(supports(Algorithm::ufb, connectivity)) << connectivity;
    EXPECT_FALSE(supports(Algorithm::ruf, connectivity)) << connectivity;
    for (Algorithm algorithm :
         {Algorithm::buf, Algorithm::buf_ic, Algorithm::bke, Algorithm::bke_ic}) {
      EXPECT_EQ(supports(algorithm, connectivity), connectivity == 8)
          << to_string(algorithm) << " " << connectivity;
    }
  }
  for (int connectivity : {0, 5, 27}) {
    EXPECT_FALSE(supports(Algorithm::automatic, connectivity)) << connectivity;
    for (Algorithm algorithm : all_algorithms()) {
      EXPECT_FALSE(supports(algorithm, connectivity))
          << to_string(algorithm) << " " << connectivity;
    }
  }
}

TEST(Errors, TooManyVoxelsIsInvalid) {
  EXPECT_NO_THROW(validate({max_slab_voxel_count, 1, 1}, {}));
  EXPECT_THROW(validate({max_slab_voxel_count + 1, 1, 1}, {}), InvalidArgument);
  // Past 2^32 voxels label() takes slabs; past 2^40 nothing.
  EXPECT_NO_THROW(validate({2048, 2048, 1025}, {}));
  EXPECT_THROW(validate({1 << 15, 1 << 15, (1 << 10) + 1}, {}), InvalidArgument);
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
  EXPECT_THROW(parse_algorithm("automatic"), InvalidArgument);
  EXPECT_THROW(parse_backend("nope"), InvalidArgument);
}

TEST(Names, RoundTrip) {
  EXPECT_EQ(all_algorithms(),
            (std::vector<Algorithm>{
                Algorithm::buf, Algorithm::buf_ic, Algorithm::bke, Algorithm::bke_ic, Algorithm::uf,
                Algorithm::ufb, Algorithm::ruf, Algorithm::ke, Algorithm::ha4, Algorithm::ha4_64,
                Algorithm::le, Algorithm::tm, Algorithm::rts}));
  for (Algorithm algorithm : all_algorithms()) {
    EXPECT_EQ(parse_algorithm(to_string(algorithm)), algorithm) << to_string(algorithm);
  }
  EXPECT_EQ(parse_algorithm(to_string(Algorithm::automatic)), Algorithm::automatic);
  for (Backend backend : {Backend::automatic, Backend::cuda, Backend::cpu}) {
    EXPECT_EQ(parse_backend(to_string(backend)), backend) << to_string(backend);
  }
  EXPECT_EQ(to_string(Algorithm::automatic), "auto");
  EXPECT_EQ(to_string(Algorithm::buf), "buf");
  EXPECT_EQ(to_string(Algorithm::buf_ic), "buf-ic");
  EXPECT_EQ(to_string(Algorithm::bke), "bke");
  EXPECT_EQ(to_string(Algorithm::bke_ic), "bke-ic");
  EXPECT_EQ(to_string(Algorithm::uf), "uf");
  EXPECT_EQ(to_string(Algorithm::ufb), "ufb");
  EXPECT_EQ(to_string(Algorithm::ruf), "ruf");
  EXPECT_EQ(to_string(Algorithm::ke), "ke");
  EXPECT_EQ(to_string(Algorithm::ha4), "ha4");
  EXPECT_EQ(to_string(Algorithm::ha4_64), "ha4-64");
  EXPECT_EQ(to_string(Algorithm::le), "le");
  EXPECT_EQ(to_string(Algorithm::tm), "tm");
  EXPECT_EQ(parse_algorithm("auto"), Algorithm::automatic);
  EXPECT_EQ(parse_algorithm("uf"), Algorithm::uf);
  EXPECT_EQ(parse_algorithm("ufb"), Algorithm::ufb);
  EXPECT_EQ(parse_algorithm("ruf"), Algorithm::ruf);
  EXPECT_EQ(to_string(Backend::automatic), "auto");
  EXPECT_EQ((Extent3{3, 2, 1}).to_string(), "3x2x1");
}

}  // namespace
}  // namespace volccl::test
