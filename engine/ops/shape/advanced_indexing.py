"""Indexing with integer and bool tensors (ATen's TensorAdvancedIndexing): gather/scatter_add
and index_select/index_add, each the other's adjoint (the backward of one is the other into
zeros); scatter and scatter_reduce; take and take_along_dim; embedding; masked_select,
masked_fill; one_hot; nonzero, nonzero_static and unravel_index (torch.functional's, flat indices to
coordinates); `_index`, the op behind `x[idx]`, `x[:, [0, 2]]` and `x[mask]`
(PyTorch's IndexBackward0), and `index_put`, the op behind `x[idx] = v`; and `getitem`/
`setitem`, Tensor's `x[i]` and `x[i] = v`.

Every scatter is one vectorised pass over flat positions (`_at`: a bincount for float
sums, NumPy's `ufunc.at` otherwise, rounds of repeats where CuPy has no `at`), applied
in order, so results are deterministic even where indices repeat (the last write wins
for `scatter`). Integer index tensors get no gradient.
"""
from __future__ import annotations

import collections.abc
import math
import zlib

import numpy as np

from ... import dtypes
from ..._tensor import Tensor, filled
from ...autograd.function import delayed_error
from ...backends.meta import MetaArray
from ...creation import tensor, zeros
from ...errors import DtypeError
from ...messages import checked_convert, scalar_type_name, sizes, tensor_type_name
from ...shapes import broadcast_shapes, normalize_dim
from .._common import _data_dependent, checked, conj_of, weighted_bincount
from ..conversion import to
from ..pointwise.binary import floor_divide, remainder, where
from ..reduce.arithmetic import sum as sum_op
from ..registry import NotImplementedDerivative, defop
from ..samples import SampleInput, int_arg, make_arg
from .indexing import basic_getitem, slice_backward
from .join import unbind
from .view import expand, reshape, unsqueeze

__all__ = ["getitem", "setitem", "unravel_index"]

_INT64 = np.dtype(np.int64)




# ---- take --------------------------------------------------------------------------------------------

def _take_meta(self, index):
    if index.dtype != _INT64:
        raise DtypeError(f"take(): Expected a long tensor for index, but got {scalar_type_name(index.dtype)}")
    return MetaArray(index.shape, self.dtype)


def _take_kernel(xp, self, index):
    _take_meta(self, index)
    n = math.prod(self.shape)
    if index.size:
        bad = (index < -n) | (index >= n)
        if bool(bad.any()):
            first = int(index[bad].reshape(-1)[0])
            raise IndexError(f"out of range: tried to access index {first} on a tensor of {n} elements.")
    # one flat index: what every library's fancy indexing takes (dask's takes no n-d index array)
    return xp.ascontiguousarray(self).reshape(-1)[index.reshape(-1)].reshape(index.shape)


def _take_grad(grad, self_shape, index):
    n = math.prod(self_shape)
    flat = zeros([n], dtype=grad.dtype, device=grad.device)
    positions = remainder(reshape(index, [-1]), n)       # negative indices count from the end
    return reshape(index_add(flat, 0, positions, reshape(grad, [-1])), list(self_shape))


take = defop(
    "take(Tensor self, Tensor index) -> Tensor",
    supports_complex=True, kernel=_take_kernel, meta=_take_meta,
    grads={"self": _take_grad, "index": None},
    samples=lambda op: [
        SampleInput("(3,4)[(2,3)]", make_arg((3, 4), key=(op, 0)),
                    tensor([[0, 5, 11], [-1, 5, 3]], dtype=dtypes.int64)),
        SampleInput("T (4,3)[(5,)]", make_arg((4, 3), key=(op, 1), transposed=True),
                    tensor([1, 2, 7, -12, 2], dtype=dtypes.int64)),
        SampleInput("0-d", make_arg((), key=(op, 2)), tensor(0, dtype=dtypes.int64))],
    torch="torch.take",
    doc="The elements of self, read as a 1-D tensor, at index (the result has index's shape).")


# ---- nonzero --------------------------------------------------------------------------------------------

nonzero = defop(
    "nonzero(Tensor self) -> Tensor",
    supports_complex=True,
    kernel=lambda xp, self: xp.argwhere(self).astype(_INT64, copy=False), meta=_data_dependent("nonzero"),
    samples=lambda op: [
        SampleInput("(3,4)", tensor(np.where(np.arange(12).reshape(3, 4) % 3 == 0, 0.0, 1.5))),
        SampleInput("int64 (2,2,3)", int_arg((2, 2, 3), (op, 0), -1, 2)),
        SampleInput("bool (5,)", tensor([True, False, False, True, True])),
        SampleInput("0-d", tensor(3.0)), SampleInput("0-d zero", tensor(0.0))],
    torch="torch.nonzero", tags=("dynamic_output_shape",),
    doc="The indices of the nonzero elements, one row per element: (count, ndim), int64.")


def _nonzero_as_tuple(self, *, as_tuple=False):
    """nonzero(Tensor self, *, bool as_tuple=False) -> Tensor

    The indices of the nonzero elements, one row per element: (count, ndim), int64; with as_tuple, one
    1-D int64 tensor per dim (NumPy's form, ATen's nonzero_numpy: that matrix's columns, a 0-d tensor
    counting as 1-D), which PyTorch's argument parser picks in Python."""
    if not as_tuple:
        return nonzero(self)
    return unbind(nonzero(unsqueeze(self, 0) if self.ndim == 0 else self), 1)


# agrad.nonzero and Tensor.nonzero are the function above, the op's callers here the op itself
_nonzero_as_tuple.op = nonzero.op
_nonzero_as_tuple.__name__ = _nonzero_as_tuple.__qualname__ = "nonzero"
_nonzero_as_tuple.__module__ = "agrad"
nonzero.op.function = _nonzero_as_tuple


def _nonzero_static_kernel(xp, self, size, fill_value):
    if size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    found = xp.argwhere(self)[:size].astype(_INT64, copy=False)
    out = xp.full((size, self.ndim), fill_value, dtype=_INT64)
    out[:len(found)] = found
    return out


def _nonzero_static_meta(self, size, fill_value):
    if size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    return MetaArray((size, self.ndim), _INT64)


nonzero_static = defop(
    "nonzero_static(Tensor self, *, SymInt size, int fill_value=-1) -> Tensor",
    kernel=_nonzero_static_kernel, meta=_nonzero_static_meta,
    samples=lambda op: [
        SampleInput("(3,4) size 6 (padded)", tensor(np.where(np.arange(12).reshape(3, 4) % 5 == 0, 1.5, 0.0)), size=6),
        SampleInput("int64 (2,2,3) size 2 (cut)", int_arg((2, 2, 3), (op, 0), -1, 2), size=2, fill_value=7),
        SampleInput("0-d size 2", tensor(3.0), size=2), SampleInput("bool size 0", tensor([True, False]), size=0)],
    torch="torch.nonzero_static",
    doc="nonzero's first `size` rows, padded with fill_value to exactly `size` rows: (size, ndim), int64.")


def unravel_index(indices, shape):
    """torch.unravel_index: the coordinates, in a tensor of `shape`, of each flat index (a tuple of int64
    tensors of indices' shape, one per dim); negative indices count from the end, as floor division
    and a remainder give them (torch.functional's)."""
    if not isinstance(indices, Tensor) or indices.dtype.is_floating_point or indices.dtype == dtypes.bool_:
        got = indices.dtype if isinstance(indices, Tensor) else type(indices)
        raise TypeError(f"expected 'indices' to be integer dtype, but got {got}")
    if isinstance(shape, int) and not isinstance(shape, bool):
        shape = [shape]
    elif not isinstance(shape, collections.abc.Sequence):
        raise TypeError(f"expected 'shape' to be int or sequence of ints, but got {type(shape)}")
    for dim in shape:
        if not isinstance(dim, int):
            raise TypeError(f"expected 'shape' sequence to only contain ints, but got {type(dim)}")
    if any(dim < 0 for dim in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {tuple(shape)}")
    coefs = [math.prod(shape[i + 1:]) for i in range(len(shape))]
    device = indices.device
    coordinates = remainder(floor_divide(unsqueeze(indices, -1), tensor(coefs, dtype=dtypes.int64, device=device)),
                            tensor(list(shape), dtype=dtypes.int64, device=device))
    return unbind(coordinates, -1)


_INT_KINDS = ("i", "u")
_SCATTER_REDUCES = ("sum", "prod", "mean", "amax", "amin")


# ---- shared helpers ------------------------------------------------------------------------

def _index_tensor(values, dtype=dtypes.int64):
    from ...creation import tensor
    return tensor(np.asarray(values), dtype=dtype)


def _zeros(like, shape):
    """A constant zero tensor of `shape` with `like`'s dtype and device (no history)."""
    return filled(tuple(shape), 0, like._data.dtype, like._device)


def _as1d(a):
    return a.reshape((1,)) if a.ndim == 0 else a


def _out_of_bounds(xp, index, size, dim, error=RuntimeError, negative_ok=False):
    low = -size if negative_ok else 0
    bad = (index < low) | (index >= size)
    if index.size and bool(bad.any()):
        value = int(index[bad].reshape(-1)[0])
        raise error(f"index {value} is out of bounds for dimension {dim} with size {size}")


def _at(xp, name, target, positions, values):
    """`target[positions] = ufunc(target[positions], values)`, repeated positions applied one
    after another in order (NumPy's `ufunc.at`: sequential, so deterministic). Returns the
    result: `target` itself, written in place, where the library writes in place (NumPy, CuPy);
    a new array where it cannot (dask: an array is a value), so callers use what it returns."""
    if name == "add" and target.dtype.kind == "f" and positions.size:
        # NOTE: a float sum is one bincount (fast on NumPy and CuPy, summed in order in float64 on both)
        row = target[0].size if target.ndim > 1 else 1
        flat = positions.astype(np.int64, copy=False)
        if row != 1:
            flat = (flat.reshape(-1, 1) * row + xp.arange(row)).reshape(-1)
        weights = xp.broadcast_to(values, positions.shape + target.shape[1:]).reshape(-1)
        target += weighted_bincount(xp, flat, weights, target.size).reshape(target.shape).astype(target.dtype)
        return target
    ufunc = getattr(xp, name)
    if xp is np:
        ufunc.at(target, positions, values)
        return target
    # NOTE: CuPy has `at` for a few ufuncs only; this form needs none: one vectorised round per
    # repeat (an element's rank among equal positions), in order, so the result equals NumPy's
    order = xp.argsort(positions, kind="stable")
    ordered = positions[order]
    rank = xp.empty_like(order)
    rank[order] = xp.arange(order.size) - xp.searchsorted(ordered, ordered, side="left")
    for r in range(int(rank.max()) + 1 if rank.size else 0):
        chosen = rank == r
        where_ = positions[chosen]
        target[where_] = ufunc(target[where_], values[chosen])
    return target


def _flat_positions(xp, index, dim, shape):
    """For each element of `index`: its flat position in a C-ordered array of `shape`,
    taking `index`'s value along `dim` and the element's own coordinate elsewhere."""
    strides = [1] * len(shape)
    for d in range(len(shape) - 2, -1, -1):
        strides[d] = strides[d + 1] * shape[d + 1]
    flat = index.astype(np.int64, copy=False) * strides[dim]
    for d in range(index.ndim):
        if d != dim:
            coord = xp.arange(index.shape[d], dtype=np.int64).reshape([-1 if k == d else 1 for k in range(index.ndim)])
            flat = flat + coord * strides[d]
    return flat.reshape(-1)


def _leading(a, shape):
    """`a` cut to `shape` (PyTorch uses only the first index.size(d) entries of src/self)."""
    if tuple(a.shape) == tuple(shape):
        return a
    return a[tuple(slice(0, s) for s in shape)]


def _pad_to(grad, shape):
    """`grad` (index-shaped) placed at the start of zeros of `shape`, with slice_backward
    (differentiable again): src may be larger than index along any dimension."""
    for d, (have, want) in enumerate(zip(grad.shape, shape)):
        if have != want:
            grad = slice_backward(grad, list(grad.shape[:d]) + [want] + list(grad.shape[d + 1:]), d, 0, have, 1)
    return grad


# ---- gather ------------------------------------------------------------------------------------

def _gather_meta(self, dim, index, sparse_grad=False):
    if index.dtype.kind not in _INT_KINDS or index.dtype.itemsize < 4:
        raise RuntimeError("gather(): Expected dtype int32/int64 for index")
    d = normalize_dim(dim, self.ndim)
    if max(self.ndim, 1) != max(index.ndim, 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    if self.ndim:
        for k in range(self.ndim):
            if k != d and index.shape[k] > self.shape[k]:
                raise RuntimeError(f"Size does not match at dimension {k} expected index {sizes(index.shape)} to be "
                                   f"no larger than self {sizes(self.shape)} apart from dimension {d}")
    return MetaArray(index.shape, self.dtype)


def _gather_kernel(xp, self, dim, index, sparse_grad):
    d = normalize_dim(dim, self.ndim)
    s, i = _as1d(self), _as1d(index)
    _out_of_bounds(xp, i, s.shape[d], d)
    cut = list(i.shape)
    cut[d] = s.shape[d]
    return xp.take_along_axis(_leading(s, cut), i.astype(np.int64), axis=d).reshape(index.shape)


def _index_sample(shape, high, key, dtype=dtypes.int64):
    rng = np.random.default_rng(zlib.crc32(repr(key).encode()))
    return _index_tensor(rng.integers(0, high, size=shape), dtype)


def _float_mask(mask, like):
    """A bool tensor as 0/1 in `like`'s dtype (no gradient)."""
    return to(mask, dtype=like.dtype)


gather = defop(
    "gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor",
    supports_complex=True, kernel=checked(_gather_meta, _gather_kernel), meta=_gather_meta,
    grads={"self": lambda grad, self_shape, dim, index: scatter_add(_zeros(grad, self_shape), dim, index, grad),
           "index": None},
    samples=lambda op: [
        SampleInput("(3,4) dim 1", make_arg((3, 4), key=(op, 0)), 1, _index_sample((3, 5), 4, (op, 0))),
        SampleInput("(4,3) dim 0 smaller index", make_arg((4, 3), key=(op, 1), transposed=True), 0,
                    _index_sample((2, 2), 4, (op, 1))),
        SampleInput("(2,3,2) dim -1 int32", make_arg((2, 3, 2), key=(op, 2)), -1,
                    _index_sample((2, 3, 3), 2, (op, 2), dtypes.int32)),
        SampleInput("0-d", make_arg((), key=(op, 3)), 0, _index_tensor(0))],
    torch="torch.gather",
    doc="out[i][j] = self[index[i][j]][j] (dim=0): values picked along `dim` by `index`.")


# ---- scatter, scatter_add, scatter_reduce ------------------------------------------------------

def _scatter_meta(name, self, dim, index, src):
    if index.dtype.kind not in _INT_KINDS or index.dtype.itemsize < 4:
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index")
    if hasattr(src, "dtype") and src.dtype != self.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    d = normalize_dim(dim, self.ndim)
    ndims = {max(self.ndim, 1), max(index.ndim, 1)} | ({max(src.ndim, 1)} if hasattr(src, "shape") else set())
    if len(ndims) != 1 and index.size:
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    if self.ndim and index.size:
        wrong = any(k != d and index.shape[k] > self.shape[k] for k in range(self.ndim))
        if hasattr(src, "shape"):
            wrong = wrong or any(index.shape[k] > src.shape[k] for k in range(src.ndim))
            if wrong:
                raise RuntimeError(f"Expected index {sizes(index.shape)} to be no larger than self {sizes(self.shape)} "
                                   f"apart from dimension {d} and to be no larger size than src {sizes(src.shape)}")
        elif wrong:
            raise RuntimeError(f"Expected index {sizes(index.shape)} to be no larger than self {sizes(self.shape)} "
                               f"apart from dimension {d}")
    return d


def _lowest(dtype, sign):
    if dtype.kind == "f":
        return sign * np.inf
    info = np.iinfo(dtype) if dtype.kind in _INT_KINDS else None
    if info is None:
        return sign > 0
    return info.max if sign > 0 else info.min


def _scatter_into(xp, self, d, index, src, reduce, include_self=True):
    """A copy of self with src scattered into it along d (reduce: None, sum, prod, mean, amax, amin)."""
    out = xp.array(_as1d(self), copy=True, order="C")
    i = _as1d(index)
    _out_of_bounds(xp, i, out.shape[d], d)
    if i.size == 0:
        return out.reshape(self.shape)
    positions = _flat_positions(xp, i, d, out.shape)
    if hasattr(src, "shape"):
        values = _leading(_as1d(src), i.shape).reshape(-1)
    else:
        values = xp.full(positions.shape, src, dtype=out.dtype)
    flat = out.reshape(-1)
    if reduce is None:
        flat[positions] = values
    elif reduce in ("sum", "mean"):
        if not include_self:
            flat[positions] = 0
        flat = _at(xp, "add", flat, positions, values)
        if reduce == "mean":
            count = xp.bincount(positions, minlength=flat.size) + (1 if include_self else 0)
            count = xp.where(count == 0, 1, count).astype(out.dtype)
            flat = flat // count if out.dtype.kind in _INT_KINDS else flat / count
    elif reduce == "prod":
        if not include_self:
            flat[positions] = 1
        flat = _at(xp, "multiply", flat, positions, values)
    else:
        name, sign = ("maximum", -1) if reduce == "amax" else ("minimum", 1)
        if not include_self:
            flat[positions] = _lowest(out.dtype, sign)
        flat = _at(xp, name, flat, positions, values)
    # `flat`, not `out`: where writes make new arrays (dask), `out` never saw them
    return flat.reshape(self.shape)


_LEGACY_REDUCE = {"add": "sum", "multiply": "prod"}


def _scatter_src(src, value):
    return value if src is None else src


def _scatter_value_meta(self, dim, index, src=None, value=None, reduce=None):
    if src is None and value is None:
        raise TypeError("scatter() missing 1 required argument: 'src' (a tensor) or 'value' (a number)")
    if reduce is not None and reduce not in _LEGACY_REDUCE:
        raise RuntimeError("reduce argument must be either add or multiply.")
    _scatter_meta("scatter", self, dim, index, _scatter_src(src, value))
    return MetaArray(self.shape, self.dtype)


def _scatter_kernel(xp, self, dim, index, src, value, reduce):
    d = normalize_dim(dim, self.ndim)
    return _scatter_into(xp, self, d, index, _scatter_src(src, value), _LEGACY_REDUCE.get(reduce))


def _no_reduce_derivative(reduce):
    if reduce is not None:      # as PyTorch: scatter with reduce= has no derivative
        raise RuntimeError("derivative for aten::scatter is not implemented")


def _scatter_self_grad(grad, dim, index, reduce):
    _no_reduce_derivative(reduce)
    return scatter(grad, dim, index, 0)


def _scatter_src_grad(grad, dim, index, src_shape, reduce):
    _no_reduce_derivative(reduce)
    return _pad_to(gather(grad, dim, index), src_shape)


scatter = defop(
    "scatter(Tensor self, int dim, Tensor index, Tensor? src=None, *, Scalar? value=None, str? reduce=None) -> Tensor",
    supports_complex=True,
    kernel=checked(_scatter_value_meta, _scatter_kernel), meta=_scatter_value_meta, wraps_numbers=True,
    grads={"self": _scatter_self_grad, "index": None, "src": _scatter_src_grad},
    backward_name=["ScatterBackward0", "ScatterBackward1"],
    overload=lambda self, dim, index, src=None, value=None, reduce=None: 0 if hasattr(src, "shape") else 1,
    samples=lambda op: [
        SampleInput("src (3,4) dim 1", make_arg((3, 4), key=(op, 0)), 1,
                    _index_tensor([[0, 2], [3, 1], [1, 0]]), make_arg((3, 2), key=(op, 1))),
        SampleInput("src larger than index", make_arg((4, 3), key=(op, 2)), 0,
                    _index_tensor([[3, 0, 1], [2, 1, 0]]), make_arg((3, 4), key=(op, 3))),
        SampleInput("value", make_arg((3, 4), key=(op, 4)), 1, _index_tensor([[0], [3], [2]]), 2.5),
        SampleInput("value kw", make_arg((2, 3), key=(op, 5)), 0, _index_tensor([[1, 0, 1]]), value=-1.0)],
    torch="torch.scatter",
    doc="A copy of self with src (or value) written at index along dim; reduce='add'/'multiply' combines "
        "instead (no gradient then, as in PyTorch). Repeated indices: the last write wins.")


def _scatter_add_meta(self, dim, index, src):
    _scatter_meta("scatter_add", self, dim, index, src)
    return MetaArray(self.shape, self.dtype)


scatter_add = defop(
    "scatter_add(Tensor self, int dim, Tensor index, Tensor src) -> Tensor",
    supports_complex=True, kernel=checked(_scatter_add_meta, lambda xp, self, dim, index, src:
                   _scatter_into(xp, self, normalize_dim(dim, self.ndim), index, src, "sum")),
    meta=_scatter_add_meta,
    grads={"self": lambda grad: grad, "index": None,
           "src": lambda grad, dim, index, src_shape: _pad_to(gather(grad, dim, index), src_shape)},
    samples=lambda op: [
        SampleInput("(3,4) dim 1 repeats", make_arg((3, 4), key=(op, 0)), 1,
                    _index_tensor([[0, 0, 3], [1, 2, 1], [3, 3, 3]]), make_arg((3, 3), key=(op, 1))),
        SampleInput("(5,2) dim 0 src larger", make_arg((5, 2), key=(op, 2)), 0,
                    _index_tensor([[4, 0], [4, 4]]), make_arg((3, 2), key=(op, 3), transposed=True))],
    torch="torch.scatter_add",
    doc="A copy of self with src added at index along dim; repeated indices accumulate.")


def _scatter_reduce_meta(self, dim, index, src, reduce, include_self=True):
    if reduce not in _SCATTER_REDUCES:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    _scatter_meta("scatter_reduce", self, dim, index, src)
    return MetaArray(self.shape, self.dtype)


def _scatter_reduce_grads(grad, self, dim, index, src, reduce, include_self, result):
    """PyTorch's scatter_reduce_backward, written with agrad ops: (grad_self, grad_src)."""
    if reduce == "sum":
        grad_self, grad_src = grad, gather(grad, dim, index)
    elif reduce == "prod":
        # NOTE: zeros in self/src: divide by the product of the others, not by the zero
        masked_self = where(self == 0, 1.0, self)
        masked_self_result = scatter_reduce(masked_self, dim, index, src, reduce, include_self=include_self)
        grad_self = grad * masked_self_result / masked_self
        src_zero = src == 0
        src_num_zeros = gather(scatter_add(_zeros(grad, self.shape), dim, index, _float_mask(src_zero, src)),
                               dim, index)
        src_single_zero = where(src_zero, src_num_zeros == 1, False)
        masked_src = where(src_single_zero, 1.0, src)
        masked_src_result = scatter_reduce(self, dim, index, masked_src, reduce, include_self=include_self)
        grad_src = where(src_single_zero, gather(grad * masked_src_result, dim, index),
                         gather(grad * result, dim, index) / where(src_zero, 1.0, src))
        if grad_src.requires_grad and bool((src_num_zeros > 1).any()):
            # (create_graph) right as a gradient, wrong as a function of src: its derivative fails, as PyTorch's
            grad_src = delayed_error("scatter_reduce(): Double backward is unsupported for src when >1 zeros in src "
                                     "are scattered to the same position in self", grad_src)
    elif reduce == "mean":
        n = scatter_add(filled(tuple(grad.shape), 1 if include_self else 0, grad._data.dtype, grad._device),
                        dim, index, filled(tuple(index.shape), 1, grad._data.dtype, grad._device))
        n = where(n == 0, 1.0, n)
        grad_self = grad / n
        grad_src = gather(grad, dim, index) / gather(n, dim, index)
    else:
        # amax/amin: the gradient is shared evenly by every element equal to the result
        value = gather(result, dim, index)
        self_is_result = _float_mask(self == result, grad)
        src_is_result = _float_mask(src == value, grad)
        n = scatter_add(self_is_result, dim, index, src_is_result)
        grad_distributed = grad / n
        grad_self = self_is_result * grad_distributed
        grad_src = src_is_result * gather(grad_distributed, dim, index)
    if not include_self:
        grad_self = scatter(grad_self, dim, index, 0)
    return grad_self, grad_src


def _scatter_reduce_samples(op):
    out = []
    for k, reduce in enumerate(_SCATTER_REDUCES):
        for include_self in (True, False):
            self = make_arg((3, 4), key=(op, reduce, include_self, 0), low=0.5, high=2.0)
            src = make_arg((3, 3), key=(op, reduce, include_self, 1), low=0.5, high=2.0)
            out.append(SampleInput(f"{reduce} include_self={include_self}", self, 1,
                                   _index_tensor([[0, 0, 3], [1, 2, 1], [3, 3, 3]]), src, reduce,
                                   include_self=include_self))
    return out


scatter_reduce = defop(
    "scatter_reduce(Tensor self, int dim, Tensor index, Tensor src, str reduce, *, bool include_self=True) -> Tensor",
    kernel=checked(_scatter_reduce_meta, lambda xp, self, dim, index, src, reduce, include_self:
                   _scatter_into(xp, self, normalize_dim(dim, self.ndim), index, src, reduce, include_self)),
    meta=_scatter_reduce_meta,
    grads={"self": lambda grad, self, dim, index, src, reduce, include_self, result:
               _scatter_reduce_grads(grad, self, dim, index, src, reduce, include_self, result)[0],
           "index": None,
           "src": lambda grad, self, dim, index, src, src_shape, reduce, include_self, result:
               _pad_to(_scatter_reduce_grads(grad, self, dim, index, src, reduce, include_self, result)[1],
                       src_shape)},
    samples=_scatter_reduce_samples, torch="torch.scatter_reduce",
    doc="self with src reduced into it at index along dim: sum, prod, mean, amax or amin; include_self=False "
        "leaves self's values out wherever something is scattered.")


# ---- index_select, index_add -------------------------------------------------------------------

def _index_vector(name, index):
    if index.dtype.kind not in _INT_KINDS or index.dtype.itemsize < 4:
        raise RuntimeError(f"{name}(): Expected dtype int32 or int64 for index" if name == "index_select" else
                           f"{name}(): Expected dtype int32/int64 for index but got: "
                           f"{scalar_type_name(index.dtype)}")
    if index.ndim > 1:
        raise IndexError(f"{name}(): Index is supposed to be a vector")


def _index_select_meta(self, dim, index):
    _index_vector("index_select", index)
    d = normalize_dim(dim, self.ndim)
    return MetaArray(self.shape[:d] + ((index.size,) if self.ndim else ()) + self.shape[d + 1:], self.dtype)


def _index_select_kernel(xp, self, dim, index):
    d = normalize_dim(dim, self.ndim)
    s, i = _as1d(self), index.reshape(-1)
    bad = (i < 0) | (i >= s.shape[d])
    if i.size and bool(bad.any()):
        if d == 0:      # PyTorch's CPU kernel takes its index_select_out fast path along dim 0
            raise IndexError("index out of range in self")
        raise RuntimeError(f"INDICES element is out of DATA bounds, id={int(i[bad][0])} axis_dim={s.shape[d]}")
    return xp.take(s, i, axis=d).reshape(_index_select_meta(MetaArray(self.shape, self.dtype), dim, index).shape)


index_select = defop(
    "index_select(Tensor self, int dim, Tensor index) -> Tensor",
    supports_complex=True, kernel=checked(_index_select_meta, _index_select_kernel), meta=_index_select_meta,
    grads={"self": lambda grad, self_shape, dim, index: index_add(_zeros(grad, self_shape), dim, index, grad),
           "index": None},
    samples=lambda op: [
        SampleInput("(4,3) dim 0 repeats", make_arg((4, 3), key=(op, 0)), 0, _index_tensor([3, 0, 3, 1])),
        SampleInput("(2,5) dim -1 int32", make_arg((2, 5), key=(op, 1), transposed=True), -1,
                    _index_tensor([4, 2], dtypes.int32)),
        SampleInput("(2,3,2) dim 1 0-d index", make_arg((2, 3, 2), key=(op, 2)), 1, _index_tensor(2)),
        SampleInput("empty index", make_arg((3, 2), key=(op, 3)), 0, _index_tensor(np.zeros(0, np.int64)))],
    torch="torch.index_select",
    doc="The slices of self at `index` (a vector) along dim, in that order (repeats allowed).")


def _index_add_meta(self, dim, index, source, alpha=1):
    _index_vector("index_add_", index)
    d = normalize_dim(dim, self.ndim)
    if source.dtype != self.dtype:
        raise RuntimeError(f"index_add_(): self ({scalar_type_name(self.dtype)}) and source "
                           f"({scalar_type_name(source.dtype)}) must have the same scalar type")
    n = source.shape[d] if source.ndim else 1
    if index.size != n:
        raise RuntimeError(f"index_add_(): Number of indices ({index.size}) should be equal to source.size(dim): "
                           f"({n}), for dim: {d}")
    return MetaArray(self.shape, self.dtype)


def _index_add_kernel(xp, self, dim, index, source, alpha):
    d = normalize_dim(dim, self.ndim)
    out = xp.array(_as1d(self), copy=True)
    i = index.reshape(-1)
    _out_of_bounds(xp, i, out.shape[d], d)
    values = _as1d(source) if alpha == 1 else _as1d(source) * alpha
    moved = _at(xp, "add", xp.moveaxis(out, d, 0), i, xp.moveaxis(values.astype(out.dtype, copy=False), d, 0))
    return xp.moveaxis(moved, 0, d).reshape(self.shape)


index_add = defop(
    "index_add(Tensor self, int dim, Tensor index, Tensor source, *, Scalar alpha=1) -> Tensor",
    supports_complex=True, kernel=checked(_index_add_meta, _index_add_kernel), meta=_index_add_meta,
    grads={"self": lambda grad: grad, "index": None,
           "source": lambda grad, dim, index, source_shape, alpha:
               reshape(index_select(grad, dim, index), list(source_shape)) * conj_of(alpha) if alpha != 1 else
               reshape(index_select(grad, dim, index), list(source_shape))},
    samples=lambda op: [
        SampleInput("(4,3) dim 0 repeats", make_arg((4, 3), key=(op, 0)), 0, _index_tensor([3, 0, 3]),
                    make_arg((3, 3), key=(op, 1))),
        SampleInput("(2,5) dim 1 alpha", make_arg((2, 5), key=(op, 2)), 1, _index_tensor([4, 1], dtypes.int32),
                    make_arg((2, 2), key=(op, 3), transposed=True), alpha=-0.5)],
    torch="torch.index_add",
    doc="A copy of self with alpha * source's slices added at `index` along dim; repeats accumulate.")


# ---- embedding ---------------------------------------------------------------------------------

def _padding(padding_idx, num_weights):
    if padding_idx is None:
        return -1
    if padding_idx > 0 and padding_idx >= num_weights or padding_idx < 0 and padding_idx < -num_weights:
        raise AssertionError("Padding_idx must be within num_embeddings")
    return padding_idx % num_weights


def _check_indices(indices, op="embedding"):
    if indices.dtype.kind not in _INT_KINDS or indices.dtype.itemsize < 4:
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got {tensor_type_name(indices.dtype)} instead (while checking arguments "
                           f"for {op})")


def _embedding_meta(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
                    sparse=False):
    if max_norm is not None:
        raise NotImplementedError("embedding(max_norm=...) renormalises rows of weight in place; agrad does not "
                                  "support it (renormalise the weight before the call instead)")
    if sparse:
        raise NotImplementedError("embedding(sparse=True): agrad has no sparse gradients")
    if weight.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    _check_indices(input)
    _padding(padding_idx, weight.shape[0])
    return MetaArray(input.shape + weight.shape[1:], weight.dtype)


def _embedding_kernel(xp, input, weight, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse):
    bad = (input < 0) | (input >= weight.shape[0])
    if input.size and bool(bad.any()):
        raise IndexError("index out of range in self")
    return xp.take(weight, input.reshape(-1), axis=0).reshape(input.shape + weight.shape[1:])


embedding = defop(
    "embedding(Tensor input, Tensor weight, int? padding_idx=None, float? max_norm=None, float norm_type=2.0, "
    "bool scale_grad_by_freq=False, bool sparse=False) -> Tensor",
    kernel=checked(_embedding_meta, _embedding_kernel), meta=_embedding_meta,
    grads={"input": None,
           "weight": lambda grad, input, weight_shape, padding_idx, scale_grad_by_freq: embedding_dense_backward(
               grad, input, weight_shape[0], _padding(padding_idx, weight_shape[0]), scale_grad_by_freq)},
    samples=lambda op: [
        SampleInput("(2,3) of (5,4)", _index_tensor([[0, 4, 1], [1, 1, 3]]), make_arg((5, 4), key=(op, 0))),
        # NOTE: the padding row is left out of the indices here: its gradient is zero by definition, which a
        # numerical gradcheck cannot confirm, nor scale_grad_by_freq's scaling (tests/engine/test_ops_indexing.py
        # checks both against PyTorch's values)
        SampleInput("padding_idx", _index_tensor([2, 0, 2, 1]), make_arg((4, 2), key=(op, 1)), padding_idx=3),
        SampleInput("padding_idx -1, int32", _index_tensor([[1, 0], [0, 0]], dtypes.int32),
                    make_arg((3, 2), key=(op, 2), transposed=True), -1),
        SampleInput("0-d index", _index_tensor(1), make_arg((3, 2), key=(op, 3)))],
    torch="torch.nn.functional.embedding",
    doc="weight's rows at `input` (any shape of indices); padding_idx's row gets no gradient, "
        "scale_grad_by_freq divides each row's gradient by how often it occurs. max_norm (which renormalises "
        "weight in place) and sparse=True are not supported: they raise NotImplementedError.")


def _embedding_backward_meta(grad_output, indices, num_weights, padding_idx, scale_grad_by_freq):
    _check_indices(indices, "embedding_backward")
    return MetaArray((num_weights,) + grad_output.shape[indices.ndim:], grad_output.dtype)


def _counts(xp, flat, num_weights):
    return xp.bincount(flat, minlength=num_weights)[flat]


def _embedding_backward_kernel(xp, grad_output, indices, num_weights, padding_idx, scale_grad_by_freq):
    flat = indices.reshape(-1).astype(np.int64)
    rows = grad_output.reshape((flat.size, -1))
    scale = (flat != padding_idx).astype(grad_output.dtype)
    if scale_grad_by_freq:
        scale = scale / _counts(xp, flat, num_weights)
    out = xp.zeros((num_weights, rows.shape[1]), dtype=grad_output.dtype)
    out = _at(xp, "add", out, flat, rows * scale[:, None])
    return out.reshape((num_weights,) + grad_output.shape[indices.ndim:])


def _embedding_double_backward(grad, indices, padding_idx, scale_grad_by_freq, num_weights):
    rows = embedding(indices, grad)
    if padding_idx >= 0:
        rows = where(unsqueeze(indices != padding_idx, -1), rows, 0.0)
    if scale_grad_by_freq:
        rows = rows / unsqueeze(_embedding_counts(indices, num_weights), -1)
    return rows


embedding_dense_backward = defop(
    "embedding_dense_backward(Tensor grad_output, Tensor indices, SymInt num_weights, SymInt padding_idx, "
    "bool scale_grad_by_freq) -> Tensor",
    kernel=checked(_embedding_backward_meta, _embedding_backward_kernel), meta=_embedding_backward_meta,
    grads={"grad_output": lambda grad, indices, padding_idx, scale_grad_by_freq, num_weights:
               _embedding_double_backward(grad, indices, padding_idx, scale_grad_by_freq, num_weights),
           "indices": None},
    samples=lambda op: [
        SampleInput("(2,3,4) -> (5,4)", make_arg((2, 3, 4), key=(op, 0)), _index_tensor([[0, 4, 1], [1, 1, 3]]),
                    5, -1, False),
        SampleInput("padding, freq", make_arg((4, 2), key=(op, 1)), _index_tensor([2, 0, 2, 1]), 3, 2, True)],
    torch="torch.ops.aten.embedding_dense_backward",
    doc="embedding's gradient for weight: grad_output's rows added into the rows they came from.")


def _embedding_counts_meta(indices, num_weights):
    return MetaArray(indices.shape, np.int64)


_embedding_counts = defop(
    "_embedding_counts(Tensor indices, SymInt num_weights) -> Tensor",
    kernel=lambda xp, indices, num_weights: _counts(xp, indices.reshape(-1).astype(np.int64),
                                                    num_weights).reshape(indices.shape),
    meta=_embedding_counts_meta,
    samples=lambda op: [SampleInput("repeats", _index_tensor([[2, 0], [2, 2]]), 3)],
    doc="How often each index occurs among all of `indices` (scale_grad_by_freq's divisor).")


# ---- masked_select -----------------------------------------------------------------------------

def _masked_select_meta(self, mask):
    if mask.dtype != np.bool_:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    raise NotImplementedError("masked_select: the number of elements it returns depends on the mask's values, "
                              "which a Meta tensor does not have")


def _masked_select_kernel(xp, self, mask):
    if mask.dtype != np.bool_:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    shape = broadcast_shapes(self.shape, mask.shape)
    return xp.broadcast_to(self, shape)[xp.broadcast_to(mask, shape)]


masked_select = defop(
    "masked_select(Tensor self, Tensor mask) -> Tensor",
    supports_complex=True, kernel=_masked_select_kernel, meta=_masked_select_meta,
    grads={"self": lambda grad, self_shape, mask: _masked_select_backward(grad, mask, list(self_shape)),
           "mask": None},
    samples=lambda op: [
        SampleInput("(3,4)", make_arg((3, 4), key=(op, 0)),
                    _index_tensor(np.arange(12).reshape(3, 4) % 3 == 0, dtypes.bool_)),
        SampleInput("broadcast mask", make_arg((2, 3), key=(op, 1), transposed=True),
                    _index_tensor([True, False, True], dtypes.bool_))],
    torch="torch.masked_select", tags=("dynamic_output_shape",),
    doc="The elements of self where mask (broadcast with self) is True, as a 1-D tensor.")


def _masked_select_backward_meta(grad, mask, self_shape):
    return MetaArray(broadcast_shapes(tuple(self_shape), mask.shape), grad.dtype)


def _masked_select_backward_kernel(xp, grad, mask, self_shape):
    shape = broadcast_shapes(tuple(self_shape), mask.shape)
    out = xp.zeros(shape, dtype=grad.dtype)
    out[xp.broadcast_to(mask, shape)] = grad
    return out


_masked_select_backward = defop(
    "_masked_select_backward(Tensor grad, Tensor mask, SymInt[] self_shape) -> Tensor",
    supports_complex=True, kernel=_masked_select_backward_kernel, meta=_masked_select_backward_meta,
    grads={"grad": lambda grad, mask: masked_select(grad, mask), "mask": None},
    samples=lambda op: [SampleInput("(2,)->(2,2)", make_arg((2,), key=(op, 0)),
                                    _index_tensor([[True, False], [False, True]], dtypes.bool_), [2, 2])],
    tags=("dynamic_output_shape",),
    doc="masked_select's gradient: grad written where mask is True, zeros elsewhere.")


# ---- one_hot, take_along_dim ---------------------------------------------------------------------

def _one_hot_meta(self, num_classes=-1):
    if self.dtype != np.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes < 0:
        raise NotImplementedError("one_hot: num_classes=-1 counts the classes from the values, which a Meta tensor "
                                  "does not have; give num_classes")
    return MetaArray(self.shape + (num_classes,), np.int64)


def _one_hot_kernel(xp, self, num_classes):
    if self.dtype != np.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if self.size and bool((self < 0).any()):
        raise RuntimeError("Class values must be non-negative.")
    if num_classes < 0:
        num_classes = int(self.max()) + 1 if self.size else 0
    elif self.size and bool((self >= num_classes).any()):
        raise RuntimeError("Class values must be smaller than num_classes.")
    return (self[..., None] == xp.arange(num_classes)).astype(np.int64)


one_hot = defop(
    "one_hot(Tensor self, int num_classes=-1) -> Tensor",
    kernel=_one_hot_kernel, meta=_one_hot_meta,
    samples=lambda op: [SampleInput("(2,3) 5 classes", _index_tensor([[0, 4, 1], [1, 1, 3]]), 5),
                        SampleInput("0-d", _index_tensor(2), num_classes=3)],
    torch="torch.nn.functional.one_hot",
    doc="int64 one-hot vectors over a new last dimension; num_classes=-1 means max(self) + 1.")


def _take_along_dim(self, indices, dim=None):
    if indices.dtype != dtypes.int64:
        raise RuntimeError(f"torch.take_along_dim(): dtype of indices should be Long but got "
                           f"{scalar_type_name(indices.dtype.np)}")
    if dim is None:
        return gather(reshape(self, [-1]), 0, reshape(indices, [-1]))
    if self.ndim != indices.ndim:
        raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same number of dimensions, "
                           f"but got {self.ndim} dimensions for input, and {indices.ndim} dimensions for indices")
    d = normalize_dim(dim, self.ndim)
    shape = list(broadcast_shapes(*[tuple(1 if k == d else s for k, s in enumerate(t.shape))
                                    for t in (self, indices)]))
    want_self = shape[:d] + [self.shape[d]] + shape[d + 1:] if self.ndim else []
    want_index = shape[:d] + [indices.shape[d]] + shape[d + 1:] if self.ndim else []
    if list(self.shape) != want_self:
        self = expand(self, want_self)
    if list(indices.shape) != want_index:
        indices = expand(indices, want_index)
    return gather(self, d, indices)


take_along_dim = defop(
    "take_along_dim(Tensor self, Tensor indices, int? dim=None) -> Tensor",
    composite=_take_along_dim,
    samples=lambda op: [
        SampleInput("(3,4) dim 1", make_arg((3, 4), key=(op, 0)), _index_tensor([[0, 3], [1, 1], [2, 0]]), 1),
        SampleInput("broadcast (3,4) (1,2) dim 1", make_arg((3, 4), key=(op, 1)), _index_tensor([[3, 0]]), 1),
        SampleInput("flat", make_arg((2, 3), key=(op, 2)), _index_tensor([5, 0, 5]))],
    torch="torch.take_along_dim",
    doc="gather after broadcasting self and indices in every dimension but dim; dim=None indexes the "
        "flattened self.")


# ---- the op behind advanced subscripts ---------------------------------------------------------

def _index_meta(self, indices, dims):
    for t in indices:
        if t.dtype.kind not in _INT_KINDS:
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    if len(dims) != len(indices):
        raise RuntimeError("_index(): one dim per index tensor")
    if dims and max(dims) >= self.ndim:
        raise IndexError(f"too many indices for tensor of dimension {self.ndim}")
    try:
        shape = broadcast_shapes(*(t.shape for t in indices))
    except RuntimeError:
        raise IndexError("shape mismatch: indexing tensors could not be broadcast together with shapes "
                         + " ".join(sizes(t.shape) for t in indices)) from None
    dims = list(dims)
    rest = [s for k, s in enumerate(self.shape) if k not in dims]
    if dims == list(range(dims[0], dims[0] + len(dims))):
        # NOTE: adjacent index tensors keep their place; separated ones move to the front (NumPy's rule)
        first = sum(1 for k in range(dims[0]) if k not in dims)
        return MetaArray(tuple(rest[:first]) + shape + tuple(rest[first:]), self.dtype)
    return MetaArray(shape + tuple(rest), self.dtype)


def _index_key(xp, self, indices, dims):
    key = [slice(None)] * (max(dims) + 1)
    for t, d in zip(indices, dims):
        _out_of_bounds(xp, t, self.shape[d], d, IndexError, negative_ok=True)
        key[d] = t
    return tuple(key)


def _indexed(xp, self, indices, dims):
    """`self[key]` of the index tensors `indices` at `dims` (NumPy's advanced indexing). A library
    whose indexing takes one 1-d index array at a time (dask's xp says `multi_array_indexing = False`)
    gets the same elements by one flat index over the indexed dims, moved to the front."""
    key = _index_key(xp, self, indices, dims)
    if getattr(xp, "multi_array_indexing", True):
        return self[key]
    shape = np.broadcast_shapes(*(t.shape for t in indices))
    sizes_ = [self.shape[d] for d in dims]
    flat = 0
    for t, d, n in zip(indices, dims, sizes_):
        flat = flat * n + xp.broadcast_to(t % n if n else t, shape)         # negative indices count from the end
    front = xp.moveaxis(self, list(dims), list(range(len(dims))))
    rest = front.shape[len(dims):]
    picked = xp.take(front.reshape((math.prod(sizes_),) + rest), flat.reshape(-1), axis=0).reshape(shape + rest)
    if list(dims) == list(range(dims[0], dims[0] + len(dims))):
        # adjacent index tensors keep their place (NumPy's rule): after the dims before them
        first = sum(1 for k in range(dims[0]) if k not in dims)
        picked = xp.moveaxis(picked, list(range(len(shape))), list(range(first, first + len(shape))))
    return picked


def _index_kernel(xp, self, indices, dims):
    out_shape = _index_meta(MetaArray(self.shape, self.dtype), [MetaArray(t.shape, t.dtype) for t in indices],
                            dims).shape
    return _indexed(xp, self, indices, dims).reshape(out_shape)


_TORCH_INDEX_KEY = "tuple(indices[list(dims).index(d)] if d in dims else slice(None) for d in range(max(dims) + 1))"


def _as_pytorch_indices(node, indices):
    """The indices as PyTorch's index(Tensor self, Tensor?[] indices) holds them: one entry a dim up to
    the last indexed one, None where a dim is sliced whole (`x[:, i]` saves (None, i))."""
    dims = node.saved.get("dims")
    out = [None] * (max(dims) + 1 if dims else 0)
    for d, t in zip(dims, indices):
        out[d] = t
    return tuple(out)


_index = defop(
    "_index(Tensor self, Tensor[] indices, int[] dims) -> Tensor",
    saved_as={"indices": _as_pytorch_indices},
    supports_complex=True, kernel=checked(_index_meta, _index_kernel), meta=_index_meta,
    grads={"self": lambda grad, self_shape, indices, dims: _index_backward(grad, list(self_shape), indices, dims),
           "indices": None},
    backward_name="IndexBackward0",
    samples=lambda op: [
        SampleInput("x[idx]", make_arg((4, 3), key=(op, 0)), [_index_tensor([3, 0, 3])], [0]),
        SampleInput("x[:, [0, 2]]", make_arg((2, 3, 2), key=(op, 1)), [_index_tensor([0, -1])], [1]),
        SampleInput("x[i, j] 2-D", make_arg((3, 4), key=(op, 2), transposed=True),
                    [_index_tensor([[0], [2]]), _index_tensor([1, 3, 1])], [0, 1]),
        SampleInput("x[i, :, j] apart", make_arg((3, 2, 4), key=(op, 3)),
                    [_index_tensor([2, 0]), _index_tensor([3, 3], dtypes.int32)], [0, 2])],
    torch=f"lambda self, indices, dims: self[{_TORCH_INDEX_KEY}]",
    doc="self indexed by integer tensors at dims (the others sliced whole), as `x[idx]`, `x[:, [0, 2]]`: "
        "the index tensors broadcast together; negative indices count from the end.")


def _index_backward_meta(grad, self_shape, indices, dims):
    return MetaArray(tuple(self_shape), grad.dtype)


def _index_backward_kernel(xp, grad, self_shape, indices, dims):
    out = xp.zeros(tuple(self_shape), dtype=grad.dtype)
    # the flat position of every indexed element, in the order `_index` produced them
    positions = _indexed(xp, xp.arange(out.size).reshape(out.shape), indices, dims)
    return _at(xp, "add", out.reshape(-1), positions.reshape(-1), grad.reshape(-1)).reshape(out.shape)


_index_backward = defop(
    "_index_backward(Tensor grad, SymInt[] self_shape, Tensor[] indices, int[] dims) -> Tensor",
    supports_complex=True, kernel=_index_backward_kernel, meta=_index_backward_meta,
    grads={"grad": lambda grad, indices, dims: _index(grad, indices, dims), "indices": None},
    samples=lambda op: [SampleInput("(3,)->(4,3) repeats", make_arg((3, 3), key=(op, 0)), [4, 3],
                                    [_index_tensor([3, 0, 3])], [0])],
    doc="_index's gradient: grad accumulated (repeats add up) into zeros at the indexed positions.")


def is_advanced(item) -> bool:
    """Whether a subscript element is an advanced index: a tensor, a list, an ndarray or a bool, or a
    tuple inside the index tuple (`x[(0, 2), 1]`: PyTorch reads it as a sequence, like a list)."""
    return isinstance(item, (Tensor, list, tuple, np.ndarray, bool))


_SEQUENCE_INDEX_WARNING = (
    "Using a non-tuple sequence for multidimensional indexing is deprecated and will be changed in pytorch 2.9; "
    "use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this will be interpreted as tensor index, "
    "x[torch.tensor(seq)], which will result either in an error or a different result")


def sequence_as_tuple(index: list):
    """PyTorch's treatSequenceAsTuple (python_variable_indexing.cpp): a list shorter than 32 that holds a
    tensor, a sequence, a slice, `...` or None indexes as the tuple of its elements (`x[[slice(None), [2, 3]]]`
    is `x[:, [2, 3]]`), with PyTorch's deprecation warning; any other list is one index tensor."""
    if len(index) >= 32:
        return index
    if any(isinstance(item, (Tensor, list, tuple, slice, np.ndarray)) or item is Ellipsis or item is None
           for item in index):
        from ...user_warnings import warn_user
        warn_user(_SEQUENCE_INDEX_WARNING)
        return tuple(index)
    return index


def getitem(tensor, index):
    """`tensor[index]`: basic indexing (indexing.basic_getitem) unless integer tensors, lists or
    bool masks are among the index's elements (advanced_getitem)."""
    if isinstance(index, list):     # (every x[i] passes here: no call for the other kinds)
        index = sequence_as_tuple(index)
    items = index if isinstance(index, tuple) else (index,)
    if any(is_advanced(item) for item in items):
        return advanced_getitem(tensor, index)
    return basic_getitem(tensor, index)


def advanced_getitem(tensor, index):
    """`tensor[index]` with integer tensors, lists or bool masks among the elements.

    As PyTorch's applySlicing then index: ints, slices, None and `...` are applied first
    (basic indexing, one node each); every advanced element becomes a full slice there,
    and one `_index` (IndexBackward0) then indexes those dimensions with the integer
    tensors (a bool mask of k dims becomes its k nonzero() coordinate tensors)."""
    target, indices, dims = advanced_parts(tensor, index)
    return _index(target, indices, dims) if indices else target


def advanced_parts(tensor, index):
    """(the basic-indexed tensor, the integer index tensors, the dims they index in it):
    what `_index` (reading) or index_put_ (writing, `x[idx] = v`) applies next."""
    from ...creation import tensor as make_tensor
    items = index if isinstance(index, tuple) else (index,)
    consumed = sum(_dims_consumed(item) for item in items)
    basic, indices, dims = [], [], []
    out_dim = in_dim = 0            # position in the basic result / in `tensor`
    for item in items:
        if item is Ellipsis:
            skip = max(tensor.ndim - consumed, 0)
            basic.append(item)
            out_dim += skip
            in_dim += skip
        elif item is None:
            basic.append(None)
            out_dim += 1
        elif isinstance(item, bool) or _is_0d_mask(item):
            # a 0-d mask (a bool, or a 0-d bool tensor as in PyTorch): a new dimension, of size 1 (True) or 0
            basic.append(None)
            indices.append(_index_tensor([0] if bool(item) else np.zeros(0, np.int64)).to(tensor.device))
            dims.append(out_dim)
            out_dim += 1
        elif _is_integer_scalar(item):
            basic.append(int(item.item()))     # a 0-d integer tensor is an integer (select), as in PyTorch
            in_dim += 1
        elif is_advanced(item):
            t = item if isinstance(item, Tensor) else make_tensor(item)
            if t.numel() == 0 and not isinstance(item, Tensor):
                t = t.long()        # an empty sequence indexes as int64, as in PyTorch
            if _is_mask(t.dtype.np):
                parts = _mask_coordinates(t, tensor, in_dim)
            elif t.dtype.np.kind in _INT_KINDS:
                parts = [t]
            else:
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            for part in parts:
                basic.append(slice(None))
                indices.append(part if part.device == tensor.device else part.to(tensor.device))
                dims.append(out_dim)
                out_dim += 1
                in_dim += 1
        else:
            basic.append(item)
            if isinstance(item, slice):
                out_dim += 1
            in_dim += 1
    if consumed > tensor.ndim:
        raise IndexError(f"too many indices for tensor of dimension {tensor.ndim}")
    target = tensor
    if any(b is not Ellipsis and b != slice(None) for b in basic):
        target = basic_getitem(tensor, tuple(basic))
    return target, indices, dims


def _is_mask(np_dtype) -> bool:
    """bool, or uint8 (PyTorch's deprecated byte masks), indexes as a mask."""
    return np_dtype == np.bool_ or np_dtype == np.uint8


def _is_integer_scalar(item) -> bool:
    return (isinstance(item, Tensor) and item.ndim == 0 and item.dtype.np.kind in _INT_KINDS
            and not _is_mask(item.dtype.np) and item.device.type != "meta")


def _is_0d_mask(item) -> bool:
    return (isinstance(item, Tensor) and item.ndim == 0 and _is_mask(item.dtype.np)
            and item.device.type != "meta")


def _dims_consumed(item) -> int:
    if item is None or item is Ellipsis or isinstance(item, bool):
        return 0
    if isinstance(item, Tensor):
        return item.ndim if _is_mask(item.dtype.np) else 1
    if isinstance(item, (list, tuple, np.ndarray)):
        a = np.asarray(item)
        return a.ndim if _is_mask(a.dtype) else 1
    return 1


def _mask_coordinates(mask, tensor, first):
    """A bool mask's nonzero() coordinates, one int64 tensor per masked dimension."""
    for k, n in enumerate(mask.shape):
        d = first + k
        if d >= tensor.ndim or tensor.shape[d] != n:
            raise IndexError(f"The shape of the mask {sizes(mask.shape)} at index {k} does not match the shape of "
                             f"the indexed tensor {sizes(tensor.shape)} at index {d}")
    if mask.device.type == "meta":
        raise NotImplementedError("indexing with a bool mask: the result's shape depends on the mask's values, "
                                  "which a Meta tensor does not have")
    coordinates = np.nonzero(np.asarray(mask.detach().cpu().numpy()))
    return [_index_tensor(c).to(mask.device) for c in coordinates]


def _masked_fill_meta(self, mask, value):
    if mask.dtype != np.bool_:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{dtypes.from_numpy(mask.dtype).name}")
    if getattr(value, "ndim", 0):
        raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{value.ndim} dimension(s).")
    if broadcast_shapes(self.shape, mask.shape) != tuple(self.shape):
        raise RuntimeError("The expanded size of the mask must match the existing size of the tensor")
    return MetaArray(self.shape, self.dtype)


def _masked_fill_kernel(xp, self, mask, value):
    _masked_fill_meta(self, mask, value)
    return xp.where(mask, xp.asarray(checked_convert(value, self.dtype), dtype=self.dtype), self)


def _is_number(value) -> bool:
    return not isinstance(value, Tensor)


masked_fill = defop(
    "masked_fill(Tensor self, Tensor mask, Tensor value) -> Tensor",
    supports_complex=True, kernel=_masked_fill_kernel, meta=_masked_fill_meta, wraps_numbers=True,
    grads={"self": lambda grad, mask: masked_fill(grad, mask, 0), "mask": None,
           "value": lambda grad, mask: sum_op(where(mask, grad, 0))},
    backward_name=("MaskedFillBackward0", "MaskedFillBackward1"),
    overload=lambda self, mask, value: 0 if _is_number(value) else 1,
    samples=lambda op: [
        SampleInput("(3,4) mask (3,4)", make_arg((3, 4), key=(op, 0)), _mask((3, 4), 1), 0.5),
        SampleInput("(3,4) mask (4,) broadcast", make_arg((3, 4), key=(op, 2)), _mask((4,), 3), -2),
        SampleInput("T (4,3) mask", make_arg((4, 3), key=(op, 4), transposed=True), _mask((4, 3), 5), 0),
        SampleInput("(2,3) 0-d tensor value", make_arg((2, 3), key=(op, 6)), _mask((2, 3), 7),
                    make_arg((), key=(op, 8)))],
    torch="torch.masked_fill",
    doc="self with value (a number, or a 0-d tensor that gets a gradient) where mask (bool, broadcast to "
        "self's shape) is True.")


def _mask(shape, seed):
    from ...creation import tensor
    return tensor(np.random.default_rng(seed).random(shape) < 0.5)


def _index_put_dims(self_ndim, indices, dims):
    dims = list(range(len(indices))) if dims is None else list(dims)
    if len(dims) != len(indices):
        raise RuntimeError("index_put(): one dim per index tensor")
    if len(indices) > self_ndim:
        raise IndexError(f"too many indices for tensor of dimension {self_ndim} (got {len(indices)})")
    return dims


def _index_put_meta(self, indices, values, accumulate, dims):
    dims = _index_put_dims(self.ndim, indices, dims)
    shape = _index_meta(self, indices, dims).shape
    try:
        broadcast_shapes(shape, values.shape)
        if broadcast_shapes(shape, values.shape) != tuple(shape):
            raise RuntimeError
    except RuntimeError:
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(values.shape)} cannot be broadcast to "
                           f"indexing result of shape {list(shape)}") from None
    return MetaArray(self.shape, self.dtype)


def _index_put_kernel(xp, self, indices, values, accumulate, dims):
    _index_put_meta(self, indices, values, accumulate, dims)
    dims = _index_put_dims(self.ndim, indices, dims)
    out = self.copy()
    # one flat index: a library without n-d index arrays (dask: see _indexed), and a sum on CuPy, whose
    # add.at adds with atomics in an order that varies (_at sums in order)
    if not getattr(xp, "multi_array_indexing", True) or (accumulate and xp is not np):
        positions = _indexed(xp, xp.arange(out.size).reshape(out.shape), indices, dims)
        values = xp.broadcast_to(values.astype(self.dtype, copy=False), positions.shape).reshape(-1)
        flat = out.reshape(-1)
        if accumulate:
            return _at(xp, "add", flat, positions.reshape(-1), values).reshape(out.shape)
        flat[positions.reshape(-1)] = values
        return flat.reshape(out.shape)
    key = _index_key(xp, self, indices, dims)
    shaped = out[key].shape
    values = xp.broadcast_to(values.astype(self.dtype, copy=False), shaped)
    if accumulate:
        xp.add.at(out, key, values)
    else:
        out[key] = values
    return out


def _index_put_self_grad(grad, indices, values_shape, accumulate, dims):
    if accumulate:
        return grad
    # zeros where values went: only values' shape is saved, so values may change in place afterwards
    return index_put(grad, indices, filled(tuple(values_shape), 0, grad._data.dtype, grad._device), False, dims)


def _index_put_values_grad(grad, indices, dims):
    return _index(grad, indices, _index_put_dims(grad.ndim, indices, dims))


index_put = defop(
    "index_put(Tensor self, Tensor[] indices, Tensor values, bool accumulate=False, int[]? dims=None) -> Tensor",
    supports_complex=True, kernel=_index_put_kernel, meta=_index_put_meta,
    grads={"self": _index_put_self_grad, "indices": None, "values": _index_put_values_grad},
    samples=lambda op: [
        SampleInput("(4,3) [idx] <- (2,3)", make_arg((4, 3), key=(op, 0)), [_ints([3, 1])],
                    make_arg((2, 3), key=(op, 1))),
        SampleInput("(4,3) [i, j] <- 0-d accumulate", make_arg((4, 3), key=(op, 2)),
                    [_ints([0, 2, 0]), _ints([1, 1, 1])], make_arg((), key=(op, 3)), True),
        SampleInput("T (3,4) [i, j] <- (2,)", make_arg((3, 4), key=(op, 4), transposed=True),
                    [_ints([2, 0]), _ints([-1, 1])], make_arg((2,), key=(op, 5)))],
    torch="lambda self, indices, values, accumulate=False, dims=None: torch.index_put(self, tuple(indices), values, "
          "accumulate)",
    doc="self with values written at the integer-tensor indices (broadcast together) of the leading dims, "
        "or of `dims` (agrad's addition: the dims the index tensors index; `x[:, idx] = v` uses it); "
        "accumulate adds instead (repeated indices add up).")


def _ints(values):
    from ...creation import tensor
    return tensor(np.asarray(values), dtype=dtypes.int64)


# ---- x[index] = value ------------------------------------------------------------------------------

def setitem(self: Tensor, index, value) -> None:
    """`self[index] = value`, as PyTorch: the indexed part is a view (basic indices) written with
    copy_/fill_ (so the base's grad_fn becomes CopySlices); with integer tensors, lists or bool masks
    among the indices, the basic part is applied first and index_put_ writes the rest."""
    if isinstance(index, list):
        index = sequence_as_tuple(index)
    items = index if isinstance(index, tuple) else (index,)
    if not any(is_advanced(item) for item in items):
        target = basic_getitem(self, index)
    else:
        target, indices, dims = advanced_parts(self, index)
        if indices:
            if not isinstance(value, Tensor):
                from ...creation import tensor
                value = tensor(value, dtype=self.dtype, device=self.device)
            elif value._device is not self._device:
                value = value.to(device=self._device)
            target.index_put_(indices, value, False, dims)
            return
        # none left to index_put_: only 0-d integer tensors, which selected as integers do
    if isinstance(value, Tensor):
        target.copy_(value)
    elif isinstance(value, (int, float, bool, np.generic)):
        target.fill_(value)
    else:                          # a nested list or an array: as torch, a tensor of self's dtype
        from ...creation import tensor
        target.copy_(tensor(value, dtype=self.dtype, device=self.device))


# ---- embedding_renorm_: each indexed row of weight scaled down to max_norm ------------------------

def _renorm_rows_meta(self, indices, max_norm, norm_type):
    if self.ndim != 2:
        raise RuntimeError(f"Expected 2-dimensional tensor, but got {self.ndim}-dimensional tensor for argument #1 "
                           f"'self' (while checking arguments for embedding_renorm_)")
    if indices.dtype.kind not in _INT_KINDS or indices.dtype.itemsize < 4:
        raise RuntimeError(f"Expected tensor for argument #2 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got {tensor_type_name(indices.dtype)} instead (while checking arguments "
                           f"for embedding_renorm_)")
    return MetaArray(self.shape, self.dtype)


def _renorm_rows_kernel(xp, self, indices, max_norm, norm_type):
    _renorm_rows_meta(self, indices, max_norm, norm_type)
    flat = indices.reshape(-1)
    bad = (flat < -self.shape[0]) | (flat >= self.shape[0])
    if flat.size and bool(bad.any()):
        raise IndexError(f"index {int(flat[bad][0])} is out of bounds for dimension 0 with size {self.shape[0]}")
    # ATen's loop over the distinct indices, vectorized: every row's norm, scaled where it is indexed and
    # above max_norm (scale max_norm / (norm + 1e-7)); the other rows are multiplied by exactly 1
    indexed = xp.bincount(xp.where(flat < 0, flat + self.shape[0], flat), minlength=self.shape[0]) > 0
    magnitude = xp.abs(self.astype(np.float64))
    if norm_type == math.inf:
        norms = magnitude.max(axis=1)
    elif norm_type == -math.inf:
        norms = magnitude.min(axis=1)
    elif norm_type == 0:
        norms = (magnitude != 0).sum(axis=1).astype(np.float64)
    else:
        norms = (magnitude ** norm_type).sum(axis=1) ** (1.0 / norm_type)
    scale = xp.where(indexed & (norms > max_norm), max_norm / (norms + 1e-7), 1.0).astype(self.dtype)
    return self * scale[:, None]


_embedding_renorm = defop(
    "_embedding_renorm(Tensor self, Tensor indices, float max_norm, float norm_type) -> Tensor",
    kernel=_renorm_rows_kernel, meta=_renorm_rows_meta,
    # derivatives.yaml's embedding_renorm_: self: not_implemented("embedding_renorm")
    grads={"self": NotImplementedDerivative("embedding_renorm"), "indices": None},
    backward_name="EmbeddingRenormBackward0", differentiable=False,
    samples=lambda op: [
        SampleInput(f"(5,3) p={p}", make_arg((5, 3), key=(op, p), requires_grad=False),
                    _index_tensor([0, 2, 2, 4, -1][:4 if p == 2.0 else 5]), m, p)
        for p, m in ((2.0, 1.0), (1.0, 1.5), (math.inf, 0.8))],
    torch="lambda w, i, m, p: torch.embedding_renorm_(w.clone(), i, m, p)",
    doc="torch.embedding_renorm_'s result out of place (agrad.embedding_renorm_ writes it into self): each row "
        "of self that indices name, scaled by max_norm / (norm + 1e-7) where its norm_type-norm exceeds max_norm.")
