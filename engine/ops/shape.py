"""Core shape ops: reshape, transpose, permute, expand."""
from __future__ import annotations

import math

from ..backends.meta import MetaArray
from .registry import defop
from .samples import SampleInput, make_arg
from .shapes import infer_reshape, normalize_dim


def _reshape_meta(self, shape):
    return MetaArray(infer_reshape(shape, math.prod(self.shape)), self.dtype)


def _reshape_kernel(xp, self, shape):
    return xp.reshape(self, infer_reshape(shape, self.size))


reshape = defop(
    "reshape(Tensor self, int[] shape) -> Tensor",
    kernel=_reshape_kernel, meta=_reshape_meta,
    grads={"self": lambda grad, self_shape: reshape(grad, self_shape)},
    backward_name="ViewBackward0",
    samples=lambda op: [SampleInput("(2,6)->(3,-1)", make_arg((2, 6), key=(op, 0)), [3, -1]),
                        SampleInput("0-d->(1,)", make_arg((), key=(op, 1)), [1]),
                        SampleInput("T->(6,)", make_arg((3, 2), key=(op, 2), transposed=True), [6])],
    torch="torch.reshape")


def _transpose_meta(self, dim0, dim1):
    shape = list(self.shape)
    if shape:
        a, b = normalize_dim(dim0, len(shape)), normalize_dim(dim1, len(shape))
        shape[a], shape[b] = shape[b], shape[a]
    return MetaArray(shape, self.dtype)


def _transpose_kernel(xp, self, dim0, dim1):
    if self.ndim == 0:
        normalize_dim(dim0, 0), normalize_dim(dim1, 0)
        return self
    return xp.swapaxes(self, normalize_dim(dim0, self.ndim), normalize_dim(dim1, self.ndim))


transpose = defop(
    "transpose(Tensor self, int dim0, int dim1) -> Tensor",
    kernel=_transpose_kernel, meta=_transpose_meta,
    grads={"self": lambda grad, dim0, dim1: transpose(grad, dim0, dim1)},
    samples=lambda op: [SampleInput("(2,3,4) 0<->2", make_arg((2, 3, 4), key=(op, 0)), 0, 2),
                        SampleInput("(3,2) -1<->-2", make_arg((3, 2), key=(op, 1)), -1, -2)],
    torch="torch.transpose")


def _permute_dims(dims, ndim):
    dims = tuple(normalize_dim(d, ndim) for d in dims)
    if len(dims) != ndim:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does not match the "
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
    kernel=lambda xp, self, dims: xp.transpose(self, _permute_dims(dims, self.ndim)),
    meta=lambda self, dims: MetaArray([self.shape[d] for d in _permute_dims(dims, self.ndim)], self.dtype),
    grads={"self": lambda grad, dims: permute(grad, _inverse_permutation(dims))},
    samples=lambda op: [SampleInput("(2,3,4)->(2,0,1)", make_arg((2, 3, 4), key=(op, 0)), [2, 0, 1]),
                        SampleInput("(3,2)->(-1,0)", make_arg((3, 2), key=(op, 1)), [-1, 0])],
    torch="torch.permute")


def _expand_shape(shape, size):
    size = list(size)
    if len(size) < len(shape):
        raise RuntimeError(f"expand(agrad.FloatTensor{{{list(shape)}}}, size={size}): the number of sizes "
                           f"provided ({len(size)}) must be greater or equal to the number of dimensions in "
                           f"the tensor ({len(shape)})")
    lead = len(size) - len(shape)
    out = []
    for i, s in enumerate(size):
        if i < lead:
            if s < 0:
                raise RuntimeError(f"The expanded size of the tensor ({s}) isn't allowed in a leading, "
                                   f"non-existing dimension {i}")
            out.append(s)
            continue
        cur = shape[i - lead]
        if s == -1:
            s = cur
        elif s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {size}")
        elif cur != 1 and cur != s:
            raise RuntimeError(f"The expanded size of the tensor ({s}) must match the existing size ({cur}) at "
                               f"non-singleton dimension {i}.  Target sizes: {size}.  Tensor sizes: {list(shape)}")
        out.append(s)
    return tuple(out)


expand = defop(
    "expand(Tensor self, int[] size) -> Tensor",
    kernel=lambda xp, self, size: xp.broadcast_to(self, _expand_shape(self.shape, size)),
    meta=lambda self, size: MetaArray(_expand_shape(self.shape, size), self.dtype),
    grads={"self": lambda grad, self_shape: sum_to_size(grad, self_shape)},
    samples=lambda op: [SampleInput("(3,1)->(2,3,4)", make_arg((3, 1), key=(op, 0)), [2, 3, 4]),
                        SampleInput("0-d->(3,)", make_arg((), key=(op, 1)), [3]),
                        SampleInput("(1,2)->(-1,2)->(3,2)", make_arg((1, 2), key=(op, 2)), [3, -1])],
    torch="lambda x, size: x.expand(*size)")

from .reduction import sum_to_size  # noqa: E402
