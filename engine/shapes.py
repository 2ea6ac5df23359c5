"""Shape arithmetic shared by kernels and Meta rules, with PyTorch's error messages."""
from __future__ import annotations

import math

from .backends.meta import MetaArray
from .errors import DimensionError, ShapeError

__all__ = ["shape_of", "broadcast_shapes", "normalize_dim", "normalize_dims", "reduced_shape",
           "infer_reshape", "meta", "pointwise_meta"]


def shape_of(x) -> tuple:
    return getattr(x, "shape", ())


def broadcast_shapes(*shapes) -> tuple:
    ndim = max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for s in shapes:
        offset = ndim - len(s)
        for i, size in enumerate(s):
            cur = out[offset + i]
            if cur == 1:
                out[offset + i] = size
            elif size != 1 and size != cur:
                raise ShapeError(f"The size of tensor a ({cur}) must match the size of tensor b ({size}) at "
                                 f"non-singleton dimension {offset + i}")
    return tuple(out)


def normalize_dim(dim: int, ndim: int) -> int:
    bound = max(ndim, 1)        # a 0-d tensor accepts dim 0 and -1, as in PyTorch
    if not -bound <= dim < bound:
        raise DimensionError(f"Dimension out of range (expected to be in range of [{-bound}, {bound - 1}], "
                             f"but got {dim})")
    return dim % bound if ndim else 0


def normalize_dims(dims, ndim: int) -> tuple:
    """`None` or `[]` mean every dimension (PyTorch's full reduction)."""
    if dims is None or (not isinstance(dims, int) and len(dims) == 0):
        return tuple(range(ndim))
    if isinstance(dims, int):
        dims = (dims,)
    out = tuple(normalize_dim(d, ndim) for d in dims)
    if len(set(out)) != len(out):
        repeated = next(d for d in out if out.count(d) > 1)
        raise RuntimeError(f"dim {repeated} appears multiple times in the list of dims")
    return out if ndim else ()


def reduced_shape(shape, dims, keepdim: bool) -> tuple:
    if keepdim:
        return tuple(1 if i in dims else s for i, s in enumerate(shape))
    return tuple(s for i, s in enumerate(shape) if i not in dims)


def infer_reshape(shape, numel: int) -> tuple:
    shape = list(shape)
    infer = [i for i, s in enumerate(shape) if s == -1]
    if len(infer) > 1:
        raise ShapeError("only one dimension can be inferred")
    known = math.prod(s for s in shape if s != -1)
    if infer:
        if known == 0 or numel % known:
            raise ShapeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape[infer[0]] = numel // known
    elif known != numel:
        raise ShapeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return tuple(shape)


def meta(shape, dtype) -> MetaArray:
    return MetaArray(shape, dtype)


def pointwise_meta(out_dtype=None):
    """The Meta rule of an elementwise op: broadcast shapes, the (already promoted) dtype."""
    def rule(*args):
        arrays = [a for a in args if hasattr(a, "shape")]
        shape = arrays[0].shape if arrays else ()
        for a in arrays:
            if a.shape != shape:
                return MetaArray(broadcast_shapes(*(a.shape for a in arrays)), out_dtype or arrays[0].dtype)
        # every input of one shape (the common case): that shape, which a MetaArray has checked already
        return MetaArray.of_checked(shape, out_dtype or arrays[0].dtype)
    return rule
