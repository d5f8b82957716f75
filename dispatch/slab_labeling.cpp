// label() on the CPU for volumes that one labeler cannot take whole, or into 64-bit labels:
// slab by slab, each slab's local labels written where its final ones go, then joined across
// the faces (runtime/slab_merge.h) and renumbered in place.
#include <limits>
#include <string>
#include <vector>

#include "dispatch/dispatch.h"
#include "runtime/cpu_parallel.h"
#include "runtime/slab_merge.h"
#include "volccl/detail/step_clock.h"
#include "volccl/error.h"
#include "volccl/volccl.h"

namespace volccl::detail {

template <class Label>
void require_label_width(std::uint64_t component_count, const char* caller) {
  if (component_count > std::numeric_limits<Label>::max()) {
    throw TooManyComponents(std::string(caller) + ": " + std::to_string(component_count) +
                                " components do not fit " + std::to_string(8 * sizeof(Label)) +
                                "-bit labels; label into std::uint64_t labels",
                            component_count);
  }
}

template void require_label_width<std::uint32_t>(std::uint64_t, const char*);
template void require_label_width<std::uint64_t>(std::uint64_t, const char*);

template <class Label>
LabelResult label_slabs_on_cpu(const LabelInput& input, Extent3 extent, Label* labels,
                               const LabelOptions& options,
                               std::vector<ComponentMoments>* statistics) {
  StepClock whole_call;
  const SlabPlan plan = plan_slabs(extent, slab_voxel_limit(options));
  const unsigned threads = resolve_thread_count(options.cpu_threads, extent.voxel_count());
  SlabMerge merge(plan, options.connectivity, input);
  LabelResult result;
  result.algorithm_used = options.algorithm;
  result.backend_used = Backend::cpu;
  result.slab_count = plan.count();

  std::vector<std::uint32_t> local_labels;  // 64-bit labels: a slab's, before they are widened
  std::vector<std::vector<ComponentMoments>> slab_moments(statistics != nullptr ? plan.count() : 0);
  for (std::uint64_t s = 0; s < plan.count(); ++s) {
    Label* slab_labels = labels + plan.first_voxel(s);
    std::uint32_t* local = nullptr;
    if constexpr (sizeof(Label) == sizeof(std::uint32_t)) {
      local = slab_labels;
    } else {
      local_labels.resize(plan.voxels(s));
      local = local_labels.data();
    }
    const LabelResult part =
        label_whole_on_cpu(slab_input(input, plan, s), plan.slab_extent(s), local, options,
                           statistics != nullptr ? &slab_moments[s] : nullptr);
    add_slab_result(result, part);
    merge.add_slab_labels(s, part.component_count, local);
    if constexpr (sizeof(Label) != sizeof(std::uint32_t)) {
      parallel_for(plan.voxels(s), threads, [&](std::uint64_t begin, std::uint64_t end) {
        for (std::uint64_t i = begin; i < end; ++i) slab_labels[i] = local[i];
      });
    }
  }
  std::vector<std::uint32_t>().swap(local_labels);

  StepClock clock;
  merge.join(threads);
  require_label_width<Label>(merge.component_count(), "volccl::label");
  result.component_count = merge.component_count();
  result.timings.relabel_ms += clock.lap();

  if (statistics != nullptr) statistics->assign(merge.component_count(), ComponentMoments{});
  for (std::uint64_t s = 0; s < plan.count(); ++s) {
    if (!merge.keeps_local_labels(s)) {
      const std::vector<std::uint64_t> finals = merge.final_labels(s, threads);
      Label* slab_labels = labels + plan.first_voxel(s);
      parallel_for(plan.voxels(s), threads, [&](std::uint64_t begin, std::uint64_t end) {
        for (std::uint64_t i = begin; i < end; ++i) {
          slab_labels[i] = static_cast<Label>(finals[slab_labels[i]]);
        }
      });
    }
    if (statistics != nullptr) {
      add_slab_moments(*statistics, slab_moments[s], merge.face_table(s), plan, s);
      std::vector<ComponentMoments>().swap(slab_moments[s]);
    }
  }
  result.timings.final_labeling_ms += clock.lap();
  result.timings.total_ms = whole_call.lap();
  return result;
}

template LabelResult label_slabs_on_cpu<std::uint32_t>(const LabelInput&, Extent3, std::uint32_t*,
                                                       const LabelOptions&,
                                                       std::vector<ComponentMoments>*);
template LabelResult label_slabs_on_cpu<std::uint64_t>(const LabelInput&, Extent3, std::uint64_t*,
                                                       const LabelOptions&,
                                                       std::vector<ComponentMoments>*);

}  // namespace volccl::detail
