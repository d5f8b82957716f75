"""Label maps (cc3d's default multi-label labeling) against cc3d and scikit-image, byte for byte:
every connected region of equal non-zero value is a component."""

import cc3d
import numpy as np
import pytest
from conftest import CONNECTIVITIES, random_mask
from skimage import measure

import volccl

INTEGER_DTYPES = [np.uint8, np.uint16, np.uint32, np.uint64, np.int8, np.int16, np.int32,
                  np.int64]
ALL_CONNECTIVITIES = [(ndim, c) for ndim, cs in CONNECTIVITIES.items() for c in cs]
# skimage.measure.label's connectivity: the number of orthogonal steps to a neighbour.
SKIMAGE_CONNECTIVITY = {4: 1, 8: 2, 6: 1, 18: 2, 26: 3}


def random_label_map(rng, shape, value_count, granularity, dtype, background_share=0.2):
    """Cubes of `granularity` voxels a side, each 0 with probability `background_share`, else
    one of `value_count` distinct non-zero values of `dtype` (its extremes and -1 among them)."""
    info = np.iinfo(dtype)
    extremes = [int(info.max), int(info.min), -1 if info.min < 0 else 1, 1, 2]
    pool = [v for v in dict.fromkeys(extremes) if v != 0]
    wanted = min(value_count, int(info.max) - int(info.min))  # the non-zero values of dtype
    if wanted == int(info.max) - int(info.min):
        pool = [v for v in range(int(info.min), int(info.max) + 1) if v != 0]
    taken = set(pool)
    while len(pool) < wanted:
        candidate = int(rng.integers(info.min, info.max, endpoint=True, dtype=dtype))
        if candidate != 0 and candidate not in taken:
            taken.add(candidate)
            pool.append(candidate)
    values = np.array(pool[:value_count], dtype=dtype)
    coarse = tuple(-(-side // granularity) for side in shape)
    cells = values[rng.integers(0, len(values), size=coarse)]
    cells[rng.random(coarse) < background_share] = 0
    for axis in range(len(shape)):
        cells = np.repeat(cells, granularity, axis=axis)
    return np.ascontiguousarray(cells[tuple(slice(0, side) for side in shape)])


def expect_cc3d_and_skimage(array, connectivity, device="cpu"):
    labels, count = volccl.connected_components(array, connectivity=connectivity, return_N=True,
                                                device=device)
    assert labels.dtype == np.uint32 and labels.shape == array.shape
    c_order = np.ascontiguousarray(array)
    theirs = measure.label(c_order, background=0, connectivity=SKIMAGE_CONNECTIVITY[connectivity])
    np.testing.assert_array_equal(labels, theirs)
    assert count == theirs.max()
    # cc3d's 2D labeler at 8 misnumbers some components (cc3d 4.1.1); its one-slice-volume path
    # at 26 labels the same image correctly.
    cc3d_connectivity = 26 if array.ndim == 2 and connectivity == 8 else connectivity
    try:
        reference = cc3d.connected_components(c_order, connectivity=cc3d_connectivity)
    except RuntimeError as error:
        assert "maximum length" in str(error)  # cc3d 4.1.1 refuses some lines
        return labels
    np.testing.assert_array_equal(labels, reference)
    return labels


@pytest.mark.parametrize("dtype", INTEGER_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("ndim,connectivity", ALL_CONNECTIVITIES)
def test_every_integer_type_and_connectivity(rng, dtype, ndim, connectivity):
    shape = (11, 14, 13) if ndim == 3 else (41, 37)
    for value_count, granularity in ((2, 1), (16, 2), (300, 1), (65536, 1)):
        array = random_label_map(rng, shape, value_count, granularity, dtype)
        expect_cc3d_and_skimage(array, connectivity)


@pytest.mark.parametrize("granularity", [1, 2, 4, 8])
@pytest.mark.parametrize("ndim,connectivity", ALL_CONNECTIVITIES)
def test_many_values_side_by_side(rng, granularity, ndim, connectivity):
    shape = (23, 31, 29) if ndim == 3 else (131, 97)
    array = random_label_map(rng, shape, 16, granularity, np.uint16, background_share=0.0)
    expect_cc3d_and_skimage(array, connectivity)


@pytest.mark.parametrize("ndim,connectivity", ALL_CONNECTIVITIES)
def test_two_value_checkerboard(ndim, connectivity):
    shape = (7, 8, 9) if ndim == 3 else (15, 16)
    parity = np.indices(shape).sum(axis=0) % 2
    labels = expect_cc3d_and_skimage(np.where(parity == 0, 3, 7).astype(np.int32), connectivity)
    if connectivity in (4, 6):
        assert labels.max() == np.prod(shape)


@pytest.mark.parametrize("order", ["C", "F"])
def test_fortran_order_and_views(rng, order):
    array = np.asarray(random_label_map(rng, (12, 17, 19), 5, 2, np.int64), order=order)
    for connectivity in CONNECTIVITIES[3]:
        expect_cc3d_and_skimage(array, connectivity)
        expect_cc3d_and_skimage(array[::2, 1::3, ::-1], connectivity)


def test_float_values_compare_by_value(rng):
    array = random_label_map(rng, (13, 14, 15), 6, 2, np.int16).astype(np.float32) / 4
    signed_zero = np.where(rng.random(array.shape) < 0.5, np.float32(-0.0), np.float32(0.0))
    array = np.where(array == 0, signed_zero, array)
    for connectivity in CONNECTIVITIES[3]:
        labels = volccl.connected_components(array, connectivity=connectivity)
        integers = volccl.connected_components((array * 4).astype(np.int16),
                                               connectivity=connectivity)
        np.testing.assert_array_equal(labels, integers)


def test_bool_arrays_and_binary_image_label_the_mask(rng):
    label_map = random_label_map(rng, (15, 16, 17), 8, 2, np.uint8)
    binary = volccl.connected_components(label_map, binary_image=True)
    np.testing.assert_array_equal(binary, volccl.connected_components(label_map != 0))
    np.testing.assert_array_equal(binary, cc3d.connected_components(label_map, binary_image=True))


def test_statistics_of_a_label_map(rng):
    array = random_label_map(rng, (16, 18, 20), 12, 2, np.uint32)
    labels, stats = volccl.connected_components(array, statistics=True)
    theirs = cc3d.statistics(cc3d.connected_components(array))
    np.testing.assert_array_equal(stats["voxel_counts"], theirs["voxel_counts"])
    np.testing.assert_allclose(stats["centroids"][1:], theirs["centroids"][1:], rtol=0,
                               atol=1e-9)


def _cupy_with_a_device():
    try:
        import cupy
    except ImportError:
        return None
    try:
        return cupy if cupy.cuda.runtime.getDeviceCount() > 0 else None
    except cupy.cuda.runtime.CUDARuntimeError:
        return None


@pytest.mark.skipif(_cupy_with_a_device() is None or not volccl.cuda_available(),
                    reason="no CuPy with a CUDA device, or no CUDA in this volccl build")
@pytest.mark.parametrize("dtype", INTEGER_DTYPES + [np.float32], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("ndim,connectivity", ALL_CONNECTIVITIES)
def test_cupy_label_maps_equal_the_cpu_labels(rng, dtype, ndim, connectivity):
    cupy = _cupy_with_a_device()
    shape = (37, 29, 41) if ndim == 3 else (131, 97)
    integer_dtype = np.int16 if dtype == np.float32 else dtype
    host = random_label_map(rng, shape, 300, int(rng.integers(1, 5)), integer_dtype).astype(dtype)
    labels, count = volccl.connected_components(cupy.asarray(host), connectivity=connectivity,
                                                return_N=True)
    expected, expected_count = volccl.connected_components(host, connectivity=connectivity,
                                                           return_N=True, device="cpu")
    assert isinstance(labels, cupy.ndarray) and count == expected_count
    np.testing.assert_array_equal(cupy.asnumpy(labels), expected)


@pytest.mark.skipif(_cupy_with_a_device() is None or not volccl.cuda_available(),
                    reason="no CuPy with a CUDA device, or no CUDA in this volccl build")
@pytest.mark.parametrize("dtype,value", [(np.uint8, 1), (np.uint8, 255), (np.int32, -7),
                                         (np.uint64, 2**64 - 1)],
                         ids=["uint8-1", "uint8-255", "int32-minus-7", "uint64-max"])
@pytest.mark.parametrize("connectivity", [6, 18, 26])
def test_cupy_masks_given_as_label_maps(rng, dtype, value, connectivity):
    """A volume of one non-zero value on the GPU, as a 0/1 or 0/255 mask comes: labeled through
    the mask's algorithm (docs/design.md), the labels still those of a label map; a second value
    in the last voxel keeps the label map's path, with the same result. The oracle is
    scikit-image: cc3d 4.1.1 raises OverflowError on some uint64 values of 2^63 and above."""
    cupy = _cupy_with_a_device()
    host = np.zeros((37, 29, 41), dtype)
    host[random_mask(rng, host.shape, 0.45)] = value
    for last in (value, 3):
        host[-1, -1, -1] = last
        labels, count = volccl.connected_components(cupy.asarray(host), connectivity=connectivity,
                                                    return_N=True)
        expected = measure.label(host, background=0,
                                 connectivity=SKIMAGE_CONNECTIVITY[connectivity])
        assert count == expected.max()
        np.testing.assert_array_equal(cupy.asnumpy(labels), expected)


@pytest.mark.parametrize("ndim,connectivity", ALL_CONNECTIVITIES)
def test_uint64_labels_are_written_as_such(rng, ndim, connectivity):
    """out_dtype=np.uint64 on the host labels straight into 64-bit labels (volccl::label's
    64-bit overload, which labels in slabs), masks and label maps alike."""
    shape = (9, 23, 17) if ndim == 3 else (37, 29)
    values = random_label_map(rng, shape, 5, 2, np.int64)
    for binary_image in (False, True):
        labels, count = volccl.connected_components(values, connectivity=connectivity,
                                                    out_dtype=np.uint64, return_N=True,
                                                    binary_image=binary_image, device="cpu")
        assert labels.dtype == np.uint64
        theirs = measure.label(values != 0 if binary_image else values, background=0,
                               connectivity=SKIMAGE_CONNECTIVITY[connectivity])
        np.testing.assert_array_equal(labels, theirs)
        assert count == theirs.max()
