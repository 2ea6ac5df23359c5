"""Reductions over segments of one dimension (ATen's SegmentReduce.cpp): segment_reduce, whose segments
along `axis` are given by their lengths or offsets (one row of them per index of the dims before axis),
and its backward, _segment_reduce_backward, an op of its own with no derivative (as in PyTorch: a second
backward through segment_reduce fails naming it).

Each segment reduces from `initial` (by default 0 for sum and mean, 1 for prod, -inf for max, inf for
min), NaN propagating through max and min; an empty segment's mean is NaN unless `initial` is given.
The backward is the kernel's, quirks included: max/min send the gradient to every element equal to the
result (or NaN), divided by their count only where it is positive; prod's gradient of an element that is
0 or NaN is the product of the others (with `initial`)."""
from __future__ import annotations

import math

import numpy as np

from ...backends.meta import MetaArray
from ...creation import tensor
from ...errors import DtypeNotImplementedError
from ...messages import require_floating, scalar_type_name
from ...shapes import normalize_dim
from .._common import host
from ..registry import defop
from ..samples import SampleInput, make_arg

# the reduce argument's names, as ATen's get_reduction_enum takes them
_REDUCTIONS = {"sum": "sum", "mean": "mean", "prod": "prod", "max": "max", "amax": "max", "min": "min", "amin": "min"}
_INITIAL = {"sum": 0.0, "mean": 0.0, "prod": 1.0, "max": -math.inf, "min": math.inf}


def _reduction(reduce: str) -> str:
    if reduce not in _REDUCTIONS:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    return _REDUCTIONS[reduce]


def _check(data, reduce, lengths, indices, offsets, axis):
    """segment_reduce's checks that need no values, in ATen's order; (reduction, axis, segments' name)."""
    axis = normalize_dim(axis, len(data.shape))
    if indices is not None:
        raise RuntimeError("segment_reduce(): indices based reduction is not supported yet.")
    if lengths is None and offsets is None:
        raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined.")
    reduction = _reduction(reduce)
    name, index = ("offsets", offsets) if offsets is not None else ("lengths", lengths)
    if not len(data.shape) >= len(index.shape):
        raise RuntimeError(f"Expected data.dim() >= {name}_value.dim() to be true, but got false.  (Could this "
                           f"error message be improved?  If so, please report an enhancement request to PyTorch.)")
    if axis != len(index.shape) - 1:
        raise RuntimeError(f"segment_reduce(): Expected axis to be the last dimension of {name} but got {axis}.")
    if np.dtype(index.dtype).kind not in "iu" or np.dtype(index.dtype).itemsize < 4:
        raise DtypeNotImplementedError(f'"_segment_reduce_{name}_cpu_kernel1" not implemented for '
                                       f"'{scalar_type_name(index.dtype)}'")
    require_floating("_segment_reduce_cpu", data.dtype)
    return reduction, axis, name


def _segment_reduce_meta(data, reduce, lengths=None, indices=None, offsets=None, axis=0, unsafe=False,
                         initial=None):
    _, axis, name = _check(data, reduce, lengths, indices, offsets, axis)
    segments = lengths.shape[-1] if name == "lengths" else offsets.shape[-1] - 1
    shape = list(data.shape)
    shape[axis] = segments
    return MetaArray(tuple(shape), data.dtype)


def _bounds(xp, data, lengths, offsets, axis):
    """(data as (outer, N, inner), each segment's start and end as (outer, segments) host arrays)."""
    outer, inner = math.prod(data.shape[:axis]), math.prod(data.shape[axis + 1:])
    blocks = xp.reshape(xp.ascontiguousarray(data), (outer, data.shape[axis], inner))
    if offsets is not None:
        starts_ends = host(offsets).reshape(outer, -1)
        return blocks, starts_ends[:, :-1], starts_ends[:, 1:]
    counts = host(lengths).reshape(outer, -1)
    ends = np.cumsum(counts, axis=-1)
    return blocks, ends - counts, ends


def _segment_reduce_kernel(xp, data, reduce, lengths=None, indices=None, offsets=None, axis=0, unsafe=False,
                           initial=None):
    reduction, axis, name = _check(data, reduce, lengths, indices, offsets, axis)
    if name == "lengths" and not unsafe:
        counts = host(lengths)
        if counts.size and counts.min() < 0:
            raise RuntimeError("lengths contains negative value!")
        if not bool(np.all(counts.sum(axis=-1) == data.shape[axis])):
            raise RuntimeError("segment_reduce(): Expected all rows of lengths along axis to sum to "
                               "data.size(lengths.dim()-1) when !unsafe.")
    blocks, starts, ends = _bounds(xp, data, lengths, offsets, axis)
    start_value = _INITIAL[reduction] if initial is None else initial
    out = xp.empty((blocks.shape[0], starts.shape[1], blocks.shape[2]), dtype=data.dtype)
    for o in range(starts.shape[0]):
        for s in range(starts.shape[1]):
            if ends[o, s] < starts[o, s]:
                raise RuntimeError("Expected segment_length >= 0 to be true, but got false.  (Could this error "
                                   "message be improved?  If so, please report an enhancement request to PyTorch.)")
            segment = blocks[o, starts[o, s]:ends[o, s]]
            out[o, s] = _reduce(xp, reduction, segment, start_value, initial is not None)
    shape = list(data.shape)
    shape[axis] = starts.shape[1]
    return out.reshape(shape)


def _reduce(xp, reduction, segment, start_value, has_initial):
    n = segment.shape[0]
    if reduction in ("sum", "mean"):
        value = start_value + segment.sum(axis=0)
        if reduction == "mean":
            if n == 0 and not has_initial:
                return xp.full(segment.shape[1:], np.nan, dtype=segment.dtype)
            if n > 0:
                value = value / n           # (a NaN sum stays NaN)
        return value
    if reduction == "prod":
        return start_value * segment.prod(axis=0)
    # NaN-propagating, as the kernel's (ndarray.max as every backend's arrays have it, ufunc.reduce not)
    pick = xp.maximum if reduction == "max" else xp.minimum
    extreme = segment.max(axis=0) if reduction == "max" else segment.min(axis=0)
    return pick(start_value, extreme) if n else xp.full(segment.shape[1:], start_value,
                                                                              dtype=segment.dtype)


def _backward_kernel(xp, grad, output, data, reduce, lengths=None, offsets=None, axis=0, initial=None):
    axis = normalize_dim(axis, data.ndim)
    if lengths is None and offsets is None:
        raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined.")
    reduction = _reduction(reduce)
    blocks, starts, ends = _bounds(xp, data, lengths, offsets, axis)
    grads = xp.reshape(xp.ascontiguousarray(grad), (blocks.shape[0], starts.shape[1], blocks.shape[2]))
    outs = xp.reshape(xp.ascontiguousarray(output), grads.shape)
    grad_input = xp.zeros(blocks.shape, dtype=grad.dtype)
    for o in range(starts.shape[0]):
        for s in range(starts.shape[1]):
            begin, end = starts[o, s], ends[o, s]
            if end <= begin:
                continue
            segment, g, result = blocks[o, begin:end], grads[o, s], outs[o, s]
            if reduction in ("max", "min"):
                hit = xp.isnan(segment) | (segment == result)
                picked = xp.where(hit, g, 0.0)
                counter = hit.sum(axis=0)
                # NOTE: ATen's kernel divides by the count of tied elements only where the gradient is positive
                grad_input[o, begin:end] = xp.where((counter >= 2) & (picked > 0), picked / counter, picked)
            elif reduction == "mean":
                grad_input[o, begin:end] = g / (end - begin)
            elif reduction == "sum":
                grad_input[o, begin:end] = g
            else:
                grad_input[o, begin:end] = _prod_grad(xp, segment, g, result, 1.0 if initial is None else initial)
    return grad_input.reshape(data.shape)


def _prod_grad(xp, segment, g, result, start_value):
    """grad * result / x, and for an x that is 0 or NaN grad times the product of the others (and initial)."""
    special = xp.isnan(segment) | (segment == 0)
    safe = xp.where(special, 1.0, segment)
    out = g * result / safe
    for j in np.flatnonzero(host(special.any(axis=1))):
        others = xp.concatenate([segment[:j], segment[j + 1:]])
        exclusive = start_value * others.prod(axis=0)
        out[j] = xp.where(special[j], g * exclusive, out[j])
    return out


def _backward_meta(grad, output, data, reduce, lengths=None, offsets=None, axis=0, initial=None):
    if lengths is None and offsets is None:
        raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined.")
    _reduction(reduce)
    return MetaArray(data.shape, grad.dtype)


def _not_implemented(grad):
    raise RuntimeError("derivative for aten::_segment_reduce_backward is not implemented")


def _samples(op, backward=False):
    data = make_arg((6, 3), key=(op, 0))
    batched = make_arg((2, 5, 2), key=(op, 1))
    lengths = tensor([2, 0, 3, 1])
    rows = tensor([[2, 3], [0, 5]])
    cases = [("sum lengths", data, "sum", {"lengths": lengths}),
             ("mean lengths initial", data, "mean", {"lengths": lengths, "initial": 0.5}),
             # (no empty segment for max and min: their -inf and inf have no finite differences)
             ("max offsets", data, "max", {"offsets": tensor([0, 2, 5, 6])}),
             ("amin lengths", data, "amin", {"lengths": tensor([3, 1, 2])}),
             ("prod axis=1 rows", batched, "prod", {"lengths": rows, "axis": 1}),
             ("sum axis=-2 initial", batched, "sum", {"lengths": rows, "axis": -2, "initial": -1.0})]
    if not backward:
        return [SampleInput(name, x, reduce, **kwargs) for name, x, reduce, kwargs in cases]
    out = []
    for name, x, reduce, kwargs in cases:
        result = segment_reduce(x.detach(), reduce, **kwargs)
        g = make_arg(tuple(result.shape), key=(op, name), requires_grad=False)
        out.append(SampleInput(name, g, result, x.detach(), reduce, **kwargs))
    return out


_segment_reduce_backward = defop(
    "_segment_reduce_backward(Tensor grad, Tensor output, Tensor data, str reduce, *, Tensor? lengths=None, "
    "Tensor? offsets=None, int axis=0, Scalar? initial=None) -> Tensor",
    kernel=_backward_kernel, meta=_backward_meta,
    # PyTorch records a node named NotImplemented whose backward raises (no derivatives.yaml entry)
    grads={"grad": _not_implemented, "output": _not_implemented, "data": _not_implemented, "lengths": None,
           "offsets": None},
    backward_name="NotImplemented", differentiable=False, gradgrad=False,
    samples=lambda op: _samples(op, backward=True),
    torch="torch.ops.aten._segment_reduce_backward",
    doc="segment_reduce's gradient with respect to data (ATen's kernel); not differentiable again.")

segment_reduce = defop(
    "segment_reduce(Tensor data, str reduce, *, Tensor? lengths=None, Tensor? indices=None, Tensor? offsets=None, "
    "int axis=0, bool unsafe=False, Scalar? initial=None) -> Tensor",
    kernel=_segment_reduce_kernel, meta=_segment_reduce_meta,
    grads={"data": lambda grad, data, reduce, lengths, offsets, axis, initial, result:
               _segment_reduce_backward(grad, result, data, reduce, lengths=lengths, offsets=offsets, axis=axis,
                                        initial=initial),
           "lengths": None, "indices": None, "offsets": None},
    gradgrad=False, samples=_samples, torch="torch.segment_reduce",
    doc="Each segment of data along axis reduced (sum, mean, prod, max/amax, min/amin) from `initial`: the "
        "segments' lengths or offsets (one row per index of the dims before axis, axis their last dim).")
