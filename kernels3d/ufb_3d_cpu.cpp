// CPU backend of UFB (ufb_logic_3d.h): the per-block steps over rows of blocks split among
// threads, one fork-join per kernel of the GPU version, with the same atomics; Initialization
// takes the votes of a segment's 32 blocks as the GPU's warp does.
#include <algorithm>
#include <cstdint>
#include <memory>

#include "kernels3d/ufb_logic_3d.h"
#include "runtime/cpu_parallel.h"
#include "runtime/labeler.h"

namespace volccl::detail {
namespace {

using kernels3d::kBlocksPerSegment;
using kernels3d::PairBlock;
using kernels3d::PairGrid;

template <class Step>
void for_each_block(const PairGrid& grid, unsigned threads, const Step& step) {
  parallel_for_rows(grid.blocks_y, grid.nz, threads, [&](std::uint32_t j, std::uint32_t z) {
    for (std::uint32_t i = 0; i < grid.pairs_x; ++i) {
      step(grid, kernels3d::pair_block_at(grid, i, j, z));
    }
  });
}

// Initialization by segments of 32 blocks, as the GPU's warps take them: the votes of a
// segment's lanes first, then each lane's step.
template <int Connectivity>
void initialize(const std::uint8_t* mask, std::uint32_t* parents, const PairGrid& grid,
                unsigned threads) {
  parallel_for_rows(grid.blocks_y, grid.nz, threads, [&](std::uint32_t j, std::uint32_t z) {
    for (std::uint32_t segment = 0; segment < grid.pairs_x; segment += kBlocksPerSegment) {
      const std::uint32_t lanes = std::min(kBlocksPerSegment, grid.pairs_x - segment);
      PairBlock blocks[kBlocksPerSegment];
      std::uint32_t foreground[kBlocksPerSegment];
      for (std::uint32_t lane = 0; lane < lanes; ++lane) {
        blocks[lane] = kernels3d::pair_block_at(grid, segment + lane, j, z);
        foreground[lane] = kernels3d::block_foreground(mask, grid, blocks[lane]);
      }
      if constexpr (Connectivity == 6) {
        const kernels3d::SegmentPieces votes = kernels3d::segment_pieces(foreground, lanes);
        const kernels3d::UfbInitialize6 step{parents};
        for (std::uint32_t lane = 0; lane < lanes; ++lane) {
          step(grid, blocks[lane], foreground[lane], lane, votes);
        }
      } else {
        std::uint32_t linked_lanes = 0, top_lanes = 0;
        for (std::uint32_t lane = 0; lane < lanes; ++lane) {
          if (lane > 0 && kernels3d::touches_left(mask, grid, blocks[lane], foreground[lane])) {
            linked_lanes |= 1u << lane;
          }
          if ((foreground[lane] & 3u) != 0) top_lanes |= 1u << lane;
        }
        const kernels3d::UfbInitialize18 step{parents};
        for (std::uint32_t lane = 0; lane < lanes; ++lane) {
          step(grid, blocks[lane], foreground[lane], lane,
               kernels3d::run_minimum(linked_lanes, top_lanes, lane));
        }
      }
    }
  });
}

template <int Connectivity>
LabelResult label_ufb(const std::uint8_t* mask, Extent3 extent, std::uint32_t* labels,
                      const LabelOptions& options) {
  HostLabeling labeling(extent, options);
  const PairGrid grid = kernels3d::make_pair_grid(extent);
  const unsigned threads = labeling.threads();
  // Initialization writes every slot, so the nodes need no zeroing.
  const std::unique_ptr<std::uint32_t[]> nodes(new std::uint32_t[kernels3d::pair_count(grid)]);
  std::uint32_t* const parents = nodes.get();
  const auto run = [&](const auto& step) { for_each_block(grid, threads, step); };

  initialize<Connectivity>(mask, parents, grid, threads);
  labeling.end_step(&StepTimings::initialization_ms);
  run(kernels3d::UfbMerge<Connectivity>{mask, parents});
  labeling.end_step(&StepTimings::merge_ms);
  const kernels3d::UfbRoots roots{parents};
  std::uint32_t* const root_bitmap = labeling.root_bitmap();
  run([&](const PairGrid&, const PairBlock& block) {
    const std::uint32_t root = roots(grid, block);
    if ((root & 1u) != 0) detail::mark_component_start(root_bitmap, block.pair);
    if ((root & 2u) != 0) detail::mark_component_start(root_bitmap, block.pair + grid.pairs_x);
  });
  labeling.end_step(&StepTimings::compression_ms);  // root marking, in Compression's place
  labeling.rank();
  run(kernels3d::UfbFinalLabeling<Connectivity>{mask, labels, parents, labeling.root_bitmap(),
                                                labeling.words_before()});
  labeling.end_step(&StepTimings::final_labeling_ms);
  return labeling.finish();
}

}  // namespace

LabelResult label_ufb_3d_cpu(const HostLabelCall& call) {
  return call.options.connectivity == 6
             ? label_ufb<6>(call.mask, call.extent, call.labels, call.options)
             : label_ufb<18>(call.mask, call.extent, call.labels, call.options);
}

}  // namespace volccl::detail
