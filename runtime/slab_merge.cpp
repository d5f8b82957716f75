#include "runtime/slab_merge.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>

#include "runtime/cpu_parallel.h"

namespace volccl::detail {
namespace {

struct SliceOffset {
  int dx, dy;
};

// The voxels of the slice below that a voxel of a slab's first slice touches, as offsets within
// the slice. In a one-slice volume the slices are rows, and the offsets along y fall outside.
std::vector<SliceOffset> offsets_across_face(int connectivity) {
  if (connectivity == 4 || connectivity == 6) return {{0, 0}};
  if (connectivity == 8) return {{-1, 0}, {0, 0}, {1, 0}};
  if (connectivity == 18) return {{0, -1}, {-1, 0}, {0, 0}, {1, 0}, {0, 1}};
  std::vector<SliceOffset> all;
  for (int dy = -1; dy <= 1; ++dy) {
    for (int dx = -1; dx <= 1; ++dx) all.push_back({dx, dy});
  }
  return all;
}

std::uint64_t find_root(std::vector<std::uint64_t>& parent, std::uint64_t node) {
  while (parent[node] != node) {
    parent[node] = parent[parent[node]];
    node = parent[node];
  }
  return node;
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
      first_slices_(plan.count()),
      last_slices_(plan.count()) {}

void SlabMerge::add_slab(std::uint64_t slab, std::uint64_t count, const std::uint32_t* first_slice,
                         const std::uint32_t* last_slice) {
  counts_[slab] = count;
  const std::uint64_t n = plan_.slice_voxels;
  if (slab > 0) first_slices_[slab].assign(first_slice, first_slice + n);
  if (slab + 1 < plan_.count()) last_slices_[slab].assign(last_slice, last_slice + n);
}

// The pairs (upper local label << 32 | lower local label) of components that touch across the
// face below slab `upper_slab`, ascending and without repeats.
std::vector<std::uint64_t> SlabMerge::face_pairs(std::uint64_t upper_slab) const {
  const std::vector<std::uint32_t>& upper = first_slices_[upper_slab];
  const std::vector<std::uint32_t>& lower = last_slices_[upper_slab - 1];
  const std::uint64_t width = plan_.extent.x;
  const std::uint64_t height = plan_.slice_voxels / width;
  const std::uint64_t upper_base = plan_.first_voxel(upper_slab);
  const std::uint64_t lower_base = upper_base - plan_.slice_voxels;
  const std::size_t value_bytes = size_of(input_.type);
  const auto* values = static_cast<const unsigned char*>(input_.data);
  const std::vector<SliceOffset> offsets = offsets_across_face(connectivity_);
  std::vector<std::uint64_t> pairs;
  std::uint64_t previous = 0;
  for (std::uint64_t y = 0; y < height; ++y) {
    for (std::uint64_t x = 0; x < width; ++x) {
      const std::uint64_t i = y * width + x;
      const std::uint32_t a = upper[i];
      if (a == 0) continue;
      for (const SliceOffset& offset : offsets) {
        // Unsigned wrap-around takes x - 1 at x = 0 (and y - 1) outside, as past the far side.
        const std::uint64_t nx = x + static_cast<std::uint64_t>(std::int64_t{offset.dx});
        const std::uint64_t ny = y + static_cast<std::uint64_t>(std::int64_t{offset.dy});
        if (nx >= width || ny >= height) continue;
        const std::uint64_t j = ny * width + nx;
        const std::uint32_t b = lower[j];
        if (b == 0) continue;
        if (input_.label_map &&
            std::memcmp(values + (upper_base + i) * value_bytes,
                        values + (lower_base + j) * value_bytes, value_bytes) != 0) {
          continue;
        }
        const std::uint64_t pair = std::uint64_t{a} << 32 | b;
        if (pair != previous) pairs.push_back(pair);
        previous = pair;
      }
    }
  }
  std::sort(pairs.begin(), pairs.end());
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  return pairs;
}

void SlabMerge::join(unsigned threads) {
  const std::uint64_t slabs = plan_.count();
  offsets_.assign(slabs, 0);
  for (std::uint64_t s = 1; s < slabs; ++s) offsets_[s] = offsets_[s - 1] + counts_[s - 1];
  const std::uint64_t provisional = offsets_[slabs - 1] + counts_[slabs - 1];

  // Face f lies below slab f + 1.
  const std::uint64_t faces = slabs - 1;
  std::vector<std::vector<std::uint64_t>> pairs(faces);
  parallel_for(faces, threads, [&](std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t f = begin; f < end; ++f) pairs[f] = face_pairs(f + 1);
  });

  // The labels of each slab on a face that touch another slab's component.
  face_labels_.assign(slabs, {});
  parallel_for(slabs, threads, [&](std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t s = begin; s < end; ++s) {
      std::vector<std::uint32_t>& labels = face_labels_[s];
      if (s > 0) {
        for (const std::uint64_t pair : pairs[s - 1]) labels.push_back(pair >> 32);
      }
      if (s < faces) {
        for (const std::uint64_t pair : pairs[s]) labels.push_back(pair & 0xFFFFFFFFu);
      }
      std::sort(labels.begin(), labels.end());
      labels.erase(std::unique(labels.begin(), labels.end()), labels.end());
    }
  });
  std::vector<std::uint64_t> node_base(slabs + 1, 0);
  for (std::uint64_t s = 0; s < slabs; ++s)
    node_base[s + 1] = node_base[s] + face_labels_[s].size();

  // Nodes are numbered in the order of their provisional components, so that uniting under the
  // smaller node keeps every component's smallest provisional component at its root.
  const auto node_of = [&](std::uint64_t slab, std::uint32_t label) {
    const std::vector<std::uint32_t>& labels = face_labels_[slab];
    return node_base[slab] +
           static_cast<std::uint64_t>(std::lower_bound(labels.begin(), labels.end(), label) -
                                      labels.begin());
  };
  std::vector<std::vector<std::pair<std::uint64_t, std::uint64_t>>> edges(faces);
  parallel_for(faces, threads, [&](std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t f = begin; f < end; ++f) {
      edges[f].reserve(pairs[f].size());
      for (const std::uint64_t pair : pairs[f]) {
        edges[f].emplace_back(node_of(f + 1, static_cast<std::uint32_t>(pair >> 32)),
                              node_of(f, static_cast<std::uint32_t>(pair & 0xFFFFFFFFu)));
      }
      std::vector<std::uint64_t>().swap(pairs[f]);
    }
  });
  std::vector<std::uint64_t> parent(node_base[slabs]);
  for (std::uint64_t i = 0; i < parent.size(); ++i) parent[i] = i;
  for (const auto& face : edges) {
    for (const auto& [a, b] : face) {
      const std::uint64_t root_a = find_root(parent, a);
      const std::uint64_t root_b = find_root(parent, b);
      if (root_a < root_b) parent[root_b] = root_a;
      if (root_b < root_a) parent[root_a] = root_b;
    }
  }

  // Every parent precedes its child, so one pass in node order flattens the trees and numbers
  // the roots.
  face_finals_.assign(slabs, {});
  joined_before_.assign(slabs, {});
  joined_before_slab_.assign(slabs, 0);
  std::vector<std::uint64_t> node_final(parent.size());
  std::uint64_t joined = 0;
  for (std::uint64_t s = 0; s < slabs; ++s) {
    joined_before_slab_[s] = joined;
    const std::vector<std::uint32_t>& labels = face_labels_[s];
    std::vector<std::uint64_t>& finals = face_finals_[s];
    std::vector<std::uint64_t>& before = joined_before_[s];
    finals.resize(labels.size());
    before.resize(labels.size() + 1);
    for (std::uint64_t k = 0; k < labels.size(); ++k) {
      before[k] = joined - joined_before_slab_[s];
      const std::uint64_t node = node_base[s] + k;
      const std::uint64_t root = parent[parent[node]];
      parent[node] = root;
      if (root == node) {
        node_final[node] = offsets_[s] + labels[k] - joined;
      } else {
        node_final[node] = node_final[root];
        ++joined;
      }
      finals[k] = node_final[node];
    }
    before[labels.size()] = joined - joined_before_slab_[s];
  }
  component_count_ = provisional - joined;
}

bool SlabMerge::keeps_local_labels(std::uint64_t slab) const {
  return offsets_[slab] == 0 && joined_before_slab_[slab] == 0 && joined_before_[slab].back() == 0;
}

FaceTable SlabMerge::face_table(std::uint64_t slab) const {
  FaceTable table;
  table.labels = face_labels_[slab].data();
  table.finals = face_finals_[slab].data();
  table.joined_before = joined_before_[slab].data();
  table.count = face_labels_[slab].size();
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
