"""volccl.dask on a real dask.distributed LocalCluster of worker processes, against
scipy.ndimage.label of the whole volume: chunkings, contacts across chunk faces, edges and
corners, snakes through many chunks, empty chunks, offsets into uint64, uint32 labels (and
labels past them refused), statistics, Zarr and OME-Zarr stores, the command line, a worker
killed mid-run, and bad input; label maps against scikit-image's label of the whole volume;
and on a machine with a GPU and CuPy, the workers' path that keeps each chunk's labels on the
device.
"""

import importlib.util
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from scipy import ndimage

from conftest import CONNECTIVITIES, STRUCTURE_RANK, random_mask

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")
zarr = pytest.importorskip("zarr")
import volccl  # noqa: E402
import volccl.dask as vdask  # noqa: E402


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=3, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            yield client


def scipy_reference(mask, connectivity, offset=0):
    structure = ndimage.generate_binary_structure(mask.ndim, STRUCTURE_RANK[connectivity])
    labels, count = ndimage.label(mask, structure=structure)
    labels = labels.astype(np.uint64)
    labels[labels > 0] += np.uint64(offset)
    return labels, count


def check_all(client, cases, **options):
    """Labels every (mask, chunks, connectivity) case in one computation (the cluster works on
    them together) and compares each with scipy."""
    wanted = []
    for mask, chunks, connectivity in cases:
        darr = da.from_array(mask, chunks=chunks)
        labels, count = vdask.connected_components(darr, connectivity=connectivity,
                                                   return_N=True, **options)
        assert labels.dtype == options.get("dtype", np.uint64) and labels.chunks == darr.chunks
        wanted += [labels, count]
    results = client.compute(wanted, sync=True)
    for (mask, chunks, connectivity), labels, count in zip(cases, results[0::2], results[1::2]):
        expected, expected_count = scipy_reference(mask, connectivity,
                                                   options.get("label_offset", 0))
        assert int(count) == expected_count, (mask.shape, chunks, connectivity)
        np.testing.assert_array_equal(labels, expected, err_msg=f"{chunks} {connectivity}")


def irregular(rng, side, largest):
    sizes = []
    while side > 0:
        sizes.append(int(rng.integers(1, min(side, largest) + 1)))
        side -= sizes[-1]
    return tuple(sizes)


@pytest.mark.parametrize("ndim", [2, 3])
def test_random_volumes_regular_and_irregular_chunks(client, rng, ndim):
    shape = (21, 19, 17)[3 - ndim:]
    every = CONNECTIVITIES[ndim]
    # Every connectivity on a random irregular chunking; in 3D, where the tasks are many, the
    # other chunkings share the connectivities out.
    some = (lambda *wanted: wanted) if ndim == 3 else (lambda *wanted: every)
    cases = []
    for density, granularity, chunkings in (
            (0.35, 1, [((8,) * ndim, some(6, 26)), ((10, 7, 6)[:ndim], some(18)),
                       (tuple(irregular(rng, side, 9) for side in shape), every)]),
            (0.5, 2, [(tuple(irregular(rng, side, 9) for side in shape), some(26))])):
        mask = random_mask(rng, shape, density, granularity)
        cases += [(mask, chunks, connectivity) for chunks, connectivities in chunkings
                  for connectivity in connectivities]
    check_all(client, cases)


@pytest.mark.parametrize("ndim", [2, 3])
def test_chunks_of_one_along_an_axis(client, rng, ndim):
    shape = (9, 11) if ndim == 2 else (5, 7, 6)
    mask = random_mask(rng, shape, 0.45)
    # 2D: every axis at every connectivity. 3D: every axis at 26, and 18 and 6 on one axis
    # each (the thin chunks are many).
    wanted = {0: (8, 4), 1: (8, 4)} if ndim == 2 else {0: (26, 18), 1: (26,), 2: (26, 6)}
    cases = []
    for axis in range(ndim):
        chunks = [4] * ndim
        chunks[axis] = 1
        cases += [(mask, tuple(chunks), connectivity) for connectivity in wanted[axis]]
    check_all(client, cases)


def hilbert_3d(order):
    """The points of a 3D Hilbert curve of 2**order points a side, in curve order (Skilling's
    transform of the index's bits)."""
    n = 1 << order
    points = []
    for index in range(n ** 3):
        x = [0, 0, 0]
        for bit in range(3 * order):  # the index's bits, dealt round the axes
            x[2 - bit % 3] |= ((index >> bit) & 1) << (bit // 3)
        t = x[2] >> 1
        for i in (2, 1):
            x[i] ^= x[i - 1]
        x[0] ^= t
        q = 2
        while q != n:
            p = q - 1
            for i in (2, 1, 0):
                if x[i] & q:
                    x[0] ^= p
                else:
                    t = (x[0] ^ x[i]) & p
                    x[0] ^= t
                    x[i] ^= t
            q <<= 1
        points.append(tuple(x))
    return points


def test_hilbert_snake_through_4x4x4_chunks(client):
    points = hilbert_3d(3)
    assert len(set(points)) == 512
    side = 2 * 8 - 1
    mask = np.zeros((side,) * 3, bool)
    for a, b in zip(points, points[1:]):
        assert sum(abs(p - q) for p, q in zip(a, b)) == 1
        mask[tuple(2 * p for p in a)] = True
        mask[tuple(p + q for p, q in zip(a, b))] = True
    mask[tuple(2 * p for p in points[-1])] = True
    assert da.from_array(mask, chunks=4).numblocks == (4, 4, 4)
    assert scipy_reference(mask, 6)[1] == 1  # one component, through all 64 chunks
    check_all(client, [(mask, (4, 4, 4), connectivity) for connectivity in (6, 26)])


@pytest.mark.parametrize("ndim", [2, 3])
def test_contacts_only_through_chunk_corners_and_edges(client, ndim):
    # One pair of voxels around each inner chunk corner, each voxel in another chunk: every
    # pair of the 2**ndim voxels there touches by a face, an edge or a corner only.
    chunk = 3
    corners = list(np.ndindex(*(4, 4, 2)[3 - ndim:]))
    cells = list(np.ndindex(*(2,) * ndim))
    pairs = [(a, b) for i, a in enumerate(cells) for b in cells[i + 1:]]
    assert len(corners) >= len(pairs)
    mask = np.zeros(tuple(chunk * (n + 1) for n in (4, 4, 2)[3 - ndim:]), bool)
    for corner, (a, b) in zip(corners, pairs):
        for cell in (a, b):
            mask[tuple(chunk * (c + 1) - 1 + v for c, v in zip(corner, cell))] = True
    check_all(client, [(mask, chunk, connectivity) for connectivity in CONNECTIVITIES[ndim]])


def test_empty_full_and_mostly_empty_volumes(client, rng):
    shape = (12, 10, 9)
    mask = np.zeros(shape, np.float32)
    mask[4:8, 5:10, 0:3] = random_mask(rng, (4, 5, 3), 0.7)
    check_all(client, [(np.zeros(shape, bool), 4, 26), (np.ones(shape, np.uint8), 4, 6),
                       (random_mask(rng, shape, 0.4), shape, 26),  # one chunk
                       (random_mask(rng, (1, 1, 30), 0.6), (1, 1, 4), 26)]
              + [(mask, (4, 5, 3), connectivity) for connectivity in CONNECTIVITIES[3]])


def test_label_offset_takes_labels_past_uint32(client, rng):
    mask = random_mask(rng, (14, 13, 12), 0.35)
    offset = 2**32 - 1  # every label is past uint32's range
    expected = scipy_reference(mask, 26, offset)[0]
    assert int(expected[expected > 0].min()) == 2**32  # check_all compares with these labels
    check_all(client, [(mask, 5, connectivity) for connectivity in CONNECTIVITIES[3]],
              label_offset=offset)


def test_a_failed_computation_returns_once_its_running_tasks_end(client, tmp_path):
    # label_zarr removes its partial output when the computation fails. A writer task still
    # running at that moment would write into the output after it is removed, so the failure
    # must come back only once every running task of the computation has ended.
    import dask

    late = tmp_path / "late"

    def slow_writer():
        time.sleep(1.0)
        late.write_text("written")
        return 1

    def failing():
        time.sleep(0.2)
        raise ValueError("failed on purpose")

    with pytest.raises(ValueError, match="failed on purpose"):
        vdask._compute([dask.delayed(slow_writer, pure=False)(),
                        dask.delayed(failing, pure=False)()], client, False)
    assert late.exists()


def test_uint32_labels_and_labels_past_uint32_refused(client, rng, tmp_path):
    # Half the bytes, the same numbers; labels that would pass 2**32 - 1 fail the computation
    # with a clear error (label_zarr leaves no output), the last ones that fit do not.
    mask = random_mask(rng, (14, 13, 12), 0.35)
    check_all(client, [(mask, 5, connectivity) for connectivity in CONNECTIVITIES[3]],
              dtype=np.uint32)
    check_all(client, [(mask[0], (4, 3), connectivity) for connectivity in CONNECTIVITIES[2]],
              dtype="uint32")
    # At 6, so that there are several components whatever the seed.
    count = scipy_reference(mask, 6)[1]
    check_all(client, [(mask, 4, 6)], dtype=np.uint32, label_offset=2**32 - 1 - count)
    darr = da.from_array(mask, chunks=4)
    labels = vdask.connected_components(darr, 6, dtype=np.uint32, label_offset=2**32 - count)
    with pytest.raises(ValueError, match=f"label {2**32} does not fit dtype uint32"):
        client.compute(labels, sync=True)
    with pytest.raises(ValueError, match="room for the labels in uint32"):
        vdask.connected_components(darr, dtype=np.uint32, label_offset=2**32 - 1)
    for wrong in (np.int32, np.float64, "labels"):
        with pytest.raises(ValueError, match="dtype must be uint64 or uint32"):
            vdask.connected_components(darr, dtype=wrong)
    write_zarr(tmp_path / "in.zarr", mask.astype(np.uint8), (4, 4, 4))
    assert vdask.label_zarr(tmp_path / "in.zarr", tmp_path / "out.zarr", connectivity=6,
                            dtype="uint32", client=client) == count
    out = zarr.open_array(str(tmp_path / "out.zarr"), mode="r")
    assert out.dtype == np.uint32
    np.testing.assert_array_equal(out[...], scipy_reference(mask, 6)[0])
    with pytest.raises(ValueError, match="does not fit dtype uint32"):
        vdask.label_zarr(tmp_path / "in.zarr", tmp_path / "big.zarr", connectivity=6,
                         dtype=np.uint32, label_offset=2**32 - count, client=client)
    assert sorted(os.listdir(tmp_path)) == ["in.zarr", "out.zarr"]


def test_keys_past_uint32_in_a_large_volume():
    # A chunk far into a volume of 2**33 voxels: its keys (global linear indices) pass 2**32.
    from volccl import _dask_merge as merge

    labels = np.zeros((2, 3, 4), np.uint32)
    labels[0, 0, 1], labels[1, 2, 3] = 1, 2
    shape, offset = (2048, 2048, 2048), (1900, 2000, 2040)
    summary = merge.chunk_summary(labels, 2, None, offset, shape)
    expected = [np.ravel_multi_index((1900, 2000, 2041), shape),
                np.ravel_multi_index((1901, 2002, 2043), shape)]
    assert summary["keys"][1:].tolist() == expected and min(expected) > 2**32


def random_label_map(rng, shape, values, granularity):
    """Cells of `granularity` voxels a side, each holding one of `values` (0 among them: the
    background) at random."""
    coarse = tuple(-(-side // granularity) for side in shape)
    cells = rng.choice(np.asarray(values), size=coarse)
    for axis in range(len(shape)):
        cells = np.repeat(cells, granularity, axis=axis)
    return np.ascontiguousarray(cells[tuple(slice(0, side) for side in shape)])


def label_map_cases(rng, ndim):
    """Label maps of several dtypes, extreme and negative values side by side, by irregular
    chunks, at every connectivity."""
    shape = (13, 17, 11)[3 - ndim:] if ndim == 3 else (37, 41)
    int64 = np.iinfo(np.int64)
    value_sets = [(np.uint8, [0, 1, 2]), (np.int16, [0, -1, -32768, 32767, 5]),
                  (np.uint64, [0, 2**64 - 1, 2**63, 1]), (np.int64, [0, int64.min, -1, int64.max]),
                  (np.uint32, list(range(40)))]
    cases = []
    for (dtype, values), granularity in zip(value_sets, (1, 2, 1, 2, 1)):
        label_map = random_label_map(rng, shape, np.array(values, dtype=dtype), granularity)
        chunks = tuple(irregular(rng, side, 6) for side in shape)
        cases += [(label_map, chunks, c) for c in CONNECTIVITIES[ndim]]
    return cases


def check_label_maps(client, cases, **options):
    """As check_all, for label maps, against skimage.measure.label of the whole volume."""
    measure = pytest.importorskip("skimage.measure")
    wanted = []
    for label_map, chunks, connectivity in cases:
        labels, count = vdask.connected_components(da.from_array(label_map, chunks=chunks),
                                                   connectivity=connectivity, return_N=True,
                                                   **options)
        wanted += [labels, count]
    results = client.compute(wanted, sync=True)
    for (label_map, chunks, connectivity), labels, count in zip(cases, results[0::2],
                                                               results[1::2]):
        expected = measure.label(label_map, background=0,
                                 connectivity=STRUCTURE_RANK[connectivity]).astype(np.uint64)
        where = f"{label_map.dtype} {chunks} {connectivity}"
        assert int(count) == int(expected.max()), where
        np.testing.assert_array_equal(labels, expected, err_msg=where)


@pytest.mark.parametrize("ndim", [2, 3])
def test_label_maps_across_chunks_equal_scikit_image(client, rng, ndim):
    check_label_maps(client, label_map_cases(rng, ndim))


def test_statistics_merged_across_chunks(client, rng):
    for ndim, shape in ((3, (17, 15, 13)), (2, (33, 29))):
        mask = random_mask(rng, shape, 0.5, 2)
        connectivity = CONNECTIVITIES[ndim][-1]
        labels, table = vdask.connected_components(da.from_array(mask, chunks=6),
                                                   connectivity=connectivity, statistics=True,
                                                   label_offset=10)
        labels, table = client.compute([labels, table], sync=True)
        expected, count = scipy_reference(mask, connectivity)
        np.testing.assert_array_equal(labels[labels > 0] - 10, expected[expected > 0])
        np.testing.assert_array_equal(table["voxel_counts"],
                                      np.bincount(expected.ravel().astype(np.int64),
                                                  minlength=count + 1))
        grid = np.indices(shape)
        for row in (1, count // 2, count):
            voxels = expected == row
            sums = [int(axis[voxels].sum()) for axis in grid]
            assert table["coordinate_sums"][row].tolist() == sums
            np.testing.assert_allclose(table["centroids"][row],
                                       np.array(sums) / voxels.sum(), rtol=0, atol=1e-12)
            box = ndimage.find_objects(voxels.astype(np.uint8))[0]
            assert table["bounding_boxes"][row].tolist() == [
                value for piece in box for value in (piece.start, piece.stop - 1)]
        assert table["voxel_counts"][0] == np.count_nonzero(expected == 0)


def write_zarr(path, mask, chunks, zarr_format=3):
    array = zarr.create_array(str(path), shape=mask.shape, chunks=chunks, dtype=mask.dtype,
                              zarr_format=zarr_format)
    array[...] = mask
    return array


def test_label_zarr_into_a_new_array(client, rng, tmp_path):
    mask = random_mask(rng, (20, 18, 16), 0.4).astype(np.uint8)
    write_zarr(tmp_path / "in.zarr", mask, (8, 8, 8))
    count = vdask.label_zarr(tmp_path / "in.zarr", tmp_path / "out.zarr", connectivity=18,
                             client=client, statistics=str(tmp_path / "stats.csv"))
    expected, expected_count = scipy_reference(mask, 18)
    assert count == expected_count
    out = zarr.open_array(str(tmp_path / "out.zarr"), mode="r")
    assert out.dtype == np.uint64 and out.chunks == (8, 8, 8)
    assert [(c.cname.value, c.shuffle.value) for c in out.compressors] == [("lz4", "shuffle")]
    np.testing.assert_array_equal(out[...], expected)
    rows = (tmp_path / "stats.csv").read_text().splitlines()
    assert rows[0].startswith("label,voxel_count,centroid_z") and len(rows) == count + 1
    assert sorted(os.listdir(tmp_path)) == ["in.zarr", "out.zarr", "stats.csv"]
    with pytest.raises(FileExistsError):
        vdask.label_zarr(tmp_path / "in.zarr", tmp_path / "out.zarr", client=client)
    # Rechunked on the way in (a one-chunk input); overwrite replaces the output.
    write_zarr(tmp_path / "one.zarr", mask, mask.shape, zarr_format=2)
    vdask.label_zarr(tmp_path / "one.zarr", tmp_path / "out.zarr", connectivity=6,
                     chunks=(7, 6, 5), overwrite=True, client=client)
    out = zarr.open_array(str(tmp_path / "out.zarr"), mode="r")
    assert out.chunks == (7, 6, 5) and out.metadata.zarr_format == 2
    assert [c.cname for c in out.compressors] == ["lz4"]
    np.testing.assert_array_equal(out[...], scipy_reference(mask, 6)[0])
    # Dask chunks made of whole input chunks: the labels keep the input's Zarr chunks.
    write_zarr(tmp_path / "small.zarr", mask, (4, 4, 4))
    vdask.label_zarr(tmp_path / "small.zarr", tmp_path / "out.zarr", connectivity=26, chunks=8,
                     overwrite=True, client=client, compressors=zarr.codecs.ZstdCodec(level=5))
    out = zarr.open_array(str(tmp_path / "out.zarr"), mode="r")
    assert out.chunks == (4, 4, 4)
    assert [(type(c).__name__, c.level) for c in out.compressors] == [("ZstdCodec", 5)]
    np.testing.assert_array_equal(out[...], scipy_reference(mask, 26)[0])


def test_label_zarr_irregular_chunks_and_chunks_of_background(client, rng, tmp_path):
    mask = random_mask(rng, (20, 18, 16), 0.4).astype(np.uint8)
    mask[:, :, 8:12] = 0  # Zarr chunks of background only, never written
    mask[3, 4, 9] = 1  # but one of them holds a single voxel
    write_zarr(tmp_path / "in.zarr", mask, (4, 4, 4))
    # Irregular Dask chunks: the mask is rechunked to regular ones, which the labels take.
    vdask.label_zarr(tmp_path / "in.zarr", tmp_path / "out.zarr", connectivity=26,
                     chunks=((5, 9, 6), (18,), (3, 7, 6)), client=client)
    out = zarr.open_array(str(tmp_path / "out.zarr"), mode="r")
    assert out.chunks == (5, 18, 3)
    np.testing.assert_array_equal(out[...], scipy_reference(mask, 26)[0])
    # Dask chunks of whole Zarr chunks: the chunks of background only are absent.
    vdask.label_zarr(tmp_path / "in.zarr", tmp_path / "out.zarr", connectivity=6, chunks=8,
                     overwrite=True, client=client)
    out = zarr.open_array(str(tmp_path / "out.zarr"), mode="r")
    np.testing.assert_array_equal(out[...], scipy_reference(mask, 6)[0])
    written = {tuple(int(i) for i in os.path.relpath(os.path.join(root, name),
                                                     tmp_path / "out.zarr" / "c").split(os.sep))
               for root, _, names in os.walk(tmp_path / "out.zarr" / "c") for name in names}
    foreground = {index for index in np.ndindex(5, 5, 4)
                  if mask[tuple(slice(4 * i, 4 * i + 4) for i in index)].any()}
    assert written == foreground and (0, 1, 2) in written and (1, 1, 2) not in written
    # Dask chunks of five Zarr chunks along the first axis.
    write_zarr(tmp_path / "thin.zarr", mask, (2, 4, 4))
    vdask.label_zarr(tmp_path / "thin.zarr", tmp_path / "out.zarr", connectivity=18,
                     chunks=(10, 8, 8), overwrite=True, client=client)
    out = zarr.open_array(str(tmp_path / "out.zarr"), mode="r")
    assert out.chunks == (2, 4, 4)
    np.testing.assert_array_equal(out[...], scipy_reference(mask, 18)[0])


def test_chunk_passes_in_the_compiled_core(rng):
    from volccl import _dask_merge, _volccl
    for shape in [(9, 1, 13), (1, 1, 1), (17, 23), (6, 7, 8)]:
        labels = volccl.connected_components(random_mask(rng, shape, 0.3))
        count = int(labels.max())
        flat = labels.ravel()
        expected = [int(np.flatnonzero(flat == label)[0]) for label in range(1, count + 1)]
        assert _dask_merge.first_voxels(labels, count).tolist() == expected
        table = rng.integers(1, 2**64, count + 1, dtype=np.uint64)
        table[0] = 0
        for view in (labels, labels[..., ::2], labels[::-1]):
            for final in (table, (table >> np.uint64(32)).astype(np.uint32)):
                out = np.full(view.shape, 7, final.dtype)
                assert _volccl.relabel_into(view, final, out) == bool(view.any())
                np.testing.assert_array_equal(out, final[view])
    with pytest.raises(ValueError, match="not numbered 1..2 in raster order"):
        _dask_merge.first_voxels(np.array([[0, 2, 1]], np.uint32), 2)
    with pytest.raises(ValueError, match="not numbered 1..1 in raster order"):
        _dask_merge.first_voxels(np.array([[0, 0, 0]], np.uint32), 1)
    with pytest.raises(ValueError, match="local label 3 is beyond a table of 3"):
        _volccl.relabel_into(np.array([[1, 3]], np.uint32), np.arange(3, dtype=np.uint64),
                             np.empty((1, 2), np.uint64))
    with pytest.raises(ValueError, match="into one of shape"):
        _volccl.relabel_into(np.zeros((2, 2), np.uint32), np.zeros(1, np.uint64),
                             np.empty((2, 3), np.uint64))
    with pytest.raises(TypeError):  # a table and an output of different types
        _volccl.relabel_into(np.zeros((2, 2), np.uint32), np.zeros(1, np.uint64),
                             np.empty((2, 2), np.uint32))


def test_label_zarr_ome_zarr_labels_layout(client, rng, tmp_path):
    mask = random_mask(rng, (1, 12, 14, 10), 0.4).astype(np.uint16)
    image = zarr.open_group(str(tmp_path / "image.zarr"), mode="w", zarr_format=2)
    image.create_array("0", shape=mask.shape, chunks=(1, 5, 5, 5), dtype=mask.dtype)[...] = mask
    axes = [{"name": "c", "type": "channel"}] + [
        {"name": name, "type": "space", "unit": "micrometer"} for name in "zyx"]
    scale = [{"type": "scale", "scale": [1.0, 2.0, 0.5, 0.5]}]
    image.attrs["multiscales"] = [{"version": "0.4", "axes": axes,
                                   "datasets": [{"path": "0",
                                                 "coordinateTransformations": scale}]}]
    count = vdask.label_zarr(tmp_path / "image.zarr", client=client, name="cells")
    expected, expected_count = scipy_reference(mask[0], 26)
    assert count == expected_count
    labels_group = zarr.open_group(str(tmp_path / "image.zarr" / "labels"), mode="r")
    assert labels_group.attrs["labels"] == ["cells"]
    cells = zarr.open_group(str(tmp_path / "image.zarr" / "labels" / "cells"), mode="r")
    assert cells.attrs["image-label"]["source"]["image"] == "../../"
    datasets = cells.attrs["multiscales"][0]["datasets"]
    assert datasets == [{"path": "0", "coordinateTransformations": scale}]
    assert cells["0"].shape == mask.shape
    np.testing.assert_array_equal(cells["0"][0], expected)
    assert sorted(os.listdir(tmp_path / "image.zarr" / "labels")) == [".zattrs", ".zgroup",
                                                                     "cells"]


def test_failed_run_leaves_no_output(client, rng, tmp_path):
    mask = random_mask(rng, (12, 12, 12), 0.4).astype(np.uint8)
    write_zarr(tmp_path / "in.zarr", mask, (4, 4, 4))
    chunk_file = tmp_path / "in.zarr" / "c" / "1" / "1" / "1"
    chunk_file.write_bytes(b"not a chunk")
    with pytest.raises(Exception):
        vdask.label_zarr(tmp_path / "in.zarr", tmp_path / "out.zarr", client=client)
    assert sorted(os.listdir(tmp_path)) == ["in.zarr"]


def test_bad_input_is_refused_clearly(client, tmp_path):
    with pytest.raises(ValueError, match="2D images and 3D volumes, not a 4D"):
        vdask.connected_components(da.zeros((2, 3, 4, 5), chunks=2))
    with pytest.raises(ValueError, match="unknown"):
        vdask.connected_components(da.zeros((4, 4), chunks=2)[da.arange(4) > 1])
    with pytest.raises(TypeError, match="dask.array.Array"):
        vdask.connected_components(np.zeros((3, 3)))
    with pytest.raises(TypeError, match="complex"):
        vdask.connected_components(da.zeros((3, 3), dtype=complex, chunks=2))
    with pytest.raises(ValueError, match="connectivity 4 does not exist for a 3D"):
        vdask.connected_components(da.zeros((3, 3, 3), chunks=2), connectivity=4)
    with pytest.raises(ValueError, match="cannot read a Zarr"):
        vdask.label_zarr(tmp_path / "missing.zarr", tmp_path / "out.zarr", client=client)
    with pytest.raises(ValueError, match="label_offset"):
        vdask.connected_components(da.zeros((3, 3), chunks=2), label_offset=-1)


def run_command_line(*arguments):
    return subprocess.run([sys.executable, "-m", "volccl.dask", *map(str, arguments)],
                          capture_output=True, text=True, timeout=300)


def test_command_line_on_a_running_scheduler(client, rng, tmp_path):
    mask = random_mask(rng, (10, 16, 12), 0.4).astype(np.uint8)
    write_zarr(tmp_path / "in.zarr", mask, mask.shape)
    address = client.scheduler.address
    done = run_command_line("label", tmp_path / "in.zarr", "-o", tmp_path / "out.zarr",
                            "--scheduler", address, "--chunks", "5,6,7", "-c", "6", "-q",
                            "--dtype", "uint32")
    expected, count = scipy_reference(mask, 6)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"{count} components"
    out = zarr.open_array(str(tmp_path / "out.zarr"), mode="r")
    assert out.dtype == np.uint32
    np.testing.assert_array_equal(out[...], expected)
    failed = run_command_line("label", tmp_path / "missing.zarr", "-o", tmp_path / "x.zarr",
                              "--scheduler", address, "-q")
    assert failed.returncode == 1 and "cannot read a Zarr" in failed.stderr


def _slowly(block):
    time.sleep(0.25)
    return block


def test_worker_killed_mid_run_gives_the_same_labels(client, rng):
    mask = random_mask(rng, (24, 24, 24), 0.35)
    chunks = (6, 8, 12)
    slow = da.from_array(mask, chunks=chunks).map_blocks(_slowly, dtype=mask.dtype)
    labels = vdask.connected_components(slow, connectivity=26)
    future = client.compute(labels)
    time.sleep(1.0)
    assert not future.done()
    pids = client.run(os.getpid)
    victim = sorted(pids)[0]
    os.kill(pids[victim], signal.SIGKILL)
    result = future.result(timeout=240)
    np.testing.assert_array_equal(result, scipy_reference(mask, 26)[0])
    client.wait_for_workers(3, timeout=60)
    assert pids[victim] not in client.run(os.getpid).values()


def test_chunk_labeled_on_a_gpu_and_written_on_a_cpu_worker(rng):
    # A chunk result that Dask moved from a GPU worker (labels None, its input kept) to a
    # worker without a GPU is labeled again there on the CPU, with the same labels.
    for shape, connectivity in [((9, 10, 11), 26), ((13, 7), 4)]:
        block = random_mask(rng, shape, 0.4)
        labeled = vdask._label_chunk(block, (0,) * len(shape), shape, connectivity, None, "cpu",
                                     "auto", 0, False)
        moved = (None, labeled[1], None, (block, connectivity, None, "cpu", "auto"))
        np.testing.assert_array_equal(vdask._with_local_labels(moved, lambda local: local),
                                      labeled[0])


def _gpu_and_cupy():
    return volccl.cuda_available() and importlib.util.find_spec("cupy") is not None


needs_gpu = pytest.mark.skipif(not _gpu_and_cupy(),
                               reason="needs a CUDA device and CuPy (the workers' GPU path)")


@needs_gpu
def test_gpu_chunk_keeps_its_input_not_its_labels(rng):
    for shape, connectivity, binary_image in [((20, 18, 33), 26, None), ((9, 40, 1), 6, None),
                                              ((31, 45), 8, None), ((12, 13, 14), 18, False)]:
        block = random_mask(rng, shape, 0.4, 2)
        if binary_image is False:
            block = random_label_map(rng, shape, np.array([0, 3, 9], np.int32), 1)
        on_gpu = vdask._label_chunk(block, (0,) * len(shape), shape, connectivity, binary_image,
                                    "auto", "auto", 0, False)
        on_cpu = vdask._label_chunk(block, (0,) * len(shape), shape, connectivity, binary_image,
                                    "cpu", "auto", 0, False)
        assert on_gpu[0] is None and on_gpu[3][0] is block and on_cpu[3] is None
        for name in ("count", "keys", "rows", "shape"):
            np.testing.assert_array_equal(on_gpu[1][name], on_cpu[1][name])
        for face, (plane, values) in on_cpu[1]["faces"].items():
            np.testing.assert_array_equal(on_gpu[1]["faces"][face][0], plane)
            assert isinstance(on_gpu[1]["faces"][face][0], np.ndarray)
        table = np.arange(on_cpu[1]["count"] + 1, dtype=np.uint64) * np.uint64(2**40)
        gathered = vdask._with_local_labels(
            on_gpu, lambda local: vdask._final_values(local, table, vdask._device_table(local,
                                                                                      table)))
        np.testing.assert_array_equal(gathered, table[on_cpu[0]])
        assert bool(on_cpu[0].any()) == (gathered is not None)


@needs_gpu
def test_first_voxels_of_labels_on_the_gpu(rng):
    import cupy

    from volccl import _dask_merge

    for shape in [(9, 1, 13), (1, 1, 1), (17, 23), (6, 7, 8), (3, 5, 300)]:
        labels = volccl.connected_components(random_mask(rng, shape, 0.3))
        count = int(labels.max())
        expected = _dask_merge.first_voxels(labels, count)
        stream = cupy.cuda.Stream(non_blocking=True)
        with stream:
            on_device = cupy.asarray(labels)
            assert _dask_merge.first_voxels(on_device, count, stream.ptr).tolist() == \
                expected.tolist()
    with pytest.raises(ValueError, match="not numbered 1..2 in raster order"):
        _dask_merge.first_voxels(cupy.asarray(np.array([[0, 2, 1]], np.uint32)), 2)
    with pytest.raises(ValueError, match="label 3 but the count is 2"):
        _dask_merge.first_voxels(cupy.asarray(np.array([[1, 2, 3]], np.uint32)), 2)


@needs_gpu
def test_gpu_workers_end_to_end(client, rng, tmp_path):
    # device="cuda" on every worker: masks by irregular chunks at every connectivity, label
    # maps, statistics, and label_zarr, all through the labels kept on the device.
    cases = []
    for ndim, shape in ((3, (23, 19, 17)), (2, (45, 38))):
        mask = random_mask(rng, shape, 0.45, 1)
        chunks = tuple(irregular(rng, side, 8) for side in shape)
        cases += [(mask, chunks, c) for c in CONNECTIVITIES[ndim]]
    check_all(client, cases, device="cuda")
    check_label_maps(client, label_map_cases(rng, 3), device="cuda")
    mask = random_mask(rng, (21, 16, 18), 0.5, 2)
    labels, table = vdask.connected_components(da.from_array(mask, chunks=5), connectivity=26,
                                               statistics=True, device="cuda")
    labels, table = client.compute([labels, table], sync=True)
    expected, count = scipy_reference(mask, 26)
    np.testing.assert_array_equal(labels, expected)
    np.testing.assert_array_equal(table["voxel_counts"],
                                  np.bincount(expected.ravel().astype(np.int64),
                                              minlength=count + 1))
    write_zarr(tmp_path / "in.zarr", mask, (7, 8, 6))
    for dtype in (np.uint64, np.uint32):
        out_url = str(tmp_path / f"out-{np.dtype(dtype).name}.zarr")
        assert vdask.label_zarr(str(tmp_path / "in.zarr"), out_url, connectivity=26, chunks=14,
                                client=client, device="cuda", dtype=dtype) == count
        out = zarr.open_array(out_url)
        assert out.dtype == dtype
        np.testing.assert_array_equal(out[...], expected)
    check_all(client, cases[:2], device="cuda", dtype=np.uint32)
