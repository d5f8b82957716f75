// The Early statistics of LE and TM on the CPU (le_tm_statistics_2d.h), hooked into their step
// sequences (le_logic_2d.h, tm_logic_2d.h) as on the GPU (le_tm_statistics_2d.cuh): the same
// initialization and gathering steps, and a transfer to the roots over the rows split among
// threads. The CPU measures the other strategies after labeling (label_on_cpu, label.cpp).
#pragma once

#include <cstdint>
#include <memory>
#include <new>
#include <vector>

#include "kernels/early_moments.h"
#include "kernels2d/le_tm_statistics_2d.h"
#include "runtime/cpu_parallel.h"
#include "runtime/host_device.h"
#include "runtime/moments.h"

namespace volccl::detail {

class HostPixelStatistics {
 public:
  // With `table` null the hooks only label; else Early fills it.
  HostPixelStatistics(HostLabeling& labeling, const kernels2d::PixelGrid& grid,
                      const std::uint8_t* mask, const std::uint32_t* labels,
                      std::vector<ComponentMoments>* table)
      : labeling_(labeling),
        grid_(grid),
        mask_(mask),
        labels_(labels),
        table_(table),
        nodes_(table != nullptr ? allocate_records(std::uint64_t{grid.width} * grid.height)
                                : nullptr) {}

  template <class Run>
  void initialize(const Run& run) {
    if (table_ != nullptr) run(EarlyInitialize{mask_, nodes_.get()});
  }

  template <class Run>
  void final_labeling(const Run& run, const kernels2d::PixelFinalLabeling& step) {
    if (table_ != nullptr) {
      transfer_to_roots();
      table_->assign(labeling_.component_count(), ComponentMoments{});
      run(EarlyGather{labels_, nodes_.get(), step.root_bitmap, step.words_before, table_->data()});
      labeling_.end_step(&StepTimings::statistics_ms);
    }
    run(step);
  }

 private:
  struct FreeRecords {
    void operator()(ComponentMoments* records) const {
      ::operator delete[](records, std::align_val_t{alignof(ComponentMoments)});
    }
  };
  using Records = std::unique_ptr<ComponentMoments[], FreeRecords>;

  // Left uninitialized: EarlyInitialize writes every record, the rows split among threads.
  static Records allocate_records(std::uint64_t count) {
    return Records(static_cast<ComponentMoments*>(::operator new[](
        count * sizeof(ComponentMoments), std::align_val_t{alignof(ComponentMoments)})));
  }

  // Every pixel that is not a root adds its record to its root's (the Analysis of Sec. III-A,
  // in one pass since every pixel holds its root). Roots only receive and the others only
  // give, so no record is read while it changes. A row's pixels of one root are summed before
  // one atomic addition per moment.
  void transfer_to_roots() {
    const std::uint32_t width = grid_.width;
    parallel_for(grid_.height, labeling_.threads(), [&](std::uint64_t begin, std::uint64_t end) {
      for (std::uint64_t y = begin; y < end; ++y) {
        std::uint32_t pending_root = kernels2d::kNoParent;
        Moments pending = no_moments();
        const auto flush = [&] {
          if (pending_root != kernels2d::kNoParent) add_atomically(nodes_[pending_root], pending);
        };
        const auto row_start = static_cast<std::uint32_t>(y * width);
        for (std::uint32_t pixel = row_start; pixel < row_start + width; ++pixel) {
          const std::uint32_t root = labels_[pixel];
          if (root == kernels2d::kNoParent || root == pixel) continue;
          if (root != pending_root) {
            flush();
            pending_root = root;
            pending = no_moments();
          }
          merge(pending, moments_of(nodes_[pixel]));
        }
        flush();
      }
    });
  }

  HostLabeling& labeling_;
  kernels2d::PixelGrid grid_;
  const std::uint8_t* mask_;
  const std::uint32_t* labels_;
  std::vector<ComponentMoments>* table_;
  Records nodes_;  // null unless Early
};

}  // namespace volccl::detail
