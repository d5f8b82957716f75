"""connected_components on the CPU against scipy.ndimage.label and cc3d, byte for byte."""

import cc3d
import numpy as np
import pytest
from conftest import CONNECTIVITIES, random_mask, scipy_labels

import volccl
from volccl import _volccl

DTYPES = [np.bool_, np.uint8, np.uint16, np.uint32, np.uint64, np.int8, np.int16, np.int32,
          np.int64, np.float32, np.float64]
ALL_CONNECTIVITIES = [(ndim, c) for ndim, cs in CONNECTIVITIES.items() for c in cs]


def as_dtype(mask, dtype, rng):
    """`mask` as `dtype`, foreground voxels holding assorted non-zero values (negative ones
    for signed types)."""
    if dtype == np.bool_:
        return mask.copy()
    values = rng.integers(1, 100, size=mask.shape)
    if np.issubdtype(dtype, np.signedinteger) or np.issubdtype(dtype, np.floating):
        values = values * rng.choice([-1, 1], size=mask.shape)
    return np.where(mask, values, 0).astype(dtype)


def expect_scipy_and_cc3d(array, connectivity):
    """The binary labeling (every non-zero voxel foreground); label maps: test_label_maps.py."""
    labels, count = volccl.connected_components(array, connectivity=connectivity, return_N=True,
                                                device="cpu", binary_image=True)
    expected, expected_count = scipy_labels(array, connectivity)
    assert labels.dtype == np.uint32 and labels.flags.c_contiguous
    assert labels.shape == array.shape
    assert count == expected_count
    np.testing.assert_array_equal(labels, expected)
    expect_cc3d(labels, array, connectivity)
    return labels


def expect_cc3d(labels, array, connectivity):
    """cc3d's labels of the same logical array. cc3d numbers a Fortran-ordered array in its
    memory order, so it gets the C-ordered copy; and the mask, since its binary_image=True still
    separates unequal neighbours at 4-connectivity in 2D. Its 2D labeler at 8 numbers some
    components out of raster order and labels some background pixels (cc3d 4.1.1), so 2D
    arrays at 8 go through its one-slice-volume path (26), which has neither fault."""
    mask = np.ascontiguousarray(array != 0)
    if mask.ndim == 2 and connectivity == 8:
        connectivity = 26
    try:
        reference = cc3d.connected_components(mask, connectivity=connectivity, binary_image=True)
    except RuntimeError as error:
        # cc3d 4.1.1 sizes its union-find too small for some lines (one side above 1).
        assert sum(side > 1 for side in mask.shape) == 1 and "maximum length" in str(error)
        return
    np.testing.assert_array_equal(labels, reference)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("ndim,connectivity", ALL_CONNECTIVITIES)
def test_every_dtype_order_and_connectivity(rng, dtype, order, ndim, connectivity):
    shape = (9, 14, 11) if ndim == 3 else (37, 29)
    mask = random_mask(rng, shape, density=rng.uniform(0.2, 0.6))
    array = np.asarray(as_dtype(mask, dtype, rng), order=order)
    expect_scipy_and_cc3d(array, connectivity)


@pytest.mark.parametrize("density", [0.05, 0.3, 0.5, 0.7, 0.95])
@pytest.mark.parametrize("granularity", [1, 2, 4, 7])
@pytest.mark.parametrize("ndim,connectivity", ALL_CONNECTIVITIES)
def test_random_density_and_granularity(rng, density, granularity, ndim, connectivity):
    shape = (23, 31, 29) if ndim == 3 else (131, 97)
    expect_scipy_and_cc3d(random_mask(rng, shape, density, granularity), connectivity)


ODD_SHAPES = [(1, 1, 1), (1, 1, 9), (1, 9, 1), (9, 1, 1), (2, 2, 2), (3, 5, 7), (33, 17, 9),
              (1, 1), (1, 13), (13, 1), (3, 3), (65, 33)]


@pytest.mark.parametrize("shape", ODD_SHAPES, ids=str)
def test_odd_and_single_voxel_extents(rng, shape):
    for connectivity in CONNECTIVITIES[len(shape)]:
        for density in (0.3, 0.6, 1.0):
            expect_scipy_and_cc3d(random_mask(rng, shape, density), connectivity)


@pytest.mark.parametrize("ndim,connectivity", ALL_CONNECTIVITIES)
def test_empty_and_full(ndim, connectivity):
    shape = (5, 6, 7) if ndim == 3 else (6, 7)
    empty, count = volccl.connected_components(np.zeros(shape, np.uint8),
                                               connectivity=connectivity, return_N=True)
    assert count == 0 and not empty.any()
    full, count = volccl.connected_components(np.ones(shape, np.float64),
                                              connectivity=connectivity, return_N=True)
    assert count == 1 and (full == 1).all()


def test_two_dimensional_arrays_take_volume_connectivities(rng):
    mask = random_mask(rng, (41, 53), 0.45)
    for volume, image in ((6, 4), (18, 8), (26, 8)):
        np.testing.assert_array_equal(volccl.connected_components(mask, connectivity=volume),
                                      scipy_labels(mask, image)[0])
    np.testing.assert_array_equal(volccl.connected_components(mask), scipy_labels(mask, 8)[0])


@pytest.mark.parametrize("view", ["step", "negative step", "transposed", "column"])
def test_non_contiguous_views_are_labeled_as_their_logical_array(rng, view):
    base = random_mask(rng, (20, 24, 30), 0.4).astype(np.int16)
    array = {
        "step": base[::2, 1::3, ::2],
        "negative step": base[::-1, :, ::-3],
        "transposed": base.transpose(2, 0, 1),
        "column": base[:, :, 5],
    }[view]
    assert not array.flags.c_contiguous
    for connectivity in CONNECTIVITIES[array.ndim]:
        expect_scipy_and_cc3d(array, connectivity)


def test_fortran_order_numbering_is_the_logical_raster_order():
    # Two voxels: first in C raster order at [0, 0, 2], first in Fortran order at [2, 0, 0].
    mask = np.zeros((4, 5, 6), np.uint8)
    mask[0, 0, 2] = mask[2, 0, 0] = 1
    fortran = np.asfortranarray(mask)
    labels = volccl.connected_components(fortran)
    assert labels.flags.c_contiguous
    assert (labels[0, 0, 2], labels[2, 0, 0]) == (1, 2)
    # cc3d numbers the same array in its memory order, and returns it in Fortran order.
    theirs = cc3d.connected_components(fortran, binary_image=True)
    assert (theirs[0, 0, 2], theirs[2, 0, 0]) == (2, 1)
    np.testing.assert_array_equal(volccl.connected_components(fortran.T).T, theirs)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_nan_and_inf_are_foreground_and_negative_zero_background(rng, dtype):
    mask = random_mask(rng, (17, 19, 23), 0.4)
    array = np.where(mask, rng.choice([np.nan, np.inf, -np.inf, 1e-30, -2.5], size=mask.shape),
                     rng.choice([0.0, -0.0], size=mask.shape)).astype(dtype)
    labels = expect_scipy_and_cc3d(array, 26)
    np.testing.assert_array_equal(labels != 0, mask)


def test_return_n_and_out_dtype(rng):
    mask = random_mask(rng, (16, 18, 20), 0.35)
    expected, expected_count = scipy_labels(mask, 18)
    for out_dtype in (None, np.uint16, np.uint32, np.uint64, "uint16", np.dtype(np.uint64)):
        labels, count = volccl.connected_components(mask, connectivity=18, out_dtype=out_dtype,
                                                    return_N=True)
        assert labels.dtype == (np.uint32 if out_dtype is None else np.dtype(out_dtype))
        assert count == expected_count and isinstance(count, int)
        np.testing.assert_array_equal(labels, expected)
    assert isinstance(volccl.connected_components(mask), np.ndarray)


def test_uint16_output_refuses_more_than_65535_components():
    checkerboard = (np.indices((64, 64, 64)).sum(axis=0) % 2).astype(np.uint8)
    labels, count = volccl.connected_components(checkerboard, connectivity=6, return_N=True)
    assert count == 64**3 // 2
    with pytest.raises(ValueError, match="uint16"):
        volccl.connected_components(checkerboard, connectivity=6, out_dtype=np.uint16)
    assert volccl.connected_components(checkerboard, connectivity=26, out_dtype=np.uint16).max() \
        == 1


@pytest.mark.parametrize("name", volccl.algorithms())
def test_every_algorithm_on_the_cpu(rng, name):
    for connectivity in _volccl.algorithm_connectivities(name):
        ndim = 2 if connectivity in (4, 8) else 3
        shape = (19, 21, 23) if ndim == 3 else (67, 45)
        mask = random_mask(rng, shape, 0.45, granularity=int(rng.integers(1, 4)))
        labels = volccl.connected_components(mask, connectivity=connectivity, algorithm=name,
                                             device="cpu", threads=int(rng.integers(0, 4)))
        np.testing.assert_array_equal(labels, scipy_labels(mask, connectivity)[0])


def test_host_inputs_other_than_numpy(rng):
    mask = random_mask(rng, (9, 11), 0.5)
    labels = volccl.connected_components(mask.astype(int).tolist(), connectivity=4)
    assert isinstance(labels, np.ndarray)
    np.testing.assert_array_equal(labels, scipy_labels(mask, 4)[0])


def test_input_is_left_unchanged(rng):
    array = as_dtype(random_mask(rng, (8, 9, 10), 0.5), np.float32, rng)
    before = array.copy()
    volccl.connected_components(array, statistics=True)
    np.testing.assert_array_equal(array, before)


def test_module_facts():
    assert volccl.__version__ == "0.1.0"
    assert set(volccl.algorithms()) >= {"buf", "bke-ic", "uf", "ha4-64"}
    assert "auto" not in volccl.algorithms()
    assert isinstance(volccl.cuda_available(), bool)
    assert volccl.cuda_device_description()
    assert _volccl.algorithm_connectivities("buf") == [8, 26]
