"""Moments: var and std, and std_mean and var_mean, the spread and the mean over the
same dims in one call, as PyTorch's torch.std_mean / torch.var_mean (a pair, spread
first; one node, StdMeanBackward0 / VarMeanBackward0, whose gradient is the sum of
std's (var's) and mean's, as PyTorch's derivatives.yaml writes it).

`correction` is Bessel's (1 by default, PyTorch's unbiased=True).
"""
from __future__ import annotations

import math

import numpy as np

from ...backends.meta import MetaArray
from ...creation import full_like
from ...errors import DtypeError
from ...shapes import normalize_dims, reduced_shape
from ..pointwise.binary import where
from ..registry import defop
from ..samples import SampleInput, make_arg
from .arithmetic import _INF, _mean_grad, _restore, mean, mean_of


def _count(shape, dims) -> int:
    return math.prod(shape[d] for d in dims)


# ---- var / std ----------------------------------------------------------------------------

def _var_check(self):
    if self.dtype.kind not in "fc":
        raise DtypeError("std and var only support floating point and complex dtypes")


def _correction(correction):
    return 1 if correction is None else correction


def _var_kernel(xp, self, dim, correction, keepdim):
    _var_check(self)
    dims = normalize_dims(dim, self.ndim)
    dof = max(_count(self.shape, dims) - _correction(correction), 0)
    centered = self - mean_of(xp, self, dims, True)
    # (a complex tensor's variance is real: |x - mean|², its parts' variances summed)
    squares = centered * centered if centered.dtype.kind != "c" else centered.real ** 2 + centered.imag ** 2
    # dof == 0 gives nan or inf, as PyTorch (with its warning left out)
    out = xp.sum(squares, axis=dims, keepdims=keepdim) / float(dof)
    return xp.asarray(out, dtype=squares.dtype)


def _var_meta(self, dim, correction, keepdim):
    _var_check(self)
    return MetaArray(reduced_shape(self.shape, normalize_dims(dim, self.ndim), keepdim), self.dtype.type(0).real.dtype)


def _var_backward(grad, self, dim, correction, keepdim):
    """PyTorch's var_backward: 2 / (N - correction) * grad * (self - mean)."""
    dims = normalize_dims(dim, self.ndim)
    dof = _count(self.shape, dims) - _correction(correction)
    if self.ndim == 0 or dim is None or len(dim) == 0:
        if dof <= 0:
            # 2 / 0 = inf; times 0 where self is its own mean gives nan
            return grad * where(self == mean(self), full_like(self, float("nan")), _INF)
        return (2.0 / dof) * grad * (self - mean(self))
    scale = 2.0 / dof if dof != 0 else _INF
    return scale * _restore(grad, self.shape, dim, keepdim) * (self - mean(self, list(dims), keepdim=True))


def _std_kernel(xp, self, dim, correction, keepdim):
    return xp.sqrt(_var_kernel(xp, self, dim, correction, keepdim))


def _std_grad(grad, self, result, dim, correction, keepdim):
    # PyTorch's std_backward: (grad / (2 result)).masked_fill_(result == 0, 0), then var_backward
    # NOTE: dividing by a safe 1 where result == 0 keeps 0/0 out of the double backward too
    zero = result == 0
    return _var_backward(where(zero, 0.0, grad / (where(zero, 1.0, result) * 2)), self, dim, correction, keepdim)


def _var_samples(op):
    x = make_arg((3, 4, 2), key=(op, "c"))
    return [
        SampleInput("full", x), SampleInput("dim=1", x, 1), SampleInput("dim=[0,2],keepdim kw", x, [0, 2], keepdim=True),
        SampleInput("dim=-1,T", make_arg((4, 3), key=(op, "T"), transposed=True), -1),
        SampleInput("correction=0 kw", x, 1, correction=0),
        SampleInput("correction=2,keepdim kw", x, [0, 1], correction=2, keepdim=True),
        SampleInput("correction=0.5 full", x, correction=0.5),
        SampleInput("dim=None kw keepdim", x, dim=None, keepdim=True)]


var = defop(
    "var(Tensor self, int[]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> Tensor",
    kernel=_var_kernel, meta=_var_meta, supports_complex=True,
    grads={"self": _var_backward},
    samples=_var_samples, torch="torch.var")

std = defop(
    "std(Tensor self, int[]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> Tensor",
    kernel=_std_kernel, meta=_var_meta, supports_complex=True,
    grads={"self": _std_grad},
    samples=_var_samples, torch="torch.std")

_ARGS = "Tensor self, int[]? dim=None, *, Scalar? correction=None, bool keepdim=False"


def _pair(spread_kernel):
    def kernel(xp, self, dim, correction, keepdim):
        spread = spread_kernel(xp, self, dim, correction, keepdim)
        average = mean_of(xp, self, normalize_dims(dim, self.ndim), keepdim)
        return spread, xp.asarray(average, dtype=self.dtype)
    return kernel


def _pair_meta(self, dim, correction, keepdim):
    out = _var_meta(self, dim, correction, keepdim)
    return out, MetaArray(out.shape, self.dtype)        # (the mean of a complex tensor is complex)


def _std_mean_grad(grads, self, result, dim, correction, keepdim):
    return (_std_grad(grads[0], self, result[0], dim, correction, keepdim)
            + _mean_grad(grads[1], self.shape, dim, keepdim))


def _var_mean_grad(grads, self, dim, correction, keepdim):
    return _var_backward(grads[0], self, dim, correction, keepdim) + _mean_grad(grads[1], self.shape, dim, keepdim)


std_mean = defop(
    f"std_mean({_ARGS}) -> (Tensor, Tensor)", kernel=_pair(_std_kernel), meta=_pair_meta, supports_complex=True,
    grads={"self": _std_mean_grad}, samples=_var_samples, torch="torch.std_mean",
    doc="(std(self, dim, correction, keepdim), mean(self, dim, keepdim)).")
var_mean = defop(
    f"var_mean({_ARGS}) -> (Tensor, Tensor)", kernel=_pair(_var_kernel), meta=_pair_meta, supports_complex=True,
    grads={"self": _var_mean_grad}, samples=_var_samples, torch="torch.var_mean",
    doc="(var(self, dim, correction, keepdim), mean(self, dim, keepdim)).")
