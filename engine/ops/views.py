"""Views that add or drop size-1 dimensions: squeeze, unsqueeze, and flatten
(composite over reshape, as PyTorch's flatten is)."""
from __future__ import annotations

import math

from ..backends.meta import MetaArray
from .registry import defop
from .samples import SampleInput, make_arg
from .shapes import normalize_dim


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
    kernel=lambda xp, self, dim: xp.reshape(self, _squeezed_shape(self.shape, dim)),
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
    kernel=lambda xp, self, dim: xp.reshape(self, _unsqueezed_shape(self.shape, dim)),
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

from .shape import reshape  # noqa: E402  (formulas and the composite call it)
