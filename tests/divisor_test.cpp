// The division by a run-time constant that maps a union-find key to its block (host_device.h):
// both of its methods against the division operator, at the boundaries and at random.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>

#include "runtime/host_device.h"
#include "test_support.h"

namespace volccl::test {
namespace {

void expect_exact(std::uint32_t divisor, std::uint64_t numerator_limit, std::mt19937_64& random) {
  const detail::Divisor by(divisor, numerator_limit);
  const std::uint64_t last = numerator_limit - 1;
  const std::uint64_t last_multiple = last / divisor * divisor;
  for (std::uint64_t n : {std::uint64_t{0}, std::uint64_t{1}, last, last - 1, last_multiple,
                          last_multiple - (last_multiple > 0 ? 1 : 0)}) {
    ASSERT_EQ(by.quotient(static_cast<std::uint32_t>(n)), n / divisor)
        << "divisor " << divisor << ", numerator " << n << ", limit " << numerator_limit;
  }
  for (int k = 0; k < 64; ++k) {
    const auto n = static_cast<std::uint32_t>(random() % numerator_limit);
    ASSERT_EQ(by.quotient(n), n / divisor)
        << "divisor " << divisor << ", numerator " << n << ", limit " << numerator_limit;
  }
}

TEST(Divisor, ExactForEveryDivisorAndNumeratorRange) {
  const std::uint32_t seed = test_seed();
  SCOPED_TRACE(describe_seed(seed));
  std::mt19937_64 random(seed);
  for (std::uint64_t limit : {std::uint64_t{1} << 31, std::uint64_t{0xFFFFFFFFull}}) {
    for (std::uint32_t divisor = 1; divisor <= 4096; ++divisor) {
      expect_exact(divisor, limit, random);
    }
    for (int k = 0; k < 4096; ++k) {
      expect_exact(static_cast<std::uint32_t>(random() % 0xFFFFFFFFull) + 1, limit, random);
    }
  }
}

}  // namespace
}  // namespace volccl::test
