"""The Meta backend: shapes and dtypes only, no storage.

`MetaArray` stands in for an ndarray; Meta kernels (each op's shape rule) take and
return MetaArrays, so `inspect` builds a graph of terabyte tensors in microseconds.
"""
from __future__ import annotations

import math

import numpy as np

from .._device import Backend
from ..dispatch_keys import DispatchKey

# What a CPU array can be (NumPy's limits), said on Meta, before any data exists.
MAX_DIMS = 64 if int(np.__version__.split(".")[0]) >= 2 else 32
MAX_NUMEL = 2 ** 63 - 1


class MetaArray:
    __slots__ = ("shape", "dtype")

    def __init__(self, shape, dtype):
        self.shape = tuple(int(s) for s in shape)
        self.dtype = np.dtype(dtype)
        if len(self.shape) > MAX_DIMS or math.prod(self.shape) > MAX_NUMEL:
            _refuse(self.shape)

    @classmethod
    def of_checked(cls, shape, dtype) -> "MetaArray":
        """A MetaArray of the shape of an existing MetaArray (a tuple of ints within the limits)."""
        if shape.__class__ is not tuple:
            return cls(shape, dtype)
        array = object.__new__(cls)
        array.shape = shape
        array.dtype = dtype if isinstance(dtype, np.dtype) else np.dtype(dtype)
        return array

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def astype(self, dtype, copy=True):
        return MetaArray(self.shape, dtype)

    def __repr__(self):
        return f"MetaArray(shape={self.shape}, dtype={self.dtype})"


class StridedMetaArray(MetaArray):
    """A MetaArray that keeps strides (in elements) and an offset of its own: the array of a wrapper
    subclass's instance (Tensor._make_wrapper_subclass), which claims the layout of the tensors it wraps
    and holds no data, as PyTorch's wrapper has sizes and strides and no storage."""
    __slots__ = ("element_strides", "offset")

    def __init__(self, shape, dtype, strides=None, offset=None):
        super().__init__(shape, dtype)
        if strides is None:
            strides, step = [], 1
            for n in reversed(self.shape):
                strides.insert(0, step)
                step *= max(n, 1)
        elif len(strides) != len(self.shape):
            raise RuntimeError(f"_make_wrapper_subclass: sizes {list(self.shape)} and strides {list(strides)} "
                               "have different lengths")
        self.element_strides = tuple(int(s) for s in strides)
        self.offset = int(offset or 0)

    def astype(self, dtype, copy=True):
        return StridedMetaArray(self.shape, dtype, self.element_strides, self.offset)


def _refuse(shape):
    from ..errors import ShapeError

    if len(shape) > MAX_DIMS:
        raise ShapeError(f"a tensor has at most {MAX_DIMS} dimensions, got {len(shape)}")
    # PyTorch's TensorImpl::safe_compute_numel
    raise ShapeError(f"numel: integer multiplication overflow (sizes={list(shape)})")


class MetaBackend(Backend):
    type = "meta"
    key = int(DispatchKey.Meta)
    xp = None             # Meta kernels are shape rules; they call no array module

    def asarray(self, data, np_dtype, dev):
        if isinstance(data, MetaArray):
            return data.astype(np_dtype)
        return MetaArray(np.shape(data), np_dtype)

    def full(self, shape, fill_value, np_dtype, dev):
        return MetaArray(shape, np_dtype)

    def to_numpy(self, array):
        raise RuntimeError("Cannot copy out of meta tensor; no data! (a Meta tensor has a shape and a dtype only)")
