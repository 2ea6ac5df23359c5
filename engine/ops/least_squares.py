"""The pseudoinverse and what is built on it (ATen's LinearAlgebra, BatchLinearAlgebra):
linalg_pinv (LinalgPinvBackward0, derivatives.yaml's pinv_backward), linalg_lstsq (by the
SVD; its solution's gradient is linalg_lstsq_backward, through the pseudoinverse as PyTorch's,
its residuals' the least-squares envelope), and linalg_matrix_rank (the singular values above a
tolerance).

Tolerances are PyTorch's: a singular value σ counts where σ > max(atol, rtol·σ_max); without
either, rtol is eps·max(m, n); with only atol > 0, rtol is 0.
"""
from __future__ import annotations

import numpy as np

from ..backends.meta import MetaArray
from ..errors import DtypeError, LinAlgError
from ..messages import scalar_type_name
from ..shapes import broadcast_shapes
from .decompositions import (
    _matrix_check,
    hermitian_input,
    linalg_eigvalsh,
    linalg_svdvals,
)
from .determinants import _mH, _mT, _real
from .linalg import matmul
from .reduce.arithmetic import sum
from ._common import _named_results
from ._lapack_failures import batch_element, eigh_failure, nan_results, per_matrix, svd_failure
from .reduce.selection import amax
from .registry import defop
from .samples import SampleInput, make_arg
from .shape.view import squeeze, unsqueeze
from .solve import _is_vector_rhs


def _tolerances(dtype, m, n, atol, rtol):
    """PyTorch's get_atol_rtol."""
    if rtol is None:
        rtol = 0.0 if atol is not None and atol > 0 else float(np.finfo(dtype).eps) * max(m, n)
    return (0.0 if atol is None else atol), rtol


# ---- pinv --------------------------------------------------------------------------------------

def _pinv_meta(self, atol=None, rtol=None, hermitian=False):
    _matrix_check("pinv", self)
    return MetaArray(tuple(self.shape[:-2]) + (self.shape[-1], self.shape[-2]), self.dtype)


def _pinv_kernel(xp, self, atol, rtol, hermitian):
    _pinv_meta(self, atol, rtol, hermitian)
    m, n = self.shape[-2], self.shape[-1]
    atol, rtol = _tolerances(self.dtype, m, n, atol, rtol)
    if hermitian:           # PyTorch's: the eigendecomposition, |λ| as the singular values
        L, U = per_matrix(xp, xp.linalg.eigh, self, eigh_failure(self))
        absL = xp.abs(L)
        tol = xp.maximum(atol, rtol * xp.max(absL, axis=-1, keepdims=True)) if L.shape[-1] else atol
        inv = xp.where(absL > tol, 1.0 / xp.where(absL > tol, L, 1.0), 0.0)
        out = xp.matmul(U * inv[..., None, :], xp.conj(xp.swapaxes(U, -1, -2)))
    else:
        U, S, Vh = per_matrix(xp, lambda a: xp.linalg.svd(a, full_matrices=False), self, svd_failure(xp, self, True))
        tol = xp.maximum(atol, rtol * S[..., :1]) if S.shape[-1] else atol
        inv = xp.where(S > tol, 1.0 / xp.where(S > tol, S, 1.0), 0.0)
        out = xp.matmul(xp.conj(xp.swapaxes(Vh, -1, -2)) * inv[..., None, :], xp.conj(xp.swapaxes(U, -1, -2)))
    return out.astype(self.dtype, copy=False)


def _pinv_backward(grad, pinvA, A):
    """FunctionsManual's pinv_backward (Golub and Pereyra), arranged for the smaller of m, n."""
    m, n = A.shape[-2], A.shape[-1]
    pinvAh = _mH(pinvA)
    gradh = _mH(grad)
    if m <= n:
        K = matmul(gradh, pinvA)
        KpinvAh = matmul(K, pinvAh)
        return (-_mH(matmul(pinvA, K)) + KpinvAh - matmul(matmul(A, pinvA), KpinvAh)
                + matmul(matmul(pinvAh, pinvA), gradh - matmul(K, A)))
    K = matmul(pinvA, gradh)
    pinvAhK = matmul(pinvAh, K)
    return (-_mH(matmul(K, pinvA)) + matmul(matmul(gradh - matmul(A, K), pinvA), pinvAh) + pinvAhK
            - matmul(matmul(pinvAhK, pinvA), A))


def _pinv_samples(op):
    sym = make_arg((3, 3), key=(op, "h"), requires_grad=False)
    sym = (sym + _mT(sym)).detach().requires_grad_()
    return [SampleInput("(3,3)", make_arg((3, 3), key=(op, 0))),
            SampleInput("(4,2) tall", make_arg((4, 2), key=(op, 1))),
            SampleInput("(2,4) wide", make_arg((2, 4), key=(op, 2))),
            SampleInput("(2,3,2) batch T", make_arg((2, 3, 2), key=(op, 3))),
            # (a cut singular value: the pseudoinverse is not differentiable there, values only)
            SampleInput("atol cuts", make_arg((3, 3), key=(op, 4), requires_grad=False), atol=0.5),
            SampleInput("hermitian", sym, hermitian=True).wrapped(hermitian_input)]


linalg_pinv = defop(
    "linalg_pinv(Tensor self, *, float? atol=None, float? rtol=None, bool hermitian=False) -> Tensor",
    kernel=_pinv_kernel, meta=_pinv_meta, supports_complex=True,
    grads={"self": lambda grad, self, result: _pinv_backward(grad, result, self)},
    samples=_pinv_samples, torch="torch.linalg.pinv",
    doc="The Moore-Penrose pseudoinverse A⁺ (singular values at or below max(atol, rtol·σ_max) taken as 0); "
        "hermitian=True uses the eigendecomposition of the lower triangle.")


# ---- lstsq ------------------------------------------------------------------------------------

_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def _lstsq_meta(self, b, rcond=None, driver=None):
    _matrix_check("lstsq", self)
    if self.dtype != b.dtype:
        raise DtypeError(f"torch.linalg.lstsq: Expected input and other to have the same dtype, but got "
                         f"input's dtype {scalar_type_name(self.dtype)} and other's dtype {scalar_type_name(b.dtype)}")
    if driver is not None and driver not in _DRIVERS:
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)")
    vector = _is_vector_rhs(self, b)
    B = tuple(b.shape) + (1,) if vector else tuple(b.shape)
    m, n = self.shape[-2:]
    if B[-2] != m:
        raise RuntimeError("torch.linalg.lstsq: input.size(-2) should match other.size(-2)")
    batch = broadcast_shapes(tuple(self.shape[:-2]), B[:-2])
    solution = batch + ((n,) if vector else (n, B[-1]))
    driver = driver or "gelsy"
    # PyTorch's residuals: only from the drivers that compute them, for m > n and full rank
    residuals = batch + (B[-1],) if driver != "gelsy" and m > n else (0,)
    rank = batch if driver != "gels" else (0,)
    sv = batch + (min(m, n),) if driver in ("gelsd", "gelss") else (0,)
    # (the residuals and singular values of a complex A are real)
    return (MetaArray(solution, self.dtype), MetaArray(residuals, _real(self.dtype)),
            MetaArray(rank, np.dtype(np.int64)), MetaArray(sv, _real(self.dtype)))


def _lstsq_failure(xp, A, driver):
    """A matrix whose SVD fails (a non-finite one): the SVD drivers' info (gelsd's, gelss's) ATen raises as
    a rank failure; gelsy's and gels's QR runs through and leaves NaNs, which torch returns."""
    def on_failure(k, a):
        if driver in ("gelsd", "gelss"):
            raise LinAlgError(f"torch.linalg.lstsq: {batch_element(A.shape, k)}The least squares solution could not "
                              "be computed because the input matrix does not have full rank.")
        m, n = a.shape
        return nan_results(xp, ((m, min(m, n)), a.dtype), ((min(m, n),), _real(a.dtype)),
                           ((min(m, n), n), a.dtype))(k, a)
    return on_failure


def _lstsq_kernel(xp, self, b, rcond, driver):
    metas = _lstsq_meta(self, b, rcond, driver)
    vector = _is_vector_rhs(self, b)
    B = b[..., None] if vector else b
    batch = tuple(metas[0].shape[:-1] if vector else metas[0].shape[:-2])
    m, n = self.shape[-2:]
    A = xp.broadcast_to(self, batch + (m, n))
    B = xp.broadcast_to(B, batch + B.shape[-2:])
    # the minimum-norm solution through the SVD (LAPACK's gelsd): for a full-rank A it is the one solution
    # every driver finds
    U, S, Vh = per_matrix(xp, lambda a: xp.linalg.svd(a, full_matrices=False), A,
                          _lstsq_failure(xp, A, driver))
    eps = float(np.finfo(self.dtype).eps)
    cut = (rcond if rcond is not None and rcond >= 0 else eps * max(m, n)) * S[..., :1]
    keep = S > cut
    inv = xp.where(keep, 1.0 / xp.where(keep, S, 1.0), 0.0)
    X = xp.matmul(xp.conj(xp.swapaxes(Vh, -1, -2)), inv[..., :, None] * xp.matmul(xp.conj(xp.swapaxes(U, -1, -2)), B))
    outs = [X[..., 0] if vector else X]
    rank = xp.sum(keep, axis=-1).astype(np.int64)
    res_meta, rank_meta, sv_meta = metas[1:]
    real = _real(self.dtype)
    if res_meta.shape == (0,):
        residuals = xp.empty((0,), dtype=real)
    elif bool(xp.all(rank == n)):
        residuals = xp.sum(xp.abs(xp.matmul(A, X) - B) ** 2, axis=-2)
    else:
        residuals = xp.empty((0,), dtype=real)
    outs.append(residuals.astype(real, copy=False))
    outs.append(rank if rank_meta.shape != (0,) else xp.empty((0,), dtype=np.int64))
    outs.append(S.astype(real, copy=False) if sv_meta.shape != (0,) else xp.empty((0,), dtype=real))
    return tuple(outs)


def _lstsq_grads(grads, self, b, result):
    """linalg_lstsq_backward: through pinv(A) (gX flows to A by pinv_backward of gX Bᴴ), and gB = pinv(A)ᴴ gX;
    where the driver gave residuals r = ‖A X - B‖² (per column), their gradient too: X minimizes r, so
    dr = 2 (A X - B)ᴴ (dA X - dB) (the singular values and rank have none)."""
    vector = _is_vector_rhs(self, b)
    gX, B, X = grads[0], b, result[0]
    if vector:
        gX, B, X = unsqueeze(gX, -1), unsqueeze(b, -1), unsqueeze(X, -1)
    pinvA = linalg_pinv(self)
    gA = _pinv_backward(matmul(gX, _mH(B)), pinvA, self)
    gB = matmul(_mH(pinvA), gX)
    if tuple(result[1].shape) != (0,):
        weighted = 2.0 * (matmul(self, X) - B) * unsqueeze(grads[1], -2)
        gA = gA + matmul(weighted, _mH(X))
        gB = gB - weighted
    return gA, (squeeze(gB, -1) if vector else gB)


def _lstsq_samples(op):
    return [SampleInput("(4,3) (4,2)", make_arg((4, 3), key=(op, 0)), make_arg((4, 2), key=(op, 1))),
            SampleInput("(3,3) vector", make_arg((3, 3), key=(op, 2)), make_arg((3,), key=(op, 3))),
            SampleInput("(2,5,3) batch", make_arg((2, 5, 3), key=(op, 4)), make_arg((2, 5, 1), key=(op, 5))),
            SampleInput("gelsd residuals", make_arg((5, 2), key=(op, 6)), make_arg((5, 3), key=(op, 7)),
                        driver="gelsd")]


def _lstsq_solution_samples(op):
    # the default driver (gelsy): no singular values, whose gradient is not defined
    return [s for s in _lstsq_samples(op) if "driver" not in s.kwargs]


_linalg_lstsq = defop(
    "_linalg_lstsq(Tensor self, Tensor b, float? rcond=None, *, str? driver=None) -> "
    "(Tensor solution, Tensor residuals, Tensor rank, Tensor singular_values)",
    kernel=_lstsq_kernel, meta=_lstsq_meta,
    grads={"self": lambda grads, self, b, result: _lstsq_grads(grads, self, b, result)[0],
           "b": lambda grads, self, b, result: _lstsq_grads(grads, self, b, result)[1]},
    backward_name="LinalgLstsqBackward0", samples=_lstsq_solution_samples, supports_complex=True,
    doc="linalg_lstsq's kernel; its singular values have no gradient.")


def _lstsq(self, b, rcond=None, driver=None):
    # derivatives.yaml's output_differentiability: the solution and the residuals, not the singular values
    solution, residuals, rank, singular_values = _linalg_lstsq(self, b, rcond, driver=driver)
    return solution, residuals, rank, singular_values.detach()


linalg_lstsq = _named_results(defop(
    "linalg_lstsq(Tensor self, Tensor b, float? rcond=None, *, str? driver=None) -> "
    "(Tensor solution, Tensor residuals, Tensor rank, Tensor singular_values)",
    composite=_lstsq, samples=_lstsq_samples, torch="torch.linalg.lstsq",
    doc="The least-squares solution X of A X ≈ B (minimum norm where A is rank-deficient), and what the LAPACK "
        "driver reports: residuals (gelsd, gelss, gels for m > n, full rank), rank (not gels), singular values "
        "(gelsd, gelss); PyTorch's empty tensors where the driver does not. The singular values have no gradient."),
    "linalg_lstsq")


# ---- matrix_rank --------------------------------------------------------------------------------

def _matrix_rank(A, atol=None, rtol=None, hermitian=False):
    if A.ndim < 2:
        raise RuntimeError("linalg.matrix_rank: The input tensor input must have at least 2 dimensions.")
    m, n = A.shape[-2], A.shape[-1]
    atol, rtol = _tolerances(A.dtype.np, m, n, atol, rtol)
    S = linalg_eigvalsh(A).abs() if hermitian else linalg_svdvals(A)
    if S.shape[-1] == 0:
        return sum(S > 0, -1)
    tol = amax(S, -1, keepdim=True) * rtol
    tol = tol.clamp_min(atol) if atol > 0 else tol
    return sum(S > tol, -1)


def _matrix_rank_samples(op):
    full = make_arg((3, 4), key=(op, 0), requires_grad=False)
    low = matmul(make_arg((4, 2), key=(op, 1), requires_grad=False), make_arg((2, 3), key=(op, 2),
                                                                                requires_grad=False)).detach()
    sym = (low[:3] + _mT(low[:3])).detach()
    return [SampleInput("full rank", full), SampleInput("rank 2 of (4,3)", low),
            SampleInput("atol", full, atol=1.0), SampleInput("rtol", low, rtol=0.5),
            SampleInput("hermitian", sym, hermitian=True),
            SampleInput("batch", make_arg((2, 3, 2), key=(op, 3), requires_grad=False))]


linalg_matrix_rank = defop(
    "linalg_matrix_rank(Tensor A, *, float? atol=None, float? rtol=None, bool hermitian=False) -> Tensor",
    composite=_matrix_rank, samples=_matrix_rank_samples, torch="torch.linalg.matrix_rank",
    doc="The number of singular values (|eigenvalues| with hermitian) above max(atol, rtol·σ_max).")


pinverse = defop(
    "pinverse(Tensor self, float rcond=1e-15) -> Tensor",
    # ATen's pinverse: linalg_pinv with atol 0 and rtol rcond
    composite=lambda self, rcond: linalg_pinv(self, atol=0.0, rtol=rcond),
    samples=lambda op: [SampleInput("(3,4)", make_arg((3, 4), key=(op, 0))),
                        SampleInput("(2,3,2) rcond", make_arg((2, 3, 2), key=(op, 1)), 1e-3)],
    torch="torch.pinverse", doc="The pseudoinverse, singular values below rcond times the largest dropped.")
