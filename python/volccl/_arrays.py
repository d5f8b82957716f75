"""The array libraries volccl works in: NumPy in host memory, CuPy and PyTorch on CUDA devices.

Each has an adapter for the few operations the package needs done in the array's own library
and on the array's own device (the mask, an allocation, a table lookup, a reduction), so that a
GPU array never takes a round trip through the host. Other DLPack producers on a CUDA device
(JAX) are adopted without a copy by CuPy or PyTorch, whichever is installed, and their results
handed back through their own library's from_dlpack.
"""

import contextlib
import functools
import math
import sys

import numpy as np

# DLPack's device types (dlpack.h, DLDeviceType).
DLPACK_CPU = 1
DLPACK_CUDA = 2

# volccl::cuda::label and cuda::measure take device pointers aligned to 16 bytes.
DEVICE_ALIGNMENT = 16


def require_kind(arrays, array, kinds, what):
    """TypeError unless the array's dtype is of one of NumPy's `kinds` (b, i, u, f)."""
    if arrays.kind(array) not in kinds:
        raise TypeError(f"{what}, not {array.dtype}")


def require_numeric(arrays, array):
    require_kind(arrays, array, "biuf", "volccl labels bool, integer and floating-point arrays")


def _bits_dtype(itemsize):
    """The unsigned integer dtype of `itemsize` bytes, whose bits stand for a float's value."""
    return {2: np.uint16, 4: np.uint32, 8: np.uint64}[itemsize]


NAN_IN_LABEL_MAP = ("volccl: a label map of floating-point values holds NaN, which equals no "
                    "value; replace it, or pass binary_image=True to label the non-zero voxels")


# The device scope of an array on the current device: nothing to switch.
_NO_SCOPE = contextlib.nullcontext()
# The dtypes a mask is passed in as they are (bool, uint8, int8): the library reads bytes.
_BYTE_DTYPES = "?Bb"


class Arrays:
    """What every adapter shares; `restore` turns a result into the caller's array type."""

    on_gpu = False

    def __init__(self, restore=None):
        self._restore = restore

    def restore(self, result):
        return result if self._restore is None else self._restore(result)

    def kind(self, array):
        """NumPy's kind letter of the dtype: b, i, u, f, c, ..."""
        return np.dtype(array.dtype).kind

    def astype(self, array, dtype):
        return array.astype(dtype)

    def zero_out(self, image, where):
        image[where] = 0

    def minimum(self, array):
        return int(array.min())

    def maximum(self, array):
        return int(array.max())

    def nonzero_extent(self, mask):
        """Per axis, the first and last index where `mask` holds a True; None if nowhere."""
        extent = []
        for axis in range(mask.ndim):
            others = tuple(other for other in range(mask.ndim) if other != axis)
            present = np.flatnonzero(self.to_numpy(self.any_along(mask, others)))
            if present.size == 0:
                return None
            extent.append((int(present[0]), int(present[-1])))
        return extent

    def background_extent(self, labels, background_voxels):
        """Per axis, the first and last index of a plane where `labels` holds a 0; None when
        `background_voxels`, the number of 0s, is 0.

        The background nearly always reaches every border: the border planes are checked
        together (one transfer from a GPU), and the whole image is scanned only when one of them
        holds no 0.
        """
        if background_voxels == 0:
            return None
        shape = tuple(labels.shape)
        borders = [(axis, index) for axis in range(len(shape)) for index in (0, shape[axis] - 1)]
        holding_zero = [(labels[(slice(None),) * axis + (index,)] == 0).any()
                        for axis, index in borders]
        if all(self.to_numpy(self.stack(holding_zero)).tolist()):
            return [(0, side - 1) for side in shape]
        return self.nonzero_extent(labels == 0)


class HostArrays(Arrays):
    """NumPy arrays, and what np.asarray takes (lists, PyTorch CPU tensors, JAX CPU arrays)."""

    def device_scope(self):
        return contextlib.nullcontext()

    def stream(self):
        return 0

    def mask(self, array):
        """The foreground (non-zero, NaN included) as C-contiguous bytes of any 8-bit dtype."""
        require_numeric(self, array)
        if array.dtype.char in _BYTE_DTYPES:
            return np.ascontiguousarray(array)
        return np.not_equal(array, 0, order="C")

    def label_map(self, array):
        """The values as C-contiguous integers: floats as the bits of their value, -0.0 as 0.0."""
        require_kind(self, array, "iuf", "a label map holds integer or floating-point values")
        if self.kind(array) != "f":
            return np.ascontiguousarray(array)
        if np.isnan(array).any():
            raise ValueError(NAN_IN_LABEL_MAP)
        canonical = np.add(array, 0.0, dtype=array.dtype, order="C")
        return canonical.view(_bits_dtype(canonical.dtype.itemsize))

    def labels_of(self, array):
        return np.ascontiguousarray(array, dtype=np.uint32)

    def empty(self, shape, dtype):
        return np.empty(shape, dtype)

    def zeros(self, shape, dtype):
        return np.zeros(shape, dtype)

    def contiguous(self, array):
        return np.ascontiguousarray(array)

    def copy(self, array):
        return np.copy(array)

    def to_numpy(self, array):
        return array

    def take(self, table, labels):
        """table[labels], `table` a NumPy array."""
        return table[labels]

    def any_along(self, mask, axes):
        return mask.any(axis=axes)

    def stack(self, scalars):
        return np.stack(scalars)


class CupyArrays(Arrays):
    """CuPy arrays, on their device and CuPy's current stream there."""

    on_gpu = True

    def __init__(self, device_id, restore=None):
        super().__init__(restore)
        self._cupy = sys.modules["cupy"]  # imported: the caller holds one of its arrays
        self._device_id = device_id

    def device_scope(self):
        # Entering a cupy.cuda.Device switches to it and back, work for nothing when it is current.
        if self._cupy.cuda.runtime.getDevice() == self._device_id:
            return _NO_SCOPE
        return self._cupy.cuda.Device(self._device_id)

    def stream(self):
        return self._cupy.cuda.get_current_stream().ptr

    def aligned(self, array):
        return array if array.data.ptr % DEVICE_ALIGNMENT == 0 else array.copy()

    def mask(self, array):
        require_numeric(self, array)
        if array.dtype.char in _BYTE_DTYPES:
            return self.aligned(self._cupy.ascontiguousarray(array))
        return self.aligned(array != 0)

    def label_map(self, array):
        require_kind(self, array, "iuf", "a label map holds integer or floating-point values")
        cupy = self._cupy
        if self.kind(array) != "f":
            return self.aligned(cupy.ascontiguousarray(array))
        if bool(cupy.isnan(array).any()):
            raise ValueError(NAN_IN_LABEL_MAP)
        canonical = cupy.ascontiguousarray(array + array.dtype.type(0))
        return self.aligned(canonical.view(_bits_dtype(canonical.dtype.itemsize)))

    def labels_of(self, array):
        return self.aligned(self._cupy.ascontiguousarray(array, dtype=self._cupy.uint32))

    def empty(self, shape, dtype):
        return self._cupy.ndarray(shape, dtype)

    def zeros(self, shape, dtype):
        return self._cupy.zeros(shape, dtype)

    def contiguous(self, array):
        return self._cupy.ascontiguousarray(array)

    def copy(self, array):
        return array.copy()

    def to_numpy(self, array):
        return self._cupy.asnumpy(array)

    def take(self, table, labels):
        return self._cupy.asarray(table)[labels]

    def any_along(self, mask, axes):
        return mask.any(axis=axes)

    def stack(self, scalars):
        return self._cupy.stack(scalars)


class TorchArrays(Arrays):
    """PyTorch CUDA tensors, on their device and PyTorch's current stream there.

    PyTorch has few operations for its unsigned types wider than a byte (no max, no indexing by
    them, no masked assignment into them), so such tensors are reinterpreted as the signed type
    of their width wherever only zero against non-zero matters.
    """

    on_gpu = True

    def __init__(self, tensor, restore=None):
        super().__init__(restore)
        import torch

        self._torch = torch
        self._device = tensor.device
        self._dtypes = {
            np.dtype(np.bool_): torch.bool,
            np.dtype(np.uint8): torch.uint8,
            np.dtype(np.uint16): torch.uint16,
            np.dtype(np.uint32): torch.uint32,
            np.dtype(np.uint64): torch.uint64,
        }
        self._same_width_signed = {
            torch.uint16: torch.int16,
            torch.uint32: torch.int32,
            torch.uint64: torch.int64,
        }
        self._unsigned_dtypes = {torch.uint8, *self._same_width_signed}

    def device_scope(self):
        return self._torch.cuda.device(self._device)

    def stream(self):
        return self._torch.cuda.current_stream(self._device).cuda_stream

    def _signed_view(self, tensor):
        signed = self._same_width_signed.get(tensor.dtype)
        return tensor if signed is None else tensor.view(signed)

    def _comparable(self, tensor):
        return tensor.to(self._torch.int64) if tensor.dtype in self._same_width_signed else tensor

    def aligned(self, tensor):
        return tensor if tensor.data_ptr() % DEVICE_ALIGNMENT == 0 else tensor.clone()

    def kind(self, tensor):
        if tensor.dtype == self._torch.bool:
            return "b"
        if tensor.dtype.is_floating_point:
            return "f"
        if tensor.dtype.is_complex:
            return "c"
        return "u" if tensor.dtype in self._unsigned_dtypes else "i"

    def mask(self, tensor):
        require_numeric(self, tensor)
        torch = self._torch
        if tensor.dtype in (torch.bool, torch.uint8, torch.int8):
            return self.aligned(tensor.contiguous())
        return self.aligned((self._signed_view(tensor) != 0).contiguous())

    def label_map(self, tensor):
        require_kind(self, tensor, "iuf", "a label map holds integer or floating-point values")
        torch = self._torch
        if not tensor.dtype.is_floating_point:
            return self.aligned(tensor.contiguous())
        if bool(torch.isnan(tensor).any()):
            raise ValueError(NAN_IN_LABEL_MAP)
        canonical = (tensor + 0.0).contiguous()
        bits = {2: torch.int16, 4: torch.int32, 8: torch.int64}[canonical.element_size()]
        return self.aligned(canonical.view(bits))

    def labels_of(self, tensor):
        return self.aligned(tensor.to(self._torch.uint32).contiguous())

    def empty(self, shape, dtype):
        return self._torch.empty(shape, dtype=self._dtypes[np.dtype(dtype)], device=self._device)

    def zeros(self, shape, dtype):
        return self._torch.zeros(shape, dtype=self._dtypes[np.dtype(dtype)], device=self._device)

    def astype(self, tensor, dtype):
        return tensor.to(self._dtypes[np.dtype(dtype)])

    def contiguous(self, tensor):
        return tensor.contiguous()

    def copy(self, tensor):
        return tensor.clone()

    def to_numpy(self, tensor):
        return tensor.cpu().numpy()

    def take(self, table, labels):
        signed = {np.dtype(np.uint16): np.int16, np.dtype(np.uint32): np.int32}.get(table.dtype)
        source = table if signed is None else table.view(signed)
        result = self._torch.as_tensor(source, device=self._device)[labels.to(self._torch.int64)]
        return result if signed is None else result.view(self._dtypes[table.dtype])

    def zero_out(self, image, where):
        self._signed_view(image)[where] = 0

    def minimum(self, tensor):
        return int(self._comparable(tensor).min())

    def maximum(self, tensor):
        return int(self._comparable(tensor).max())

    def any_along(self, mask, axes):
        return mask.any(dim=axes)

    def stack(self, scalars):
        return self._torch.stack(scalars)


def library_of(array):
    """The top-level module of an array's type: "numpy", "cupy", "torch", "jaxlib", ..."""
    return type(array).__module__.split(".")[0]


def _dlpack_device(array):
    probe = getattr(array, "__dlpack_device__", None)
    if probe is None:
        return None
    device_type, device_id = probe()
    return int(device_type), int(device_id)


def _adopted_on_gpu(array):
    """A CuPy or PyTorch view of another producer's CUDA array, and its adapter."""
    restore = None
    if library_of(array) in ("jax", "jaxlib"):
        import jax.numpy

        restore = jax.numpy.from_dlpack
    try:
        import cupy
    except ImportError:
        cupy = None
    if cupy is not None:
        adopted = cupy.from_dlpack(array)
        return adopted, CupyArrays(adopted.data.device_id, restore)
    try:
        import torch
    except ImportError:
        raise TypeError(f"volccl works on a {type(array).__name__} on a CUDA device through "
                        "CuPy or PyTorch; install one of them") from None
    adopted = torch.from_dlpack(array)
    return adopted, TorchArrays(adopted, restore)


@functools.cache
def _cupy_arrays(device_id):
    """The adapter of CuPy arrays on one device, made once."""
    return CupyArrays(device_id)


def arrays_for(array):
    """(array, adapter): the array in a library volccl works in, and that library's adapter.

    Host arrays that are not NumPy's become NumPy arrays (without a copy where np.asarray can);
    PyTorch CPU tensors and JAX CPU arrays get their results back as their own type.
    """
    if isinstance(array, np.ndarray):
        return array, HostArrays()
    library = library_of(array)
    if library == "cupy":  # always on a CUDA device
        return array, _cupy_arrays(array.data.device_id)
    device = _dlpack_device(array)
    if device is not None and device[0] == DLPACK_CUDA:
        if library == "torch":
            return array, TorchArrays(array)
        return _adopted_on_gpu(array)
    if device is not None and device[0] != DLPACK_CPU:
        raise ValueError(f"volccl works on arrays in host memory or on a CUDA device; this "
                         f"{type(array).__name__} is on DLPack device type {device[0]}")
    if library == "torch":
        import torch

        return array.detach().numpy(), HostArrays(torch.from_numpy)
    if library in ("jax", "jaxlib"):
        import jax.numpy

        return np.asarray(array), HostArrays(jax.numpy.asarray)
    return np.asarray(array), HostArrays()


def aligned_item_length(length, item_rest):
    """The smallest length >= `length` of a batch item's first axis, `item_rest` voxels a step
    along it, at which every item of the batch starts 16-byte aligned as a uint8 mask (and so as
    uint32 labels)."""
    step = DEVICE_ALIGNMENT // math.gcd(item_rest, DEVICE_ALIGNMENT)
    return -(-length // step) * step
