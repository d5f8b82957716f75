// Union-find over block labels kept in the label image (BUF/BKE paper Sec. 2.1, Alg. 1),
// shared by the CUDA kernels and the CPU backend.
//
// A node is a block. Its identifier ("key") is the raster index of the block's first
// foreground voxel, and its parent pointer lives in the label image at the block's anchor
// voxel. A `Forest` maps any voxel index inside a block to that anchor slot:
//     std::uint32_t* slot(std::uint32_t voxel) const;
// Nodes are words of the slots' width (NodeOf), 32 bits in the labelers, 64 where a forest may
// hold more than 2^32 nodes.
// Roots hold their own key. Union links the larger root under the smaller one, so the root of a
// finished tree is the block holding the component's first voxel in raster order, and its key
// is that voxel's index: ranking the roots gives the ITK/scipy numbering without a sort.
// A non-root may point at any voxel of its parent block (BKE's initial links do); Find reaches
// the parent's slot all the same.
#pragma once

#include <cstdint>
#include <utility>

#include "runtime/host_device.h"

namespace volccl::detail {

// The word a forest's slots hold, found as union_find.h reads them (by argument-dependent
// lookup for slots of their own type).
template <class Forest>
using NodeOf = decltype(load_relaxed(std::declval<const Forest&>().slot(0)));

// Find (Alg. 1): follows parent pointers from `node` until a root.
template <class Forest>
VOLCCL_HD NodeOf<Forest> find_root(const Forest& forest, NodeOf<Forest> node) {
  NodeOf<Forest> parent = load_relaxed(forest.slot(node));
  while (parent != node) {
    node = parent;
    parent = load_relaxed(forest.slot(node));
  }
  return node;
}

// Find for Union: also halves the path, pointing every node it passes at its grandparent, so
// that later walks through them take half the steps. Only ancestors are written and never into
// a root, so concurrent unions lose nothing; but another thread's write can undo a slot's
// compression, so Compress, after which every slot must hold its root, uses find_root.
template <class Forest>
VOLCCL_HD NodeOf<Forest> find_root_halving(const Forest& forest, NodeOf<Forest> node) {
  for (;;) {
    const auto slot = forest.slot(node);
    const NodeOf<Forest> parent = load_relaxed(slot);
    if (parent == node) return node;
    const NodeOf<Forest> grandparent = load_relaxed(forest.slot(parent));
    if (grandparent == parent) return parent;
    store_relaxed(slot, grandparent);
    node = grandparent;
  }
}

template <class Forest>
VOLCCL_HD NodeOf<Forest> find_root_and_shortcut(const Forest& forest, NodeOf<Forest> node) {
  const auto slot = forest.slot(node);
  const NodeOf<Forest> parent = load_relaxed(slot);
  const NodeOf<Forest> root = find_root_halving(forest, parent);
  if (root != parent) store_relaxed(slot, root);
  return root;
}

// Union (Alg. 1): atomicMin on the larger root; when another thread changed that root first,
// retry from what it wrote. Both starting nodes are shortcut to their roots on the way. Returns
// the root of the joined tree, a short start for the caller's next Union from the same node.
template <class Forest>
VOLCCL_HD NodeOf<Forest> unite(const Forest& forest, NodeOf<Forest> a, NodeOf<Forest> b) {
  a = find_root_and_shortcut(forest, a);
  b = find_root_and_shortcut(forest, b);
  while (a != b) {
    if (a < b) {
      const NodeOf<Forest> old = atomic_min(forest.slot(b), a);
      if (old == b) return a;
      b = old;
    } else {
      const NodeOf<Forest> old = atomic_min(forest.slot(a), b);
      if (old == a) return b;
      a = old;
    }
    a = find_root_halving(forest, a);
    b = find_root_halving(forest, b);
  }
  return a;
}

// Compress (Alg. 1): points the node stored at `slot` straight at its root; returns the root.
template <class Forest>
VOLCCL_HD std::uint32_t compress(const Forest& forest, std::uint32_t* slot) {
  const std::uint32_t root = find_root(forest, load_relaxed(slot));
  store_relaxed(slot, root);
  return root;
}

// InlineCompress (Alg. 1, the IC variants): rewrites the node's parent at every step of the
// walk, so concurrent threads that reach the node take the shortcut early.
template <class Forest>
VOLCCL_HD std::uint32_t compress_inline(const Forest& forest, std::uint32_t* slot) {
  std::uint32_t node = load_relaxed(slot);
  std::uint32_t parent = load_relaxed(forest.slot(node));
  while (parent != node) {
    node = parent;
    store_relaxed(slot, node);
    parent = load_relaxed(forest.slot(node));
  }
  return node;
}

}  // namespace volccl::detail
