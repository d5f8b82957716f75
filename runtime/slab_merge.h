// What labeling a volume slab by slab needs besides the labelers, on both backends: the cut into
// slabs of whole slices, the joining of the slabs' components across the faces between them,
// and the numbering of the joined components in raster order. Plain C++, host memory.
//
// Each slab is labeled on its own, its components numbered 1..n_s in raster order (its local
// labels). Slab s's local label l is the provisional component offset_s + l, where offset_s
// counts the components of the slabs before it; provisional components are then in raster order
// of their first voxels, since the slabs are. Two provisional components that touch across a
// face are one component, whose first voxel is its smallest provisional component's: so the
// final label of a provisional component is that of the smallest one it is joined to, ranked
// among such smallest ones. Only the components on a face take part in the joining; the others
// keep their rank, shifted by the joined ones before them.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/host_device.h"
#include "runtime/page_array.h"
#include "volccl/statistics.h"
#include "volccl/types.h"

namespace volccl::detail {

// What turns a slab's local labels into final ones: its local labels that lie on a face
// (ascending), the final label of each, how many of the face labels before each are joined to
// an earlier provisional component (one more entry than the face labels: the last counts them
// all) and the slab's base (its offset less the joined ones in the slabs before it). Pointers
// into host or device memory.
struct FaceTable {
  const std::uint32_t* labels = nullptr;
  const std::uint64_t* finals = nullptr;
  const std::uint64_t* joined_before = nullptr;
  std::uint64_t count = 0;  // face labels
  std::uint64_t base = 0;
};

// The final label of local label `label` >= 1, where k is the index of the first face label
// not below it: the face label's own final label, or else its provisional label shifted down by
// the joined ones before it.
VOLCCL_HD std::uint64_t final_label_at(const FaceTable& table, std::uint64_t label,
                                       std::uint64_t k) {
  return k < table.count && table.labels[k] == label ? table.finals[k]
                                                     : table.base + label - table.joined_before[k];
}

// The same, finding k by binary search, as a device thread for its one label.
VOLCCL_HD std::uint64_t final_label_of(const FaceTable& table, std::uint64_t label) {
  std::uint64_t low = 0, high = table.count;
  while (low < high) {
    const std::uint64_t middle = low + (high - low) / 2;
    if (table.labels[middle] < label) {
      low = middle + 1;
    } else {
      high = middle;
    }
  }
  return final_label_at(table, label, low);
}

// A volume cut into slabs of `depth` whole slices along its slowest axis: z, or y for a volume
// of one slice (an image), whose slices are rows. The last slab may be thinner.
struct SlabPlan {
  Extent3 extent;
  std::uint64_t slices = 1;        // along the cut axis
  std::uint64_t slice_voxels = 1;  // x * y, or x for one slice
  std::uint64_t depth = 1;         // slices per slab

  bool along_y() const { return extent.z == 1; }
  std::uint64_t count() const { return (slices + depth - 1) / depth; }
  std::uint64_t first_slice(std::uint64_t slab) const { return slab * depth; }
  std::uint64_t slab_slices(std::uint64_t slab) const;
  std::uint64_t first_voxel(std::uint64_t slab) const { return first_slice(slab) * slice_voxels; }
  std::uint64_t voxels(std::uint64_t slab) const { return slab_slices(slab) * slice_voxels; }
  Extent3 slab_extent(std::uint64_t slab) const;
};

// The part of `input` (host or device memory) that slab `slab` of `plan` reads.
LabelInput slab_input(const LabelInput& input, const SlabPlan& plan, std::uint64_t slab);

// The plan with the thickest slabs of at most `max_slab_voxels` voxels (at least one slice).
SlabPlan plan_slabs(Extent3 extent, std::uint64_t max_slab_voxels);

// Joins the slabs' components across their faces and numbers them. add_slab() for every slab
// (from any thread, each slab once), then join(), then final labels by slab.
class SlabMerge {
 public:
  // `input` (host memory) tells a label map's values apart on the faces; masks need only the
  // labels.
  SlabMerge(const SlabPlan& plan, int connectivity, const LabelInput& input);

  // Where slab `slab`'s first and last slices' local labels (slice_voxels each) go, for the
  // caller to write before add_slab(); nullptr for the volume's own first and last slices, which
  // face no other slab.
  std::uint32_t* first_slice(std::uint64_t slab) const;
  std::uint32_t* last_slice(std::uint64_t slab) const;
  // Slab `slab` is labeled with `count` components, its face slices written.
  void add_slab(std::uint64_t slab, std::uint64_t count);
  // The same, its face slices copied from the slab's local labels in host memory.
  void add_slab_labels(std::uint64_t slab, std::uint64_t count, const std::uint32_t* labels);

  // Joins the components that touch across each face, with `threads` workers.
  void join(unsigned threads);

  std::uint64_t component_count() const { return component_count_; }
  std::uint64_t local_count(std::uint64_t slab) const { return counts_[slab]; }
  // Whether slab `slab`'s local labels are already final (the first slab, when no two of its
  // components meet in later slabs).
  bool keeps_local_labels(std::uint64_t slab) const;
  // Slab `slab`'s final labels by local label: table[l] for l = 0..local_count(slab), table[0]
  // = 0.
  std::vector<std::uint64_t> final_labels(std::uint64_t slab, unsigned threads) const;
  // What they come from, in host memory, for a device to build the table (after join()).
  FaceTable face_table(std::uint64_t slab) const;

 private:
  // A slab's face labels as a bitmap by local label, ranked as runtime/raster_rank.h ranks
  // roots: a label's node in constant time.
  struct FaceBits {
    std::uint64_t word_count = 0;
    PageArray<std::uint32_t> bitmap;
    PageArray<std::uint32_t> words_before;  // set bits in the words before each
    std::uint32_t label_count = 0;
  };

  void mark_face_labels(std::uint64_t slab, unsigned threads);
  void list_face_labels(std::uint64_t slab, unsigned threads);
  std::uint64_t node_of(std::uint64_t slab, std::uint32_t label) const;
  template <class Touch>
  void for_each_pair(std::uint64_t upper_slab, std::uint64_t begin, std::uint64_t end,
                     const Touch& touch) const;
  template <class RowsBody>
  void on_face_rows(unsigned threads, const RowsBody& rows_body) const;
  void number_nodes(std::uint64_t* parents, unsigned threads);

  SlabPlan plan_;
  int connectivity_;
  LabelInput input_;
  std::vector<std::uint64_t> counts_;
  // Face f's slices, the last of slab f and then the first of slab f + 1, one after the other:
  // on 2 MiB pages, first touched by their writers in parallel.
  PageArray<std::uint32_t> face_slices_;
  std::vector<FaceBits> face_bits_;  // during join()
  // After join(), by node (slab s's face labels are nodes node_base_[s] to node_base_[s + 1]):
  // every slab's local labels that lie on a face (ascending), the final label of each, and how
  // many of those before it in its slab are joined to an earlier provisional component, with one
  // entry more per slab (at node_base_[s + 1] + s) that counts them all.
  std::vector<std::uint64_t> offsets_;
  std::vector<std::uint64_t> node_base_;
  PageArray<std::uint32_t> face_labels_;
  PageArray<std::uint64_t> face_finals_;
  PageArray<std::uint64_t> joined_before_;
  std::vector<std::uint64_t> joined_before_slab_;
  std::uint64_t joined_in_all_ = 0;
  std::uint64_t component_count_ = 0;
};

// Adds a slab's iterations and step times to the volume's.
void add_slab_result(LabelResult& volume, const LabelResult& slab);

// Adds the moments of slab `slab`'s components (rows by local label, in the slab's own
// coordinates) to the rows of the volume's components they belong to, by its face table.
void add_slab_moments(std::vector<ComponentMoments>& volume,
                      const std::vector<ComponentMoments>& slab_rows, const FaceTable& faces,
                      const SlabPlan& plan, std::uint64_t slab);

// Moments measured in a slab's own coordinates, moved to the volume's: the slab starts at
// `first_slice` along z (or y for a one-slice volume).
void shift_moments(ComponentMoments& moments, bool along_y, std::uint64_t first_slice);
// Adds `part`'s voxels to `whole`'s: sums add, boxes join.
void add_moments(ComponentMoments& whole, const ComponentMoments& part);

}  // namespace volccl::detail
