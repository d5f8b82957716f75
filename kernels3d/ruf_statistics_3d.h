// RUF's Late statistics from its runs (ruf_statistics_3d.cu), called by RUF's CUDA labeler
// (ruf_3d.cu) before it frees the runs. Internal; included only by .cu files.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels3d/ruf_logic_3d.h"
#include "volccl/cuda.h"
#include "volccl/statistics.h"

namespace volccl::detail {

// What RUF leaves once its roots are ranked: the rows' words, every run pointing at its root, and
// the ranking of the roots.
struct RufRuns {
  kernels3d::RunGrid grid;
  const kernels3d::RowWord* words;
  const std::uint32_t* starts;  // a label map's runs' starts (LabelMapRuns); null for a mask
  const std::uint32_t* parents;
  const std::uint32_t* root_bitmap;
  const std::uint32_t* words_before;
};

// The moments of the `count` components, a row each, enqueued on `stream`.
cuda::DeviceMoments ruf_run_moments(const RufRuns& runs, std::uint32_t count, cudaStream_t stream);

// Thread blocks of the pass: with at most as many components it adds into a cleared table.
std::uint32_t ruf_run_regions(const kernels3d::RunGrid& grid);

// The pass before the host knows the count (LateBeforeCount::measure_with): `rows`,
// ruf_run_regions() of them, cleared for the `*device_count` components; nothing where there are
// more.
void ruf_run_moments_before_count(const RufRuns& runs, ComponentMoments* rows,
                                  const std::uint32_t* device_count, cudaStream_t stream);

}  // namespace volccl::detail
