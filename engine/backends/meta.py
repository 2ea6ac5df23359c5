"""The Meta backend: shapes and dtypes only, no storage.

`MetaArray` stands in for an ndarray; Meta kernels (each op's shape rule) take and
return MetaArrays, so `inspect` builds a graph of terabyte tensors in microseconds.
"""
from __future__ import annotations

import math

import numpy as np

from .._device import Backend
from ..dispatch_keys import DispatchKey


class MetaArray:
    __slots__ = ("shape", "dtype")

    def __init__(self, shape, dtype):
        self.shape = tuple(int(s) for s in shape)
        self.dtype = np.dtype(dtype)

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
