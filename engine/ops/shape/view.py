"""Views (ATen's TensorShape), all views of their input as in PyTorch: view, reshape (a
view when the strides allow one, else a copy), _unsafe_view, transpose, t, adjoint (a composite
transpose of the last two dims), permute,
expand; squeeze and unsqueeze, which drop or add size-1 dimensions; flatten (composite
over reshape, as PyTorch's flatten is); unfold, a strided view, with its backward op.
"""
from __future__ import annotations

import math

import numpy as np

from ...backends.meta import MetaArray
from ...errors import ShapeError
from ...shapes import infer_reshape, normalize_dim
from ..reduce.arithmetic import sum_to_size
from ..registry import defop
from ..samples import SampleInput, make_arg
from .pad import _add_along


def _reshape_meta(self, shape):
    return MetaArray(infer_reshape(shape, math.prod(self.shape)), self.dtype)


def _reshape_kernel(xp, self, shape):
    return xp.reshape(self, infer_reshape(shape, self.size))


def _view_strides(shape, strides, new_shape):
    """The strides `new_shape` would have over the same memory, or None when no view can
    express it (PyTorch's computeStride; NumPy's reshape decides view-or-copy the same way)."""
    if not shape or math.prod(shape) == 0:
        return True
    new_strides = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    chunk_base_stride = strides[-1]
    tensor_numel = view_numel = 1
    for tensor_d in range(len(shape) - 1, -1, -1):
        tensor_numel *= shape[tensor_d]
        if tensor_d == 0 or (shape[tensor_d - 1] != 1 and strides[tensor_d - 1] != tensor_numel * chunk_base_stride):
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                new_strides[view_d] = view_numel * chunk_base_stride
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base_stride = strides[tensor_d - 1]
                tensor_numel = view_numel = 1
    return new_strides if view_d == -1 else None


def _viewable(self, shape) -> bool:
    """Whether reshape(self, shape) is a view (Meta tensors are contiguous)."""
    data = self._data
    flags = getattr(data, "flags", None)
    if flags is None or flags.c_contiguous:
        return True
    return _view_strides(data.shape, data.strides, infer_reshape(shape, data.size)) is not None


def _reshape_overload(self, shape):
    """PyTorch's node: view of a contiguous input, _reshape_alias of a strided one, else a copy."""
    flags = getattr(self._data, "flags", None)
    if flags is None or flags.c_contiguous:
        return 0
    return 1 if _viewable(self, shape) else 2


reshape = defop(
    "reshape(Tensor self, int[] shape) -> Tensor",
    supports_complex=True, kernel=_reshape_kernel, meta=_reshape_meta, view=_viewable,
    grads={"self": lambda grad, self_shape: reshape(grad, self_shape)},
    backward_name=("ViewBackward0", "ReshapeAliasBackward0", "UnsafeViewBackward0"),
    overload=_reshape_overload,
    samples=lambda op: [SampleInput("(2,6)->(3,-1)", make_arg((2, 6), key=(op, 0)), [3, -1]),
                        SampleInput("0-d->(1,)", make_arg((), key=(op, 1)), [1]),
                        SampleInput("T->(6,)", make_arg((3, 2), key=(op, 2), transposed=True), [6]),
                        SampleInput("T->(3,1,2) (a view)", make_arg((3, 2), key=(op, 3), transposed=True),
                                    [3, 1, 2])],
    torch="torch.reshape")


def _view_kernel(xp, self, size):
    shape = infer_reshape(size, self.size)
    flags = getattr(self, "flags", None)       # None: an array without a memory layout (dask) views any way
    if flags is not None and not flags.c_contiguous and _view_strides(self.shape, self.strides, shape) is None:
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at least one "
                           "dimension spans across two contiguous subspaces). Use .reshape(...) instead.")
    return xp.reshape(self, shape)


view = defop(
    "view(Tensor self, int[] size) -> Tensor",
    supports_complex=True, kernel=_view_kernel, meta=_reshape_meta, view=True,
    grads={"self": lambda grad, self_shape: reshape(grad, self_shape)},
    samples=lambda op: [SampleInput("(2,6)->(3,-1)", make_arg((2, 6), key=(op, 0)), [3, -1]),
                        SampleInput("0-d->(1,)", make_arg((), key=(op, 1)), [1]),
                        SampleInput("T (3,2)->(3,1,2)", make_arg((3, 2), key=(op, 2), transposed=True), [3, 1, 2])],
    torch="lambda x, size: x.view(size)",
    doc="As reshape, but never copies: an error when the strides cannot express the new shape.")


# PyTorch's _unsafe_view: reshape a fresh result that nothing else refers to (matmul's folded
# product); it shares the memory but is not marked a view, so no view bookkeeping follows it
_unsafe_view = defop(
    "_unsafe_view(Tensor self, int[] size) -> Tensor",
    supports_complex=True, kernel=_reshape_kernel, meta=_reshape_meta,
    grads={"self": lambda grad, self_shape: reshape(grad, self_shape)},
    samples=lambda op: [SampleInput("(2,6)->(3,-1)", make_arg((2, 6), key=(op, 0)), [3, -1])],
    torch="torch.ops.aten._unsafe_view")


def _transpose_meta(self, dim0, dim1):
    shape = list(self.shape)
    a, b = normalize_dim(dim0, len(shape)), normalize_dim(dim1, len(shape))     # a 0-d tensor too, as the kernel
    if shape:
        shape[a], shape[b] = shape[b], shape[a]
    return MetaArray(shape, self.dtype)


def _transpose_kernel(xp, self, dim0, dim1):
    if self.ndim == 0:
        normalize_dim(dim0, 0), normalize_dim(dim1, 0)
        return self
    return xp.swapaxes(self, normalize_dim(dim0, self.ndim), normalize_dim(dim1, self.ndim))


transpose = defop(
    "transpose(Tensor self, int dim0, int dim1) -> Tensor",
    supports_complex=True, kernel=_transpose_kernel, meta=_transpose_meta, view=True,
    grads={"self": lambda grad, dim0, dim1: transpose(grad, dim0, dim1)},
    samples=lambda op: [SampleInput("(2,3,4) 0<->2", make_arg((2, 3, 4), key=(op, 0)), 0, 2),
                        SampleInput("(3,2) -1<->-2", make_arg((3, 2), key=(op, 1)), -1, -2)],
    torch="torch.transpose")


def _t_check(ndim):
    if ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {ndim}D")


def _t_kernel(xp, self):
    _t_check(self.ndim)
    return xp.swapaxes(self, 0, 1) if self.ndim == 2 else self[...]


def _t_meta(self):
    _t_check(self.ndim)
    return MetaArray(self.shape[::-1], self.dtype)


t = defop(
    "t(Tensor self) -> Tensor",
    supports_complex=True, kernel=_t_kernel, meta=_t_meta, view=True,
    grads={"self": lambda grad: t(grad)},
    samples=lambda op: [SampleInput("(2,3)", make_arg((2, 3), key=(op, 0))),
                        SampleInput("(3,)", make_arg((3,), key=(op, 1))),
                        SampleInput("0-d", make_arg((), key=(op, 2)))],
    torch="torch.t")


def _adjoint(self):
    if self.ndim < 2:
        raise RuntimeError(f"tensor.adjoint() is only supported on matrices or batches of matrices. Got "
                           f"{self.ndim}-D tensor.")
    return transpose(self, -2, -1).conj()       # (a real tensor's conj is itself)


adjoint = defop(
    "adjoint(Tensor self) -> Tensor", composite=_adjoint,
    samples=lambda op: [SampleInput("(2,3)", make_arg((2, 3), key=(op, 0))),
                        SampleInput("(2,3,4) batch", make_arg((2, 3, 4), key=(op, 1)))],
    torch="torch.adjoint",
    doc="The conjugate transpose of the last two dims: a view of a real tensor (its transpose), a conjugated copy "
        "of a complex one (agrad has no lazy conjugate bit).")


def _permute_dims(dims, ndim):
    dims = tuple(normalize_dim(d, ndim) for d in dims)
    if len(dims) != ndim:
        raise ShapeError(f"permute(sparse_coo): number of dimensions in the tensor input does not match the "
                         f"length of the desired ordering of dimensions i.e. input.dim() = {ndim} is not equal "
                         f"to len(dims) = {len(dims)}".replace("(sparse_coo)", ""))
    if len(set(dims)) != ndim:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return dims


def _inverse_permutation(dims):
    inverse = [0] * len(dims)
    for i, d in enumerate(dims):
        inverse[d % len(dims)] = i
    return inverse


permute = defop(
    "permute(Tensor self, int[] dims) -> Tensor",
    supports_complex=True, kernel=lambda xp, self, dims: xp.transpose(self, _permute_dims(dims, self.ndim)), view=True,
    meta=lambda self, dims: MetaArray([self.shape[d] for d in _permute_dims(dims, self.ndim)], self.dtype),
    grads={"self": lambda grad, dims: permute(grad, _inverse_permutation(dims))},
    samples=lambda op: [SampleInput("(2,3,4)->(2,0,1)", make_arg((2, 3, 4), key=(op, 0)), [2, 0, 1]),
                        SampleInput("(3,2)->(-1,0)", make_arg((3, 2), key=(op, 1)), [-1, 0])],
    torch="torch.permute")


def _expand_shape(shape, size):
    size = list(size)
    if len(size) < len(shape):
        raise ShapeError(f"expand(agrad.FloatTensor{{{list(shape)}}}, size={size}): the number of sizes "
                         f"provided ({len(size)}) must be greater or equal to the number of dimensions in "
                         f"the tensor ({len(shape)})")
    lead = len(size) - len(shape)
    out = []
    for i, s in enumerate(size):
        if i < lead:
            if s < 0:
                raise ShapeError(f"The expanded size of the tensor ({s}) isn't allowed in a leading, "
                                 f"non-existing dimension {i}")
            out.append(s)
            continue
        cur = shape[i - lead]
        if s == -1:
            s = cur
        elif s < 0:
            raise ShapeError(f"Trying to create tensor with negative dimension {s}: {size}")
        elif cur != 1 and cur != s:
            raise ShapeError(f"The expanded size of the tensor ({s}) must match the existing size ({cur}) at "
                             f"non-singleton dimension {i}.  Target sizes: {size}.  Tensor sizes: {list(shape)}")
        out.append(s)
    return tuple(out)


def _expand_kernel(xp, self, size):
    """broadcast_to, but writable as PyTorch's expand is: a part without repeated elements
    (`x.expand(2, 3)[0]`) may be written in place; the repeats are refused by in-place ops."""
    shape = _expand_shape(self.shape, size)
    if not hasattr(self, "strides"):     # an array without a memory layout (dask): nothing can be written into it
        return xp.broadcast_to(self, shape)
    lead = len(shape) - self.ndim
    strides = (0,) * lead + tuple(0 if n == 1 and m != 1 else st
                                  for n, m, st in zip(self.shape, shape[lead:], self.strides))
    return xp.lib.stride_tricks.as_strided(self, shape, strides)


expand = defop(
    "expand(Tensor self, int[] size) -> Tensor",
    supports_complex=True, kernel=lambda xp, self, size: _expand_kernel(xp, self, size), view=True,
    meta=lambda self, size: MetaArray(_expand_shape(self.shape, size), self.dtype),
    grads={"self": lambda grad, self_shape: sum_to_size(grad, self_shape)},
    samples=lambda op: [SampleInput("(3,1)->(2,3,4)", make_arg((3, 1), key=(op, 0)), [2, 3, 4]),
                        SampleInput("0-d->(3,)", make_arg((), key=(op, 1)), [3]),
                        SampleInput("(1,2)->(-1,2)->(3,2)", make_arg((1, 2), key=(op, 2)), [3, -1])],
    torch="lambda x, size: x.expand(*size)")


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
    supports_complex=True, kernel=lambda xp, self, dim: xp.reshape(self, _squeezed_shape(self.shape, dim)), view=True,
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
    supports_complex=True, kernel=lambda xp, self, dim: xp.reshape(self, _unsqueezed_shape(self.shape, dim)), view=True,
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
    if not hasattr(self, "strides"):      # an array without a memory layout (dask): the windows' elements taken
        positions = (xp.arange(n)[:, None] * step + xp.arange(size)[None, :]).reshape(-1)
        taken = xp.take(self, positions, axis=d)
        return xp.moveaxis(xp.reshape(taken, self.shape[:d] + (n, size) + self.shape[d + 1:]), d + 1, -1)
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
    supports_complex=True, kernel=_unfold_kernel, meta=_unfold_meta, view=True,
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
    if xp is not np:        # dask has no ufunc.at; CuPy's adds with atomics, in an order that varies
        return _add_along(xp, merged, d, positions, input_sizes[d])
    xp.add.at(out, (slice(None),) * d + (positions,), merged)      # overlapping windows add up
    return out


unfold_backward = defop(
    "unfold_backward(Tensor grad_in, SymInt[] input_sizes, int dim, int size, int step) -> Tensor",
    supports_complex=True, kernel=_unfold_backward_kernel,
    meta=lambda grad_in, input_sizes, dim, size, step: MetaArray(tuple(input_sizes), grad_in.dtype),
    grads={"grad_in": lambda grad, dim, size, step: unfold(grad, dim, size, step)},
    samples=lambda op: [SampleInput("(3,2)->(7,) size 2 step 2", make_arg((3, 2), key=(op, 0)), [7], 0, 2, 2),
                        SampleInput("(3,4,2)->(3,5) dim 1 size 2 step 1", make_arg((3, 4, 2), key=(op, 1)), [3, 5],
                                    1, 2, 1)],
    torch="torch.ops.aten.unfold_backward")
