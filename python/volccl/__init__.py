"""volccl: connected-component labeling of 2D images and 3D volumes on NVIDIA GPUs and CPUs.

A drop-in for cc3d (cc3d's names and arguments where the concept is the same):

    labels, n = volccl.connected_components(segmentation, connectivity=26, return_N=True)

labels every connected region of equal non-zero value of an integer (or float) array, as cc3d
does by default; bool arrays, and binary_image=True, label the non-zero voxels as one foreground.

NumPy arrays are labeled in host memory (on the GPU through volccl's host API when one is usable
and device="auto"); CuPy and PyTorch CUDA tensors, and other DLPack producers (JAX), on their own
GPU and current stream, into an output of their own library, without a host copy. Labels are 0
for background and 1..N in raster order of each component's first voxel (the last axis
fastest), byte-identical to scipy.ndimage.label. The documentation is docs/python.md.
"""

import gc
import operator

import numpy as np

from . import _volccl
from ._arrays import HostArrays, aligned_item_length, arrays_for, library_of, require_kind

__version__ = "0.1.0"

__all__ = [
    "__version__",
    "algorithms",
    "connected_components",
    "connected_components_batch",
    "cuda_available",
    "cuda_device_description",
    "dust",
    "largest_k",
    "statistics",
]

_OUT_DTYPES = (np.dtype(np.uint16), np.dtype(np.uint32), np.dtype(np.uint64))
_UINT16, _UINT32, _UINT64 = _OUT_DTYPES
# A 2D array is a one-slice volume, so it also takes the volume connectivities: 6 labels as 4,
# 18 and 26 as 8.
_IMAGE_CONNECTIVITIES = {4: 4, 8: 8, 6: 4, 18: 8, 26: 8}
_VOLUME_CONNECTIVITIES = {6: 6, 18: 18, 26: 26}
_DEVICES = ("auto", "cpu", "cuda")
# The library's index order, x fastest: the column of the moments (x, y, z) of each array axis.
_LIBRARY_COLUMN_OF_AXIS = {2: [1, 0], 3: [2, 1, 0]}
# Where the covariance term (xx, yy, zz, xy, xz, yz) of each pair of library axes is.
_COVARIANCE_TERM = np.array([[0, 3, 4], [3, 1, 5], [4, 5, 2]])
# The covariance terms of each pair of array axes, for 2D and 3D arrays.
_COVARIANCE_OF_AXES = {ndim: _COVARIANCE_TERM[np.ix_(columns, columns)]
                       for ndim, columns in _LIBRARY_COLUMN_OF_AXIS.items()}


def cuda_available():
    """Whether this build has CUDA and the machine a usable CUDA device."""
    return _volccl.cuda_available()


def cuda_device_description():
    """The CUDA device's name and compute capability, or why none is usable."""
    return _volccl.cuda_device_description()


def algorithms():
    """The names the `algorithm` argument takes besides "auto"."""
    return list(_volccl.algorithms())


def _connectivity(ndim, connectivity):
    allowed = _IMAGE_CONNECTIVITIES if ndim == 2 else _VOLUME_CONNECTIVITIES
    if isinstance(connectivity, bool) or connectivity not in allowed:
        raise ValueError(f"connectivity {connectivity!r} does not exist for a {ndim}D array; use "
                         + ("4 or 8 (or 6, 18, 26, read as 4, 8, 8)" if ndim == 2 else
                            "6, 18 or 26"))
    return allowed[connectivity]


def _out_dtype(out_dtype):
    """One of _OUT_DTYPES itself, so that it compares by identity."""
    if out_dtype is None:
        return _UINT32
    try:
        dtype = np.dtype(out_dtype)
    except TypeError:
        dtype = None
    if dtype not in _OUT_DTYPES:
        raise ValueError(f"out_dtype must be np.uint16, np.uint32 or np.uint64, not {out_dtype!r}")
    return _OUT_DTYPES[_OUT_DTYPES.index(dtype)]


def _check_device(device):
    if device not in _DEVICES:
        raise ValueError(f"device must be 'auto', 'cpu' or 'cuda', not {device!r}")


def _check_threads(threads):
    threads = operator.index(threads)
    if threads < 0:
        raise ValueError(f"threads must be 0 (all cores) or more, not {threads}")
    return threads


def _check_shape(array, ndims, what):
    if array.ndim not in ndims:
        raise ValueError(f"{what}, not an array of shape {tuple(array.shape)}")
    if 0 in tuple(array.shape):
        raise ValueError(f"volccl cannot label an empty array of shape {tuple(array.shape)}; "
                         "every dimension must be at least 1")


def _as_out_dtype(arrays, labels, out_dtype, largest_label):
    if out_dtype is _UINT16 and largest_label > np.iinfo(np.uint16).max:
        raise ValueError(f"{largest_label} components do not fit out_dtype=np.uint16; use "
                         "np.uint32")
    return labels if labels.dtype == out_dtype else arrays.astype(labels, out_dtype)


def _label(array, arrays, connectivity, device, algorithm, threads, measure, binary_image=True,
           label_dtype=np.uint32):
    """Labels `array` (its adapter `arrays`, inside its device scope): (labels, result).

    binary_image: True labels the non-zero voxels; None labels a label map (every connected
    region of equal non-zero value) unless `array` holds bools; False always a label map.
    label_dtype: np.uint32, or np.uint64 for host arrays (more than 2^32 - 1 components).
    """
    _check_device(device)
    threads = _check_threads(threads)
    _check_shape(array, (2, 3),
                 "volccl labels 2D images and 3D volumes (a batch goes to "
                 "connected_components_batch)")
    connectivity = _connectivity(array.ndim, connectivity)
    label_map = binary_image is False or (binary_image is None and arrays.kind(array) != "b")
    labels = arrays.empty(tuple(array.shape), label_dtype)
    if label_map:
        values = arrays.label_map(array)
        result = _volccl.label_map_into(values, labels, 0, connectivity, algorithm, device,
                                        threads, arrays.stream(), measure)
    else:
        mask = arrays.mask(array)
        result = _volccl.label_into(mask, labels, connectivity, algorithm, device, threads,
                                    arrays.stream(), measure)
    return labels, result


def connected_components(arr, connectivity=26, out_dtype=None, return_N=False, binary_image=None,
                         device="auto", algorithm="auto", statistics=False, threads=0,
                         no_slice_conversion=False):
    """Labels the connected components of the non-zero voxels of a 2D or 3D array.

    arr: NumPy (any order; bool, integer or floating point, NaN counts as foreground), or a CuPy,
      PyTorch or other DLPack array on a CUDA device, labeled there on its current stream.
    connectivity: 4 or 8 for 2D arrays (6, 18 and 26 read as 4, 8 and 8); 6, 18 or 26 for 3D.
    out_dtype: None (uint32), np.uint16, np.uint32 or np.uint64.
    return_N: also return N, the number of components.
    binary_image: None (cc3d's default): bool arrays are masks, other arrays label maps, whose
      every connected region of equal non-zero value is a component (floats compare by value,
      -0.0 as 0.0; NaN is refused); True: every non-zero voxel is foreground (neighbours of
      different values join); False: a label map.
    device: "auto", "cpu" or "cuda" for NumPy input; GPU arrays are labeled on their GPU.
    algorithm: "auto" or one of algorithms().
    statistics: also return statistics(labels) as computed while labeling.
    threads: CPU worker threads, 0 for all.
    no_slice_conversion: with statistics, the bounding boxes as one array rather than a tuple of
      slices per label (statistics' argument of that name).

    Returns labels (C order, the input's shape, the input's library and device), then N with
    return_N, then the statistics with statistics=True.
    """
    out_dtype = _out_dtype(out_dtype)
    array, arrays = arrays_for(arr)
    # 64-bit labels in host memory are written as such, so that more than 2^32 - 1 components
    # are numbered.
    wide = out_dtype is _UINT64 and isinstance(arrays, HostArrays) and not statistics
    with arrays.device_scope():
        labels, result = _label(array, arrays, connectivity, device, algorithm, threads,
                                measure=statistics, binary_image=binary_image,
                                label_dtype=np.uint64 if wide else np.uint32)
        count = result["count"]
        returned = [arrays.restore(_as_out_dtype(arrays, labels, out_dtype, count))]
        if return_N:
            returned.append(count)
        if statistics:
            returned.append(_statistics(arrays, labels, result["moments"], None, None,
                                        no_slice_conversion))
    return returned[0] if len(returned) == 1 else tuple(returned)


def connected_components_batch(arr, connectivity=26, out_dtype=None, device="auto",
                               algorithm="auto", threads=0):
    """Labels every item of a batch separately, in one call: arr of shape (N, Y, X) (images) or
    (N, Z, Y, X) (volumes), the batch axis first. Returns (labels, counts), counts a NumPy
    uint64 array of N. The other arguments are connected_components'.

    On a GPU every item must start 16-byte aligned; a batch whose items do not is labeled
    through a padded copy (background appended to each item's first axis, which changes
    neither its labels nor its count).
    """
    _check_device(device)
    threads = _check_threads(threads)
    out_dtype = _out_dtype(out_dtype)
    array, arrays = arrays_for(arr)
    _check_shape(array, (3, 4),
                 "a batch is an array of 2D images (N, Y, X) or of volumes (N, Z, Y, X)")
    connectivity = _connectivity(array.ndim - 1, connectivity)
    shape = tuple(array.shape)
    with arrays.device_scope():
        masks = arrays.mask(array)
        length = shape[1]
        padded_length = length
        if arrays.on_gpu:
            padded_length = aligned_item_length(length, int(np.prod(shape[2:])))
        if padded_length != length:
            padded = arrays.zeros((shape[0], padded_length) + shape[2:], np.uint8)
            padded[:, :length] = masks
            masks = padded
        labels = arrays.empty(tuple(masks.shape), np.uint32)
        counts = _volccl.label_batch_into(masks, labels, connectivity, algorithm, device, threads,
                                          arrays.stream())
        if padded_length != length:
            labels = arrays.contiguous(labels[:, :length])
        counts = counts.astype(np.uint64)
        labels = _as_out_dtype(arrays, labels, out_dtype, int(counts.max()))
    return arrays.restore(labels), counts


def _grid_moments(extent):
    """The ComponentMoments sums of every voxel of an extent (x, y, z), as Python integers."""
    def linear(n):
        return n * (n - 1) // 2

    def square(n):
        return (n - 1) * n * (2 * n - 1) // 6

    x, y, z = extent
    count = x * y * z
    sums = [linear(x) * y * z, linear(y) * x * z, linear(z) * x * y]
    products = [square(x) * y * z, square(y) * x * z, square(z) * x * y,
                linear(x) * linear(y) * z, linear(x) * linear(z) * y, linear(y) * linear(z) * x]
    return count, sums, products


def _with_background(moments, shape):
    """The moments table with the background's row first, as cc3d's statistics have it; the
    row's bounding box is left empty for the caller, who has the labels.

    The background's sums are the whole grid's less the components': exact, since unsigned
    64-bit arithmetic wraps and the true difference fits.
    """
    ndim = len(shape)
    table = np.zeros(len(moments) + 1, dtype=moments.dtype)
    table[1:] = moments
    columns = _LIBRARY_COLUMN_OF_AXIS[ndim]
    extent = [1, 1, 1]
    for axis, column in enumerate(columns):
        extent[column] = shape[axis]
    count, sums, products = _grid_moments(extent)
    wrap = 1 << 64
    table["count"][0] = count - int(moments["count"].sum(dtype=np.uint64))
    for column, total in enumerate(sums):
        components = int(moments["sum"][:, column].sum(dtype=np.uint64))
        table["sum"][0, column] = (total - components) % wrap
    for term, total in enumerate(products):
        components = int(moments["sum_products"][:, term].sum(dtype=np.uint64))
        table["sum_products"][0, term] = (total - components) % wrap
    table["min"][0] = np.iinfo(np.uint32).max
    table["max"][0] = 0
    return table


def _slices(counts, minima, maxima):
    """cc3d's bounding boxes: per row a tuple of slice(min, max + 1), None for an empty label.

    Millions of small objects: built from Python lists by map(slice, ...), with the garbage
    collector paused, whose passes over the growing list would otherwise take most of the time.
    """
    lows = minima.astype(np.int64).tolist()
    ends = (maxima.astype(np.int64) + 1).tolist()
    collecting = gc.isenabled()
    gc.disable()
    try:
        return [tuple(map(slice, low, end)) if present else None
                for present, low, end in zip((counts != 0).tolist(), lows, ends)]
    finally:
        if collecting:
            gc.enable()


def _per_axis(values, ndim, default, name):
    if values is None:
        return [default] * ndim
    values = [float(value) for value in values]
    if len(values) != ndim:
        raise ValueError(f"{name} needs one value per axis ({ndim}), not {len(values)}")
    return values


def _statistics(arrays, labels, moments, spacing, origin, no_slice_conversion):
    """cc3d's statistics and volccl's shape statistics from the uint32 labels and their moments
    (row i for label i + 1); row 0 of every result is the background."""
    shape = tuple(labels.shape)
    ndim = len(shape)
    spacing = _per_axis(spacing, ndim, 1.0, "spacing")
    origin = _per_axis(origin, ndim, 0.0, "origin")
    if not all(value > 0 for value in spacing):
        raise ValueError(f"spacing must be positive, not {spacing}")
    table = _with_background(moments, shape)
    columns = _LIBRARY_COLUMN_OF_AXIS[ndim]
    background_box = arrays.background_extent(labels, int(table["count"][0]))
    if background_box is not None:
        table["min"][0, 2] = table["max"][0, 2] = 0  # a 2D image's z
        for axis, column in enumerate(columns):
            table["min"][0, column], table["max"][0, column] = background_box[axis]

    library_spacing, library_origin = [1.0, 1.0, 1.0], [0.0, 0.0, 0.0]
    for axis, column in enumerate(columns):
        library_spacing[column], library_origin[column] = spacing[axis], origin[axis]
    derived = _volccl.describe(table.view(np.uint8), library_spacing, library_origin, ndim)

    counts = table["count"]
    minima, maxima = table["min"][:, columns], table["max"][:, columns]
    if no_slice_conversion:
        box_dtype = np.uint16 if max(shape) <= np.iinfo(np.uint16).max else np.uint32
        bounding_boxes = np.empty((len(table), 2 * ndim), box_dtype)
        bounding_boxes[:, 0::2] = minima.astype(box_dtype)  # no voxel: the dtype's maximum
        bounding_boxes[:, 1::2] = maxima
    else:
        bounding_boxes = _slices(counts, minima, maxima)
    covariance = derived["covariance"][:, _COVARIANCE_OF_AXES[ndim]]
    principal_axes = derived["principal_axes"].reshape(-1, 3, 3)[:, :ndim][:, :, columns]
    # Reversing the axis order is one transposition, which makes the axes' determinant -1.
    principal_axes[:, -1] *= -1
    return {
        "voxel_counts": counts.astype(np.uint32),
        "bounding_boxes": bounding_boxes,
        "centroids": derived["centroid"][:, columns],
        "covariance": covariance,
        "principal_moments": derived["principal_moments"][:, :ndim],
        "principal_axes": principal_axes,
        "physical_size": derived["physical_size"],
    }


def statistics(labels, spacing=None, origin=None, device=None, no_slice_conversion=False):
    """Per label of a 2D or 3D label image (0 background, labels need not be consecutive): a
    dict of arrays of N + 1 rows, N the largest label, row 0 the background's, as
    cc3d.statistics returns them:

    voxel_counts (uint32), bounding_boxes (a tuple of slices per label, None where a label has
    no voxel; with no_slice_conversion an (N + 1, 2 * ndim) array of inclusive min, max per
    axis), centroids (N + 1, ndim) in the array's axis order, NaN where a label has no voxel;
    and covariance (N + 1, ndim, ndim), principal_moments (N + 1, ndim, ascending),
    principal_axes (N + 1, ndim, ndim, the eigenvectors as rows, a proper rotation) and
    physical_size (N + 1).

    spacing and origin (one value per axis, in the array's axis order) put the centroids,
    covariance, principal moments and physical sizes in physical units; without them they are
    in voxels and equal cc3d's. Exact integer sums underlie all of them.
    labels: NumPy (bool or integer, values from 0 to the voxel count), or a GPU array measured on
      its GPU. device: None or "auto" (where the labels are), "cpu" (GPU labels are copied to
      the host) or "cuda" (the labels must be on a GPU).
    """
    if device is not None:
        _check_device(device)
    array, arrays = arrays_for(labels)
    _check_shape(array, (2, 3), "statistics measures 2D and 3D label images")
    if device == "cpu" and arrays.on_gpu:
        array, arrays = arrays_for(arrays.to_numpy(array))
    elif device == "cuda" and not arrays.on_gpu:
        raise ValueError("device='cuda' measures labels on a GPU; these are in host memory")
    require_kind(arrays, array, "biu", "labels must be bool or integer")
    with arrays.device_scope():
        if arrays.kind(array) == "i" and arrays.minimum(array) < 0:
            raise ValueError("labels must be 0 or more")
        largest = arrays.maximum(array)
        voxels = int(np.prod(array.shape))
        if largest > voxels:
            raise ValueError(f"the largest label, {largest}, is above the voxel count {voxels}")
        label_image = arrays.labels_of(array)
        moments = _volccl.measure_into(label_image, largest, "auto", 0, arrays.stream())
        return _statistics(arrays, label_image, moments, spacing, origin, no_slice_conversion)


def dust(img, threshold, connectivity=26, in_place=False, *, device="auto"):
    """Removes the components of fewer than `threshold` voxels: their voxels become 0 in the
    image, which is returned (a copy unless in_place). Foreground is non-zero, as in
    connected_components."""
    if isinstance(threshold, (tuple, list)):
        raise NotImplementedError("a range of sizes is not in volccl yet; pass one threshold")
    if in_place and library_of(img) not in ("numpy", "cupy", "torch"):
        raise ValueError(f"in_place needs a NumPy, CuPy or PyTorch array, not a "
                         f"{type(img).__name__}")
    array, arrays = arrays_for(img)
    with arrays.device_scope():
        labels, result = _label(array, arrays, connectivity, device, "auto", 0, measure=True)
        small = np.zeros(result["count"] + 1, bool)
        small[1:] = result["moments"]["count"] < threshold
        image = array if in_place else arrays.copy(array)
        if small.any():
            arrays.zero_out(image, arrays.take(small, labels))
    return img if in_place else arrays.restore(image)


def largest_k(img, k, connectivity=26, delta=0, return_N=False, *, device="auto"):
    """The k largest components: labels 1..k numbered by ascending size (ties in raster order),
    as cc3d numbers them; a bool mask when k is 1; the plain labels when there are k components
    or fewer. With return_N, (labels, number of components kept)."""
    if delta != 0:
        raise NotImplementedError("delta (neighbours whose values differ by at most delta join) "
                                  "is not in volccl yet; pass delta=0")
    k = operator.index(k)
    if k < 0:
        raise ValueError(f"k must be 0 or more, not {k}")
    array, arrays = arrays_for(img)
    with arrays.device_scope():
        labels, result = _label(array, arrays, connectivity, device, "auto", 0, measure=True)
        count = result["count"]
        if k == 0:
            kept, count = arrays.zeros(tuple(array.shape), np.uint32), 0
        elif count <= k:
            kept = labels
        else:
            sizes = result["moments"]["count"].astype(np.int64)
            largest = np.lexsort((np.arange(count), -sizes))[:k]  # rows: label - 1
            if k == 1:
                table = np.zeros(count + 1, bool)
                table[largest[0] + 1] = True
            else:
                ascending = largest[np.lexsort((largest, sizes[largest]))]
                table = np.zeros(count + 1, np.uint32)
                table[ascending + 1] = np.arange(1, k + 1, dtype=np.uint32)
            kept, count = arrays.take(table, labels), k
    kept = arrays.restore(kept)
    return (kept, count) if return_N else kept
