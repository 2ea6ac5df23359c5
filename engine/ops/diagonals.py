"""diag_embed and diag: vectors onto the diagonal of (batches of) matrices, and torch.diag,
which embeds a vector or takes a matrix's diagonal. diag_embed's adjoint is diagonal (the
gradient reads the diagonal back); diag is PyTorch's composite of diag_embed and
diagonal_copy, so its nodes are DiagEmbedBackward0 and DiagonalBackward0_copy as in PyTorch."""
from __future__ import annotations

from ..backends.meta import MetaArray
from ..shapes import normalize_dim
from .registry import defop
from .samples import SampleInput, make_arg
from .views import _diagonal_meta, _diagonal_view, diagonal, diagonal_backward


def _embed_plan(shape, offset, dim1, dim2):
    ndim = len(shape) + 1
    d1, d2 = normalize_dim(dim1, ndim), normalize_dim(dim2, ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    m = (shape[-1] if shape else 1) + abs(offset)
    out = [s for s in shape[:-1]]
    for d in sorted((d1, d2)):
        out.insert(d, m)
    return d1, d2, tuple(out)


def _diag_embed_kernel(xp, self, offset, dim1, dim2):
    d1, d2, out_shape = _embed_plan(self.shape, offset, dim1, dim2)
    src = self.reshape(1) if self.ndim == 0 else self
    n = src.shape[-1]
    m = n + abs(offset)
    out = xp.zeros(src.shape[:-1] + (m, m), dtype=self.dtype)
    i = xp.arange(n)
    rows, cols = (i, i + offset) if offset >= 0 else (i - offset, i)
    out[..., rows, cols] = src
    return xp.moveaxis(out, (-2, -1), (d1, d2))


def _diag_embed_meta(self, offset, dim1, dim2):
    return MetaArray(_embed_plan(self.shape, offset, dim1, dim2)[2], self.dtype)


diag_embed = defop(
    "diag_embed(Tensor self, int offset=0, int dim1=-2, int dim2=-1) -> Tensor",
    kernel=_diag_embed_kernel, meta=_diag_embed_meta,
    grads={"self": lambda grad, offset, dim1, dim2: diagonal(grad, offset, dim1, dim2)},
    samples=lambda op: [SampleInput("vector", make_arg((4,), key=(op, 0))),
                        SampleInput("batch offset 1", make_arg((2, 3), key=(op, 1)), 1),
                        SampleInput("offset -2 dims 0,2", make_arg((2, 3), key=(op, 2)), -2, 0, 2),
                        SampleInput("dims kw", make_arg((3, 2), key=(op, 3)), dim1=2, dim2=0)],
    torch="torch.diag_embed",
    doc="Each last-dimension vector placed on diagonal `offset` of a matrix spanning dims dim1, dim2 "
        "(zeros elsewhere).")


diagonal_copy = defop(
    "diagonal_copy(Tensor self, int offset=0, int dim1=0, int dim2=1) -> Tensor",
    kernel=lambda xp, self, offset, dim1, dim2: _diagonal_view(xp, self, offset, dim1, dim2).copy(),
    meta=_diagonal_meta,
    grads={"self": lambda grad, self_shape, offset, dim1, dim2: diagonal_backward(grad, list(self_shape), offset,
                                                                                  dim1, dim2)},
    backward_name="DiagonalBackward0_copy",
    samples=lambda op: [SampleInput("(3,4) offset 1", make_arg((3, 4), key=(op, 0)), 1),
                        SampleInput("(2,3,4) dims 2,0", make_arg((2, 3, 4), key=(op, 1)), 0, 2, 0)],
    torch="torch.diagonal_copy", doc="diagonal, as a new tensor rather than a view.")


def _diag(self, diagonal_=0):
    if self.ndim == 1:
        return diag_embed(self, diagonal_)
    if self.ndim == 2:
        return diagonal_copy(self, diagonal_)      # PyTorch's diag copies: DiagonalBackward0_copy
    raise RuntimeError("diag(): Supports 1D or 2D tensors. Got " + f"{self.ndim}D")


diag = defop(
    "diag(Tensor self, int diagonal=0) -> Tensor",
    composite=lambda self, diagonal=0: _diag(self, diagonal),
    samples=lambda op: [SampleInput("vector", make_arg((4,), key=(op, 0))),
                        SampleInput("vector offset -1", make_arg((3,), key=(op, 1)), -1),
                        SampleInput("matrix", make_arg((3, 4), key=(op, 2))),
                        SampleInput("matrix offset 1 kw", make_arg((4, 3), key=(op, 3)), diagonal=1)],
    torch="torch.diag", doc="A vector's diagonal matrix (diagonal `diagonal`), or a matrix's diagonal.")
