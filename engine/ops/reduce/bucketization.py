"""Binary search into sorted values (ATen's Bucketization.cpp): searchsorted (per row of an
N-D sorted_sequence, or one 1-D sequence for every value; `side`/`right`, a `sorter` that
sorts it) and bucketize (the bucket of each value among 1-D boundaries). Their results are
indices (int64, or int32 with out_int32): no gradient flows through them, as in PyTorch."""
from __future__ import annotations

import numpy as np

from ... import dtypes
from ...backends.meta import MetaArray
from ...messages import scalar_type_name
from ..registry import defop
from ..samples import SampleInput, make_arg


def _side(right, side):
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, got side of left "
                               "while right was True")
        return side
    return "right" if right else "left"


def _is_number(x) -> bool:
    return not hasattr(x, "shape")


def _searchsorted_meta(sorted_sequence, self, out_int32=False, right=False, side=None, sorter=None):
    _side(right, side)
    seq_shape = tuple(sorted_sequence.shape)
    shape = () if _is_number(self) else tuple(self.shape)
    if len(seq_shape) > 1 and (_is_number(self) or seq_shape[:-1] != shape[:-1]):
        raise RuntimeError(f"torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions "
                           f"of boundaries tensor and input value tensor must match, but we got boundaries tensor "
                           f"{list(seq_shape)} and input value tensor {list(shape)}")
    if sorter is not None:
        if tuple(sorter.shape) != seq_shape:
            raise RuntimeError(f"torch.searchsorted(): boundary and sorter must have the same size, but got boundary "
                               f"tensor {list(seq_shape)}and got sorter tensor {list(sorter.shape)}")
        if sorter.dtype != np.int64:
            raise RuntimeError(f"torch.searchsorted(): sorter must be a tensor of long dtype but got dtype "
                               f"{scalar_type_name(sorter.dtype)}")
    return MetaArray(shape, np.dtype(np.int32 if out_int32 else np.int64))


def _searchsorted_kernel(xp, sorted_sequence, self, out_int32, right, side, sorter):
    meta = _searchsorted_meta(sorted_sequence, self, out_int32, right, side, sorter)
    how = _side(right, side)
    seq = sorted_sequence if sorter is None else xp.take_along_axis(sorted_sequence, sorter, axis=-1)
    values = xp.asarray(self)
    if seq.ndim <= 1:
        out = xp.searchsorted(seq, values, side=how)
    else:
        rows, n = seq.reshape(-1, seq.shape[-1]), values.shape[-1]
        flat = values.reshape(-1, n)
        out = xp.stack([xp.searchsorted(rows[i], flat[i], side=how) for i in range(rows.shape[0])]).reshape(values.shape)
    return xp.asarray(out).astype(meta.dtype, copy=False)


def _searchsorted_samples(op):
    seq = make_arg((6,), key=(op, 0), low=-2, high=2, requires_grad=False).sort()[0]
    values = make_arg((2, 3), key=(op, 1), low=-2.5, high=2.5)
    rows = make_arg((2, 5), key=(op, 2), low=-2, high=2, requires_grad=False).sort(-1)[0]
    shuffled = make_arg((6,), key=(op, 3), low=-2, high=2, requires_grad=False)
    with_ties = seq.detach().clone()
    return [SampleInput("1-D sequence", seq, values),
            SampleInput("right=True, ties", with_ties, with_ties[1:4].clone(), right=True),
            SampleInput("side='right', out_int32", seq, values, side="right", out_int32=True),
            SampleInput("rows", rows, make_arg((2, 4), key=(op, 4), low=-2.5, high=2.5)),
            SampleInput("sorter", shuffled, values, sorter=shuffled.argsort()),
            SampleInput("scalar value", seq, 0.5)]


searchsorted = defop(
    "searchsorted(Tensor sorted_sequence, Tensor self, *, bool out_int32=False, bool right=False, str? side=None, "
    "Tensor? sorter=None) -> Tensor",
    kernel=_searchsorted_kernel, meta=_searchsorted_meta, wraps_numbers=True,
    samples=_searchsorted_samples, torch="torch.searchsorted",
    doc="For each value, the index in the sorted sequence (per row of an N-D one) where it would be inserted to "
        "keep it sorted: before equal elements ('left'), or after them ('right').")


def _bucketize_meta(self, boundaries, out_int32=False, right=False):
    if boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.ndim})")
    return _searchsorted_meta(boundaries, self, out_int32, right)


def _bucketize_kernel(xp, self, boundaries, out_int32, right):
    _bucketize_meta(self, boundaries, out_int32, right)
    return _searchsorted_kernel(xp, boundaries, self, out_int32, right, None, None)


bucketize = defop(
    "bucketize(Tensor self, Tensor boundaries, *, bool out_int32=False, bool right=False) -> Tensor",
    kernel=_bucketize_kernel, meta=_bucketize_meta, wraps_numbers=True,
    samples=lambda op: [
        SampleInput("(2,3)", make_arg((2, 3), key=(op, 0), low=-2.5, high=2.5),
                    make_arg((5,), key=(op, 1), low=-2, high=2, requires_grad=False).sort()[0]),
        SampleInput("right, int32, ties", make_arg((4,), key=(op, 2), dtype=dtypes.int64, low=0, high=5, integer=True),
                    make_arg((3,), key=(op, 3), dtype=dtypes.int64, low=0, high=5, integer=True).sort()[0],
                    right=True, out_int32=True),
        SampleInput("scalar", 0.25, make_arg((4,), key=(op, 4), low=-1, high=1, requires_grad=False).sort()[0])],
    torch="torch.bucketize",
    doc="The bucket of each value among sorted 1-D boundaries: i with boundaries[i-1] < x <= boundaries[i] "
        "(right: boundaries[i-1] <= x < boundaries[i]).")
