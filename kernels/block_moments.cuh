// The Fused and Early statistics on the GPU, written once for 2x2 and 2x2x2 blocks (BUF, BUF-IC,
// BKE and BKE-IC) and for pixels (LE and TM, kernels2d/le_tm_statistics_2d.cuh): the per-node
// functions (block_moments, block_origin, block_index, block_index_of, block_foreground,
// node_slot) are found by argument-dependent lookup in kernels2d or kernels3d. BlockStatistics
// wraps a block labeler's run(step) and hooks the strategy's kernels into the step sequence of
// buf_bke_steps.h. Internal; included only by .cu files.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "kernels/early_moments.h"
#include "runtime/cuda_support.cuh"
#include "runtime/moments.cuh"
#include "runtime/raster_rank.h"
#include "volccl/cuda.h"

namespace volccl::detail {

constexpr int kBlockSlots = 256;  // thread blocks of 128 threads: at most 128 labels

// Fused (HA4 paper Alg. 6's idea): the final labeling step sums each block's voxels in
// registers, and the thread block gathers them (moments.cuh) before one atomic per moment and
// label goes to the table. Every thread takes part, inside the grid or not.
template <class FinalLabeling>
struct FusedFinalLabeling {
  FinalLabeling labeling;
  ComponentMoments* table;

  template <class Grid, class Block>
  __device__ void every_thread(const Grid& grid, bool inside, const Block& block) const {
    __shared__ SharedMoments<kBlockSlots> shared;
    __shared__ Origin origin;  // thread 0's block, the thread block's first
    shared.clear();
    if (thread_rank() == 0) origin = block_origin(block);
    __syncthreads();
    std::uint32_t label = 0;
    Moments m = no_moments();
    if (inside) {
      std::uint32_t foreground;
      label = labeling.label_block(grid, block, &foreground);
      if (label != 0) m = to_relative(block_moments(block, foreground), origin);
    }
    // 128 blocks (or pixels) span at most 64 x 8 x 2 voxels: relative sums fit 32 bits.
    gather_one_label_per_thread<true>(shared, label, m, origin, table);
  }
};

// Early's initialization on the GPU: every thread's record (`m` for node `node` where `has`),
// stored by its warp together (store_rows_of_warp), 512 contiguous bytes a store as a warp's
// nodes are consecutive. Every thread takes part, in thread blocks of 128 threads.
__device__ __forceinline__ void store_records(ComponentMoments* records, bool has,
                                              std::uint32_t node, const Moments& m) {
  constexpr unsigned kWarps = 4;  // as kBlockSlots
  __shared__ RowStaging<32> staging[kWarps];
  store_rows_of_warp(records, has, node, m, staging[thread_rank() >> 5]);
}

// Once the equivalences are final (after the last compression, when every block's slot holds
// its root's key), every node that is not a root adds its moments to its root's: the Analysis
// step of Sec. III-A, in one pass since the forest is flat. Roots only receive, the others only
// give, so no node is read while it changes. The additions to one root are gathered per thread
// block first (moments.cuh), as a large component's thousands of nodes would otherwise
// serialize on its root's atomics. Every thread takes part, inside the grid or not.
struct EarlyTransfer {
  const std::uint32_t* labels;
  ComponentMoments* nodes;
  template <class Grid, class Block>
  __device__ void every_thread(const Grid& grid, bool inside, const Block& block) const {
    __shared__ SharedMoments<kBlockSlots> shared;
    shared.clear();
    __syncthreads();
    std::uint32_t root_key = 0;  // the root's node + 1; 0: nothing to give
    Moments m = no_moments();
    if (inside) {
      const std::uint32_t node = block_index(grid, block);
      if (nodes[node].count != 0) {
        const std::uint32_t root = block_index_of(grid, labels[node_slot(block)]);
        if (root != node) {
          root_key = root + 1;
          m = moments_of(nodes[node]);
        }
      }
    }
    gather_one_label_per_thread<false>(shared, root_key, m, Origin{0, 0, 0}, nodes);
  }
};

// What a for_each_block kernel does for one thread: the step on the thread's block when it lies
// inside the grid; the fused final labeling and Early's initialization and transfer on every
// thread.
template <class Step, class Grid, class Block>
__device__ __forceinline__ void visit(const Step& step, const Grid& grid, bool inside,
                                      const Block& block) {
  if (inside) step(grid, block);
}

template <class FinalLabeling, class Grid, class Block>
__device__ __forceinline__ void visit(const FusedFinalLabeling<FinalLabeling>& step,
                                      const Grid& grid, bool inside, const Block& block) {
  step.every_thread(grid, inside, block);
}

template <class Grid, class Block>
__device__ __forceinline__ void visit(const EarlyTransfer& step, const Grid& grid, bool inside,
                                      const Block& block) {
  step.every_thread(grid, inside, block);
}

template <class Grid, class Block>
__device__ __forceinline__ void visit(const EarlyInitialize& step, const Grid& grid, bool inside,
                                      const Block& block) {
  store_records(step.nodes, inside, inside ? block_index(grid, block) : 0,
                inside ? step.moments(grid, block) : no_moments());
}

// Wraps `launch` (a labeler's run: one for_each_block launch per step) for the statistics
// strategy: Early's initialization after the Initialization step, its transfer after the last
// compression and its gathering before the final labeling; Fused's final labeling instead of
// the plain one. With `moments` null, or Late (computed after the labeling), it only launches.
template <class Steps, class Launch>
class BlockStatistics {
 public:
  BlockStatistics(DeviceLabeling& labeling, const Launch& launch, const std::uint8_t* mask,
                  std::uint32_t* labels, std::uint64_t blocks, cuda::DeviceMoments* moments,
                  StatisticsStrategy strategy)
      : labeling_(labeling),
        launch_(launch),
        mask_(mask),
        labels_(labels),
        moments_(strategy == StatisticsStrategy::late ? nullptr : moments),
        early_(moments_ != nullptr && strategy == StatisticsStrategy::early),
        nodes_(early_ ? blocks : 0, labeling.stream(), "the Early statistics' table of blocks") {}

  template <class Step>
  void operator()(const Step& step) {
    if constexpr (std::is_same_v<Step, typename Steps::FinalLabeling>) {
      if (moments_ != nullptr) {
        *moments_ = cuda::DeviceMoments(labeling_.wait_for_count(), labeling_.stream());
        if (early_) {
          launch_(EarlyGather{labels_, nodes_.data(), labeling_.root_bitmap(),
                              labeling_.words_before(), moments_->data()});
        }
        labeling_.end_step(&StepTimings::statistics_ms);
        if (!early_) {
          launch_(FusedFinalLabeling<Step>{step, moments_->data()});
          return;
        }
      }
    }
    launch_(step);
    if (!early_) return;
    if constexpr (std::is_same_v<Step, typename Steps::BufInitialize> ||
                  std::is_same_v<Step, typename Steps::BkeInitialize>) {
      launch_(EarlyInitialize{mask_, nodes_.data()});
    }
    if constexpr (std::is_same_v<Step, typename Steps::Compress>) {
      if (step.root_bitmap != nullptr) launch_(EarlyTransfer{labels_, nodes_.data()});
    }
  }

 private:
  DeviceLabeling& labeling_;
  const Launch& launch_;
  const std::uint8_t* mask_;
  std::uint32_t* labels_;
  cuda::DeviceMoments* moments_;
  bool early_;
  DeviceBuffer<ComponentMoments> nodes_;  // empty unless Early
};

}  // namespace volccl::detail
