"""Linear algebra (ATen's LinearAlgebra, Linear): the matrix-product primitives mm, mv,
dot, bmm, and matmul composed of them as PyTorch composes it (so a 2-D matmul's grad_fn is
MmBackward0); addmm and linear (over addmm), baddbmm, outer, kron, trace, cross and
linalg_cross, and einsum.

einsum is a composite: it resolves `...`, the implicit output and size-1 broadcasting,
then calls `_einsum`, one kernel on an explicit equation whose backward is einsum
again — the gradient of operand k contracts grad with the other operands back to k's
subscripts (a repeated subscript through an identity matrix, a subscript only k has
through an expand) — so every order of derivative is an einsum. trace's gradient is grad
on the diagonal, linalg_cross's are cross products again, kron is PyTorch's composite.
"""
from __future__ import annotations

import string
import warnings

import numpy as np

from ..backends.meta import MetaArray
from ..creation import eye
from ..errors import DtypeError, DtypeNotImplementedError, ShapeError
from ..messages import c_type_name, scalar_type_name
from ..shapes import broadcast_shapes, normalize_dim
from ._common import checked, conj_of
from .reduce.arithmetic import _sum_dtype
from .registry import defop, get_info
from .samples import SampleInput, int_arg, make_arg
from .shape.view import _expand_shape, _unsafe_view, expand, reshape, t, transpose



# ---- trace ------------------------------------------------------------------------------------------

def _trace_meta(self):
    if self.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {self.ndim}")
    if self.dtype == np.bool_:
        raise DtypeNotImplementedError("\"trace\" not implemented for 'Bool'")
    return MetaArray((), _sum_dtype(self, None))


def _trace_kernel(xp, self):
    _trace_meta(self)
    return xp.asarray(xp.trace(self, dtype=_sum_dtype(self, None)))


def _trace_grad(grad, self_shape):
    n, m = self_shape
    return expand(grad, [n, m]) * eye(n, m, dtype=grad.dtype, device=grad.device)


trace = defop(
    "trace(Tensor self) -> Tensor",
    kernel=_trace_kernel, meta=_trace_meta, supports_complex=True,
    grads={"self": _trace_grad},
    samples=lambda op: [SampleInput("(3,3)", make_arg((3, 3), key=(op, 0))),
                        SampleInput("(2,4)", make_arg((2, 4), key=(op, 1))),
                        SampleInput("(4,2)T", make_arg((4, 2), key=(op, 2), transposed=True)),
                        SampleInput("int64", int_arg((3, 3), (op, 3), -3, 4))],
    torch="torch.trace",
    doc="The sum of the main diagonal of a matrix.")


# ---- linalg_cross, cross ---------------------------------------------------------------------------

def _cross_meta(self, other, dim):
    if self.ndim != other.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    if self.dtype != other.dtype:
        raise DtypeError(f"expected scalar type {scalar_type_name(self.dtype)} but found "
                         f"{scalar_type_name(other.dtype)}")
    d = normalize_dim(dim, self.ndim)
    if self.shape[d] != 3 or other.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. "
                           f"Got {self.shape[d]} and {other.shape[d]}")
    return MetaArray(broadcast_shapes(self.shape, other.shape), self.dtype)


def _cross_kernel(xp, self, other, dim):
    _cross_meta(self, other, dim)
    return xp.cross(self, other, axis=normalize_dim(dim, self.ndim))


linalg_cross = defop(
    "linalg_cross(Tensor self, Tensor other, *, int dim=-1) -> Tensor",
    kernel=_cross_kernel, meta=_cross_meta, supports_complex=True,
    grads={"self": lambda grad, other, dim: linalg_cross(conj_of(other), grad, dim=dim),
           "other": lambda grad, self, dim: linalg_cross(grad, conj_of(self), dim=dim)},
    samples=lambda op: [SampleInput("(3,)", make_arg((3,), key=(op, 0)), make_arg((3,), key=(op, 1))),
                        SampleInput("(2,3) broadcast", make_arg((2, 3), key=(op, 2)), make_arg((1, 3), key=(op, 3))),
                        SampleInput("(3,4) dim=0", make_arg((3, 4), key=(op, 4), transposed=True),
                                    make_arg((3, 4), key=(op, 5)), dim=0),
                        SampleInput("int64", int_arg((2, 3), (op, 6), -3, 4), int_arg((2, 3), (op, 7), -3, 4))],
    torch="torch.linalg.cross",
    doc="The cross product of 3-vectors along dim (broadcasting the other dimensions).")


def _cross(self, other, dim):
    if dim is None:
        sizes = tuple(self.shape)
        if 3 not in sizes:
            raise RuntimeError("no dimension of size 3 in input")
        dim = sizes.index(3)
        warnings.warn("Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass the dim "
                      "explicitly or simply use torch.linalg.cross.\nThe default value of dim will change to agree "
                      "with that of linalg.cross in a future release.", UserWarning, stacklevel=3)
    return linalg_cross(self, other, dim=dim)


cross = defop(
    "cross(Tensor self, Tensor other, int? dim=None) -> Tensor",
    composite=_cross,
    samples=lambda op: [SampleInput("(2,3) dim=1", make_arg((2, 3), key=(op, 0)), make_arg((2, 3), key=(op, 1)), 1),
                        SampleInput("(3,2) dim=-2", make_arg((3, 2), key=(op, 2)), make_arg((3, 2), key=(op, 3)),
                                    dim=-2)],
    torch="torch.cross",
    doc="linalg.cross along dim; without dim, along the first dimension of size 3 (deprecated, as in PyTorch).")


# ---- kron ---------------------------------------------------------------------------------------------

def _kron(self, other):
    nd = max(self.ndim, other.ndim)
    a = [1] * (nd - self.ndim) + list(self.shape)
    b = [1] * (nd - other.ndim) + list(other.shape)
    a_shape = [s for x in a for s in (x, 1)]
    b_shape = [s for x in b for s in (1, x)]
    product = reshape(self, a_shape) * reshape(other, b_shape)
    return _unsafe_view(product, [x * y for x, y in zip(a, b)])


kron = defop(
    "kron(Tensor self, Tensor other) -> Tensor",
    composite=_kron,
    samples=lambda op: [SampleInput("(2,3)x(2,2)", make_arg((2, 3), key=(op, 0)), make_arg((2, 2), key=(op, 1))),
                        SampleInput("(2,3)x(3,)", make_arg((2, 3), key=(op, 2)), make_arg((3,), key=(op, 3))),
                        SampleInput("(2,)x(2,1,2)", make_arg((2,), key=(op, 4)), make_arg((2, 1, 2), key=(op, 5))),
                        SampleInput("int64", int_arg((2, 2), (op, 6), -3, 4), int_arg((2,), (op, 7), -3, 4))],
    torch="torch.kron",
    doc="The Kronecker product: every element of self times a block of other.")


# ---- linear -----------------------------------------------------------------------------------

def _addmm_meta(self, mat1, mat2, beta, alpha):
    if mat1.ndim != 2 or mat2.ndim != 2:
        raise ShapeError(f"{'mat1' if mat1.ndim != 2 else 'mat2'} must be a matrix, got "
                         f"{mat1.ndim if mat1.ndim != 2 else mat2.ndim}-D tensor")
    if mat1.shape[1] != mat2.shape[0]:
        raise ShapeError(f"mat1 and mat2 shapes cannot be multiplied ({mat1.shape[0]}x{mat1.shape[1]} and "
                         f"{mat2.shape[0]}x{mat2.shape[1]})")
    if not (mat1.dtype == mat2.dtype == self.dtype):
        raise DtypeError(f"self and mat2 must have the same dtype, but got {scalar_type_name(self.dtype)} and "
                         f"{scalar_type_name(mat2.dtype)}" if self.dtype != mat2.dtype else
                         f"expected m1 and m2 to have the same dtype, but got: {mat1.dtype} != {mat2.dtype}")
    out = (mat1.shape[0], mat2.shape[1])
    _expand_shape(self.shape, out)      # PyTorch's "The expanded size of the tensor …" for a bad bias
    return MetaArray(out, mat1.dtype)


def _addmm_kernel(xp, self, mat1, mat2, beta, alpha):
    prod = xp.matmul(mat1, mat2)
    if alpha != 1:
        prod = prod * alpha
    if beta == 0:       # NOTE: PyTorch ignores self when beta == 0: nan/inf in it do not propagate
        return prod
    return (prod + (self if beta == 1 else self * beta)).astype(mat1.dtype, copy=False)


# PyTorch's mm_mat1_backward and mm_mat2_backward (FunctionsManual.cpp): a column-major matrix
# (a weight used as `weight.t()`, as linear does) gets a column-major gradient, so that after the
# transpose's backward it is laid out as the weight is and AccumulateGrad keeps it as `.grad`
# with no copy (the gradient layout contract). `geometry`: the matrix's (sizes, strides, offset).
def _column_major(geometry) -> bool:
    sizes, strides, _ = geometry
    return strides[0] == 1 and strides[1] == sizes[0]


# For complex matrices the other factor is conjugated, and alpha (grad @ mat2^H, mat1^H @ grad).
def _mm_mat1_backward(grad, mat2, mat1_geometry, alpha=1):
    mat2 = conj_of(mat2)
    if _column_major(mat1_geometry):
        r = transpose(mm(mat2, transpose(grad, 0, 1)), 0, 1)
    else:
        r = mm(grad, transpose(mat2, 0, 1))
    return r * conj_of(alpha) if alpha != 1 else r


def _mm_mat2_backward(grad, mat1, mat2_geometry, alpha=1):
    mat1 = conj_of(mat1)
    if _column_major(mat2_geometry):
        r = transpose(mm(transpose(grad, 0, 1), mat1), 0, 1)
    else:
        r = mm(transpose(mat1, 0, 1), grad)
    return r * conj_of(alpha) if alpha != 1 else r


def _mm_mat1_backward_array(grad, mat2, mat1_geometry, alpha=1):
    mat2 = conj_of(mat2)
    if _column_major(mat1_geometry):
        r = np.swapaxes(np.matmul(mat2, np.swapaxes(grad, 0, 1)), 0, 1)
    else:
        r = np.matmul(grad, np.swapaxes(mat2, 0, 1))
    return r * conj_of(alpha) if alpha != 1 else r


def _mm_mat2_backward_array(grad, mat1, mat2_geometry, alpha=1):
    mat1 = conj_of(mat1)
    if _column_major(mat2_geometry):
        r = np.swapaxes(np.matmul(np.swapaxes(grad, 0, 1), mat1), 0, 1)
    else:
        r = np.matmul(np.swapaxes(mat1, 0, 1), grad)
    return r * conj_of(alpha) if alpha != 1 else r


addmm = defop(
    "addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
    kernel=checked(_addmm_meta, _addmm_kernel), meta=_addmm_meta, supports_complex=True,
    grads={"self": lambda grad, beta: grad if beta == 1 else grad * conj_of(beta),
           "mat1": lambda grad, mat2, mat1_geometry, alpha: _mm_mat1_backward(grad, mat2, mat1_geometry, alpha),
           "mat2": lambda grad, mat1, mat2_geometry, alpha: _mm_mat2_backward(grad, mat1, mat2_geometry, alpha)},
    array_grads={"self": lambda grad, beta: grad if beta == 1 else grad * conj_of(beta),
                 "mat1": lambda grad, mat2, mat1_geometry, alpha: _mm_mat1_backward_array(grad, mat2, mat1_geometry,
                                                                                          alpha),
                 "mat2": lambda grad, mat1, mat2_geometry, alpha: _mm_mat2_backward_array(grad, mat1, mat2_geometry,
                                                                                          alpha)},
    samples=lambda op: [
        SampleInput("(4,)+(2,3)@(3,4)", make_arg((4,), key=(op, 0)), make_arg((2, 3), key=(op, 1)),
                    make_arg((3, 4), key=(op, 2), transposed=True)),
        SampleInput("(2,1)+..., beta, alpha", make_arg((2, 1), key=(op, 3)), make_arg((2, 3), key=(op, 4)),
                    make_arg((3, 2), key=(op, 5)), beta=0.5, alpha=2.0)],
    torch="torch.addmm", doc="beta * self + alpha * (mat1 @ mat2); the 2-D linear with a bias.")


def _linear(input, weight, bias):
    wt = t(weight)          # ATen's linear: weight.t() (TBackward0), a 1-D weight's too
    if bias is not None and input.ndim == 2:
        return addmm(bias, input, wt)
    if bias is not None and input.ndim >= 3 and bias.ndim == 1 and weight.ndim == 2:
        # PyTorch's _flatten_nd_linear: one addmm over the folded batch, then a view back
        out = addmm(bias, reshape(input, [-1, input.shape[-1]]), wt)
        return reshape(out, list(input.shape[:-1]) + [out.shape[-1]])
    out = matmul(input, wt)
    return out if bias is None else out + bias


def _linear_samples(op):
    return [SampleInput("(2,3),(4,3),(4,)", make_arg((2, 3), key=(op, 0)), make_arg((4, 3), key=(op, 1)),
                        make_arg((4,), key=(op, 2))),
            SampleInput("no bias", make_arg((2, 3), key=(op, 3)), make_arg((4, 3), key=(op, 4))),
            SampleInput("batched (2,2,3)", make_arg((2, 2, 3), key=(op, 5)), make_arg((4, 3), key=(op, 6)),
                        make_arg((4,), key=(op, 7))),
            SampleInput("1-D input", make_arg((3,), key=(op, 8)), make_arg((2, 3), key=(op, 9), transposed=True),
                        make_arg((2,), key=(op, 10)))]


linear = defop(
    "linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor",
    composite=_linear, samples=_linear_samples, torch="torch.nn.functional.linear",
    doc="input @ weight.T + bias; a 2-D input with a bias is one addmm (AddmmBackward0), as in PyTorch.")


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
    run.replay_kernel = kernel      # a replay's shapes and dtypes are the recorded ones, which passed them
    return run


def _pair(op, shapes, transposed=()):
    return [SampleInput(f"{sa}@{sb}", make_arg(sa, key=(op, i, 0), transposed=i in transposed),
                        make_arg(sb, key=(op, i, 1))) for i, (sa, sb) in enumerate(shapes)]


mm = defop(
    "mm(Tensor self, Tensor mat2) -> Tensor",
    kernel=_checked(_mm_meta, lambda xp, self, mat2: xp.matmul(self, mat2)), meta=_mm_meta, supports_complex=True,
    grads={"self": lambda grad, mat2, self_geometry: _mm_mat1_backward(grad, mat2, self_geometry),
           "mat2": lambda grad, self, mat2_geometry: _mm_mat2_backward(grad, self, mat2_geometry)},
    array_grads={"self": lambda grad, mat2, self_geometry: _mm_mat1_backward_array(grad, mat2, self_geometry),
                 "mat2": lambda grad, self, mat2_geometry: _mm_mat2_backward_array(grad, self, mat2_geometry)},
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
    supports_complex=True,
    grads={"self": lambda grad, vec: reshape(grad, [-1, 1]) * reshape(conj_of(vec), [1, -1]),
           "vec": lambda grad, self: mv(transpose(conj_of(self), 0, 1), grad)},
    samples=lambda op: _pair(op, [((2, 3), (3,)), ((3, 2), (2,))], transposed=(1,)),
    torch="torch.mv")


def check_vectors(self, tensor) -> None:
    """Two 1-D tensors of one length, as dot and vdot need them (PyTorch's dot_check's messages)."""
    if self.ndim != 1 or tensor.ndim != 1:
        raise ShapeError(f"1D tensors expected, but got {self.ndim}D and {tensor.ndim}D tensors")
    if self.shape[0] != tensor.shape[0]:
        raise ShapeError(f"inconsistent tensor size, expected tensor [{self.shape[0]}] and src "
                         f"[{tensor.shape[0]}] to have the same number of elements, but got {self.shape[0]} "
                         f"and {tensor.shape[0]} elements respectively")


def _dot_meta(self, tensor):
    check_vectors(self, tensor)
    _same_dtype("dot", self, tensor)
    return MetaArray((), self.dtype)


dot = defop(
    "dot(Tensor self, Tensor tensor) -> Tensor",
    kernel=_checked(_dot_meta, lambda xp, self, tensor: xp.asarray(xp.dot(self, tensor))), meta=_dot_meta,
    supports_complex=True,
    grads={"self": lambda grad, tensor: grad * conj_of(tensor),
           "tensor": lambda grad, self: grad * conj_of(self)},
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
    supports_complex=True,
    grads={"self": lambda grad, mat2: bmm(grad, transpose(conj_of(mat2), 1, 2)),
           "mat2": lambda grad, self: bmm(transpose(conj_of(self), 1, 2), grad)},
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

# ---- outer, baddbmm ------------------------------------------------------------------------------


def _outer(self, vec2):
    for name, t in (("self", self), ("vec2", vec2)):
        if t.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {t.ndim}-D")
    return reshape(self, [-1, 1]) * vec2


outer = defop(
    "outer(Tensor self, Tensor vec2) -> Tensor",
    composite=_outer,
    samples=lambda op: [SampleInput("(3)x(4)", make_arg((3,), key=(op, 0)), make_arg((4,), key=(op, 1))),
                        SampleInput("(1)x(2)", make_arg((1,), key=(op, 2)), make_arg((2,), key=(op, 3)))],
    torch="torch.outer", doc="self[i] * vec2[j]: the outer product of two vectors.")


ger = defop(
    "ger(Tensor self, Tensor vec2) -> Tensor",
    composite=lambda self, vec2: outer(self, vec2),
    samples=lambda op: [SampleInput("(3)x(4)", make_arg((3,), key=(op, 0)), make_arg((4,), key=(op, 1)))],
    torch="torch.ger", doc="outer, BLAS's name.")


def _baddbmm_meta(self, batch1, batch2, beta=1, alpha=1):
    if batch1.ndim != 3 or batch2.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor" if batch1.ndim != 3 else "batch2 must be a 3D tensor")
    b, n, k = batch1.shape
    if batch2.shape[0] != b or batch2.shape[1] != k:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{b}, {k}] but got: "
                           f"[{batch2.shape[0]}, {batch2.shape[1]}].")
    if not (self.dtype == batch1.dtype == batch2.dtype):
        raise RuntimeError(f"expected scalar type {batch1.dtype} but found "
                           f"{self.dtype if self.dtype != batch1.dtype else batch2.dtype}")
    out = (b, n, batch2.shape[2])
    if broadcast_shapes(self.shape, out) != out:
        raise RuntimeError(f"The expanded size of the tensor ({out[-1]}) must match the existing size "
                           f"({self.shape[-1]}) at non-singleton dimension 2.  Target sizes: {list(out)}.  "
                           f"Tensor sizes: {list(self.shape)}")
    return MetaArray(out, batch1.dtype)


def _baddbmm_kernel(xp, self, batch1, batch2, beta, alpha):
    prod = xp.matmul(batch1, batch2)
    if alpha != 1:
        prod = prod * alpha
    if beta == 0:       # NOTE: as addmm, PyTorch ignores self when beta == 0 (nan in it does not propagate)
        return prod.astype(batch1.dtype, copy=False)
    return (prod + (self if beta == 1 else self * beta)).astype(batch1.dtype, copy=False)


def _scaled(t, factor):
    return t if factor == 1 else t * factor


baddbmm = defop(
    "baddbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
    kernel=checked(_baddbmm_meta, _baddbmm_kernel), meta=_baddbmm_meta, supports_complex=True,
    grads={"self": lambda grad, beta: _scaled(grad, conj_of(beta)),
           "batch1": lambda grad, batch2, alpha: _scaled(bmm(grad, conj_of(transpose(batch2, 1, 2))), conj_of(alpha)),
           "batch2": lambda grad, batch1, alpha: _scaled(bmm(conj_of(transpose(batch1, 1, 2)), grad), conj_of(alpha))},
    samples=lambda op: [
        SampleInput("(2,3,4)+(2,3,2)@(2,2,4)", make_arg((2, 3, 4), key=(op, 0)), make_arg((2, 3, 2), key=(op, 1)),
                    make_arg((2, 2, 4), key=(op, 2))),
        SampleInput("broadcast self, beta, alpha", make_arg((4,), key=(op, 3)), make_arg((2, 3, 2), key=(op, 4)),
                    make_arg((2, 2, 4), key=(op, 5)), beta=0.5, alpha=-2.0)],
    torch="torch.baddbmm", doc="beta * self + alpha * (batch1 @ batch2) for 3-D batches; self broadcasts.")


# ---- einsum ----------------------------------------------------------------------------------------

_LETTERS = string.ascii_letters


def _parse(equation: str):
    """(input subscripts, output subscripts or None) with spaces removed; '...' kept."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    for ch in eq:
        if ch not in _LETTERS and ch not in ".,->":
            raise RuntimeError(f"einsum(): invalid subscript given at index {equation.index(ch)} in the equation "
                               f"string, subscripts must be in [a-zA-Z]")
    return lhs.split(","), (rhs if arrow else None)


def _normalize(equation: str, shapes):
    """An explicit equation (no '...', explicit output) for operands of `shapes`,
    and each subscript's size (size-1 operands are broadcast to it)."""
    terms, out = _parse(equation)
    if len(terms) != len(shapes):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation"
                           if len(shapes) > len(terms) else
                           "einsum(): fewer operands were provided than specified in the equation")
    used = set(equation) & set(_LETTERS)
    spare = [c for c in _LETTERS if c not in used]
    n_ell = 0
    for term, shape in zip(terms, shapes):
        letters = len(term.replace("...", ""))
        if "..." in term:
            n_ell = max(n_ell, len(shape) - letters)
        elif letters != len(shape):
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({letters}) does not match the "
                               f"number of dimensions ({len(shape)}) for operand {terms.index(term)} and no "
                               f"ellipsis was given")
    ell = "".join(spare[:n_ell])
    explicit = []
    for term, shape in zip(terms, shapes):
        if "..." in term:
            k = len(shape) - len(term.replace("...", ""))
            term = term.replace("...", ell[n_ell - k:] if k else "")
        explicit.append(term)
    if out is None:
        counts = {c: sum(t.count(c) for t in explicit) for c in set("".join(explicit))}
        out = ell + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in ell))
    else:
        out = out.replace("...", ell)
    seen = {}
    for term, shape in zip(explicit, shapes):
        for c, n in zip(term, shape):
            seen.setdefault(c, set()).add(n)
    size = {}
    for c, ns in seen.items():
        big = ns - {1}
        if len(big) > 1:
            raise RuntimeError(f"einsum(): operands do not broadcast with remapped shapes: subscript '{c}' has "
                               f"sizes {sorted(big)}")
        size[c] = big.pop() if big else 1
    for c in out:
        if c not in size:
            raise RuntimeError(f"einsum(): output subscript {c} does not appear in the equation for any input "
                               f"operand")
        if out.count(c) > 1:
            raise RuntimeError(f"einsum(): output subscript {c} appears more than once in the output")
    return ",".join(explicit) + "->" + out, explicit, size


def _einsum(equation, tensors):
    if not tensors:
        raise RuntimeError("einsum(): must provide at least one operand")
    eq, terms, size = _normalize(equation, [tuple(t.shape) for t in tensors])
    operands = []
    for term, t in zip(terms, tensors):
        want = [size[c] for c in term]
        operands.append(t if list(t.shape) == want else expand(t, want))
    return _einsum_op(eq, operands)


def _einsum_meta(equation, tensors):
    terms, out = _parse(equation)
    dt = tensors[0].dtype
    for t in tensors:
        if t.dtype != dt:
            raise RuntimeError(f"expected scalar type {dt} but found {t.dtype}")
    size = {}
    for term, t in zip(terms, tensors):
        size.update(zip(term, t.shape))
    return MetaArray(tuple(size[c] for c in out), dt)


def _einsum_kernel(xp, equation, tensors):
    _einsum_meta(equation, tensors)
    return xp.asarray(xp.einsum(equation, *tensors, optimize=len(tensors) > 2))


def _einsum_grads(grad, equation, tensors):
    terms, out = _parse(equation)
    size = {}
    for term, t in zip(terms, tensors):
        size.update(zip(term, t.shape))
    spare = iter(c for c in _LETTERS if c not in equation)
    grads = []
    for k, (term, t) in enumerate(zip(terms, tensors)):
        target, eyes, eye_terms = "", [], []
        for c in term:
            if c in target:                 # a repeated subscript: its diagonal, through an identity matrix
                fresh = next(spare)
                eyes.append(_identity(size[c], grad))
                eye_terms.append(c + fresh)
                c = fresh
            target += c
        others = [s for j, s in enumerate(terms) if j != k]
        present = set(out).union(*others, *eye_terms)
        available = "".join(c for c in target if c in present)
        # (the other operands conjugated for complex ones: the gradient of a product is grad * other.conj())
        g = _einsum_op(",".join([out] + others + eye_terms) + "->" + available,
                       [grad] + [conj_of(x) for j, x in enumerate(tensors) if j != k] + eyes)
        if available != target:            # subscripts only operand k has: summed, so the gradient is constant
            g = expand(reshape(g, [size[c] if c in present else 1 for c in target]), [size[c] for c in target])
        grads.append(g)
    return grads


def _identity(n, like):
    from ..creation import tensor
    return tensor(np.eye(n), dtype=like.dtype, device=like.device)


_einsum_op = defop(
    "_einsum(str equation, Tensor[] tensors) -> Tensor",
    kernel=_einsum_kernel, meta=_einsum_meta, supports_complex=True,
    grads={"tensors": _einsum_grads}, backward_name="EinsumBackward0",
    samples=lambda op: [SampleInput("ij,jk->ik", "ij,jk->ik", [make_arg((2, 3), key=(op, 0)),
                                                              make_arg((3, 2), key=(op, 1))])],
    torch="torch.einsum",
    doc="einsum on an explicit equation (no '...', explicit output, no broadcasting); einsum's kernel.")


def _einsum_samples(op):
    def args(*shapes, k=0):
        return [make_arg(s, key=(op, k, i)) for i, s in enumerate(shapes)]
    return [SampleInput("matmul", "ij,jk->ik", args((2, 3), (3, 4), k=0)),
            SampleInput("batched bmm", "bij,bjk->bik", args((2, 2, 3), (2, 3, 2), k=1)),
            SampleInput("trace", "ii", args((3, 3), k=2)),
            SampleInput("diagonal", "ii->i", args((3, 3), k=3)),
            SampleInput("sum over a subscript only one operand has", "ij,j->", args((2, 3), (3,), k=4)),
            SampleInput("implicit output", "ij,jk", args((2, 3), (3, 2), k=5)),
            SampleInput("ellipsis broadcast", "...ij,...jk->...ik", args((2, 1, 2, 3), (3, 3, 2), k=6)),
            SampleInput("outer, spaces", "i, j -> ij", args((2,), (3,), k=7)),
            SampleInput("three operands", "ab,bc,cd->ad", args((2, 3), (3, 2), (2, 2), k=8)),
            SampleInput("transpose", "ij->ji", args((2, 3), k=9)),
            SampleInput("size-1 broadcast", "ij,ij->i", args((2, 1), (2, 3), k=10))]


einsum = defop(
    "einsum(str equation, Tensor[] tensors) -> Tensor",
    composite=_einsum, samples=_einsum_samples,
    torch="torch.einsum",
    doc="Einstein summation: einsum('ij,jk->ik', a, b) or einsum('ij,jk->ik', [a, b]). Subscripts a-z/A-Z, "
        "'...' for broadcast dimensions, an implicit output (subscripts used once, in order) without '->'.")


def _operands_as_arguments(generated):
    """torch.einsum's calling forms: the operands one by one, or one list of them."""
    def einsum(equation, *tensors):
        if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
            tensors = tensors[0]
        return generated(equation, list(tensors))
    einsum.__name__ = einsum.__qualname__ = generated.__name__
    einsum.__doc__ = generated.__doc__
    return einsum


einsum = get_info("einsum").entry.function = _operands_as_arguments(einsum)


# ---- bilinear ---------------------------------------------------------------------------------

def _dim_size(t, d):
    if not -t.dim() <= d < t.dim():
        raise IndexError(f"Dimension out of range (expected to be in range of [{-t.dim()}, {t.dim() - 1}], but "
                         f"got {d})")
    return t.shape[d]


def _bilinear(input1, input2, weight, bias):
    # ATen's checks; the product one einsum (ATen's is _trilinear)
    tensors = [("input1", input1), ("input2", input2), ("weight", weight)] + ([("bias", bias)] if bias is not None
                                                                            else [])
    if len({t.dtype for _, t in tensors}) != 1:
        raise RuntimeError("All tensors must have the same dtype, got " + ", ".join(
            f"{name}: {c_type_name(t.dtype.np)}" for name, t in tensors))
    if input1.dim() != input2.dim():
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.dim()} and {input2.dim()}")
    for i in range(input1.dim() - 1):
        if input1.shape[i] != input2.shape[i]:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {i}: got {input1.shape[i]} "
                               f"and {input2.shape[i]}")
    if _dim_size(input1, -1) != _dim_size(weight, 1):
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got {input1.shape[-1]} but "
                           f"expected {weight.shape[1]}")
    if _dim_size(input2, -1) != _dim_size(weight, 2):
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got {input2.shape[-1]} but "
                           f"expected {weight.shape[2]}")
    if bias is not None and _dim_size(bias, 0) != weight.shape[0]:
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got {bias.shape[0]} but expected "
                           f"{weight.shape[0]}")
    out = einsum("...i,oij,...j->...o", input1, weight, input2)
    return out if bias is None else out + bias


bilinear = defop(
    "bilinear(Tensor input1, Tensor input2, Tensor weight, Tensor? bias=None) -> Tensor", composite=_bilinear,
    samples=lambda op: [
        SampleInput("(2,3)x(2,4)", make_arg((2, 3), key=(op, 0)), make_arg((2, 4), key=(op, 1)),
                    make_arg((5, 3, 4), key=(op, 2)), make_arg((5,), key=(op, 3))),
        SampleInput("batched, no bias", make_arg((2, 2, 3), key=(op, 4)), make_arg((2, 2, 2), key=(op, 5)),
                    make_arg((4, 3, 2), key=(op, 6)))],
    torch="torch.bilinear",
    doc="y_o = x1ᵀ A_o x2 + b_o over the last dims of input1 and input2, weight (out, in1, in2).")
