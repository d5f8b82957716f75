// The algorithm registry: what each labeling algorithm is, where its entry points are, and when
// `auto` picks it. docs/adding-an-algorithm.md shows how an algorithm joins it.
#include <string>
#include <vector>

#include "dispatch/algorithm_registry.h"
#include "volccl/error.h"

namespace volccl::detail {

// The entry points, one per family, dimension and backend (kernels3d/, kernels2d/).
LabelResult label_buf_bke_3d_cpu(const HostLabelCall& call);
LabelResult label_uf_3d_cpu(const HostLabelCall& call);
LabelResult label_ufb_3d_cpu(const HostLabelCall& call);
LabelResult label_ruf_3d_cpu(const HostLabelCall& call);
LabelResult label_buf_bke_2d_cpu(const HostLabelCall& call);
LabelResult label_uf_ke_2d_cpu(const HostLabelCall& call);
LabelResult label_ha4_2d_cpu(const HostLabelCall& call);
LabelResult label_le_2d_cpu(const HostLabelCall& call);
LabelResult label_tm_2d_cpu(const HostLabelCall& call);
LabelResult label_rts_3d_cpu(const HostLabelCall& call);
LabelResult label_rts_2d_cpu(const HostLabelCall& call);
LabelResult label_buf_bke_3d_cuda(const DeviceLabelCall& call);
LabelResult label_uf_3d_cuda(const DeviceLabelCall& call);
LabelResult label_ufb_3d_cuda(const DeviceLabelCall& call);
LabelResult label_ruf_3d_cuda(const DeviceLabelCall& call);
LabelResult label_buf_bke_2d_cuda(const DeviceLabelCall& call);
LabelResult label_uf_ke_2d_cuda(const DeviceLabelCall& call);
LabelResult label_ha4_2d_cuda(const DeviceLabelCall& call);
LabelResult label_le_2d_cuda(const DeviceLabelCall& call);
LabelResult label_tm_2d_cuda(const DeviceLabelCall& call);

namespace {

#if defined(VOLCCL_HAS_CUDA)
#define VOLCCL_CUDA_LABELER(entry) &entry
#else
#define VOLCCL_CUDA_LABELER(entry) nullptr
#endif

constexpr int kLate = static_cast<int>(StatisticsStrategy::late);
constexpr int kFused = static_cast<int>(StatisticsStrategy::fused);
constexpr int kEarly = static_cast<int>(StatisticsStrategy::early);
constexpr int kBinaryMask = static_cast<int>(InputKind::binary_mask);
constexpr int kLabelMap = static_cast<int>(InputKind::label_map);

constexpr const char* kBlockLimitation =
    "a 2x2 block is one piece only under 8-connectivity, a 2x2x2 block only under 26";
constexpr const char* kImageOnly = "it labels 2D images only (4 or 8)";

const Labelers kBufBke2d{&label_buf_bke_2d_cpu, VOLCCL_CUDA_LABELER(label_buf_bke_2d_cuda)};
const Labelers kBufBke3d{&label_buf_bke_3d_cpu, VOLCCL_CUDA_LABELER(label_buf_bke_3d_cuda), false,
                         true};
const Labelers kUfKe2d{&label_uf_ke_2d_cpu, VOLCCL_CUDA_LABELER(label_uf_ke_2d_cuda)};
const Labelers kHa4{&label_ha4_2d_cpu, VOLCCL_CUDA_LABELER(label_ha4_2d_cuda)};

// In the order of the Algorithm enumeration.
const std::vector<AlgorithmEntry> kRegistry = {
    {Algorithm::buf,
     "buf",
     "Block-based Union Find over 2x2x2 (2x2) blocks (Allegretti, Bolelli and Grana)",
     kBlockLimitation,
     {8, 26},
     kBufBke2d,
     kBufBke3d,
     {kLate, kFused, kEarly},
     {kBinaryMask},
     {26},
     {}},
    {Algorithm::buf_ic,
     "buf-ic",
     "BUF with InlineCompression",
     kBlockLimitation,
     {8, 26},
     kBufBke2d,
     kBufBke3d,
     {kLate, kFused, kEarly},
     {kBinaryMask},
     {},
     {}},
    {Algorithm::bke,
     "bke",
     "Block-based Komura Equivalence over 2x2x2 (2x2) blocks",
     kBlockLimitation,
     {8, 26},
     kBufBke2d,
     kBufBke3d,
     {kLate, kFused, kEarly},
     {kBinaryMask},
     {},
     {}},
    {Algorithm::bke_ic,
     "bke-ic",
     "BKE with InlineCompression",
     kBlockLimitation,
     {8, 26},
     kBufBke2d,
     kBufBke3d,
     {kLate, kFused, kEarly},
     {kBinaryMask},
     {8},
     {}},
    {Algorithm::uf,
     "uf",
     "union-find over voxels linked along their runs (Oliveira and Lotufo)",
     "",
     {4, 8, 6, 18, 26},
     kUfKe2d,
     {&label_uf_3d_cpu, VOLCCL_CUDA_LABELER(label_uf_3d_cuda)},
     {kLate},
     {kBinaryMask, kLabelMap},
     {},
     {},
     {4, 8},
     {}},
    {Algorithm::ufb,
     "ufb",
     "union-find over 2x2x1 blocks, their x-pairs as nodes, volumes",
     "its 2x2x1 blocks serve 6- and 18-connectivity in volumes only",
     {6, 18},
     {},
     {&label_ufb_3d_cpu, VOLCCL_CUDA_LABELER(label_ufb_3d_cuda)},
     {kLate},
     {kBinaryMask},
     {18},
     {}},
    {Algorithm::ruf,
     "ruf",
     "union-find over the runs of the rows, volumes",
     "its runs of rows serve volumes only",
     {6, 18, 26},
     {},
     {&label_ruf_3d_cpu, VOLCCL_CUDA_LABELER(label_ruf_3d_cuda), false, true, false, true},
     {kLate},
     {kBinaryMask, kLabelMap},
     {6},
     {},
     {6, 18, 26},
     {}},
    {Algorithm::ke,
     "ke",
     "Komura Equivalence over pixels, 2D images",
     kImageOnly,
     {4, 8},
     kUfKe2d,
     {},
     {kLate},
     {kBinaryMask},
     {},
     {}},
    {Algorithm::ha4,
     "ha4",
     "warp-level run-based labeling, a pixel per thread (Hennequin et al.), 2D images",
     kImageOnly,
     {4, 8},
     kHa4,
     {},
     {kLate},
     {kBinaryMask},
     {},
     {}},
    {Algorithm::ha4_64,
     "ha4-64",
     "HA4 with two pixels per thread, 2D images",
     kImageOnly,
     {4, 8},
     kHa4,
     {},
     {kLate},
     {kBinaryMask},
     {4},
     {}},
    {Algorithm::le,
     "le",
     "Label Equivalence, iterative, 2D images",
     kImageOnly,
     {4, 8},
     {&label_le_2d_cpu, VOLCCL_CUDA_LABELER(label_le_2d_cuda), true},
     {},
     {kLate, kFused, kEarly},
     {kBinaryMask},
     {},
     {}},
    {Algorithm::tm,
     "tm",
     "Tile Merging (Stava and Benes), 2D images",
     kImageOnly,
     {4, 8},
     {&label_tm_2d_cpu, VOLCCL_CUDA_LABELER(label_tm_2d_cuda), true},
     {},
     {kLate, kFused, kEarly},
     {kBinaryMask},
     {},
     {}},
    {Algorithm::rts,
     "rts",
     "run-based two-pass scan over slabs of rows, one per thread, CPU only",
     "",
     {4, 8, 6, 18, 26},
     {&label_rts_2d_cpu, nullptr, false, false, true},
     {&label_rts_3d_cpu, nullptr, false, false, true},
     {kLate},
     {kBinaryMask, kLabelMap},
     {},
     {4, 8, 6, 18, 26},
     {},
     {4, 8, 6, 18, 26},
     true},
};

#undef VOLCCL_CUDA_LABELER

}  // namespace

std::vector<int> SmallSet::members() const {
  std::vector<int> list;
  for (int member = 0; member < 32; ++member) {
    if (contains(member)) list.push_back(member);
  }
  return list;
}

const std::vector<AlgorithmEntry>& algorithm_registry() { return kRegistry; }

const AlgorithmEntry& registry_entry(Algorithm algorithm) {
  for (const AlgorithmEntry& entry : kRegistry) {
    if (entry.algorithm == algorithm) return entry;
  }
  throw InvalidArgument("volccl: no registry entry for algorithm value " +
                        std::to_string(static_cast<int>(algorithm)));
}

}  // namespace volccl::detail
