"""The LU factorization (ATen's BatchLinearAlgebra): linalg_lu_factor_ex, the kernel (LAPACK's
getrf: A = P L U with partial pivoting), linalg_lu_factor over it, linalg_lu (P, L, U), lu_unpack
(the packed LU and pivots to P, L, U), linalg_lu_solve, and torch's Python functions lu and
lu_solve (deprecated there, kept for old code).

As LAPACK's and PyTorch's: `pivots` are int32 and 1-based (row i was swapped with row
pivots[i] - 1, in order), `info` is 0 or the first i (1-based) with U[i, i] = 0; A may be wide or
tall (k = min(m, n) pivots) and batched. Without pivoting (`pivot=False`) PyTorch factors on CUDA
only: on the CPU it is PyTorch's error. The factorization runs on the array library (a loop over
the k columns, each step vectorized over the batch), so it runs on every backend.

The gradients are derivatives.yaml's: linalg_lu_backward (L's and U's gradients pulled back
through the two triangular factors, the extra block of a wide U or a tall L passed through),
lu_factor_ex_backward (the packed gradient split into L's and U's), lu_unpack_backward (written
back into the packed places), and linalg_lu_solve's (B's is another lu_solve; LU's comes from A's,
A = P L U). Written with agrad ops (linalg_solve_triangular, lu_unpack, linalg_lu_solve), so
every order follows.
"""
from __future__ import annotations

import warnings

import numpy as np

from ..backends.meta import MetaArray
from ..creation import zeros
from ..errors import DtypeError, DtypeNotImplementedError
from ..messages import scalar_type_name
from ..shapes import broadcast_shapes
from .determinants import _invertible, _mH, _mT
from .linalg import matmul
from ._common import _named_results, host
from .registry import defop
from .samples import SampleInput, make_arg
from .shape.diagonal import tril, triu
from .shape.join import cat
from .solve import _substitute, linalg_solve_triangular

__all__ = ["lu", "lu_solve"]

_INT32 = np.dtype(np.int32)
_NO_PIVOTING = "linalg.lu_factor: LU without pivoting is not implemented on the CPU"


def _check_factorable(name, A):
    if A.ndim < 2:
        raise RuntimeError(f"torch.{name}: Expected tensor with 2 or more dimensions. Got size: "
                           f"{list(A.shape)} instead")
    if A.dtype not in (np.float32, np.float64, np.complex64, np.complex128):
        raise DtypeNotImplementedError(f"\"lu_cpu\" not implemented for '{scalar_type_name(A.dtype)}'")


# ---- the factorization -------------------------------------------------------------------------

def _getrf(xp, A, pivot):
    """(LU, pivots, info) of LAPACK's getrf, batched: at step j the row of the largest |A[i, j]|, i >= j
    (the first of equals, as idamax; |Re| + |Im| for a complex A, as izamax), is swapped into row j, then the column below is divided by the
    pivot and the trailing block updated. A zero pivot (a column of zeros) is left as it is and noted in
    info, as getrf does."""
    m, n = A.shape[-2:]
    k = min(m, n)
    batch = A.shape[:-2]
    a = xp.array(A, copy=True)
    pivots = xp.zeros(batch + (k,), dtype=_INT32)
    info = xp.zeros(batch, dtype=_INT32)
    rows = xp.arange(m)
    for j in range(k):
        if pivot:
            column = a[..., j:, j]
            size = xp.abs(column.real) + xp.abs(column.imag) if column.dtype.kind == "c" else xp.abs(column)
            p = j + xp.argmax(size, axis=-1)
            swap = xp.where(rows == j, p[..., None], xp.where(rows == p[..., None], j, rows))
            a = xp.take_along_axis(a, swap[..., None], axis=-2)
            pivots[..., j] = (p + 1).astype(_INT32)
        else:
            pivots[..., j] = j + 1
        d = a[..., j, j]
        singular = d == 0
        info = xp.where((info == 0) & singular, j + 1, info).astype(_INT32)
        if j + 1 == m:          # (no rows below: nothing to write, and dask refuses an empty assignment)
            continue
        below = a[..., j + 1:, j] / xp.where(singular, 1, d)[..., None]
        a[..., j + 1:, j] = below
        if j + 1 < n:
            a[..., j + 1:, j + 1:] = a[..., j + 1:, j + 1:] - below[..., :, None] * a[..., j, None, j + 1:]
    return a, pivots, info


def _lu_factor_ex_meta(A, pivot=True, check_errors=False):
    _check_factorable("lu_factor", A)
    k = min(A.shape[-2:])
    return MetaArray(A.shape, A.dtype), MetaArray(A.shape[:-2] + (k,), _INT32), MetaArray(A.shape[:-2], _INT32)


def _singular_message(name, info):
    """PyTorch's error for the first matrix of a batch whose U has a zero on its diagonal."""
    bad = np.argwhere(np.asarray(info) != 0)
    index = tuple(bad[0])
    batch = f"(Batch element {int(np.ravel_multi_index(index, info.shape))}): " if info.ndim else ""
    i = int(np.asarray(info)[index])
    return (f"torch.{name}: {batch}U[{i},{i}] is zero and using it on lu_solve would result in a division by "
            f"zero. If you still want to perform the factorization, consider calling linalg.lu(A, pivot) or "
            f"linalg.lu_factor_ex(A, pivot)")


def _lu_factor_ex_kernel(xp, A, pivot, check_errors):
    _lu_factor_ex_meta(A, pivot, check_errors)
    if not pivot and xp is np:
        raise RuntimeError(_NO_PIVOTING)
    LU, pivots, info = _getrf(xp, A, pivot)
    if check_errors and bool((info != 0).any()):
        raise RuntimeError(_singular_message("linalg.lu_factor_ex", host(info)))
    return LU, pivots, info


def _unpacked(LU, pivots, pivot):
    """P, L, U of a packed factorization (lu_unpack's; P only with `pivot`)."""
    P, L, U = lu_unpack(LU, pivots, True, pivot)
    return P, L, U


def _lu_backward(gL, gU, P, L, U, pivot):
    """derivatives.yaml's linalg_lu_backward: A = P L U, L (m, k) unit lower, U (k, n) upper.
    Square: gA = P L⁻ᴴ [(Lᴴ gL)∘1_L + (gU Uᴴ)∘1_U] U⁻ᴴ; a wide U's last n - k columns and a tall
    L's last m - k rows pass their gradients straight through."""
    m, n = L.shape[-2], U.shape[-1]
    k = min(m, n)
    if m == n:
        gA = tril(matmul(_mH(L), gL), -1) + triu(matmul(gU, _mH(U)))
        gA = linalg_solve_triangular(_mH(U), gA, upper=False, left=False)
        gA = linalg_solve_triangular(_mH(L), gA, upper=True, left=True, unitriangular=True)
    elif m < n:                 # wide: U = [U1 U2], U1 square
        U1 = U[..., :, :k]
        gA = tril(matmul(_mH(L), gL) - matmul(triu(gU), _mH(U)), -1)
        gA = linalg_solve_triangular(_mH(U1), gA, upper=False, left=False)
        gA = cat([gA + triu(gU[..., :, :k]), gU[..., :, k:]], -1)
        gA = linalg_solve_triangular(_mH(L), gA, upper=True, left=True, unitriangular=True)
    else:                       # tall: L = [L1; L2], L1 square
        L1 = L[..., :k, :]
        gA = triu(matmul(gU, _mH(U)) - matmul(_mH(L), tril(gL, -1)))
        gA = linalg_solve_triangular(_mH(L1), gA, upper=True, left=True, unitriangular=True)
        gA = cat([gA + tril(gL[..., :k, :], -1), gL[..., k:, :]], -2)
        gA = linalg_solve_triangular(_mH(U), gA, upper=False, left=False)
    return matmul(P, gA) if pivot else gA


def _lu_factor_ex_grad(grads, result, pivot):
    """derivatives.yaml's lu_factor_ex_backward: the packed gradient is L's below the diagonal and U's
    on and above it."""
    LU, pivots = result[0], result[1]
    P, L, U = _unpacked(LU, pivots, pivot)
    k = min(LU.shape[-2:])
    g = grads[0]
    return _lu_backward(g[..., :, :k], g[..., :k, :], P, L, U, pivot)


def _square_samples(op):
    return [SampleInput("(3,3)", _invertible(op, (3, 3))),
            SampleInput("batch (2,4,4)", _invertible(op, (2, 4, 4), 1)),
            SampleInput("(3,3)T", _mT(_invertible(op, (3, 3), 2)).detach().requires_grad_())]


def _lu_samples(op):
    return _square_samples(op) + [SampleInput("wide (3,5)", make_arg((3, 5), key=(op, "wide"))),
                                  SampleInput("tall batch (2,5,3)", make_arg((2, 5, 3), key=(op, "tall"))),
                                  SampleInput("pivot=True kw", make_arg((4, 4), key=(op, "kw")), pivot=True)]


linalg_lu_factor_ex = _named_results(defop(
    "linalg_lu_factor_ex(Tensor A, *, bool pivot=True, bool check_errors=False) "
    "-> (Tensor LU, Tensor pivots, Tensor info)",
    kernel=_lu_factor_ex_kernel, meta=_lu_factor_ex_meta, supports_complex=True,
    grads={"A": _lu_factor_ex_grad},
    samples=_lu_samples, torch="torch.linalg.lu_factor_ex",
    doc="(LU, pivots, info): A = P L U packed in one matrix (L's unit diagonal implied), LAPACK's 1-based "
        "int32 pivots, info 0 or the first zero of U's diagonal."),
    "linalg_lu_factor_ex")


def _lu_factor(A, pivot=True):
    LU, pivots, info = linalg_lu_factor_ex(A, pivot=pivot)
    # PyTorch's linalg_lu_factor checks lu_factor_ex's info (a meta tensor's has no values to check)
    if info.device.type != "meta" and bool(info.ne(0).any()):
        raise RuntimeError(_singular_message("linalg.lu_factor", info.cpu().numpy()))
    return LU, pivots


linalg_lu_factor = _named_results(defop(
    "linalg_lu_factor(Tensor A, *, bool pivot=True) -> (Tensor LU, Tensor pivots)",
    composite=_lu_factor, samples=_lu_samples, torch="torch.linalg.lu_factor",
    doc="(LU, pivots): linalg_lu_factor_ex's, an error where U has a zero on its diagonal."),
    "linalg_lu_factor")


# ---- unpacking --------------------------------------------------------------------------------

def _unpack_check(LU, pivots):
    if LU.ndim < 2:
        raise RuntimeError(f"torch.lu_unpack: Expected tensor with 2 or more dimensions. Got size: "
                           f"{list(LU.shape)} instead")
    if pivots.dtype != _INT32:
        raise RuntimeError("torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 dtype.\n"
                           "Note: this function is intended to be used with the output produced by "
                           "torch.linalg.lu_factor")


def _lu_unpack_meta(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    _unpack_check(LU_data, LU_pivots)
    m, n = LU_data.shape[-2:]
    k = min(m, n)
    batch = LU_data.shape[:-2]
    empty = MetaArray((0,), LU_data.dtype)
    P = MetaArray(batch + (m, m), LU_data.dtype) if unpack_pivots else empty
    if not unpack_data:
        return P, empty, empty
    return P, MetaArray(batch + (m, k), LU_data.dtype), MetaArray(batch + (k, n), LU_data.dtype)


def _permutation(xp, pivots, m, dtype):
    """P with A = P L U from getrf's pivots: the row swaps applied in order to 0..m-1 give the rows of
    A that P L U's rows are (perm), and P[perm[j], j] = 1."""
    if bool(((pivots < 1) | (pivots > m)).any()):
        raise RuntimeError("pivots passed to lu_unpack must be between 1 and LU.size(-2) inclusive."
                           "Did you properly pass the result of lu_factor?")
    batch = pivots.shape[:-1]
    perm = xp.broadcast_to(xp.arange(m), batch + (m,))
    rows = xp.arange(m)
    for j in range(pivots.shape[-1]):
        p = (pivots[..., j] - 1)[..., None]
        swap = xp.where(rows == j, p, xp.where(rows == p, j, rows))
        perm = xp.take_along_axis(perm, swap, axis=-1)
    return (perm[..., None, :] == rows[:, None]).astype(dtype)


def _lu_unpack_kernel(xp, LU_data, LU_pivots, unpack_data, unpack_pivots):
    _lu_unpack_meta(LU_data, LU_pivots, unpack_data, unpack_pivots)
    m, n = LU_data.shape[-2:]
    k = min(m, n)
    empty = xp.zeros((0,), dtype=LU_data.dtype)
    P = _permutation(xp, LU_pivots, m, LU_data.dtype) if unpack_pivots else empty
    if not unpack_data:
        return P, empty, empty
    L = xp.tril(LU_data[..., :, :k], -1) + xp.eye(m, M=k, dtype=LU_data.dtype)
    U = xp.triu(LU_data[..., :k, :])
    return P, L, U


def _lu_unpack_grad(grads, LU_data):
    """derivatives.yaml's lu_unpack_backward: L's gradient below the diagonal, U's on and above it, in
    their places of the packed matrix."""
    gL, gU = grads[1], grads[2]
    m, n = LU_data.shape[-2:]
    if gL.ndim < 2:             # unpack_data=False: L and U are empty, no gradient
        return zeros(list(LU_data.shape), dtype=LU_data.dtype, device=LU_data.device)
    lower, upper = tril(gL, -1), triu(gU)
    if m < n:                   # L is (m, m): its part sits in the first m columns
        lower = cat([lower, zeros(list(gU.shape[:-2]) + [m, n - m], dtype=gU.dtype, device=gU.device)], -1)
    elif m > n:                 # U is (n, n): its part sits in the first n rows
        upper = cat([upper, zeros(list(gL.shape[:-2]) + [m - n, n], dtype=gL.dtype, device=gL.device)], -2)
    return lower + upper


def _lu_unpack_samples(op):
    out = []
    for s in _lu_samples(op)[:5]:
        LU, pivots, _ = linalg_lu_factor_ex(s.args[0].detach())
        out.append(SampleInput(s.name, LU.requires_grad_(), pivots))
    LU, pivots, _ = linalg_lu_factor_ex(_invertible(op, (3, 3), 3).detach())
    # (unpack_data=False without a gradient: PyTorch's backward fails on the empty L and U, triu of a 1-D tensor)
    out += [SampleInput("unpack_data=False", LU.clone(), pivots, False),
            SampleInput("unpack_pivots=False", LU.clone().requires_grad_(), pivots, unpack_pivots=False)]
    return out


lu_unpack = _named_results(defop(
    "lu_unpack(Tensor LU_data, Tensor LU_pivots, bool unpack_data=True, bool unpack_pivots=True) "
    "-> (Tensor P, Tensor L, Tensor U)",
    kernel=_lu_unpack_kernel, meta=_lu_unpack_meta, supports_complex=True,
    grads={"LU_data": _lu_unpack_grad, "LU_pivots": None},
    output_differentiability=(False, True, True),
    samples=_lu_unpack_samples, torch="torch.lu_unpack",
    doc="(P, L, U) of a packed LU factorization and its pivots (empty where not unpacked)."),
    "lu_unpack")


# ---- P, L, U at once ----------------------------------------------------------------------------

def _lu_meta(A, pivot=True):
    _check_factorable("lu_factor", A)
    m, n = A.shape[-2:]
    k = min(m, n)
    batch = A.shape[:-2]
    return (MetaArray(batch + (m, m), A.dtype), MetaArray(batch + (m, k), A.dtype),
            MetaArray(batch + (k, n), A.dtype))


def _lu_kernel(xp, A, pivot):
    _lu_meta(A, pivot)
    LU, pivots, _ = _lu_factor_ex_kernel(xp, A, pivot, False)
    P, L, U = _lu_unpack_kernel(xp, LU, pivots, True, pivot)
    return P, L, U


linalg_lu = _named_results(defop(
    "linalg_lu(Tensor A, *, bool pivot=True) -> (Tensor P, Tensor L, Tensor U)",
    kernel=_lu_kernel, meta=_lu_meta, supports_complex=True,
    grads={"A": lambda grads, result, pivot: _lu_backward(grads[1], grads[2], *result, pivot)},
    output_differentiability=(False, True, True),
    samples=_lu_samples, torch="torch.linalg.lu",
    doc="(P, L, U) with A = P L U: P a permutation, L unit lower triangular (m, k), U upper (k, n)."),
    "linalg_lu")


# ---- solving with a factorization -----------------------------------------------------------------

def _lu_solve_shape(LU, pivots, B, left):
    if LU.ndim < 2 or LU.shape[-1] != LU.shape[-2]:
        raise RuntimeError(f"torch.linalg.lu_solve: A must be batches of square matrices, but they are "
                           f"{LU.shape[-2]} by {LU.shape[-1]} matrices")
    if B.ndim < 2:
        raise RuntimeError("linalg.lu_solve: The input tensor B must have at least 2 dimensions.")
    if LU.dtype != B.dtype:
        raise DtypeError(f"linalg.lu_solve: Expected LU and B to have the same dtype, but found LU of type "
                         f"{scalar_type_name(LU.dtype)} and B of type {scalar_type_name(B.dtype)} instead")
    n = LU.shape[-1]
    if (B.shape[-2] if left else B.shape[-1]) != n:
        raise RuntimeError(f"linalg.lu_solve: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({n}x{n} and {B.shape[-2]}x{B.shape[-1]})")
    if tuple(pivots.shape) != tuple(LU.shape[:-1]):
        raise RuntimeError("linalg.lu_solve: Expected LU.shape[:-1] and pivots.shape to be the same, but got "
                           f"pivots with shape {list(pivots.shape)} instead")
    batch = broadcast_shapes(tuple(LU.shape[:-2]), tuple(B.shape[:-2]))
    return batch + tuple(B.shape[-2:]), batch


def _lu_solve_meta(LU, pivots, B, left=True, adjoint=False):
    shape, _ = _lu_solve_shape(LU, pivots, B, left)
    return MetaArray(shape, B.dtype)


def _lu_solve_kernel(xp, LU, pivots, B, left, adjoint):
    shape, batch = _lu_solve_shape(LU, pivots, B, left)
    P, L, U = _lu_unpack_kernel(xp, LU, pivots, True, True)
    T = (lambda M: xp.conj(xp.swapaxes(M, -1, -2)))      # Mᴴ (Mᵀ for a real M)
    if not left:                # X A = B is Aᴴ Xᴴ = Bᴴ; X Aᴴ = B is A Xᴴ = Bᴴ
        B, adjoint = T(B), not adjoint
    P, L, U = (xp.broadcast_to(M, batch + M.shape[-2:]) for M in (P, L, U))
    B = xp.broadcast_to(B, batch + B.shape[-2:])
    # (by substitution, as getrs: a zero on U's diagonal gives inf and NaN, never an error)
    if adjoint:                 # Aᴴ X = B: Uᴴ Lᴴ Pᵀ X = B
        X = xp.matmul(P, _substitute(xp, T(L), _substitute(xp, T(U), B, False), True))
    else:                       # P L U X = B
        X = _substitute(xp, U, _substitute(xp, L, xp.matmul(T(P), B), False), True)
    if not left:
        X = T(X)
    return xp.ascontiguousarray(X).astype(B.dtype, copy=False).reshape(shape)


def _lu_solve_grads(grad, LU, pivots, result, left, adjoint):
    """(gLU, gB) of linalg_lu_solve: gB is the solve with the adjoint system (derivatives.yaml); A's
    gradient (A = P L U) is -gB Xᴴ (Aᴴ X = B: -X gBᴴ; X A = B: -Xᴴ gB; X Aᴴ = B: -gBᴴ X), and
    LU's is A's through A = P L U: L's part (Pᵀ gA Uᴴ) below the diagonal, U's (Lᴴ Pᵀ gA) on and above."""
    gB = linalg_lu_solve(LU, pivots, grad, left=left, adjoint=not adjoint)
    X = result
    if left:
        gA = -matmul(X, _mH(gB)) if adjoint else -matmul(gB, _mH(X))
    else:
        gA = -matmul(_mH(gB), X) if adjoint else -matmul(_mH(X), gB)
    P, L, U = _unpacked(LU, pivots, True)
    PtgA = matmul(_mH(P), gA)
    gLU = tril(matmul(PtgA, _mH(U)), -1) + triu(matmul(_mH(L), PtgA))
    return gLU, gB


def _lu_solve_samples(op):
    out = []
    cases = [("(3,3) (3,2)", (3, 3), (3, 2), {}), ("batch (2,3,3) (2,3,1)", (2, 3, 3), (2, 3, 1), {}),
             ("broadcast (3,3) (2,3,2)", (3, 3), (2, 3, 2), {}), ("adjoint", (3, 3), (3, 2), {"adjoint": True}),
             ("left=False", (3, 3), (2, 3), {"left": False}),
             ("left=False adjoint", (2, 3, 3), (2, 4, 3), {"left": False, "adjoint": True})]
    for i, (name, sa, sb, kw) in enumerate(cases):
        LU, pivots, _ = linalg_lu_factor_ex(_invertible(op, sa, i).detach())
        out.append(SampleInput(name, LU.requires_grad_(), pivots, make_arg(sb, key=(op, name)), **kw))
    return out


linalg_lu_solve = defop(
    "linalg_lu_solve(Tensor LU, Tensor pivots, Tensor B, *, bool left=True, bool adjoint=False) -> Tensor",
    kernel=_lu_solve_kernel, meta=_lu_solve_meta, supports_complex=True,
    grads={"LU": lambda grad, LU, pivots, result, left, adjoint:
           _lu_solve_grads(grad, LU, pivots, result, left, adjoint)[0],
           "pivots": None,
           "B": lambda grad, LU, pivots, left, adjoint: linalg_lu_solve(LU, pivots, grad, left=left,
                                                                         adjoint=not adjoint)},
    samples=_lu_solve_samples, torch="torch.linalg.lu_solve",
    doc="X with A X = B for A = P L U given as lu_factor's (LU, pivots); Aᴴ X = B with adjoint, X A = B "
        "with left=False.")


# ---- torch's Python functions --------------------------------------------------------------------

_LU_DEPRECATED = (
    "torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex and will be removed in a "
    "future PyTorch release.\nLU, pivots = torch.lu(A, compute_pivots)\nshould be replaced with\n"
    "LU, pivots = torch.linalg.lu_factor(A, compute_pivots)\nand\n"
    "LU, pivots, info = torch.lu(A, compute_pivots, get_infos=True)\nshould be replaced with\n"
    "LU, pivots, info = torch.linalg.lu_factor_ex(A, compute_pivots)")


def lu(A, pivot=True, get_infos=False, out=None):
    """torch.lu (deprecated there): linalg_lu_factor_ex's (LU, pivots), and info with get_infos. Never an
    error for a singular A: PyTorch's _lu_with_info drops its check_errors (lu_factor_ex without it)."""
    if out is not None:
        raise TypeError("lu(): agrad does not take out=")
    warnings.warn(_LU_DEPRECATED, UserWarning, stacklevel=2)
    LU, pivots, info = linalg_lu_factor_ex(A, pivot=pivot)
    return (LU, pivots, info) if get_infos else (LU, pivots)


def lu_solve(b, LU_data, LU_pivots, *, out=None):
    """torch.lu_solve (deprecated there): X with A X = b, A given as lu_factor's (LU, pivots)."""
    if out is not None:
        raise TypeError("lu_solve(): agrad does not take out=")
    warnings.warn("torch.lu_solve is deprecated in favor of torch.linalg.lu_solve and will be removed in a future "
                  "PyTorch release.", UserWarning, stacklevel=2)
    return linalg_lu_solve(LU_data, LU_pivots, b)
