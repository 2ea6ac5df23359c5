"""pad (PyTorch's F.pad: constant, reflect, replicate, circular) and its backward op.

Every mode reads the input through one index map per padded dim (output position ->
input position: shifted, then reflected, clamped or wrapped; out of range for the
constant's fill), so the forward is one gather over the last dims and the backward,
its adjoint, adds each dim's gradients into the positions they were read from (one
`bincount` per padded dim). pad and pad_backward are each other's adjoints,
so their formulas call each other and double backward needs nothing more.
"""
from __future__ import annotations

import numpy as np

from ...backends.meta import MetaArray
from ...errors import ShapeError
from ...messages import sizes
from .._common import weighted_bincount
from ..registry import defop
from ..samples import SampleInput, grad_output_samples, make_arg

_MODES = ("constant", "reflect", "replicate", "circular")
_NAMES = {"reflect": "ReflectionPad{}DBackward0", "replicate": "ReplicationPad{}DBackward0"}
_BACKWARD_NAMES = (["ConstantPadNdBackward0", "CopySlices"] +
                   [_NAMES[m].format(k) for m in ("reflect", "replicate") for k in (1, 2, 3)])


def _overload(input, pad, mode="constant", value=None):
    if mode == "constant":
        return 0
    if mode == "circular":
        return 1
    return _BACKWARD_NAMES.index(_NAMES[mode].format(len(pad) // 2))


# pad_backward's node: PyTorch's constant pad is its own backward (with negated pads); the others have
# ReflectionPad2DBackwardBackward0 …; circular's backward is a composition in PyTorch (no name of its own)
_DOUBLE_NAMES = ["ConstantPadNdBackward0", "PadBackwardBackward0"] + [n.replace("Backward0", "BackwardBackward0")
                                                                      for n in _BACKWARD_NAMES[2:]]


def _geometry(shape, pad, mode, value):
    """Per padded dim (last dims first in `pad`, as PyTorch): (axis, before, after); and the output shape."""
    pad = tuple(pad)
    ndim = len(shape)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    k = len(pad) // 2
    if k > ndim:
        raise ShapeError(f"Padding length should be less than or equal to two times the input dimension but got "
                           f"padding length {len(pad)} and input of dimension {ndim}")
    if mode not in _MODES:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if mode != "constant":
        if value is not None:
            raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
        if k not in (1, 2, 3) or ndim not in (k + 1, k + 2):
            raise NotImplementedError(
                f"Padding size {len(pad)} is not supported for {ndim}D input tensor.\nSupported combinations for "
                f"non-constant padding:\n  - 2D or 3D input: padding size = 2 (pads last dimension)\n  - 3D or 4D "
                f"input: padding size = 4 (pads last 2 dimensions)\n  - 4D or 5D input: padding size = 6 (pads "
                f"last 3 dimensions)")
    dims = []
    out = list(shape)
    for i in range(k):
        axis = ndim - 1 - i
        before, after = pad[2 * i], pad[2 * i + 1]
        n = shape[axis]
        if mode == "reflect" and (before >= n or after >= n):
            raise ShapeError(f"Argument #{4 + 2 * i}: Padding size should be less than the corresponding input "
                               f"dimension, but got: padding ({before}, {after}) at dimension {axis} of input "
                               f"{sizes(shape)}")
        if mode == "circular" and (before > n or after > n):
            raise RuntimeError("Padding value causes wrapping around more than once.")
        out[axis] = n + before + after
        dims.append((axis, before, after))
    if mode in ("reflect", "replicate") and all(out[axis] < 1 for axis, _, _ in dims):
        raise RuntimeError(_too_small(shape[ndim - k:], out[ndim - k:], mode))
    for axis, before, after in dims:
        if out[axis] < 0:
            raise RuntimeError("Negative padding value is resulting in an empty dimension" if mode == "circular"
                               else "narrow(): length must be non-negative.")
        if mode == "circular" and out[axis] and shape[axis] - max(-before, 0) - max(-after, 0) <= 0:
            # NOTE: PyTorch wraps around the empty cropped input and returns uninitialised memory here
            raise RuntimeError("Padding value causes wrapping around an empty dimension.")
    return dims, tuple(out)


def _too_small(size, out, mode):
    """PyTorch's message when every padded dim of a reflect/replicate pad is cropped to nothing."""
    if len(size) == 1:
        return f"input (W: {size[0]}) is too small. Calculated output W: {out[0]}"
    if len(size) == 2:
        space = " " if mode == "replicate" else ""
        return (f"input (H: {size[0]}, W: {size[1]}{space}) is too small. Calculated output H: {out[0]} "
                f"W: {out[1]}")
    return (f"input (D: {size[0]} H: {size[1]}, W: {size[2]}) is too small. Calculated output D: {out[0]} "
            f"H: {out[1]} W: {out[2]}")


def _source(xp, n, before, after, size, mode):
    """For each of `size` output positions, the input position it reads (constant: maybe out of range)."""
    if mode == "circular":      # NOTE: PyTorch crops first (negative pads), then wraps around what is left
        start = max(-before, 0)
        return (xp.arange(size) - max(before, 0)) % (n - start - max(-after, 0)) + start
    p = xp.arange(size) - before
    if mode == "reflect":
        p = xp.abs(p)
        return xp.where(p > n - 1, 2 * (n - 1) - p, p)
    if mode == "replicate":
        return xp.clip(p, 0, n - 1)
    return p


def _pad_meta(input, pad, mode, value):
    return MetaArray(_geometry(input.shape, pad, mode, value)[1], input.dtype)


def _pad_kernel(xp, input, pad, mode, value):
    dims, shape = _geometry(input.shape, pad, mode, value)
    if mode == "constant":
        out = xp.full(shape, 0 if value is None else value, dtype=input.dtype)
        src, dst = [slice(None)] * input.ndim, [slice(None)] * input.ndim
        for axis, before, after in dims:
            start, stop = max(-before, 0), input.shape[axis] - max(-after, 0)
            src[axis] = slice(start, max(stop, start))
            dst[axis] = slice(max(before, 0), max(before, 0) + max(stop - start, 0))
        out[tuple(dst)] = input[tuple(src)]
        return out
    index = [slice(None)] * (input.ndim - len(dims))
    if not hasattr(xp, "ix_"):      # no orthogonal indexing by several arrays (dask): one axis at a time
        out = input
        for axis, before, after in dims:
            out = xp.take(out, _source(xp, input.shape[axis], before, after, shape[axis], mode), axis=axis)
        return out
    maps = [_source(xp, input.shape[axis], before, after, shape[axis], mode) for axis, before, after in reversed(dims)]
    return input[tuple(index) + xp.ix_(*maps)]


def _pad_backward_meta(grad_output, input_size, pad, mode):
    dims, shape = _geometry(tuple(input_size), pad, mode, None)
    if tuple(grad_output.shape) != shape:
        raise ShapeError(f"Expected grad_output of size {sizes(shape)}, but got grad_output of size "
                           f"{sizes(grad_output.shape)}")
    return MetaArray(tuple(input_size), grad_output.dtype)


def _pad_backward_kernel(xp, grad_output, input_size, pad, mode):
    _pad_backward_meta(grad_output, input_size, pad, mode)
    dims, shape = _geometry(tuple(input_size), pad, mode, None)
    g = grad_output
    for axis, before, after in dims:
        n = input_size[axis]
        g = _add_along(xp, g, axis, _source(xp, n, before, after, shape[axis], mode), n)
    return g


def _add_along(xp, values, axis, index, n):
    """Along `axis`: out[i] = the sum of values[j] over j with index[j] == i, out of `n`; indices out of
    range are dropped. One bincount over all the other dims at once."""
    if n == 0:
        return xp.zeros(values.shape[:axis] + (0,) + values.shape[axis + 1:], dtype=values.dtype)
    # NOTE: positions out of range add zeros rather than being masked out: a boolean mask gives
    # an array whose length depends on the values, which a lazy array (dask) does not know
    keep = (index >= 0) & (index < n)
    v = xp.where(keep, xp.moveaxis(values, axis, -1), xp.zeros((), dtype=values.dtype))
    index = xp.clip(index, 0, n - 1)
    lead = v.shape[:-1]
    rows = int(np.prod(lead))
    flat = (xp.arange(rows)[:, None] * n + index[None, :]).ravel()
    out = weighted_bincount(xp, flat, v.reshape(rows, index.shape[0]).ravel(), rows * n)
    return xp.moveaxis(out.reshape(lead + (n,)).astype(values.dtype, copy=False), -1, axis)


def _pad_samples(op):
    def arg(shape, k, **kw):
        return make_arg(shape, key=(op, k), **kw)
    return [SampleInput("constant (1,2) on (2,3,4)", arg((2, 3, 4), 0), [1, 2]),
            SampleInput("constant value, 3 dims, crop", arg((2, 3, 4), 1), [1, -1, 0, 2, 1, 0], value=0.5),
            SampleInput("constant 0-d pad", arg((3,), 2), []),
            SampleInput("reflect 1-D (2,3,5)", arg((2, 3, 5), 3), [2, 4], "reflect"),
            SampleInput("reflect 2-D (1,2,4,5)T", arg((1, 2, 4, 5), 4, transposed=True), [1, 2, 3, 0], "reflect"),
            SampleInput("reflect 3-D unbatched", arg((2, 3, 3, 4), 5), [1, 1, 2, 0, 0, 2], "reflect"),
            SampleInput("replicate 2-D (2,3,3)", arg((2, 3, 3), 6), [2, 1, 0, 3], "replicate"),
            SampleInput("replicate 1-D, negative", arg((2, 2, 5), 7), [-1, 3], "replicate"),
            SampleInput("circular 2-D (1,2,3,4)", arg((1, 2, 3, 4), 8), [4, 1, 3, 2], "circular"),
            SampleInput("circular 1-D negative", arg((2, 5), 9), [-1, 2], "circular")]


pad_backward = defop(
    "pad_backward(Tensor grad_output, int[] input_size, int[] pad, str mode) -> Tensor",
    supports_complex=True, kernel=_pad_backward_kernel, meta=_pad_backward_meta,
    grads={"grad_output": lambda grad, pad, mode: _pad_op(grad, pad, mode)},
    backward_name=_DOUBLE_NAMES, overload=lambda grad_output, input_size, pad, mode: _overload(None, pad, mode),
    samples=lambda op: grad_output_samples(op, pad, _pad_samples(op), lambda s: (
        (list(s.args[0].shape), s.args[1], s.args[2] if len(s.args) > 2 else "constant"), {})),
    torch="lambda g, size, pad, mode: (lambda x: torch.autograd.grad(torch.nn.functional.pad(x, pad, mode), x, g, "
          "create_graph=True)[0])(torch.zeros(size, dtype=g.dtype, requires_grad=True))",
    doc="The gradient of pad: each output position's gradient added to the input position it reads.")

pad = defop(
    "pad(Tensor input, int[] pad, str mode=\"constant\", float? value=None) -> Tensor",
    supports_complex=True, kernel=_pad_kernel, meta=_pad_meta,
    grads={"input": lambda grad, input_shape, pad, mode: pad_backward(grad, input_shape, pad, mode)},
    backward_name=_BACKWARD_NAMES, overload=_overload, samples=_pad_samples, torch="torch.nn.functional.pad",
    doc="Pads the last len(pad) // 2 dims (pad lists (before, after) from the last dim back): 'constant' with "
        "value (default 0; negative pads crop), 'reflect' (mirrored, edge not repeated), 'replicate' (edge "
        "repeated) or 'circular' (wrapped); the non-constant modes pad 1 to 3 dims of a batched or unbatched "
        "input.")

_pad_op = pad       # the formula of pad_backward names its int[] argument `pad` too


constant_pad_nd = defop(
    "constant_pad_nd(Tensor self, int[] pad, Scalar value=0) -> Tensor",
    # ATen's constant_pad_nd is what F.pad's constant mode runs: the same op here (ConstantPadNdBackward0)
    composite=lambda self, pad, value: _pad_op(self, pad, "constant", float(value)),
    samples=lambda op: [
        SampleInput("(2,3) last dim", make_arg((2, 3), key=(op, 0)), [1, 2]),
        SampleInput("(2,3) crop and pad, value", make_arg((2, 3), key=(op, 1)), [1, 2, -1, 0], 2.5),
        SampleInput("(2,2,2) three dims", make_arg((2, 2, 2), key=(op, 2)), [0, 1, 1, 0, 2, 1], -1)],
    torch="torch.constant_pad_nd",
    doc="self padded with value on the last len(pad) // 2 dims ((before, after) from the last dim back; "
        "negative pads crop).")
