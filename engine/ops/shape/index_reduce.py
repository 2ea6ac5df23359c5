"""index_reduce (ATen's index_reduce_, TensorAdvancedIndexing): source's slices along dim
reduced into self's slices at `index` with prod, mean, amax or amin; include_self=False
leaves self's values out of every slice something is reduced into. The gradient is
PyTorch's index_reduce_backward (IndexReduceBackward0), written with agrad ops as
scatter_reduce's is: a product's gradient divides by the other factors, not by a zero, and
where two zeros of source meet in one slice the gradient is right but its own derivative
is not, so it is returned under a DelayedError node that fails only in a double backward.
"""
from __future__ import annotations

import numpy as np

from ... import dtypes
from ...autograd.function import delayed_error
from ...creation import tensor
from ...backends.meta import MetaArray
from ...messages import scalar_type_name, sizes
from ...shapes import normalize_dim
from ...warn_once import warn_once
from .._common import checked
from ..pointwise.binary import where
from ..registry import defop
from ..samples import SampleInput, make_arg
from .advanced_indexing import _INT_KINDS, _as1d, _at, _float_mask, _index_tensor, _lowest, index_add, index_select

_REDUCES = ("prod", "mean", "amax", "amin")
_UFUNC = {"prod": "multiply", "mean": "add", "amax": "maximum", "amin": "minimum"}


def _index_reduce_meta(self, dim, index, source, reduce, include_self=True):
    if reduce not in _REDUCES:
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}.")
    d = normalize_dim(dim, self.ndim)
    if index.ndim > 1:
        raise IndexError(f"index_reduce_(): Index is supposed to be a vector, but got dim: {index.ndim} with type: "
                         f"{scalar_type_name(index.dtype)} and size: {sizes(index.shape)}")
    if index.dtype.kind not in _INT_KINDS or index.dtype.itemsize < 4:
        raise RuntimeError(f"index_reduce_(): Expected dtype int32/int64 for index but got: "
                           f"{scalar_type_name(index.dtype)}")
    if source.dtype != self.dtype:
        raise RuntimeError(f"index_reduce_(): self ({scalar_type_name(self.dtype)}) and source "
                           f"({scalar_type_name(source.dtype)}) must have the same scalar type")
    n = source.shape[d] if source.ndim else 1
    if index.size != n:
        raise RuntimeError(f"index_reduce_(): Number of indices ({index.size}) should be equal to source.size(dim): "
                           f"({n}), for dim: {d}")
    if max(self.ndim, 1) != max(source.ndim, 1) or \
            any(k != d and a != b for k, (a, b) in enumerate(zip(_as1d(self).shape, _as1d(source).shape))):
        raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the specified dimension. "
                           f"Got self.shape = {sizes(self.shape)} source.shape = {sizes(source.shape)}")
    return MetaArray(self.shape, self.dtype)


def _index_reduce_kernel(xp, self, dim, index, source, reduce, include_self):
    # (the warning PyTorch gives on every first use of this beta op)
    warn_once("index_reduce_beta", "index_reduce() is in beta and the API may change at any time.")
    d = normalize_dim(dim, self.ndim)
    out = xp.array(_as1d(self), copy=True)
    i = index.reshape(-1).astype(np.int64, copy=False)
    size = out.shape[d]
    if i.size and bool(((i < 0) | (i >= size)).any()):
        raise IndexError("index out of range in self")           # (negative ones too, as PyTorch's)
    # dim first, row-major: slice k is the run of `row` elements at k * row, so one flat position per
    # element (what `_at` takes on every library: NumPy's ufunc.at, dask's rounds of writes)
    moved = xp.ascontiguousarray(xp.moveaxis(out, d, 0))
    row = moved.size // size if size else 0
    positions = (i.reshape(-1, 1) * row + xp.arange(row)).reshape(-1)
    values = xp.ascontiguousarray(xp.moveaxis(_as1d(source), d, 0)).reshape(-1)
    flat = moved.reshape(-1)
    if not include_self:
        identity = {"prod": 1, "mean": 0, "amax": _lowest(out.dtype, -1), "amin": _lowest(out.dtype, 1)}[reduce]
        flat[positions] = identity
    moved = _at(xp, _UFUNC[reduce], flat, positions, values).reshape(moved.shape)
    if reduce == "mean":
        count = xp.bincount(i, minlength=size) + (1 if include_self else 0)
        count = xp.where(count == 0, 1, count).astype(out.dtype).reshape((size,) + (1,) * (moved.ndim - 1))
        moved = moved // count if out.dtype.kind in _INT_KINDS else moved / count
    return xp.moveaxis(moved, 0, d).reshape(self.shape)


def _touched(like, dim, index, source):
    """Where something of source is reduced into (a bool tensor of self's shape, no history)."""
    ones = source.detach() * 0 + 1
    return index_add(like.detach() * 0, dim, index, ones) > 0


def _index_reduce_grads(grad, self, dim, index, source, reduce, include_self, result):
    """PyTorch's index_reduce_backward (FunctionsManual.cpp): (grad_self, grad_source)."""
    if reduce == "prod":
        masked_self = where(self == 0, 1.0, self)
        masked_self_result = index_reduce(masked_self, dim, index, source, reduce, include_self=include_self)
        grad_self = grad * masked_self_result / masked_self
        src_zero = source == 0
        src_num_zeros = index_select(index_add(self.detach() * 0, dim, index, _float_mask(src_zero, self)), dim, index)
        src_single_zero = where(src_zero, src_num_zeros == 1, False)
        # where source has the slice's one zero, dividing the result by it would give 0: its gradient is
        # the product of the others, the result with the zero made 1
        masked_src = where(src_single_zero, 1.0, source)
        masked_src_result = index_reduce(self, dim, index, masked_src, reduce, include_self=include_self)
        grad_src = where(src_single_zero, index_select(grad * masked_src_result, dim, index),
                         index_select(grad * result, dim, index) / where(src_zero, 1.0, source))
        if grad_src.requires_grad and bool((src_num_zeros > 1).any()):
            grad_src = delayed_error("index_reduce(): Double backward is unsupported for source when >1 zeros in "
                                     "source are scattered to the same position in self", grad_src)
    elif reduce == "mean":
        n = index_add(grad.detach() * 0 + (1 if include_self else 0), dim, index, source.detach() * 0 + 1)
        n = where(n == 0, 1.0, n)
        grad_self = grad / n
        grad_src = index_select(grad, dim, index) / index_select(n, dim, index)
    else:
        # amax/amin: the gradient is shared evenly by every element equal to the result
        value = index_select(result, dim, index)
        self_is_result = _float_mask(self == result, grad)
        source_is_result = _float_mask(source == value, grad)
        grad_distributed = grad / index_add(self_is_result, dim, index, source_is_result)
        grad_self = self_is_result * grad_distributed
        grad_src = source_is_result * index_select(grad_distributed, dim, index)
    if not include_self:
        grad_self = where(_touched(self, dim, index, source), 0.0, grad_self)      # PyTorch's index_fill(.., 0)
    return grad_self, grad_src


def _leaf(values):
    return tensor(np.array(values), dtype=dtypes.float64, requires_grad=True)


def _index_reduce_samples(op):
    out = []
    for reduce in _REDUCES:
        for include_self in (True, False):
            self = make_arg((4, 3), key=(op, reduce, include_self, 0), low=0.5, high=2.0)
            source = make_arg((4, 2), key=(op, reduce, include_self, 1), low=0.5, high=2.0)
            out.append(SampleInput(f"{reduce} include_self={include_self}", self, 1, _index_tensor([2, 0]),
                                   source, reduce, include_self=include_self))
        out.append(SampleInput(f"{reduce} dim 0 repeats", make_arg((3, 2), key=(op, reduce, 2), low=0.5, high=2.0),
                               0, _index_tensor([2, 0, 2, 2]), make_arg((4, 2), key=(op, reduce, 3), low=0.5,
                                                                         high=2.0), reduce))
    # ties: amax's gradient is shared by the equal elements
    tie = _leaf([[1.0, 2.0], [2.0, 0.5]])
    out.append(SampleInput("amax ties", make_arg((2, 2), key=(op, "tie"), low=-3.0, high=-2.0), 1,
                           _index_tensor([1, 1]), tie, "amax"))
    # prod with one zero of source in a slice (and a zero in self)
    zero_self = _leaf([[0.0, 1.5, 2.0], [1.25, -1.0, 0.5]])
    zero_src = _leaf([[0.0, 2.0], [1.5, -0.5]])
    out.append(SampleInput("prod one zero", zero_self, 1, _index_tensor([2, 0]), zero_src, "prod"))
    return out


index_reduce = defop(
    "index_reduce(Tensor self, int dim, Tensor index, Tensor source, str reduce, *, bool include_self=True) -> Tensor",
    kernel=checked(_index_reduce_meta, _index_reduce_kernel), meta=_index_reduce_meta,
    grads={"self": lambda grad, self, dim, index, source, reduce, include_self, result:
               _index_reduce_grads(grad, self, dim, index, source, reduce, include_self, result)[0],
           "index": None,
           "source": lambda grad, self, dim, index, source, reduce, include_self, result:
               _index_reduce_grads(grad, self, dim, index, source, reduce, include_self, result)[1]},
    samples=_index_reduce_samples, torch="torch.index_reduce",
    doc="self with source's slices along dim reduced into its slices at index (a vector): prod, mean, amax or "
        "amin; include_self=False leaves self's values out wherever something is reduced.")
