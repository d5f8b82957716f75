"""The chunk-level pieces of volccl.dask: NumPy functions that the Dask graph calls (the two
passes over a whole chunk's labels are in the compiled core).

Every component piece (a component of one chunk's local labeling) is named by its key: the global
linear index of its first voxel in raster order. Within a chunk local raster order is global
raster order, so the key of a whole component is the smallest key of its pieces, and the rank of
that key among all components' keys is scipy.ndimage.label's number.

Pieces that touch a piece of a neighbouring chunk are merged by a union-find over a spatial tree:
level 0 is the chunk grid, a node of level L covers 2**L chunks along each axis, and an
equivalence between chunks c and c' is resolved at the lowest level where c >> L == c' >> L. A
node passes up only the pieces that still have an equivalence above it, so a component that
closes inside a node stops there. Two passes down the same tree bring back each piece's
component key, then (after the ranking) each component's number.
"""

import itertools

import numpy as np

from . import _volccl

# A chunk's keys and labels: keys are global linear indices (int64 holds 2**63 voxels).
_KEY = np.int64
_NONE = np.iinfo(np.int64).max

# Connectivity -> how many axes a neighbour step may change (scipy's structure rank).
_RANK = {4: 1, 8: 2, 6: 1, 18: 2, 26: 3}


def neighbour_steps(ndim, rank):
    """The chunk-grid steps to neighbours that can hold an adjacent voxel: at most `rank` axes
    change (faces only for 6 and 4; faces and edges for 18)."""
    return [step for step in itertools.product((-1, 0, 1), repeat=ndim)
            if 0 < sum(map(abs, step)) <= rank]


def is_forward(step):
    """Each pair of neighbouring chunks is handled once, from the chunk whose step is forward."""
    for value in step:
        if value:
            return value > 0
    return False


def merge_level(index_a, index_b):
    """The tree level at which chunks index_a and index_b fall into one node (at least 1)."""
    level = 1
    while any((a >> level) != (b >> level) for a, b in zip(index_a, index_b)):
        level += 1
    return level


def top_level(grid):
    """The level of the tree's root for a chunk grid of `grid` chunks per axis."""
    return max((count - 1).bit_length() for count in grid)


def first_voxels(labels, count, stream=0):
    """Local flat index of each label's first voxel (labels 1..count, numbered in raster order
    as volccl numbers them, uint32 and C-contiguous; NumPy, or CuPy on `stream`)."""
    first = np.empty(count, np.int64)
    _volccl.first_voxels_into(labels, first, stream)
    return first


def global_keys(local_flat, chunk_shape, offset, shape):
    """Global linear indices of local flat indices of a chunk at `offset` in a volume `shape`."""
    coords = np.unravel_index(local_flat, chunk_shape)
    return np.ravel_multi_index(tuple(c + o for c, o in zip(coords, offset)), shape).astype(_KEY)


def chunk_summary(labels, count, values, offset, shape, stream=0):
    """What the neighbours and the tree need to know of one labeled chunk: its count, each
    label's key (index 0 unused), the row of each first voxel, and its 2 * ndim boundary planes
    (labels, and the input's values when they must match too, as for multi-label input), in
    host memory. labels: NumPy, or CuPy on `stream`, where only the planes and the first voxels
    are copied to the host."""
    chunk_shape = tuple(labels.shape)
    first = first_voxels(labels, count, stream)
    keys = np.zeros(count + 1, _KEY)
    keys[1:] = global_keys(first, chunk_shape, offset, shape)
    faces = {}
    for axis in range(labels.ndim):
        for side, position in ((0, 0), (1, chunk_shape[axis] - 1)):
            plane = labels[(slice(None),) * axis + (position,)]
            plane = plane.get() if hasattr(plane, "get") else plane
            plane_values = None if values is None else np.take(values, position, axis=axis)
            faces[axis, side] = (np.ascontiguousarray(plane), plane_values)
    return {"count": count, "keys": keys, "rows": first // chunk_shape[-1],
            "shape": chunk_shape, "faces": faces}


def _region(summary, step, own):
    """The voxels of a chunk that can touch its neighbour in direction `step` (own=True: the
    chunk's, own=False: the neighbour's, which looks back): a plane, line or point, as an array
    over the axes where the step is 0."""
    shape = summary["shape"]
    changed = [axis for axis, value in enumerate(step) if value]
    index = []
    for axis, value in enumerate(step):
        if value == 0:
            index.append(slice(None))
        else:
            last = (value > 0) == own
            index.append(shape[axis] - 1 if last else 0)
    first = changed[0]
    plane, values = summary["faces"][first, 1 if index[first] else 0]
    if index[first] == 0 and shape[first] == 1:
        plane, values = summary["faces"][first, 0]
    within = tuple(index[axis] for axis in range(len(step)) if axis != first)
    return plane[within], None if values is None else values[within]


def facing_plane(step):
    """(axis, side) of the boundary plane of the neighbour at `step` that _region reads for
    it: across the first axis the step changes, the neighbour's side facing the chunk."""
    axis = next(axis for axis, value in enumerate(step) if value)
    return axis, 1 if step[axis] < 0 else 0


def face_view(summary, axis, side):
    """The part of a chunk's summary a neighbour reads: its keys, its shape and the one
    boundary plane (both, where the chunk is one voxel thick along the axis)."""
    sides = (0, 1) if summary["shape"][axis] == 1 else (side,)
    return {"count": summary["count"], "keys": summary["keys"], "shape": summary["shape"],
            "faces": {(axis, s): summary["faces"][axis, s] for s in sides}}


def pair_equivalences(own, neighbour, step, rank):
    """Pairs (own key, neighbour key) of pieces that touch across the boundary between a chunk
    and its neighbour at `step`, under a connectivity of `rank`."""
    labels_a, values_a = _region(own, step, True)
    labels_b, values_b = _region(neighbour, step, False)
    changed = sum(map(abs, step))
    pairs = []
    free = labels_a.ndim
    for shift in itertools.product((-1, 0, 1), repeat=free):
        if changed + sum(map(abs, shift)) > rank:
            continue
        slices_a = tuple(slice(1, None) if s < 0 else slice(0, -1) if s > 0 else slice(None)
                         for s in shift)
        slices_b = tuple(slice(0, -1) if s < 0 else slice(1, None) if s > 0 else slice(None)
                         for s in shift)
        a, b = labels_a[slices_a], labels_b[slices_b]
        touching = (a != 0) & (b != 0)
        if values_a is not None:
            touching &= values_a[slices_a] == values_b[slices_b]
        if touching.any():
            pairs.append(_distinct_runs(a[touching].astype(np.uint64) << np.uint64(32)
                                        | b[touching].astype(np.uint64)))
    if not pairs:
        return np.zeros((0, 2), _KEY)
    # Local labels are uint32, so a pair packs into one uint64: a 1-D sort, not a row sort.
    local = np.unique(np.concatenate(pairs))
    first = (local >> np.uint64(32)).astype(np.int64)
    second = (local & np.uint64(0xFFFFFFFF)).astype(np.int64)
    return np.stack([own["keys"][first], neighbour["keys"][second]], axis=1)


def _distinct_runs(packed):
    """packed without the repeats of its previous element: along a boundary the same two pieces
    touch voxel after voxel, so this leaves the sort a small fraction of the pairs."""
    keep = np.ones(len(packed), bool)
    keep[1:] = packed[1:] != packed[:-1]
    return packed[keep]


def leaf_state(summary, index, steps, indices, summaries, rank):
    """The tree's level-0 node of one chunk: its pieces that touch another chunk, each with the
    highest level an equivalence of it is resolved at, and the equivalences this chunk owns
    (towards forward neighbours), each with its level.

    steps, indices, summaries: the step to, index of and summary of every existing neighbour.
    """
    keys, needs, edges = [], [], []
    for step, other_index, other in zip(steps, indices, summaries):
        pairs = pair_equivalences(summary, other, step, rank)
        if len(pairs) == 0:
            continue
        level = merge_level(index, other_index)
        keys.append(pairs[:, 0])
        needs.append(np.full(len(pairs), level, np.int64))
        if is_forward(step):
            edges.append(np.concatenate([pairs, np.full((len(pairs), 1), level, _KEY)], axis=1))
    if keys:
        keys, needs = np.concatenate(keys), np.concatenate(needs)
        order = np.lexsort((-needs, keys))
        keys, needs = keys[order], needs[order]
        first = np.ones(len(keys), bool)
        first[1:] = keys[1:] != keys[:-1]
        keys, needs = keys[first], needs[first]
    else:
        keys, needs = np.zeros(0, _KEY), np.zeros(0, np.int64)
    edges = np.concatenate(edges) if edges else np.zeros((0, 3), _KEY)
    return {"level": 0, "keys": keys, "roots": keys.copy(),
            "up": {"keys": keys, "roots": keys.copy(), "needs": needs}, "edges": edges,
            "children_up": []}


def _components(first, second):
    """For the equivalences first[i] ~ second[i]: the sorted distinct keys and each one's
    component minimum."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    nodes = np.unique(np.concatenate([first, second]))
    if len(nodes) == 0:
        return nodes, nodes.copy()
    a, b = np.searchsorted(nodes, first), np.searchsorted(nodes, second)
    graph = coo_matrix((np.ones(len(a), np.int8), (a, b)), shape=(len(nodes), len(nodes)))
    _, component = connected_components(graph, directed=False)
    # nodes are sorted, so each component's first occurrence is its minimum.
    _, first_of = np.unique(component, return_index=True)
    minimum = np.empty(first_of.shape, nodes.dtype)
    minimum[component[first_of]] = nodes[first_of]
    return nodes, minimum[component]


def lookup(sorted_keys, values, query):
    """values[i] where sorted_keys[i] == query, for every query (all must be present)."""
    position = np.searchsorted(sorted_keys, query)
    if len(query) and (position.max(initial=0) >= len(sorted_keys)
                       or not np.array_equal(sorted_keys[position], query)):
        raise AssertionError("volccl.dask: a key is missing from a merge table")
    return values[position]


def node_state(level, children):
    """A node of the tree above level 0: the union of its children's pieces that are still open
    with the equivalences resolved at this level; passes up what is still open above it."""
    ups = [child["up"] for child in children]
    edges = np.concatenate([child["edges"] for child in children]) if children else \
        np.zeros((0, 3), _KEY)
    here = edges[edges[:, 2] == level]
    up_keys = np.concatenate([up["keys"] for up in ups])
    up_roots = np.concatenate([up["roots"] for up in ups])
    up_needs = np.concatenate([up["needs"] for up in ups])
    keys, roots = _components(np.concatenate([up_keys, here[:, 0]]),
                              np.concatenate([up_roots, here[:, 1]]))
    still_open = up_needs > level
    open_keys = up_keys[still_open]
    order = np.argsort(open_keys)
    open_keys = open_keys[order]
    return {"level": level, "keys": keys, "roots": roots,
            "up": {"keys": open_keys, "roots": lookup(keys, roots, open_keys),
                   "needs": up_needs[still_open][order]},
            "edges": edges[edges[:, 2] > level],
            "children_up": [up["keys"] for up in ups]}


def _resolve(state, parent, fallback):
    """Per key of the node, the value of its component: from the parent for the components
    still open at this node (parent: one value per open key, or None at the root), else
    fallback(component minima)."""
    roots = state["roots"]
    values = np.zeros(len(roots), np.int64)
    from_parent = np.zeros(len(roots), bool)
    if parent is not None and len(parent):
        open_roots = lookup(state["keys"], roots, state["up"]["keys"])
        unique_roots, first = np.unique(open_roots, return_index=True)
        position = np.minimum(np.searchsorted(unique_roots, roots), len(unique_roots) - 1)
        from_parent = unique_roots[position] == roots
        values[from_parent] = parent[first][position[from_parent]]
    rest = ~from_parent
    values[rest] = fallback(roots[rest])
    return values


def _to_children(state, values):
    return [lookup(state["keys"], values, child) for child in state["children_up"]]


def down_keys(state, parent):
    """First pass down: the component key (the global minimum) of every key each child passed
    up, one array per child."""
    return _to_children(state, _resolve(state, parent, lambda roots: roots))


def open_pieces(state, parent):
    """A chunk's open pieces (sorted keys) and, from the pass down, their component keys."""
    if parent is None:
        return state["keys"], state["keys"].copy()
    return state["up"]["keys"], parent


def _roots(summary, open_keys, open_finals):
    is_root = np.ones(summary["count"], bool)
    if len(open_keys):
        position = np.searchsorted(summary["keys"][1:], open_keys)
        is_root[position] = open_finals == open_keys
    return is_root


def row_counts(summary, opened):
    """Per row of the chunk (its shape less the last axis, flattened): how many component keys
    lie in it."""
    is_root = _roots(summary, *opened)
    rows_total = int(np.prod(summary["shape"][:-1]))
    return np.bincount(summary["rows"][is_root], minlength=rows_total).astype(np.int64)


def root_ranks(summary, opened, before):
    """The number (from 1) of every component whose key is in this chunk, 0 for other labels.

    before: per row of the chunk, how many components have their key in an earlier row of the
    volume, or in the same row in a chunk to the left.
    """
    is_root = _roots(summary, *opened)
    rows = summary["rows"][is_root]
    # The roots are in raster order already: each one's place among its row's roots.
    within = np.arange(len(rows)) - np.searchsorted(rows, rows, side="left")
    ranks = np.zeros(summary["count"], np.int64)
    ranks[is_root] = before.reshape(-1)[rows] + within + 1
    return ranks


def leaf_up_ranks(summary, opened, ranks):
    """Second pass up from a chunk: the numbers of its open pieces that are component keys."""
    open_keys, open_finals = opened
    keys = open_keys[open_finals == open_keys]
    return keys, ranks[np.searchsorted(summary["keys"][1:], keys)]


def node_up_ranks(state, children):
    """Second pass up: the numbers gathered from the children (key, number), all kept for the
    pass down, and those of the components still open here, which go up."""
    keys = np.concatenate([child[0] for child in children])
    ranks = np.concatenate([child[1] for child in children])
    order = np.argsort(keys)
    keys, ranks = keys[order], ranks[order]
    going_up = np.isin(keys, state["up"]["roots"])
    return {"up": (keys[going_up], ranks[going_up]), "kept": (keys, ranks)}


def down_ranks(state, gathered, parent):
    """Second pass down: the number of every key each child passed up."""
    keys, ranks = gathered["kept"]
    return _to_children(state, _resolve(state, parent, lambda roots: lookup(keys, ranks, roots)))


def chunk_table(summary, opened, open_ranks, ranks, offset):
    """The label each local label becomes: index 0 the background, then labels 1..count."""
    table = np.zeros(summary["count"] + 1, np.uint64)
    table[1:] = ranks
    open_keys = opened[0]
    if len(open_keys):
        position = np.searchsorted(summary["keys"][1:], open_keys)
        table[1 + position] = open_ranks
    table[1:] += np.uint64(offset)
    return table
