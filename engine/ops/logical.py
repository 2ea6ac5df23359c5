"""Logical and bitwise ops: logical_not/and/or/xor (bool results, any dtype, zero is False),
bitwise_not/and/or/xor on bool and integer tensors (the `~ & | ^` operators) and the
shifts bitwise_left_shift/bitwise_right_shift (`<< >>`).

None of them has a gradient: PyTorch's outputs are bool or integer, so the results never
require grad. Bitwise ops on floating tensors raise as PyTorch's kernels do
("bitwise_and_cpu" not implemented for 'Float').
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..errors import DtypeNotImplementedError
from ..shapes import pointwise_meta
from .registry import defop
from .samples import SampleInput, make_arg
from .unary import _torch_dtype_name

_BOOL = np.dtype(np.bool_)


def _logical_samples(op):
    from ..creation import tensor
    x = tensor([0.0, -1.5, 2.0, 0.0, float("nan")])
    y = tensor([1.0, 0.0, 3.0, 0.0, 0.0])
    return [SampleInput("float", x, y),
            SampleInput("bool", tensor([True, True, False, False]), tensor([True, False, True, False])),
            SampleInput("int64 broadcast", make_arg((2, 3), key=(op, 0), low=-2, high=2, integer=True,
                                                    dtype=dtypes.int64, requires_grad=False),
                        make_arg((3,), key=(op, 1), requires_grad=False))]


def _logical_binary(name):
    return defop(f"{name}(Tensor self, Tensor other) -> Tensor",
                 kernel=lambda xp, self, other: getattr(xp, name)(self, other), meta=pointwise_meta(_BOOL),
                 samples=_logical_samples, torch=f"torch.{name}",
                 doc=f"Elementwise {name.split('_')[1]} of the truth values (nonzero is True), bool.")


logical_and = _logical_binary("logical_and")
logical_or = _logical_binary("logical_or")
logical_xor = _logical_binary("logical_xor")
logical_not = defop(
    "logical_not(Tensor self) -> Tensor",
    kernel=lambda xp, self: xp.logical_not(self), meta=pointwise_meta(_BOOL),
    samples=lambda op: [SampleInput(s.name, s.args[0]) for s in _logical_samples(op)],
    torch="torch.logical_not", doc="Elementwise not of the truth value (zero is True), bool.")


# ---- bitwise --------------------------------------------------------------------------------

def _integral_only(name, *arrays):
    for a in arrays:
        dt = np.dtype(np.float64) if isinstance(a, float) else getattr(a, "dtype", None)
        if dt is not None and dt.kind == "f":
            raise DtypeNotImplementedError(f"\"{name}_cpu\" not implemented for '{_torch_dtype_name(dt)}'")


def _bitwise_meta(name):
    def meta(self, *other):
        _integral_only(name, self, *other)
        return pointwise_meta()(self, *other)
    return meta


def _bitwise_samples(op):
    from ..creation import tensor
    ints = tensor([[1, -8, 1], [32, 1, 6]], dtype=dtypes.int32)
    return [SampleInput("int32", ints, tensor([[3, 5, -1], [7, 0, 6]], dtype=dtypes.int32)),
            SampleInput("int32 & number", ints, 0x1337),
            SampleInput("bool", tensor([True, True, False, False]), tensor([True, False, True, False])),
            SampleInput("int64 broadcast", tensor([[1, 2, 3], [4, 5, 6]]), tensor([6, 3, 1]))]


def _shift_samples(op):
    from ..creation import tensor
    ints = tensor([[0, 1, 2], [1 << 8, 1 << 16, -(1 << 20)]], dtype=dtypes.int32)
    return [SampleInput("int32 by 2", ints, 2),
            SampleInput("int32 by tensor", ints, tensor([0, 3, 7], dtype=dtypes.int32)),
            SampleInput("int64", tensor([5, -9, 1 << 40]), tensor([1, 2, 3]))]


def _bitwise_binary(name, ufunc, samples=_bitwise_samples, doc=None):
    def kernel(xp, self, other):
        _integral_only(name, self, other)
        return getattr(xp, ufunc)(self, other)
    return defop(f"{name}(Tensor self, Tensor other) -> Tensor",
                 kernel=kernel, meta=_bitwise_meta(name), promote="same", wraps_numbers=True,
                 samples=samples, torch=f"torch.{name}",
                 doc=doc or f"Elementwise bitwise {name.split('_')[1]} of bool or integer tensors (logical on bool).")


bitwise_and = _bitwise_binary("bitwise_and", "bitwise_and")
bitwise_or = _bitwise_binary("bitwise_or", "bitwise_or")
bitwise_xor = _bitwise_binary("bitwise_xor", "bitwise_xor")
bitwise_left_shift = _bitwise_binary("bitwise_left_shift", "left_shift", _shift_samples,
                                     "self << other, elementwise, on integer tensors (the `<<` operator).")
bitwise_right_shift = _bitwise_binary("bitwise_right_shift", "right_shift", _shift_samples,
                                      "self >> other, elementwise, arithmetic on signed integers (the `>>` operator).")


def _bitwise_not_kernel(xp, self):
    _integral_only("bitwise_not", self)
    return xp.invert(self)


bitwise_not = defop(
    "bitwise_not(Tensor self) -> Tensor",
    kernel=_bitwise_not_kernel, meta=_bitwise_meta("bitwise_not"),
    samples=lambda op: [SampleInput(s.name, s.args[0]) for s in _bitwise_samples(op)[::2]],
    torch="torch.bitwise_not", doc="Elementwise bitwise not (~x) of a bool or integer tensor (logical on bool).")
