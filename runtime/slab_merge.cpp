#include "runtime/slab_merge.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "runtime/cpu_parallel.h"
#include "runtime/host_device.h"
#include "runtime/raster_rank.h"
#include "runtime/union_find.h"

namespace volccl::detail {
namespace {

struct SliceOffset {
  int dx, dy;
  // The voxel at this offset is also at offset (dx + 1, dy) of the voxel to the left: where that
  // one holds the same label, the pair is known already.
  bool seen_from_left = false;
};

// The voxels of the slice below that a voxel of a slab's first slice touches, as offsets within
// the slice. In a one-slice volume the slices are rows, and the offsets along y fall outside.
std::vector<SliceOffset> offsets_across_face(int connectivity) {
  std::vector<SliceOffset> offsets;
  if (connectivity == 4 || connectivity == 6) {
    offsets = {{0, 0}};
  } else if (connectivity == 8) {
    offsets = {{-1, 0}, {0, 0}, {1, 0}};
  } else if (connectivity == 18) {
    offsets = {{0, -1}, {-1, 0}, {0, 0}, {1, 0}, {0, 1}};
  } else {
    for (int dy = -1; dy <= 1; ++dy) {
      for (int dx = -1; dx <= 1; ++dx) offsets.push_back({dx, dy});
    }
  }
  for (SliceOffset& offset : offsets) {
    offset.seen_from_left =
        std::any_of(offsets.begin(), offsets.end(), [&](const SliceOffset& other) {
          return other.dx == offset.dx + 1 && other.dy == offset.dy;
        });
  }
  return offsets;
}

}  // namespace

std::uint64_t SlabPlan::slab_slices(std::uint64_t slab) const {
  return std::min(depth, slices - first_slice(slab));
}

Extent3 SlabPlan::slab_extent(std::uint64_t slab) const {
  if (along_y()) return {extent.x, slab_slices(slab), 1};
  return {extent.x, extent.y, slab_slices(slab)};
}

LabelInput slab_input(const LabelInput& input, const SlabPlan& plan, std::uint64_t slab) {
  LabelInput part = input;
  part.data =
      static_cast<const unsigned char*>(input.data) + plan.first_voxel(slab) * size_of(input.type);
  return part;
}

SlabPlan plan_slabs(Extent3 extent, std::uint64_t max_slab_voxels) {
  SlabPlan plan;
  plan.extent = extent;
  plan.slices = plan.along_y() ? extent.y : extent.z;
  plan.slice_voxels = plan.along_y() ? extent.x : extent.x * extent.y;
  plan.depth =
      std::min(std::max<std::uint64_t>(1, max_slab_voxels / plan.slice_voxels), plan.slices);
  return plan;
}

SlabMerge::SlabMerge(const SlabPlan& plan, int connectivity, const LabelInput& input)
    : plan_(plan),
      connectivity_(connectivity),
      input_(input),
      counts_(plan.count()),
      face_slices_(2 * (plan.count() - 1) * plan.slice_voxels) {}

std::uint32_t* SlabMerge::first_slice(std::uint64_t slab) const {
  return slab > 0 ? face_slices_.get() + (2 * slab - 1) * plan_.slice_voxels : nullptr;
}

std::uint32_t* SlabMerge::last_slice(std::uint64_t slab) const {
  return slab + 1 < plan_.count() ? face_slices_.get() + 2 * slab * plan_.slice_voxels : nullptr;
}

void SlabMerge::add_slab(std::uint64_t slab, std::uint64_t count) { counts_[slab] = count; }

void SlabMerge::add_slab_labels(std::uint64_t slab, std::uint64_t count,
                                const std::uint32_t* labels) {
  const std::uint64_t n = plan_.slice_voxels;
  if (std::uint32_t* first = first_slice(slab)) std::copy(labels, labels + n, first);
  if (std::uint32_t* last = last_slice(slab)) {
    const std::uint32_t* from = labels + (plan_.voxels(slab) - n);
    std::copy(from, from + n, last);
  }
  add_slab(slab, count);
}

namespace {

// The face labels' nodes, parents in a concurrent union-find (runtime/union_find.h) of 64-bit
// nodes: the faces of a volume of up to 2^40 voxels may hold more than 2^32 labels. Its slots
// are read and written through the overloads below, found by argument-dependent lookup.
struct FaceSlot {
  std::uint64_t* address;
};

std::uint64_t load_relaxed(FaceSlot slot) {
  return __atomic_load_n(slot.address, __ATOMIC_RELAXED);
}

void store_relaxed(FaceSlot slot, std::uint64_t value) {
  __atomic_store_n(slot.address, value, __ATOMIC_RELAXED);
}

// Returns the old value, as the labelers' atomic_min does.
std::uint64_t atomic_min(FaceSlot slot, std::uint64_t value) {
  std::uint64_t old = __atomic_load_n(slot.address, __ATOMIC_RELAXED);
  while (value < old && !__atomic_compare_exchange_n(slot.address, &old, value, true,
                                                     __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
  return old;
}

struct FaceForest {
  std::uint64_t* parents;
  FaceSlot slot(std::uint64_t node) const { return {parents + node}; }
};

}  // namespace

// A face label's node: its slab's first node plus its rank among the slab's face labels, from
// the bitmap as raster_rank.h ranks roots.
std::uint64_t SlabMerge::node_of(std::uint64_t slab, std::uint32_t label) const {
  const FaceBits& bits = face_bits_[slab];
  return node_base_[slab] + component_label(bits.bitmap.get(), bits.words_before.get(), label) - 1;
}

// Calls touch(upper label, lower label) for every two voxels that touch across the face below
// slab `upper_slab` (and hold the same value in a label map), in rows [begin, end) of the face,
// skipping a pair that repeats the one before.
template <class Touch>
void SlabMerge::for_each_pair(std::uint64_t upper_slab, std::uint64_t begin, std::uint64_t end,
                              const Touch& touch) const {
  const std::uint32_t* upper = first_slice(upper_slab);
  const std::uint32_t* lower = last_slice(upper_slab - 1);
  const std::uint64_t width = plan_.extent.x;
  const std::uint64_t height = plan_.slice_voxels / width;
  const std::uint64_t upper_base = plan_.first_voxel(upper_slab);
  const std::uint64_t lower_base = upper_base - plan_.slice_voxels;
  const bool label_map = input_.label_map;  // a local: the unions' atomics would reload a member
  const std::size_t value_bytes = size_of(input_.type);
  const auto* values = static_cast<const unsigned char*>(input_.data);
  const std::vector<SliceOffset> offsets = offsets_across_face(connectivity_);
  std::uint64_t previous = 0;
  for (std::uint64_t y = begin; y < end; ++y) {
    for (std::uint64_t x = 0; x < width; ++x) {
      const std::uint64_t i = y * width + x;
      const std::uint32_t a = upper[i];
      if (a == 0) continue;
      const bool same_as_left = x > 0 && upper[i - 1] == a;
      for (const SliceOffset& offset : offsets) {
        if (same_as_left && offset.seen_from_left) continue;
        // Unsigned wrap-around takes x - 1 at x = 0 (and y - 1) outside, as past the far side.
        const std::uint64_t nx = x + static_cast<std::uint64_t>(std::int64_t{offset.dx});
        const std::uint64_t ny = y + static_cast<std::uint64_t>(std::int64_t{offset.dy});
        if (nx >= width || ny >= height) continue;
        const std::uint64_t j = ny * width + nx;
        const std::uint32_t b = lower[j];
        if (b == 0) continue;
        if (label_map && std::memcmp(values + (upper_base + i) * value_bytes,
                                     values + (lower_base + j) * value_bytes, value_bytes) != 0) {
          continue;
        }
        const std::uint64_t pair = std::uint64_t{a} << 32 | b;
        if (pair == previous) continue;
        previous = pair;
        touch(a, b);
      }
    }
  }
}

// Runs `rows_body(face, begin, end)` over every face's rows, shared among the workers.
template <class RowsBody>
void SlabMerge::on_face_rows(unsigned threads, const RowsBody& rows_body) const {
  const std::uint64_t faces = plan_.count() - 1;  // face f lies below slab f + 1
  const std::uint64_t rows = plan_.slice_voxels / plan_.extent.x;
  parallel_for(faces * rows, threads, [&](std::uint64_t begin, std::uint64_t end) {
    while (begin < end) {
      const std::uint64_t face = begin / rows;
      const std::uint64_t face_end = std::min(end, (face + 1) * rows);
      rows_body(face, begin - face * rows, face_end - face * rows);
      begin = face_end;
    }
  });
}

// Slab `slab`'s face labels as a bitmap by local label, and its ranks. Those on its first slice
// are 1..m, m the largest, since a slab numbers its components in raster order of their first
// voxels and these have theirs there; those on its last slice are marked one by one. (Marking
// only the labels that touch another slab's would take a second pass over the faces'
// neighbours.)
void SlabMerge::mark_face_labels(std::uint64_t slab, unsigned threads) {
  FaceBits& bits = face_bits_[slab];
  bits.word_count = rank_words(counts_[slab] + 1);
  bits.bitmap = PageArray<std::uint32_t>(bits.word_count);
  const std::uint64_t n = plan_.slice_voxels;
  const std::uint32_t* first = first_slice(slab);
  std::uint32_t first_labels = 0;
  if (first != nullptr) {
    parallel_for(n, threads, [&](std::uint64_t begin, std::uint64_t end) {
      atomic_max(&first_labels, *std::max_element(first + begin, first + end));
    });
  }
  parallel_for(bits.word_count, threads, [&](std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t w = begin; w < end; ++w) {
      const std::uint64_t low = w * 32;  // the label of the word's bit 0
      bits.bitmap[w] = first_labels < low         ? 0
                       : first_labels >= low + 31 ? ~0u
                                                  : (2u << (first_labels - low)) - 1;
    }
  });
  bits.bitmap[0] &= ~1u;  // label 0 is the background
  const std::uint32_t* last = last_slice(slab);
  parallel_for(last != nullptr ? n : 0, threads, [&](std::uint64_t begin, std::uint64_t end) {
    std::uint32_t previous = 0;  // a label's runs in a row: one atomic for them all
    for (std::uint64_t i = begin; i < end; ++i) {
      const std::uint32_t label = last[i];
      if (label <= first_labels || label == previous) continue;
      mark_component_start(bits.bitmap.get(), label);
      previous = label;
    }
  });
  bits.words_before = PageArray<std::uint32_t>(bits.word_count);
  std::uint32_t labels = 0;
  for (std::uint64_t w = 0; w < bits.word_count; ++w) {
    bits.words_before[w] = labels;
    labels += popcount(bits.bitmap[w]);
  }
  bits.label_count = labels;
}

// Slab `slab`'s face labels, ascending, from its bits into face_labels_ from its first node.
void SlabMerge::list_face_labels(std::uint64_t slab, unsigned threads) {
  const FaceBits& bits = face_bits_[slab];
  parallel_for(bits.word_count, threads, [&](std::uint64_t begin, std::uint64_t end) {
    std::uint32_t* label = face_labels_.get() + node_base_[slab] + bits.words_before[begin];
    for (std::uint64_t w = begin; w < end; ++w) {
      for (std::uint32_t word = bits.bitmap[w]; word != 0; word &= word - 1) {
        *label++ =
            static_cast<std::uint32_t>(w * 32 + static_cast<std::uint64_t>(lowest_bit(word)));
      }
    }
  });
}

void SlabMerge::join(unsigned threads) {
  const std::uint64_t slabs = plan_.count();
  offsets_.assign(slabs, 0);
  for (std::uint64_t s = 1; s < slabs; ++s) offsets_[s] = offsets_[s - 1] + counts_[s - 1];
  const std::uint64_t provisional = offsets_[slabs - 1] + counts_[slabs - 1];

  // Slabs side by side, each with a share of the threads: starting threads for each of many
  // thin slabs would cost more than their work.
  const auto slab_workers = static_cast<unsigned>(std::min<std::uint64_t>(threads, slabs));
  const unsigned threads_per_slab = std::max(1u, threads / slab_workers);
  face_bits_.clear();
  face_bits_.resize(slabs);
  parallel_for(slabs, slab_workers, [&](std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t s = begin; s < end; ++s) mark_face_labels(s, threads_per_slab);
  });

  // Nodes: the face labels, numbered in the order of their provisional components, so that
  // uniting under the smaller node keeps every component's smallest provisional component at
  // its root. A node is found by its label's rank among its slab's face labels.
  node_base_.assign(slabs + 1, 0);
  for (std::uint64_t s = 0; s < slabs; ++s) {
    node_base_[s + 1] = node_base_[s] + face_bits_[s].label_count;
  }
  const std::uint64_t nodes = node_base_[slabs];
  face_labels_ = PageArray<std::uint32_t>(nodes);
  parallel_for(slabs, slab_workers, [&](std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t s = begin; s < end; ++s) list_face_labels(s, threads_per_slab);
  });
  const PageArray<std::uint64_t> parents(nodes);
  parallel_for(nodes, threads, [&](std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t n = begin; n < end; ++n) parents[n] = n;
  });

  const FaceForest forest{parents.get()};
  on_face_rows(threads, [&](std::uint64_t face, std::uint64_t begin, std::uint64_t end) {
    for_each_pair(face + 1, begin, end, [&](std::uint32_t a, std::uint32_t b) {
      unite(forest, node_of(face + 1, a), node_of(face, b));
    });
  });
  face_bits_.clear();
  number_nodes(parents.get(), threads);
  component_count_ = provisional - joined_in_all_;
}

// Gives every node its final label: a root ranks among the roots, after the components joined
// to an earlier one; any other node takes its root's. Nodes are cut into chunks within slabs,
// and a chunk's joined nodes counted before the nodes are numbered.
void SlabMerge::number_nodes(std::uint64_t* parents, unsigned threads) {
  struct Chunk {
    std::uint64_t slab, begin, end, joined_before = 0;
  };
  const std::uint64_t slabs = plan_.count();
  const std::uint64_t nodes = node_base_[slabs];
  const std::uint64_t chunk_nodes = std::max<std::uint64_t>(4096, nodes / (8 * threads) + 1);
  std::vector<Chunk> chunks;
  std::vector<std::uint64_t> first_chunk(slabs + 1);
  for (std::uint64_t s = 0; s < slabs; ++s) {
    first_chunk[s] = chunks.size();
    for (std::uint64_t n = node_base_[s]; n < node_base_[s + 1]; n += chunk_nodes) {
      chunks.push_back({s, n, std::min(n + chunk_nodes, node_base_[s + 1])});
    }
  }
  first_chunk[slabs] = chunks.size();

  const FaceForest forest{parents};
  std::vector<std::uint64_t> joined(chunks.size());
  parallel_for(chunks.size(), threads, [&](std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t c = begin; c < end; ++c) {
      std::uint64_t joined_here = 0;
      for (std::uint64_t n = chunks[c].begin; n < chunks[c].end; ++n) {
        const std::uint64_t root = find_root(forest, n);
        store_relaxed(forest.slot(n), root);
        joined_here += root != n;
      }
      joined[c] = joined_here;
    }
  });
  std::uint64_t joined_so_far = 0;
  joined_before_slab_.assign(slabs, 0);
  for (std::uint64_t s = 0; s < slabs; ++s) {
    joined_before_slab_[s] = joined_so_far;
    for (std::uint64_t c = first_chunk[s]; c < first_chunk[s + 1]; ++c) {
      chunks[c].joined_before = joined_so_far;
      joined_so_far += joined[c];
    }
  }
  joined_in_all_ = joined_so_far;

  // joined_before_ holds one entry more per slab than its face labels: slab s's begin at
  // node_base_[s] + s.
  face_finals_ = PageArray<std::uint64_t>(nodes);
  joined_before_ = PageArray<std::uint64_t>(nodes + slabs);
  for (std::uint64_t s = 0; s < slabs; ++s) {
    const std::uint64_t next = s + 1 < slabs ? joined_before_slab_[s + 1] : joined_in_all_;
    joined_before_[node_base_[s + 1] + s] = next - joined_before_slab_[s];
  }
  parallel_for(chunks.size(), threads, [&](std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t c = begin; c < end; ++c) {
      const std::uint64_t s = chunks[c].slab;
      std::uint64_t joined_before = chunks[c].joined_before;
      for (std::uint64_t n = chunks[c].begin; n < chunks[c].end; ++n) {
        joined_before_[n + s] = joined_before - joined_before_slab_[s];
        if (parents[n] == n) {
          face_finals_[n] = offsets_[s] + face_labels_[n] - joined_before;
        } else {
          ++joined_before;
        }
      }
    }
  });
  // A root precedes its nodes and was numbered above.
  parallel_for(nodes, threads, [&](std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t n = begin; n < end; ++n) {
      if (parents[n] != n) face_finals_[n] = face_finals_[parents[n]];
    }
  });
}

bool SlabMerge::keeps_local_labels(std::uint64_t slab) const {
  return offsets_[slab] == 0 && joined_before_slab_[slab] == 0 &&
         joined_before_[node_base_[slab + 1] + slab] == 0;
}

FaceTable SlabMerge::face_table(std::uint64_t slab) const {
  FaceTable table;
  table.labels = face_labels_.get() + node_base_[slab];
  table.finals = face_finals_.get() + node_base_[slab];
  table.joined_before = joined_before_.get() + node_base_[slab] + slab;
  table.count = node_base_[slab + 1] - node_base_[slab];
  table.base = offsets_[slab] - joined_before_slab_[slab];
  return table;
}

std::vector<std::uint64_t> SlabMerge::final_labels(std::uint64_t slab, unsigned threads) const {
  const std::uint64_t count = counts_[slab];
  std::vector<std::uint64_t> table(count + 1);
  table[0] = 0;
  const FaceTable faces = face_table(slab);
  parallel_for(
      count, resolve_thread_count(threads, count), [&](std::uint64_t begin, std::uint64_t end) {
        // k walks the face labels alongside l: no search but the first.
        std::uint64_t k = static_cast<std::uint64_t>(
            std::lower_bound(faces.labels, faces.labels + faces.count, begin + 1) - faces.labels);
        for (std::uint64_t l = begin + 1; l <= end; ++l) {
          table[l] = final_label_at(faces, l, k);
          if (k < faces.count && faces.labels[k] == l) ++k;
        }
      });
  return table;
}

void shift_moments(ComponentMoments& moments, bool along_y, std::uint64_t first_slice) {
  if (moments.count == 0 || first_slice == 0) return;
  const int axis = along_y ? 1 : 2;
  const std::uint64_t t = first_slice;
  const std::uint64_t sum = moments.sum[axis];
  moments.sum_products[axis] += 2 * t * sum + moments.count * t * t;
  // The products with the other two axes: xy and yz for y, xz and yz for z.
  if (along_y) {
    moments.sum_products[3] += t * moments.sum[0];
    moments.sum_products[5] += t * moments.sum[2];
  } else {
    moments.sum_products[4] += t * moments.sum[0];
    moments.sum_products[5] += t * moments.sum[1];
  }
  moments.sum[axis] = sum + moments.count * t;
  moments.min[axis] += static_cast<std::uint32_t>(t);
  moments.max[axis] += static_cast<std::uint32_t>(t);
}

void add_moments(ComponentMoments& whole, const ComponentMoments& part) {
  whole.count += part.count;
  for (int a = 0; a < 3; ++a) {
    whole.sum[a] += part.sum[a];
    whole.min[a] = std::min(whole.min[a], part.min[a]);
    whole.max[a] = std::max(whole.max[a], part.max[a]);
  }
  for (int p = 0; p < 6; ++p) whole.sum_products[p] += part.sum_products[p];
}

void add_slab_result(LabelResult& volume, const LabelResult& slab) {
  volume.iterations += slab.iterations;
  StepTimings& sum = volume.timings;
  const StepTimings& part = slab.timings;
  for (double StepTimings::*step :
       {&StepTimings::allocation_ms, &StepTimings::initialization_ms, &StepTimings::merge_ms,
        &StepTimings::compression_ms, &StepTimings::relabel_ms, &StepTimings::final_labeling_ms,
        &StepTimings::statistics_ms}) {
    sum.*step += part.*step;
  }
}

void add_slab_moments(std::vector<ComponentMoments>& volume,
                      const std::vector<ComponentMoments>& slab_rows, const FaceTable& faces,
                      const SlabPlan& plan, std::uint64_t slab) {
  std::uint64_t k = 0;  // walks the face labels alongside l
  for (std::uint64_t l = 1; l <= slab_rows.size(); ++l) {
    ComponentMoments row = slab_rows[l - 1];
    shift_moments(row, plan.along_y(), plan.first_slice(slab));
    add_moments(volume[final_label_at(faces, l, k) - 1], row);
    if (k < faces.count && faces.labels[k] == l) ++k;
  }
}

}  // namespace volccl::detail
