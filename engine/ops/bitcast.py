"""Tensor.view(dtype): the same memory read as another dtype (PyTorch's view.dtype).

No gradient flows through it (PyTorch marks its output non-differentiable). The result
shares self's memory; NOTE: it is not registered as an autograd view (PyTorch's is a
non-differentiable view sharing the version counter), so in-place ops on it do not bump
self's version. With a
different element size the last dim shrinks or grows by the ratio, which needs it
contiguous and divisible, as in PyTorch.
"""
from __future__ import annotations

from .. import dtypes
from ..backends.meta import MetaArray
from ..messages import scalar_type_name
from .registry import defop
from .samples import SampleInput, make_arg


def _target(dtype):
    return dtypes.from_name(dtype).np if isinstance(dtype, str) else dtype.np


def _bitcast_shape(self, dtype):
    """The viewed shape, after PyTorch's checks (view_dtype in TensorConversions.cpp)."""
    new = _target(dtype)
    old, size = self.dtype.itemsize, new.itemsize
    if old == size:
        return tuple(self.shape)
    names = f"to view {scalar_type_name(self.dtype)} as {scalar_type_name(new)} (different element sizes)"
    if self.ndim == 0:
        raise RuntimeError(f"self.dim() cannot be 0 {names}")
    strides = getattr(self, "strides", None)        # Meta arrays are contiguous
    step = strides[-1] // old if strides is not None and self.shape[-1] > 1 else 1
    if step != 1:
        raise RuntimeError(f"self.stride(-1) must be 1 {names}, but got {step}")
    last = self.shape[-1]
    if size > old:
        if last % (size // old):
            raise RuntimeError(f"self.size(-1) must be divisible by {size // old} {names}, but got {last}")
        last //= size // old
    else:
        last *= old // size
    return tuple(self.shape[:-1]) + (last,)


def _bitcast_meta(self, dtype):
    return MetaArray(_bitcast_shape(self, dtype), _target(dtype))


def _bitcast_kernel(xp, self, dtype):
    _bitcast_shape(self, dtype)
    if self.ndim and self.shape[-1] == 1 and self.dtype.itemsize != _target(dtype).itemsize:
        self = self[..., :1]            # a size-1 last dim with any stride: make it a unit-stride one
    try:
        return self.view(_target(dtype))
    except ValueError as e:             # other strides not multiples of the new element size
        raise RuntimeError(f"view(dtype): the strides of this tensor cannot be read as "
                           f"{scalar_type_name(_target(dtype))}: {e}") from None


_view_dtype = defop(
    "_view_dtype(Tensor self, ScalarType dtype) -> Tensor",
    kernel=_bitcast_kernel, meta=_bitcast_meta,
    samples=lambda op: [
        SampleInput("float64 as int64", make_arg((2, 4), key=(op, 0), requires_grad=False), dtypes.int64),
        SampleInput("float64 as int32", make_arg((2, 4), key=(op, 1), requires_grad=False), dtypes.int32),
        SampleInput("float32 as float64", make_arg((3, 4), key=(op, 2), requires_grad=False,
                                                   dtype=dtypes.float32), dtypes.float64)],
    torch="lambda self, dtype: self.view(dtype)",
    doc="Tensor.view(dtype): self's memory read as dtype (no gradient); with a different element size the "
        "last dim (contiguous) is divided or multiplied by the size ratio.")
