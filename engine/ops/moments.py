"""std_mean and var_mean: the spread and the mean over the same dims in one call, as
PyTorch's torch.std_mean / torch.var_mean (a pair, spread first; one node,
StdMeanBackward0 / VarMeanBackward0, whose gradient is the sum of std's (var's) and
mean's, as PyTorch's derivatives.yaml writes it)."""
from __future__ import annotations

from ..shapes import normalize_dims
from .reduction import _mean_grad
from .reductions_extra import (
    _std_grad,
    _std_kernel,
    _var_backward,
    _var_kernel,
    _var_meta,
    _var_samples,
)
from .registry import defop

_ARGS = "Tensor self, int[]? dim=None, *, Scalar? correction=None, bool keepdim=False"


def _pair(spread_kernel):
    def kernel(xp, self, dim, correction, keepdim):
        spread = spread_kernel(xp, self, dim, correction, keepdim)
        average = xp.mean(self, axis=normalize_dims(dim, self.ndim), keepdims=keepdim)
        return spread, xp.asarray(average, dtype=self.dtype)
    return kernel


def _pair_meta(self, dim, correction, keepdim):
    out = _var_meta(self, dim, correction, keepdim)
    return out, out


def _std_mean_grad(grads, self, result, dim, correction, keepdim):
    return (_std_grad(grads[0], self, result[0], dim, correction, keepdim)
            + _mean_grad(grads[1], self.shape, dim, keepdim))


def _var_mean_grad(grads, self, dim, correction, keepdim):
    return _var_backward(grads[0], self, dim, correction, keepdim) + _mean_grad(grads[1], self.shape, dim, keepdim)


std_mean = defop(
    f"std_mean({_ARGS}) -> (Tensor, Tensor)", kernel=_pair(_std_kernel), meta=_pair_meta,
    grads={"self": _std_mean_grad}, samples=_var_samples, torch="torch.std_mean",
    doc="(std(self, dim, correction, keepdim), mean(self, dim, keepdim)).")
var_mean = defop(
    f"var_mean({_ARGS}) -> (Tensor, Tensor)", kernel=_pair(_var_kernel), meta=_pair_meta,
    grads={"self": _var_mean_grad}, samples=_var_samples, torch="torch.var_mean",
    doc="(var(self, dim, correction, keepdim), mean(self, dim, keepdim)).")
