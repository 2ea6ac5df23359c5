"""Logical and bitwise ops and the value tests: logical_not/and/or/xor (bool results,
any dtype, zero is False), bitwise_not/and/or/xor on bool and integer tensors (the
`~ & | ^` operators), the shifts bitwise_left_shift/bitwise_right_shift (`<< >>`), and
isclose, isnan, isinf, isfinite, isposinf, isneginf, signbit, isin.

None of them has a gradient: PyTorch's outputs are bool or integer, so the results never
require grad. Bitwise ops on floating tensors raise as PyTorch's kernels do
("bitwise_and_cpu" not implemented for 'Float').
"""
from __future__ import annotations

import numpy as np

from ... import dtypes
from ...errors import DtypeError, DtypeNotImplementedError
from ...messages import scalar_type_name
from ...backends.meta import MetaArray
from ...shapes import pointwise_meta
from ..registry import defop
from ..samples import SampleInput, make_arg

_BOOL = np.dtype(np.bool_)


def _logical_samples(op):
    from ...creation import tensor
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
            raise DtypeNotImplementedError(f"\"{name}_cpu\" not implemented for '{scalar_type_name(dt)}'")


def _bitwise_meta(name):
    def meta(self, *other):
        _integral_only(name, self, *other)
        return pointwise_meta()(self, *other)
    return meta


def _bitwise_samples(op):
    from ...creation import tensor
    ints = tensor([[1, -8, 1], [32, 1, 6]], dtype=dtypes.int32)
    return [SampleInput("int32", ints, tensor([[3, 5, -1], [7, 0, 6]], dtype=dtypes.int32)),
            SampleInput("int32 & number", ints, 0x1337),
            SampleInput("bool", tensor([True, True, False, False]), tensor([True, False, True, False])),
            SampleInput("int64 broadcast", tensor([[1, 2, 3], [4, 5, 6]]), tensor([6, 3, 1]))]


def _shift_samples(op):
    from ...creation import tensor
    ints = tensor([[0, 1, 2], [1 << 8, 1 << 16, -(1 << 20)]], dtype=dtypes.int32)
    return [SampleInput("int32 by 2", ints, 2),
            SampleInput("int32 by tensor", ints, tensor([0, 3, 7], dtype=dtypes.int32)),
            SampleInput("int64", tensor([5, -9, 1 << 40]), tensor([1, 2, 3]))]


def _bitwise_binary(name, ufunc, samples=_bitwise_samples, doc=None, kernel_name=None):
    """`kernel_name`: ATen's kernel's, which its dtype errors name (lshift_cpu for the shifts)."""
    kernel_name = kernel_name or name

    def kernel(xp, self, other):
        _integral_only(kernel_name, self, other)
        return getattr(xp, ufunc)(self, other)
    return defop(f"{name}(Tensor self, Tensor other) -> Tensor",
                 kernel=kernel, meta=_bitwise_meta(kernel_name), promote="same", wraps_numbers=True,
                 samples=samples, torch=f"torch.{name}",
                 doc=doc or f"Elementwise bitwise {name.split('_')[1]} of bool or integer tensors (logical on bool).")


bitwise_and = _bitwise_binary("bitwise_and", "bitwise_and")
bitwise_or = _bitwise_binary("bitwise_or", "bitwise_or")
bitwise_xor = _bitwise_binary("bitwise_xor", "bitwise_xor")
bitwise_left_shift = _bitwise_binary("bitwise_left_shift", "left_shift", _shift_samples,
                                     "self << other, elementwise, on integer tensors (the `<<` operator).", "lshift")
bitwise_right_shift = _bitwise_binary("bitwise_right_shift", "right_shift", _shift_samples,
                                      "self >> other, elementwise, arithmetic on signed integers (the `>>` operator).",
                                      "rshift")


def _gcd_lcm(name, ufunc):
    def check(*arrays):
        for a in arrays:
            dt = getattr(a, "dtype", None)
            if dt is not None and dt.kind not in "iu":        # (bool too, as PyTorch's integral-only dispatch)
                raise DtypeNotImplementedError(f"\"{name}_cpu\" not implemented for '{scalar_type_name(dt)}'")

    def kernel(xp, self, other):
        check(self, other)
        return getattr(xp, ufunc)(self, other).astype(self.dtype, copy=False)

    def meta(self, other):
        check(self, other)
        return pointwise_meta()(self, other)

    def samples(op):
        from ...creation import tensor
        return [SampleInput("int64", tensor([5, -10, 15, 0, 7]), tensor([3, 4, -25, 6, 0])),
                SampleInput("int32 broadcast", tensor([[12, 18], [-8, 9]], dtype=dtypes.int32),
                            tensor([6, 4], dtype=dtypes.int32))]
    return defop(f"{name}(Tensor self, Tensor other) -> Tensor", kernel=kernel, meta=meta, promote="same",
                 samples=samples, torch=f"torch.{name}",
                 doc=f"The {'greatest common divisor' if name == 'gcd' else 'least common multiple'} of self "
                     f"and other, elementwise, on integer tensors (non-negative).")


gcd = _gcd_lcm("gcd", "gcd")
lcm = _gcd_lcm("lcm", "lcm")


def _bitwise_not_kernel(xp, self):
    _integral_only("bitwise_not", self)
    return xp.invert(self)


bitwise_not = defop(
    "bitwise_not(Tensor self) -> Tensor",
    kernel=_bitwise_not_kernel, meta=_bitwise_meta("bitwise_not"),
    samples=lambda op: [SampleInput(s.name, s.args[0]) for s in _bitwise_samples(op)[::2]],
    torch="torch.bitwise_not", doc="Elementwise bitwise not (~x) of a bool or integer tensor (logical on bool).")


# ---- isclose / isnan / isinf / isfinite ----------------------------------------------------------

def _isclose_meta(self, other, rtol, atol, equal_nan):
    if self.dtype != other.dtype:
        raise DtypeError(f"{scalar_type_name(self.dtype)} did not match {scalar_type_name(other.dtype)}")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")
    return pointwise_meta(_BOOL)(self, other)


def _isclose_kernel(xp, self, other, rtol, atol, equal_nan):
    _isclose_meta(self, other, rtol, atol, equal_nan)
    if self.dtype == _BOOL:
        return xp.equal(self, other)
    return xp.isclose(self, other, rtol=rtol, atol=atol, equal_nan=equal_nan)


def _isclose_samples(op):
    from ...creation import tensor
    a = tensor([1.0, 1.0 + 1e-9, float("nan"), float("inf"), -float("inf"), 2.0, 0.0], dtype=dtypes.float64)
    b = tensor([1.0, 1.0, float("nan"), float("inf"), float("inf"), 2.1, 1e-9], dtype=dtypes.float64)
    return [SampleInput("defaults", a, b), SampleInput("equal_nan kw", a, b, equal_nan=True),
            SampleInput("rtol atol", a, b, 0.1, 0.0),
            SampleInput("broadcast", make_arg((2, 3), key=(op, 0), requires_grad=False),
                        make_arg((3,), key=(op, 1), requires_grad=False), atol=0.5),
            SampleInput("int64", make_arg((4,), key=(op, 2), low=0, high=3, integer=True, dtype=dtypes.int64),
                        make_arg((4,), key=(op, 3), low=0, high=3, integer=True, dtype=dtypes.int64))]


isclose = defop(
    "isclose(Tensor self, Tensor other, float rtol=1e-05, float atol=1e-08, bool equal_nan=False) -> Tensor",
    kernel=_isclose_kernel, meta=_isclose_meta, samples=_isclose_samples, torch="torch.isclose", supports_complex=True,
    doc="|self - other| <= atol + rtol * |other|, elementwise (bool); infinities equal themselves; NaN equals "
        "NaN only with equal_nan. Both tensors must have the same dtype.")


def _classify_samples(op):
    from ...creation import tensor
    special = tensor([0.0, -1.5, float("nan"), float("inf"), -float("inf"), 3.0], dtype=dtypes.float64)
    return [SampleInput("specials", special), SampleInput("float32", tensor(special, dtype=dtypes.float32)),
            SampleInput("(3,4)", make_arg((3, 4), key=(op, 0), requires_grad=False)),
            SampleInput("int64", make_arg((4,), key=(op, 1), low=-3, high=3, integer=True, dtype=dtypes.int64)),
            SampleInput("0-d", tensor(float("nan"), dtype=dtypes.float64))]


def _classifier(name, fn, integral, supports_complex=False):
    """isnan/isinf/isfinite: bool; on integers and bools every element is `integral`; a complex element is
    nan (inf) where either part is, finite where both are (NumPy's and PyTorch's rule)."""
    def kernel(xp, self):
        if self.dtype.kind not in "fc":
            return xp.full(self.shape, integral, dtype=_BOOL)
        return getattr(xp, fn)(self)
    return defop(f"{name}(Tensor self) -> Tensor", kernel=kernel, meta=pointwise_meta(_BOOL),
                 samples=_classify_samples, torch=f"torch.{name}", supports_complex=supports_complex,
                 doc=f"Elementwise {fn}(x), bool ({integral} for every integer element).")


isnan = _classifier("isnan", "isnan", False, supports_complex=True)
isinf = _classifier("isinf", "isinf", False, supports_complex=True)
isfinite = _classifier("isfinite", "isfinite", True, supports_complex=True)
isposinf = _classifier("isposinf", "isposinf", False)
isneginf = _classifier("isneginf", "isneginf", False)
# NOTE: PyTorch's: True everywhere for a real tensor (NaN included), imag == 0 for a complex one
isreal = defop(
    "isreal(Tensor self) -> Tensor",
    kernel=lambda xp, self: xp.ones(self.shape, dtype=_BOOL) if self.dtype.kind != "c" else self.imag == 0,
    meta=pointwise_meta(_BOOL), supports_complex=True,
    samples=_classify_samples, torch="torch.isreal", doc="Whether each element is real (bool): all of a real tensor.")


def _signbit_kernel(xp, self):
    # the sign bit itself: True for -0.0 and for a NaN with its sign set, as PyTorch's; bools have none
    return xp.signbit(self) if self.dtype != _BOOL else xp.zeros(self.shape, dtype=_BOOL)


signbit = defop(
    "signbit(Tensor self) -> Tensor",
    kernel=_signbit_kernel, meta=pointwise_meta(_BOOL), samples=_classify_samples, torch="torch.signbit",
    doc="Whether each element's sign bit is set (bool): True for negative numbers, -0.0 and a negative NaN.")


def _isin_meta(elements, test_elements, assume_unique=False, invert=False):
    return MetaArray(elements.shape, _BOOL)


def _isin_kernel(xp, elements, test_elements, assume_unique, invert):
    # by value, as PyTorch's after promoting both to one dtype
    return xp.isin(elements, test_elements, assume_unique=assume_unique, invert=invert)


def _isin_samples(op):
    from ...creation import tensor
    ints = make_arg((3, 4), key=(op, 0), low=0, high=6, integer=True, dtype=dtypes.int64)
    return [SampleInput("int64", ints, tensor([1, 3, 9], dtype=dtypes.int64)),
            SampleInput("invert", ints, tensor([[2], [4]], dtype=dtypes.int64), invert=True),
            SampleInput("float by value", tensor([1.0, 1.5, float("nan"), 3.0], dtype=dtypes.float64),
                        tensor([3.0, float("nan"), 1.5], dtype=dtypes.float64)),
            SampleInput("0-d", tensor(2, dtype=dtypes.int64), tensor([2, 5], dtype=dtypes.int64))]


isin = defop(
    "isin(Tensor elements, Tensor test_elements, *, bool assume_unique=False, bool invert=False) -> Tensor",
    kernel=_isin_kernel, meta=_isin_meta, samples=_isin_samples, torch="torch.isin",
    doc="Whether each element of `elements` is among `test_elements` (bool, elements' shape); NaN is never; "
        "`invert` asks the opposite.")
