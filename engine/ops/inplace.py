"""The pure ops that in-place variants and `x[idx] = v` are built from — `clone`,
`contiguous`, `fill`, `copy`, `masked_fill`, `narrow`, `index_put` — the in-place methods
over them (`zero_`, `fill_`, `copy_`, `index_put_`, and the `<op>_` variants, bound by
_tensor_methods.py), and `setitem`. Recording an in-place op (checks, the version counter,
rebasing a view's base onto CopySlices) is autograd's: engine/autograd/inplace.py.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from .._tensor import Tensor, filled
from ..autograd.inplace import apply_inplace
from ..backends.meta import MetaArray
from ..creation import zeros_like
from ..shapes import broadcast_shapes, normalize_dim
from .indexing import slice as slice_op
from .indexing_advanced import (
    _index,
    _index_key,
    _index_meta,
    advanced_parts,
    getitem,
    is_advanced,
)
from .pointwise import where
from .reduction import sum as sum_op
from .registry import defop
from .samples import SampleInput, make_arg

__all__ = ["setitem"]


# ---- the pure ops -----------------------------------------------------------------------------

def _clone_kernel(xp, self, memory_format):
    if memory_format not in (None, "preserve_format", "contiguous_format"):
        raise RuntimeError(f"unsupported memory format {memory_format!r}: 'preserve_format' or "
                           f"'contiguous_format'")
    return xp.array(self, copy=True, order="C" if memory_format == "contiguous_format" else "K")


clone = defop(
    "clone(Tensor self, *, str? memory_format=None) -> Tensor",
    kernel=_clone_kernel, meta=lambda self, memory_format: MetaArray(self.shape, self.dtype),
    grads={"self": lambda grad: grad},
    samples=lambda op: [SampleInput("(2,3)", make_arg((2, 3), key=(op, 0))),
                        SampleInput("0-d", make_arg((), key=(op, 1))),
                        SampleInput("T (3,2) contiguous_format", make_arg((3, 2), key=(op, 2), transposed=True),
                                    memory_format="contiguous_format")],
    torch="lambda x, memory_format=None: x.clone(memory_format=torch.contiguous_format) "
          "if memory_format == 'contiguous_format' else x.clone()",
    doc="A copy with its own memory (the same strides unless memory_format='contiguous_format').")


def _contiguous(self):
    flags = getattr(self._data, "flags", None)
    if flags is None or flags.c_contiguous:
        return self            # NOTE: PyTorch returns the tensor itself: no node is recorded
    return clone(self, memory_format="contiguous_format")


contiguous = defop(
    "contiguous(Tensor self) -> Tensor",
    composite=_contiguous,
    samples=lambda op: [SampleInput("(2,3) already", make_arg((2, 3), key=(op, 0))),
                        SampleInput("T (3,2)", make_arg((3, 2), key=(op, 1), transposed=True))],
    torch="lambda x: x.contiguous()",
    doc="self when its memory is already C-contiguous, else a contiguous clone (CloneBackward0).")


def _narrow(self, dim, start, length):
    if self.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    d = normalize_dim(dim, self.ndim)
    size = self.shape[d]
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], but got {start})")
    start %= size if size else 1
    if length < 0 or start > size - length:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    return slice_op(self, d, start, start + length, 1)


narrow = defop(
    "narrow(Tensor self, int dim, SymInt start, SymInt length) -> Tensor",
    composite=_narrow,
    samples=lambda op: [SampleInput("(4,3) 0,1,2", make_arg((4, 3), key=(op, 0)), 0, 1, 2),
                        SampleInput("(4,3) -1,-2,2", make_arg((4, 3), key=(op, 1)), -1, -2, 2),
                        SampleInput("T (3,4) 1,0,0", make_arg((3, 4), key=(op, 2), transposed=True), 1, 0, 0)],
    torch="torch.narrow",
    doc="The view self[..., start:start+length, ...] along dim (SliceBackward0).")


def _fill_kernel(xp, self, value):
    return xp.full(self.shape, value, dtype=self.dtype)


fill = defop(
    "fill(Tensor self, Scalar value) -> Tensor",
    kernel=_fill_kernel, meta=lambda self, value: MetaArray(self.shape, self.dtype),
    grads={"self": lambda grad: zeros_like(grad)},
    samples=lambda op: [SampleInput("(2,3) 2.5", make_arg((2, 3), key=(op, 0)), 2.5),
                        SampleInput("0-d -1", make_arg((), key=(op, 1)), -1)],
    torch="torch.fill",
    doc="A tensor of self's shape and dtype filled with value (the pure form of fill_).")


def _copy_kernel(xp, self, src):
    return xp.array(xp.broadcast_to(src.astype(self.dtype, copy=False), self.shape), copy=True)


def _copy_meta(self, src):
    broadcast_shapes(self.shape, src.shape)
    if broadcast_shapes(self.shape, src.shape) != tuple(self.shape):
        raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the broadcast shape "
                           f"{list(broadcast_shapes(self.shape, src.shape))}")
    return MetaArray(self.shape, self.dtype)


copy = defop(
    "copy(Tensor self, Tensor src, bool non_blocking=False) -> Tensor",
    kernel=lambda xp, self, src, non_blocking: _copy_kernel(xp, self, src),
    meta=lambda self, src, non_blocking: _copy_meta(self, src),
    # NOTE: src's gradient is grad itself: the engine casts it to src's dtype and sums out broadcast
    # dimensions, so nothing of src is saved (an in-place write into src's memory stays legal)
    grads={"self": lambda grad: zeros_like(grad), "src": lambda grad: grad},
    samples=lambda op: [SampleInput("(2,3) <- (3,)", make_arg((2, 3), key=(op, 0)), make_arg((3,), key=(op, 1))),
                        SampleInput("(2,2) <- (2,2)", make_arg((2, 2), key=(op, 2)), make_arg((2, 2), key=(op, 3)))],
    backward_name="CopyBackwards",
    torch="lambda self, src, non_blocking=False: self.clone().copy_(src)",
    doc="src cast to self's dtype and broadcast to its shape (the pure form of copy_).")


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
    return xp.where(mask, xp.asarray(value, dtype=self.dtype), self)


def _is_number(value) -> bool:
    return not isinstance(value, Tensor)


masked_fill = defop(
    "masked_fill(Tensor self, Tensor mask, Tensor value) -> Tensor",
    kernel=_masked_fill_kernel, meta=_masked_fill_meta, wraps_numbers=True,
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
    from ..creation import tensor
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
    kernel=_index_put_kernel, meta=_index_put_meta,
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
    from ..creation import tensor
    return tensor(np.asarray(values), dtype=dtypes.int64)


# ---- the in-place methods -------------------------------------------------------------------------

def _method(name, op, backward_name=None):
    """The in-place variant `name` of `op` (a function of the op library), as a Tensor method."""
    def method(self, *args, **kwargs):
        return apply_inplace(self, op, args, kwargs, backward_name)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"In-place {op.__name__}: the result is written into self (see agrad.{op.__name__})."
    return method


# PyTorch's in-place variants of the ops agrad has (bound by _tensor_methods when the op exists)
_UNARY = ("abs", "neg", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "sin", "cos",
          "tan", "sinh", "cosh", "tanh", "asin", "acos", "atan", "sigmoid", "relu", "sign", "erf", "erfc", "erfinv",
          "reciprocal", "square", "floor", "ceil", "round", "trunc", "frac", "lgamma", "digamma", "clamp",
          "clamp_min", "clamp_max", "leaky_relu", "silu", "elu", "hardtanh", "nan_to_num", "logit")
_BINARY = ("add", "sub", "mul", "div", "pow", "fmod", "remainder", "atan2", "hypot", "lerp", "addcmul", "addcdiv",
           "masked_fill", "index_put", "index_add", "scatter", "scatter_add", "scatter_reduce", "true_divide",
           "multiply", "subtract", "xlogy", "copysign", "float_power")


def _zero_(self):
    return apply_inplace(self, fill, (0,), None, "ZeroBackward0")


def _fill_(self, value):
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                               f"{value.ndim} dimensions.")
        return apply_inplace(self, copy, (value,), None, "FillBackward3")
    return apply_inplace(self, fill, (value,), None, "FillBackward2")


def _copy_(self, src, non_blocking=False):
    if not isinstance(src, Tensor):
        raise TypeError(f"copy_(): argument 'src' (position 1) must be Tensor, not {type(src).__name__}")
    if src._device is not self._device or src._data.dtype != self._data.dtype:
        src = src.to(device=self._device)
    return apply_inplace(self, copy, (src, non_blocking), None, "CopyBackwards")


def _index_put_(self, indices, values, accumulate=False, dims=None):
    if isinstance(values, (int, float, bool)):
        from ..creation import tensor
        values = tensor(values, dtype=self.dtype, device=self.device)
    return apply_inplace(self, index_put, (list(indices), values, accumulate, dims), None, "IndexPutBackward0")


# ---- x[index] = value ------------------------------------------------------------------------------

def setitem(self: Tensor, index, value) -> None:
    """`self[index] = value`, as PyTorch: the indexed part is a view (basic indices) written with
    copy_/fill_ (so the base's grad_fn becomes CopySlices); with integer tensors, lists or bool masks
    among the indices, the basic part is applied first and index_put_ writes the rest."""
    items = index if isinstance(index, tuple) else (index,)
    if any(is_advanced(item) for item in items):
        target, indices, dims = advanced_parts(self, index)
        if not isinstance(value, Tensor):
            from ..creation import tensor
            value = tensor(value, dtype=self.dtype, device=self.device)
        elif value._device is not self._device:
            value = value.to(device=self._device)
        target.index_put_(indices, value, False, dims)
        return
    target = getitem(self, index)
    if isinstance(value, Tensor):
        target.copy_(value)
    elif isinstance(value, (int, float, bool, np.generic)):
        target.fill_(value)
    else:                          # a nested list or an array: as torch, a tensor of self's dtype
        from ..creation import tensor
        target.copy_(tensor(value, dtype=self.dtype, device=self.device))
