"""Labels chunked 2D and 3D Dask arrays (and Zarr stores) on a Dask cluster with volccl.

    import dask.array as da, volccl.dask
    labels = volccl.dask.connected_components(da.from_zarr("mask.zarr"), connectivity=26)

The labels are a Dask array of uint64 (or uint32) equal to scipy.ndimage.label of the whole
volume: 0 for the background, 1..N in raster order of each component's first voxel. Each chunk
is labeled by volccl on its worker (on the worker's GPU when it has one), the equivalences
between chunks are found on their shared faces, edges and corners, merged by a union-find over
a tree of chunk blocks (no label table is gathered on the client), ranked by a scan over the
volume's rows, and every chunk relabeled. The algorithm and its costs: docs/distributed.md.

Also a command line: python -m volccl.dask label in.zarr -o out.zarr [--workers N | --scheduler
ADDRESS] [--chunks ...]; see main().
"""

import argparse
import itertools
import os
import sys
import threading
import time
import uuid

import numpy as np

from . import _dask_merge as merge
from . import _volccl

__all__ = ["connected_components", "label_zarr", "main"]

_CONNECTIVITIES = {2: {4: 4, 8: 8, 6: 4, 18: 8, 26: 8}, 3: {6: 6, 18: 18, 26: 26}}


def _require_dask():
    try:
        import dask  # noqa: F401
        import dask.array  # noqa: F401
    except ImportError as error:
        raise ImportError("volccl.dask needs dask[array] (and distributed for a cluster, zarr "
                          "for label_zarr): pip install 'dask[array]' distributed zarr") from error


def _check_array(darr, connectivity):
    import dask.array as da

    if not isinstance(darr, da.Array):
        raise TypeError(f"volccl.dask labels a dask.array.Array, not {type(darr).__name__} (for "
                        "a NumPy array use volccl.connected_components, or dask.array.from_array)")
    if darr.ndim not in (2, 3):
        raise ValueError(f"volccl.dask labels 2D images and 3D volumes, not a {darr.ndim}D array "
                         f"of shape {darr.shape}")
    if any(np.isnan(size) for sizes in darr.chunks for size in sizes):
        raise ValueError("the array's chunk sizes are unknown (NaN); call "
                         "darr.compute_chunk_sizes() first")
    if any(side == 0 for side in darr.shape):
        raise ValueError(f"the array has a side of 0: {darr.shape}")
    dtype = np.dtype(darr.dtype)
    if dtype.kind not in "biuf":
        raise TypeError(f"volccl.dask labels bool, integer and floating-point arrays, not {dtype}")
    allowed = _CONNECTIVITIES[darr.ndim]
    if isinstance(connectivity, bool) or connectivity not in allowed:
        raise ValueError(f"connectivity {connectivity!r} does not exist for a {darr.ndim}D array; "
                         f"use one of {sorted(allowed)}")
    return allowed[connectivity]


def _host(array):
    """A NumPy copy of a CuPy array, or the NumPy array itself."""
    return array.get() if hasattr(array, "get") else np.asarray(array)


def _chunk_statistics(table, count, offset):
    """One chunk's exact per-label sums in volume coordinates, from the statistics its labeling
    gathered: voxel counts, coordinate sums (int64) and inclusive bounding boxes, for labels
    0..count (0 the background)."""
    counts = _host(table["voxel_counts"]).astype(np.int64)[:count + 1]
    ndim = table["centroids"].shape[1]
    centroids = np.nan_to_num(_host(table["centroids"])[:count + 1])
    # The centroids come from exact integer sums; within a chunk these sums stay far below
    # 2**53, so the product rounds back to them exactly.
    sums = np.rint(centroids * counts[:, None]).astype(np.int64)
    boxes = _host(table["bounding_boxes"])[:count + 1].astype(np.int64)
    minima, maxima = boxes[:, 0::2].copy(), boxes[:, 1::2].copy()
    present = counts > 0
    origin = np.asarray(offset, np.int64)
    sums += counts[:, None] * origin
    minima[present] += origin
    maxima[present] += origin
    minima[~present] = np.iinfo(np.int64).max
    maxima[~present] = -1
    return {"counts": counts, "sums": sums, "minima": minima, "maxima": maxima[:, :ndim]}


# Per worker thread: its CUDA stream (its chunks' copies and kernels overlap those of the other
# threads, and CuPy's pool reuses memory per stream) and its pinned buffer for the final labels.
_thread = threading.local()


def _resident_gpu(device):
    """CuPy where this worker labels its chunks on its GPU, else None (a CPU worker, or no
    CuPy). On a GPU a chunk's local labels stay on the device: its summary is taken there, and
    for the final labels the chunk is labeled again from its input, which is held between the
    phases instead of the labels (a quarter of their bytes for a mask, none copied back)."""
    if device == "cpu":
        return None
    import volccl

    if not volccl.cuda_available():
        return None
    try:
        import cupy
    except ImportError:
        return None
    if getattr(_thread, "stream", None) is None:
        _thread.stream = cupy.cuda.Stream(non_blocking=True)
    return cupy


def _label_block(block, connectivity, binary_image, device, algorithm, threads, statistics):
    """volccl.connected_components of one chunk: (labels, count, statistics table or None)."""
    import volccl

    options = {} if binary_image is None else {"binary_image": binary_image}
    # The statistics, when asked for, are gathered while the chunk is labeled.
    result = volccl.connected_components(block, connectivity=connectivity, return_N=True,
                                         device=device, algorithm=algorithm, threads=threads,
                                         statistics=statistics, no_slice_conversion=True,
                                         **options)
    return result[0], int(result[1]), result[2] if statistics else None


def _label_chunk(block, offset, shape, connectivity, binary_image, device, algorithm, threads,
                 statistics):
    """Labels one chunk: (uint32 local labels or None, the chunk's summary, its statistics or
    None, and on a GPU worker what labels it again: its input and the labeling's options)."""
    values = None
    if binary_image is False:
        # Neighbours across a boundary join only when their values are equal, as inside.
        values = _host(block)
    cupy = _resident_gpu(device)
    if cupy is None:
        labels, count, table = _label_block(block, connectivity, binary_image, device, algorithm,
                                            threads, statistics)
        labels = _host(labels)
        summary = merge.chunk_summary(labels, count, values, offset, shape)
        again = None
    else:
        with _thread.stream:
            labels, count, table = _label_block(cupy.asarray(block), connectivity, binary_image,
                                                device, algorithm, threads, statistics)
            summary = merge.chunk_summary(labels, count, values, offset, shape,
                                          stream=_thread.stream.ptr)
        labels = None
        again = (block, connectivity, binary_image, device, algorithm)
    # Apart from the summary, which the neighbours fetch.
    chunk_statistics = _chunk_statistics(table, count, offset) if statistics else None
    return labels, summary, chunk_statistics, again


def _with_local_labels(labeled, function):
    """function(the chunk's local labels): those held, or on a GPU worker the chunk labeled
    again on the device, within the thread's stream."""
    labels, again = labeled[0], labeled[3]
    if labels is not None:
        return function(labels)
    block, connectivity, binary_image, device, algorithm = again
    cupy = _resident_gpu(device)
    if cupy is None:
        # The chunk moved to a worker without a GPU: its CPU gives the same labels.
        return function(_label_block(_host(block), connectivity, binary_image, "cpu", "auto", 0,
                                     False)[0])
    with _thread.stream:
        labels = _label_block(cupy.asarray(block), connectivity, binary_image, device, algorithm,
                              0, False)[0]
        return function(labels)


def _final_values(local, table, device_table=None):
    """table[local] as C-contiguous labels of the table's type in host memory, or None where
    local is background only. With local on a GPU (device_table: the table there) the gather
    runs on the device and the labels come back through the thread's pinned buffer, valid
    until its next use."""
    if device_table is None:
        values = np.empty(local.shape, table.dtype)
        return values if _volccl.relabel_into(local, table, values) else None
    if not bool(local.any()):
        return None
    final = device_table[local]
    pinned = getattr(_thread, "pinned", None)
    if pinned is None or pinned.nbytes < final.nbytes:
        import cupyx

        pinned = _thread.pinned = cupyx.empty_pinned(final.nbytes, np.uint8)
    values = pinned[:final.nbytes].view(final.dtype).reshape(final.shape)
    final.get(stream=_thread.stream, out=values)
    return values


def _device_table(local, table):
    """The table on local's GPU when local is a CuPy array, else None."""
    if not hasattr(local, "__cuda_array_interface__"):
        return None
    return sys.modules["cupy"].asarray(table)


def _get(container, index):
    return container[index]


def _chunk_label_statistics(labeled, opened, open_ranks, ranks, label_offset):
    """A chunk's statistics keyed by final label: (labels, counts, sums, minima, maxima)."""
    summary, stats = labeled[1], labeled[2]
    table = merge.chunk_table(summary, opened, open_ranks, ranks, label_offset)
    return _group_statistics(table, stats["counts"], stats["sums"], stats["minima"],
                             stats["maxima"])


def _group_statistics(labels, counts, sums, minima, maxima):
    keep = counts > 0
    labels, counts, sums = labels[keep], counts[keep], sums[keep]
    minima, maxima = minima[keep], maxima[keep]
    unique, inverse = np.unique(labels, return_inverse=True)
    merged_counts = np.zeros(len(unique), np.int64)
    np.add.at(merged_counts, inverse, counts)
    merged_sums = np.zeros((len(unique), sums.shape[1]), np.int64)
    np.add.at(merged_sums, inverse, sums)
    merged_min = np.full((len(unique), minima.shape[1]), np.iinfo(np.int64).max)
    np.minimum.at(merged_min, inverse, minima)
    merged_max = np.full((len(unique), maxima.shape[1]), -1, np.int64)
    np.maximum.at(merged_max, inverse, maxima)
    return unique, merged_counts, merged_sums, merged_min, merged_max


def _merge_statistics(*parts):
    return _group_statistics(*(np.concatenate([part[i] for part in parts]) for i in range(5)))


def _statistics_table(merged, count, label_offset, ndim):
    """The merged statistics as arrays of count + 1 rows: row 0 the background, row i the
    component labeled label_offset + i."""
    labels, counts, sums, minima, maxima = merged
    rows = labels.astype(np.int64)
    rows[labels != 0] -= label_offset
    voxel_counts = np.zeros(count + 1, np.uint64)
    voxel_counts[rows] = counts
    coordinate_sums = np.zeros((count + 1, ndim), np.int64)
    coordinate_sums[rows] = sums
    boxes = np.zeros((count + 1, 2 * ndim), np.int64)
    boxes[:, 0::2] = np.iinfo(np.int64).max
    boxes[:, 1::2] = -1
    boxes[rows, 0::2] = minima
    boxes[rows, 1::2] = maxima
    with np.errstate(invalid="ignore", divide="ignore"):
        centroids = coordinate_sums / voxel_counts[:, None].astype(np.float64)
    return {"voxel_counts": voxel_counts, "coordinate_sums": coordinate_sums,
            "bounding_boxes": boxes, "centroids": centroids}


def _scan_rows(counts):
    """Along the last axis of the chunk grid, for one row of chunks: each chunk's per-row
    component-key counts summed over the chunks to its left, and the row's totals."""
    before, running = [], np.zeros_like(counts[0])
    for count in counts:
        before.append(running)
        running = running + count
    return before, running


def _scan_plane(totals):
    """Within one slab of chunks along the first axis (rows z, y of a volume; for an image a
    single plane): per chunk of the slab, the counts of the earlier rows of each of its planes,
    and the slab's per-plane totals."""
    plane = np.concatenate(totals, axis=1)
    before = np.cumsum(plane, axis=1) - plane
    edges = np.cumsum([0] + [t.shape[1] for t in totals])
    return [before[:, a:b] for a, b in zip(edges[:-1], edges[1:])], plane.sum(axis=1)


def _scan_planes(totals):
    """Over all planes in order: the counts of every earlier plane, per slab, and N."""
    planes = np.concatenate(totals)
    before = np.cumsum(planes) - planes
    edges = np.cumsum([0] + [len(t) for t in totals])
    return [before[a:b] for a, b in zip(edges[:-1], edges[1:])], int(planes.sum())


def _before(plane_before, row_before, chunk_before):
    """Per row of a chunk: the component keys before it in raster order (earlier planes,
    earlier rows of its plane, the same row in chunks to its left)."""
    return plane_before[:, None] + row_before + chunk_before


def _opened_and_rows(summary, state, parent, plane_shape):
    opened = merge.open_pieces(state, parent)
    return opened, merge.row_counts(summary, opened).reshape(plane_shape)


def _ranks_and_up(summary, opened, plane_before, row_before, chunk_before):
    ranks = merge.root_ranks(summary, opened, _before(plane_before, row_before, chunk_before))
    return ranks, merge.leaf_up_ranks(summary, opened, ranks)


def _final_table(summary, opened, open_ranks, ranks, label_offset, dtype):
    """The label each local label of a chunk becomes, in the labels' dtype; an error where one
    does not fit it."""
    table = merge.chunk_table(summary, opened, open_ranks, ranks, label_offset)
    if dtype == table.dtype:
        return table
    largest = int(table.max(initial=0))
    if largest > np.iinfo(dtype).max:
        raise ValueError(f"volccl.dask: label {largest} does not fit dtype {dtype.name}; "
                         f"label with dtype=uint64")
    return table.astype(dtype)


def _final_labels(labeled, opened, open_ranks, ranks, label_offset, dtype):
    table = _final_table(labeled[1], opened, open_ranks, ranks, label_offset, dtype)

    def gather(local):
        device_table = _device_table(local, table)
        if device_table is None:
            return table[local]
        return device_table[local].get(stream=_thread.stream)

    return _with_local_labels(labeled, gather)


def _write_final_labels(writer, offset, labeled, opened, open_ranks, ranks, label_offset, dtype):
    table = _final_table(labeled[1], opened, open_ranks, ranks, label_offset, dtype)
    _with_local_labels(labeled, lambda local: writer(local, table, offset))
    return np.zeros((1,) * len(labeled[1]["shape"]), np.uint8)


class _ZarrLabelWriter:
    """Writes a chunk's final labels into a new Zarr array whose chunks tile it, one Zarr chunk
    at a time: each is gathered from the local labels on its own (a block the size of a Zarr
    chunk, not the whole chunk's final labels) and handed to Zarr whole, so that Zarr neither
    copies it into a fresh chunk nor compares it with the fill value; a Zarr chunk of background
    only is not written, and reads back as the fill value 0. `chunks`: the Zarr chunk shape
    over the labels' axes; `dropped`: the axes of length 1 the target has and the labels do
    not (OME-Zarr's time and channel)."""

    def __init__(self, target, chunks, dropped):
        self.target = target
        self.chunks = tuple(chunks)
        self.dropped = tuple(dropped)

    def __call__(self, local, table, offset):
        device_table = _device_table(local, table)
        for start in itertools.product(*(range(0, side, size)
                                         for side, size in zip(local.shape, self.chunks))):
            within = tuple(slice(s, s + size) for s, size in zip(start, self.chunks))
            piece = local[within]
            values = _final_values(piece, table, device_table)
            if values is None:
                continue
            region = [slice(o + s.start, o + s.start + n)
                      for o, s, n in zip(offset, within, piece.shape)]
            for axis in self.dropped:
                region.insert(axis, slice(0, 1))
                values = values[(slice(None),) * axis + (None,)]
            self.target[tuple(region)] = values


def connected_components(darr, connectivity=26, statistics=False, return_N=False, *,
                         label_offset=0, binary_image=None, device="auto", algorithm="auto",
                         threads=0, dtype=np.uint64):
    """Labels the non-zero voxels of a chunked 2D or 3D Dask array, lazily.

    darr: a dask.array.Array of bool, integer or floating point (non-zero is foreground), with
      known chunk sizes; any chunking, regular or not.
    connectivity: 6, 18 or 26 for volumes; 4 or 8 for images (6, 18, 26 read as 4, 8, 8).
    statistics: also return a Delayed dict of per-component statistics merged across chunks from
      exact integer sums: voxel_counts (uint64), coordinate_sums (int64, in the array's axis
      order), centroids (float64), bounding_boxes (int64, inclusive min, max per axis); row 0 the
      background, row i the component labeled label_offset + i.
    return_N: also return N, the number of components, as a 0-d Dask array.
    label_offset: the components are numbered label_offset + 1 .. label_offset + N.
    binary_image: None (bool arrays are masks, others label maps, as in
      volccl.connected_components), True or False.
    device, algorithm, threads: passed to volccl.connected_components on every chunk (device
      "auto": each worker's GPU when it has one, else its CPU).
    dtype: the labels' type, uint64 or uint32 (half the bytes, for label_offset + N below
      2**32; a computation whose labels do not fit fails with a ValueError).

    Returns labels (a Dask array of dtype, darr's shape and chunks), then N with return_N, then
    the statistics with statistics=True. Nothing runs until they are computed.
    """
    labels, total, table = _components(darr, connectivity, statistics, label_offset=label_offset,
                                       binary_image=binary_image, device=device,
                                       algorithm=algorithm, threads=threads, dtype=dtype)
    returned = [labels] + ([total] if return_N else []) + ([table] if statistics else [])
    return returned[0] if len(returned) == 1 else tuple(returned)


def _components(darr, connectivity, statistics, *, label_offset=0, binary_image=None,
                device="auto", algorithm="auto", threads=0, dtype=np.uint64, writer=None):
    """(labels, N, statistics or None) as connected_components describes them; with a writer,
    each chunk's final labels go to writer(local labels, final label table, chunk offset) in
    the chunk's own task and `labels` is instead an array of one zero byte per chunk, computed
    when they are all written."""
    _require_dask()
    import dask.array as da
    from dask.base import tokenize
    from dask.delayed import Delayed
    from dask.highlevelgraph import HighLevelGraph

    connectivity = _check_array(darr, connectivity)
    # As volccl.connected_components decides it, once for every chunk: bool arrays are masks,
    # others label maps, whose neighbours across chunk boundaries join only when equal.
    if binary_image is None:
        binary_image = np.dtype(darr.dtype).kind == "b"
    dtype = _label_dtype(dtype)
    label_offset = int(label_offset)
    if label_offset < 0 or label_offset + darr.size >= 2**64 or (
            darr.size and label_offset >= np.iinfo(dtype).max):
        raise ValueError(f"label_offset must be >= 0 and leave room for the labels in "
                         f"{dtype.name}, not {label_offset}")
    # The chunk function's own checks (binary_image, device, algorithm, threads) fail here, on
    # the client, rather than on every worker.
    import volccl
    options = {} if binary_image is None else {"binary_image": binary_image}
    volccl.connected_components(np.zeros((1,) * darr.ndim, np.uint8), connectivity=connectivity,
                                device=device, algorithm=algorithm, threads=threads, **options)

    rank = merge._RANK[connectivity]
    shape = tuple(int(side) for side in darr.shape)
    chunks = tuple(tuple(int(size) for size in sizes) for sizes in darr.chunks)
    grid = tuple(len(sizes) for sizes in chunks)
    starts = [np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(int) for sizes in chunks]
    token = tokenize(darr, connectivity, binary_image, device, algorithm, threads, statistics,
                     label_offset, dtype.name)
    indices = list(np.ndindex(*grid))
    offsets = {index: tuple(int(starts[axis][i]) for axis, i in enumerate(index))
               for index in indices}
    top = merge.top_level(grid)

    # One hand-built graph per phase rather than a Delayed per task: Dask's per-layer work
    # (culling, ordering) grows with the number of layers, and a Delayed is a layer.
    def key(name, index):
        return (f"volccl-{name}-{token}",) + tuple(index)

    def children_of(level, node):
        below = [-(-n // 2 ** (level - 1)) for n in grid]
        return [child for child in itertools.product(*[[2 * i, 2 * i + 1] for i in node])
                if all(c < n for c, n in zip(child, below))]

    def nodes_at(level):
        return list(np.ndindex(*[-(-n // 2 ** level) for n in grid]))

    def pass_down(graph, name, function, extra):
        """function(node state, *extra(level, node), parent message) from the root down at
        every node above the chunks; returns each chunk's message key (None for one chunk)."""
        messages = {(top, (0,) * darr.ndim): None}
        for level in range(top, 0, -1):
            for node in nodes_at(level):
                out = key(f"{name}{level}", node)
                graph[out] = (function, key(f"state{level}", node), *extra(level, node),
                              messages[level, node])
                for position, child in enumerate(children_of(level, node)):
                    messages[level - 1, child] = key(f"{name}{level}-to", child)
                    graph[messages[level - 1, child]] = (_get, out, position)
        return {index: messages[0, index] for index in indices}

    # Phase 1: label every chunk, find the equivalences, merge them up the tree and bring the
    # component keys down; count the component keys per row of each chunk.
    first = {}
    input_keys = darr.__dask_keys__()
    steps = merge.neighbour_steps(darr.ndim, rank)
    for index in indices:
        block = input_keys
        for i in index:
            block = block[i]
        first[key("chunk", index)] = (_label_chunk, block, offsets[index], shape, connectivity,
                                      binary_image, device, algorithm, threads, statistics)
        first[key("summary", index)] = (_get, key("chunk", index), 1)
    for index in indices:
        near_steps, near_indices, near_summaries = [], [], []
        for step in steps:
            other = tuple(i + s for i, s in zip(index, step))
            if all(0 <= i < n for i, n in zip(other, grid)):
                near_steps.append(step)
                near_indices.append(other)
                # A neighbour fetches the one boundary plane it reads, not all of them.
                axis, side = merge.facing_plane(step)
                face = key(f"face{axis}-{side}", other)
                first.setdefault(face, (merge.face_view, key("summary", other), axis, side))
                near_summaries.append(face)
        first[key("state0", index)] = (merge.leaf_state, key("summary", index), index,
                                       near_steps, near_indices, near_summaries, rank)
    for level in range(1, top + 1):
        for node in nodes_at(level):
            first[key(f"state{level}", node)] = (
                merge.node_state, level,
                [key(f"state{level - 1}", child) for child in children_of(level, node)])
    finals = pass_down(first, "down-keys", merge.down_keys, lambda level, node: ())

    # Rows of a chunk as (planes, rows per plane): an image is one plane.
    def plane_shape(index):
        sides = [chunks[axis][i] for axis, i in enumerate(index[:-1])]
        return tuple(sides) if len(sides) == 2 else (1, sides[0])

    for index in indices:
        first[key("open+rows", index)] = (_opened_and_rows, key("summary", index),
                                          key("state0", index), finals[index],
                                          plane_shape(index))
        first[key("rows", index)] = (_get, key("open+rows", index), 1)

    # The getters of a chunk's own results run inside their consumers (fewer tasks); a
    # result other workers fetch (a summary, row counts, ranks going up) keeps its own key, so
    # that they fetch it alone.
    def opened(index):
        return (_get, key("open+rows", index), 0)

    def ranks(index):
        return (_get, key("ranks+up", index), 0)

    # The ranking: a scan over the volume's rows in raster order, in three steps that each
    # gather one line of the chunk grid: along x (rows), along y (planes), along z (all planes).
    lead = grid[:-1] if len(grid) == 3 else (1,) + grid[:-1]

    def grid_index(i, j, k):
        return (i, j, k) if len(grid) == 3 else (j, k)

    for i, j in np.ndindex(*lead):
        line = [key("rows", grid_index(i, j, k)) for k in range(grid[-1])]
        first[key("scan-x", (i, j))] = (_scan_rows, line)
    for i in range(lead[0]):
        first[key("scan-y", (i,))] = (_scan_plane, [(_get, key("scan-x", (i, j)), 1)
                                                    for j in range(lead[1])])
    first[key("scan-z", ())] = (_scan_planes, [(_get, key("scan-y", (i,)), 1)
                                              for i in range(lead[0])])
    count_name = f"volccl-count-{token}"
    first[(count_name,)] = (_get, key("scan-z", ()), 1)
    total = da.Array(HighLevelGraph.from_collections(count_name, first, dependencies=[darr]),
                     count_name, chunks=(), dtype=np.int64)

    # Phase 2: number the component keys, bring the numbers of the open pieces down the tree,
    # relabel every chunk.
    out_name = f"volccl-labels-{token}"
    second = {}
    for index in indices:
        i, j, k = index if len(grid) == 3 else (0,) + index
        second[key("ranks+up", index)] = (
            _ranks_and_up, key("summary", index), opened(index),
            (_get, (_get, key("scan-z", ()), 0), i),
            (_get, (_get, key("scan-y", (i,)), 0), j),
            (_get, (_get, key("scan-x", (i, j)), 0), k))
        second[key("up-ranks0", index)] = (_get, key("ranks+up", index), 1)
    for level in range(1, top + 1):
        for node in nodes_at(level):
            below = "up-ranks0" if level == 1 else f"up-ranks{level - 1}-up"
            second[key(f"up-ranks{level}", node)] = (
                merge.node_up_ranks, key(f"state{level}", node),
                [key(below, child) for child in children_of(level, node)])
            second[key(f"up-ranks{level}-up", node)] = (_get, key(f"up-ranks{level}", node),
                                                        "up")
    open_ranks = pass_down(second, "down-ranks", merge.down_ranks,
                           lambda level, node: (key(f"up-ranks{level}", node),))
    for index in indices:
        finish = (_final_labels,) if writer is None else (
            _write_final_labels, writer, offsets[index])
        second[(out_name,) + index] = finish + (key("chunk", index), opened(index),
                                                open_ranks[index], ranks(index), label_offset,
                                                dtype)
    graph = HighLevelGraph.from_collections(out_name, second, dependencies=[total])
    if writer is None:
        labels = da.Array(graph, out_name, chunks=chunks, dtype=dtype)
    else:
        labels = da.Array(graph, out_name, chunks=tuple((1,) * n for n in grid), dtype=np.uint8)

    table = None
    if statistics:
        third = {}
        parts = []
        for index in indices:
            parts.append(key("stats", index))
            third[parts[-1]] = (_chunk_label_statistics, key("chunk", index), opened(index),
                                open_ranks[index], ranks(index), label_offset)
        level = 0
        while len(parts) > 1:
            level += 1
            merged = []
            for i in range(0, len(parts), 8):
                merged.append(key(f"stats-merge{level}", (i,)))
                third[merged[-1]] = (_merge_statistics, *parts[i:i + 8])
            parts = merged
        stats_key = f"volccl-statistics-{token}"
        third[stats_key] = (_statistics_table, parts[0], _scalar_key(total), label_offset,
                           darr.ndim)
        table = Delayed(stats_key, HighLevelGraph.from_collections(
            stats_key, third, dependencies=[labels, total]))
    return labels, total, table


def _label_dtype(requested):
    """The labels' dtype: uint64 or uint32, else a ValueError."""
    try:
        dtype = np.dtype(requested)
    except TypeError:
        dtype = None
    if dtype not in (np.dtype(np.uint64), np.dtype(np.uint32)):
        raise ValueError(f"dtype must be uint64 or uint32, not {requested!r}")
    return dtype


def _scalar_key(scalar):
    keys = scalar.__dask_keys__()
    while isinstance(keys, list):
        keys = keys[0]
    return keys


# Zarr stores --------------------------------------------------------------------------------

def _multiscales(attributes):
    """OME-Zarr's multiscales metadata (0.4: at the top; 0.5: under "ome"), or None."""
    ome = attributes.get("ome", {})
    if isinstance(ome, dict) and "multiscales" in ome:
        return ome["multiscales"], ome.get("version", "0.5")
    if "multiscales" in attributes:
        return attributes["multiscales"], attributes["multiscales"][0].get("version", "0.4")
    return None, None


def _open_input(in_url, component):
    """(zarr array, OME-Zarr description or None) of the store at in_url."""
    import zarr

    try:
        node = zarr.open(in_url, mode="r", path=component) if component else \
            zarr.open(in_url, mode="r")
    except Exception as error:  # zarr's own errors name neither the store nor what was wanted
        raise ValueError(f"cannot read a Zarr array or group at {in_url!r}"
                         + (f" (component {component!r})" if component else "")
                         + f": {type(error).__name__}: {error}") from error
    if isinstance(node, zarr.Array):
        return node, None
    multiscales, version = _multiscales(dict(node.attrs))
    if multiscales is None:
        arrays = sorted(name for name, _ in node.arrays())
        raise ValueError(f"{in_url!r} is a Zarr group without OME-Zarr multiscales; name the "
                         f"array to label with component= (--component): one of {arrays}")
    image = multiscales[0]
    dataset = image["datasets"][0]
    return node[dataset["path"]], {"group": node, "image": image, "dataset": dataset,
                                   "version": version}


def _spatial(array, ome, chunks=None):
    """The array as the 2D or 3D Dask array to label, read in Dask chunks of `chunks` (an int
    or one size per spatial axis; default the Zarr chunks): OME-Zarr's leading time and
    channel axes must have one element and are dropped."""
    import dask.array as da

    dropped = []
    if ome is not None:
        axes = ome["image"].get("axes", [])
        names = [axis["name"] if isinstance(axis, dict) else axis for axis in axes]
        types = [axis.get("type") if isinstance(axis, dict) else None for axis in axes]
        for axis, (name, kind) in enumerate(zip(names, types)):
            if kind in ("time", "channel") or name in ("t", "c"):
                if array.shape[axis] != 1:
                    raise ValueError(f"the OME-Zarr image has {array.shape[axis]} elements "
                                     f"along its {name!r} axis; volccl.dask labels one 2D or 3D "
                                     "volume")
                dropped.append(axis)
    if chunks is None:
        darr = da.from_zarr(array)
    else:
        spatial = len(array.shape) - len(dropped)
        sizes = list(chunks) if isinstance(chunks, tuple) else [chunks] * spatial
        if len(sizes) != spatial:
            raise ValueError(f"chunks {chunks!r} name {len(sizes)} axes; the volume has "
                             f"{spatial}")
        for axis in dropped:
            sizes.insert(axis, 1)
        # Read straight into the wanted chunks rather than rechunking the Zarr chunks.
        darr = da.from_zarr(array, chunks=tuple(sizes))
    if dropped:
        darr = darr[tuple(0 if axis in dropped else slice(None) for axis in range(darr.ndim))]
    return darr, tuple(dropped)


def _local_path(url):
    """The file-system path of a local store (a path or file:// URL), or None."""
    if "://" not in str(url):
        return os.path.abspath(os.fspath(url))
    if str(url).startswith("file://"):
        return str(url)[len("file://"):]
    return None


def _move(source, destination, overwrite):
    """Renames the finished store into place (atomically on a local file system)."""
    local_source, local_destination = _local_path(source), _local_path(destination)
    if local_source is not None and local_destination is not None:
        if os.path.exists(local_destination):
            if not overwrite:
                raise FileExistsError(f"{destination} exists (overwrite=True, --force, replaces "
                                      "it)")
            import shutil
            shutil.rmtree(local_destination)
        os.rename(local_source, local_destination)
        return
    import fsspec

    fs, source_path = fsspec.core.url_to_fs(source)
    _, destination_path = fsspec.core.url_to_fs(destination)
    if fs.exists(destination_path):
        if not overwrite:
            raise FileExistsError(f"{destination} exists (overwrite=True, --force, replaces it)")
        fs.rm(destination_path, recursive=True)
    fs.mv(source_path, destination_path, recursive=True)


def _remove(url):
    try:
        local = _local_path(url)
        if local is not None:
            import shutil
            shutil.rmtree(local, ignore_errors=True)
        else:
            import fsspec
            fs, path = fsspec.core.url_to_fs(url)
            if fs.exists(path):
                fs.rm(path, recursive=True)
    except Exception:  # cleaning up after a failure must not hide the failure
        pass


def _join(url, *parts):
    return "/".join([str(url).rstrip("/")] + [part.strip("/") for part in parts])


def _temporary_name(url):
    head, _, tail = str(url).rstrip("/").rpartition("/")
    name = f".{tail}.partial-{uuid.uuid4().hex[:12]}"
    return f"{head}/{name}" if head else name


def _output_chunks(darr, input_chunks):
    """The array to label, rechunked if need be, and the labels' Zarr chunk shape, such that
    every Dask chunk is a whole number of Zarr chunks (a task then writes Zarr chunks of its
    own): the input's Zarr chunks when the Dask chunks are made of them; else the Dask chunks'
    own, which Zarr needs regular (the last along each axis may be shorter), the mask being
    rechunked to them when they are not."""
    starts = [np.cumsum((0,) + sizes[:-1]) for sizes in darr.chunks]
    if all(np.all(start % size == 0) for start, size in zip(starts, input_chunks)):
        return darr, tuple(input_chunks)
    regular = tuple(sizes[0] for sizes in darr.chunks)
    if any(len(set(sizes[:-1])) > 1 or sizes[-1] > sizes[0] for sizes in darr.chunks):
        darr = darr.rechunk(regular)
    return darr, regular


def _write_statistics_csv(path, table, label_offset):
    counts = table["voxel_counts"]
    ndim = table["centroids"].shape[1]
    axes = "zyx"[3 - ndim:]
    header = (["label", "voxel_count"] + [f"centroid_{a}" for a in axes]
              + [f"{end}_{a}" for a in axes for end in ("min", "max")])
    with open(path, "w") as out:
        out.write(",".join(header) + "\n")
        for row in range(1, len(counts)):
            values = [str(label_offset + row), str(int(counts[row]))]
            values += [repr(float(v)) for v in table["centroids"][row]]
            values += [str(int(v)) for v in table["bounding_boxes"][row]]
            out.write(",".join(values) + "\n")


def _label_compressors(zarr_format):
    """Blosc's LZ4 over byte-shuffled labels: its ratio on label images is zstd's and it
    compresses several times faster, which matters as the labels are 8 bytes a voxel."""
    if zarr_format == 2:
        import numcodecs
        return numcodecs.Blosc(cname="lz4", clevel=5, shuffle=numcodecs.Blosc.SHUFFLE)
    from zarr.codecs import BloscCodec
    return BloscCodec(cname="lz4", clevel=5, shuffle="shuffle")


def label_zarr(in_url, out_url=None, *, component=None, connectivity=26, chunks=None,
               name="labels", overwrite=False, statistics=None, client=None, progress=False,
               compressors=None, dtype=np.uint64, **options):
    """Labels the Zarr array at in_url into a new Zarr array of uint64 (or uint32) labels;
    returns N.

    in_url: a Zarr array, a group with component= naming the array, or an OME-Zarr image (its
      full-resolution level is labeled).
    out_url: where the labels go. For an OME-Zarr image it defaults to the image itself, and the
      labels are written as OME-Zarr's labels/<name> image (one level, "0") of out_url; for a
      plain array it is the new array's store.
    chunks: the Dask chunks to label (an int or a tuple per spatial axis; default the Zarr
      chunks), read straight from the store: larger than small Zarr chunks, or smaller than
      one huge chunk. The labels keep the input's Zarr chunks when each Dask chunk is a whole
      number of them, else they take the Dask chunks.
    overwrite: replace an existing output; without it an existing output is an error.
    statistics: a CSV file for one row of statistics per component (voxel count, centroid,
      inclusive bounding box per axis), or None.
    client: a dask.distributed Client to run on (default: Dask's current scheduler).
    progress: show Dask's progress bar (task counts).
    compressors: the labels' Zarr compressors (default: Blosc LZ4 with byte shuffle), as
      zarr.create_array takes them for the input's Zarr format.
    dtype: the labels' type, uint64 or uint32 (half the bytes to gather, compress and write;
      a run whose labels do not fit fails, and leaves no output).
    options: connected_components's connectivity, label_offset, device, algorithm, threads.

    The array is written under a temporary name beside the output and renamed when it is
    complete, so a failed run leaves nothing under the output's name.
    """
    _require_dask()
    import zarr

    dtype = _label_dtype(dtype)
    array, ome = _open_input(in_url, component)
    darr, dropped = _spatial(array, ome, chunks)
    spatial_chunks = [size for axis, size in enumerate(array.chunks) if axis not in dropped]
    darr, zarr_chunks = _output_chunks(darr, spatial_chunks)
    target_chunks = zarr_chunks
    for axis in dropped:
        target_chunks = target_chunks[:axis] + (1,) + target_chunks[axis:]
    want_statistics = statistics is not None

    if ome is not None:
        root = out_url if out_url is not None else in_url
        final = _join(root, "labels", name)
    else:
        if out_url is None:
            raise ValueError("out_url is needed for a plain Zarr array (only an OME-Zarr image "
                             "takes its labels into its own labels/ group)")
        final = str(out_url)
    if not overwrite and _exists(final):
        raise FileExistsError(f"{final} exists (overwrite=True, --force, replaces it)")
    temporary = _temporary_name(final)
    zarr_format = array.metadata.zarr_format
    if compressors is None:
        compressors = _label_compressors(zarr_format)
    try:
        # The writer skips the chunks of background only, so Zarr need not look for them.
        layout = dict(shape=array.shape, chunks=target_chunks, dtype=dtype, fill_value=0,
                      compressors=compressors, config={"write_empty_chunks": True})
        if ome is not None:
            store = zarr.open_group(temporary, mode="w", zarr_format=zarr_format)
            target = store.create_array("0", **layout)
            _write_label_metadata(store, ome, name)
        else:
            target = zarr.create_array(temporary, zarr_format=zarr_format, **layout)
        written, count, table = _components(
            darr, connectivity, want_statistics, dtype=dtype,
            writer=_ZarrLabelWriter(target, zarr_chunks, dropped), **options)
        wanted = [written, count] + ([table] if want_statistics else [])
        computed = _compute(wanted, client, progress)
        _move(temporary, final, overwrite)
    except BaseException:
        _remove(temporary)
        raise
    if ome is not None:
        _list_label(_join(root, "labels"), name, ome["version"], zarr_format)
    if want_statistics:
        _write_statistics_csv(statistics, computed[2], options.get("label_offset", 0))
    return int(computed[1])


def _exists(url):
    local = _local_path(url)
    if local is not None:
        return os.path.exists(local)
    import fsspec
    fs, path = fsspec.core.url_to_fs(url)
    return fs.exists(path)


def _compute(collections, client, progress):
    import dask

    if client is None:
        try:
            from distributed import default_client
            client = default_client()
        except (ImportError, ValueError):
            client = None
    if client is None:
        if progress:
            from dask.diagnostics import ProgressBar
            with ProgressBar():
                return dask.compute(*collections)
        return dask.compute(*collections)
    futures = client.compute(collections)
    if progress:
        from distributed import progress as show_progress
        show_progress(futures)
    try:
        return client.gather(futures)
    except BaseException:
        _cancel_and_wait(client, futures, collections)
        raise


def _still_running(dask_worker, keys):
    """The keys among `keys` whose task this worker is still running (cancelled or not)."""
    running = ("executing", "long-running", "cancelled", "resumed")
    return [key for key, task in dask_worker.state.tasks.items()
            if task.state in running and key in keys]


def _cancel_and_wait(client, futures, collections, timeout=600.0):
    """Cancels a failed computation and waits until no worker runs any of its tasks. When one
    task fails, the others already running go on to the end, and a writer among them would
    write its Zarr chunks into the output after the caller has removed it."""
    keys = set()
    for collection in collections:
        keys.update(collection.__dask_graph__().keys())
    client.cancel(futures, force=True)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            running = client.run(_still_running, keys=keys)
        except Exception:  # a worker gone or unreachable: nothing more to wait for there
            return
        if not any(running.values()):
            return
        time.sleep(0.05)


def _write_label_metadata(group, ome, name):
    """The label image's OME-Zarr metadata: one level, the image's axes and scale."""
    image = ome["image"]
    dataset = {"path": "0"}
    if "coordinateTransformations" in ome["dataset"]:
        dataset["coordinateTransformations"] = ome["dataset"]["coordinateTransformations"]
    multiscale = {"name": name, "datasets": [dataset]}
    if "axes" in image:
        multiscale["axes"] = image["axes"]
    if ome["version"].startswith("0.4"):
        multiscale["version"] = ome["version"]
        group.attrs.update({"multiscales": [multiscale],
                            "image-label": {"version": ome["version"],
                                            "source": {"image": "../../"}}})
    else:
        group.attrs.update({"ome": {"version": ome["version"], "multiscales": [multiscale],
                                    "image-label": {"source": {"image": "../../"}}}})


def _list_label(labels_url, name, version, zarr_format):
    """Adds name to the labels group's list (made when missing)."""
    import zarr

    group = zarr.open_group(labels_url, mode="a", zarr_format=zarr_format)
    attributes = dict(group.attrs)
    if version.startswith("0.4"):
        names = list(attributes.get("labels", []))
        if name not in names:
            group.attrs["labels"] = names + [name]
    else:
        ome = dict(attributes.get("ome", {"version": version}))
        names = list(ome.get("labels", []))
        if name not in names:
            ome["labels"] = names + [name]
            group.attrs["ome"] = ome


# Command line -------------------------------------------------------------------------------

def _chunks_argument(text):
    try:
        values = tuple(int(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"--chunks takes whole numbers separated by commas, "
                                         f"not {text!r}") from None
    if any(value < 1 for value in values):
        raise argparse.ArgumentTypeError(f"--chunks must be positive, not {text!r}")
    return values[0] if len(values) == 1 else values


def _parser():
    parser = argparse.ArgumentParser(
        prog="python -m volccl.dask",
        description="Label chunked Zarr volumes on a Dask cluster (volccl.dask.label_zarr).")
    commands = parser.add_subparsers(dest="command", required=True)
    label = commands.add_parser(
        "label", help="label a Zarr array or OME-Zarr image into a Zarr array of labels")
    label.add_argument("input", help="the Zarr store (a path or URL)")
    label.add_argument("-o", "--output",
                       help="the output store (default for OME-Zarr: the input's labels/NAME)")
    label.add_argument("--component", help="the array inside the input group, if not OME-Zarr")
    label.add_argument("-c", "--connectivity", type=int, default=26,
                       help="6, 18 or 26 for volumes; 4 or 8 for images (default 26)")
    where = label.add_mutually_exclusive_group()
    where.add_argument("--scheduler", metavar="ADDRESS",
                       help="an existing cluster's scheduler (tcp://host:8786)")
    where.add_argument("--workers", type=int, metavar="N",
                       help="start a local cluster of N worker processes (default: one per core)")
    label.add_argument("--chunks", type=_chunks_argument, metavar="Z,Y,X",
                       help="rechunk the input first (one size for every axis, or one per axis)")
    label.add_argument("--name", default="labels", help="OME-Zarr label name (default labels)")
    label.add_argument("--stats", metavar="FILE.csv", help="one row of statistics per component")
    label.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    label.add_argument("--algorithm", default="auto")
    label.add_argument("--label-offset", type=int, default=0,
                       help="number the components from OFFSET + 1")
    label.add_argument("--dtype", default="uint64", choices=("uint64", "uint32"),
                       help="the labels' type (default uint64; uint32 halves the bytes written, "
                            "and fails when the labels pass 2^32 - 1)")
    label.add_argument("-f", "--force", action="store_true", help="replace an existing output")
    label.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    return parser


def main(argv=None):
    """The command line; returns the exit status (0, or 1 with a message on stderr)."""
    arguments = _parser().parse_args(argv)
    try:
        _require_dask()
        from distributed import Client, LocalCluster
    except ImportError as error:
        print(f"volccl.dask: {error}", file=sys.stderr)
        return 1
    cluster = None
    threads = 0
    try:
        if arguments.scheduler:
            client = Client(arguments.scheduler)
        else:
            workers = arguments.workers or os.cpu_count() or 1
            if workers < 1:
                raise ValueError(f"--workers must be at least 1, not {workers}")
            # Each worker labels one chunk at a time with its share of the cores.
            threads = max(1, (os.cpu_count() or 1) // workers)
            cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                   dashboard_address=None)
            client = Client(cluster)
        with client:
            count = label_zarr(arguments.input, arguments.output, component=arguments.component,
                               connectivity=arguments.connectivity, chunks=arguments.chunks,
                               name=arguments.name, overwrite=arguments.force,
                               statistics=arguments.stats, client=client,
                               progress=not arguments.quiet, device=arguments.device,
                               algorithm=arguments.algorithm, threads=threads,
                               label_offset=arguments.label_offset, dtype=arguments.dtype)
        print(f"{count} components")
        return 0
    except (ValueError, TypeError, FileExistsError, NotImplementedError, OSError,
            RuntimeError) as error:
        print(f"volccl.dask: {error}", file=sys.stderr)
        return 1
    finally:
        if cluster is not None:
            cluster.close()


if __name__ == "__main__":
    # Run through the imported module, so that the tasks name volccl.dask's functions, which
    # the workers import, and not __main__'s.
    from volccl.dask import main as _main
    sys.exit(_main())
