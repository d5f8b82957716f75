// A label map whose foreground holds a single value, a mask stored as 0/1 or 0/255 as
// cc3d.connected_components takes it by default, has the components of its mask, numbered alike.
// `auto` labels such a map through the mask's algorithm, several times faster on the GPU than the
// label map's, whose words compare every voxel with each neighbour's value. The check reads the
// values once where they hold one value, and stops after a round of loads on most maps that hold
// several: a block whose threads saw two values says so, and every few rounds each block
// publishes the range of the values it saw, reads the range back and leaves once it holds two. It
// runs before the label map's first kernel, which leaves at once where it found one value, and the
// host waits for its verdict while that kernel runs. It writes the mask as it reads, where the
// values are wider than a byte or the background is not 0 (8-bit values with background 0 are their
// own mask); the mask is freed as soon as the verdict says several values.
#include "runtime/one_value.cuh"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <type_traits>

#include "runtime/cuda_support.cuh"
#include "runtime/voxel_input.h"
#include "volccl/error.h"

namespace volccl::detail {
namespace {

constexpr std::uint32_t kWarp = 32;
constexpr std::uint32_t kFullWarp = 0xFFFFFFFFu;
constexpr std::uint32_t kThreads = 256;
constexpr std::uint32_t kVectorBytes = 16;
// Vectors a thread loads a round, spread over the volume (`threads` vectors apart), so that
// enough bytes are in flight with two blocks a multiprocessor, and a map of many values shows
// two in most threads' first round.
constexpr int kVectorsPerRound = 8;
// Rounds between a block's comparisons with the other blocks' values.
constexpr int kRoundsPerExchange = 4;

template <class T>
constexpr int kValuesPerVector = static_cast<int>(kVectorBytes / sizeof(T));

// `count` bytes of a mask (1 foreground, 0 background) stored at once: the bytes of one vector.
template <int kCount>
__device__ void store_mask_bytes(std::uint8_t* mask, const std::uint8_t (&bytes)[kCount]) {
  if constexpr (kCount == 16) {
    uint4 packed;
    memcpy(&packed, bytes, sizeof(packed));
    *reinterpret_cast<uint4*>(mask) = packed;
  } else if constexpr (kCount == 8) {
    uint2 packed;
    memcpy(&packed, bytes, sizeof(packed));
    *reinterpret_cast<uint2*>(mask) = packed;
  } else if constexpr (kCount == 4) {
    std::uint32_t packed;
    memcpy(&packed, bytes, sizeof(packed));
    *reinterpret_cast<std::uint32_t*>(mask) = packed;
  } else {
    static_assert(kCount == 2, "a vector holds 2, 4, 8 or 16 values");
    std::uint16_t packed;
    memcpy(&packed, bytes, sizeof(packed));
    *reinterpret_cast<std::uint16_t*>(mask) = packed;
  }
}

// Widens [lowest, highest] to take in `value` where it is foreground; returns whether it is.
template <class T>
__device__ bool take_in_value(T value, T background, unsigned long long& lowest,
                              unsigned long long& highest) {
  const auto bits = static_cast<unsigned long long>(value);
  const bool foreground = value != background;
  lowest = foreground && bits < lowest ? bits : lowest;
  highest = foreground && bits > highest ? bits : highest;
  return foreground;
}

// Takes in the values of `vector`, and writes their mask bytes at `mask` unless it is null.
template <class T>
__device__ void take_in(const uint4& vector, T background, unsigned long long& lowest,
                        unsigned long long& highest, std::uint8_t* mask) {
  T read[kValuesPerVector<T>];
  memcpy(read, &vector, sizeof(vector));
  std::uint8_t bytes[kValuesPerVector<T>];
  VOLCCL_UNROLL
  for (int k = 0; k < kValuesPerVector<T>; ++k) {
    bytes[k] = take_in_value(read[k], background, lowest, highest) ? 1 : 0;
  }
  if (mask != nullptr) store_mask_bytes(mask, bytes);
}

// Each thread takes kVectorsPerRound vectors of 16 bytes a round (and writes their mask bytes
// where `mask` is not null). A block in which a thread has seen two values clears `single` and
// stops; every kRoundsPerExchange rounds, and at its end, a block adds its range to the global
// one (where it widens what it published before) and stops once the global range holds two
// values: a block's atomics, not a warp's, so that thousands of warps do not queue on two words.
// Block 0 also takes the values after the last vector. The last block to stop writes the verdict
// into mapped pinned host memory: 1 for one value (or none), 2 for several.
template <class T>
__global__ void __launch_bounds__(kThreads)
    find_one_value(const T* values, std::uint64_t count, T background, std::uint8_t* mask,
                   ValueRange* range, std::uint32_t* verdict) {
  constexpr std::uint32_t kWarps = kThreads / kWarp;
  __shared__ unsigned long long warp_lowest[kWarps], warp_highest[kWarps];
  __shared__ bool stop;
  const std::uint64_t vectors = count / kValuesPerVector<T>;
  const std::uint32_t lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  unsigned long long lowest = ~0ull, highest = 0;
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    for (std::uint64_t i = vectors * kValuesPerVector<T>; i < count; ++i) {
      const bool foreground = take_in_value(values[i], background, lowest, highest);
      if (mask != nullptr) mask[i] = foreground ? 1 : 0;
    }
  }
  const std::uint64_t threads = std::uint64_t{gridDim.x} * blockDim.x;
  const std::uint64_t thread = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  const auto* vector_at = reinterpret_cast<const uint4*>(values);
  unsigned long long published_lowest = ~0ull, published_highest = 0;
  // The block's threads agree on every exit: `first` and the barriers' answers are the same for
  // all.
  for (std::uint64_t first = 0, round = 0;; first += threads * kVectorsPerRound, ++round) {
    const bool last_round = first + threads * kVectorsPerRound >= vectors;
    uint4 loaded[kVectorsPerRound];
    VOLCCL_UNROLL
    for (int k = 0; k < kVectorsPerRound; ++k) {
      const std::uint64_t vector = first + k * threads + thread;
      loaded[k] = vector < vectors ? vector_at[vector] : uint4{};
    }
    VOLCCL_UNROLL
    for (int k = 0; k < kVectorsPerRound; ++k) {
      const std::uint64_t vector = first + k * threads + thread;
      if (vector < vectors) {
        take_in(loaded[k], background, lowest, highest,
                mask != nullptr ? mask + vector * kValuesPerVector<T> : nullptr);
      }
    }
    if (__syncthreads_or(lowest < highest) != 0) {
      if (threadIdx.x == 0) atomicExch(&range->single, 0u);
      break;
    }
    if (!last_round && round % kRoundsPerExchange != kRoundsPerExchange - 1) continue;
    unsigned long long block_lowest = lowest, block_highest = highest;
    VOLCCL_UNROLL
    for (std::uint32_t offset = kWarp / 2; offset > 0; offset /= 2) {
      block_lowest = min(block_lowest, __shfl_xor_sync(kFullWarp, block_lowest, offset));
      block_highest = max(block_highest, __shfl_xor_sync(kFullWarp, block_highest, offset));
    }
    if (lane == 0) {
      warp_lowest[warp] = block_lowest;
      warp_highest[warp] = block_highest;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      for (std::uint32_t w = 1; w < kWarps; ++w) {
        block_lowest = min(block_lowest, warp_lowest[w]);
        block_highest = max(block_highest, warp_highest[w]);
      }
      if (block_lowest <= block_highest &&
          (block_lowest < published_lowest || block_highest > published_highest)) {
        atomicMin(&range->lowest, block_lowest);
        atomicMin(&range->highest_complement, ~block_highest);
        published_lowest = block_lowest;
        published_highest = block_highest;
      }
      const volatile ValueRange* seen = range;
      stop = last_round || seen->single == 0 || seen->lowest < ~seen->highest_complement;
    }
    __syncthreads();
    if (stop) break;
  }
  if (threadIdx.x != 0) return;
  __threadfence();
  // blocks_stopped counts from all ones: the last block finds it at their number less two.
  if (atomicAdd(&range->blocks_stopped, 1u) + 2u != gridDim.x) return;
  __threadfence();
  *static_cast<volatile std::uint32_t*>(verdict) = holds_one_value(range) ? 1u : 2u;
  __threadfence_system();
}

}  // namespace

OneValueCheck::OneValueCheck(const LabelInput& input, std::uint64_t voxels, cudaStream_t stream)
    : input_(input), range_(1, stream, "a value range") {
  VOLCCL_CUDA_CHECK(cudaMemsetAsync(range_.data(), 0xFF, sizeof(ValueRange), stream));
  if (!is_own_mask(input)) {
    try {
      mask_.emplace(voxels, stream, "the mask of a label map of one value");
    } catch (const OutOfDeviceMemory&) {
      // Without room for its mask such a map is labeled as a label map.
    }
  }
  with_label_map(input, [&](const auto& map) {
    using T = std::remove_cv_t<std::remove_pointer_t<decltype(map.values)>>;
    const std::uint64_t vectors = voxels / kValuesPerVector<T>;
    const std::uint64_t two_a_multiprocessor = device_traits().resident_threads / (4 * kThreads);
    const std::uint64_t blocks = std::max<std::uint64_t>(
        1, std::min((vectors + kThreads * kVectorsPerRound - 1) / (kThreads * kVectorsPerRound),
                    two_a_multiprocessor));
    find_one_value<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
        map.values, voxels, map.background, mask_ ? mask_->data() : nullptr, range_.data(),
        verdict_.device());
    VOLCCL_CUDA_CHECK(cudaGetLastError());
  });
  VOLCCL_CUDA_CHECK(cudaEventRecord(checked_.get(), stream));
}

bool OneValueCheck::holds_one_value() {
  if (!one_value_) {
    VOLCCL_CUDA_CHECK(cudaEventSynchronize(checked_.get()));
    one_value_ = *static_cast<volatile std::uint32_t*>(verdict_.host()) == 1;
    if (!*one_value_) mask_.reset();  // freed on the stream, for the label map's labeler
  }
  return *one_value_;
}

const std::uint8_t* OneValueCheck::mask() const {
  if (mask_) return mask_->data();
  return is_own_mask(input_) ? static_cast<const std::uint8_t*>(input_.data) : nullptr;
}

}  // namespace volccl::detail
