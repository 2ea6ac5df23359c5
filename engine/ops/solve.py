"""Linear systems (ATen's BatchLinearAlgebra): linalg_solve_ex, the kernel (PyTorch's
_linalg_solve_ex, whose node is LinalgSolveExBackward0), and linalg_solve over it.

A is a batch of square matrices, B a batch of matrices or, where B has A's shape without its
last dimension (or is 1-D), of vectors (PyTorch's linalg_solve_is_vector_rhs); their batch
dimensions broadcast. The gradients are derivatives.yaml's linalg_solve_backward, written with
linalg_solve itself so every order follows: gB = A⁻ᴴ gX (X A⁻ᴴ on the right) and
gA = -gB Xᴴ (-Xᴴ gB on the right).
"""
from __future__ import annotations

import numpy as np

from ..backends.meta import MetaArray
from ..errors import DtypeError
from ..messages import scalar_type_name
from ..shapes import broadcast_shapes
from .determinants import _invertible, _mT, _square_check
from .linalg import matmul
from .registry import defop
from .reduce.selection import _named_results
from .samples import SampleInput, make_arg
from .shape.view import squeeze, unsqueeze


def _is_vector_rhs(A, B) -> bool:
    return B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))


def _solve_shape(A, B, left):
    """The result's shape, after PyTorch's checks (linalg_solve_ex's _linalg_solve_ex_out)."""
    _square_check("solve", A)
    if A.dtype != B.dtype:
        raise DtypeError(f"linalg.solve: Expected A and B to have the same dtype, but found A of type "
                         f"{scalar_type_name(A.dtype)} and B of type {scalar_type_name(B.dtype)} instead")
    vector = _is_vector_rhs(A, B)
    if vector and not left:
        raise RuntimeError("linalg.solve: Vector broadcasting of the left hand side is not supported for left=False. "
                           "In this case linalg.solve is equivalent to B / A.squeeze(-1)")
    b = tuple(B.shape) + (1,) if vector else tuple(B.shape)
    if len(b) < 2:
        raise RuntimeError("linalg.solve: The input tensor B must have at least 2 dimensions.")
    n = A.shape[-1]
    if (b[-2] if left else b[-1]) != n:
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({n}x{n} and {b[-2]}x{b[-1]})")
    batch = broadcast_shapes(tuple(A.shape[:-2]), b[:-2])
    return batch + (b[-2:-1] if vector else b[-2:]), batch


def _solve_ex_meta(A, B, left=True, check_errors=False):
    shape, _ = _solve_shape(A, B, left)
    # info is the LU factorization's: one per matrix of A, not of the broadcast batch
    return MetaArray(shape, A.dtype), MetaArray(tuple(A.shape[:-2]), np.dtype(np.int32))


def _solve_ex_kernel(xp, A, B, left, check_errors):
    shape, batch = _solve_shape(A, B, left)
    vector = _is_vector_rhs(A, B)
    b = B[..., None] if vector else B
    if not left:                     # X A = B is Aᵀ Xᵀ = Bᵀ
        A, b = xp.swapaxes(A, -1, -2), xp.swapaxes(b, -1, -2)
    info = xp.zeros(A.shape[:-2], dtype=np.int32)
    try:
        x = xp.linalg.solve(xp.broadcast_to(A, batch + A.shape[-2:]), xp.broadcast_to(b, batch + b.shape[-2:]))
    except np.linalg.LinAlgError:
        # LAPACK's getrf reports a singular U; PyTorch's solve_ex returns info > 0 there and
        # linalg_solve raises. NumPy stops at the first singular matrix of a batch: find them all,
        # and solve with the others (NaN where A is singular).
        if check_errors:
            raise RuntimeError("torch.linalg.solve: The solver failed because the input matrix is singular.") from None
        for index in np.ndindex(*A.shape[:-2]):
            try:
                xp.linalg.inv(A[index])
            except np.linalg.LinAlgError:
                info[index] = 1
        singular = (info != 0)[..., None, None]
        A = xp.where(singular, xp.eye(A.shape[-1], dtype=A.dtype), A)
        x = xp.linalg.solve(xp.broadcast_to(A, batch + A.shape[-2:]), xp.broadcast_to(b, batch + b.shape[-2:]))
        x = xp.where(singular, np.nan, x)
    if not left:
        x = xp.swapaxes(x, -1, -2)
    if vector:
        x = x[..., 0]
    return xp.ascontiguousarray(x).astype(A.dtype, copy=False).reshape(shape), info


def _solve_grads(grads, A, B, result, left):
    """(gA, gB) of linalg_solve_backward; the vector case as a one-column matrix."""
    vector = _is_vector_rhs(A, B)
    gX, X = grads[0], result[0]
    if vector:
        gX, X = unsqueeze(gX, -1), unsqueeze(X, -1)
    if left:
        gB = linalg_solve(_mT(A), gX)
        gA = -matmul(gB, _mT(X))
    else:
        gB = linalg_solve(_mT(A), gX, left=False)
        gA = -matmul(_mT(X), gB)
    return gA, (squeeze(gB, -1) if vector else gB)


def _solve_samples(op):
    A = _invertible(op, (3, 3))
    return [SampleInput("(3,3) (3,2)", A, make_arg((3, 2), key=(op, "B"))),
            SampleInput("vector (3,)", A, make_arg((3,), key=(op, "b"))),
            SampleInput("batch (2,3,3) vector (2,3)", _invertible(op, (2, 3, 3)), make_arg((2, 3), key=(op, "bb"))),
            SampleInput("broadcast (3,3) (2,3,1)", A, make_arg((2, 3, 1), key=(op, "B3"))),
            SampleInput("left=False (2,3)", A, make_arg((2, 3), key=(op, "Br")), left=False),
            SampleInput("(3,3)T", _mT(_invertible(op, (3, 3), 2)).detach().requires_grad_(),
                        make_arg((3, 4), key=(op, "B4"), transposed=True))]


linalg_solve_ex = _named_results(defop(
    "linalg_solve_ex(Tensor A, Tensor B, *, bool left=True, bool check_errors=False) -> (Tensor result, Tensor info)",
    kernel=_solve_ex_kernel, meta=_solve_ex_meta,
    grads={"A": lambda grads, A, B, result, left: _solve_grads(grads, A, B, result, left)[0],
           "B": lambda grads, A, B, result, left: _solve_grads(grads, A, B, result, left)[1]},
    samples=_solve_samples, torch="torch.linalg.solve_ex",
    doc="(X, info): X solves A X = B (X A = B with left=False) for square A; LAPACK's info (0: A invertible)."),
    "linalg_solve_ex", fields=("result", "info"))


def _solve(A, B, left=True):
    # PyTorch's linalg_solve checks solve_ex's info; the kernel checks it here (check_errors), so that a
    # meta tensor, whose info has no values, passes
    return linalg_solve_ex(A, B, left=left, check_errors=True)[0]


linalg_solve = defop("linalg_solve(Tensor A, Tensor B, *, bool left=True) -> Tensor", composite=_solve,
                     samples=_solve_samples, torch="torch.linalg.solve",
                     doc="X with A X = B (X A = B with left=False); an error where A is singular.")
