"""torch.lobpcg, torch.svd_lowrank, torch.pca_lowrank and torch._lowrank.get_approximate_basis as scenarios
that run on PyTorch and on agrad alike: eigenpairs, singular values, reconstructions, gradients and the
messages of bad arguments.

The matrices come from NumPy (the same numbers for both libraries); where a solver draws a random start
(lobpcg without X, the low-rank methods' test matrix) the two libraries draw different numbers, so a
scenario records only what does not depend on the draw: converged eigenpairs (each eigenvector's sign
fixed by its largest entry, as PyTorch's own test_lobpcg does), singular values and projections of a
matrix whose rank the sketch covers, and gradients of those. Where the start is given (X), the iterates
themselves are recorded (tracker, niter).

`tests/reference/make_linalg_solvers_reference.py` runs them on torch 2.13.0 and writes
`tests/reference/engine/linalg_solvers.json`; `test_linalg_solvers.py` runs them on agrad and compares.
"""
from __future__ import annotations

import importlib

import numpy as np

from api_scenarios import _error

SCENARIOS = {}


def scenario(fn):
    SCENARIOS[fn.__name__] = fn
    return fn


def _spd(m, seed, batch=(), spread=1.0):
    """A symmetric positive-definite float64 matrix (or batch) with well separated eigenvalues."""
    rng = np.random.RandomState(seed)
    q, _ = np.linalg.qr(rng.standard_normal(batch + (m, m)))
    w = np.broadcast_to(np.linspace(0.5, 0.5 + spread * m, m) ** 1.5, batch + (m,))
    return (q * w[..., None, :]) @ np.swapaxes(q, -1, -2)


def _low_rank(m, n, rank, seed, batch=()):
    rng = np.random.RandomState(seed)
    return rng.standard_normal(batch + (m, rank)) @ rng.standard_normal(batch + (rank, n))


def _signed(U):
    """U with each column's sign set by its largest entry in absolute value (test_lobpcg's)."""
    _, idx = U.abs().max(-2, keepdim=True)
    return U * U.gather(-2, idx).sign()


def _values(t, digits=None):
    return t.detach().tolist() if digits is None else np.round(np.asarray(t.detach().tolist()), digits).tolist()


def _eigenpairs(E, U):
    return {"E": _values(E), "U": _values(_signed(U)), "shapes": [list(E.shape), list(U.shape)],
            "dtypes": [str(E.dtype).split(".")[-1], str(U.dtype).split(".")[-1]]}


@scenario
def lobpcg_eigenpairs(T):
    A = T.tensor(_spd(12, 0))
    out = {}
    for method in ("ortho", "basic"):
        for largest in (True, False, None):
            for k in (1, 3):
                X = T.eye(12, k, dtype=T.float64)
                out[f"{method} largest={largest} k={k}"] = _eigenpairs(
                    *T.lobpcg(A, k=k, X=X, largest=largest, method=method))
    # a random start (different numbers in each library) converges to the same pairs; n > k start vectors
    out["random start k=2"] = _eigenpairs(*T.lobpcg(A, k=2))
    out["random start k=2 n=4"] = _eigenpairs(*T.lobpcg(A, k=2, n=4, largest=False))
    out["k from X"] = _eigenpairs(*T.lobpcg(A, X=T.eye(12, 2, dtype=T.float64)))
    return out


@scenario
def lobpcg_generalized_batched_preconditioned(T):
    A, B = T.tensor(_spd(12, 1)), T.tensor(_spd(12, 2, spread=0.1))
    batch = T.tensor(_spd(12, 3, batch=(2, 2)))
    X = T.eye(12, 2, dtype=T.float64)
    iK = T.tensor(np.diag(1.0 / np.diag(_spd(12, 1))))
    return {
        "B": _eigenpairs(*T.lobpcg(A, k=2, B=B, X=X)),
        "B smallest basic": _eigenpairs(*T.lobpcg(A, k=2, B=B, X=X, largest=False, method="basic")),
        "batched": _eigenpairs(*T.lobpcg(batch, k=2, X=X.expand(2, 2, 12, 2))),
        "batched random start": _eigenpairs(*T.lobpcg(batch, k=1, largest=False)),
        "iK": _eigenpairs(*T.lobpcg(A, k=2, X=X, iK=iK, largest=False)),
        "ortho drop": _eigenpairs(*T.lobpcg(A, k=2, X=X, ortho_bparams={"ortho_use_drop": True},
                                            ortho_iparams={"ortho_i_max": 2}, ortho_fparams={"ortho_tol": 1e-10})),
        "float32": _eigenpairs(*T.lobpcg(A.float(), k=1, X=X[:, :1].float())),
    }


@scenario
def lobpcg_iterates(T):
    """With a given start, the iteration itself: a tracker's view of each step, a hard stop, a forced stop."""
    A = T.tensor(_spd(15, 4))
    X = T.tensor(np.linspace(-1.0, 1.0, 30).reshape(15, 2) ** 2)
    steps = []

    def tracker(worker):
        steps.append([worker.ivars["istep"], worker.ivars["converged_count"],
                      _values(worker.E, 6), sorted(k for k in worker.fvars if k.startswith("ortho_"))])

    T.lobpcg(A, k=2, X=X.clone(), tracker=tracker)
    basic = []
    T.lobpcg(A, k=2, X=X.clone(), method="basic", largest=False,
             tracker=lambda w: basic.append([w.ivars["istep"], w.ivars["converged_count"]]))

    def stop_at_two(worker):
        worker.bvars["force_stop"] = worker.ivars["istep"] >= 2

    E2, U2 = T.lobpcg(A, k=2, X=X.clone(), niter=2)
    E3, U3 = T.lobpcg(A, k=2, X=X.clone(), tracker=stop_at_two)
    return {"ortho steps": steps, "basic steps": basic, "niter=2": [_values(E2, 8), _values(_signed(U2), 8)],
            "forced stop": [_values(E3, 8), _values(_signed(U3), 8)]}


@scenario
def lobpcg_gradients(T):
    """A.grad through the partial eigenspace's backward (k < m), for given gradients of E and U."""
    out = {}
    for k, shape, largest in ((1, (9, 9), True), (2, (9, 9), False), (3, (9, 9), True), (2, (2, 9, 9), False),
                              (3, (2, 2, 9, 9), False)):
        A = T.tensor(_spd(9, 5 + k, batch=shape[:-2], spread=0.5)).requires_grad_(True)
        X = T.eye(9, k, dtype=T.float64).expand(*shape[:-1], k)
        E, U = T.lobpcg(A, k=k, X=X, largest=largest)
        U = _signed(U)
        rng = np.random.RandomState(k)
        E_grad = T.tensor(rng.uniform(size=tuple(E.shape)))
        U_grad = T.tensor(rng.uniform(size=tuple(U.shape)))
        (A_grad,) = T.autograd.grad([E, U], [A], [E_grad, U_grad])
        out[f"k={k} {shape} largest={largest}"] = {
            "A.grad": _values(A_grad), "symmetric": bool((A_grad - A_grad.mT).abs().max() < 1e-10),
            "grad_fn": E.grad_fn.name()}
    return out


@scenario
def lobpcg_errors(T):
    A = T.tensor(_spd(9, 6))
    return {
        "too many pairs": _error(lambda: T.lobpcg(A, k=4)),
        "too many start vectors": _error(lambda: T.lobpcg(A, k=2, n=4)),
        "not square": _error(lambda: T.lobpcg(A[:, :8], k=1)),
        "B shape": _error(lambda: T.lobpcg(A, k=1, B=A[:8, :8])),
        "X shape": _error(lambda: T.lobpcg(A, k=1, X=T.ones(8, 1, dtype=T.float64))),
        "backward with B": _error(lambda: T.lobpcg(A.clone().requires_grad_(True), k=1, B=T.eye(9, dtype=T.float64),
                                                   X=T.eye(9, 1, dtype=T.float64))[0].sum().backward()),
    }


def _svd_summary(T, U, S, V, A):
    """What a converged sketch's SVD determines whatever its random draw: singular values and U S V^H."""
    return {"S": _values(S), "USVh": _values(U @ T.diag_embed(S) @ V.mH),
            "shapes": [list(U.shape), list(S.shape), list(V.shape)],
            "UhU": _values(U.mH @ U, 10), "VhV": _values(V.mH @ V, 10)}


@scenario
def svd_lowrank_values(T):
    tall = T.tensor(_low_rank(10, 7, 3, 0))
    wide = T.tensor(_low_rank(6, 11, 2, 1))
    batch = T.tensor(_low_rank(8, 5, 2, 2, batch=(3,)))
    M = T.tensor(np.random.RandomState(3).standard_normal((1, 7)))
    return {
        "tall q=3": _svd_summary(T, *T.svd_lowrank(tall, q=3), tall),
        "tall default q": _svd_summary(T, *T.svd_lowrank(tall), tall),
        "wide q=4 niter=0": _svd_summary(T, *T.svd_lowrank(wide, q=4, niter=0), wide),
        "batched q=2": _svd_summary(T, *T.svd_lowrank(batch, q=2, niter=1), batch),
        # A - M with M broadcast: rank 3 + 1
        "M": _svd_summary(T, *T.svd_lowrank(tall + M, q=4, M=M), tall),
    }


@scenario
def pca_lowrank_values(T):
    A = T.tensor(_low_rank(12, 6, 3, 4) + 5.0)
    data = T.tensor(np.random.RandomState(5).standard_normal((20, 4)) @ np.diag([3.0, 2.0, 1.0, 0.5]))
    U, S, V = T.pca_lowrank(data, q=4)
    centered = data - data.mean(0)
    return {
        "centered, rank 3 + mean": _svd_summary(T, *T.pca_lowrank(A, q=4), A),
        "not centered": _svd_summary(T, *T.pca_lowrank(A, q=4, center=False), A),
        "default q": list(T.pca_lowrank(A)[1].shape),
        "explained variance": _values(S ** 2 / 19),
        "projection": _values((centered @ V).abs()),
        "q too large": _error(lambda: T.pca_lowrank(A, q=7)),
        "q negative": _error(lambda: T.pca_lowrank(A, q=-1)),
        "niter negative": _error(lambda: T.pca_lowrank(A, niter=-1)),
    }


@scenario
def get_approximate_basis(T):
    lowrank = importlib.import_module(f"{T.__name__}._lowrank")
    A = T.tensor(_low_rank(9, 6, 2, 6))
    M = T.tensor(np.random.RandomState(7).standard_normal((9, 6)))
    Q = lowrank.get_approximate_basis(A, 3)
    QM = lowrank.get_approximate_basis(A + M, 3, niter=None, M=M)
    return {"shape": list(Q.shape), "QtQ": _values(Q.mT @ Q, 10), "QQtA": _values(Q @ (Q.mT @ A)),
            "with M: QQt(A)": _values(QM @ (QM.mT @ A))}


@scenario
def lowrank_gradients(T):
    """Gradients through the sketch's QR and SVD where they do not depend on the draw: the singular values
    of a full-rank matrix sketched at full rank (their gradient is U[:, i] V[:, i]^T), and pca's."""
    A = T.tensor(np.random.RandomState(8).standard_normal((7, 4))).requires_grad_(True)
    weights = T.tensor([1.0, -2.0, 0.5, 3.0], dtype=T.float64)
    (S_grad,) = T.autograd.grad((T.svd_lowrank(A, q=4)[1] * weights).sum(), [A])
    (W_grad,) = T.autograd.grad((T.svd_lowrank(A.mT, q=4)[1] * weights).sum(), [A])
    (P_grad,) = T.autograd.grad((T.pca_lowrank(A, q=4)[1] * weights).sum(), [A])
    (R_grad,) = T.autograd.grad(_reconstruction(T, A).pow(2).sum(), [A])
    return {"svd S": _values(S_grad), "svd S of the transpose": _values(W_grad), "pca S": _values(P_grad),
            "reconstruction": _values(R_grad)}


def _reconstruction(T, A):
    U, S, V = T.svd_lowrank(A, q=4, niter=1)
    return U @ T.diag_embed(S) @ V.mT
