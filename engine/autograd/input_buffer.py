"""InputBuffer: the gradients arriving at one Node, summed as they come."""
from __future__ import annotations

import sys

import numpy as np

from .._tensor import Tensor
from ..grad_mode import tls
from . import recording as _recorder


class InputBuffer:
    __slots__ = ("buffer",)

    def __init__(self, size: int):
        self.buffer = [None] * size

    def add(self, pos: int, grad) -> None:
        if grad is None:
            return
        buffer = self.buffer
        old = buffer[pos]
        if old is None:
            buffer[pos] = grad
            return
        # PyTorch's InputBuffer::accumulate: in place into a sum that only this buffer holds (its
        # use_count check), out of place otherwise: the first gradient may still be held by whoever
        # produced it, and with create_graph the sum must be differentiable
        if not tls.grad_enabled and old.__class__ is Tensor and old._autograd_meta is None \
                and old._device is grad._device:
            data, other = old._data, grad._data
            if data.__class__ is _ndarray and other.__class__ is _ndarray and data.base is None \
                    and data.shape == other.shape and data.dtype == other.dtype and data.flags.writeable \
                    and _counts(buffer, pos) == _UNSHARED:
                data += other
                if _recorder.ACTIVE is not None:
                    _recorder.ACTIVE.iadd(data, other)
                return
        buffer[pos] = old + grad

    def device(self):
        """The device whose ready queue runs this node: the first non-CPU gradient's, else CPU."""
        for g in self.buffer:
            if g is not None and g._device.type != "cpu":
                return g._device
        return None


_ndarray = np.ndarray


def _counts(buffer: list, pos: int) -> tuple:
    """The reference counts of the tensor at `buffer[pos]` and of its array, as seen from here."""
    old = buffer[pos]
    data = old._data
    return sys.getrefcount(old), sys.getrefcount(data)


class _Probe:
    __slots__ = ("_data",)

    def __init__(self):
        self._data = np.empty(1)


def _unshared_counts() -> tuple:
    """What _counts reports, called from InputBuffer.add, for a tensor held by nothing but the buffer
    (and add's `old`) whose array is held by nothing but the tensor (and add's `data`): measured the
    same way, not assumed, since how CPython counts a local's references varies by version."""
    buffer = [_Probe()]
    old = buffer[0]
    data = old._data
    counts = _counts(buffer, 0)
    del old, data
    return counts


_UNSHARED = _unshared_counts()
