// The statistics of LE and TM, whose union-find nodes are pixels (LE/TM paper Sec. III): a pixel
// as a node of the Early and Fused steps that the block labelers' 2x2 blocks also go through
// (kernels/early_moments.h, kernels/block_moments.cuh), found there by argument-dependent
// lookup. Early: every pixel's record starts with its own moments (Eq. 3); once the
// equivalences are final every pixel adds its record to its root's, and the roots' records are
// gathered in label order. Fused: the final labeling sums its pixels. The hooks into the step
// sequences of LE and TM (le_logic_2d.h, tm_logic_2d.h) are le_tm_statistics_2d.cuh on the GPU
// and le_tm_statistics_2d_cpu.h on the CPU.
#pragma once

#include <cstdint>

#include "kernels2d/uf_ke_logic_2d.h"
#include "runtime/host_device.h"
#include "runtime/moments.h"

namespace volccl::kernels2d {

// A pixel's node is its raster index, whose label slot holds its parent key.
VOLCCL_HD std::uint32_t block_index(const PixelGrid&, const Pixel& pixel) { return pixel.index; }
VOLCCL_HD std::uint32_t block_index_of(const PixelGrid&, std::uint32_t pixel) { return pixel; }
VOLCCL_HD std::uint32_t node_slot(const Pixel& pixel) { return pixel.index; }

// 1 for a foreground pixel, 0 for a background one (a block's bits of foreground pixels).
VOLCCL_HD std::uint32_t block_foreground(const std::uint8_t* mask, const PixelGrid&,
                                         const Pixel& pixel) {
  return mask[pixel.index] != 0 ? 1u : 0u;
}

VOLCCL_HD detail::Moments block_moments(const Pixel& pixel, std::uint32_t) {
  return detail::run_moments(pixel.x, 1, pixel.y, 0);
}

// The origin of a thread block's relative moments: its first pixel.
VOLCCL_HD detail::Origin block_origin(const Pixel& pixel) { return {pixel.x, pixel.y, 0}; }

// FinalLabeling with the block labelers' interface (label_block), for the Fused statistics.
struct LabelPixel {
  PixelFinalLabeling labeling;
  VOLCCL_HD std::uint32_t label_block(const PixelGrid& grid, const Pixel& pixel,
                                      std::uint32_t* foreground) const {
    labeling(grid, pixel);
    const std::uint32_t label = labeling.labels[pixel.index];
    *foreground = label != 0 ? 1u : 0u;
    return label;
  }
};

}  // namespace volccl::kernels2d
