"""Reductions by arithmetic (ATen's ReduceOps): sum, mean, nansum, nanmean, prod,
logsumexp, linalg_vector_norm (and norm, torch.norm's composite over it), and sum_to_size
(how the engine undoes broadcasting).

Each takes `dim` (an int or a list; None or [] is every dimension) and `keepdim`.
Backward formulas first put the reduced dimensions back as size 1 (`_restore`, PyTorch's
restore_reduced_dims/unsqueeze_multiple) so the gradient broadcasts against the input;
nansum's gradient is zero at NaNs; nanmean is PyTorch's composite (DivBackward0).
"""
from __future__ import annotations

import math

import numpy as np

from ... import dtypes
from ...backends.meta import MetaArray
from ...creation import tensor, zeros_like
from ...dispatcher import ops as _ops
from ...errors import DtypeError, ShapeError
from ...messages import scalar_type_name
from ...shapes import normalize_dims, reduced_shape
from ..pointwise.binary import div, where
from ..pointwise.logical import isnan, logical_not
from ..pointwise.unary import (
    abs,  # noqa: A004
    exp,
    sgn,
)
from .._common import conj_of
from ..conversion import _astype
from ..registry import defop
from ..samples import SampleInput, int_arg, make_arg, reduction_samples


def _sum_dtype(x, dtype):
    if dtype is not None:
        return dtypes.from_name(dtype).np if isinstance(dtype, str) else dtype.np
    # PyTorch sums integers and bools as int64
    return x.dtype if x.dtype.kind in "fc" else np.dtype(np.int64)


def _sum_meta(self, dim, keepdim, dtype):
    dims = normalize_dims(dim, self.ndim)
    return MetaArray(reduced_shape(self.shape, dims, keepdim), _sum_dtype(self, dtype))


def _sum_kernel(xp, self, dim, keepdim, dtype):
    dims = normalize_dims(dim, self.ndim)
    out = _sum_dtype(self, dtype)
    if self.dtype.kind == "c" and out.kind != "c":      # (sum(dtype=) casts self first, as PyTorch's copy_ does)
        self = _astype(self, out)
    return xp.sum(self, axis=dims, keepdims=keepdim, dtype=out)


def _keepdim_grad(grad, self_shape, dim, keepdim):
    """Reinsert the reduced dimensions as size 1, so the gradient broadcasts back: PyTorch's
    unsqueeze_multiple, one unsqueeze (UnsqueezeBackward0) per reduced dim. A reduction over every dim
    (no dim given) leaves the 0-d gradient as it is: it broadcasts (sum's backward is then one expand)."""
    if keepdim or not self_shape or dim is None or (isinstance(dim, (list, tuple)) and not dim):
        return grad
    for d in sorted(normalize_dims(dim, len(self_shape))):
        grad = _ops.unsqueeze(grad, d)
    return grad


def sum_backward(grad, self_shape, dim, keepdim):
    return _ops.expand(_keepdim_grad(grad, self_shape, dim, keepdim), self_shape)


def _dim_overload(self, dim, *rest):
    return 0 if dim is None else 1


# `x.sum(dim=None)` is PyTorch's sum.dim_IntList (SumBackward1), whose None means every dim, as []
# does; `x.sum()` is the plain sum (SumBackward0). Likewise mean.
_DIM_INT_LIST = {"dim": []}


def _sum_samples(op):
    x = make_arg((2, 3), key=(op, "none"))
    return reduction_samples()(op) + [SampleInput("dim=None", x, None), SampleInput("dim=None,keepdim", x, None, True),
                                      SampleInput("dim=[]", x, []), SampleInput("dim=[],keepdim", x, [], True)]


sum = defop(  # noqa: A001 — PyTorch's name
    "sum(Tensor self, int[]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
    kernel=_sum_kernel, meta=_sum_meta, supports_complex=True,
    grads={"self": lambda grad, self_shape, dim, keepdim: sum_backward(grad, self_shape, dim, keepdim)},
    backward_name=("SumBackward0", "SumBackward1"), overload=_dim_overload, given_none=_DIM_INT_LIST,
    samples=_sum_samples, torch="torch.sum")


def _mean_check(self, dtype):
    out = _sum_dtype(self, dtype)
    if out.kind not in "fc":
        raise DtypeError(f"mean(): could not infer output dtype. Input dtype must be either a floating point "
                         f"or complex dtype. Got: {dtypes.from_numpy(self.dtype).name.capitalize()}")
    return out


def _mean_meta(self, dim, keepdim, dtype):
    out = _mean_check(self, dtype)
    return MetaArray(reduced_shape(self.shape, normalize_dims(dim, self.ndim), keepdim), out)


def mean_of(xp, x, dims: tuple, keepdims: bool, dtype=None):
    """`xp.mean` over `dims` (normalized), where the mean of nothing is nan (0 / 0) without
    NumPy's "Mean of empty slice" warning: PyTorch gives the nan quietly."""
    if x.size == 0 and 0 in [x.shape[d] for d in dims]:
        return xp.full(reduced_shape(x.shape, dims, keepdims), xp.nan, dtype=x.dtype if dtype is None else dtype)
    return xp.mean(x, axis=dims, keepdims=keepdims, dtype=dtype)


def _mean_kernel(xp, self, dim, keepdim, dtype):
    out = _mean_check(self, dtype)
    return mean_of(xp, self, normalize_dims(dim, self.ndim), keepdim, out)


def _mean_grad(grad, self_shape, dim, keepdim):
    dims = normalize_dims(dim, len(self_shape))
    count = int(np.prod([self_shape[d] for d in dims])) if dims else 1
    return sum_backward(grad, self_shape, dim, keepdim) / count


mean = defop(
    "mean(Tensor self, int[]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
    kernel=_mean_kernel, meta=_mean_meta, supports_complex=True,
    grads={"self": _mean_grad},
    backward_name=("MeanBackward0", "MeanBackward1"), overload=_dim_overload, given_none=_DIM_INT_LIST,
    samples=_sum_samples, torch="torch.mean")


def _sum_to_dims(shape, size):
    lead = len(shape) - len(size)
    if lead < 0:
        raise ShapeError(f"size {{{', '.join(map(str, size))}}} is not expandable to size "
                         f"{{{', '.join(map(str, shape))}}}.")
    dims = list(range(lead))
    for i, s in enumerate(size):
        if s == 1 and shape[lead + i] != 1:
            dims.append(lead + i)
        elif s != shape[lead + i] and s != 1:
            raise ShapeError(f"size {{{', '.join(map(str, size))}}} is not expandable to size "
                             f"{{{', '.join(map(str, shape))}}}.")
    return tuple(dims)


def _sum_to_size_kernel(xp, self, size):
    dims = _sum_to_dims(self.shape, size)
    return xp.sum(self, axis=dims, keepdims=True).reshape(size) if dims else self


def _sum_to_size_samples(op):
    from ..samples import SampleInput, make_arg
    return [SampleInput("(2,3)->(3,)", make_arg((2, 3), key=(op, 0)), [3]),
            SampleInput("(2,4,3)->(4,1)", make_arg((2, 4, 3), key=(op, 1)), [4, 1])]


sum_to_size = defop(
    "sum_to_size(Tensor self, int[] size) -> Tensor",
    kernel=_sum_to_size_kernel, supports_complex=True,
    meta=lambda self, size: (_sum_to_dims(self.shape, size), MetaArray(size, self.dtype))[1],
    grads={"self": lambda grad, self_shape: _ops.expand(grad, self_shape)},
    backward_name="SumToSizeBackward0",
    samples=_sum_to_size_samples, torch="lambda x, size: x.sum_to_size(size)")

_INF = float("inf")


def _restore(t, self_shape, dim, keepdim):
    return _keepdim_grad(t, tuple(self_shape), dim, keepdim)


def _restore_reduced_dims(t, self_shape, dim, keepdim):
    """PyTorch's restore_reduced_dims (amax/amin's backward): the reduced dims back as size 1 by one
    reshape (ViewBackward0), where the other reductions unsqueeze (_keepdim_grad)."""
    if keepdim or not self_shape:
        return t
    dims = normalize_dims(dim, len(self_shape))
    return _ops.reshape(t, [1 if i in dims else s for i, s in enumerate(self_shape)])


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
    # FunctionsManual's prod_backward: grad * (the product of the others).conj()
    return _restore(grad, self.shape, dim, keepdim) * conj_of(_prod_of_others(self, dims))


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
    kernel=_prod_kernel, meta=_prod_meta, supports_complex=True,
    grads={"self": _prod_grad},
    backward_name=("ProdBackward0", "ProdBackward1"), overload=lambda self, dim, *rest: 0 if dim is None else 1,
    samples=_prod_samples,
    # PyTorch's prod reduces one int dim; a list of dims is reduced one at a time
    torch="lambda x, dim=None, keepdim=False, *, dtype=None: x.prod(dtype=dtype) if dim is None else "
          "x.prod(dim, keepdim, dtype=dtype) if isinstance(dim, int) else "
          "(lambda nd: (lambda r: r if keepdim else r.reshape([s for i, s in enumerate(x.shape) if i not in nd]))("
          "__import__('functools').reduce(lambda t, d: t.prod(d, keepdim=True, dtype=dtype), nd, x)))("
          "[d % max(x.dim(), 1) for d in dim])")


# ---- logsumexp ----------------------------------------------------------------------------

def _logsumexp_kernel(xp, self, dim, keepdim):
    dims = normalize_dims(dim, self.ndim)
    if self.size == 0:
        return xp.log(xp.sum(xp.exp(self), axis=dims, keepdims=keepdim))
    # NOTE: shift by the max so exp never overflows; an infinite max is not shifted
    # (inf - inf would be nan), as PyTorch's masked_fill_(maxes.abs() == INFINITY, 0)
    # (of a complex tensor PyTorch shifts by the max of the real parts)
    m = xp.amax(self.real if self.dtype.kind == "c" else self, axis=dims, keepdims=True)
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
    kernel=_logsumexp_kernel, meta=_logsumexp_meta, promote="float", supports_complex=True,
    grads={"self": lambda grad, self, result, dim, keepdim:
           _restore(grad, self.shape, dim, keepdim) * conj_of(exp(self - _restore(result, self.shape, dim, keepdim)))},
    samples=_logsumexp_samples, torch="torch.logsumexp")


# ---- norm ---------------------------------------------------------------------------------

def _norm_ord(p) -> float:
    """linalg.vector_norm's `ord`: a number (the p of Σ|x|^p, inf and -inf the max and min |x|, 0 the count)."""
    if isinstance(p, (str, bool)) or not isinstance(p, (int, float, np.integer, np.floating)):
        raise TypeError(f"linalg_vector_norm(): argument 'ord' must be Number, not {type(p).__name__}")
    return float(p)


def _norm_check(self, ord_, dims):
    if self.dtype.kind not in "fc":
        raise DtypeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. "
                         f"Got {scalar_type_name(self.dtype)}")
    if ord_ < 0 or ord_ == _INF:
        # max and min of an empty slice: no identity
        if math.prod(self.shape) == 0 and (not dims or any(self.shape[d] == 0 for d in dims)):
            raise RuntimeError(f"linalg.vector_norm cannot compute the {ord_:g} norm on an empty tensor because "
                               f"the operation does not have an identity")


def _cast(self, dtype):
    """vector_norm's `dtype`: the input cast before the norm is taken."""
    if dtype is None:
        return self
    target = _sum_dtype(self, dtype)
    check_norm_dtype("linalg.vector_norm", self.dtype, target)
    return _astype(self, target)


def check_norm_dtype(op, source, target):
    """linalg_vector_norm's (and matrix_norm's) checks of `dtype`: floating or complex as the input is, and
    not narrower than the input."""
    if target.kind not in "fc":
        raise DtypeError(f"{op}: dtype should be floating point or complex, but got {scalar_type_name(target)}")
    if (source.kind == "c") != (target.kind == "c"):
        kind = "complex" if source.kind == "c" else "real"
        raise DtypeError(f"{op}: dtype should be {kind} for {kind} inputs, but got {scalar_type_name(target)}")
    if dtypes.promote_types(dtypes.from_numpy(source), dtypes.from_numpy(target)).np != target:
        raise DtypeError(f"{op}: the dtype of the input ({scalar_type_name(source)}) should be convertible without "
                         f"narrowing to the specified dtype ({scalar_type_name(target)})")


def _norm_kernel(xp, self, ord, dim, keepdim, dtype):
    ord_ = _norm_ord(ord)
    self = _cast(self, dtype)
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
        out = xp.sum(a ** ord_, axis=dims, keepdims=keepdim) ** (1.0 / ord_)
    return xp.asarray(out, dtype=a.dtype)       # (a complex input's norm is real)


def _norm_meta(self, ord=2, dim=None, keepdim=False, dtype=None):
    ord_ = _norm_ord(ord)
    self = _cast(self, dtype)
    dims = normalize_dims(dim, self.ndim)
    _norm_check(self, ord_, dims)
    return MetaArray(reduced_shape(self.shape, dims, keepdim), self.dtype.type(0).real.dtype)


def _norm_grad(grad, self, result, ord, dim, keepdim, dtype):
    """PyTorch's linalg_vector_norm_backward, case by case (sgn: the complex one too); at norm == 0 the
    gradient is 0 (a subgradient). With `dtype`, taken in that dtype and cast back to the input's."""
    if dtype is not None:
        return _norm_grad(grad, self.to(dtype), result, ord, dim, keepdim, None).to(self.dtype)
    ord_ = _norm_ord(ord)
    dims = normalize_dims(dim, self.ndim)
    grad = _restore(grad, self.shape, dim, keepdim)
    norm = _restore(result, self.shape, dim, keepdim)
    if ord_ == 0:
        return zeros_like(self)
    if ord_ == 1:
        return sgn(self) * grad
    zero = norm == 0
    safe_norm = where(zero, 1.0, norm)      # NOTE: no 0/0 under the mask, in this backward or the next
    if ord_ == 2:
        return grad * where(zero, 0.0, self / safe_norm)
    if math.isinf(ord_):
        a = abs(self)
        mask = (a == norm) + (a != a)           # the arg-extremum, or a NaN
        return sgn(self) * (grad / sum(mask, dims, keepdim=True) * mask)
    if ord_ < 1:
        scaled = sgn(self) * where(self == 0, 0.0, abs(self) ** (ord_ - 1))
        return scaled * grad * norm ** (1 - ord_)
    if ord_ < 2:
        scaled = sgn(self) * abs(self) ** (ord_ - 1)
    else:
        scaled = self * abs(self) ** (ord_ - 2)
    return scaled * where(zero, 0.0, grad / safe_norm ** (ord_ - 1))


def _vector_norm_samples(op):
    x = make_arg((3, 4, 2), key=(op, "x"), away_from=0.0)
    m = make_arg((4, 3), key=(op, "m"), transposed=True, away_from=0.0)
    return [SampleInput("2 all", x), SampleInput("0-d", make_arg((), key=(op, "0"), away_from=0.0)),
            SampleInput("2 dim=1", x, 2, 1),
            SampleInput("2 dim=[0,2] keepdim", x, 2, [0, 2], True),
            SampleInput("1 dim=-1 T", m, 1, -1),
            SampleInput("inf dim=0", m, _INF, 0),
            SampleInput("-inf", x, -_INF),
            SampleInput("3 keepdim kw", x, ord=3, dim=1, keepdim=True),
            SampleInput("1.5", x, 1.5, [1, 2]),
            SampleInput("0.5", m, 0.5, 1),
            SampleInput("0", x, 0, 1)]


linalg_vector_norm = defop(
    "linalg_vector_norm(Tensor self, Scalar ord=2, int[]? dim=None, bool keepdim=False, *, "
    "ScalarType? dtype=None) -> Tensor",
    kernel=_norm_kernel, meta=_norm_meta, grads={"self": _norm_grad}, supports_complex=True,
    samples=_vector_norm_samples, torch="torch.linalg.vector_norm",
    doc="(Σ|x|^ord)^(1/ord) over dim (all elements without dim); ord inf/-inf the max/min |x|, 0 the count of "
        "nonzeros; `dtype` casts the input first.")


def _norm(self, p="fro", dim=None, keepdim=False, dtype=None):
    """torch.norm (torch/functional.py's norm): linalg.vector_norm for a number and for 'fro' over at most
    two dims, linalg.matrix_norm for 'nuc' (over every dim without one)."""
    if isinstance(p, str) and p in ("inf", "-inf"):     # YAML has no float('inf'); accept its spelling as a string
        p = float(p)
    if isinstance(p, str):
        if p == "fro" and (dim is None or len(dim) <= 2):
            return linalg_vector_norm(self, 2, dim, keepdim, dtype=dtype)
        # NOTE: by the dispatcher's name: the matrix norms (their singular values) sit above this family
        return _ops.linalg_matrix_norm(self, p, list(range(self.ndim)) if dim is None else dim, keepdim,
                                       dtype=dtype)
    return linalg_vector_norm(self, 2.0 if p is None else p, dim, keepdim, dtype=dtype)


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
        SampleInput("nuc", m, "nuc"),
        SampleInput("nuc dim=[0,2]", x, "nuc", [0, 2]),
    ]


norm = defop(
    "norm(Tensor self, Scalar? p=\"fro\", int[]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
    composite=_norm, samples=_norm_samples, torch="torch.norm",
    doc="torch.norm: the vector p-norm over dim (every element without dim; 'fro' is 2), or the nuclear norm.")



# ---- nansum, nanmean -----------------------------------------------------------------------------

def _nansum_meta(self, dim, keepdim, dtype):
    return MetaArray(reduced_shape(self.shape, normalize_dims(dim, self.ndim), keepdim), _sum_dtype(self, dtype))


def _nansum_kernel(xp, self, dim, keepdim, dtype):
    return xp.nansum(self, axis=normalize_dims(dim, self.ndim), keepdims=keepdim, dtype=_sum_dtype(self, dtype))


def _nansum_grad(grad, self, dim, keepdim):
    return where(isnan(self), 0.0, sum_backward(grad, list(self.shape), dim, keepdim))


def _nan_samples(op):
    x = make_arg((3, 4, 2), key=(op, "nan"), requires_grad=False).numpy().copy()
    x[0, 1, 0] = x[2, 1:, 1] = np.nan
    t = tensor(x, dtype=dtypes.float64, requires_grad=True)
    return reduction_samples()(op) + [SampleInput("nan", t), SampleInput("nan dim=1", t, 1),
                                      SampleInput("nan dim=[0,2] keepdim", t, [0, 2], True)]


nansum = defop(
    "nansum(Tensor self, int[]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
    kernel=_nansum_kernel, meta=_nansum_meta,
    grads={"self": _nansum_grad},
    samples=lambda op: _nan_samples(op) + [SampleInput("int64", int_arg((3, 4), (op, "i"), -3, 4), 1)],
    torch="torch.nansum",
    doc="The sum treating NaN as zero (integers sum to int64).")


def _nanmean(self, dim, keepdim, dtype):
    if not (dtype if dtype is not None else self.dtype).is_floating_point:
        raise DtypeError(f"nanmean(): expected input to have floating point or complex dtype but got "
                         f"{scalar_type_name(self.dtype.np)}")
    count = sum(logical_not(isnan(self)), dim, keepdim)
    return div(nansum(self, dim, keepdim, dtype=dtype), count)


nanmean = defop(
    "nanmean(Tensor self, int[]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
    composite=_nanmean, samples=_nan_samples, torch="torch.nanmean",
    doc="The mean of the non-NaN elements (NaN where all are NaN).")
