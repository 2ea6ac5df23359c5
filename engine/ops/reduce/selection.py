"""Selection (ATen's Sorting, TensorCompare, Unique): reductions that pick elements by
value — amax/amin, max/min with dim, argmax/argmin, sort, argsort, topk, kthvalue, median, nanmedian,
cummax/cummin, unique (via `_unique2`) — the counts bincount and count_nonzero, and the
value tests all, any and the non-differentiable allclose and equal (Python bools).

Every picking op finds its elements by index (a stable sort or an arg-reduction) and
returns them with their int64 indices, which get no gradient. The gradient of the
values is `grad` put back where they came from (PyTorch's
value_selecting_reduction_backward: a scatter into zeros), whose own gradient is a
gather, so double backward comes for free. The full reductions max(), min() and
median() return one value and share the gradient evenly among ties, as amax does.
unique's and bincount's output shapes depend on the values, so they have no Meta rule.
"""
from __future__ import annotations

import math

import numpy as np

from ... import dtypes
from ..._tensor import Tensor
from ...backends.meta import MetaArray
from ...creation import tensor
from ...errors import DimensionError, DtypeNotImplementedError, ShapeError
from ...messages import scalar_type_name
from ...shapes import normalize_dim, normalize_dims, reduced_shape
from ..pointwise.binary import eq, maximum, minimum, where
from ..pointwise.logical import isclose, isnan
from ..registry import defop
from .._common import _data_dependent, _named_results, weighted_bincount
from ..samples import SampleInput, int_arg, make_arg, reduction_samples
from ..shape.advanced_indexing import _zeros, nonzero, scatter_add
from ..shape.view import unsqueeze
from ..factories import full_like
from ..shape.rearrange import broadcast_tensors
from .arithmetic import (
    _restore_reduced_dims,
    sum,  # noqa: A004
)

__all__ = ["allclose", "equal", "unique"]

_INT64 = np.dtype(np.int64)
_BOOL = np.dtype(np.bool_)


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
        mask = self == _restore_reduced_dims(result, self.shape, dim, keepdim)
        return _restore_reduced_dims(grad, self.shape, dim, keepdim) / sum(mask, dims, keepdim=True) * mask
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

# ---- shared helpers -----------------------------------------------------------------------

def _keep(a, keepdim, d):
    return a if keepdim else a.squeeze(axis=d)


def _indices_meta(self, shape):
    return MetaArray(shape, self.dtype), MetaArray(shape, _INT64)


def _dim_shape(name, self, dim, keepdim):
    d = _nonempty_dims(name, self, [dim])
    return reduced_shape(self.shape, d, keepdim)


def _stable_argsort(xp, a, axis, descending):
    """Indices that sort `a` along `axis`, equal elements in their original order (NaN largest,
    as PyTorch); descending sorts the reversed array ascending and maps the indices back."""
    def argsort(x):
        # NOTE: every library is asked by name: NumPy's default kind is not stable (CuPy's only one is)
        return xp.argsort(x, axis=axis, kind="stable")
    if not descending:
        return argsort(a)
    n = a.shape[axis]
    return (n - 1) - xp.flip(argsort(xp.flip(a, axis=axis)), axis=axis)


def _sorted(xp, self, dim, descending):
    """(values, indices) of self sorted along dim; a 0-d tensor is its own sort."""
    if self.ndim == 0:
        return self.copy(), xp.zeros((), dtype=_INT64)
    d = normalize_dim(dim, self.ndim)
    idx = _stable_argsort(xp, self, d, descending).astype(_INT64, copy=False)
    return xp.take_along_axis(self, idx, axis=d), idx


def _select_backward(grad, self_shape, dim, indices, keepdim):
    """PyTorch's value_selecting_reduction_backward: grad scattered to where the values were."""
    if not self_shape:
        return grad
    d = normalize_dim(dim, len(self_shape))
    if not keepdim:
        grad, indices = unsqueeze(grad, d), unsqueeze(indices, d)
    return scatter_add(_zeros(grad, self_shape), d, indices, grad)


def _evenly_distribute(grad, self, result):
    """PyTorch's evenly_distribute_backward: ties (and NaNs, when the result is NaN) share grad."""
    mask = where(isnan(result), isnan(self), self == result)
    return where(mask, grad / sum(mask), 0.0)


def _value_samples(op):
    x = make_arg((3, 4, 2), key=(op, 0))
    return [SampleInput("0-d", make_arg((), key=(op, 1)), 0),
            SampleInput("dim=1", x, 1), SampleInput("dim=-1 keepdim", x, -1, True),
            SampleInput("dim=0 T", make_arg((5, 3), key=(op, 2), transposed=True), 0),
            SampleInput("int64 dim=1", make_arg((3, 5), key=(op, 3), low=-20, high=20, integer=True,
                                               dtype=dtypes.int64), 1),
            SampleInput("uint8 dim=0", make_arg((4, 3), key=(op, 5), low=0, high=255, integer=True,
                                               dtype=dtypes.uint8), 0)]


# ---- max / min ----------------------------------------------------------------------------

def _extreme(name, arg):
    def kernel(xp, self, dim, keepdim):
        if dim is None:
            return getattr(xp, name)(self, axis=_nonempty_dims(name, self, None))
        if self.ndim == 0:
            normalize_dim(dim, 0)
            return self.copy(), xp.zeros((), dtype=_INT64)
        d = _nonempty_dims(name, self, [dim])[0]
        idx = getattr(xp, arg)(self, axis=d, keepdims=True)
        return _keep(xp.take_along_axis(self, idx, axis=d), keepdim, d), _keep(idx.astype(_INT64), keepdim, d)

    def meta(self, dim, keepdim):
        if dim is None:
            _nonempty_dims(name, self, None)
            return MetaArray((), self.dtype)
        return _indices_meta(self, _dim_shape(name, self, dim, keepdim))

    def grad_formula(grad, self, self_shape, result, dim, keepdim):
        if dim is None:
            return _evenly_distribute(grad, self, result)
        return _select_backward(grad, self_shape, dim, result[1], keepdim)

    def samples(op):
        return [SampleInput("full", make_arg((3, 4), key=(op, "f"))),
                SampleInput("full 0-d", make_arg((), key=(op, "z"))),
                SampleInput("full ties", _tied()), SampleInput("dim=1 kw", make_arg((3, 4), key=(op, "k")),
                                                                 dim=1)] + _value_samples(op)
    return kernel, meta, grad_formula, samples


def _tied():
    from ...creation import tensor
    return tensor([[1.0, 3.0, -1.0], [3.0, 0.5, -1.0]], dtype=dtypes.float64, requires_grad=True)


def _declare_extreme(name, arg, binary):
    kernel, meta, grad_formula, samples = _extreme(name, arg)
    fn = defop(
        f"{name}(Tensor self, int? dim=None, bool keepdim=False) -> Tensor",
        kernel=kernel, meta=meta, grads={"self": grad_formula},
        backward_name=(f"{name.capitalize()}Backward0", f"{name.capitalize()}Backward1"),
        overload=lambda self, dim=None, keepdim=False: 1 if dim is None else 0,
        samples=samples, torch=f"torch.{name}",
        doc=f"{name}(x): the {name}imum element (ties share the gradient); {name}(x, dim): the named pair "
            f"(values, indices) along dim, indices int64 (the first {name}imum); {name}(x, other): {name}imum.")
    return _named_results(fn, name, binary)


max = _declare_extreme("max", "argmax", lambda self, other: maximum(self, other))  # noqa: A001 — PyTorch's name
min = _declare_extreme("min", "argmin", lambda self, other: minimum(self, other))  # noqa: A001 — PyTorch's name


def _arg_extreme(name):
    def kernel(xp, self, dim, keepdim):
        if dim is None:
            _nonempty_dims(name, self, None)
            out = getattr(xp, name)(self.reshape(-1)).astype(_INT64)
            return out.reshape((1,) * self.ndim) if keepdim else xp.asarray(out)
        if self.ndim == 0:
            normalize_dim(dim, 0)
            return xp.zeros((), dtype=_INT64)
        d = _nonempty_dims(name, self, [dim])[0]
        return getattr(xp, name)(self, axis=d, keepdims=keepdim).astype(_INT64)

    def meta(self, dim, keepdim):
        if dim is None:
            _nonempty_dims(name, self, None)
            return MetaArray((1,) * self.ndim if keepdim else (), _INT64)
        return MetaArray(_dim_shape(name, self, dim, keepdim), _INT64)

    def samples(op):
        return [SampleInput("full", make_arg((3, 4), key=(op, 0))),
                SampleInput("full keepdim kw", make_arg((3, 4), key=(op, 1)), keepdim=True)] + _value_samples(op)

    return defop(f"{name}(Tensor self, int? dim=None, bool keepdim=False) -> Tensor",
                 kernel=kernel, meta=meta, samples=samples, torch=f"torch.{name}",
                 doc=f"The int64 index of the {name[3:]}imum (flat without dim; the first among ties).")


argmax = _arg_extreme("argmax")
argmin = _arg_extreme("argmin")


# ---- sort / argsort / topk / kthvalue / median ------------------------------------------------

def _sort_meta(self, dim=-1, descending=False, stable=None):
    normalize_dim(dim, self.ndim)
    return _indices_meta(self, self.shape)


def _sort_samples(op):
    x = make_arg((3, 5), key=(op, 0))
    return [SampleInput("default", x), SampleInput("dim=0 descending", x, 0, True),
            SampleInput("(2,3,4) dim=1 stable kw", make_arg((2, 3, 4), key=(op, 1)), dim=1, stable=True),
            SampleInput("T descending kw", make_arg((4, 3), key=(op, 2), transposed=True), descending=True),
            SampleInput("0-d", make_arg((), key=(op, 3))),
            SampleInput("int64 ties", make_arg((2, 7), key=(op, 4), low=0, high=3, integer=True,
                                               dtype=dtypes.int64), dim=1, descending=True, stable=True),
            SampleInput("int8", make_arg((3, 4), key=(op, 6), low=-100, high=100, integer=True, dtype=dtypes.int8), 0)]


sort = _named_results(defop(
    "sort(Tensor self, int dim=-1, bool descending=False, *, bool? stable=None) -> (Tensor values, Tensor indices)",
    kernel=lambda xp, self, dim, descending, stable: _sorted(xp, self, dim, descending), meta=_sort_meta,
    grads={"self": lambda grad, self_shape, dim, result: _select_backward(grad, self_shape, dim, result[1], True)},
    backward_name=("SortBackward0", "SortBackward1"),    # sort.stable: when `stable` is given
    overload=lambda self, dim=-1, descending=False, stable=None: 0 if stable is None else 1,
    samples=_sort_samples, torch="torch.sort",
    doc="(values, indices) sorted along dim; always stable (equal elements keep their order), NaN largest."),
    "sort")

argsort = defop(
    "argsort(Tensor self, int dim=-1, bool descending=False, *, bool stable=False) -> Tensor",
    kernel=lambda xp, self, dim, descending, stable: _sorted(xp, self, dim, descending)[1],
    meta=lambda self, dim, descending, stable: _sort_meta(self, dim)[1],
    samples=lambda op: [s for s in _sort_samples(op) if "stable kw" not in s.name] + [
        SampleInput("stable kw", make_arg((2, 6), key=(op, 5), low=0, high=2, integer=True, dtype=dtypes.int64),
                    stable=True)],
    torch="torch.argsort", doc="The int64 indices sort() returns.")


def _topk_check(self, k, dim):
    d = normalize_dim(dim, self.ndim)
    size = self.shape[d] if self.ndim else 1
    if not 0 <= k <= size:
        raise ShapeError("selected index k out of range")      # a RuntimeError, as PyTorch's
    return d


def _topk_kernel(xp, self, k, dim, largest, sorted):
    d = _topk_check(self, k, dim)
    values, idx = _sorted(xp, self, d, largest)
    if self.ndim == 0:
        return values, idx
    keep = (slice(None),) * d + (slice(0, k),)
    return xp.ascontiguousarray(values[keep]), xp.ascontiguousarray(idx[keep])


def _topk_meta(self, k, dim, largest, sorted):
    d = _topk_check(self, k, dim)
    shape = tuple(k if i == d else s for i, s in enumerate(self.shape))
    return _indices_meta(self, shape)


topk = _named_results(defop(
    "topk(Tensor self, int k, int dim=-1, bool largest=True, bool sorted=True) -> (Tensor values, Tensor indices)",
    kernel=_topk_kernel, meta=_topk_meta,
    grads={"self": lambda grad, self_shape, dim, result: _select_backward(grad, self_shape, dim, result[1], True)},
    samples=lambda op: [
        SampleInput("k=2", make_arg((3, 5), key=(op, 0)), 2),
        SampleInput("k=3 dim=0 smallest", make_arg((4, 3), key=(op, 1), transposed=True), 3, 0, False),
        SampleInput("(2,4,3) k=1 dim=1 kw", make_arg((2, 4, 3), key=(op, 2)), 1, dim=1),
        SampleInput("k=0", make_arg((2, 3), key=(op, 3)), 0),
        SampleInput("0-d k=1", make_arg((), key=(op, 4)), 1),
        SampleInput("int64", make_arg((2, 6), key=(op, 5), low=-50, high=50, integer=True, dtype=dtypes.int64), 3)],
    torch="torch.topk",
    doc="The k largest (or smallest) elements along dim and their indices, in sorted order."), "topk")


def _kth_check(self, k, dim):
    d = normalize_dim(dim, self.ndim)
    if not 1 <= k <= (self.shape[d] if self.ndim else 1):
        raise ShapeError(f"kthvalue(): selected number k out of range for dimension {dim}")
    return d


def _kthvalue_kernel(xp, self, k, dim, keepdim):
    d = _kth_check(self, k, dim)
    values, idx = _sorted(xp, self, d, False)
    if self.ndim == 0:
        return values, idx
    pick = (slice(None),) * d + (slice(k - 1, k),)
    return _keep(values[pick], keepdim, d), _keep(idx[pick], keepdim, d)


def _kthvalue_meta(self, k, dim, keepdim):
    d = _kth_check(self, k, dim)
    return _indices_meta(self, reduced_shape(self.shape, (d,), keepdim) if self.ndim else ())


kthvalue = _named_results(defop(
    "kthvalue(Tensor self, int k, int dim=-1, bool keepdim=False) -> (Tensor values, Tensor indices)",
    kernel=_kthvalue_kernel, meta=_kthvalue_meta,
    grads={"self": lambda grad, self_shape, dim, keepdim, result:
           _select_backward(grad, self_shape, dim, result[1], keepdim)},
    samples=lambda op: [
        SampleInput("k=2", make_arg((3, 5), key=(op, 0)), 2),
        SampleInput("k=4 dim=0 keepdim", make_arg((4, 3), key=(op, 1), transposed=True), 4, 0, True),
        SampleInput("(2,4,3) k=1 dim=1 kw", make_arg((2, 4, 3), key=(op, 2)), 1, dim=1),
        SampleInput("0-d", make_arg((), key=(op, 3)), 1),
        SampleInput("int64", make_arg((2, 6), key=(op, 4), low=-50, high=50, integer=True, dtype=dtypes.int64), 3)],
    torch="torch.kthvalue", doc="The k-th smallest element along dim (k from 1) and its index."), "kthvalue")


def _median_dim(xp, self, d, keepdim):
    """The lower median along d and its index; a slice with NaN gives NaN and its first NaN's index."""
    values, idx = _sorted(xp, self, d, False)
    if self.ndim == 0:
        return values, idx
    pick = (slice(None),) * d + (slice((self.shape[d] - 1) // 2, (self.shape[d] - 1) // 2 + 1),)
    values, idx = values[pick], idx[pick]
    if self.dtype.kind == "f":
        nan = xp.isnan(self)
        has_nan = nan.any(axis=d, keepdims=True)
        values = xp.where(has_nan, xp.asarray(np.nan, dtype=self.dtype), values)
        idx = xp.where(has_nan, xp.argmax(nan, axis=d, keepdims=True), idx)
    return _keep(values, keepdim, d), _keep(idx, keepdim, d)


def _median_kernel(xp, self, dim, keepdim):
    if dim is None:
        flat = self.reshape(-1)
        if flat.size == 0:
            return xp.asarray(np.nan, dtype=self.dtype)
        return _median_dim(xp, flat, 0, False)[0]
    if self.ndim:
        _nonempty_dims("median", self, [dim])
    return _median_dim(xp, self, normalize_dim(dim, self.ndim), keepdim)


def _median_meta(self, dim, keepdim):
    if dim is None:
        return MetaArray((), self.dtype)
    if self.ndim == 0:
        normalize_dim(dim, 0)
        return _indices_meta(self, ())
    return _indices_meta(self, _dim_shape("median", self, dim, keepdim))


median = _named_results(defop(
    "median(Tensor self, int? dim=None, bool keepdim=False) -> Tensor",
    kernel=_median_kernel, meta=_median_meta,
    grads={"self": lambda grad, self, self_shape, dim, keepdim, result:
           _evenly_distribute(grad, self, result) if dim is None else
           _select_backward(grad, self_shape, dim, result[1], keepdim)},
    backward_name=("MedianBackward0", "MedianBackward1"), overload=lambda self, dim=None, keepdim=False:
        0 if dim is None else 1,
    samples=lambda op: [
        SampleInput("full odd", make_arg((3, 5), key=(op, 0))), SampleInput("full even", make_arg((2, 4), key=(op, 1))),
        SampleInput("dim=1 even", make_arg((3, 4), key=(op, 2)), 1),
        SampleInput("dim=0 keepdim T", make_arg((5, 3), key=(op, 3), transposed=True), 0, True),
        SampleInput("(2,3,3) dim=-1 kw", make_arg((2, 3, 3), key=(op, 4)), dim=-1),
        SampleInput("0-d dim", make_arg((), key=(op, 5)), 0),
        SampleInput("int64 dim=1", make_arg((2, 5), key=(op, 6), low=-9, high=9, integer=True, dtype=dtypes.int64), 1)],
    torch="torch.median",
    doc="The lower median: of all elements (a tensor), or along dim (values, indices); NaN propagates."), "median")


def _nanmedian_dim(xp, self, d, keepdim):
    """The lower median of the non-NaN elements along d and its index (ties: the first, as a stable
    sort puts it); an all-NaN slice gives NaN and index 0 (NaNs sort last)."""
    values, idx = _sorted(xp, self, d, False)
    if self.ndim == 0:
        return values, idx
    if self.dtype.kind == "f":
        count = xp.sum(~xp.isnan(self), axis=d, keepdims=True)
        pos = xp.maximum((count - 1) // 2, 0)
    else:
        pos = xp.full((1,) * self.ndim, (self.shape[d] - 1) // 2, dtype=_INT64)
        pos = xp.broadcast_to(pos, self.shape[:d] + (1,) + self.shape[d + 1:])
    return (_keep(xp.take_along_axis(values, pos, axis=d), keepdim, d),
            _keep(xp.take_along_axis(idx, pos, axis=d), keepdim, d))


def _nanmedian_kernel(xp, self, dim, keepdim):
    if dim is None:
        flat = self.reshape(-1)
        if flat.size == 0:
            return xp.asarray(np.nan, dtype=self.dtype)
        return _nanmedian_dim(xp, flat, 0, False)[0]
    if self.ndim:
        _nonempty_dims("nanmedian", self, [dim])
    return _nanmedian_dim(xp, self, normalize_dim(dim, self.ndim), keepdim)


def _nanmedian_meta(self, dim, keepdim):
    if dim is None:
        return MetaArray((), self.dtype)
    if self.ndim == 0:
        normalize_dim(dim, 0)
        return _indices_meta(self, ())
    return _indices_meta(self, _dim_shape("nanmedian", self, dim, keepdim))


def _with_nans(op, shape, k, nan_row):
    """A float64 sample with NaN at every third element (and with `nan_row`, a first row of NaNs only:
    a reduction along dim would give NaN there, whose finite differences gradcheck cannot take)."""
    from ...creation import tensor
    v = make_arg(shape, key=(op, k), requires_grad=False).numpy().copy()
    v.reshape(-1)[::3] = np.nan
    if nan_row:
        v[0] = np.nan
    return tensor(v, dtype=dtypes.float64, requires_grad=True)


nanmedian = _named_results(defop(
    "nanmedian(Tensor self, int? dim=None, bool keepdim=False) -> Tensor",
    kernel=_nanmedian_kernel, meta=_nanmedian_meta,
    grads={"self": lambda grad, self, self_shape, dim, keepdim, result:
           _evenly_distribute(grad, self, result) if dim is None else
           _select_backward(grad, self_shape, dim, result[1], keepdim)},
    backward_name=("NanmedianBackward0", "NanmedianBackward1"), overload=lambda self, dim=None, keepdim=False:
        0 if dim is None else 1,
    samples=lambda op: [
        SampleInput("full odd", make_arg((3, 5), key=(op, 0))), SampleInput("full even", make_arg((2, 4), key=(op, 1))),
        SampleInput("full NaNs", _with_nans(op, (3, 4), 7, True)),
        SampleInput("dim=1 NaNs", _with_nans(op, (4, 5), 8, False), 1),
        SampleInput("dim=1 even", make_arg((3, 4), key=(op, 2)), 1),
        SampleInput("dim=0 keepdim T", make_arg((5, 3), key=(op, 3), transposed=True), 0, True),
        SampleInput("(2,3,3) dim=-1 kw", make_arg((2, 3, 3), key=(op, 4)), dim=-1),
        SampleInput("0-d dim", make_arg((), key=(op, 5)), 0),
        SampleInput("int64 dim=1", make_arg((2, 5), key=(op, 6), low=-9, high=9, integer=True, dtype=dtypes.int64), 1)],
    torch="torch.nanmedian",
    doc="median ignoring NaNs: the lower median of the non-NaN elements (NaN when there are none); of all "
        "elements (a tensor), or along dim (values, indices)."), "nanmedian")


# ---- cummax / cummin ------------------------------------------------------------------------

def _running(xp, ufunc, x, axis):
    """`ufunc.accumulate(x, axis)` for maximum/minimum on any array module.

    CuPy (seen on CuPy 14) and dask.array have no `accumulate` for these ufuncs; there the
    running extreme is an inclusive scan by doubling: log2(n) elementwise passes over
    shifted slices, with the ufunc's own NaN propagation."""
    if xp is np:
        return getattr(np, ufunc).accumulate(x, axis=axis)
    f = getattr(xp, ufunc)
    out = xp.moveaxis(x, axis, -1)
    n, shift = out.shape[-1], 1
    while shift < n:
        out = xp.concatenate([out[..., :shift], f(out[..., shift:], out[..., :-shift])], axis=-1)
        shift *= 2
    return xp.moveaxis(out, -1, axis)


def _cumulative_extreme(name, ufunc):
    def kernel(xp, self, dim):
        d = normalize_dim(dim, self.ndim)
        if self.ndim == 0:
            return self.copy(), xp.zeros((), dtype=_INT64)
        values = _running(xp, ufunc, self, d)
        # PyTorch keeps the latest index among ties (`x >= best`), and a NaN once seen
        hit = self == values
        if self.dtype.kind == "f":
            hit |= xp.isnan(self)
        shape = [1] * self.ndim
        shape[d] = self.shape[d]
        positions = xp.arange(self.shape[d], dtype=_INT64).reshape(shape)
        idx = _running(xp, "maximum", xp.where(hit, positions, 0), d)
        return values, idx

    def meta(self, dim):
        normalize_dim(dim, self.ndim)
        return _indices_meta(self, self.shape)

    def grad_formula(grad, self, dim, result):
        if self.ndim == 0:
            return grad
        d = normalize_dim(dim, self.ndim)
        return scatter_add(_zeros(grad, self.shape), d, result[1], grad)

    def samples(op):
        from ...creation import tensor
        ties = tensor([[1.0, 3.0, 3.0, -1.0, 4.0], [-2.0, -2.0, 0.5, -3.0, -3.0]], dtype=dtypes.float64)
        return [SampleInput("(3,4) dim 1", make_arg((3, 4), key=(op, 0)), 1),
                SampleInput("(4,3)T dim 0", make_arg((4, 3), key=(op, 1), transposed=True), 0),
                SampleInput("(2,3,2) dim -2", make_arg((2, 3, 2), key=(op, 2)), -2),
                SampleInput("0-d", make_arg((), key=(op, 3)), 0),
                SampleInput("ties", ties, 1),
                SampleInput("int64", make_arg((2, 6), key=(op, 4), low=-4, high=4, integer=True,
                                              dtype=dtypes.int64), 1)]

    return _named_results(defop(
        f"{name}(Tensor self, int dim) -> (Tensor values, Tensor indices)",
        kernel=kernel, meta=meta, grads={"self": grad_formula}, samples=samples, torch=f"torch.{name}",
        doc=f"The running {name[3:]}imum along dim and where it was (the latest index among ties)."), name)


cummax = _cumulative_extreme("cummax", "maximum")
cummin = _cumulative_extreme("cummin", "minimum")


# ---- all / any / count_nonzero ------------------------------------------------------------------

def _logical_reduction(name):
    def out_dtype(self):
        return self.dtype if self.dtype == np.uint8 else _BOOL      # PyTorch keeps uint8 for uint8

    def reduced(dim, ndim):
        # PyTorch's all.dims / any.dims: an empty list reduces no dimension (None, every one)
        return () if isinstance(dim, (list, tuple)) and not dim else normalize_dims(dim, ndim)

    def kernel(xp, self, dim, keepdim):
        dims = reduced(dim, self.ndim)
        return getattr(xp, name)(self, axis=dims, keepdims=keepdim).astype(out_dtype(self))

    def meta(self, dim, keepdim):
        return MetaArray(reduced_shape(self.shape, reduced(dim, self.ndim), keepdim), out_dtype(self))

    def samples(op):
        mask = make_arg((3, 4), key=(op, 0), requires_grad=False) > 0
        ints = make_arg((2, 3, 2), key=(op, 1), low=0, high=2, integer=True, dtype=dtypes.int64)
        x = make_arg((3, 4), key=(op, 2), requires_grad=False)
        return [SampleInput("bool full", mask), SampleInput("bool dim=1", mask, 1),
                SampleInput("int dim=[0,2] keepdim", ints, [0, 2], True), SampleInput("float full", x),
                SampleInput("float dim=0 kw", x, dim=0), SampleInput("0-d", make_arg((), key=(op, 3)) > 0),
                SampleInput("uint8 dim=1", make_arg((3, 4), key=(op, 4), low=0, high=3, integer=True,
                                                    dtype=dtypes.uint8), 1),
                SampleInput("int16", make_arg((3, 4), key=(op, 5), low=0, high=3, integer=True, dtype=dtypes.int16)),
                SampleInput("dim=None keepdim", x, None, True), SampleInput("dim=[]", x, []),
                SampleInput("dim=[] keepdim", ints, [], True)]

    return defop(f"{name}(Tensor self, int[]? dim=None, bool keepdim=False) -> Tensor",
                 kernel=kernel, meta=meta, samples=samples, torch=f"torch.{name}",
                 doc=f"Whether {name} element(s) are non-zero, over dim (every dim by default); bool "
                     f"(uint8 for uint8 input).")


all = _logical_reduction("all")  # noqa: A001 — PyTorch's name
any = _logical_reduction("any")  # noqa: A001 — PyTorch's name


count_nonzero = defop(
    "count_nonzero(Tensor self, int[]? dim=None) -> Tensor",
    supports_complex=True,
    kernel=lambda xp, self, dim: xp.asarray(xp.count_nonzero(self, axis=normalize_dims(dim, self.ndim)),
                                            dtype=_INT64),
    meta=lambda self, dim: MetaArray(reduced_shape(self.shape, normalize_dims(dim, self.ndim), False), _INT64),
    samples=lambda op: [
        SampleInput("full", make_arg((3, 4), key=(op, 0), low=-1, high=2, integer=True, dtype=dtypes.float64)),
        SampleInput("dim=1", make_arg((3, 4), key=(op, 1), low=-1, high=2, integer=True, dtype=dtypes.int64), 1),
        SampleInput("dim=[0,2]", make_arg((2, 3, 2), key=(op, 2), low=0, high=2, integer=True,
                                          dtype=dtypes.float64), [0, 2]),
        SampleInput("bool", make_arg((5,), key=(op, 3), requires_grad=False) > 0)],
    torch="torch.count_nonzero", doc="The number of non-zero elements over dim (every dim by default), int64.")




# ---- allclose, equal: Python bools --------------------------------------------------------------------

def allclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
    """Whether every element of self is close to other's (isclose), as a Python bool."""
    return bool(all(isclose(self, other, rtol, atol, equal_nan)).item())


def equal(self, other) -> bool:
    """True when self and other have the same shape and equal elements (NaN is never equal)."""
    if tuple(self.shape) != tuple(other.shape):
        return False
    return bool(all(eq(self, other)).item())


# ---- bincount --------------------------------------------------------------------------------------------

def _bincount_kernel(xp, self, weights, minlength):
    if self.dtype.kind not in "iu":
        raise DtypeNotImplementedError(f"\"bincount_cpu\" not implemented for '{scalar_type_name(self.dtype)}'")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if self.ndim == 1 and self.size == 0:
        return xp.zeros(minlength, dtype=_INT64)
    if self.ndim != 1 or bool((self < 0).any()):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is None:
        return xp.bincount(self, minlength=minlength).astype(_INT64, copy=False)
    if weights.ndim != 1 or weights.shape[0] != self.shape[0]:
        raise RuntimeError("weights should be 1-d and have the same length as input")
    out = np.dtype(np.float32) if weights.dtype == np.float32 else np.dtype(np.float64)
    return weighted_bincount(xp, self, weights.astype(np.float64, copy=False), minlength).astype(out)


bincount = defop(
    "bincount(Tensor self, Tensor? weights=None, int minlength=0) -> Tensor",
    kernel=_bincount_kernel, meta=_data_dependent("bincount"),
    samples=lambda op: [
        SampleInput("(8,)", int_arg((8,), (op, 0), 0, 5)),
        SampleInput("minlength", int_arg((6,), (op, 1), 0, 3), minlength=7),
        SampleInput("weights", int_arg((6,), (op, 2), 0, 4), make_arg((6,), key=(op, 3), requires_grad=False)),
        SampleInput("int weights", int_arg((4,), (op, 4), 0, 4), int_arg((4,), (op, 5), -2, 3), 2),
        SampleInput("empty", tensor(np.zeros(0, dtype=np.int64)), minlength=3)],
    torch="torch.bincount", tags=("dynamic_output_shape",),
    doc="How often each value 0..max occurs in a 1-D non-negative integer tensor (weighted sums with weights).")


# ---- unique ----------------------------------------------------------------------------------------------

def _unique2_kernel(xp, self, sorted, return_inverse, return_counts):  # noqa: A002 — PyTorch's name
    values, inverse, counts = xp.unique(self.reshape(-1), return_inverse=True, return_counts=True, equal_nan=False)
    empty = xp.zeros(0, dtype=_INT64)
    return (values.astype(self.dtype, copy=False),
            inverse.reshape(self.shape).astype(_INT64, copy=False) if return_inverse else empty,
            counts.astype(_INT64, copy=False) if return_counts else empty)


def _not_implemented(name):
    # derivatives.yaml's not_implemented("name"): the node is recorded, its backward raises
    def backward(grad):
        raise NotImplementedError(f"the derivative for '{name}' is not implemented.")
    return backward


_unique2 = defop(
    "_unique2(Tensor self, bool sorted=True, bool return_inverse=False, bool return_counts=False) "
    "-> (Tensor, Tensor, Tensor)",
    kernel=_unique2_kernel, meta=_data_dependent("_unique2"),
    # PyTorch records Unique2Backward0 on the values, whose backward raises (derivatives.yaml: not_implemented)
    grads={"self": _not_implemented("_unique2")}, differentiable=False,
    samples=lambda op: [
        SampleInput("int64", tensor([3, 1, 2, 3, 1], dtype=dtypes.int64), return_inverse=True,
                    return_counts=True),
        SampleInput("(2,3) inverse", int_arg((2, 3), (op, 0), -2, 3).double(), True, True),
        SampleInput("nan counts", tensor([3.0, np.nan, 1.0, np.nan, 3.0]), return_counts=True),
        SampleInput("bool", tensor([True, False, True]))],
    torch="torch._unique2", tags=("dynamic_output_shape",),
    doc="The sorted distinct values, the index of each element's value in them (return_inverse) and "
        "how often each occurs (return_counts); an empty int64 tensor for an output not asked for.")


def _unique_dim_kernel(xp, self, dim, sorted, return_inverse, return_counts):  # noqa: A002 — PyTorch's name
    dim = normalize_dim(dim, self.ndim)
    # (unlike _unique2's, aten::unique_dim's inverse and counts are there whether asked for or not)
    values, inverse, counts = xp.unique(self, axis=dim, return_inverse=True, return_counts=True, equal_nan=False)
    return values.astype(self.dtype, copy=False), inverse.reshape(-1).astype(_INT64, copy=False), \
        counts.astype(_INT64, copy=False)


unique_dim = defop(
    "unique_dim(Tensor self, int dim, bool sorted=True, bool return_inverse=False, bool return_counts=False) "
    "-> (Tensor, Tensor, Tensor)",
    kernel=_unique_dim_kernel, meta=_data_dependent("unique_dim"),
    grads={"self": _not_implemented("unique_dim")}, differentiable=False,
    samples=lambda op: [
        SampleInput("rows", tensor([[1.0, 2.0], [1.0, 2.0], [0.0, 5.0]]), 0, True, True, True),
        SampleInput("columns int64", tensor([[3, 1, 3], [1, 2, 1]], dtype=dtypes.int64), 1, return_counts=True),
        SampleInput("dim -1", tensor([[2.0, 2.0, 1.0]]), -1, return_inverse=True)],
    torch="torch.ops.aten.unique_dim", tags=("dynamic_output_shape",),
    doc="The distinct slices of self along dim, sorted (each slice compared whole), with the index of each "
        "slice's value (return_inverse) and each value's count (return_counts).")


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):  # noqa: A002 — PyTorch's names
    """The sorted distinct elements of input (flattened), or its distinct slices along `dim`; with
    return_inverse and/or return_counts, a tuple adding the index of each element's (slice's) value and
    each value's count."""
    if dim is not None:
        values, inverse, counts = unique_dim(input, dim, sorted, return_inverse, return_counts)
    else:
        values, inverse, counts = _unique2(input, sorted, return_inverse, return_counts)
    return _asked(values, inverse, counts, return_inverse, return_counts)


def _asked(values, inverse, counts, return_inverse, return_counts):
    """torch.unique's and unique_consecutive's result: the values, and the outputs asked for."""
    if return_inverse and return_counts:
        return values, inverse, counts
    if return_inverse:
        return values, inverse
    if return_counts:
        return values, counts
    return values


def _unique_consecutive_kernel(xp, self, return_inverse, return_counts, dim):
    # ATen's unique_consecutive_cpu: runs of equal elements (of the flattened input), or of equal slices
    # along dim, each kept once; the inverse maps each element (slice) to its run, counts are the runs' lengths
    if dim is None or self.ndim == 0:
        flat = self.reshape(-1)
        starts = xp.concatenate([[True], flat[1:] != flat[:-1]]) if flat.size else xp.zeros(0, dtype=bool)
        values = flat[starts]
        inverse_shape = self.shape
    else:
        d = normalize_dim(dim, self.ndim)
        rows = xp.moveaxis(self, d, 0).reshape(self.shape[d], -1)
        differs = (rows[1:] != rows[:-1]).any(axis=1) if rows.shape[1] else xp.zeros(len(rows) - 1, dtype=bool)
        starts = xp.concatenate([[True], differs]) if len(rows) else xp.zeros(0, dtype=bool)
        values = xp.compress(starts, self, axis=d)
        inverse_shape = (self.shape[d],)
    run = xp.cumsum(starts) - 1
    inverse = run.reshape(inverse_shape).astype(_INT64) if return_inverse else xp.zeros(0, dtype=_INT64)
    counts = xp.diff(xp.append(xp.flatnonzero(starts), starts.size)).astype(_INT64) if return_counts else \
        xp.zeros(0, dtype=_INT64)
    return values.astype(self.dtype, copy=False), inverse, counts


_unique_consecutive = defop(
    "unique_consecutive(Tensor self, bool return_inverse=False, bool return_counts=False, int? dim=None) "
    "-> (Tensor, Tensor, Tensor)",
    kernel=_unique_consecutive_kernel, meta=_data_dependent("unique_consecutive"),
    grads={"self": _not_implemented("unique_consecutive")}, differentiable=False,
    samples=lambda op: [
        SampleInput("runs", tensor([1.0, 1.0, 2.0, 2.0, 3.0, 1.0, 1.0, 2.0]), True, True),
        SampleInput("(2,3) inverse", int_arg((2, 3), (op, 0), 0, 2).double(), return_inverse=True),
        SampleInput("rows dim=0", tensor([[1, 2], [1, 2], [3, 4], [1, 2]]), True, True, 0),
        SampleInput("columns dim=1 counts", tensor([[1.0, 1.0, 2.0], [0.0, 0.0, 5.0]]), return_counts=True, dim=1),
        SampleInput("plain", tensor([2, 2, 2, 7]))],
    torch="torch.unique_consecutive", tags=("dynamic_output_shape",),
    doc="The first element of each run of equal consecutive elements (of the flattened input, or slices along "
        "dim), with each element's run index (return_inverse) and the runs' lengths (return_counts).")


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """torch.unique_consecutive: each run of equal consecutive elements (slices along `dim`) once; with
    return_inverse and/or return_counts, a tuple adding each element's run index and the runs' lengths."""
    return _asked(*_unique_consecutive(input, return_inverse, return_counts, dim), return_inverse, return_counts)


_unique_consecutive.op.function = unique_consecutive
unique_consecutive.op = _unique_consecutive.op


# ---- msort, argwhere, aminmax ------------------------------------------------------------------

msort = defop(
    "msort(Tensor self) -> Tensor", composite=lambda self: sort(self, 0)[0],      # ATen's: sort's values, dim 0
    samples=lambda op: [SampleInput("(4,3)", make_arg((4, 3), key=(op, 0))),
                        SampleInput("(5,)", make_arg((5,), key=(op, 1)))],
    torch="torch.msort", doc="self sorted along its first dimension (sort(self, 0)'s values).")

argwhere = defop(
    "argwhere(Tensor self) -> Tensor", composite=lambda self: nonzero(self),     # ATen's: nonzero
    samples=lambda op: [SampleInput("(3,4)", int_arg((3, 4), (op, 0), -1, 2)),
                        SampleInput("bool", tensor([True, False, True]))],
    torch="torch.argwhere", tags=("dynamic_output_shape",),
    doc="The indices of the nonzero elements, one row (of self.ndim indices) each.")


def _aminmax_dims(self, dim):
    if dim is None:
        if self.size == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
                               "identity.")
        return None
    d = normalize_dim(dim, self.ndim or 1)     # (a 0-d tensor takes dim 0 or -1; `max` is the op here)
    if self.ndim and self.shape[d] == 0:
        raise IndexError(f"aminmax: Expected reduction dim {dim} to have non-zero size.")
    return d


def _aminmax_kernel(xp, self, dim, keepdim):
    d = _aminmax_dims(self, dim)
    if self.dtype.kind == "c":
        raise RuntimeError("aminmax(): does not support complex input")
    if d is None:
        low, high = xp.min(self), xp.max(self)
        if keepdim:
            low, high = low.reshape((1,) * self.ndim), high.reshape((1,) * self.ndim)
        return xp.asarray(low), xp.asarray(high)
    axis = d if self.ndim else None
    return (xp.asarray(xp.min(self, axis=axis, keepdims=keepdim and self.ndim > 0)),
            xp.asarray(xp.max(self, axis=axis, keepdims=keepdim and self.ndim > 0)))


def _aminmax_meta(self, dim, keepdim):
    d = _aminmax_dims(self, dim)
    if d is None:
        shape = (1,) * self.ndim if keepdim else ()
    else:
        shape = reduced_shape(self.shape, [d], keepdim) if self.ndim else ()
    return MetaArray(shape, self.dtype), MetaArray(shape, self.dtype)


def _aminmax_backward(grads, self, dim, keepdim, result):
    # derivatives.yaml's aminmax_backward: each of min and max as amin's and amax's (ties share the gradient)
    dims = [] if dim is None else [dim]
    low, high = result
    return _amin_grad(grads[0], self, low, dims, keepdim) + _amax_grad(grads[1], self, high, dims, keepdim)


aminmax = _named_results(defop(
    "aminmax(Tensor self, *, int? dim=None, bool keepdim=False) -> (Tensor min, Tensor max)",
    kernel=_aminmax_kernel, meta=_aminmax_meta, grads={"self": _aminmax_backward},
    samples=lambda op: [SampleInput("full", make_arg((3, 4), key=(op, 0))),
                        SampleInput("dim=1", make_arg((3, 4), key=(op, 1)), dim=1),
                        SampleInput("dim=0 keepdim", make_arg((3, 4), key=(op, 2)), dim=0, keepdim=True),
                        SampleInput("keepdim full", make_arg((2, 3), key=(op, 3)), keepdim=True),
                        SampleInput("0-d", make_arg((), key=(op, 4))),
                        SampleInput("int64", int_arg((2, 5), (op, 5), -4, 4), dim=-1)],
    torch="torch.aminmax",
    doc="(min, max) of all elements, or along dim (keepdim keeps it as size 1); ties share the gradient."),
    "aminmax")


# ---- mode ---------------------------------------------------------------------------------------

def _mode_dim(self, dim):
    d = normalize_dim(dim, self.ndim)
    if self.ndim and self.shape[d] == 0 and math.prod(self.shape[:d] + self.shape[d + 1:]) > 0:
        raise IndexError(f"mode(): Expected reduction dim {dim} to have non-zero size.")
    return d


def _mode_kernel(xp, self, dim, keepdim):
    d = _mode_dim(self, dim)
    if self.ndim == 0:
        return self.copy(), xp.zeros((), dtype=_INT64)
    rows = xp.moveaxis(self, d, -1)
    n = rows.shape[-1]
    flat = rows.reshape(-1, n)
    values = xp.empty(flat.shape[0], dtype=self.dtype)
    indices = xp.empty(flat.shape[0], dtype=_INT64)
    for r in range(flat.shape[0]):
        # ATen's CPU mode: the most frequent value, the smallest of those tied, and the last index it is at
        order = xp.argsort(flat[r], kind="stable")
        ordered = flat[r][order]
        starts = xp.flatnonzero(xp.concatenate([[True], ordered[1:] != ordered[:-1]]))
        counts = xp.diff(xp.append(starts, n))
        best = int(xp.argmax(counts))
        values[r] = ordered[starts[best]]
        indices[r] = order[starts[best]:starts[best] + counts[best]].max()
    shape = rows.shape[:-1]
    values, indices = values.reshape(shape), indices.reshape(shape)
    if keepdim:
        values, indices = xp.expand_dims(values, d), xp.expand_dims(indices, d)
    return values, indices


def _mode_meta(self, dim, keepdim):
    d = _mode_dim(self, dim)
    return _indices_meta(self, reduced_shape(self.shape, (d,), keepdim) if self.ndim else ())


mode = _named_results(defop(
    "mode(Tensor self, int dim=-1, bool keepdim=False) -> (Tensor values, Tensor indices)",
    kernel=_mode_kernel, meta=_mode_meta,
    grads={"self": lambda grad, self_shape, dim, keepdim, result:
           _select_backward(grad, self_shape, dim, result[1], keepdim)},
    samples=lambda op: [
        SampleInput("ties", tensor([[1.0, 2.0, 2.0, 3.0, 3.0, 1.0], [5.0, 5.0, 4.0, 4.0, 4.0, 1.0]],
                                   dtype=dtypes.float64)),     # (no gradient: a tie moves under any step)
        SampleInput("dim=0 keepdim", make_arg((4, 3), key=(op, 1), low=0, high=3, integer=True,
                                              dtype=dtypes.int64), 0, True),
        SampleInput("distinct", make_arg((2, 5), key=(op, 2))),
        SampleInput("0-d", make_arg((), key=(op, 3)))],
    torch="torch.mode",
    doc="The most frequent value along dim (the smallest of those tied) and the last index it is at."), "mode")


# ---- quantile, nanquantile -------------------------------------------------------------------------
# ATen's quantile_compute (Sorting.cpp), op for op: the input sorted along dim, each q's rank in it
# (q · (n - 1); NaN's rank the last, or for nanquantile among the non-NaN values), the values at the
# ranks gathered and, for linear and midpoint, lerped; the q dimension moved to the front in place
# (so its grad_fn is SqueezeBackward4, as PyTorch's)

_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(self, q, dim, keepdim, interpolation, ignore_nan):
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(f"quantile() interpolation must be one of linear, lower, higher, midpoint or nearest, "
                           f"but got {interpolation}")
    if self.numel() == 0:
        raise RuntimeError("quantile() input tensor must be non-empty")
    if q.ndim > 1:
        raise RuntimeError("quantile() q must be a scalar or 1D tensor")
    if self.dtype not in (dtypes.float32, dtypes.float64):
        raise RuntimeError("quantile() input tensor must be either float or double dtype")
    if self.dtype != q.dtype:
        raise RuntimeError("quantile() q tensor must be same dtype as the input tensor")
    if self.device != q.device:
        raise RuntimeError("quantile() q tensor must be on the same device as the input tensor")
    wrapped = normalize_dim(0 if dim is None else dim, self.ndim)
    if dim is not None and self.ndim > 0:
        out_shape = list(self.shape)
        if keepdim:
            out_shape[wrapped] = 1
        else:
            del out_shape[wrapped]
    else:
        out_shape = [1] * self.ndim if keepdim else []
    if q.ndim > 0:
        out_shape.insert(0, q.numel())
    # (as ATen: checked on the CPU only, where reading the values costs no device synchronisation)
    if self.device.type == "cpu" and not bool(((q >= 0) & (q <= 1)).all()):
        raise RuntimeError("quantile() q values must be in the range [0, 1]")
    if dim is None:
        ordered = self.flatten().sort()[0]
    elif wrapped == self.ndim - 1:
        ordered = self.sort()[0]
    else:
        ordered = self.unsqueeze(-1).transpose(wrapped, -1).sort()[0]
    if q.ndim == 0:
        out_shape.insert(0, q.numel())
    ordered = ordered.view(out_shape[1:] + [ordered.shape[-1]])
    if ignore_nan:
        ranks = q * (ordered.isnan().logical_not().sum(-1, True) - 1)
        ranks = ranks.masked_fill(ranks < 0, 0)
    else:
        last = ordered.shape[-1] - 1
        scaled, has_nan = broadcast_tensors([q * last, ordered.isnan().any(-1, True)])
        ranks = scaled.masked_fill(has_nan, last)
    if interpolation == "lower":
        ranks = ranks.floor()
    elif interpolation == "higher":
        ranks = ranks.ceil()
    elif interpolation == "nearest":
        ranks = ranks.round()
    below = ranks.to(dtypes.int64)
    values = ordered.gather(-1, below)
    if interpolation in ("linear", "midpoint"):
        weights = full_like(ranks, 0.5) if interpolation == "midpoint" else ranks - below
        values.lerp_(ordered.gather(-1, ranks.ceil().to(dtypes.int64)), weights)
    if q.ndim == 0:
        return values.squeeze_(-1)
    return values.unsqueeze_(0).transpose_(0, -1).squeeze_(-1)


def _quantile_samples(op):
    x = make_arg((3, 5), key=(op, 0))
    return [SampleInput(f"{mode} q=0.3 dim=1", x, tensor(0.3, dtype=dtypes.float64), 1, interpolation=mode)
            for mode in _INTERPOLATIONS] + [
        SampleInput("q vector, all", make_arg((7,), key=(op, 1)), tensor([0.0, 0.25, 0.5, 1.0], dtype=dtypes.float64)),
        SampleInput("q vector dim=0 keepdim", make_arg((4, 3), key=(op, 2)), tensor([0.1, 0.9], dtype=dtypes.float64),
                    0, True),
        SampleInput("python float, (2,3,4) dim=1", make_arg((2, 3, 4), key=(op, 3)), 0.6, 1),
        SampleInput("nearest keepdim no dim", make_arg((2, 3), key=(op, 4)), 0.5, None, True, interpolation="nearest"),
        SampleInput("nan", tensor([[1.0, float("nan"), 3.0, 2.0], [4.0, 0.5, 2.0, 1.0]], dtype=dtypes.float64),
                    tensor([0.25, 0.75], dtype=dtypes.float64), 1)]


def _quantile_op(name, ignore_nan):
    op = defop(
        f"{name}(Tensor self, Tensor q, int? dim=None, bool keepdim=False, *, str interpolation=\"linear\") -> Tensor",
        composite=lambda self, q, dim, keepdim, interpolation: _quantile(self, q, dim, keepdim, interpolation,
                                                                        ignore_nan),
        samples=_quantile_samples, torch=f"torch.{name}",
        doc=f"The q-th quantiles of self (flattened, or along dim){', NaNs ignored' if ignore_nan else ''}; "
            f"interpolation linear, lower, higher, midpoint or nearest between the two nearest values.")

    def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):  # noqa: A002 — PyTorch's names
        if not isinstance(q, Tensor):
            # ATen's quantile.scalar: a number in [0, 1], as a 0-d tensor of the input's dtype
            if not 0 <= q <= 1:
                raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {q}")
            q = tensor(q, dtype=input.dtype, device=input.device)
        return op(input, q, dim, keepdim, interpolation=interpolation)
    quantile.__name__ = quantile.__qualname__ = name
    quantile.__doc__, quantile.op = op.__doc__, op.op
    op.op.function = quantile
    return quantile


quantile = _quantile_op("quantile", False)
nanquantile = _quantile_op("nanquantile", True)
