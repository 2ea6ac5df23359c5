"""ONNX's sequence ops, as lists of values made at import.

agrad's graph is static, so a sequence is a list the importer keeps while it walks the model: its
length and each element's value are known there, and only the tensors read out of it (SequenceAt,
ConcatFromSequence) become lines. This is what torch's TorchScript exporter writes for list ops
(`torch.split`/`chunk`/`unbind` whose pieces are used as a list: SplitToSequence, then
ConcatFromSequence or SequenceAt). A position must be known at import (a constant), and a split's
sizes too where an element is read; semantics are onnx's (onnx/defs/sequence/defs.cc): positions
count from the end when negative, SequenceInsert appends and SequenceErase removes the last
element where no position is given.
"""
from __future__ import annotations

import numpy as np

from .import_table import Known, Refuse, Same, Sequence, _axis, _scalar, ints, lit, op


def _position(ctx, node, which: int, length: int, default: int, inserting: bool = False) -> int:
    """The position input `which` of `node` (or `default`), checked against a sequence of `length`:
    [-n, n-1], or [-n, n] where it inserts."""
    if len(node.input) <= which or not node.input[which]:
        return default
    given = int(_scalar(ctx.const(node.input[which])))
    last = length if inserting else length - 1
    if not -length <= given <= last:
        raise Refuse(f"position {given} is outside a sequence of {length} element{'s' * (length != 1)}")
    return given + length if given < 0 else given


def _read(items: Sequence, i: int) -> str:
    if items[i] is None:
        raise Refuse(items.why)
    return items[i]


@op("SequenceEmpty")
def _sequence_empty(ctx, node, a):
    return Sequence()


@op("SequenceConstruct")
def _sequence_construct(ctx, node, a):
    for name in node.input:
        ctx.ref(name)                   # (a tensor, not a sequence)
    return Sequence(ctx.pinned(name) for name in node.input)


@op("SequenceInsert")
def _sequence_insert(ctx, node, a):
    items = Sequence(ctx.sequence(node.input[0]), ctx.sequence(node.input[0]).why)
    ctx.ref(node.input[1])
    items.insert(_position(ctx, node, 2, len(items), len(items), inserting=True), ctx.pinned(node.input[1]))
    return items


@op("SequenceErase")
def _sequence_erase(ctx, node, a):
    items = Sequence(ctx.sequence(node.input[0]), ctx.sequence(node.input[0]).why)
    if not items:
        raise Refuse("SequenceErase of an empty sequence")
    del items[_position(ctx, node, 1, len(items), len(items) - 1)]
    return items


@op("SequenceAt")
def _sequence_at(ctx, node, a):
    items = ctx.sequence(node.input[0])
    if not items:
        raise Refuse("SequenceAt of an empty sequence")
    return Same(_read(items, _position(ctx, node, 1, len(items), 0)))


@op("SequenceLength")
def _sequence_length(ctx, node, a):
    return Known(np.array(len(ctx.sequence(node.input[0])), dtype=np.int64))


@op("ConcatFromSequence")
def _concat_from_sequence(ctx, node, a):
    items = ctx.sequence(node.input[0])
    if not items:
        raise Refuse("ConcatFromSequence of an empty sequence")
    names = [_read(items, i) for i in range(len(items))]
    rank = len(ctx.shape(names[0]))
    new_axis = a.get("new_axis", 0)
    axis = a["axis"]
    if not -rank - new_axis <= axis < rank + new_axis:
        raise Refuse(f"axis {axis} of a ConcatFromSequence of rank-{rank} tensors"
                     + (" (new_axis=1)" if new_axis else ""))
    axis = _axis(axis, rank + new_axis)
    # its shape, which ONNX's inference leaves unknown where the elements' are not all the same
    shapes = [list(ctx.shape(n)) for n in names]
    shape = shapes[0][:axis] + [len(names)] + shapes[0][axis:] if new_axis else \
        shapes[0][:axis] + [sum(s[axis] for s in shapes)] + shapes[0][axis + 1:]
    ctx.declare(node.output[0], shape, ctx.dtype(names[0]))
    return f"{'stack' if new_axis else 'cat'}([{', '.join(ctx.ref(n) for n in names)}], {axis})"


@op("SplitToSequence")
def _split_to_sequence(ctx, node, a):
    x = node.input[0]
    shape = list(ctx.shape(x))
    if not shape:
        raise Refuse("SplitToSequence of a 0-d tensor")
    axis = _axis(a.get("axis", 0), len(shape))
    size = shape[axis]
    given = node.input[1] if len(node.input) > 1 and node.input[1] else None
    if given is not None and not ctx.is_const(given):
        pieces = ctx.shape(given)
        if len(pieces) != 1:           # a scalar chunk size from the data: the length itself is unknown
            raise Refuse("'split' must be known at import time where it is a scalar (the sequence's length "
                         "depends on it), but it is computed from the data")
        return Sequence([None] * pieces[0], why=f"the sizes of the SplitToSequence making this sequence are "
                                                f"computed from the data ('{given}'); only its length is known")
    split = np.asarray(ctx.const(given)) if given is not None else np.array(1)
    # keepdims=0 drops the axis where split is absent or a scalar, as onnxruntime reads it (torch's exporter
    # writes unbind as a scalar split of 1 with keepdims=0); the spec's reference ignores it for any given split
    keep = a.get("keepdims", 1) or split.ndim == 1
    if split.ndim == 0:
        chunk = int(split)
        if chunk <= 0 or not keep and chunk != 1:
            raise Refuse(f"a SplitToSequence chunk size of {chunk}" + ("" if keep else " with keepdims=0"))
        sizes = [chunk] * (size // chunk) + ([size % chunk] if size % chunk else [])
    else:
        sizes = ints(split)
        if any(s < 0 for s in sizes) or sum(sizes) != size:
            raise Refuse(f"split sizes {sizes} for a dimension of {size}")
    if not sizes:
        return Sequence()
    grad = ctx.carries_grad(x) and ctx.dtype(x).kind == "f"
    if keep:
        pieces = ctx.step(f"split_with_sizes({ctx.ref(x)}, {lit(sizes)}, {axis})", "pieces")
        shapes = [shape[:axis] + [s] + shape[axis + 1:] for s in sizes]
    else:
        pieces = ctx.step(f"unbind({ctx.ref(x)}, {axis})", "pieces")
        shapes = [shape[:axis] + shape[axis + 1:]] * size
    return Sequence([ctx.element(f"{pieces}[{i}]", s, ctx.dtype(x), grad) for i, s in enumerate(shapes)])
