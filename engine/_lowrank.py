"""torch.svd_lowrank and torch.pca_lowrank (PyTorch 2.13's torch/_lowrank.py): randomized low-rank SVD
(Halko, Martinsson and Tropp 2009, Algorithms 4.4 and 5.1) written in agrad's ops, so that gradients go
through QR and SVD as they do in PyTorch. The random start matrix is drawn from agrad's global
generator (agrad.manual_seed makes a run repeatable; its numbers are not torch's). agrad's tensors are
all dense, so pca_lowrank's sparse branch has no counterpart here.
"""
from __future__ import annotations

from . import _linalg_utils as _utils
from . import creation, ops
from ._tensor import Tensor

__all__ = ["svd_lowrank", "pca_lowrank"]


def get_approximate_basis(A: Tensor, q: int, niter: int | None = 2, M: Tensor | None = None) -> Tensor:
    """Q with q orthonormal columns such that Q Q^H A approximates A (Q Q^H (A - M) approximates A - M
    when M is given, without forming A - M): Halko et al. 2009, Algorithm 4.4."""
    niter = 2 if niter is None else niter
    dtype = _utils.get_floating_dtype(A)
    matmul = _utils.matmul

    R = creation.randn(A.shape[-1], q, dtype=dtype, device=A.device)

    X = matmul(A, R)
    if M is not None:
        X = X - matmul(M, R)
    Q = ops.linalg_qr(X).Q
    for _ in range(niter):
        X = matmul(A.mH, Q)
        if M is not None:
            X = X - matmul(M.mH, Q)
        Q = ops.linalg_qr(X).Q
        X = matmul(A, Q)
        if M is not None:
            X = X - matmul(M, Q)
        Q = ops.linalg_qr(X).Q
    return Q


def svd_lowrank(A: Tensor, q: int | None = 6, niter: int | None = 2,
                M: Tensor | None = None) -> tuple[Tensor, Tensor, Tensor]:
    """(U, S, V) with A ~ U diag(S) V^H, of A - M when M (broadcast to A's size) is given: a matrix or a
    batch of them; q is a slightly overestimated rank of A, niter the number of subspace iterations."""
    return _svd_lowrank(A, q=q, niter=niter, M=M)


def _svd_lowrank(A: Tensor, q: int | None = 6, niter: int | None = 2,
                 M: Tensor | None = None) -> tuple[Tensor, Tensor, Tensor]:
    # Algorithm 5.1 in Halko et al., 2009
    q = 6 if q is None else q
    m, n = A.shape[-2:]
    matmul = _utils.matmul
    if M is not None:
        M = M.broadcast_to(A.size())

    # Assume that A is tall
    if m < n:
        A = A.mH
        if M is not None:
            M = M.mH

    Q = get_approximate_basis(A, q, niter=niter, M=M)
    B = matmul(Q.mH, A)
    if M is not None:
        B = B - matmul(Q.mH, M)
    U, S, Vh = ops.linalg_svd(B, full_matrices=False)
    V = Vh.mH
    U = Q.matmul(U)

    if m < n:
        U, V = V, U

    return U, S, V


def pca_lowrank(A: Tensor, q: int | None = None, center: bool = True,
                niter: int = 2) -> tuple[Tensor, Tensor, Tensor]:
    """Linear PCA of a low-rank matrix (or a batch of them): (U, S, V), nearly the SVD of A centered on its
    column means (A as it is when center is False); V's columns are the principal directions, and
    S ** 2 / (m - 1) the eigenvalues of the covariance. q defaults to min(6, m, n)."""
    m, n = A.shape[-2:]

    if q is None:
        q = min(6, m, n)
    elif not (q >= 0 and q <= min(m, n)):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}")
    if not (niter >= 0):
        raise ValueError(f"niter(={niter}) must be non-negative integer")

    if not center:
        return _svd_lowrank(A, q, niter=niter, M=None)

    C = A.mean(dim=(-2,), keepdim=True)
    return _svd_lowrank(A - C, q, niter=niter, M=None)
