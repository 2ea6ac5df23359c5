"""Summing a gradient into the one an InputBuffer already holds (PyTorch's
InputBuffer::accumulate): in place when nothing but the buffer holds the sum and its array
(its use_count check), else out of place — the first gradient may still be held by whoever
produced it, and with create_graph the sum must be differentiable."""
from __future__ import annotations

from sys import getrefcount

import numpy as np

from .._tensor import Tensor
from ..grad_mode import tls
from ..watchers import add_in_place

_ndarray = np.ndarray


def sum_into(buffer: list, pos: int, grad):
    """The sum of `buffer[pos]` and `grad`, for the buffer to store at `pos`."""
    old = buffer[pos]
    if old.__class__ is Tensor and old._autograd_meta is None and old._device is grad._device \
            and not tls.grad_enabled:
        data, other = old._data, grad._data
        # NOTE: the reference counts are read here, not in a helper: the first arrival's sum is summed into
        # in place many times over where a leaf is used by every op (W1's x and w)
        if data.__class__ is _ndarray and other.__class__ is _ndarray and data.base is None \
                and data.shape == other.shape and data.dtype == other.dtype \
                and (getrefcount(old), getrefcount(data)) == (_UNSHARED or _unshared_counts()):
            try:
                add_in_place(data, other)
            except ValueError:
                # NOTE: a read-only array (flags.writeable off), which NumPy refuses before writing:
                # asked this way, not through `data.flags`, which makes an object per call
                return old + grad
            return old
    return old + grad


_UNSHARED = None


class _Probe:
    __slots__ = ("_data",)


def _unshared_counts() -> tuple:
    """What sum_into's reference counts are for a tensor held by nothing but the buffer (and
    sum_into's `old`) whose array is held by nothing but the tensor (and sum_into's `data`):
    measured the same way on first use, not assumed, since how CPython counts a local's references
    varies by version."""
    global _UNSHARED
    probe = _Probe()
    probe._data = np.empty(1)
    buffer = [probe]
    del probe
    old = buffer[0]
    data = old._data
    counts = (getrefcount(old), getrefcount(data))
    del old, data
    _UNSHARED = counts
    return counts
