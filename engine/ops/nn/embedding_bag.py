"""Bags of embeddings (ATen's EmbeddingBag): embedding_bag.

`_embedding_bag` is ATen's op: the sums, means or maxima of the weight's rows at `indices`,
one bag from each offset to the next (the last bag to the end of `indices`, or to the last
offset with include_last_offset), padding_idx's rows left out of every bag (and of the count a
mean divides by); an empty bag is zeros. Its other outputs are what its backward needs, as in
ATen: each index's bag (offset2bag, -1 for an index in no bag), each bag's size without
padding, and in 'max' mode the row each maximum came from (-1 for an empty bag). The backward
formulas are agrad ops: the gradient of the weight is the bags' gradients added into the rows
they came from (scaled by per_sample_weights, by 1 / bag size for 'mean', by 1 / the index's
count with scale_grad_by_freq); per_sample_weights gets the bag's gradient dot the row.

`embedding_bag`, the public op, is torch.nn.functional.embedding_bag: its checks, a (B, N)
input as B bags of N, max_norm's renormalisation of the rows used (in place, without
recording, as PyTorch's embedding_renorm_), padding_idx counted from the end when negative.
sparse=True is refused: agrad has no sparse gradients.
"""
from __future__ import annotations

import numpy as np

from ... import creation, dtypes
from ...backends.meta import MetaArray
from ...errors import DtypeError
from ...grad_mode import no_grad
from ...messages import size_repr, tensor_type_name
from ...user_warnings import warn_user
from ..conversion import detach, to
from ..pointwise.binary import clamp_min, ge, gt, ne, where
from ..reduce.arithmetic import (
    norm,
    sum,  # noqa: A004
)
from ..reduce.selection import _unique2
from ..registry import defop
from ..samples import SampleInput, make_arg
from ..shape.advanced_indexing import _at, index_add, index_select, scatter_add
from ..shape.view import reshape, unsqueeze

_MODES = {"sum": 0, "mean": 1, "max": 2}
_SUM, _MEAN, _MAX = 0, 1, 2
_FLOATS = (np.float16, np.float32, np.float64)


def _check(weight, indices, offsets, mode, per_sample_weights, include_last_offset):
    where_ = " (while checking arguments for embedding_bag)"
    # as ATen: indices and offsets promoted to one dtype first (promoteIndicesAndOffsets), then checked
    common = np.promote_types(indices.dtype, offsets.dtype)
    for name in ("indices", "offsets"):
        if common not in (np.int64, np.int32):
            raise DtypeError(f"Expected tensor for argument #1 '{name}' to have one of the following scalar types: "
                             f"Long, Int; but got {tensor_type_name(common)} instead{where_}")
    if weight.dtype not in _FLOATS:
        raise DtypeError(f"Expected tensor for argument #1 'weight' to have one of the following scalar types: "
                         f"Half, BFloat16, Float, Double; but got {tensor_type_name(weight.dtype)} instead{where_}")
    if per_sample_weights is not None:
        if mode != _SUM:
            raise RuntimeError("embedding_bag: per_sample_weights only supported with mode='sum'")
        if per_sample_weights.dtype != weight.dtype:
            raise DtypeError(f"Expected tensor for argument #1 'weight' to have the same type as tensor for argument "
                             f"#1 'per_sample_weights'; but type {tensor_type_name(weight.dtype)} does not equal "
                             f"{tensor_type_name(per_sample_weights.dtype)}{where_}")
        if per_sample_weights.ndim != 1:
            raise RuntimeError(f"expected per_sample_weights to be 1D tensor, got {per_sample_weights.ndim}D")
        if per_sample_weights.shape[0] != indices.shape[0]:
            raise RuntimeError(f"expected per_sample_weights.numel() ({per_sample_weights.shape[0]} to be the same as "
                               f"indices.numel() ({indices.shape[0]})")
    bags = offsets.shape[0]
    if include_last_offset:
        if bags < 1:
            raise RuntimeError("include_last_offset: numBags should be at least 1")
        bags -= 1
    return bags


def _meta(weight, indices, offsets, scale_grad_by_freq, mode, sparse, per_sample_weights, include_last_offset,
          padding_idx):
    bags = _check(weight, indices, offsets, mode, per_sample_weights, include_last_offset)
    dim = weight.shape[1]
    return (MetaArray((bags, dim), weight.dtype), MetaArray(indices.shape, np.int64), MetaArray((bags,), np.int64),
            MetaArray((bags, dim) if mode == _MAX else (bags,), np.int64))


def _kernel(xp, weight, indices, offsets, scale_grad_by_freq, mode, sparse, per_sample_weights, include_last_offset,
            padding_idx):
    bags = _check(weight, indices, offsets, mode, per_sample_weights, include_last_offset)
    n, dim = indices.shape[0], weight.shape[1]
    starts = offsets.astype(np.int64)
    if starts.shape[0] and int(starts[0]) != 0:
        raise RuntimeError(f"offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from "
                           f"position 0. However, got {int(starts[0])}")
    if starts.shape[0] and int(starts[-1]) > n:
        raise RuntimeError(f"offsets[-1] can not be greater than input's length {n} but got offsets[-1] of "
                           f"{int(starts[-1])}")
    idx = indices.astype(np.int64)
    if n and bool(((idx < 0) | (idx >= weight.shape[0])).any()):
        bad = int(idx[(idx < 0) | (idx >= weight.shape[0])][0])
        raise RuntimeError(f"embedding_bag: Expected idx >= 0 && idx < num_embeddings but found idx to be {bad}")
    # each index's bag: ATen's make_offset2bag (ones added at the offsets, the first removed, a running sum)
    # NOTE: with include_last_offset the last offset ends the last bag, as documented: the indices after it
    # are in no bag. (PyTorch's CPU kernels disagree there, by dtype and mode: some fold them into the last
    # bag, some leave the gradient of their rows uninitialised; pytorch/pytorch#190062.)
    marks = _at(xp, "add", xp.zeros(n + 1, dtype=np.int64), starts, xp.ones(starts.shape[0], dtype=np.int64))
    marks[0] -= 1
    offset2bag = xp.cumsum(marks)[:n]
    in_bag = (offset2bag >= 0) & (offset2bag < bags)
    kept = in_bag & (idx != padding_idx)
    bag = xp.where(in_bag, offset2bag, bags)          # a row past the last bag for what no bag holds
    if mode == _MEAN:
        bag_size = _at(xp, "add", xp.zeros(bags + 1, dtype=np.int64), bag, kept.astype(np.int64))[:bags]
    else:
        ends = starts[1:bags + 1] if include_last_offset else xp.concatenate([starts[1:], xp.asarray([n])])
        bag_size = (ends - starts[:bags]).astype(np.int64)
    rows = weight[idx]
    if mode == _MAX:
        neg = xp.asarray(-np.inf, dtype=weight.dtype)
        top = _at(xp, "maximum", xp.full((bags + 1, dim), neg, dtype=weight.dtype), bag,
                  xp.where(kept[:, None], rows, neg))
        # the first index in its bag whose row holds the maximum (ATen's strict > keeps the first)
        first = xp.where(kept[:, None] & (rows == top[bag]), xp.arange(n)[:, None], n)
        pos = _at(xp, "minimum", xp.full((bags + 1, dim), n, dtype=np.int64), bag, first)[:bags]
        empty = pos == n
        max_indices = xp.concatenate([idx, xp.asarray([-1])])[pos]       # -1 for an empty bag
        out = xp.where(empty, 0, top[:bags]).astype(weight.dtype, copy=False)
        return out, xp.where(in_bag, offset2bag, -1), bag_size, max_indices.astype(np.int64)
    scale = kept.astype(weight.dtype)
    if per_sample_weights is not None:
        scale = scale * per_sample_weights
    out = _at(xp, "add", xp.zeros((bags + 1, dim), dtype=weight.dtype), bag, rows * scale[:, None])[:bags]
    if mode == _MEAN:
        out = xp.where(bag_size[:, None] > 0, out / xp.maximum(bag_size, 1)[:, None], 0)
    return (out.astype(weight.dtype, copy=False), xp.where(in_bag, offset2bag, -1), bag_size,
            xp.zeros(bags, dtype=np.int64))


def _freq_meta(indices, num_weights):
    return MetaArray(indices.shape, np.int64)


def _freq_kernel(xp, indices, num_weights):
    # NOTE: PyTorch 2.13's CPU kernel (_embedding_bag_dense_backward_cpu_sum_mean) divides the gradient of
    # the k-th distinct index (in sorted order) by the count of the k-th *element* of the sorted indices,
    # counts[indices_data[i]], not by the index's own count (pytorch/pytorch#190063, fixed after 2.13);
    # agrad gives PyTorch 2.13's values
    flat = indices.reshape(-1).astype(np.int64)
    ordered = xp.sort(flat)
    counts = xp.bincount(flat, minlength=num_weights)
    distinct = xp.unique(ordered)
    rank = xp.searchsorted(distinct, flat)
    return counts[ordered[rank]].reshape(indices.shape)


_embedding_bag_freq = defop(
    "_embedding_bag_freq(Tensor indices, SymInt num_weights) -> Tensor",
    kernel=_freq_kernel, meta=_freq_meta,
    samples=lambda op: [SampleInput("repeats", _index([3, 1, 3, 0, 3, 4]), 5)],
    doc="What embedding_bag's scale_grad_by_freq divides each index's gradient by (PyTorch 2.13's CPU kernel's "
        "count, see the NOTE in its kernel).")


def _weight_grad(grad, weight_shape, indices, scale_grad_by_freq, mode, per_sample_weights, padding_idx, result):
    _, offset2bag, bag_size, max_indices = result
    num_weights, dim = weight_shape
    zeros = creation.zeros([num_weights, dim], dtype=grad.dtype, device=grad.device)
    if mode == _MAX:
        found = ge(max_indices, 0)
        return scatter_add(zeros, 0, where(found, max_indices, 0), where(found, grad, 0.0))
    in_bag = ge(offset2bag, 0)
    bag = where(in_bag, offset2bag, 0)
    scale = to(in_bag & ne(indices, padding_idx), dtype=grad.dtype)
    if per_sample_weights is not None:
        scale = scale * per_sample_weights
    if mode == _MEAN:
        scale = scale / to(clamp_min(index_select(bag_size, 0, bag), 1), dtype=grad.dtype)
    if scale_grad_by_freq:
        scale = scale / _embedding_bag_freq(indices, num_weights)
    return index_add(zeros, 0, indices, index_select(grad, 0, bag) * unsqueeze(to(scale, dtype=grad.dtype), 1))


def _per_sample_weights_grad(grad, weight, indices, padding_idx, result):
    offset2bag = result[1]
    in_bag = ge(offset2bag, 0)
    dots = sum(index_select(grad, 0, where(in_bag, offset2bag, 0)) * index_select(weight, 0, indices), [1])
    return where(in_bag & ne(indices, padding_idx), dots, 0.0)


def _index(values, dtype=dtypes.int64):
    return creation.tensor(values, dtype=dtype)


def _samples(op):
    def w(k, shape=(6, 3)):
        return make_arg(shape, key=(op, k))
    return [
        SampleInput("sum", w(0), _index([0, 2, 4, 1, 5, 3]), _index([0, 2, 2])),
        # NOTE: no scale_grad_by_freq here: its scaling is not a derivative, which a gradcheck would refuse
        # (tests/engine/test_nn_losses.py and the EmbeddingBag scenarios check it against PyTorch's values)
        SampleInput("mean padding", w(1), _index([0, 2, 2, 1, 5, 2]), _index([0, 3]), False, _MEAN, False, None,
                    False, 2),
        SampleInput("max last offset", w(2), _index([0, 2, 4, 1, 5, 3], dtypes.int32), _index([0, 2, 5], dtypes.int32),
                    False, _MAX, False, None, True),
        SampleInput("per_sample_weights padding", w(3), _index([3, 1, 0, 1]), _index([0, 1, 4]), False, _SUM, False,
                    make_arg((4,), key=(op, 4)), False, 1)]


_embedding_bag = defop(
    "_embedding_bag(Tensor weight, Tensor indices, Tensor offsets, bool scale_grad_by_freq=False, int mode=0, "
    "bool sparse=False, Tensor? per_sample_weights=None, bool include_last_offset=False, int padding_idx=-1) "
    "-> (Tensor, Tensor, Tensor, Tensor)",
    kernel=_kernel, meta=_meta,
    grads={"weight": _weight_grad, "per_sample_weights": _per_sample_weights_grad, "indices": None, "offsets": None},
    backward_name="EmbeddingBagBackward0", gradgrad=False,
    samples=_samples,
    doc="ATen's _embedding_bag: (the bags' sums, means or maxima, each index's bag, each bag's size, the rows of "
        "the maxima); mode 0 sum, 1 mean, 2 max. embedding_bag is the public op.")


def _renorm_(weight, input, max_norm, norm_type):
    """PyTorch's embedding_renorm_ on weight.detach(): each row used whose norm exceeds max_norm scaled
    to max_norm (by max_norm / (norm + 1e-7)), in place, without recording."""
    with no_grad():
        w = detach(weight)
        rows = _unique2(reshape(input, [-1]), True, False, False)[0]
        norms = norm(index_select(w, 0, rows), norm_type, [1])
        scale = where(gt(norms, max_norm), max_norm / (norms + 1e-7), 1.0)
        w[rows] = index_select(w, 0, rows) * unsqueeze(to(scale, dtype=w.dtype), 1)


def _embedding_bag_public(input, weight, offsets, max_norm, norm_type, scale_grad_by_freq, mode, sparse,
                          per_sample_weights, include_last_offset, padding_idx):
    # as torch.nn.functional.embedding_bag
    if weight.dtype == dtypes.int64 and input.is_floating_point():
        warn_user("Argument order of nn.functional.embedding_bag was changed. Usage `embedding_bag(weight, input, "
                  "...)` is deprecated, and should now be `embedding_bag(input, weight, ...)`.")
        weight, input = input, weight
    if per_sample_weights is not None and tuple(input.shape) != tuple(per_sample_weights.shape):
        raise ValueError(f"embedding_bag: If per_sample_weights ({size_repr(per_sample_weights.shape)}) is not "
                         f"None, then it must have the same shape as the input ({size_repr(input.shape)})")
    if weight.ndim != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.ndim}")
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError(f"if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             f"fixed length sequences. However, found offsets of type {type(offsets)}")
        offsets = creation.arange(0, input.numel(), input.shape[1], dtype=input.dtype, device=input.device)
        include_last_offset = False
        input = reshape(input, [-1])
        if per_sample_weights is not None:
            per_sample_weights = reshape(per_sample_weights, [-1])
    elif input.ndim == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.ndim != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.ndim}")
    if mode not in _MODES:
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max":
        if scale_grad_by_freq:
            raise ValueError("max mode does not support scaling the gradient by the frequency")
        if sparse:
            raise ValueError("max mode does not support sparse weights")
    if sparse:
        raise NotImplementedError("embedding_bag(sparse=True): agrad has no sparse gradients")
    if max_norm is not None:
        _renorm_(weight, input, max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                  f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
                                  f"GitHub.")
    if padding_idx is None:
        padding_idx = -1
    else:
        num = weight.shape[0]
        if not -num <= padding_idx < num:
            raise RuntimeError(f"padding_idx must be within the number of embeddings, -{num} through {num - 1}, but "
                               f"got {padding_idx}")
        padding_idx %= num
    return _embedding_bag(weight, input, offsets, scale_grad_by_freq, _MODES[mode], sparse, per_sample_weights,
                          include_last_offset, padding_idx)[0]


embedding_bag = defop(
    "embedding_bag(Tensor input, Tensor weight, Tensor? offsets=None, float? max_norm=None, float norm_type=2, "
    "bool scale_grad_by_freq=False, str mode=\"mean\", bool sparse=False, Tensor? per_sample_weights=None, "
    "bool include_last_offset=False, int? padding_idx=None) -> Tensor",
    composite=_embedding_bag_public, gradgrad=False,
    samples=lambda op: [
        SampleInput("mean offsets", _index([0, 2, 4, 1, 5, 3]), make_arg((6, 3), key=(op, 0)), _index([0, 2, 2])),
        SampleInput("2-D sum per_sample_weights padding -1", _index([[0, 5, 1], [5, 3, 3]]),
                    make_arg((6, 3), key=(op, 1)), mode="sum", per_sample_weights=make_arg((2, 3), key=(op, 2)),
                    padding_idx=-1),
        SampleInput("max include_last_offset", _index([4, 2, 0, 1, 5, 3]), make_arg((6, 2), key=(op, 3)),
                    _index([0, 1, 1, 6]), mode="max", include_last_offset=True),
        SampleInput("mean padding", _index([1, 1, 3, 0, 1]), make_arg((4, 3), key=(op, 4)), _index([0, 3]),
                    padding_idx=0)],
    torch="torch.nn.functional.embedding_bag",
    doc="The sums, means or maxima of bags of weight's rows: a 1-D input cut into bags at `offsets`, or each row "
        "of a 2-D input a bag; per_sample_weights scales each row ('sum' only), padding_idx's rows are left out, "
        "an empty bag is zeros.")
