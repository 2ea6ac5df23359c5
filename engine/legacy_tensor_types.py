"""PyTorch's legacy tensor types, torch.FloatTensor, torch.LongTensor, …: each constructs a CPU
tensor of its dtype (`agrad.LongTensor([1, 2])` from data, `agrad.FloatTensor(2, 3)` of that size,
as Tensor.new), and `isinstance(t, agrad.FloatTensor)` asks t's dtype and device, as in PyTorch."""
from __future__ import annotations

from ._tensor import Tensor, _legacy_type_names
from .creation import empty

__all__ = list(_legacy_type_names().values())


class _LegacyTensorType(type):
    dtype = None

    def __instancecheck__(cls, other):
        return isinstance(other, Tensor) and other.dtype is cls.dtype and other.device.type == "cpu"

    def __call__(cls, *args):
        return empty(0, dtype=cls.dtype).new(*args)


for _dtype, _name in _legacy_type_names().items():
    globals()[_name] = _LegacyTensorType(_name, (), {"dtype": _dtype, "__module__": "agrad"})
del _dtype, _name
