// Small building blocks shared by the CUDA kernels and the CPU backend: the host/device
// qualifier, relaxed loads, atomic minimum, OR and AND, bit scans, the non-zero bytes of a word and
// a division by a run-time constant. Compiled by nvcc for the kernels and by the host compiler for
// the CPU backend.
#pragma once

#include <cstdint>
#include <cstring>

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

VOLCCL_HD void atomic_max(std::uint32_t* address, std::uint32_t value) {
#if defined(__CUDA_ARCH__)
  atomicMax(address, value);
#else
  std::uint32_t old = __atomic_load_n(address, __ATOMIC_RELAXED);
  while (value > old && !__atomic_compare_exchange_n(address, &old, value, true, __ATOMIC_RELAXED,
                                                     __ATOMIC_RELAXED)) {
  }
#endif
}

VOLCCL_HD void atomic_add(std::uint64_t* address, std::uint64_t value) {
#if defined(__CUDA_ARCH__)
  atomicAdd(reinterpret_cast<unsigned long long*>(address), value);
#else
  __atomic_fetch_add(address, value, __ATOMIC_RELAXED);
#endif
}

VOLCCL_HD void atomic_or(std::uint32_t* address, std::uint32_t bits) {
#if defined(__CUDA_ARCH__)
  atomicOr(address, bits);
#else
  __atomic_fetch_or(address, bits, __ATOMIC_RELAXED);
#endif
}

VOLCCL_HD void atomic_and(std::uint32_t* address, std::uint32_t bits) {
#if defined(__CUDA_ARCH__)
  atomicAnd(address, bits);
#else
  __atomic_fetch_and(address, bits, __ATOMIC_RELAXED);
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

// Index of the highest set bit; `bits` must not be 0.
VOLCCL_HD int highest_bit(std::uint32_t bits) {
#if defined(__CUDA_ARCH__)
  return 31 - __clz(static_cast<int>(bits));
#else
  return 31 - __builtin_clz(bits);
#endif
}

VOLCCL_HD int highest_bit(std::uint64_t bits) {
#if defined(__CUDA_ARCH__)
  return 63 - __clzll(static_cast<long long>(bits));
#else
  return 63 - __builtin_clzll(bits);
#endif
}

VOLCCL_HD std::uint32_t popcount(std::uint32_t bits) {
#if defined(__CUDA_ARCH__)
  return static_cast<std::uint32_t>(__popc(bits));
#else
  return static_cast<std::uint32_t>(__builtin_popcount(bits));
#endif
}

// Bit i set when byte i of `word` (little-endian) is non-zero.
VOLCCL_HD std::uint32_t nonzero_byte_bits(std::uint32_t word) {
  // The high bit of each byte: set when the byte is non-zero.
  const std::uint32_t high = (((word & 0x7F7F7F7Fu) + 0x7F7F7F7Fu) | word) & 0x80808080u;
  // Gather bits 7, 15, 23 and 31 into bits 28..31 (no carries: the partial products never meet).
  return ((high >> 7) * 0x10204080u) >> 28;
}

// Bit i set when byte i of the four at `bytes` is non-zero. On the GPU from the two aligned
// words that hold them; a caller must allow reads of up to 3 bytes before and 4 after.
VOLCCL_HD std::uint32_t nonzero_bytes4(const std::uint8_t* bytes) {
  std::uint32_t word;
#if defined(__CUDA_ARCH__)
  const auto address = reinterpret_cast<std::uintptr_t>(bytes);
  const auto* aligned = reinterpret_cast<const std::uint32_t*>(address & ~std::uintptr_t{3});
  word = __funnelshift_r(aligned[0], aligned[1], 8 * static_cast<std::uint32_t>(address & 3));
#else
  std::memcpy(&word, bytes, sizeof word);
#endif
  return nonzero_byte_bits(word);
}

// Divides 32-bit numerators by a divisor fixed at run time without a division instruction.
// Numerators below 2^31 (every voxel index of a volume under 2^31 voxels) take one 32-bit high
// multiply and a shift: with l = ceil(log2 d) and m = ceil(2^(31+l) / d), which fits in 32
// bits, floor(n / d) == floor(n * m / 2^(31+l)) (Granlund and Montgomery, PLDI 1994, Thm. 4.2).
// Larger numerators take a 64-bit high multiply: with M = floor((2^64 - 1) / d) + 1,
// floor(n * M / 2^64) == floor(n / d), as the error n * (M - 2^64 / d) / 2^64 stays below
// 2^-32 < 1 / d. d == 1 is handled apart.
class Divisor {
 public:
  Divisor() = default;
  Divisor(std::uint32_t divisor, std::uint64_t numerator_limit) {
    if (divisor <= 1) return;
    int l = 0;
    while ((std::uint64_t{1} << l) < divisor) ++l;
    if (numerator_limit <= (std::uint64_t{1} << 31)) {
      multiplier31_ =
          static_cast<std::uint32_t>(((std::uint64_t{1} << (31 + l)) + divisor - 1) / divisor);
      shift31_ = l - 1;
    } else {
      multiplier64_ = ~0ull / divisor + 1;
    }
  }

  VOLCCL_HD std::uint32_t quotient(std::uint32_t numerator) const {
    if (multiplier31_ != 0) {
#if defined(__CUDA_ARCH__)
      return __umulhi(numerator, multiplier31_) >> shift31_;
#else
      return static_cast<std::uint32_t>((std::uint64_t{numerator} * multiplier31_) >>
                                        (32 + shift31_));
#endif
    }
    if (multiplier64_ != 0) {
#if defined(__CUDA_ARCH__)
      return static_cast<std::uint32_t>(__umul64hi(numerator, multiplier64_));
#else
      __extension__ using Wide = unsigned __int128;
      return static_cast<std::uint32_t>((static_cast<Wide>(numerator) * multiplier64_) >> 64);
#endif
    }
    return numerator;
  }

 private:
  std::uint32_t multiplier31_ = 0;
  int shift31_ = 0;
  std::uint64_t multiplier64_ = 0;
};

}  // namespace volccl::detail
