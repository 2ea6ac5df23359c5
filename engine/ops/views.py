"""Views that add or drop size-1 dimensions: squeeze, unsqueeze, and flatten
(composite over reshape, as PyTorch's flatten is); diagonal and unfold, strided views."""
from __future__ import annotations

import math

from ..backends.meta import MetaArray
from ..shapes import normalize_dim
from .registry import defop
from .samples import SampleInput, make_arg
from .shape import reshape


def _squeeze_dims(dim, ndim) -> tuple:
    if dim is None:
        return tuple(range(ndim))
    out = tuple(normalize_dim(d, ndim) for d in dim)
    seen = set()
    for d in out:
        if d in seen:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        seen.add(d)
    return out


def _squeezed_shape(shape, dim) -> tuple:
    dims = _squeeze_dims(dim, len(shape))
    return tuple(s for i, s in enumerate(shape) if not (i in dims and s == 1))


def _squeeze_overload(self, dim):
    # PyTorch's squeeze(), squeeze.dim and squeeze.dims. NOTE: the dispatcher turns an int
    # `dim` into a 1-element list, so `squeeze(x, [d])` is named as `squeeze(x, d)` is.
    if dim is None:
        return 0
    return 1 if len(dim) == 1 else 2


squeeze = defop(
    "squeeze(Tensor self, int[]? dim=None) -> Tensor",
    kernel=lambda xp, self, dim: xp.reshape(self, _squeezed_shape(self.shape, dim)), view=True,
    meta=lambda self, dim: MetaArray(_squeezed_shape(self.shape, dim), self.dtype),
    grads={"self": lambda grad, self_shape: reshape(grad, self_shape)},
    backward_name=("SqueezeBackward0", "SqueezeBackward1", "SqueezeBackward2"), overload=_squeeze_overload,
    samples=lambda op: [
        SampleInput("(1,3,1,2) all", make_arg((1, 3, 1, 2), key=(op, 0))),
        SampleInput("(1,3,1,2) dim=-2", make_arg((1, 3, 1, 2), key=(op, 1)), -2),
        SampleInput("(1,3,1,2) dim=1 (not 1: no-op)", make_arg((1, 3, 1, 2), key=(op, 2)), 1),
        SampleInput("(1,3,1,2) dims=[0,2,3]", make_arg((1, 3, 1, 2), key=(op, 3)), [0, 2, 3]),
        SampleInput("0-d dim=0", make_arg((), key=(op, 4)), 0),
        SampleInput("(1,1) all", make_arg((1, 1), key=(op, 5))),
        SampleInput("T (3,1)", make_arg((3, 1), key=(op, 6), transposed=True), dim=1)],
    torch="lambda x, dim=None: torch.squeeze(x) if dim is None else torch.squeeze(x, dim)")


def _unsqueezed_shape(shape, dim) -> tuple:
    d = normalize_dim(dim, len(shape) + 1)
    return tuple(shape[:d]) + (1,) + tuple(shape[d:])


unsqueeze = defop(
    "unsqueeze(Tensor self, int dim) -> Tensor",
    kernel=lambda xp, self, dim: xp.reshape(self, _unsqueezed_shape(self.shape, dim)), view=True,
    meta=lambda self, dim: MetaArray(_unsqueezed_shape(self.shape, dim), self.dtype),
    grads={"self": lambda grad, dim: squeeze(grad, dim)},
    samples=lambda op: [
        SampleInput("0-d dim=0", make_arg((), key=(op, 0)), 0),
        SampleInput("(2,3) dim=1", make_arg((2, 3), key=(op, 1)), 1),
        SampleInput("(2,3) dim=-1", make_arg((2, 3), key=(op, 2)), -1),
        SampleInput("(2,3) dim=2 (append)", make_arg((2, 3), key=(op, 3)), 2),
        SampleInput("T (3,2) dim=0", make_arg((3, 2), key=(op, 4), transposed=True), dim=0)],
    torch="torch.unsqueeze")


def _flatten(self, start_dim, end_dim):
    ndim = self.ndim
    if ndim == 0:
        return reshape(self, [1])
    start, end = normalize_dim(start_dim, ndim), normalize_dim(end_dim, ndim)
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if start == end:
        return self            # NOTE: PyTorch returns the input itself here: no node is recorded
    shape = list(self.shape)
    return reshape(self, shape[:start] + [math.prod(shape[start:end + 1])] + shape[end + 1:])


flatten = defop(
    "flatten(Tensor self, int start_dim=0, int end_dim=-1) -> Tensor",
    composite=_flatten,
    samples=lambda op: [
        SampleInput("0-d", make_arg((), key=(op, 0))),
        SampleInput("(2,3,4) all", make_arg((2, 3, 4), key=(op, 1))),
        SampleInput("(2,3,4) 1..-1", make_arg((2, 3, 4), key=(op, 2)), 1),
        SampleInput("(2,3,4,2) 1..2", make_arg((2, 3, 4, 2), key=(op, 3)), start_dim=1, end_dim=2),
        SampleInput("(2,3) 1..1 (identity)", make_arg((2, 3), key=(op, 4)), 1, 1),
        SampleInput("T (4,3)", make_arg((4, 3), key=(op, 5), transposed=True))],
    torch="torch.flatten")


def _diagonal_plan(shape, offset, dim1, dim2):
    ndim = len(shape)
    if ndim < 2:
        raise RuntimeError(f"diagonal dimensions requires ndim larger than 1, but got ndim {ndim}"
                           if ndim else "diagonal(): input must be at least 2-dimensional")
    d1, d2 = normalize_dim(dim1, ndim), normalize_dim(dim2, ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    n = min(shape[d1], shape[d2] - offset) if offset >= 0 else min(shape[d1] + offset, shape[d2])
    rest = [i for i in range(ndim) if i not in (d1, d2)]
    return d1, d2, max(n, 0), rest


def _diagonal_view(xp, self, offset, dim1, dim2):
    """The diagonal as a writable strided view of `self` (NumPy's own diagonal() is read-only)."""
    d1, d2, n, rest = _diagonal_plan(self.shape, offset, dim1, dim2)
    start = [slice(None)] * self.ndim
    if n:
        start[d2 if offset >= 0 else d1] = slice(abs(offset), None)
    corner = self[tuple(start)]
    strides = corner.strides
    return xp.lib.stride_tricks.as_strided(corner, tuple(self.shape[i] for i in rest) + (n,),
                                           tuple(strides[i] for i in rest) + (strides[d1] + strides[d2],))


def _diagonal_meta(self, offset, dim1, dim2):
    d1, d2, n, rest = _diagonal_plan(self.shape, offset, dim1, dim2)
    return MetaArray(tuple(self.shape[i] for i in rest) + (n,), self.dtype)


diagonal = defop(
    "diagonal(Tensor self, int offset=0, int dim1=0, int dim2=1) -> Tensor",
    kernel=_diagonal_view, meta=_diagonal_meta, view=True,
    grads={"self": lambda grad, self_shape, offset, dim1, dim2: diagonal_backward(grad, list(self_shape), offset,
                                                                                  dim1, dim2)},
    samples=lambda op: [
        SampleInput("(3,4)", make_arg((3, 4), key=(op, 0))),
        SampleInput("(3,4) offset 1", make_arg((3, 4), key=(op, 1)), 1),
        SampleInput("(3,4) offset -2", make_arg((3, 4), key=(op, 2)), -2),
        SampleInput("(2,3,4) dims 2,0", make_arg((2, 3, 4), key=(op, 3)), 0, 2, 0),
        SampleInput("(2,2) offset 5 (empty)", make_arg((2, 2), key=(op, 4)), 5),
        SampleInput("T (4,3) dims -1,-2", make_arg((4, 3), key=(op, 5), transposed=True), dim1=-1, dim2=-2)],
    torch="torch.diagonal",
    doc="The view of the elements self[..., i, ..., i + offset, ...] of dims dim1, dim2, as a last dim.")


def _diagonal_backward_kernel(xp, grad_output, input_sizes, offset, dim1, dim2):
    out = xp.zeros(tuple(input_sizes), dtype=grad_output.dtype)
    _diagonal_view(xp, out, offset, dim1, dim2)[...] = grad_output
    return out


diagonal_backward = defop(
    "diagonal_backward(Tensor grad_output, SymInt[] input_sizes, int offset, int dim1, int dim2) -> Tensor",
    kernel=_diagonal_backward_kernel,
    meta=lambda grad_output, input_sizes, offset, dim1, dim2: MetaArray(tuple(input_sizes), grad_output.dtype),
    grads={"grad_output": lambda grad, offset, dim1, dim2: diagonal(grad, offset, dim1, dim2)},
    samples=lambda op: [SampleInput("(3,)->(3,4)", make_arg((3,), key=(op, 0)), [3, 4], 0, 0, 1),
                        SampleInput("(2,2)->(2,3,4) offset 1 dims 2,1", make_arg((2, 2), key=(op, 1)), [2, 3, 4],
                                    1, 2, 1)],
    torch="torch.ops.aten.diagonal_backward")

def _unfold_plan(shape, dimension, size, step):
    d = normalize_dim(dimension, len(shape))
    length = shape[d] if shape else 1
    if size > length:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {length} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    return d, (length - size) // step + 1


def _unfold_kernel(xp, self, dimension, size, step):
    d, n = _unfold_plan(self.shape, dimension, size, step)
    if self.ndim == 0:
        return xp.reshape(self, (size,))
    shape = self.shape[:d] + (n,) + self.shape[d + 1:] + (size,)
    strides = self.strides[:d] + (self.strides[d] * step,) + self.strides[d + 1:] + (self.strides[d],)
    return xp.lib.stride_tricks.as_strided(self, shape, strides)


def _unfold_meta(self, dimension, size, step):
    d, n = _unfold_plan(self.shape, dimension, size, step)
    if not self.shape:
        return MetaArray((size,), self.dtype)
    return MetaArray(self.shape[:d] + (n,) + self.shape[d + 1:] + (size,), self.dtype)


unfold = defop(
    "unfold(Tensor self, int dimension, int size, int step) -> Tensor",
    kernel=_unfold_kernel, meta=_unfold_meta, view=True,
    grads={"self": lambda grad, self_shape, dimension, size, step: unfold_backward(grad, list(self_shape), dimension,
                                                                                  size, step)},
    samples=lambda op: [
        SampleInput("(7,) size 3 step 2", make_arg((7,), key=(op, 0)), 0, 3, 2),
        SampleInput("(3,5) dim 1 size 2 step 1 (overlapping)", make_arg((3, 5), key=(op, 1)), 1, 2, 1),
        SampleInput("(4,3) dim 0 size 4 step 3", make_arg((4, 3), key=(op, 2)), 0, 4, 3),
        SampleInput("T (4,3) dim -1 size 2 step 2", make_arg((4, 3), key=(op, 3), transposed=True), -1, 2, 2),
        SampleInput("0-d size 1", make_arg((), key=(op, 4)), 0, 1, 1)],
    torch="lambda x, dimension, size, step: x.unfold(dimension, size, step)",
    doc="Every slice of length size along dimension, step apart, as a new last dim (a view; windows overlap "
        "when step < size).")


def _unfold_backward_kernel(xp, grad_in, input_sizes, dim, size, step):
    out = xp.zeros(tuple(input_sizes), dtype=grad_in.dtype)
    if not input_sizes:
        return xp.reshape(grad_in, ())
    d, n = _unfold_plan(tuple(input_sizes), dim, size, step)
    positions = (xp.arange(n)[:, None] * step + xp.arange(size)[None, :]).reshape(-1)
    windows = xp.moveaxis(grad_in, -1, d + 1)                       # [..., n, size, ...]
    merged = windows.reshape(windows.shape[:d] + (n * size,) + windows.shape[d + 2:])
    xp.add.at(out, (slice(None),) * d + (positions,), merged)      # overlapping windows add up
    return out


unfold_backward = defop(
    "unfold_backward(Tensor grad_in, SymInt[] input_sizes, int dim, int size, int step) -> Tensor",
    kernel=_unfold_backward_kernel,
    meta=lambda grad_in, input_sizes, dim, size, step: MetaArray(tuple(input_sizes), grad_in.dtype),
    grads={"grad_in": lambda grad, dim, size, step: unfold(grad, dim, size, step)},
    samples=lambda op: [SampleInput("(3,2)->(7,) size 2 step 2", make_arg((3, 2), key=(op, 0)), [7], 0, 2, 2),
                        SampleInput("(3,4,2)->(3,5) dim 1 size 2 step 1", make_arg((3, 4, 2), key=(op, 1)), [3, 5],
                                    1, 2, 1)],
    torch="torch.ops.aten.unfold_backward")
