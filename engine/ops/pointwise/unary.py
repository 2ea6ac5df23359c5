"""Unary elementwise math (ATen's UnaryOps): neg, abs, sign, exp, log and their
relatives (log1p, expm1, log2, log10, exp2, logit), sqrt, rsqrt, reciprocal, square,
trigonometry (sin, cos, tan and the inverse and hyperbolic forms, sinc, deg2rad, rad2deg),
rounding (floor, ceil, trunc, round, frac) and nan_to_num.

Each gradient is the formula of PyTorch's derivatives.yaml, written with agrad ops.
Dtypes follow PyTorch: the "unary float" ops compute integers in the default float;
abs, sign, neg and rounding keep the input's dtype (rounding an integer tensor is a copy);
ops PyTorch has no integer kernel for raise as PyTorch does.
"""
from __future__ import annotations

import builtins
import math

import numpy as np

from ... import dtypes
from ...creation import tensor as _tensor
from ...creation import zeros_like
from ...backends.meta import MetaArray
from ...dispatcher import ops as _ops
from ...errors import DtypeError, DtypeNotImplementedError
from ...shapes import pointwise_meta
from ...messages import scalar_type_name
from .._common import _float_only, _named_results, conj_of
from ..registry import defop
from ..samples import (
    SampleInput,
    make_arg,
    off_integers,
    positive_unary_samples,
    unary_samples,
)
from .binary import (
    _checked_meta,
    _is_integral,
    eq,
    gt,
    lt,
    pow,  # noqa: A004
    where,
)
from .logical import logical_or

same_meta = pointwise_meta()


def _no_bool_neg(rule):
    def checked(*args):
        if args[-1].dtype == np.bool_:
            raise DtypeError("Negation, the `-` operator, on a bool tensor is not supported. If you are trying "
                             "to invert a mask, use the `~` or `logical_not()` operator instead.")
        return rule(*args)
    return checked


neg = defop(
    "neg(Tensor self) -> Tensor",
    kernel=_no_bool_neg(lambda xp, self: xp.negative(self)), meta=_no_bool_neg(same_meta), supports_complex=True,
    grads={"self": lambda grad: -grad},
    samples=unary_samples(), torch="torch.neg")

exp = defop(
    "exp(Tensor self) -> Tensor",
    kernel=lambda xp, self: xp.exp(self), meta=same_meta, promote="float", supports_complex=True,
    grads={"self": lambda grad, result: grad * conj_of(result)},
    samples=unary_samples(), torch="torch.exp")

log = defop(
    "log(Tensor self) -> Tensor",
    kernel=lambda xp, self: xp.log(self), meta=same_meta, promote="float", supports_complex=True,
    grads={"self": lambda grad, self: grad / conj_of(self)},
    samples=positive_unary_samples(), torch="torch.log")


def _abs_check(self):
    # NOTE: PyTorch's abs kernel is dispatched over numeric types only; a bool tensor has no abs
    if self.dtype == np.bool_:
        raise DtypeNotImplementedError(f"\"abs_cpu\" not implemented for '{scalar_type_name(self.dtype)}'")
    return self


def _sign_kernel(xp, self):
    # PyTorch's sign of a bool tensor is the tensor itself; NumPy has no bool loop for sign
    return self.copy() if self.dtype == np.bool_ else xp.sign(self)


sqrt = defop(
    "sqrt(Tensor self) -> Tensor",
    kernel=lambda xp, self: xp.sqrt(self), meta=same_meta, promote="float", supports_complex=True,
    grads={"self": lambda grad, result: grad / (2 * conj_of(result))},
    samples=positive_unary_samples(), torch="torch.sqrt")

def _rsqrt_grad(grad, c):
    # derivatives.yaml: -0.5 * grad * result.pow(3).conj(), `c` the conjugated result
    return -0.5 * grad * c * c * c


rsqrt = defop(
    "rsqrt(Tensor self) -> Tensor",
    kernel=lambda xp, self: (1 / xp.sqrt(self)).astype(self.dtype, copy=False), meta=same_meta, promote="float",
    supports_complex=True,
    grads={"self": lambda grad, result: _rsqrt_grad(grad, conj_of(result))},
    samples=positive_unary_samples(), torch="torch.rsqrt")

def _real_meta(self):
    """A pointwise Meta rule whose result is real: a complex input's real dtype (abs, angle)."""
    return MetaArray(self.shape, self.dtype.type(0).real.dtype if self.dtype.kind == "c" else self.dtype)


abs = defop(  # noqa: A001 — PyTorch's name
    "abs(Tensor self) -> Tensor",
    kernel=lambda xp, self: xp.abs(_abs_check(self)),
    meta=lambda self: _real_meta(_abs_check(self)), supports_complex=True,
    grads={"self": lambda grad, self: grad * sgn(self)},        # derivatives.yaml: grad * self.sgn()
    samples=unary_samples(away_from=0.0), torch="torch.abs")

sign = defop(
    "sign(Tensor self) -> Tensor",
    kernel=_sign_kernel, meta=same_meta,
    # NOTE: the derivative is 0 everywhere but at 0, where PyTorch also says 0 (not a delta)
    grads={"self": lambda grad: zeros_like(grad)},
    samples=unary_samples(away_from=0.0), torch="torch.sign")

def _sgn_kernel(xp, self):
    if self.dtype.kind != "c":
        return _sign_kernel(xp, self)
    magnitude = xp.abs(self)
    return xp.where(magnitude == 0, 0, self / xp.where(magnitude == 0, 1, magnitude)).astype(self.dtype, copy=False)


def _sgn_grad(grad, self, result):
    """FunctionsManual's sgn_backward: (grad - sgn² conj(grad)) / (2 |z|), 0 where z = 0; zero for a
    real input (sign's derivative)."""
    if not self.is_complex():
        return zeros_like(grad)
    magnitude = abs(self)
    return ((grad - result * result * grad.conj()) / (2 * magnitude)).masked_fill(magnitude == 0, 0)


# sgn is sign extended to complex numbers (z / |z|); on real tensors the values are sign's, but it is
# its own op in PyTorch (SgnBackward0, whose formula for a real input is zero)
sgn = defop(
    "sgn(Tensor self) -> Tensor",
    kernel=_sgn_kernel, meta=same_meta, supports_complex=True,
    grads={"self": _sgn_grad},
    samples=unary_samples(away_from=0.0), torch="torch.sgn")

sin = defop(
    "sin(Tensor self) -> Tensor",
    kernel=lambda xp, self: xp.sin(self), meta=same_meta, promote="float", supports_complex=True,
    grads={"self": lambda grad, self: grad * conj_of(cos(self))},
    array_grads={"self": lambda grad, self: grad * conj_of(np.cos(self))},
    samples=unary_samples(low=-4.0, high=4.0), torch="torch.sin")

cos = defop(
    "cos(Tensor self) -> Tensor",
    kernel=lambda xp, self: xp.cos(self), meta=same_meta, promote="float", supports_complex=True,
    grads={"self": lambda grad, self: grad * -conj_of(sin(self))},
    array_grads={"self": lambda grad, self: grad * -conj_of(np.sin(self))},
    samples=unary_samples(low=-4.0, high=4.0), torch="torch.cos")

_LN2 = math.log(2.0)
_LN10 = math.log(10.0)


def _int_sample(op, low=-4, high=5):
    return SampleInput("int64", make_arg((5,), key=(op, "int"), dtype=dtypes.int64, low=low, high=high,
                                         integer=True))


def _with_int(samples, low=-4, high=5):
    return lambda op: samples(op) + [_int_sample(op, low, high)]


# ---- logs, exponentials, reciprocal, square -------------------------------------------------

def _unary_float(name, ufunc, formula, samples, backward_name=None, supports_complex=False):
    return defop(f"{name}(Tensor self) -> Tensor",
                 kernel=lambda xp, self: getattr(xp, ufunc)(self), meta=same_meta, promote="float",
                 grads={"self": formula}, backward_name=backward_name, samples=samples, torch=f"torch.{name}",
                 supports_complex=supports_complex)


log1p = _unary_float("log1p", "log1p", lambda grad, self: grad / conj_of(self + 1),
                     _with_int(unary_samples(low=-0.5, high=2.0), 0, 5), backward_name="Log1PBackward0",
                     supports_complex=True)
expm1 = _unary_float("expm1", "expm1", lambda grad, result: grad * conj_of(result + 1), _with_int(unary_samples()),
                     supports_complex=True)
log2 = _unary_float("log2", "log2", lambda grad, self: grad / (conj_of(self) * _LN2),
                    _with_int(positive_unary_samples(), 1, 9), supports_complex=True)
log10 = _unary_float("log10", "log10", lambda grad, self: grad / (conj_of(self) * _LN10),
                     _with_int(positive_unary_samples(), 1, 9), supports_complex=True)
exp2 = _unary_float("exp2", "exp2", lambda grad, result: grad * conj_of(result) * _LN2, _with_int(unary_samples()),
                    supports_complex=True)
reciprocal = _unary_float("reciprocal", "reciprocal", lambda grad, result: -grad * conj_of(result * result),
                          _with_int(unary_samples(away_from=0.0), 1, 9), supports_complex=True)

square = defop(
    "square(Tensor self) -> Tensor",
    composite=lambda self: pow(self, 2),       # PyTorch's composite: its grad_fn is PowBackward0
    samples=_with_int(unary_samples()), torch="torch.square")


# ---- inverse and hyperbolic trigonometry -----------------------------------------------------

asin = _unary_float("asin", "arcsin", lambda grad, self: grad * conj_of(rsqrt(-self * self + 1)),
                    _with_int(unary_samples(low=-0.9, high=0.9), -1, 2), supports_complex=True)
acos = _unary_float("acos", "arccos", lambda grad, self: grad * -conj_of(rsqrt(-self * self + 1)),
                    _with_int(unary_samples(low=-0.9, high=0.9), -1, 2), supports_complex=True)
atan = _unary_float("atan", "arctan", lambda grad, self: grad / conj_of(self * self + 1), _with_int(unary_samples()),
                    supports_complex=True)
tan = _unary_float("tan", "tan", lambda grad, result: grad * conj_of(result * result + 1),
                   _with_int(unary_samples(low=-1.2, high=1.2), -1, 2), supports_complex=True)
sinh = _unary_float("sinh", "sinh", lambda grad, self: grad * conj_of(cosh(self)), _with_int(unary_samples()),
                    supports_complex=True)
cosh = _unary_float("cosh", "cosh", lambda grad, self: grad * conj_of(sinh(self)), _with_int(unary_samples()),
                    supports_complex=True)
asinh = _unary_float("asinh", "arcsinh", lambda grad, self: grad * conj_of(rsqrt(self * self + 1)),
                     _with_int(unary_samples()), supports_complex=True)


def _acosh_grad(grad, self):
    # derivatives.yaml's: sqrt(x*y) = sqrt(x)*sqrt(y) holds for real x, y >= 0 only, so a complex self takes
    # the two square roots (the branch acosh itself has) and the real case saves one
    if self.dtype.is_complex:
        return grad * conj_of(rsqrt(self + 1) * rsqrt(self - 1))
    return grad * rsqrt(self * self - 1)


acosh = _unary_float("acosh", "arccosh", _acosh_grad, _with_int(positive_unary_samples(1.2, 3.0), 1, 5),
                     supports_complex=True)
atanh = _unary_float("atanh", "arctanh", lambda grad, self: grad / conj_of(1 - self * self),
                     _with_int(unary_samples(low=-0.9, high=0.9), 0, 1), supports_complex=True)


# ---- rounding: piecewise constant, so a zero gradient --------------------------------------

def _rounding(name, ufunc):
    def kernel(xp, self):
        # NOTE: an integer tensor is already rounded: PyTorch returns a copy of the same dtype
        return self.copy() if _is_integral(self) else getattr(xp, ufunc)(self)
    return defop(f"{name}(Tensor self) -> Tensor", kernel=kernel, meta=same_meta,
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
        raise DtypeNotImplementedError(f"\"{kernel}\" not implemented for '{scalar_type_name(self.dtype)}'")


def _round_kernel(xp, self, decimals):
    _round_check(self, decimals)
    if _is_integral(self):
        return self.copy()
    if not decimals:
        return xp.rint(self)            # half to even, as std::nearbyint
    # PyTorch's round.decimals: scale by 10^|decimals| in the tensor's dtype, round, scale back
    ten_pow = self.dtype.type(10.0 ** builtins.abs(decimals))     # a scalar of the dtype: NumPy and CuPy alike
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
    kernel=_nan_to_num_kernel, meta=same_meta,
    # NOTE: PyTorch's grad * isfinite(self); `abs(self) < inf` is False for nan and for +-inf
    grads={"self": lambda grad, self: where(self.abs() < math.inf, grad, 0.0)},
    samples=_nan_to_num_samples, torch="torch.nan_to_num")
_DEG = math.pi / 180.0


def _int64_sample(op, name="int64", low=-3, high=4, shape=(5,)):
    return SampleInput(name, make_arg(shape, key=(op, name), dtype=dtypes.int64, low=low, high=high, integer=True))


# ---- logit -----------------------------------------------------------------------------------

def _logit_kernel(xp, self, eps):
    x = self if eps is None else xp.clip(self, eps, 1 - eps)
    return xp.log(x / (1 - x)).astype(self.dtype, copy=False)


def _logit_backward(grad, self, eps):
    # logit_backward: grad / (x (1 - x)); outside [eps, 1 - eps] 0 (with eps), outside [0, 1] NaN (without)
    out = grad / (self * (1 - self))
    if eps is None:
        return where(logical_or(lt(self, 0), gt(self, 1)), math.nan, out)
    return where(logical_or(lt(self, eps), gt(self, 1 - eps)), 0.0, out)


logit = defop(
    "logit(Tensor self, float? eps=None) -> Tensor",
    kernel=_logit_kernel, meta=same_meta, promote="float",
    grads={"self": _logit_backward},
    samples=lambda op: [
        SampleInput("(3,4)", make_arg((3, 4), key=(op, 0), low=0.1, high=0.9)),
        SampleInput("(5,) eps", make_arg((5,), key=(op, 1), low=0.25, high=0.75), 0.2),
        SampleInput("0-d eps kw", make_arg((), key=(op, 2), low=0.1, high=0.9), eps=1e-6),
        SampleInput("(4,3)T", make_arg((4, 3), key=(op, 3), low=0.1, high=0.9, transposed=True))],
    torch="torch.logit",
    doc="log(p / (1 - p)); with eps, p is first clamped to [eps, 1 - eps].")


# ---- sinc, deg2rad, rad2deg --------------------------------------------------------------------

def _sinc_grad(grad, self):
    px = self * math.pi
    out = grad * conj_of((px * cos(px) - sin(px)) / (px * self))
    return where(eq(self, 0), 0.0, out)


sinc = defop(
    "sinc(Tensor self) -> Tensor",
    kernel=lambda xp, self: xp.sinc(self), meta=same_meta, promote="float", supports_complex=True,
    grads={"self": _sinc_grad},
    samples=lambda op: unary_samples(away_from=0.0)(op) + [_int64_sample(op, low=1, high=4)],
    torch="torch.sinc",
    doc="sin(pi x) / (pi x), 1 at 0.")

deg2rad = defop(
    "deg2rad(Tensor self) -> Tensor",
    kernel=lambda xp, self: (self * _DEG).astype(self.dtype, copy=False), meta=same_meta, promote="float",
    grads={"self": lambda grad: grad * _DEG},
    backward_name="Deg2RadBackward0",
    samples=lambda op: unary_samples(low=-360, high=360)(op) + [_int64_sample(op, low=-180, high=180)],
    torch="torch.deg2rad",
    doc="Degrees to radians: self * pi / 180.")

rad2deg = defop(
    "rad2deg(Tensor self) -> Tensor",
    kernel=lambda xp, self: (self / _DEG).astype(self.dtype, copy=False), meta=same_meta, promote="float",
    grads={"self": lambda grad: grad / _DEG},
    backward_name="Rad2DegBackward0",
    samples=lambda op: unary_samples(low=-4, high=4)(op) + [_int64_sample(op)],
    torch="torch.rad2deg",
    doc="Radians to degrees: self * 180 / pi.")


# ---- frexp ---------------------------------------------------------------------------------------

def _frexp_check(self):
    if self.dtype.kind != "f":
        raise DtypeError("torch.frexp() only supports floating-point dtypes")


def _frexp_kernel(xp, self):
    _frexp_check(self)
    mantissa, exponent = xp.frexp(self)
    return mantissa.astype(self.dtype, copy=False), exponent.astype(np.int32, copy=False)


def _frexp_meta(self):
    _frexp_check(self)
    return MetaArray(self.shape, self.dtype), MetaArray(self.shape, np.int32)


frexp = _named_results(defop(
    "frexp(Tensor self) -> (Tensor mantissa, Tensor exponent)",
    kernel=_frexp_kernel, meta=_frexp_meta,
    # derivatives.yaml: self: grad / exponent.exp2() (the exponent is piecewise constant, an integer)
    # NOTE: the saved exponent detached: a saved output is unpacked with this Node as its grad_fn, which
    # would make the (integer, constant) exponent a path for double backward
    grads={"self": lambda grad, result: grad / _ops.exp2(result[1].detach())},
    samples=lambda op: unary_samples(low=-8, high=8, away_from=0.0)(op),
    torch="torch.frexp",
    doc="(mantissa, exponent): self = mantissa * 2 ** exponent, |mantissa| in [0.5, 1) (0 for 0), the exponent "
        "int32."), "frexp")
