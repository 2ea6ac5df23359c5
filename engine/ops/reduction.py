"""Core reductions: sum, mean, and sum_to_size (how the engine undoes broadcasting)."""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..backends.meta import MetaArray
from ..dispatcher import (
    ops as _ops,  # expand, reshape: the shape family is built on this one
)
from ..errors import DtypeError, ShapeError
from ..shapes import normalize_dims, reduced_shape
from .registry import defop
from .samples import reduction_samples


def _sum_dtype(x, dtype):
    if dtype is not None:
        return dtypes.from_name(dtype).np if isinstance(dtype, str) else dtype.np
    # PyTorch sums integers and bools as int64
    return x.dtype if x.dtype.kind == "f" else np.dtype(np.int64)


def _sum_meta(self, dim, keepdim, dtype):
    dims = normalize_dims(dim, self.ndim)
    return MetaArray(reduced_shape(self.shape, dims, keepdim), _sum_dtype(self, dtype))


def _sum_kernel(xp, self, dim, keepdim, dtype):
    dims = normalize_dims(dim, self.ndim)
    return xp.sum(self, axis=dims, keepdims=keepdim, dtype=_sum_dtype(self, dtype))


def _keepdim_grad(grad, self_shape, dim, keepdim):
    """Reinsert the reduced dimensions as size 1, so the gradient broadcasts back."""
    if keepdim or not self_shape:
        return grad
    dims = normalize_dims(dim, len(self_shape))
    return _ops.reshape(grad, [1 if i in dims else s for i, s in enumerate(self_shape)])


def sum_backward(grad, self_shape, dim, keepdim):
    return _ops.expand(_keepdim_grad(grad, self_shape, dim, keepdim), self_shape)


def _dim_overload(self, dim, *rest):
    return 0 if dim is None else 1


sum = defop(  # noqa: A001 — PyTorch's name
    "sum(Tensor self, int[]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
    kernel=_sum_kernel, meta=_sum_meta,
    grads={"self": lambda grad, self_shape, dim, keepdim: sum_backward(grad, self_shape, dim, keepdim)},
    backward_name=("SumBackward0", "SumBackward1"), overload=_dim_overload,
    samples=reduction_samples(), torch="torch.sum")


def _mean_check(self, dtype):
    out = _sum_dtype(self, dtype)
    if out.kind != "f":
        raise DtypeError(f"mean(): could not infer output dtype. Input dtype must be either a floating point "
                         f"or complex dtype. Got: {dtypes.from_numpy(self.dtype).name.capitalize()}")
    return out


def _mean_meta(self, dim, keepdim, dtype):
    out = _mean_check(self, dtype)
    return MetaArray(reduced_shape(self.shape, normalize_dims(dim, self.ndim), keepdim), out)


def _mean_kernel(xp, self, dim, keepdim, dtype):
    out = _mean_check(self, dtype)
    return xp.mean(self, axis=normalize_dims(dim, self.ndim), keepdims=keepdim, dtype=out)


def _mean_grad(grad, self_shape, dim, keepdim):
    dims = normalize_dims(dim, len(self_shape))
    count = int(np.prod([self_shape[d] for d in dims])) if dims else 1
    return sum_backward(grad, self_shape, dim, keepdim) / count


mean = defop(
    "mean(Tensor self, int[]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
    kernel=_mean_kernel, meta=_mean_meta,
    grads={"self": _mean_grad},
    backward_name=("MeanBackward0", "MeanBackward1"), overload=_dim_overload,
    samples=reduction_samples(), torch="torch.mean")


def _sum_to_dims(shape, size):
    lead = len(shape) - len(size)
    if lead < 0:
        raise ShapeError(f"size {{{', '.join(map(str, size))}}} is not expandable to size "
                         f"{{{', '.join(map(str, shape))}}}.")
    dims = list(range(lead))
    for i, s in enumerate(size):
        if s == 1 and shape[lead + i] != 1:
            dims.append(lead + i)
        elif s != shape[lead + i] and s != 1:
            raise ShapeError(f"size {{{', '.join(map(str, size))}}} is not expandable to size "
                             f"{{{', '.join(map(str, shape))}}}.")
    return tuple(dims)


def _sum_to_size_kernel(xp, self, size):
    dims = _sum_to_dims(self.shape, size)
    return xp.sum(self, axis=dims, keepdims=True).reshape(size) if dims else self


def _sum_to_size_samples(op):
    from .samples import SampleInput, make_arg
    return [SampleInput("(2,3)->(3,)", make_arg((2, 3), key=(op, 0)), [3]),
            SampleInput("(2,4,3)->(4,1)", make_arg((2, 4, 3), key=(op, 1)), [4, 1])]


sum_to_size = defop(
    "sum_to_size(Tensor self, int[] size) -> Tensor",
    kernel=_sum_to_size_kernel,
    meta=lambda self, size: (_sum_to_dims(self.shape, size), MetaArray(size, self.dtype))[1],
    grads={"self": lambda grad, self_shape: _ops.expand(grad, self_shape)},
    backward_name="SumToSizeBackward0",
    samples=_sum_to_size_samples, torch="lambda x, size: x.sum_to_size(size)")
