"""Special functions: erf, erfc, erfinv, lgamma, digamma, polygamma, xlogy, igamma, igammac, and
torch.special's ndtr, ndtri, log_ndtr, erfcx, entr, xlog1py, zeta and mvlgamma (multigammaln).

NumPy has none of them; each kernel takes the backend's special-function namespace
(`special`: scipy.special on CPU, cupyx.scipy.special on CUDA, imported on first use)
beside `xp`. They are PyTorch's "unary float" ops: integer and bool inputs compute in
the default float. The gradients are derivatives.yaml's, written with agrad ops, and
each derivative is another op of this file (erf' is exp, lgamma' is digamma,
digamma' is polygamma(1, ·), polygamma(n, ·)' is polygamma(n + 1, ·)).
"""
from __future__ import annotations

import math

from ... import dtypes
from ...shapes import pointwise_meta
from .._common import _float_only
from ..registry import NotImplementedDerivative, defop
from ..samples import (
    SampleInput,
    binary_samples,
    make_arg,
    positive_unary_samples,
    unary_samples,
)
from ...creation import arange
from ..reduce.arithmetic import sum  # noqa: A004 — PyTorch's name
from ..shape.view import unsqueeze
from .binary import where
from .unary import exp, log

_same_meta = pointwise_meta()
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)   # PyTorch's M_2_SQRTPI
_HALF_SQRT_PI = 0.5 * math.sqrt(math.pi)


def _with_int_sample(samples, low, high):
    """The op's float samples and an int64 one (the result is the default float, as in PyTorch)."""
    def all_samples(op):
        ints = make_arg((5,), key=(op, "int"), dtype=dtypes.int64, low=low, high=high, integer=True)
        return samples(op) + [SampleInput("int64", ints)]
    return all_samples


# ---- the error function ---------------------------------------------------------------------

erf = defop(
    "erf(Tensor self) -> Tensor",
    kernel=lambda xp, special, self: special.erf(self).astype(self.dtype, copy=False),
    meta=_same_meta, promote="float", special=True,
    grads={"self": lambda grad, self: _TWO_OVER_SQRT_PI * exp(-(self * self)) * grad},
    samples=_with_int_sample(unary_samples(low=-2.5, high=2.5), -3, 4), torch="torch.erf")

erfc = defop(
    "erfc(Tensor self) -> Tensor",
    kernel=lambda xp, special, self: special.erfc(self).astype(self.dtype, copy=False),
    meta=_same_meta, promote="float", special=True,
    grads={"self": lambda grad, self: -_TWO_OVER_SQRT_PI * exp(-(self * self)) * grad},
    samples=_with_int_sample(unary_samples(low=-2.5, high=2.5), -3, 4), torch="torch.erfc")

erfinv = defop(
    "erfinv(Tensor self) -> Tensor",
    kernel=lambda xp, special, self: special.erfinv(self).astype(self.dtype, copy=False),
    meta=_same_meta, promote="float", special=True,
    # PyTorch: 0.5 * sqrt(M_PI) * exp(self.erfinv().pow(2)) * grad; the result is that erfinv
    grads={"self": lambda grad, result: _HALF_SQRT_PI * exp(result * result) * grad},
    samples=_with_int_sample(unary_samples(low=-0.9, high=0.9), -1, 2), torch="torch.erfinv")


# ---- the gamma function ---------------------------------------------------------------------

def _lgamma_kernel(xp, special, self):
    out = special.gammaln(self)
    # NOTE: gammaln(-inf) is -inf in SciPy; PyTorch (std::lgamma) says +inf
    return xp.where(self == -math.inf, math.inf, out).astype(self.dtype, copy=False)


def _lgamma_samples(op):
    # negative non-integers too (lgamma is log|Gamma| there), kept 0.1 away from the poles
    return positive_unary_samples(0.5, 4.0)(op) + [
        SampleInput(f"({lo + 0.9:g}, {lo + 0.1:g})", make_arg((2, 3), key=(op, lo), low=lo + 0.1, high=lo + 0.9))
        for lo in (-1.0, -2.0)]


def _polygamma_kernel(xp, special, n, self):
    _check_order(n)
    # NOTE: n as an array: cupyx's polygamma broadcasts its arguments as arrays
    out = special.psi(self) if n == 0 else special.polygamma(xp.asarray(n), self)
    return out.astype(self.dtype, copy=False)


def _check_order(n):
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")


def _polygamma_meta(n, self):
    _check_order(n)
    return _same_meta(self)


lgamma = defop(
    "lgamma(Tensor self) -> Tensor",
    kernel=_lgamma_kernel, meta=_same_meta, promote="float", special=True,
    grads={"self": lambda grad, self: grad * digamma(self)},
    samples=_lgamma_samples, torch="torch.lgamma")

digamma = defop(
    "digamma(Tensor self) -> Tensor",
    kernel=lambda xp, special, self: special.psi(self).astype(self.dtype, copy=False),
    meta=_same_meta, promote="float", special=True,
    grads={"self": lambda grad, self: grad * polygamma(1, self)},
    samples=_with_int_sample(positive_unary_samples(0.5, 4.0), 1, 6), torch="torch.digamma")

polygamma = defop(
    "polygamma(int n, Tensor self) -> Tensor",
    kernel=_polygamma_kernel, meta=_polygamma_meta, promote="float", special=True,
    grads={"self": lambda grad, n, self: grad * polygamma(n + 1, self)},
    samples=lambda op: [SampleInput(f"n={n}", n, make_arg((3, 4), key=(op, n), low=0.5, high=4.0))
                        for n in (0, 1, 2, 3)],
    torch="torch.polygamma")


# ---- xlogy ----------------------------------------------------------------------------------

def _is_number(x) -> bool:
    return not hasattr(x, "shape")


def _xlogy_kernel(xp, special, self, other):
    # x * log(y), 0 where x == 0 (also for y == 0 or y < 0), NaN where y is NaN: as PyTorch's
    dtype = (other if _is_number(self) else self).dtype
    return xp.asarray(special.xlogy(self, other)).astype(dtype, copy=False)


def _xlogy_self_grad(grad, self, other):
    # PyTorch: at::xlogy(grad, other).masked_fill((self == 0.) & (other <= 0.), 0.)
    if _is_number(other):
        return xlogy(grad, other) if other > 0 else where(self == 0, 0.0, xlogy(grad, other))
    return where((self == 0) * (other <= 0), 0.0, xlogy(grad, other))


def _xlogy_samples(op):
    x = make_arg((2, 3), key=(op, "x"))
    zeros = x.detach().mul(make_arg((2, 3), key=(op, "m"), requires_grad=False) > 0).requires_grad_()
    return binary_samples(other_low=0.5, other_high=3.0, scalar_other=2.5)(op) + [
        SampleInput("zeros in self", zeros, make_arg((2, 3), key=(op, "y"), low=0.5, high=3.0)),
        SampleInput("scalar self", 1.5, make_arg((4,), key=(op, "s"), low=0.5, high=3.0))]


xlogy = defop(
    "xlogy(Tensor self, Tensor other) -> Tensor",
    kernel=_xlogy_kernel, meta=_same_meta, promote="float", special=True, wraps_numbers=True,
    grads={"self": _xlogy_self_grad, "other": lambda grad, self, other: grad * self / other},
    # PyTorch's overloads: xlogy.Tensor, xlogy.Scalar_Self, xlogy.Scalar_Other
    backward_name=("XlogyBackward0", "XlogyBackward1", "XlogyBackward2"),
    overload=lambda self, other: 1 if _is_number(self) else (2 if _is_number(other) else 0),
    samples=_xlogy_samples, torch="torch.xlogy")


# ---- the normal distribution's CDF ------------------------------------------------------------

_SQRT1_2 = math.sqrt(0.5)     # PyTorch's M_SQRT1_2


def _ndtr(self):
    # PyTorch's special_ndtr: (1 + erf(x / √2)) / 2, composed of erf (its grad_fn MulBackward1)
    return (1 + erf(self * _SQRT1_2)) * 0.5


special_ndtr = defop(
    "special_ndtr(Tensor self) -> Tensor", composite=_ndtr,
    samples=unary_samples(low=-3.0, high=3.0), torch="torch.special.ndtr",
    doc="The standard normal distribution's CDF: P(Z <= self).")


# ---- the normal distribution: its quantile, log-CDF, and the scaled complementary erf ---------------

_SQRT_2PI = math.sqrt(2 * math.pi)

special_ndtri = defop(
    "special_ndtri(Tensor self) -> Tensor",
    kernel=lambda xp, special, self: special.ndtri(self).astype(self.dtype, copy=False),
    meta=_same_meta, promote="float", special=True,
    grads={"self": lambda grad, result: grad * _SQRT_2PI * exp(result * result / 2)},
    backward_name="SpecialNdtriBackward0",
    samples=unary_samples(low=0.05, high=0.95), torch="torch.special.ndtri",
    doc="The standard normal distribution's quantile: the x where ndtr(x) = self.")

special_log_ndtr = defop(
    "special_log_ndtr(Tensor self) -> Tensor",
    kernel=lambda xp, special, self: special.log_ndtr(self).astype(self.dtype, copy=False),
    meta=_same_meta, promote="float", special=True,
    grads={"self": lambda grad, self, result: grad / _SQRT_2PI * exp(-(result + self * self / 2))},
    backward_name="SpecialLogNdtrBackward0",
    samples=_with_int_sample(unary_samples(low=-4.0, high=3.0), -5, 4), torch="torch.special.log_ndtr",
    doc="log of the standard normal distribution's CDF, accurate far into the lower tail.")

special_erfcx = defop(
    "special_erfcx(Tensor self) -> Tensor",
    kernel=lambda xp, special, self: special.erfcx(self).astype(self.dtype, copy=False),
    meta=_same_meta, promote="float", special=True,
    grads={"self": lambda grad, self, result: (2.0 * self * result - _TWO_OVER_SQRT_PI) * grad},
    backward_name="SpecialErfcxBackward0",
    samples=_with_int_sample(unary_samples(low=-2.0, high=3.0), -2, 4), torch="torch.special.erfcx",
    doc="exp(x²) erfc(x), the scaled complementary error function.")


# ---- entropy, xlog1py ---------------------------------------------------------------------------

special_entr = defop(
    "special_entr(Tensor self) -> Tensor",
    kernel=lambda xp, special, self: special.entr(self).astype(self.dtype, copy=False),
    meta=_same_meta, promote="float", special=True,
    grads={"self": lambda grad, self: grad * (-(1 + log(self)))},
    backward_name="SpecialEntrBackward0",
    samples=_with_int_sample(positive_unary_samples(0.1, 3.0), 0, 4), torch="torch.special.entr",
    doc="-x log x elementwise (0 at 0, -inf below it): the terms of an entropy.")


def _xlog1py_kernel(xp, special, self, other):
    # x * log1p(y), 0 where x == 0 (whatever y, but NaN), as PyTorch's
    dtype = (other if _is_number(self) else self).dtype
    return xp.asarray(special.xlog1py(self, other)).astype(dtype, copy=False)


def _xlog1py_self_grad(grad, self, other):
    # derivatives.yaml: at::special_xlog1py(grad, other).masked_fill((self == 0.) & (other <= -1.), 0.)
    if _is_number(other):
        return special_xlog1py(grad, other) if other > -1 else where(self == 0, 0.0, special_xlog1py(grad, other))
    return where((self == 0) * (other <= -1), 0.0, special_xlog1py(grad, other))


def _xlog1py_samples(op):
    x = make_arg((2, 3), key=(op, "x"))
    zeros = x.detach().mul(make_arg((2, 3), key=(op, "m"), requires_grad=False) > 0).requires_grad_()
    return binary_samples(other_low=-0.5, other_high=3.0, scalar_other=1.5)(op) + [
        SampleInput("zeros in self", zeros, make_arg((2, 3), key=(op, "y"), low=-0.5, high=3.0)),
        SampleInput("scalar self", 1.5, make_arg((4,), key=(op, "s"), low=-0.5, high=3.0))]


special_xlog1py = defop(
    "special_xlog1py(Tensor self, Tensor other) -> Tensor",
    kernel=_xlog1py_kernel, meta=_same_meta, promote="float", special=True, wraps_numbers=True,
    grads={"self": _xlog1py_self_grad, "other": lambda grad, self, other: grad * self / (other + 1)},
    # PyTorch's overloads: special_xlog1py, .self_scalar, .other_scalar
    backward_name=("SpecialXlog1PyBackward0", "SpecialXlog1PyBackward1", "SpecialXlog1PyBackward2"),
    overload=lambda self, other: 1 if _is_number(self) else (2 if _is_number(other) else 0),
    samples=_xlog1py_samples, torch="torch.special.xlog1py",
    doc="self * log1p(other), 0 where self is 0.")


# ---- the Hurwitz zeta function --------------------------------------------------------------------

def _zeta_kernel(xp, special, self, other):
    dtype = (other if _is_number(self) else self).dtype
    return xp.asarray(special.zeta(self, other)).astype(dtype, copy=False)


def _zeta_self_grad(grad, self, other):
    # derivatives.yaml: not_implemented("zeta"): the derivative in x (the exponent) has no closed form
    raise RuntimeError("the derivative for 'zeta' is not implemented.")


def _zeta_samples(op):
    x = make_arg((2, 3), key=(op, "x"), low=1.5, high=4.0, requires_grad=False)
    return [SampleInput("(2,3),(2,3)", x, make_arg((2, 3), key=(op, "q"), low=0.5, high=3.0)),
            SampleInput("(2,3),(3,)", x, make_arg((3,), key=(op, "q3"), low=0.5, high=3.0)),
            SampleInput("scalar x", 2.5, make_arg((4,), key=(op, "s"), low=0.5, high=3.0)),
            SampleInput("scalar q (no gradient)", x, 1.5)]


special_zeta = defop(
    "special_zeta(Tensor self, Tensor other) -> Tensor",
    kernel=_zeta_kernel, meta=_same_meta, promote="float", special=True, wraps_numbers=True,
    grads={"self": _zeta_self_grad, "other": lambda grad, self, other: grad * -self * special_zeta(self + 1.0, other)},
    backward_name=("SpecialZetaBackward0", "SpecialZetaBackward1", "SpecialZetaBackward2"),
    overload=lambda self, other: 1 if _is_number(self) else (2 if _is_number(other) else 0),
    samples=_zeta_samples, torch="torch.special.zeta",
    doc="The Hurwitz zeta function: the sum over k >= 0 of (k + other)^-self.")


# ---- the multivariate log-gamma function -------------------------------------------------------------

def _mvlgamma_check(p):
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")


def _mvlgamma_meta(self, p):
    _mvlgamma_check(p)
    return _same_meta(self)


def _mvlgamma_kernel(xp, special, self, p):
    _mvlgamma_check(p)
    if not bool((self > 0.5 * (p - 1)).all()):
        raise RuntimeError("All elements must be greater than (p-1)/2")
    # PyTorch's: lgamma(self + j) summed over j in -(p-1)/2, ..., 0 (steps of 1/2), plus p(p-1)/4 log π
    offsets = xp.arange(-p / 2 + 0.5, 0.5, 0.5, dtype=self.dtype)
    out = special.gammaln(self[..., None] + offsets).sum(-1) + p * (p - 1) * math.log(math.pi) / 4
    return xp.asarray(out).astype(self.dtype, copy=False)


def _mvlgamma_backward(grad, self, p):
    # FunctionsManual's mvlgamma_backward: grad times the sum of digamma over the same arguments
    offsets = arange(-p / 2 + 0.5, 0.5, 0.5, dtype=self.dtype, device=self.device)
    return grad * sum(digamma(unsqueeze(self, -1) + offsets), [-1])


mvlgamma = defop(
    "mvlgamma(Tensor self, int p) -> Tensor",
    kernel=_mvlgamma_kernel, meta=_mvlgamma_meta, promote="float", special=True,
    grads={"self": _mvlgamma_backward},
    samples=lambda op: [SampleInput(f"p={p}", make_arg((2, 3), key=(op, p), low=0.5 * p + 0.1, high=0.5 * p + 3.0), p)
                        for p in (1, 2, 4)],
    torch="torch.mvlgamma", doc="The multivariate log-gamma function of dimension p (scipy's multigammaln).")


# ---- the regularized incomplete gamma functions ------------------------------------------------------

def _igamma_meta(name):
    def meta(self, other):
        # compared after promotion (promote="same"): PyTorch has no integer loop, and does not promote to float
        _float_only(f"{name}_cpu", self, other)
        return _same_meta(self, other)
    return meta


def _igamma_kernel(name, function):
    def kernel(xp, special, self, other):
        _float_only(f"{name}_cpu", self, other)
        return xp.asarray(getattr(special, function)(self, other)).astype(self.dtype, copy=False)
    return kernel


def _igamma_other_grad(grad, self, other):
    # derivatives.yaml: x^(a-1) e^-x / Γ(a), the density of Gamma(a, 1), through logs
    return grad * exp((self - 1) * log(other) - other - lgamma(self))


def _igamma_samples(op):
    a = make_arg((2, 3), key=(op, "a"), low=0.5, high=4.0, requires_grad=False)
    return [SampleInput("(2,3),(2,3)", a, make_arg((2, 3), key=(op, "x"), low=0.2, high=5.0)),
            SampleInput("(2,3),(3,) broadcast", a, make_arg((3,), key=(op, "x3"), low=0.2, high=5.0)),
            SampleInput("(4,),() broadcast", make_arg((4,), key=(op, "a4"), low=0.5, high=4.0, requires_grad=False),
                        make_arg((), key=(op, "x0"), low=0.2, high=5.0)),
            SampleInput("0-d", make_arg((), key=(op, "a0"), low=0.5, high=4.0, requires_grad=False),
                        make_arg((), key=(op, "x00"), low=0.2, high=5.0))]


igamma = defop(
    "igamma(Tensor self, Tensor other) -> Tensor",
    kernel=_igamma_kernel("igamma", "gammainc"), meta=_igamma_meta("igamma"), promote="same", special=True,
    grads={"self": NotImplementedDerivative("igamma: input"), "other": _igamma_other_grad},
    samples=_igamma_samples, torch="torch.igamma",
    doc="The regularized lower incomplete gamma function P(self, other) (scipy.special.gammainc); no gradient "
        "in self, as in PyTorch.")

igammac = defop(
    "igammac(Tensor self, Tensor other) -> Tensor",
    kernel=_igamma_kernel("igammac", "gammaincc"), meta=_igamma_meta("igammac"), promote="same", special=True,
    grads={"self": NotImplementedDerivative("igammac: input"),
           "other": lambda grad, self, other: -_igamma_other_grad(grad, self, other)},
    samples=_igamma_samples, torch="torch.igammac",
    doc="The regularized upper incomplete gamma function Q(self, other) = 1 - P(self, other) "
        "(scipy.special.gammaincc); no gradient in self, as in PyTorch.")
