// label() through the device for host memory: the whole volume at once where it fits the
// device's memory (or max_gpu_memory) and 32-bit indices and labels, else in slabs streamed
// through the device. Each slab is labeled for the labels on its faces, which are joined on the
// host (runtime/slab_merge.h); then its final labels are gathered on the device from the slab's
// table. Where every slab's local labels fit the device at once they stay there between the
// two passes; elsewhere the slab is labeled again, from the input kept on the device where the
// whole input fits, else uploaded again, which costs far less than moving its local labels to
// the host and back. Two host threads each stream every other slab on a stream of their own,
// so that one's copies overlap the other's.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "dispatch/dispatch.h"
#include "runtime/cpu_parallel.h"
#include "runtime/cuda_support.cuh"
#include "runtime/one_value.cuh"
#include "runtime/pinned_staging.cuh"
#include "runtime/slab_merge.h"
#include "volccl/cuda.h"
#include "volccl/detail/step_clock.h"
#include "volccl/volccl.h"

namespace volccl::detail {
namespace {

constexpr unsigned kSlabStreams = 2;
// Left to the CUDA context, the pool's granularity and the pinned words, below any budget.
constexpr std::uint64_t kReservedBytes = std::uint64_t{256} << 20;
// The most slabs the resident local labels, or the resident input, may cost: thinner ones lose
// more than the second upload (and labeling) they save.
constexpr std::uint64_t kMostResidentSlabs = 16;
constexpr std::uint64_t kMostInputResidentSlabs = 32;

// A slab's voxels, of `voxel_bytes` each, rounded up so that consecutive slabs in one buffer
// begin at multiples of 256 bytes, the alignment of an allocation, which the labelers' wide
// loads and stores need.
std::uint64_t aligned_voxels(std::uint64_t voxels, std::size_t voxel_bytes) {
  const std::uint64_t per_256 = 256 / voxel_bytes;
  return (voxels + per_256 - 1) / per_256 * per_256;
}

// out[i] = final_labels[local[i]], or local[i] widened where there is no table (one slab).
// `out` may be `local` itself.
template <class Label>
__global__ void write_final_labels(const std::uint32_t* local, Label* out,
                                   const std::uint64_t* final_labels, std::uint64_t voxels) {
  const std::uint64_t stride = std::uint64_t{gridDim.x} * blockDim.x;
  for (std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < voxels;
       i += stride) {
    const std::uint32_t label = local[i];
    out[i] = static_cast<Label>(final_labels != nullptr ? final_labels[label] : label);
  }
}

// table[l] = the final label of local label l (0 for 0), from the slab's face labels.
__global__ void build_final_table(FaceTable faces, std::uint64_t* table, std::uint64_t entries) {
  const std::uint64_t stride = std::uint64_t{gridDim.x} * blockDim.x;
  for (std::uint64_t l = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; l < entries;
       l += stride) {
    table[l] = l == 0 ? 0 : final_label_of(faces, l);
  }
}

// The most components per voxel a connectivity allows: voxels that touch no other (a
// checkerboard at 6, 18 and 4; every other voxel of every other row at 8; one voxel in eight at
// 26), and every voxel in a label map.
double most_components_per_voxel(int connectivity, bool label_map) {
  if (label_map) return 1;
  if (connectivity == 26) return 1.0 / 8;
  if (connectivity == 8) return 1.0 / 4;
  return 1.0 / 2;
}

// Device bytes per voxel of a slab in flight: its input, its local labels, the labeler's
// scratch and ranking (at most 4 bytes a voxel; a label map's words and joins add up to 2.25,
// and the mask that the one-value check of `automatic` writes 1, where the values are wider
// than a byte or the background is not 0), the table of final labels, wide labels, and the
// statistics rows.
double slab_bytes_per_voxel(const LabelInput& input, const LabelOptions& options,
                            std::size_t label_bytes, bool statistics, bool automatic) {
  const double components = most_components_per_voxel(options.connectivity, input.label_map);
  const bool check_writes_mask = automatic && input.label_map && !is_own_mask(input);
  const double scratch = input.label_map ? 4 + 2.25 + (check_writes_mask ? 1 : 0) : 4;
  return static_cast<double>(size_of(input.type)) + 4 + scratch + 8 * components +
         (label_bytes == 8 ? 8 : 0) + (statistics ? sizeof(ComponentMoments) * components : 0);
}

// What the call may allocate: max_gpu_memory, or less where the device has less free.
std::uint64_t memory_budget(const LabelOptions& options) {
  const std::uint64_t available = device_memory_available();
  const std::uint64_t usable = available > kReservedBytes ? available - kReservedBytes : 0;
  return options.max_gpu_memory == 0 ? usable : std::min(options.max_gpu_memory, usable);
}

template <class Label>
class SlabStreamer {
 public:
  // `automatic`: the algorithm was `auto`, so that each slab of a label map takes the one-value
  // check (label_on_device).
  SlabStreamer(const LabelInput& input, const SlabPlan& plan, Label* labels,
               const LabelOptions& options, std::vector<ComponentMoments>* statistics,
               bool automatic)
      : input_(input),
        plan_(plan),
        labels_(labels),
        options_(options),
        statistics_(statistics),
        automatic_(automatic),
        merge_(plan, options.connectivity, input) {
    VOLCCL_CUDA_CHECK(cudaGetDevice(&device_));
    result_.algorithm_used = options.algorithm;
    result_.backend_used = Backend::cuda;
    result_.slab_count = plan.count();
  }

  LabelResult run(SlabResidency residency) {
    StepClock whole_call;
    result_.slab_residency = residency;
    const unsigned stream_count =
        static_cast<unsigned>(std::min<std::uint64_t>(kSlabStreams, plan_.count()));
    const unsigned copy_threads = std::max(1u, std::thread::hardware_concurrency() / stream_count);
    for (unsigned t = 0; t < stream_count; ++t) {
      streams_.push_back(
          std::make_unique<Stream>(plan_, size_of(input_.type), copy_threads, residency));
    }
    if (residency == SlabResidency::labels) {
      resident_labels_.emplace(plan_.count() * resident_stride(), streams_.front()->stream,
                               "every slab's labels");
      if (statistics_ != nullptr) slab_rows_.resize(plan_.count());
    }
    if (residency == SlabResidency::input) {
      resident_input_.emplace(plan_.count() * input_stride(), streams_.front()->stream,
                              "the whole input");
    }
    VOLCCL_CUDA_CHECK(cudaStreamSynchronize(streams_.front()->stream));
    if (plan_.count() > 1) {
      on_streams([this](Stream& stream, std::uint64_t s) { find_faces(stream, s); });
      StepClock clock;
      merge_.join(resolve_thread_count(0, plan_.extent.voxel_count()));
      result_.timings.relabel_ms += clock.lap();
    }
    require_label_width<Label>(component_count(), "volccl::label");
    if (statistics_ != nullptr) statistics_->assign(component_count(), ComponentMoments{});
    on_streams([this](Stream& stream, std::uint64_t s) { write_slab(stream, s); });
    // Slabs of one value went through the mask's algorithm: named where all of them did.
    if (as_mask_ && every_slab_as_mask_) result_.algorithm_used = *as_mask_;
    result_.component_count = component_count();
    result_.timings.total_ms = whole_call.lap();
    return result_;
  }

 private:
  class OwnedStream {
   public:
    OwnedStream() { VOLCCL_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
    ~OwnedStream() { cudaStreamDestroy(stream_); }
    OwnedStream(const OwnedStream&) = delete;
    OwnedStream& operator=(const OwnedStream&) = delete;
    cudaStream_t get() const { return stream_; }

   private:
    cudaStream_t stream_ = nullptr;
  };

  // A stream of slabs: its CUDA stream, its pinned staging and its device buffers, sized for
  // the thickest slab, kept for both passes (none for what stays on the device).
  struct Stream {
    OwnedStream owned;  // destroyed last, after the buffers' frees are enqueued on it
    cudaStream_t stream;
    StagingLease staging;
    DeviceBuffer<std::uint8_t> input;
    DeviceBuffer<std::uint32_t> local;
    DeviceBuffer<Label> wide;  // empty for 32-bit labels, gathered in place

    Stream(const SlabPlan& plan, std::size_t value_bytes, unsigned copy_threads,
           SlabResidency residency)
        : stream(owned.get()),
          staging(copy_threads),
          input(residency == SlabResidency::input ? 0 : plan.voxels(0) * value_bytes, stream,
                "a slab of the input"),
          local(residency == SlabResidency::labels ? 0 : plan.voxels(0), stream, "a slab's labels"),
          wide(sizeof(Label) == 4 ? 0 : plan.voxels(0), stream, "a slab's 64-bit labels") {}
  };

  std::uint64_t component_count() const {
    return plan_.count() > 1 ? merge_.component_count() : one_slab_count_;
  }

  // Runs `work` for every slab, slab s on stream s % streams, each stream from a host thread of
  // its own.
  template <class Work>
  void on_streams(Work work) {
    const std::size_t streams = streams_.size();
    std::vector<std::exception_ptr> errors(streams);
    std::vector<std::thread> threads;
    for (std::size_t t = 0; t < streams; ++t) {
      threads.emplace_back([&, t] {
        try {
          VOLCCL_CUDA_CHECK(cudaSetDevice(device_));
          for (std::uint64_t s = t; s < plan_.count(); s += streams) work(*streams_[t], s);
          VOLCCL_CUDA_CHECK(cudaStreamSynchronize(streams_[t]->stream));
        } catch (...) {
          errors[t] = std::current_exception();
        }
      });
    }
    for (std::thread& thread : threads) thread.join();
    for (const std::exception_ptr& error : errors) {
      if (error) std::rethrow_exception(error);
    }
  }

  // The labels (or input values) of consecutive slabs in the resident ones lie this many apart.
  std::uint64_t resident_stride() const {
    return aligned_voxels(plan_.voxels(0), sizeof(std::uint32_t));
  }
  std::uint64_t input_stride() const {
    return aligned_voxels(plan_.voxels(0), size_of(input_.type)) * size_of(input_.type);
  }

  // Where slab s's input is on the device: in the resident input, or in its stream's buffer.
  std::uint8_t* input_of(Stream& stream, std::uint64_t s) const {
    return resident_input_ ? resident_input_->data() + s * input_stride() : stream.input.data();
  }

  // Where slab s's local labels are: in the resident labels, or in its stream's buffer.
  std::uint32_t* local_of(Stream& stream, std::uint64_t s) const {
    return resident_labels_ ? resident_labels_->data() + s * resident_stride()
                            : stream.local.data();
  }

  // Labels slab s, uploading it first unless the resident input holds it already.
  LabelResult label_slab(Stream& stream, std::uint64_t s, cuda::DeviceMoments* moments,
                         bool upload) {
    const std::uint64_t voxels = plan_.voxels(s);
    if (upload) {
      stream.staging->upload(input_of(stream, s), slab_input(input_, plan_, s).data,
                             voxels * size_of(input_.type), stream.stream);
    }
    LabelInput on_device = input_;
    on_device.data = input_of(stream, s);
    const LabelResult part = label_on_device(on_device, plan_.slab_extent(s), local_of(stream, s),
                                             options_, stream.stream, moments, automatic_);
    const std::lock_guard<std::mutex> lock(mutex_);
    add_slab_result(result_, part);
    if (part.algorithm_used != options_.algorithm) {
      as_mask_ = part.algorithm_used;
    } else {
      every_slab_as_mask_ = false;
    }
    return part;
  }

  // Slab s's table of final labels, built on the device from its face labels: the bytes that
  // cross follow the faces' area, not the slab's components (up to one a voxel).
  void build_table(Stream& stream, std::uint64_t s, const DeviceBuffer<std::uint64_t>& table) {
    const FaceTable on_host = merge_.face_table(s);
    DeviceBuffer<std::uint32_t> labels(on_host.count, stream.stream, "a slab's face labels");
    DeviceBuffer<std::uint64_t> finals(on_host.count, stream.stream, "their final labels");
    DeviceBuffer<std::uint64_t> joined_before(on_host.count + 1, stream.stream,
                                              "their joined counts");
    VOLCCL_CUDA_CHECK(cudaMemcpyAsync(labels.data(), on_host.labels, labels.bytes(),
                                      cudaMemcpyHostToDevice, stream.stream));
    VOLCCL_CUDA_CHECK(cudaMemcpyAsync(finals.data(), on_host.finals, finals.bytes(),
                                      cudaMemcpyHostToDevice, stream.stream));
    VOLCCL_CUDA_CHECK(cudaMemcpyAsync(joined_before.data(), on_host.joined_before,
                                      joined_before.bytes(), cudaMemcpyHostToDevice,
                                      stream.stream));
    FaceTable on_device = on_host;
    on_device.labels = labels.data();
    on_device.finals = finals.data();
    on_device.joined_before = joined_before.data();
    const std::uint64_t blocks = std::min<std::uint64_t>((table.size() + 255) / 256, 65535 * 16);
    build_final_table<<<static_cast<unsigned>(blocks), 256, 0, stream.stream>>>(
        on_device, table.data(), table.size());
    VOLCCL_CUDA_CHECK(cudaGetLastError());
  }

  // First pass: the slab's count and the local labels of its first and last slices, and with
  // resident labels its statistics.
  void find_faces(Stream& stream, std::uint64_t s) {
    cuda::DeviceMoments moments;
    const bool measures = !slab_rows_.empty();
    const LabelResult part = label_slab(stream, s, measures ? &moments : nullptr, true);
    const std::uint32_t* local = local_of(stream, s);
    const std::uint64_t slice_bytes = plan_.slice_voxels * sizeof(std::uint32_t);
    if (std::uint32_t* first = merge_.first_slice(s)) {
      stream.staging->download(first, local, slice_bytes, stream.stream);
    }
    if (std::uint32_t* last = merge_.last_slice(s)) {
      stream.staging->download(last, local + (plan_.voxels(s) - plan_.slice_voxels), slice_bytes,
                               stream.stream);
    }
    if (measures) slab_rows_[s] = moments.to_host();
    merge_.add_slab(s, part.component_count);
  }

  // Second pass: the slab labeled again unless its labels stayed on the device (from its input
  // there, or uploaded again), its final labels gathered on the device and copied to their
  // place, and its statistics added to its components'.
  void write_slab(Stream& stream, std::uint64_t s) {
    cuda::DeviceMoments moments;
    const bool one_slab = plan_.count() == 1;
    if (!resident_labels_) {
      const LabelResult part =
          label_slab(stream, s, statistics_ != nullptr ? &moments : nullptr, !resident_input_);
      if (one_slab) one_slab_count_ = part.component_count;
    }
    const bool keeps_local = one_slab || merge_.keeps_local_labels(s);
    const std::uint64_t voxels = plan_.voxels(s);
    DeviceBuffer<std::uint64_t> table(keeps_local ? 0 : merge_.local_count(s) + 1, stream.stream,
                                      "a slab's final labels");
    if (!keeps_local) build_table(stream, s, table);
    std::uint32_t* local = local_of(stream, s);
    Label* out = reinterpret_cast<Label*>(local);
    if constexpr (sizeof(Label) != sizeof(std::uint32_t)) out = stream.wide.data();
    if (!keeps_local || sizeof(Label) != sizeof(std::uint32_t)) {
      const std::uint64_t blocks = std::min<std::uint64_t>((voxels + 255) / 256, 65535 * 16);
      write_final_labels<<<static_cast<unsigned>(blocks), 256, 0, stream.stream>>>(
          local, out, table.data(), voxels);
      VOLCCL_CUDA_CHECK(cudaGetLastError());
    }
    table.release();
    stream.staging->download(labels_ + plan_.first_voxel(s), out, voxels * sizeof(Label),
                             stream.stream);
    if (statistics_ != nullptr) {
      std::vector<ComponentMoments> rows =
          resident_labels_ ? std::move(slab_rows_[s]) : moments.to_host();
      const std::lock_guard<std::mutex> lock(mutex_);
      // One slab's rows are the volume's already.
      if (one_slab) {
        *statistics_ = std::move(rows);
      } else {
        add_slab_moments(*statistics_, rows, merge_.face_table(s), plan_, s);
      }
    }
  }

  LabelInput input_;
  SlabPlan plan_;
  Label* labels_;
  LabelOptions options_;
  std::vector<ComponentMoments>* statistics_;
  bool automatic_;
  SlabMerge merge_;
  int device_ = 0;
  std::uint64_t one_slab_count_ = 0;
  std::mutex mutex_;
  LabelResult result_;
  std::optional<Algorithm> as_mask_;  // the mask's algorithm, where a slab of one value took it
  bool every_slab_as_mask_ = true;
  std::vector<std::unique_ptr<Stream>> streams_;
  // Declared after the streams: freed on the first one's stream before it is destroyed.
  std::optional<DeviceBuffer<std::uint32_t>> resident_labels_;
  std::optional<DeviceBuffer<std::uint8_t>> resident_input_;
  std::vector<std::vector<ComponentMoments>> slab_rows_;  // resident labels' statistics
};

}  // namespace

template <class Label>
LabelResult label_cuda_from_host(const LabelInput& input, Extent3 extent, Label* labels,
                                 const LabelOptions& options,
                                 std::vector<ComponentMoments>* statistics, bool automatic) {
  const std::uint64_t voxels = extent.voxel_count();
  const double per_voxel =
      slab_bytes_per_voxel(input, options, sizeof(Label), statistics, automatic);
  reset_peak_device_memory();
  if constexpr (sizeof(Label) == sizeof(std::uint32_t)) {
    // A volume that needs less than the reserve is labeled whole without asking the device what
    // it has free, a query that would show on small images.
    const double need = per_voxel * static_cast<double>(voxels);
    const bool small = options.max_gpu_memory == 0 && need <= kReservedBytes;
    const bool whole = voxels <= slab_voxel_limit(options) &&
                       (small || need <= static_cast<double>(memory_budget(options)));
    if (whole) {
      try {
        LabelResult result =
            label_whole_through_device(input, extent, labels, options, statistics, automatic);
        result.peak_device_bytes = peak_device_memory();
        return result;
      } catch (const OutOfDeviceMemory&) {
        // Another user of the device took memory since it was counted: slabs need less.
      }
    }
  }
  // Two slabs in flight share the budget, beside every slab's local labels where those fit with
  // slabs of at least a sixteenth of the volume, else beside the whole input where that fits
  // with slabs of at least a thirty-second.
  const std::uint64_t now_available = memory_budget(options);
  const auto usable = static_cast<double>(now_available);
  const std::uint64_t slice_voxels = plan_slabs(extent, 1).slice_voxels;
  const auto fitting_beside = [&](double resident_bytes, double slab_per_voxel) {
    return static_cast<std::uint64_t>(std::max(0.0, usable - resident_bytes) /
                                      (kSlabStreams * slab_per_voxel));
  };
  const double value_bytes = static_cast<double>(size_of(input.type));
  SlabResidency residency = SlabResidency::none;
  std::uint64_t fitting = fitting_beside(0, per_voxel);
  const std::uint64_t labels_fitting =
      fitting_beside(sizeof(std::uint32_t) * static_cast<double>(voxels), per_voxel);
  const std::uint64_t input_fitting =
      fitting_beside(value_bytes * static_cast<double>(voxels), per_voxel - value_bytes);
  if (labels_fitting >= voxels / kMostResidentSlabs && labels_fitting >= slice_voxels) {
    residency = SlabResidency::labels;
    fitting = labels_fitting;
  } else if (input_fitting >= voxels / kMostInputResidentSlabs && input_fitting >= slice_voxels) {
    residency = SlabResidency::input;
    fitting = input_fitting;
  }
  const SlabPlan plan = plan_slabs(extent, std::min(fitting, slab_voxel_limit(options)));
  if (static_cast<double>(plan.voxels(0)) * kSlabStreams * per_voxel > usable) {
    throw OutOfDeviceMemory("volccl: a slab of one slice of " + extent.to_string() +
                                " needs more device memory than the " +
                                std::to_string(now_available) +
                                " bytes available; the CPU backend (--device cpu) needs none",
                            static_cast<std::size_t>(plan.voxels(0) * kSlabStreams * per_voxel));
  }
  LabelResult result = SlabStreamer<Label>(input, plan, labels, options, statistics, automatic)
                           .run(plan.count() > 1 ? residency : SlabResidency::none);
  result.peak_device_bytes = peak_device_memory();
  return result;
}

template LabelResult label_cuda_from_host<std::uint32_t>(const LabelInput&, Extent3, std::uint32_t*,
                                                         const LabelOptions&,
                                                         std::vector<ComponentMoments>*, bool);
template LabelResult label_cuda_from_host<std::uint64_t>(const LabelInput&, Extent3, std::uint64_t*,
                                                         const LabelOptions&,
                                                         std::vector<ComponentMoments>*, bool);

}  // namespace volccl::detail
