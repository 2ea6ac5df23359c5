"""agrad.finfo and agrad.iinfo, as torch.finfo and torch.iinfo (torch/csrc/TypeInfo.cpp): the
numerical properties of a floating and an integral dtype, with PyTorch's attributes, repr,
equality and messages (its "torch." read "agrad.").
"""
from __future__ import annotations

import numpy as np

from . import dtypes

__all__ = ["finfo", "iinfo"]


class finfo:
    """finfo(type=agrad.get_default_dtype()): bits, eps, max, min, tiny (= smallest_normal),
    resolution (10^-digits10) and dtype (its name) of float16, float32 or float64; of a complex dtype,
    its real dtype's (finfo(complex64) is finfo(float32), as in PyTorch)."""
    __slots__ = ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype")

    def __init__(self, type=None):     # noqa: A002 — PyTorch's argument name
        if type is None:
            type = dtypes.get_default_dtype()
        if isinstance(type, dtypes.dtype) and type.is_complex:
            type = type.to_real()
        if not isinstance(type, dtypes.dtype) or not type.is_floating_point:
            raise TypeError("agrad.finfo() requires a floating point input type. Use agrad.iinfo to handle "
                            "'agrad.finfo'")
        info = np.finfo(type.np)
        self.bits = info.bits
        self.eps, self.max, self.min = float(info.eps), float(info.max), float(info.min)
        self.tiny = self.smallest_normal = float(info.smallest_normal)
        self.resolution = 10.0 ** -info.precision      # c10's 10^-digits10, a double (NumPy's is in the dtype)
        self.dtype = type.name

    def __eq__(self, other):
        return isinstance(other, finfo) and self.dtype == other.dtype

    def __hash__(self):
        return hash(("finfo", self.dtype))

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """iinfo(type): bits, max, min and dtype (its name) of an integral dtype (not bool, as PyTorch's)."""
    __slots__ = ("bits", "max", "min", "dtype")

    def __init__(self, type):     # noqa: A002 — PyTorch's argument name
        if not isinstance(type, dtypes.dtype) or type.category != 1:
            if isinstance(type, dtypes.dtype) and type.category == 0:
                raise TypeError(f"{type!r} is not supported by agrad.iinfo")
            raise TypeError("agrad.iinfo() requires an integer input type. Use agrad.finfo to handle 'agrad.iinfo'")
        info = np.iinfo(type.np)
        self.bits, self.max, self.min = info.bits, int(info.max), int(info.min)
        self.dtype = type.name

    def __eq__(self, other):
        return isinstance(other, iinfo) and self.dtype == other.dtype

    def __hash__(self):
        return hash(("iinfo", self.dtype))

    def __repr__(self):
        return f"iinfo(min={float(self.min):g}, max={float(self.max):g}, dtype={self.dtype})"


finfo.__module__ = iinfo.__module__ = "agrad"
