// The steps label(), cuda::label() and the ITK filters share: resolving `auto`, checking a
// measuring request, and running the registry's labeler on each backend. Internal.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/labeler.h"
#include "volccl/statistics.h"
#include "volccl/types.h"

namespace volccl::detail {

// The options with Algorithm::automatic replaced by the algorithm it stands for on `backend`
// (cuda or cpu) for the kind of input.
LabelOptions resolve_algorithm(const LabelOptions& options, Backend backend, bool label_map);

// Throws InvalidArgument unless the algorithm of `options` reads the kind of `input`.
void validate_input(const LabelInput& input, const LabelOptions& options, const char* caller);

// Throws InvalidArgument unless the components of `extent` can be measured with the resolved
// options' statistics strategy.
void validate_measuring(Extent3 extent, const LabelOptions& options);

// Runs the registry's CPU labeler of call.options (resolved).
LabelResult label_on_cpu(const HostLabelCall& call);

// The in-core labeling on the CPU, with the statistics measured into `statistics` unless it is
// null.
LabelResult label_whole_on_cpu(const LabelInput& input, Extent3 extent, std::uint32_t* labels,
                               const LabelOptions& options,
                               std::vector<ComponentMoments>* statistics);

// The most voxels label() hands one labeler: max_slab_voxel_count, or fewer where
// LabelOptions::slab_voxels asks for smaller slabs.
std::uint64_t slab_voxel_limit(const LabelOptions& options);

// The CPU labeling of a volume slab by slab (dispatch/slab_labeling.cpp): any size label()
// takes, labels of either width.
template <class Label>
LabelResult label_slabs_on_cpu(const LabelInput& input, Extent3 extent, Label* labels,
                               const LabelOptions& options,
                               std::vector<ComponentMoments>* statistics);

// Throws TooManyComponents when `component_count` components do not fit labels of `Label`.
template <class Label>
void require_label_width(std::uint64_t component_count, const char* caller);

#if defined(VOLCCL_HAS_CUDA)
// Runs the registry's CUDA labeler of options (resolved) on device memory, and measures the
// components into `moments` unless it is null (dispatch/cuda_label.cu). `automatic`: the
// algorithm was asked as `auto`, and a label map of one foreground value goes as its mask.
LabelResult label_on_device(const LabelInput& device_input, Extent3 extent,
                            std::uint32_t* device_labels, const LabelOptions& options, void* stream,
                            cuda::DeviceMoments* moments, bool automatic);

// Host memory in and out through the device, in one piece or in slabs streamed through it
// (dispatch/slab_labeling_cuda.cu); measures the components into `statistics` unless it is null.
template <class Label>
LabelResult label_cuda_from_host(const LabelInput& input, Extent3 extent, Label* labels,
                                 const LabelOptions& options,
                                 std::vector<ComponentMoments>* statistics, bool automatic);

// The in-core path of label_cuda_from_host: the whole volume on the device at once.
LabelResult label_whole_through_device(const LabelInput& input, Extent3 extent,
                                       std::uint32_t* labels, const LabelOptions& options,
                                       std::vector<ComponentMoments>* statistics, bool automatic);
#endif

}  // namespace volccl::detail
