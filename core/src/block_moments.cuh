// The Fused and Early statistics of the block labelers BUF, BUF-IC, BKE and BKE-IC, written once
// for 2x2 and 2x2x2 blocks: the per-dimension functions (block_moments, block_index,
// block_index_of, block_foreground) are found by argument-dependent lookup in kernels2d or
// kernels3d. BlockStatistics wraps a labeler's run(step) and hooks the strategy's kernels into
// the step sequence of buf_bke_steps.h. Internal; included only by .cu files.
#pragma once

#include <cstdint>
#include <type_traits>

#include "cuda_support.cuh"
#include "moments.cuh"
#include "volccl/cuda.h"
#include "volccl/detail/raster_rank.h"

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
    // 128 blocks span at most 64 x 8 x 2 voxels: relative sums fit 32 bits.
    gather_one_label_per_thread<true>(shared, label, m, origin, table);
  }
};

// Early (LE/TM paper Sec. III-A..C): every union-find node, a block, starts with its own
// voxels' moments, as the Prelabel kernel initializes the property arrays.
struct EarlyInitialize {
  const std::uint8_t* mask;
  ComponentMoments* nodes;
  template <class Grid, class Block>
  __device__ void operator()(const Grid& grid, const Block& block) const {
    const std::uint32_t foreground = block_foreground(mask, grid, block);
    const Moments m = foreground != 0 ? block_moments(block, foreground) : no_moments();
    ComponentMoments& node = nodes[block_index(grid, block)];
    node.count = m.count;
    for (int a = 0; a < 3; ++a) node.sum[a] = m.sum[a];
    for (int p = 0; p < 6; ++p) node.sum_products[p] = m.sum_products[p];
    for (int a = 0; a < 3; ++a) {
      node.min[a] = m.min[a];
      node.max[a] = m.max[a];
    }
  }
};

__device__ __forceinline__ Moments moments_of(const ComponentMoments& node) {
  Moments m;
  m.count = node.count;
  for (int a = 0; a < 3; ++a) m.sum[a] = node.sum[a];
  for (int p = 0; p < 6; ++p) m.sum_products[p] = node.sum_products[p];
  for (int a = 0; a < 3; ++a) {
    m.min[a] = node.min[a];
    m.max[a] = node.max[a];
  }
  return m;
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
        const std::uint32_t root = block_index_of(grid, labels[block.anchor]);
        if (root != node) {
          root_key = root + 1;
          m = moments_of(nodes[node]);
        }
      }
    }
    gather_one_label_per_thread<false>(shared, root_key, m, Origin{0, 0, 0}, nodes);
  }
};

// After the ranking and before the final labeling overwrites the roots' keys: each root's
// moments go to its label's row (the compaction of Sec. III-D's Sequential Relabeling).
struct EarlyGather {
  const std::uint32_t* labels;
  const ComponentMoments* nodes;
  const std::uint32_t* root_bitmap;
  const std::uint32_t* words_before;
  ComponentMoments* table;
  template <class Grid, class Block>
  __device__ void operator()(const Grid& grid, const Block& block) const {
    const std::uint32_t node = block_index(grid, block);
    if (nodes[node].count == 0) return;
    const std::uint32_t key = labels[block.anchor];
    if (block_index_of(grid, key) != node) return;
    // Field by field: the records' padding is never written, so never read.
    const ComponentMoments& from = nodes[node];
    ComponentMoments& to = table[component_label(root_bitmap, words_before, key) - 1];
    to.count = from.count;
    for (int a = 0; a < 3; ++a) to.sum[a] = from.sum[a];
    for (int p = 0; p < 6; ++p) to.sum_products[p] = from.sum_products[p];
    for (int a = 0; a < 3; ++a) {
      to.min[a] = from.min[a];
      to.max[a] = from.max[a];
    }
  }
};

// What a for_each_block kernel does for one thread: the step on the thread's block when it lies
// inside the grid; the fused final labeling and Early's transfer on every thread.
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
