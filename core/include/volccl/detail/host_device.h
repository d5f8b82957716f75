// Small building blocks shared by the CUDA kernels and the CPU backend: the host/device
// qualifier, relaxed loads, atomic minimum and OR, bit scans and a division by a run-time
// constant. Compiled by nvcc for the kernels and by the host compiler for the CPU backend.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define VOLCCL_HD __host__ __device__ __forceinline__
#else
#define VOLCCL_HD inline
#endif

// Unrolls the next loop in nvcc's device pass and for the CPU backend; nvcc's host pass, whose
// code nothing calls, leaves it alone.
#if defined(__CUDA_ARCH__)
#define VOLCCL_UNROLL _Pragma("unroll")
#elif defined(__CUDACC__)
#define VOLCCL_UNROLL
#else
#define VOLCCL_UNROLL _Pragma("GCC unroll 64")
#endif

namespace volccl::detail {

// Reads a word other threads may be writing. On the GPU a plain load, which L1 may serve: a
// stale parent pointer still points at an ancestor, and Union re-checks every root with an
// atomic (BUF/BKE paper Alg. 1). On the CPU a relaxed atomic load, so the concurrent union-find
// of the CPU backend has no data race.
VOLCCL_HD std::uint32_t load_relaxed(const std::uint32_t* address) {
#if defined(__CUDA_ARCH__)
  return *address;
#else
  return __atomic_load_n(address, __ATOMIC_RELAXED);
#endif
}

VOLCCL_HD void store_relaxed(std::uint32_t* address, std::uint32_t value) {
#if defined(__CUDA_ARCH__)
  *address = value;
#else
  __atomic_store_n(address, value, __ATOMIC_RELAXED);
#endif
}

// Returns the old value, as CUDA's atomicMin does.
VOLCCL_HD std::uint32_t atomic_min(std::uint32_t* address, std::uint32_t value) {
#if defined(__CUDA_ARCH__)
  return atomicMin(address, value);
#else
  std::uint32_t old = __atomic_load_n(address, __ATOMIC_RELAXED);
  while (value < old && !__atomic_compare_exchange_n(address, &old, value, true, __ATOMIC_RELAXED,
                                                     __ATOMIC_RELAXED)) {
  }
  return old;
#endif
}

VOLCCL_HD void atomic_or(std::uint32_t* address, std::uint32_t bits) {
#if defined(__CUDA_ARCH__)
  atomicOr(address, bits);
#else
  __atomic_fetch_or(address, bits, __ATOMIC_RELAXED);
#endif
}

// Index of the lowest set bit; `bits` must not be 0.
VOLCCL_HD int lowest_bit(std::uint64_t bits) {
#if defined(__CUDA_ARCH__)
  return __ffsll(static_cast<long long>(bits)) - 1;
#else
  return __builtin_ctzll(bits);
#endif
}

VOLCCL_HD int lowest_bit(std::uint32_t bits) {
#if defined(__CUDA_ARCH__)
  return __ffs(static_cast<int>(bits)) - 1;
#else
  return __builtin_ctz(bits);
#endif
}

VOLCCL_HD std::uint32_t popcount(std::uint32_t bits) {
#if defined(__CUDA_ARCH__)
  return static_cast<std::uint32_t>(__popc(bits));
#else
  return static_cast<std::uint32_t>(__builtin_popcount(bits));
#endif
}

// Divides 32-bit numerators by a divisor fixed at run time with one 64-bit high multiply:
// with m = floor((2^64 - 1) / d) + 1, floor(n * m / 2^64) == floor(n / d) for all n, d < 2^32
// (the error n * (m - 2^64 / d) / 2^64 stays below 2^-32 < 1/d). d == 1 keeps m == 0 and is
// handled apart.
class Divisor {
 public:
  Divisor() = default;
  explicit Divisor(std::uint32_t divisor)
      : divisor_(divisor), multiplier_(divisor > 1 ? ~0ull / divisor + 1 : 0) {}

  VOLCCL_HD std::uint32_t divisor() const { return divisor_; }

  VOLCCL_HD std::uint32_t quotient(std::uint32_t numerator) const {
    if (multiplier_ == 0) return numerator;
#if defined(__CUDA_ARCH__)
    return static_cast<std::uint32_t>(__umul64hi(numerator, multiplier_));
#else
    __extension__ using Wide = unsigned __int128;
    return static_cast<std::uint32_t>((static_cast<Wide>(numerator) * multiplier_) >> 64);
#endif
  }

 private:
  std::uint32_t divisor_ = 1;
  std::uint64_t multiplier_ = 0;
};

}  // namespace volccl::detail
