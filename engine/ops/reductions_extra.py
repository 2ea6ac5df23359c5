"""Reductions beyond sum/mean: amax, amin, prod, var, std, logsumexp, norm.

Each takes `dim` (an int or a list; None or [] is every dimension) and `keepdim`.
Backward formulas first put the reduced dimensions back as size 1
(`_restore`, PyTorch's restore_reduced_dims/unsqueeze_multiple) so the gradient
broadcasts against the input.
"""
from __future__ import annotations

import math

import numpy as np

from .. import dtypes
from ..backends.meta import MetaArray
from ..creation import full_like, tensor, zeros_like
from ..errors import DimensionError, DtypeError
from ..shapes import normalize_dims, reduced_shape
from .pointwise import exp, where
from .reduction import _keepdim_grad, _sum_dtype, mean, sum  # noqa: A004
from .registry import defop
from .samples import SampleInput, make_arg, reduction_samples
from .unary import _torch_dtype_name, abs, sign  # noqa: A004

_INF = float("inf")


def _restore(t, self_shape, dim, keepdim):
    return _keepdim_grad(t, tuple(self_shape), dim, keepdim)


def _count(shape, dims) -> int:
    return math.prod(shape[d] for d in dims)


# ---- amax / amin --------------------------------------------------------------------------

def _nonempty_dims(name, self, dim):
    """PyTorch's zero_numel_check_dims: max and min have no identity to return for an empty slice."""
    dims = normalize_dims(dim, self.ndim)
    if math.prod(self.shape) == 0:
        if dim is None or len(dim) == 0:
            raise DimensionError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                                 f"Specify the reduction dim with the 'dim' argument.")
        for d in dims:
            if self.shape[d] == 0:
                raise DimensionError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
    return dims


def _extremum(name, fn):
    def kernel(xp, self, dim, keepdim):
        dims = _nonempty_dims(name, self, dim)
        return getattr(xp, fn)(self, axis=dims, keepdims=keepdim)

    def meta(self, dim, keepdim):
        dims = _nonempty_dims(name, self, dim)
        return MetaArray(reduced_shape(self.shape, dims, keepdim), self.dtype)

    def grad_formula(grad, self, result, dim, keepdim):
        # PyTorch's scale_grad_by_count: ties share the gradient evenly
        dims = normalize_dims(dim, self.ndim)
        mask = self == _restore(result, self.shape, dim, keepdim)
        return _restore(grad, self.shape, dim, keepdim) / sum(mask, dims, keepdim=True) * mask
    return kernel, meta, grad_formula


def _extremum_samples(op):
    # random values: no ties, so amax/amin are differentiable at every sample
    return reduction_samples()(op) + [
        SampleInput("dim=[] kw", make_arg((2, 3), key=(op, "e")), dim=[]),
        SampleInput("dim=-2,keepdim kw", make_arg((2, 3, 4), key=(op, "k")), dim=-2, keepdim=True)]


_amax_kernel, _amax_meta, _amax_grad = _extremum("amax", "amax")
_amin_kernel, _amin_meta, _amin_grad = _extremum("amin", "amin")

amax = defop(
    "amax(Tensor self, int[] dim=[], bool keepdim=False) -> Tensor",
    kernel=_amax_kernel, meta=_amax_meta, grads={"self": _amax_grad},
    samples=_extremum_samples, torch="torch.amax")

amin = defop(
    "amin(Tensor self, int[] dim=[], bool keepdim=False) -> Tensor",
    kernel=_amin_kernel, meta=_amin_meta, grads={"self": _amin_grad},
    samples=_extremum_samples, torch="torch.amin")


# ---- prod ---------------------------------------------------------------------------------

def _prod_kernel(xp, self, dim, keepdim, dtype):
    dims = normalize_dims(dim, self.ndim)
    return xp.prod(self, axis=dims, keepdims=keepdim, dtype=_sum_dtype(self, dtype))


def _prod_meta(self, dim, keepdim, dtype):
    dims = normalize_dims(dim, self.ndim)
    return MetaArray(reduced_shape(self.shape, dims, keepdim), _sum_dtype(self, dtype))


def _prod_of_others(x, dims):
    """For each element, the product of the other elements of its slice — without dividing by 0.

    product / x fails where x == 0. With z_i = the number of zeros in the slice other than
    x_i: the product of the others is (product of the slice's non-zeros) / x_i (x_i != 0)
    times 1 if z_i == 0, the other zero itself if z_i == 1, and 0 if z_i >= 2. Keeping
    "the other zero itself" as a differentiable 0 (not a constant) makes the second
    derivative right too: d^2 prod / dx_i dx_j = prod of the slice without x_i and x_j,
    which is not 0 when x_i or x_j is the slice's only zero (PyTorch's cumprod-based
    prod_safe_zeros_backward gets the same values)."""
    dims = list(dims)
    zero = x == 0
    safe = where(zero, 1.0, x)
    nonzero_prod = prod(safe, dims, keepdim=True)
    zero_count = zero.long()
    zeros_elsewhere = sum(zero_count, dims, keepdim=True) - zero_count
    zero_part = where(zero, x, 0.0)
    other_zero = sum(zero_part, dims, keepdim=True) - zero_part
    factor = where(zeros_elsewhere == 0, 1.0, where(zeros_elsewhere == 1, other_zero, 0.0))
    return nonzero_prod / safe * factor


def _prod_grad(grad, self, dim, keepdim):
    if self.ndim == 0:
        return grad
    dims = normalize_dims(dim, self.ndim)
    return _restore(grad, self.shape, dim, keepdim) * _prod_of_others(self, dims)


def _prod_samples(op):
    data = make_arg((3, 4), key=(op, "z"), low=0.5, high=1.5, requires_grad=False).numpy().copy()
    data[0, 1] = 0.0                       # one zero in row 0
    data[2, 0] = data[2, 3] = 0.0          # two zeros in row 2
    zeros = tensor(data, requires_grad=True)
    return reduction_samples(low=0.5, high=1.5)(op) + [
        SampleInput("dim=1 negatives", make_arg((3, 4), key=(op, "n"), low=-1.5, high=1.5, away_from=0.0), 1),
        SampleInput("zeros dim=1", zeros, 1), SampleInput("zeros full", zeros),
        SampleInput("zeros dim=0 keepdim kw", zeros, dim=0, keepdim=True),
        SampleInput("int64", make_arg((2, 3), key=(op, "i"), low=1, high=4, integer=True, dtype=dtypes.int64), 1)]


prod = defop(
    "prod(Tensor self, int[]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
    kernel=_prod_kernel, meta=_prod_meta,
    grads={"self": _prod_grad},
    backward_name=("ProdBackward0", "ProdBackward1"), overload=lambda self, dim, *rest: 0 if dim is None else 1,
    samples=_prod_samples,
    # PyTorch's prod reduces one int dim; a list of dims is reduced one at a time
    torch="lambda x, dim=None, keepdim=False, *, dtype=None: x.prod(dtype=dtype) if dim is None else "
          "x.prod(dim, keepdim, dtype=dtype) if isinstance(dim, int) else "
          "(lambda nd: (lambda r: r if keepdim else r.reshape([s for i, s in enumerate(x.shape) if i not in nd]))("
          "__import__('functools').reduce(lambda t, d: t.prod(d, keepdim=True, dtype=dtype), nd, x)))("
          "[d % max(x.dim(), 1) for d in dim])")


# ---- var / std ----------------------------------------------------------------------------

def _var_check(self):
    if self.dtype.kind != "f":
        raise DtypeError("std and var only support floating point and complex dtypes")


def _correction(correction):
    return 1 if correction is None else correction


def _var_kernel(xp, self, dim, correction, keepdim):
    _var_check(self)
    dims = normalize_dims(dim, self.ndim)
    dof = max(_count(self.shape, dims) - _correction(correction), 0)
    centered = self - xp.mean(self, axis=dims, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        # dof == 0 gives nan or inf, as PyTorch (with its warning left out)
        out = xp.sum(centered * centered, axis=dims, keepdims=keepdim) / float(dof)
    return xp.asarray(out, dtype=self.dtype)


def _var_meta(self, dim, correction, keepdim):
    _var_check(self)
    return MetaArray(reduced_shape(self.shape, normalize_dims(dim, self.ndim), keepdim), self.dtype)


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
    kernel=_var_kernel, meta=_var_meta,
    grads={"self": _var_backward},
    samples=_var_samples, torch="torch.var")

std = defop(
    "std(Tensor self, int[]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> Tensor",
    kernel=_std_kernel, meta=_var_meta,
    grads={"self": _std_grad},
    samples=_var_samples, torch="torch.std")


# ---- logsumexp ----------------------------------------------------------------------------

def _logsumexp_kernel(xp, self, dim, keepdim):
    dims = normalize_dims(dim, self.ndim)
    with np.errstate(divide="ignore"):
        if self.size == 0:
            return xp.log(xp.sum(xp.exp(self), axis=dims, keepdims=keepdim))
        # NOTE: shift by the max so exp never overflows; an infinite max is not shifted
        # (inf - inf would be nan), as PyTorch's masked_fill_(maxes.abs() == INFINITY, 0)
        m = xp.amax(self, axis=dims, keepdims=True)
        m = xp.where(xp.isinf(m), 0, m).astype(self.dtype, copy=False)
        out = xp.log(xp.sum(xp.exp(self - m), axis=dims, keepdims=True)) + m
    if not keepdim:
        out = out.reshape(reduced_shape(self.shape, dims, False))
    return out


def _logsumexp_meta(self, dim, keepdim):
    return MetaArray(reduced_shape(self.shape, normalize_dims(dim, self.ndim), keepdim), self.dtype)


def _logsumexp_samples(op):
    x = make_arg((3, 4, 2), key=(op, "x"))
    return [SampleInput("dim=1", x, 1), SampleInput("dim=[0,2],keepdim", x, [0, 2], True),
            SampleInput("dim=-1,T", make_arg((4, 3), key=(op, "T"), transposed=True), -1),
            SampleInput("all dims", x, [0, 1, 2]), SampleInput("0-d dim=0", make_arg((), key=(op, "0")), 0),
            SampleInput("large values keepdim kw", make_arg((3, 4), key=(op, "big"), low=500.0, high=502.0),
                        dim=1, keepdim=True)]


logsumexp = defop(
    "logsumexp(Tensor self, int[] dim, bool keepdim=False) -> Tensor",
    kernel=_logsumexp_kernel, meta=_logsumexp_meta, promote="float",
    grads={"self": lambda grad, self, result, dim, keepdim:
           _restore(grad, self.shape, dim, keepdim) * exp(self - _restore(result, self.shape, dim, keepdim))},
    samples=_logsumexp_samples, torch="torch.logsumexp")


# ---- norm ---------------------------------------------------------------------------------

def _norm_ord(p, dim) -> float:
    """torch.norm's `p` as the order it hands to linalg.vector_norm ('fro' is 2)."""
    if isinstance(p, str):
        if p == "fro":
            if dim is not None and len(dim) > 2:
                raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {', '.join(map(str, dim))}")
            return 2.0
        if p in ("inf", "-inf"):        # YAML has no float('inf'); accept its spelling as a string
            return float(p)
        if p == "nuc":
            raise NotImplementedError("norm: p='nuc' (the nuclear norm) needs a singular value decomposition, "
                                      "which agrad does not provide")
        raise RuntimeError(f"linalg.matrix_norm: Order {p} not supported.")
    if isinstance(p, bool) or not isinstance(p, (int, float, np.integer, np.floating)):
        raise TypeError(f"norm(): argument 'p' must be a number or 'fro', not {type(p).__name__}")
    return float(p)


def _norm_check(self, ord_, dims):
    if self.dtype.kind != "f":
        raise DtypeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. "
                         f"Got {_torch_dtype_name(self.dtype)}")
    if ord_ < 0 or ord_ == _INF:
        # max and min of an empty slice: no identity
        if math.prod(self.shape) == 0 and (not dims or any(self.shape[d] == 0 for d in dims)):
            raise RuntimeError(f"linalg.vector_norm cannot compute the {ord_:g} norm on an empty tensor because "
                               f"the operation does not have an identity")


def _norm_kernel(xp, self, p, dim, keepdim):
    ord_ = _norm_ord(p, dim)
    dims = normalize_dims(dim, self.ndim)
    _norm_check(self, ord_, dims)
    a = xp.abs(self)
    if ord_ == 2:
        out = xp.sqrt(xp.sum(a * a, axis=dims, keepdims=keepdim))
    elif ord_ == 1:
        out = xp.sum(a, axis=dims, keepdims=keepdim)
    elif ord_ == _INF:
        out = xp.amax(a, axis=dims, keepdims=keepdim)
    elif ord_ == -_INF:
        out = xp.amin(a, axis=dims, keepdims=keepdim)
    elif ord_ == 0:
        out = xp.sum(a != 0, axis=dims, keepdims=keepdim)
    else:
        with np.errstate(divide="ignore"):
            out = xp.sum(a ** ord_, axis=dims, keepdims=keepdim) ** (1.0 / ord_)
    return xp.asarray(out, dtype=self.dtype)


def _norm_meta(self, p, dim, keepdim):
    ord_ = _norm_ord(p, dim)
    dims = normalize_dims(dim, self.ndim)
    _norm_check(self, ord_, dims)
    return MetaArray(reduced_shape(self.shape, dims, keepdim), self.dtype)


def _norm_grad(grad, self, result, p, dim, keepdim):
    """PyTorch's norm_backward, case by case; at norm == 0 the gradient is 0 (a subgradient)."""
    ord_ = _norm_ord(p, dim)
    dims = normalize_dims(dim, self.ndim)
    grad = _restore(grad, self.shape, dim, keepdim)
    norm = _restore(result, self.shape, dim, keepdim)
    if ord_ == 0:
        return zeros_like(self)
    if ord_ == 1:
        return sign(self) * grad
    zero = norm == 0
    safe_norm = where(zero, 1.0, norm)      # NOTE: no 0/0 under the mask, in this backward or the next
    if ord_ == 2:
        return grad * where(zero, 0.0, self / safe_norm)
    if math.isinf(ord_):
        a = abs(self)
        mask = (a == norm) + (a != a)           # the arg-extremum, or a NaN
        return sign(self) * (grad / sum(mask, dims, keepdim=True) * mask)
    if ord_ < 1:
        scaled = sign(self) * where(self == 0, 0.0, abs(self) ** (ord_ - 1))
        return scaled * grad * norm ** (1 - ord_)
    if ord_ < 2:
        scaled = sign(self) * abs(self) ** (ord_ - 1)
    else:
        scaled = self * abs(self) ** (ord_ - 2)
    return scaled * where(zero, 0.0, grad / safe_norm ** (ord_ - 1))


def _norm_samples(op):
    x = make_arg((3, 4, 2), key=(op, "x"), away_from=0.0)
    m = make_arg((4, 3), key=(op, "m"), transposed=True, away_from=0.0)
    return [
        SampleInput("fro", x), SampleInput("0-d", make_arg((), key=(op, "0"), away_from=0.0)),
        SampleInput("p=2 dim=1", x, 2, 1),
        SampleInput("fro dim=[0,2] keepdim", x, "fro", [0, 2], True),
        SampleInput("p=1 dim=-1", m, 1, -1),
        SampleInput("p=inf dim=0", m, _INF, 0),
        SampleInput("p=-inf", x, -_INF),
        SampleInput("p=3 dim=1 keepdim kw", x, p=3, dim=1, keepdim=True),
        SampleInput("p=1.5", x, 1.5, [1, 2]),
        SampleInput("p=0.5", m, 0.5, 1),
        SampleInput("p=0", x, 0, 1),
    ]


norm = defop(
    "norm(Tensor self, Scalar p=\"fro\", int[]? dim=None, bool keepdim=False) -> Tensor",
    kernel=_norm_kernel, meta=_norm_meta,
    grads={"self": _norm_grad},
    # torch.norm (and Tensor.norm) call linalg.vector_norm for every p but 'nuc' and matrix orders
    backward_name="LinalgVectorNormBackward0",
    samples=_norm_samples, torch="torch.norm")
