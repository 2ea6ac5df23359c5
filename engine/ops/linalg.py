"""Matrix products: the primitives mm, mv, dot, bmm, and matmul composed of them
as PyTorch composes it (so a 2-D matmul's grad_fn is MmBackward0)."""
from __future__ import annotations

import numpy as np

from ..backends.meta import MetaArray
from ..errors import DtypeError, ShapeError
from ..shapes import broadcast_shapes
from .registry import defop
from .samples import SampleInput, make_arg
from .shape import _unsafe_view, expand, reshape, transpose


def _same_dtype(name, a, b):
    if a.dtype != b.dtype:
        raise DtypeError(f"{name}: expected m1 and m2 to have the same dtype, but got: {a.dtype} != {b.dtype}")


def _mm_meta(self, mat2):
    if self.ndim != 2 or mat2.ndim != 2:
        raise ShapeError(f"{'self' if self.ndim != 2 else 'mat2'} must be a matrix")
    if self.shape[1] != mat2.shape[0]:
        raise ShapeError(f"mat1 and mat2 shapes cannot be multiplied ({self.shape[0]}x{self.shape[1]} and "
                         f"{mat2.shape[0]}x{mat2.shape[1]})")
    _same_dtype("mm", self, mat2)
    return MetaArray((self.shape[0], mat2.shape[1]), self.dtype)


def _checked(meta_rule, kernel):
    def run(xp, *arrays):
        meta_rule(*arrays)          # shape and dtype checks with PyTorch's messages; computes nothing
        return kernel(xp, *arrays)
    return run


def _pair(op, shapes, transposed=()):
    return [SampleInput(f"{sa}@{sb}", make_arg(sa, key=(op, i, 0), transposed=i in transposed),
                        make_arg(sb, key=(op, i, 1))) for i, (sa, sb) in enumerate(shapes)]


mm = defop(
    "mm(Tensor self, Tensor mat2) -> Tensor",
    kernel=_checked(_mm_meta, lambda xp, self, mat2: xp.matmul(self, mat2)), meta=_mm_meta,
    grads={"self": lambda grad, mat2: mm(grad, transpose(mat2, 0, 1)),
           "mat2": lambda grad, self: mm(transpose(self, 0, 1), grad)},
    array_grads={"self": lambda grad, mat2: np.matmul(grad, np.swapaxes(mat2, 0, 1)),
                 "mat2": lambda grad, self: np.matmul(np.swapaxes(self, 0, 1), grad)},
    samples=lambda op: _pair(op, [((2, 3), (3, 4)), ((3, 2), (2, 2)), ((1, 1), (1, 3))], transposed=(1,)),
    torch="torch.mm")


def _mv_meta(self, vec):
    if self.ndim != 2 or vec.ndim != 1:
        raise ShapeError(f"vector + matrix @ vector expected, got {self.ndim}, {vec.ndim}")
    if self.shape[1] != vec.shape[0]:
        raise ShapeError(f"size mismatch, got input ({self.shape[0]}), mat ({self.shape[0]}x{self.shape[1]}), "
                         f"vec ({vec.shape[0]})")
    _same_dtype("mv", self, vec)
    return MetaArray((self.shape[0],), self.dtype)


mv = defop(
    "mv(Tensor self, Tensor vec) -> Tensor",
    kernel=_checked(_mv_meta, lambda xp, self, vec: xp.matmul(self, vec)), meta=_mv_meta,
    grads={"self": lambda grad, vec: reshape(grad, [-1, 1]) * reshape(vec, [1, -1]),
           "vec": lambda grad, self: mv(transpose(self, 0, 1), grad)},
    samples=lambda op: _pair(op, [((2, 3), (3,)), ((3, 2), (2,))], transposed=(1,)),
    torch="torch.mv")


def _dot_meta(self, tensor):
    if self.ndim != 1 or tensor.ndim != 1:
        raise ShapeError(f"1D tensors expected, but got {self.ndim}D and {tensor.ndim}D tensors")
    if self.shape[0] != tensor.shape[0]:
        raise ShapeError(f"inconsistent tensor size, expected tensor [{self.shape[0]}] and src "
                         f"[{tensor.shape[0]}] to have the same number of elements, but got {self.shape[0]} "
                         f"and {tensor.shape[0]} elements respectively")
    _same_dtype("dot", self, tensor)
    return MetaArray((), self.dtype)


dot = defop(
    "dot(Tensor self, Tensor tensor) -> Tensor",
    kernel=_checked(_dot_meta, lambda xp, self, tensor: xp.asarray(xp.dot(self, tensor))), meta=_dot_meta,
    grads={"self": lambda grad, tensor: grad * tensor,
           "tensor": lambda grad, self: grad * self},
    samples=lambda op: _pair(op, [((4,), (4,))]),
    torch="torch.dot")


def _bmm_meta(self, mat2):
    if self.ndim != 3 or mat2.ndim != 3:
        raise ShapeError("batch1 must be a 3D tensor" if self.ndim != 3 else "batch2 must be a 3D tensor")
    if self.shape[0] != mat2.shape[0] or self.shape[2] != mat2.shape[1]:
        raise ShapeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                         f"[{self.shape[0]}, {self.shape[2]}] but got: [{mat2.shape[0]}, {mat2.shape[1]}].")
    _same_dtype("bmm", self, mat2)
    return MetaArray((self.shape[0], self.shape[1], mat2.shape[2]), self.dtype)


bmm = defop(
    "bmm(Tensor self, Tensor mat2) -> Tensor",
    kernel=_checked(_bmm_meta, lambda xp, self, mat2: xp.matmul(self, mat2)), meta=_bmm_meta,
    grads={"self": lambda grad, mat2: bmm(grad, transpose(mat2, 1, 2)),
           "mat2": lambda grad, self: bmm(transpose(self, 1, 2), grad)},
    samples=lambda op: _pair(op, [((2, 3, 4), (2, 4, 2))]),
    torch="torch.bmm")


def _matmul(self, other):
    d1, d2 = self.ndim, other.ndim
    if d1 == 0 or d2 == 0:
        raise ShapeError(f"both arguments to matmul need to be at least 1D, but they are {d1}D and {d2}D")
    if d1 == 1 and d2 == 1:
        return dot(self, other)
    if d1 == 2 and d2 == 1:
        return mv(self, other)
    if d1 == 1 and d2 == 2:
        return reshape(mm(reshape(self, [1, -1]), other), [-1])
    if d1 == 2 and d2 == 2:
        return mm(self, other)
    if d1 >= 3 and d2 <= 2:
        # fold the batch into the rows: one mm instead of a bmm over broadcast copies
        folded = reshape(self, [-1, self.shape[-1]])
        if d2 == 1:
            return _unsafe_view(mv(folded, other), list(self.shape[:-1]))
        return _unsafe_view(mm(folded, other), list(self.shape[:-1]) + [other.shape[-1]])
    a = reshape(self, [1, -1]) if d1 == 1 else self
    b = reshape(other, [-1, 1]) if d2 == 1 else other
    batch = list(broadcast_shapes(tuple(a.shape[:-2]), tuple(b.shape[:-2])))
    n, k, m = a.shape[-2], a.shape[-1], b.shape[-1]
    count = int(np.prod(batch)) if batch else 1
    a3 = reshape(expand(a, batch + [n, k]), [count, n, k])
    b3 = reshape(expand(b, batch + [b.shape[-2], m]), [count, b.shape[-2], m])
    out_shape = batch + ([n] if d1 != 1 else []) + ([m] if d2 != 1 else [])
    return _unsafe_view(bmm(a3, b3), out_shape)


matmul = defop(
    "matmul(Tensor self, Tensor other) -> Tensor",
    composite=_matmul,
    samples=lambda op: _pair(op, [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 2)), ((2, 3), (3, 4)),
                                  ((2, 2, 3), (3,)), ((2, 2, 3), (3, 4)), ((3,), (2, 3, 2)),
                                  ((2, 1, 2, 3), (3, 3, 2)), ((4, 3), (2, 3, 2))], transposed=(3,)),
    torch="torch.matmul")
