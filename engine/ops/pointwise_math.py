"""Elementwise math beyond the core set: logs and exponentials, inverse and hyperbolic
trigonometry, rounding, remainders, and the fused forms (lerp, addcmul, addcdiv, hypot,
logaddexp, atan2, nan_to_num).

Each gradient is the formula of PyTorch's derivatives.yaml, written with agrad ops.
Dtypes follow PyTorch: the "unary float" ops compute integers in the default float;
rounding keeps an integer tensor as it is (a copy); remainder and fmod keep the
promoted dtype; ops PyTorch has no integer kernel for raise as PyTorch does.
"""
from __future__ import annotations

import math

import numpy as np

from .. import dtypes
from ..backends.meta import MetaArray
from ..creation import tensor as _tensor
from ..creation import zeros_like
from ..errors import DtypeError, DtypeNotImplementedError
from ..shapes import broadcast_shapes, pointwise_meta, shape_of
from .activations import _float_only
from .pointwise import div, exp, pow, where  # noqa: A004
from .registry import defop
from .samples import (
    SampleInput,
    binary_samples,
    make_arg,
    off_integers,
    positive_unary_samples,
    quotient_off_integers,
    unary_samples,
)
from .unary import _torch_dtype_name, rsqrt

_same_meta = pointwise_meta()
_LN2 = math.log(2.0)
_LN10 = math.log(10.0)


def _is_number(x) -> bool:
    return not hasattr(x, "shape")


def _dtype(*args):
    """The (promoted) dtype of the first tensor argument: the result's."""
    return next(a.dtype for a in args if not _is_number(a))


def _is_integral(a) -> bool:
    return not _is_number(a) and a.dtype.kind in "iub"


def _checked_meta(check):
    def rule(*args):
        check(*args)
        return _same_meta(*args)
    return rule


def _int_sample(op, low=-4, high=5):
    return SampleInput("int64", make_arg((5,), key=(op, "int"), dtype=dtypes.int64, low=low, high=high,
                                         integer=True))


def _with_int(samples, low=-4, high=5):
    return lambda op: samples(op) + [_int_sample(op, low, high)]


# ---- logs, exponentials, reciprocal, square -------------------------------------------------

def _unary_float(name, ufunc, formula, samples, backward_name=None):
    return defop(f"{name}(Tensor self) -> Tensor",
                 kernel=lambda xp, self: getattr(xp, ufunc)(self), meta=_same_meta, promote="float",
                 grads={"self": formula}, backward_name=backward_name, samples=samples, torch=f"torch.{name}")


log1p = _unary_float("log1p", "log1p", lambda grad, self: grad / (self + 1),
                     _with_int(unary_samples(low=-0.5, high=2.0), 0, 5), backward_name="Log1PBackward0")
expm1 = _unary_float("expm1", "expm1", lambda grad, result: grad * (result + 1), _with_int(unary_samples()))
log2 = _unary_float("log2", "log2", lambda grad, self: grad / (self * _LN2), _with_int(positive_unary_samples(), 1, 9))
log10 = _unary_float("log10", "log10", lambda grad, self: grad / (self * _LN10),
                     _with_int(positive_unary_samples(), 1, 9))
exp2 = _unary_float("exp2", "exp2", lambda grad, result: grad * result * _LN2, _with_int(unary_samples()))
reciprocal = _unary_float("reciprocal", "reciprocal", lambda grad, result: -grad * (result * result),
                          _with_int(unary_samples(away_from=0.0), 1, 9))

square = defop(
    "square(Tensor self) -> Tensor",
    composite=lambda self: pow(self, 2),       # PyTorch's composite: its grad_fn is PowBackward0
    samples=_with_int(unary_samples()), torch="torch.square")


# ---- inverse and hyperbolic trigonometry -----------------------------------------------------

asin = _unary_float("asin", "arcsin", lambda grad, self: grad * rsqrt(-self * self + 1),
                    _with_int(unary_samples(low=-0.9, high=0.9), -1, 2))
acos = _unary_float("acos", "arccos", lambda grad, self: grad * -rsqrt(-self * self + 1),
                    _with_int(unary_samples(low=-0.9, high=0.9), -1, 2))
atan = _unary_float("atan", "arctan", lambda grad, self: grad / (self * self + 1), _with_int(unary_samples()))
tan = _unary_float("tan", "tan", lambda grad, result: grad * (result * result + 1),
                   _with_int(unary_samples(low=-1.2, high=1.2), -1, 2))
sinh = _unary_float("sinh", "sinh", lambda grad, self: grad * cosh(self), _with_int(unary_samples()))
cosh = _unary_float("cosh", "cosh", lambda grad, self: grad * sinh(self), _with_int(unary_samples()))
asinh = _unary_float("asinh", "arcsinh", lambda grad, self: grad * rsqrt(self * self + 1), _with_int(unary_samples()))
acosh = _unary_float("acosh", "arccosh", lambda grad, self: grad * rsqrt(self * self - 1),
                     _with_int(positive_unary_samples(1.2, 3.0), 1, 5))
atanh = _unary_float("atanh", "arctanh", lambda grad, self: grad / (1 - self * self),
                     _with_int(unary_samples(low=-0.9, high=0.9), 0, 1))


def _atan2_samples(op):
    return binary_samples(scalar_other=None)(op) + [
        SampleInput("int64", make_arg((4,), key=(op, "i1"), dtype=dtypes.int64, low=-3, high=4, integer=True),
                    make_arg((4,), key=(op, "i2"), dtype=dtypes.int64, low=1, high=4, integer=True))]


def _atan2_self_grad(grad, self, other):
    return grad * other / (self * self + other * other)


def _atan2_other_grad(grad, self, other):
    return grad * -self / (self * self + other * other)


atan2 = defop(
    "atan2(Tensor self, Tensor other) -> Tensor",
    kernel=lambda xp, self, other: xp.arctan2(self, other), meta=_same_meta, promote="float",
    grads={"self": _atan2_self_grad, "other": _atan2_other_grad},
    samples=_atan2_samples, torch="torch.atan2")


def _copysign_self_grad(grad, self, result):
    # PyTorch's copysign_tensor_self_backward: grad * result / self, 0 where self == 0
    zero = self == 0
    return grad * where(zero, 0.0, result / where(zero, 1.0, self))


copysign = defop(
    "copysign(Tensor self, Tensor other) -> Tensor",
    kernel=lambda xp, self, other: xp.copysign(self, other), meta=_same_meta, promote="float",
    grads={"self": _copysign_self_grad, "other": lambda grad, other: zeros_like(other)},
    samples=lambda op: _atan2_samples(op) + [
        SampleInput("signed zeros", _tensor([0.0, -0.0, 1.5, -2.0], dtype=dtypes.float64),
                    _tensor([-0.0, 1.0, -0.0, 0.0], dtype=dtypes.float64))],
    torch="torch.copysign", doc="|self| with the sign of other (signed zeros included), in a float dtype.")


# ---- rounding: piecewise constant, so a zero gradient --------------------------------------

def _rounding(name, ufunc):
    def kernel(xp, self):
        # NOTE: an integer tensor is already rounded: PyTorch returns a copy of the same dtype
        return self.copy() if _is_integral(self) else getattr(xp, ufunc)(self)
    return defop(f"{name}(Tensor self) -> Tensor", kernel=kernel, meta=_same_meta,
                 grads={"self": lambda grad: zeros_like(grad)}, samples=_rounding_samples, torch=f"torch.{name}")


def _rounding_samples(op):
    return [SampleInput("(3,4)", off_integers((3, 4), (op, 0), halves=True)),
            SampleInput("0-d", off_integers((), (op, 1), halves=True)),
            SampleInput("(4,3)T", off_integers((3, 4), (op, 2), halves=True).detach().T.requires_grad_()),
            _int_sample(op)]


floor = _rounding("floor", "floor")
ceil = _rounding("ceil", "ceil")
trunc = _rounding("trunc", "trunc")


def _round_check(self, decimals):
    # round.decimals has no integer kernel (plain round copies an integer tensor)
    if decimals is not None and _is_integral(self):
        kernel = "round_vml_cpu" if decimals == 0 else "round_cpu"
        raise DtypeNotImplementedError(f"\"{kernel}\" not implemented for '{_torch_dtype_name(self.dtype)}'")


def _round_kernel(xp, self, decimals):
    _round_check(self, decimals)
    if _is_integral(self):
        return self.copy()
    if not decimals:
        return xp.rint(self)            # half to even, as std::nearbyint
    # PyTorch's round.decimals: scale by 10^|decimals| in the tensor's dtype, round, scale back
    ten_pow = self.dtype.type(10.0 ** abs(decimals))     # a scalar of the dtype: NumPy and CuPy alike
    if decimals > 0:
        return (xp.rint(self * ten_pow) / ten_pow).astype(self.dtype, copy=False)
    return (xp.rint(self / ten_pow) * ten_pow).astype(self.dtype, copy=False)


def _round_samples(op):
    x = off_integers((3, 4), (op, "d"), low=-30.0, high=30.0, halves=True)
    return _rounding_samples(op) + [
        SampleInput("decimals=0 kw", off_integers((3,), (op, "k"), halves=True), decimals=0),
        SampleInput("decimals=-1", x, decimals=-1),
        SampleInput("decimals=2", _tensor([0.1234, -0.5678, 1.2345, 2.9876], dtype=dtypes.float64, requires_grad=True),
                    decimals=2)]


round = defop(  # noqa: A001 — PyTorch's name
    "round(Tensor self, *, int? decimals=None) -> Tensor",
    kernel=_round_kernel, meta=_checked_meta(_round_check),
    grads={"self": lambda grad: zeros_like(grad)},
    # round (RoundBackward0) and round.decimals (RoundBackward1, also for an explicit decimals=0)
    backward_name=("RoundBackward0", "RoundBackward1"), overload=lambda self, decimals: int(decimals is not None),
    samples=_round_samples, torch="torch.round")


def _frac_kernel(xp, self):
    _float_only("frac_cpu", self)
    return self - xp.trunc(self)


frac = defop(
    "frac(Tensor self) -> Tensor",
    kernel=_frac_kernel, meta=_checked_meta(lambda self: _float_only("frac_cpu", self)),
    grads={"self": lambda grad: grad},
    samples=lambda op: _rounding_samples(op)[:3], torch="torch.frac")


# ---- remainder and fmod ---------------------------------------------------------------------

def _no_integer_division_by_zero(xp, self, other):
    # NOTE: NumPy returns 0 for an integer x % 0 (with a warning); PyTorch raises
    if _is_integral(self) and _is_integral(other) and bool(xp.any(other == 0)):
        raise RuntimeError("ZeroDivisionError")
    if _is_integral(self) and _is_number(other) and other == 0:
        raise RuntimeError("ZeroDivisionError")


def _modulo(name, ufunc, rounding_mode):
    def kernel(xp, self, other):
        _no_integer_division_by_zero(xp, self, other)
        return xp.asarray(getattr(xp, ufunc)(self, other)).astype(_dtype(self, other), copy=False)

    return defop(
        f"{name}(Tensor self, Tensor other) -> Tensor",
        kernel=kernel, meta=_same_meta, promote="same", wraps_numbers=True,
        grads={"self": lambda grad: grad,
               "other": lambda grad, self, other: -grad * div(self, other, rounding_mode=rounding_mode)},
        # name.Scalar (a number divisor: Backward0) and name.Tensor (Backward1)
        backward_name=(f"{name.capitalize()}Backward0", f"{name.capitalize()}Backward1"),
        overload=lambda self, other: 0 if _is_number(other) else 1,
        samples=_modulo_samples, torch=f"torch.{name}")


def _modulo_samples(op):
    a, b = quotient_off_integers((3, 4), (3, 4), key=(op, 0))
    a2, b2 = quotient_off_integers((2, 3), (3,), key=(op, 1))
    ints = [make_arg((6,), key=(op, "ia"), dtype=dtypes.int64, low=-9, high=10, integer=True),
            _tensor([3, -3, 4, -4, 5, 2])]
    scalar = _tensor(off_integers((2, 3), (op, "sq"), requires_grad=False).numpy() * 1.5, dtype=dtypes.float64,
                     requires_grad=True)
    return [SampleInput("(3,4)", a, b), SampleInput("broadcast", a2, b2), SampleInput("scalar other", scalar, 1.5),
            SampleInput("int64", *ints), SampleInput("int64 scalar", ints[0], 4)]


remainder = _modulo("remainder", "remainder", "floor")
fmod = _modulo("fmod", "fmod", "trunc")


# ---- lerp, addcmul, addcdiv -----------------------------------------------------------------

_C10_NAMES = {"float64": "double", "float32": "float", "float16": "c10::Half", "int64": "long int", "int32": "int",
              "bool": "bool", "uint8": "unsigned char", "int8": "signed char", "int16": "short int"}


def _lerp_check(self, end, weight):
    kernel = "lerp_kernel_scalar" if _is_number(weight) else "lerp_kernel_tensor"
    for name, other in (("end", end), ("weight", weight)):
        if not _is_number(other) and other.dtype != self.dtype:
            raise DtypeError(f"expected dtype {_C10_NAMES[dtypes.from_numpy(self.dtype).name]} for `{name}` but got "
                             f"dtype {_C10_NAMES[dtypes.from_numpy(other.dtype).name]}")
    _float_only(kernel, self)


def _lerp_kernel(xp, self, end, weight):
    _lerp_check(self, end, weight)
    # PyTorch's lerp: from the nearer end, so that weight 0 gives self and weight 1 gives end exactly
    small = xp.abs(weight) < 0.5
    out = xp.where(small, self + weight * (end - self), end - (end - self) * (1 - weight))
    return out.astype(self.dtype, copy=False)


def _lerp_meta(self, end, weight):
    _lerp_check(self, end, weight)
    return MetaArray(broadcast_shapes(self.shape, end.shape, shape_of(weight)), self.dtype)


def _lerp_samples(op):
    x, y = make_arg((3, 4), key=(op, "x")), make_arg((3, 4), key=(op, "y"))
    return [SampleInput("scalar weight", x, y, 0.3), SampleInput("scalar weight > 0.5", x, y, 0.8),
            SampleInput("tensor weight broadcast", make_arg((2, 3, 4), key=(op, "bx")), y,
                        make_arg((4,), key=(op, "w"), low=-0.5, high=1.5)),
            SampleInput("0-d", make_arg((), key=(op, "0x")), make_arg((), key=(op, "0y")), 1.2)]


lerp = defop(
    "lerp(Tensor self, Tensor end, Tensor weight) -> Tensor",
    kernel=_lerp_kernel, meta=_lerp_meta, wraps_numbers=True,
    grads={"self": lambda grad, weight: grad * (1 - weight), "end": lambda grad, weight: grad * weight,
           "weight": lambda grad, self, end: grad * (end - self)},
    # lerp.Scalar (LerpBackward0) and lerp.Tensor (LerpBackward1)
    backward_name=("LerpBackward0", "LerpBackward1"), overload=lambda self, end, weight: 0 if _is_number(weight) else 1,
    samples=_lerp_samples, torch="torch.lerp")


def _addc_samples(op):
    return [SampleInput("broadcast", make_arg((2, 3), key=(op, "s")), make_arg((3,), key=(op, "a")),
                        make_arg((2, 1), key=(op, "b"), low=0.5, high=2.0)),
            SampleInput("value=-0.5", make_arg((4,), key=(op, "s2")), make_arg((4,), key=(op, "a2")),
                        make_arg((4,), key=(op, "b2"), low=-2.0, high=-0.5), value=-0.5),
            SampleInput("float32 self", make_arg((3,), key=(op, "s3"), dtype=dtypes.float32, requires_grad=False),
                        make_arg((3,), key=(op, "a3")), make_arg((3,), key=(op, "b3"), low=0.5, high=2.0), value=2)]


addcmul = defop(
    "addcmul(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor",
    kernel=lambda xp, self, tensor1, tensor2, value: (self + value * tensor1 * tensor2).astype(self.dtype, copy=False),
    meta=_same_meta, promote="same",
    grads={"self": lambda grad: grad, "tensor1": lambda grad, tensor2, value: grad * (tensor2 * value),
           "tensor2": lambda grad, tensor1, value: grad * (tensor1 * value)},
    samples=_addc_samples, torch="torch.addcmul")


def _addcdiv_check(self, tensor1, tensor2, value):
    if _is_integral(tensor1) and _is_integral(tensor2):
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future  release addcdiv will perform a "
            "true division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as (input + "
            "value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as (input + value * "
            "tensor1 / tensor2) for float inputs. The future addcdiv behavior is just the latter implementation: "
            "(input + value * tensor1 / tensor2), for all dtypes.")


def _addcdiv_kernel(xp, self, tensor1, tensor2, value):
    _addcdiv_check(self, tensor1, tensor2, value)
    return (self + value * tensor1 / tensor2).astype(self.dtype, copy=False)


addcdiv = defop(
    "addcdiv(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor",
    kernel=_addcdiv_kernel, meta=_checked_meta(_addcdiv_check), promote="same",
    grads={"self": lambda grad: grad, "tensor1": lambda grad, tensor2, value: grad * (value / tensor2),
           "tensor2": lambda grad, tensor1, tensor2, value: -grad * (value * tensor1 / (tensor2 * tensor2))},
    samples=_addc_samples, torch="torch.addcdiv")


# ---- hypot, logaddexp -----------------------------------------------------------------------

def _float_binary(name, kernel_name, fn, grads, samples):
    def kernel(xp, self, other):
        _float_only(kernel_name, self, other)
        return fn(xp, self, other).astype(self.dtype, copy=False)
    return defop(f"{name}(Tensor self, Tensor other) -> Tensor", kernel=kernel,
                 meta=_checked_meta(lambda self, other: _float_only(kernel_name, self, other)), promote="same",
                 grads=grads, samples=samples, torch=f"torch.{name}")


hypot = _float_binary(
    "hypot", "hypot_cpu", lambda xp, self, other: xp.hypot(self, other),
    {"self": lambda grad, self, result: grad * self / result,
     "other": lambda grad, other, result: grad * other / result},
    binary_samples(scalar_other=None))

logaddexp = _float_binary(
    "logaddexp", "logaddexp_cpu", lambda xp, self, other: xp.logaddexp(self, other),
    {"self": lambda grad, self, other: grad / (1 + exp(other - self)),
     "other": lambda grad, self, other: grad / (1 + exp(self - other))},
    lambda op: binary_samples(scalar_other=None)(op) + [
        SampleInput("far apart", make_arg((3,), key=(op, "f1"), low=-40.0, high=-30.0),
                    make_arg((3,), key=(op, "f2"), low=30.0, high=40.0))])


# ---- nan_to_num -----------------------------------------------------------------------------

def _nan_to_num_kernel(xp, self, nan, posinf, neginf):
    if _is_integral(self):
        return self.copy()
    # the defaults are the dtype's largest and smallest finite values, as PyTorch's
    return xp.nan_to_num(self, nan=0.0 if nan is None else nan, posinf=posinf, neginf=neginf)


def _nan_to_num_samples(op):
    special = np.array([[0.5, math.nan, -1.5], [math.inf, -2.0, -math.inf]])
    x = _tensor(special, dtype=dtypes.float64, requires_grad=True)
    return unary_samples()(op)[:3] + [
        SampleInput("nan and infinities", x), SampleInput("nan=1,posinf=9,neginf=-9", x, 1.0, 9.0, -9.0),
        SampleInput("float32 infinities", _tensor(special, dtype=dtypes.float32),
                    neginf=-3.0), _int_sample(op)]


nan_to_num = defop(
    "nan_to_num(Tensor self, float? nan=None, float? posinf=None, float? neginf=None) -> Tensor",
    kernel=_nan_to_num_kernel, meta=_same_meta,
    # NOTE: PyTorch's grad * isfinite(self); `abs(self) < inf` is False for nan and for +-inf
    grads={"self": lambda grad, self: where(self.abs() < math.inf, grad, 0.0)},
    samples=_nan_to_num_samples, torch="torch.nan_to_num")
