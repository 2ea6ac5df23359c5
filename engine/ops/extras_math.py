"""More of PyTorch's elementwise ops: true_divide, float_power, logit, heaviside, sinc,
deg2rad, rad2deg, fmax, fmin and clamp_max.

Gradients are derivatives.yaml's formulas written with agrad ops (double backward works);
grad_fn names are PyTorch's: true_divide is div (DivBackward0), float_power is pow on
float64 (PowBackward0/1/2 after ToCopyBackward0), heaviside records PyTorch's
`NotImplemented` node whose backward raises. The in-place variants (logit_, clamp_max_,
true_divide_, float_power_) are bound by engine/ops/inplace.py, which lists them.
"""
from __future__ import annotations

import math

import numpy as np

from .. import dtypes
from ..creation import tensor
from ..errors import DtypeError
from ..shapes import pointwise_meta
from .conversion import to
from .logical import logical_or
from .pointwise import div, eq, ge, gt, le, lt, where
from .pointwise import pow as _pow
from .registry import defop
from .samples import SampleInput, binary_samples, make_arg, unary_samples
from .selection import isnan
from .unary import cos, sin

__all__: list = []

_same_meta = pointwise_meta()
_DEG = math.pi / 180.0


def _is_number(x) -> bool:
    return not hasattr(x, "shape")


def _int_sample(op, name="int64", low=-3, high=4, shape=(5,)):
    return SampleInput(name, make_arg(shape, key=(op, name), dtype=dtypes.int64, low=low, high=high, integer=True))


# ---- true_divide, float_power: composites as in PyTorch ---------------------------------------

true_divide = defop(
    "true_divide(Tensor self, Tensor other) -> Tensor",
    composite=lambda self, other: div(self, other), wraps_numbers=True,
    samples=lambda op: binary_samples(other_low=0.5, other_high=2.0)(op) + [
        SampleInput("int64/2", make_arg((4,), key=(op, "i"), dtype=dtypes.int64, low=-3, high=4, integer=True), 2)],
    torch="torch.true_divide",
    doc="self / other with true (float) division: div without rounding_mode (DivBackward0).")


def _to_double(x):
    if _is_number(x):
        return float(x)
    return x if x.dtype == dtypes.float64 else to(x, dtype=dtypes.float64)


def _float_power(self, exponent):
    return _pow(_to_double(self), _to_double(exponent))


float_power = defop(
    "float_power(Tensor self, Tensor exponent) -> Tensor",
    composite=_float_power, wraps_numbers=True,
    samples=lambda op: [
        SampleInput("tensor^2", make_arg((2, 3), key=(op, 0), low=0.5, high=2.0), 2),
        SampleInput("tensor^tensor", make_arg((3,), key=(op, 1), low=0.5, high=2.0),
                    make_arg((2, 3), key=(op, 2), low=-1.5, high=1.5)),
        SampleInput("2^tensor", 2, make_arg((4,), key=(op, 3))),
        SampleInput("float32^1.5", make_arg((3,), key=(op, 4), dtype=dtypes.float32, low=0.5, high=2.0,
                                            requires_grad=False), 1.5),
        SampleInput("int64^2", make_arg((4,), key=(op, 5), dtype=dtypes.int64, low=-3, high=4, integer=True), 2)],
    torch="torch.float_power",
    doc="self ** exponent computed in float64 (the result is float64 whatever the inputs).")


# ---- logit -----------------------------------------------------------------------------------

def _logit_kernel(xp, self, eps):
    x = self if eps is None else xp.clip(self, eps, 1 - eps)
    with np.errstate(divide="ignore", invalid="ignore"):
        return xp.log(x / (1 - x)).astype(self.dtype, copy=False)


def _logit_backward(grad, self, eps):
    # logit_backward: grad / (x (1 - x)); outside [eps, 1 - eps] 0 (with eps), outside [0, 1] NaN (without)
    out = grad / (self * (1 - self))
    if eps is None:
        return where(logical_or(lt(self, 0), gt(self, 1)), math.nan, out)
    return where(logical_or(lt(self, eps), gt(self, 1 - eps)), 0.0, out)


logit = defop(
    "logit(Tensor self, float? eps=None) -> Tensor",
    kernel=_logit_kernel, meta=_same_meta, promote="float",
    grads={"self": _logit_backward},
    samples=lambda op: [
        SampleInput("(3,4)", make_arg((3, 4), key=(op, 0), low=0.1, high=0.9)),
        SampleInput("(5,) eps", make_arg((5,), key=(op, 1), low=0.25, high=0.75), 0.2),
        SampleInput("0-d eps kw", make_arg((), key=(op, 2), low=0.1, high=0.9), eps=1e-6),
        SampleInput("(4,3)T", make_arg((4, 3), key=(op, 3), low=0.1, high=0.9, transposed=True))],
    torch="torch.logit",
    doc="log(p / (1 - p)); with eps, p is first clamped to [eps, 1 - eps].")


# ---- heaviside: no derivative ------------------------------------------------------------------

def _heaviside_check(self, values):
    if self.dtype != values.dtype:
        raise DtypeError("heaviside is not yet implemented for tensors with different dtypes.")


def _heaviside_meta(self, values):
    _heaviside_check(self, values)
    return _same_meta(self, values)


def _heaviside_kernel(xp, self, values):
    _heaviside_check(self, values)
    return xp.where(self == 0, values, self > 0).astype(self.dtype, copy=False)


def _heaviside_not_implemented(grad):
    raise RuntimeError("derivative for aten::heaviside is not implemented")


heaviside = defop(
    "heaviside(Tensor self, Tensor values) -> Tensor",
    kernel=_heaviside_kernel, meta=_heaviside_meta,
    # PyTorch records a node named NotImplemented whose backward raises (derivatives.yaml: not_implemented)
    grads={"self": _heaviside_not_implemented, "values": _heaviside_not_implemented},
    backward_name="NotImplemented", differentiable=False,
    samples=lambda op: [
        SampleInput("(5,)x(1,)", tensor([-1.5, 0.0, 2.0, 0.0, -0.0], dtype=dtypes.float64),
                    tensor([0.5], dtype=dtypes.float64)),
        SampleInput("(2,3)x(3,)", make_arg((2, 3), key=(op, 0), low=-2, high=3, integer=True, dtype=dtypes.int64),
                    make_arg((3,), key=(op, 1), low=5, high=8, integer=True, dtype=dtypes.int64))],
    torch="torch.heaviside",
    doc="0 where self < 0, values where self == 0, 1 where self > 0 (same dtypes required; no gradient).")


# ---- sinc, deg2rad, rad2deg --------------------------------------------------------------------

def _sinc_grad(grad, self):
    px = self * math.pi
    out = grad * ((px * cos(px) - sin(px)) / (px * self))
    return where(eq(self, 0), 0.0, out)


sinc = defop(
    "sinc(Tensor self) -> Tensor",
    kernel=lambda xp, self: xp.sinc(self), meta=_same_meta, promote="float",
    grads={"self": _sinc_grad},
    samples=lambda op: unary_samples(away_from=0.0)(op) + [_int_sample(op, low=1, high=4)],
    torch="torch.sinc",
    doc="sin(pi x) / (pi x), 1 at 0.")

deg2rad = defop(
    "deg2rad(Tensor self) -> Tensor",
    kernel=lambda xp, self: (self * _DEG).astype(self.dtype, copy=False), meta=_same_meta, promote="float",
    grads={"self": lambda grad: grad * _DEG},
    backward_name="Deg2RadBackward0",
    samples=lambda op: unary_samples(low=-360, high=360)(op) + [_int_sample(op, low=-180, high=180)],
    torch="torch.deg2rad",
    doc="Degrees to radians: self * pi / 180.")

rad2deg = defop(
    "rad2deg(Tensor self) -> Tensor",
    kernel=lambda xp, self: (self / _DEG).astype(self.dtype, copy=False), meta=_same_meta, promote="float",
    grads={"self": lambda grad: grad / _DEG},
    backward_name="Rad2DegBackward0",
    samples=lambda op: unary_samples(low=-4, high=4)(op) + [_int_sample(op)],
    torch="torch.rad2deg",
    doc="Radians to degrees: self * 180 / pi.")


# ---- fmax, fmin: NaN-ignoring maximum and minimum ---------------------------------------------

def _picks_self(cmp):
    """Where the result is self's element: self wins the comparison, or other is NaN."""
    return lambda self, other: logical_or(cmp(self, other), isnan(other))


def _fminmax(name, ufunc, cmp):
    picks = _picks_self(cmp)
    return defop(
        f"{name}(Tensor self, Tensor other) -> Tensor",
        kernel=lambda xp, self, other: getattr(xp, ufunc)(self, other), meta=_same_meta, promote="same",
        grads={"self": lambda grad, self, other: where(picks(self, other), grad, 0.0),
               "other": lambda grad, self, other: where(picks(self, other), 0.0, grad)},
        samples=lambda op: binary_samples(scalar_other=None)(op) + [
            SampleInput("nan", tensor([1.0, math.nan, -2.0], dtype=dtypes.float64,
                                            requires_grad=True),
                        tensor([math.nan, 3.0, 0.5], dtype=dtypes.float64, requires_grad=True)),
            SampleInput("int64", make_arg((4,), key=(op, "i"), dtype=dtypes.int64, low=-3, high=4, integer=True),
                        make_arg((4,), key=(op, "j"), dtype=dtypes.int64, low=-3, high=4, integer=True))],
        torch=f"torch.{name}",
        doc=f"Elementwise {name[1:]}imum that ignores NaN (NaN only where both are NaN).")


fmax = _fminmax("fmax", "fmax", lambda a, b: ge(a, b))
fmin = _fminmax("fmin", "fmin", lambda a, b: le(a, b))


# ---- clamp_max ----------------------------------------------------------------------------------

clamp_max = defop(
    "clamp_max(Tensor self, Tensor max) -> Tensor",
    kernel=lambda xp, self, max: xp.minimum(self, max), meta=_same_meta, promote="same",  # noqa: A006
    wraps_numbers=True,
    grads={"self": lambda grad, self, max: where(le(self, max), grad, 0.0),  # noqa: A006
           "max": lambda grad, self, max: where(gt(self, max), grad, 0.0)},  # noqa: A006
    # clamp_max (Scalar max): ClampMaxBackward0; clamp_max.Tensor: ClampMaxBackward1
    backward_name=("ClampMaxBackward0", "ClampMaxBackward1"),
    overload=lambda self, max: 0 if _is_number(max) else 1,  # noqa: A006
    samples=lambda op: [
        SampleInput("(3,4) 0", make_arg((3, 4), key=(op, 0), away_from=0.0), 0.0),
        SampleInput("(5,) 0.5", make_arg((5,), key=(op, 1), away_from=0.5), 0.5),
        SampleInput("(2,3)x(3,)", make_arg((2, 3), key=(op, 2)), make_arg((3,), key=(op, 3), low=-0.5, high=0.5)),
        SampleInput("int64 2.5", make_arg((4,), key=(op, 4), dtype=dtypes.int64, low=-3, high=5, integer=True), 2.5),
        SampleInput("int64 2", make_arg((4,), key=(op, 5), dtype=dtypes.int64, low=-3, high=5, integer=True), 2)],
    torch="torch.clamp_max",
    doc="min(self, max); the gradient flows to self where self <= max and to a tensor max elsewhere.")
