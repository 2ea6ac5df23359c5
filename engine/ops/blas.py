"""BLAS's "add a product" forms beside addmm and baddbmm (linalg.py): addmv (a matrix times a
vector, BLAS gemv), addr (an outer product, BLAS ger) and addbmm (a sum of matrix products
over a batch), each `beta * self + alpha * product`.

Kernels of their own with derivatives.yaml's gradients (AddmvBackward0, AddrBackward0,
AddbmmBackward0), written with mv, ger and bmm so every order follows. As PyTorch's, a
beta of 0 ignores self (NaN in it does not propagate); self broadcasts to the result, and
autograd sums its gradient back to self's shape.
"""
from __future__ import annotations

from ..backends.meta import MetaArray
from ..errors import ShapeError
from ..messages import scalar_type_name
from ._common import conj_of
from .registry import defop
from .samples import SampleInput, make_arg
from .linalg import bmm, ger, mv
from .shape.view import expand, t, transpose, unsqueeze
from ..shapes import broadcast_shapes


def _scaled(grad, factor):
    return grad if factor == 1 else grad * factor


def _check_dtypes(name, *tensors):
    dtype = tensors[0].dtype
    for x in tensors[1:]:
        if x.dtype != dtype:
            raise RuntimeError(f"{name}: expected all tensors to have the same dtype, but got "
                               f"{scalar_type_name(dtype)} and {scalar_type_name(x.dtype)}")


def _check_self(self, out):
    if broadcast_shapes(self.shape, out) != tuple(out):
        raise ShapeError(f"The expanded size of the tensor ({out[-1]}) must match the existing size "
                         f"({self.shape[-1] if self.ndim else 1}) at non-singleton dimension {len(out) - 1}.  "
                         f"Target sizes: {list(out)}.  Tensor sizes: {list(self.shape)}")


def _plus_self(prod, self, beta, alpha, dtype):
    if alpha != 1:
        prod = prod * alpha
    if beta == 0:
        return prod.astype(dtype, copy=False)
    return (prod + (self if beta == 1 else self * beta)).astype(dtype, copy=False)


# ---- addmv ----------------------------------------------------------------------------------------

def _addmv_meta(self, mat, vec, beta=1, alpha=1):
    if mat.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {self.ndim}, {mat.ndim}, {vec.ndim}")
    if mat.shape[1] != vec.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({self.shape[0] if self.ndim else 1}), mat "
                           f"({mat.shape[0]}x{mat.shape[1]}), vec ({vec.shape[0]})")
    _check_dtypes("addmv", self, mat, vec)
    _check_self(self, (mat.shape[0],))
    return MetaArray((mat.shape[0],), mat.dtype)


def _addmv_kernel(xp, self, mat, vec, beta, alpha):
    _addmv_meta(self, mat, vec)
    return _plus_self(xp.matmul(mat, vec), self, beta, alpha, mat.dtype)


def _product_samples(shapes):
    def samples(op):
        self_shape, a_shape, b_shape = shapes
        return [SampleInput("plain", make_arg(self_shape, key=(op, 0)), make_arg(a_shape, key=(op, 1)),
                            make_arg(b_shape, key=(op, 2))),
                SampleInput("beta, alpha, broadcast self", make_arg((1,), key=(op, 3)), make_arg(a_shape, key=(op, 4)),
                            make_arg(b_shape, key=(op, 5)), beta=0.5, alpha=2.0),
                SampleInput("beta=0", make_arg(self_shape, key=(op, 6)), make_arg(a_shape, key=(op, 7),
                                                                                  transposed=len(a_shape) == 2),
                            make_arg(b_shape, key=(op, 8)), beta=0)]
    return samples


addmv = defop(
    "addmv(Tensor self, Tensor mat, Tensor vec, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
    kernel=_addmv_kernel, meta=_addmv_meta, supports_complex=True,
    grads={"self": lambda grad, beta: _scaled(grad, conj_of(beta)),
           "mat": lambda grad, vec, alpha: _scaled(ger(grad, conj_of(vec)), conj_of(alpha)),
           "vec": lambda grad, mat, alpha: _scaled(mv(conj_of(t(mat)), grad), conj_of(alpha))},
    samples=_product_samples(((3,), (3, 4), (4,))), torch="torch.addmv",
    doc="beta * self + alpha * (mat @ vec).")


# ---- addr -----------------------------------------------------------------------------------------

def _addr_meta(self, vec1, vec2, beta=1, alpha=1):
    for name, v in (("vec1", vec1), ("vec2", vec2)):
        if v.ndim != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {name}, but got {v.ndim}-D")
    _check_dtypes("addr", self, vec1, vec2)
    out = (vec1.shape[0], vec2.shape[0])
    _check_self(self, out)
    return MetaArray(out, vec1.dtype)


def _addr_kernel(xp, self, vec1, vec2, beta, alpha):
    _addr_meta(self, vec1, vec2)
    return _plus_self(xp.multiply.outer(vec1, vec2), self, beta, alpha, vec1.dtype)


addr = defop(
    "addr(Tensor self, Tensor vec1, Tensor vec2, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
    kernel=_addr_kernel, meta=_addr_meta,
    grads={"self": lambda grad, beta: _scaled(grad, beta),
           "vec1": lambda grad, vec2, alpha: _scaled(mv(grad, vec2), alpha),
           "vec2": lambda grad, vec1, alpha: _scaled(mv(t(grad), vec1), alpha)},
    samples=_product_samples(((3, 4), (3,), (4,))), torch="torch.addr",
    doc="beta * self + alpha * outer(vec1, vec2).")


# ---- addbmm ---------------------------------------------------------------------------------------

def _addbmm_meta(self, batch1, batch2, beta=1, alpha=1):
    if batch1.ndim != 3 or batch2.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor" if batch1.ndim != 3 else "batch2 must be a 3D tensor")
    if batch1.shape[0] != batch2.shape[0]:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got {batch1.shape[0]} and "
                           f"{batch2.shape[0]}")
    if batch1.shape[2] != batch2.shape[1]:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({batch1.shape[1]}x{batch1.shape[2]} and "
                           f"{batch2.shape[1]}x{batch2.shape[2]})")
    _check_dtypes("addbmm", self, batch1, batch2)
    out = (batch1.shape[1], batch2.shape[2])
    _check_self(self, out)
    return MetaArray(out, batch1.dtype)


def _addbmm_kernel(xp, self, batch1, batch2, beta, alpha):
    _addbmm_meta(self, batch1, batch2)
    return _plus_self(xp.matmul(batch1, batch2).sum(0), self, beta, alpha, batch1.dtype)


def _grad_per_batch(grad, batch1, batch2):
    # derivatives.yaml: grad.unsqueeze(0).expand({b, n, p}), every batch's product receiving it
    return expand(unsqueeze(grad, 0), [batch1.shape[0], batch1.shape[1], batch2.shape[2]])


addbmm = defop(
    "addbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
    kernel=_addbmm_kernel, meta=_addbmm_meta,
    grads={"self": lambda grad, beta: _scaled(grad, beta),
           "batch1": lambda grad, batch1, batch2, alpha: _scaled(
               bmm(_grad_per_batch(grad, batch1, batch2), transpose(batch2, 1, 2)), alpha),
           "batch2": lambda grad, batch1, batch2, alpha: _scaled(
               bmm(transpose(batch1, 1, 2), _grad_per_batch(grad, batch1, batch2)), alpha)},
    samples=_product_samples(((3, 4), (2, 3, 5), (2, 5, 4))), torch="torch.addbmm",
    doc="beta * self + alpha * (the sum over the batch of batch1[i] @ batch2[i]).")
