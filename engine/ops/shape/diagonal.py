"""The diagonal and the triangles: diagonal (a strided view) and its backward op,
diag_embed, diagonal_copy, diag, and the triangular masks tril/triu.

diag_embed's adjoint is diagonal (the gradient reads the diagonal back); diag is
PyTorch's composite of diag_embed and diagonal_copy, so its nodes are DiagEmbedBackward0
and DiagonalBackward0_copy as in PyTorch. tril and triu are their own adjoints.
"""
from __future__ import annotations

from ...backends.meta import MetaArray
from ...shapes import normalize_dim
from ..registry import defop
from ..samples import SampleInput, make_arg
from .view import reshape

# ---- tril, triu ------------------------------------------------------------------------------------


def _triangle_meta(name):
    def rule(self, diagonal=0):
        if self.ndim < 2:
            raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
        return MetaArray(self.shape, self.dtype)
    return rule


def _triangle_kernel(name):
    rule = _triangle_meta(name)

    def kernel(xp, self, diagonal):
        rule(self)
        return getattr(xp, name)(self, diagonal)
    return kernel


def _triangle_samples(op):
    return [SampleInput("(3,4)", make_arg((3, 4), key=(op, 0))),
            SampleInput("(4,3)T diagonal=1", make_arg((4, 3), key=(op, 1), transposed=True), 1),
            SampleInput("(2,3,3) diagonal=-1", make_arg((2, 3, 3), key=(op, 2)), diagonal=-1)]


def _triangle_op(name, doc):
    op = defop(
        f"{name}(Tensor self, int diagonal=0) -> Tensor",
        kernel=_triangle_kernel(name), meta=_triangle_meta(name), supports_complex=True,
        grads={"self": lambda grad, diagonal: op(grad, diagonal)},
        samples=_triangle_samples, torch=f"torch.{name}", doc=doc)
    return op


tril = _triangle_op("tril", "The lower triangle (j <= i + diagonal) of the last two dimensions; zeros above.")
triu = _triangle_op("triu", "The upper triangle (j >= i + diagonal) of the last two dimensions; zeros below.")


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
    if not hasattr(corner, "strides"):     # an array without a memory layout (dask) is never written through
        return xp.diagonal(self, offset, d1, d2)
    strides = corner.strides
    return xp.lib.stride_tricks.as_strided(corner, tuple(self.shape[i] for i in rest) + (n,),
                                           tuple(strides[i] for i in rest) + (strides[d1] + strides[d2],))


def _diagonal_meta(self, offset, dim1, dim2):
    d1, d2, n, rest = _diagonal_plan(self.shape, offset, dim1, dim2)
    return MetaArray(tuple(self.shape[i] for i in rest) + (n,), self.dtype)


diagonal = defop(
    "diagonal(Tensor self, int offset=0, int dim1=0, int dim2=1) -> Tensor",
    supports_complex=True, kernel=_diagonal_view, meta=_diagonal_meta, view=True,
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
    if not hasattr(out, "strides"):        # an array that cannot be written through a view (dask)
        d1, d2, n, rest = _diagonal_plan(out.shape, offset, dim1, dim2)
        if not n:
            return out
        filled = _diagonal_filled(xp, grad_output, out.shape[d1], out.shape[d2], offset)
        return xp.moveaxis(filled, (-2, -1), (d1, d2))
    _diagonal_view(xp, out, offset, dim1, dim2)[...] = grad_output
    return out


def _diagonal_filled(xp, values, rows, cols, offset):
    """(..., rows, cols) zeros with `values` (..., n) on the `offset` diagonal, made by selecting,
    not by writing into an array: what a library whose arrays are values (dask) can build."""
    r = xp.arange(rows).reshape(rows, 1)
    c = xp.arange(cols).reshape(1, cols)
    on = (c - r) == offset
    n = values.shape[-1]
    if offset >= 0:         # the diagonal's k-th element sits on row k, else on column k
        picked = xp.take(values, xp.clip(xp.arange(rows), 0, n - 1), axis=-1)[..., :, None]
    else:
        picked = xp.take(values, xp.clip(xp.arange(cols), 0, n - 1), axis=-1)[..., None, :]
    return xp.where(on, picked, xp.zeros((), dtype=values.dtype))


diagonal_backward = defop(
    "diagonal_backward(Tensor grad_output, SymInt[] input_sizes, int offset, int dim1, int dim2) -> Tensor",
    supports_complex=True, kernel=_diagonal_backward_kernel,
    meta=lambda grad_output, input_sizes, offset, dim1, dim2: MetaArray(tuple(input_sizes), grad_output.dtype),
    grads={"grad_output": lambda grad, offset, dim1, dim2: diagonal(grad, offset, dim1, dim2)},
    samples=lambda op: [SampleInput("(3,)->(3,4)", make_arg((3,), key=(op, 0)), [3, 4], 0, 0, 1),
                        SampleInput("(2,2)->(2,3,4) offset 1 dims 2,1", make_arg((2, 2), key=(op, 1)), [2, 3, 4],
                                    1, 2, 1)],
    torch="torch.ops.aten.diagonal_backward")


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
    if not hasattr(out, "strides") and n:        # arrays that are values (dask): selected, not written
        return xp.moveaxis(_diagonal_filled(xp, src, m, m, offset), (-2, -1), (d1, d2))
    i = xp.arange(n)
    rows, cols = (i, i + offset) if offset >= 0 else (i - offset, i)
    out[..., rows, cols] = src
    return xp.moveaxis(out, (-2, -1), (d1, d2))


def _diag_embed_meta(self, offset, dim1, dim2):
    return MetaArray(_embed_plan(self.shape, offset, dim1, dim2)[2], self.dtype)


diag_embed = defop(
    "diag_embed(Tensor self, int offset=0, int dim1=-2, int dim2=-1) -> Tensor",
    supports_complex=True, kernel=_diag_embed_kernel, meta=_diag_embed_meta,
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
    meta=_diagonal_meta, supports_complex=True,
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


diagflat = defop(
    "diagflat(Tensor self, int offset=0) -> Tensor",
    # ATen's diagflat: the flattened input as the offset diagonal of a square matrix
    composite=lambda self, offset: diag(reshape(self, [-1]), offset),
    samples=lambda op: [SampleInput("(2,2)", make_arg((2, 2), key=(op, 0))),
                        SampleInput("(3,) offset 1", make_arg((3,), key=(op, 1)), 1),
                        SampleInput("0-d offset -2", make_arg((), key=(op, 2)), -2)],
    torch="torch.diagflat", doc="A square matrix with the flattened input on its offset diagonal.")
