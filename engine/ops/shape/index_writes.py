"""Out-of-place writes by index (ATen's TensorAdvancedIndexing.cpp and Indexing): index_fill (a value
into the slices at `index` along dim), index_copy (source's slices into them), masked_scatter
(source's elements, in order, where a mask is True) and put (source's elements at flat indices,
or added to them). Each is a copy of self with the write, its own Node with derivatives.yaml's
formulas; the in-place variants are the `_` methods (index_fill_ …)."""
from __future__ import annotations

import math

import numpy as np

from ..._tensor import Tensor
from ...backends.meta import MetaArray
from ...creation import zeros, zeros_like
from ...messages import scalar_type_name
from ...shapes import broadcast_shapes, normalize_dim
from ..reduce.arithmetic import sum as sum_op
from ..pointwise.binary import where
from ..reduce.cumulative import cumsum
from ..registry import defop
from ..samples import SampleInput, make_arg
from .advanced_indexing import _index_tensor, _mask, index_select, masked_fill, scatter_add, take
from .indexing import slice as slice_op
from .view import expand, reshape, squeeze, view


def _long_name(dt) -> str:
    return scalar_type_name(dt)


def _moved(a, d):
    """`a` with dim d first (a 0-d tensor as one element), a view that writes through."""
    return a.reshape(1) if a.ndim == 0 else np.moveaxis(a, d, 0) if hasattr(a, "strides") else a


# ---- index_fill --------------------------------------------------------------------------------

def _index_fill_meta(self, dim, index, value):
    if index.dtype != np.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    if getattr(value, "ndim", 0):
        raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{value.ndim} dimension(s).")
    if index.ndim > 1:
        raise IndexError("Index has to be a vector/scalar")
    normalize_dim(dim, self.ndim)
    return MetaArray(self.shape, self.dtype)


def _index_fill_kernel(xp, self, dim, index, value):
    _index_fill_meta(self, dim, index, value)
    d = normalize_dim(dim, self.ndim)
    size = self.shape[d] if self.ndim else 1
    i = index.reshape(-1)
    bad = (i < -size) | (i >= size)
    if i.size and bool(bad.any()):
        raise IndexError(f"index {int(i[bad][0])} is out of bounds for dimension {d} with size {size}")
    out = self.copy()
    _moved(out, d)[i] = xp.asarray(value, dtype=self.dtype)
    return out


def _index_fill_value_grad(grad, dim, index):
    # derivatives.yaml: grad.index_select(dim, unique(index)).sum(), the sum of grad over the filled slices
    # (each once). The same sum is taken here through a 0/1 mask of those slices (index_fill of zeros), whose
    # shape does not depend on the index's values, so the formula runs on Meta too (and negative indices)
    return sum_op(grad * index_fill(zeros_like(grad), dim, index, 1))


def _is_number(value) -> bool:
    return not isinstance(value, Tensor)


index_fill = defop(
    "index_fill(Tensor self, int dim, Tensor index, Tensor value) -> Tensor",
    supports_complex=True, kernel=_index_fill_kernel, meta=_index_fill_meta, wraps_numbers=True,
    grads={"self": lambda grad, dim, index: index_fill(grad, dim, index, 0), "index": None,
           "value": lambda grad, dim, index: _index_fill_value_grad(grad, dim, index)},
    backward_name=("IndexFillBackward0", "IndexFillBackward1"),
    overload=lambda self, dim, index, value: 0 if _is_number(value) else 1,
    samples=lambda op: [
        SampleInput("(3,4) dim 0", make_arg((3, 4), key=(op, 0)), 0, _index_tensor([0, 2]), -1.5),
        SampleInput("(3,4) dim -1 repeats", make_arg((3, 4), key=(op, 1)), -1, _index_tensor([3, -3, 3]), 2.0),
        # (non-negative: PyTorch's value formula, index_select, refuses a negative index)
        SampleInput("(2,3) 0-d tensor value", make_arg((2, 3), key=(op, 2)), 1, _index_tensor([2, 0, 2]),
                    make_arg((), key=(op, 3))),
        SampleInput("0-d self", make_arg((), key=(op, 4)), 0, _index_tensor([0]), 4.0)],
    torch="torch.index_fill",
    doc="self with value (a number, or a 0-d tensor that gets a gradient) in its slices at index along dim.")


# ---- index_copy --------------------------------------------------------------------------------

def _index_copy_meta(self, dim, index, source):
    d = normalize_dim(dim, self.ndim)
    if index.ndim > 1:
        raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got {index.ndim})")
    n = int(np.prod(index.shape))
    if source.ndim and n != source.shape[d if source.ndim == self.ndim else 0]:
        raise IndexError(f"index_copy_(): Number of indices ({n}) should be equal to source.size(dim) "
                         f"({source.shape[d]})")
    if index.dtype != np.int64:
        raise RuntimeError(f"index_copy_(): Expected a long tensor for index, but got {_long_name(index.dtype)}")
    if self.dtype != source.dtype:
        raise RuntimeError(f"index_copy_(): self and source expected to have the same dtype, but got (self) "
                           f"{_long_name(self.dtype)} and (source) {_long_name(source.dtype)}")
    if source.ndim != self.ndim and not (source.ndim == 0 and n == 1) and self.ndim:
        raise IndexError(f"index_copy_(): When source and destination are not scalars, their dimensionality must "
                         f"match. Source dimensionality ({source.ndim}), destination dimensionality ({self.ndim})")
    return MetaArray(self.shape, self.dtype)


def _index_copy_kernel(xp, self, dim, index, source):
    _index_copy_meta(self, dim, index, source)
    d = normalize_dim(dim, self.ndim)
    size = self.shape[d] if self.ndim else 1
    i = index.reshape(-1)
    bad = (i < 0) | (i >= size)
    if i.size and bool(bad.any()):
        raise IndexError(f"index_copy_(): index {int(i[bad][0])} is out of bounds for dimension {d} with size "
                         f"{size}")
    out = self.copy()
    _moved(out, d)[i] = _moved(source, d) if source.ndim else source
    return out


def _index_copy_source_grad(grad, dim, index, source):
    if source.ndim > 0:
        return expand(index_select(grad, dim, index), list(source.shape))
    return index_select(grad, dim, squeeze(index, [0]))


index_copy = defop(
    "index_copy(Tensor self, int dim, Tensor index, Tensor source) -> Tensor",
    supports_complex=True, kernel=_index_copy_kernel, meta=_index_copy_meta,
    grads={"self": lambda grad, dim, index: index_fill(grad, dim, index, 0), "index": None,
           "source": _index_copy_source_grad},
    samples=lambda op: [
        SampleInput("(4,3) dim 0", make_arg((4, 3), key=(op, 0)), 0, _index_tensor([3, 0]),
                    make_arg((2, 3), key=(op, 1))),
        SampleInput("(2,5) dim -1", make_arg((2, 5), key=(op, 2)), -1, _index_tensor([4, 1, 2]),
                    make_arg((2, 3), key=(op, 3))),
        SampleInput("0-d source", make_arg((3,), key=(op, 4)), 0, _index_tensor([1]), make_arg((), key=(op, 5)))],
    torch="torch.index_copy",
    doc="self with source's slices along dim written at index (one index per slice of source).")


# ---- masked_scatter ----------------------------------------------------------------------------

def _masked_scatter_meta(self, mask, source):
    if mask.dtype != np.bool_:
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with dtype "
                           f"{_long_name(mask.dtype)}")
    if self.dtype != source.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but got"
                           f"{_long_name(self.dtype)} and {_long_name(source.dtype)}")
    return MetaArray(broadcast_shapes(self.shape, mask.shape), self.dtype)


def _masked_scatter_kernel(xp, self, mask, source):
    shape = _masked_scatter_meta(self, mask, source).shape
    mask = xp.broadcast_to(mask, shape)
    n = int(mask.sum())
    if n > source.size:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    out = xp.array(xp.broadcast_to(self, shape))
    out[mask] = source.reshape(-1)[:n]
    return out


def _masked_scatter_backward(grad, mask, sizes_):
    """derivatives.yaml's masked_scatter_backward: grad where mask is True, in order, zero-padded to source's
    size. NOTE: PyTorch takes it with masked_select, whose size depends on the mask's values; here each
    element of grad is added at its rank among the mask's Trues (the rest into one spill slot, dropped),
    the same values by a static shape, so the formula runs on Meta too."""
    numel = math.prod(sizes_)
    flat_mask = reshape(expand(mask, list(grad.shape)), [-1])
    rank = cumsum(flat_mask, 0) - 1
    slots = where(flat_mask & (rank < numel), rank, numel)
    spilled = scatter_add(zeros([numel + 1], dtype=grad.dtype, device=grad.device), 0, slots, reshape(grad, [-1]))
    return view(slice_op(spilled, 0, 0, numel), list(sizes_))


masked_scatter = defop(
    "masked_scatter(Tensor self, Tensor mask, Tensor source) -> Tensor",
    supports_complex=True, kernel=_masked_scatter_kernel, meta=_masked_scatter_meta,
    grads={"self": lambda grad, mask: masked_fill(grad, mask, 0), "mask": None,
           "source": lambda grad, mask, source_shape: _masked_scatter_backward(grad, mask, source_shape)},
    samples=lambda op: [
        SampleInput("(3,4)", make_arg((3, 4), key=(op, 0)), _mask((3, 4), 1), make_arg((12,), key=(op, 2))),
        SampleInput("mask broadcast, larger source", make_arg((3, 4), key=(op, 3)), _mask((4,), 4),
                    make_arg((4, 5), key=(op, 5))),
        SampleInput("self broadcast", make_arg((4,), key=(op, 6)), _mask((2, 4), 7), make_arg((8,), key=(op, 8)))],
    torch="torch.masked_scatter",
    doc="self (broadcast with mask) with source's elements, in order, where mask is True.")


# ---- put ---------------------------------------------------------------------------------------

def _put_meta(self, index, source, accumulate):
    if index.dtype != np.int64:
        raise RuntimeError(f"put_(): Expected a long tensor for index, but got {_long_name(index.dtype)}")
    if self.dtype != source.dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got self.dtype = "
                           f"{_long_name(self.dtype)} and source.dtype = {_long_name(source.dtype)}")
    if int(np.prod(index.shape)) != int(np.prod(source.shape)):
        raise IndexError(f"put_(): Expected source and index to have the same number of elements, but got "
                         f"source.numel() = {int(np.prod(source.shape))}, index.numel() = {int(np.prod(index.shape))}")
    return MetaArray(self.shape, self.dtype)


def _put_kernel(xp, self, index, source, accumulate):
    _put_meta(self, index, source, accumulate)
    n = self.size
    i = index.reshape(-1)
    bad = (i < -n) | (i >= n)
    if i.size and bool(bad.any()):
        raise IndexError(f"out of range: tried to access index {int(i[bad][0])} on a tensor of {n} elements.")
    out = xp.ascontiguousarray(self).copy()
    flat = out.reshape(-1)
    if accumulate:
        xp.add.at(flat, i, source.reshape(-1))
    else:
        flat[i] = source.reshape(-1)
    return out


put = defop(
    "put(Tensor self, Tensor index, Tensor source, bool accumulate=False) -> Tensor",
    kernel=_put_kernel, meta=_put_meta,
    grads={"self": lambda grad, index, source, accumulate: grad if accumulate else put(grad, index, zeros_like(source)),
           "index": None,
           "source": lambda grad, index, source: reshape(take(grad, index), list(source.shape))},
    samples=lambda op: [
        SampleInput("(3,4)", make_arg((3, 4), key=(op, 0)), _index_tensor([0, 5, -1]), make_arg((3,), key=(op, 1))),
        SampleInput("accumulate repeats", make_arg((2, 3), key=(op, 2)), _index_tensor([[1, 1], [4, 0]]),
                    make_arg((2, 2), key=(op, 3)), True),
        SampleInput("T self", make_arg((4, 3), key=(op, 4), transposed=True), _index_tensor([2, 7]),
                    make_arg((2,), key=(op, 5)))],
    torch="torch.put",
    doc="self with source's elements written at the flat (row-major) indices, or added to them with accumulate.")
