"""Basic indexing: select, slice, narrow, their backward ops, and `basic_getitem`, which
turns a Python index (`x[0:2, :, 1]`, `x[None, ..., -1]`) into a chain of them as PyTorch's
applySlicing does — one node per index element: SelectBackward0 for an int,
SliceBackward0 for a slice, UnsqueezeBackward0 for None; a full `:` inside a tuple
records nothing, and an index that changes nothing (`x[...]`, `x[:, :]`) records
AliasBackward0.

The backward of select/slice writes the gradient into zeros of the input's shape
(`select_backward`, `slice_backward`), ops with derivatives of their own, so
double backward works.
"""
from __future__ import annotations

import builtins
import operator

from ..._tensor import Tensor
from ...backends.meta import MetaArray
from ...shapes import normalize_dim
from ..registry import defop
from ..samples import SampleInput, make_arg
from .view import unsqueeze

_pyslice = builtins.slice


def _select_index(shape, dim, index):
    if not shape:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = normalize_dim(dim, len(shape))
    size = shape[d]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(shape)} at dimension {d}")
    return d, index % size


def _select_kernel(xp, self, dim, index):
    d, i = _select_index(self.shape, dim, index)
    return self[(_pyslice(None),) * d + (i, Ellipsis)]     # `...`: a 0-d result stays a view, not a scalar


def _select_meta(self, dim, index):
    d, _ = _select_index(self.shape, dim, index)
    return MetaArray(self.shape[:d] + self.shape[d + 1:], self.dtype)


select = defop(
    "select(Tensor self, int dim, int index) -> Tensor",
    supports_complex=True, kernel=_select_kernel, meta=_select_meta, view=True,
    grads={"self": lambda grad, self_shape, dim, index: select_backward(grad, self_shape, dim, index)},
    samples=lambda op: [
        SampleInput("(3,4) 0,1", make_arg((3, 4), key=(op, 0)), 0, 1),
        SampleInput("(3,4) -1,-1", make_arg((3, 4), key=(op, 1)), -1, -1),
        SampleInput("(4,) ->0-d", make_arg((4,), key=(op, 2)), 0, 2),
        SampleInput("T (4,3) 1,0", make_arg((4, 3), key=(op, 3), transposed=True), 1, 0),
        SampleInput("(2,3,2) dim=1", make_arg((2, 3, 2), key=(op, 4)), dim=1, index=2)],
    torch="torch.select")


def _slice_range(shape, dim, start, end, step):
    """The normalized (dim, start, stop, step, length), clamped as PyTorch's slice clamps."""
    if not shape:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    d = normalize_dim(dim, len(shape))
    # NOTE: for a positive step, Python's slice.indices wraps and clamps exactly as at::slice does
    lo, hi, step = _pyslice(start, end, step).indices(shape[d])
    hi = max(hi, lo)
    return d, lo, hi, step, (hi - lo + step - 1) // step


def _slice_kernel(xp, self, dim, start, end, step):
    d, lo, hi, step, _ = _slice_range(self.shape, dim, start, end, step)
    return self[(_pyslice(None),) * d + (_pyslice(lo, hi, step),)]


def _slice_meta(self, dim, start, end, step):
    d, _, _, _, n = _slice_range(self.shape, dim, start, end, step)
    return MetaArray(self.shape[:d] + (n,) + self.shape[d + 1:], self.dtype)


def _slice_grad(grad, self_shape, dim, start, end, step):
    d, lo, hi, step, _ = _slice_range(self_shape, dim, start, end, step)
    return slice_backward(grad, self_shape, d, lo, hi, step)


slice = defop(  # noqa: A001 — PyTorch's name (aten::slice)
    "slice(Tensor self, int dim=0, int? start=None, int? end=None, int step=1) -> Tensor",
    supports_complex=True, kernel=_slice_kernel, meta=_slice_meta, view=True,
    grads={"self": _slice_grad},
    samples=lambda op: [
        SampleInput("(5,3) 0:3", make_arg((5, 3), key=(op, 0)), 0, 0, 3),
        SampleInput("(5,3) 1::2", make_arg((5, 3), key=(op, 1)), 0, 1, None, 2),
        SampleInput("(4,5) dim=-1 -3:-1", make_arg((4, 5), key=(op, 2)), -1, -3, -1),
        SampleInput("(4,) clamped -10:10:3", make_arg((4,), key=(op, 3)), 0, -10, 10, 3),
        SampleInput("(4,2) empty 3:1", make_arg((4, 2), key=(op, 4)), 0, 3, 1),
        SampleInput("T (4,3) dim=1 ::2", make_arg((4, 3), key=(op, 5), transposed=True), dim=1, step=2)],
    torch="lambda x, dim=0, start=None, end=None, step=1: torch.ops.aten.slice(x, dim, start, end, step)")


def _zeros_with(xp, grad, sizes, index):
    out = xp.zeros(tuple(sizes), dtype=grad.dtype)
    if grad.size:               # nothing to write (and dask's setitem refuses an empty value)
        out[index] = grad
    return out


def _backward_meta(grad_output, input_sizes, *rest):
    return MetaArray(input_sizes, grad_output.dtype)


def _select_backward_kernel(xp, grad_output, input_sizes, dim, index):
    d, i = _select_index(tuple(input_sizes), dim, index)
    return _zeros_with(xp, grad_output, input_sizes, (_pyslice(None),) * d + (i,))


select_backward = defop(
    "select_backward(Tensor grad_output, SymInt[] input_sizes, int dim, SymInt index) -> Tensor",
    supports_complex=True, kernel=_select_backward_kernel, meta=_backward_meta,
    grads={"grad_output": lambda grad, dim, index: select(grad, dim, index)},
    samples=lambda op: [
        SampleInput("(4,)->(3,4) dim 0", make_arg((4,), key=(op, 0)), [3, 4], 0, 1),
        SampleInput("()->(3,) dim -1", make_arg((), key=(op, 1)), [3], -1, -1),
        SampleInput("(2,2)->(2,3,2) dim 1", make_arg((2, 2), key=(op, 2)), [2, 3, 2], 1, 2)],
    torch="torch.ops.aten.select_backward")


def _slice_backward_kernel(xp, grad_output, input_sizes, dim, start, end, step):
    d = normalize_dim(dim, len(input_sizes))
    return _zeros_with(xp, grad_output, input_sizes, (_pyslice(None),) * d + (_pyslice(start, end, step),))


slice_backward = defop(
    "slice_backward(Tensor grad_output, SymInt[] input_sizes, int dim, SymInt start, SymInt end, SymInt step)"
    " -> Tensor",
    supports_complex=True, kernel=_slice_backward_kernel, meta=_backward_meta,
    grads={"grad_output": lambda grad, dim, start, end, step: slice(grad, dim, start, end, step)},
    samples=lambda op: [
        SampleInput("(2,3)->(5,3) 1:3", make_arg((2, 3), key=(op, 0)), [5, 3], 0, 1, 3, 1),
        SampleInput("(4,3)->(4,5) dim 1 0:5:2", make_arg((4, 3), key=(op, 1)), [4, 5], 1, 0, 5, 2)],
    torch="torch.ops.aten.slice_backward")


alias = defop(
    "alias(Tensor self) -> Tensor",
    supports_complex=True,
    kernel=lambda xp, self: self[...], meta=lambda self: MetaArray(self.shape, self.dtype), view=True,
    grads={"self": lambda grad: grad},
    samples=lambda op: [SampleInput("(2,3)", make_arg((2, 3), key=(op, 0))),
                        SampleInput("0-d", make_arg((), key=(op, 1)))],
    torch="torch.ops.aten.alias")


# ---- Python indexing -----------------------------------------------------------------------

def _as_int(item):
    if isinstance(item, bool) or isinstance(item, Tensor):
        return None
    try:
        return operator.index(item)
    except TypeError:
        return None


def _consumes_dim(item) -> bool:
    return item is not None and item is not Ellipsis


def basic_getitem(tensor, index):
    """`tensor[index]` for basic indexing (advanced_indexing.getitem is `x[index]` itself).

    `index` is what Python passes to `__getitem__`: an int (negative counts from the
    end), a `slice` with a positive step (start/stop as Python's, clamped), `None` (a new
    dimension of size 1), `...` (as many full slices as needed), or a tuple of these.
    The result is built from `select`, `slice`, `unsqueeze` and `alias`, so each index
    element is one backward node, as in PyTorch. With integer tensors, lists or bool
    masks among the elements, advanced_indexing.advanced_getitem applies the basic part
    (through this) and then one `_index` (IndexBackward0). More than one `...` raises an
    IndexError.
    """
    items = index if isinstance(index, tuple) else (index,)
    for item in items:
        if not (item is None or item is Ellipsis or isinstance(item, _pyslice) or _as_int(item) is not None):
            raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are "
                             f"valid indices (got {type(item).__name__})")
    if sum(item is Ellipsis for item in items) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    ndim = tensor.ndim
    specified = sum(_consumes_dim(item) for item in items)
    if specified > ndim:
        if ndim == 0 and _as_int(items[0]) is not None:
            raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                             "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    result, dim = tensor, 0
    for position, item in enumerate(items):
        if item is None:
            result = unsqueeze(result, dim)
            dim += 1
        elif item is Ellipsis:
            dim += ndim - specified
        elif isinstance(item, _pyslice):
            step = 1 if item.step is None else _slice_part(item.step)
            if step == 0:
                raise ValueError("slice step cannot be zero")
            if step < 0:
                raise ValueError("step must be greater than zero")
            start, stop = _slice_part(item.start), _slice_part(item.stop)
            size = result.shape[dim]
            lo, hi, _ = _pyslice(start, stop, step).indices(size)
            # NOTE: inside a tuple a slice that keeps everything records nothing (PyTorch's slice
            # optimization); a bare `x[:]` always records SliceBackward0, as PyTorch's fast path does
            if items is not index or not (lo == 0 and hi >= size and step == 1):
                result = slice(result, dim, start, stop, step)
            dim += 1
        else:
            i = _as_int(item)
            size = result.shape[dim]
            if not -size <= i < size:
                # NOTE: PyTorch names the position in the index tuple (its `real_dim`), not the dim
                raise IndexError(f"index {i} is out of bounds for dimension {position} with size {size}")
            result = select(result, dim, i)
    if result is tensor:
        result = alias(tensor)      # `x[...]`, `x[:, :]`: a new tensor, as PyTorch's shallow copy
    return result


def _slice_part(value):
    if value is None:
        return None
    i = _as_int(value)
    if i is None:
        raise TypeError("slice indices must be integers or None or have an __index__ method")
    return i


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
    return slice(self, d, start, start + length, 1)


narrow = defop(
    "narrow(Tensor self, int dim, SymInt start, SymInt length) -> Tensor",
    composite=_narrow,
    samples=lambda op: [SampleInput("(4,3) 0,1,2", make_arg((4, 3), key=(op, 0)), 0, 1, 2),
                        SampleInput("(4,3) -1,-2,2", make_arg((4, 3), key=(op, 1)), -1, -2, 2),
                        SampleInput("T (3,4) 1,0,0", make_arg((3, 4), key=(op, 2), transposed=True), 1, 0, 0)],
    torch="torch.narrow",
    doc="The view self[..., start:start+length, ...] along dim (SliceBackward0).")
