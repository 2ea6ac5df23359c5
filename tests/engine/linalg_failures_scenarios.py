"""Every linear-algebra op on hostile matrices (zero, all-NaN, all-inf, negative-definite, singular, empty,
and batches whose second matrix is NaN, inf or singular), as scenarios that run on PyTorch and on agrad
alike: what each op raises (the error's class, LinAlgError where torch raises torch.linalg.LinAlgError, and
its message) or which entries of its results are not finite (NaN, inf, -inf; finite entries are recorded as
"f", since a singular matrix's factors are defined only up to a gauge and their finite values are compared
by the ops' own tests).

`tests/reference/make_linalg_failures_reference.py` runs them on torch 2.13.0 and writes
`tests/reference/engine/linalg_failures.json`; `test_linalg_failures.py` runs them on agrad and compares.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

SCENARIOS = {}

_I2 = 2 * np.eye(3)
MATRICES = {
    "zero": np.zeros((3, 3)),
    "nan": np.full((3, 3), np.nan),
    "inf": np.full((3, 3), np.inf),
    "negdef": -np.diag([1.0, 2.0, 3.0]),
    "singular": np.ones((3, 3)),
    "empty": np.zeros((0, 0)),
    "batch_nan": np.stack([_I2, np.full((3, 3), np.nan)]),
    "batch_inf": np.stack([_I2, np.full((3, 3), np.inf)]),
    "batch_singular": np.stack([_I2, np.ones((3, 3))]),
}


def _rhs(T, A):
    return T.ones(*A.shape[:-1], 2, dtype=A.dtype, device=A.device)


def _pivots(T, A):
    return T.arange(1, A.shape[-1] + 1, dtype=T.int32, device=A.device).expand(*A.shape[:-1]).contiguous()


# (name, call(T, A)): every op of torch.linalg that takes a matrix, and torch's own linalg functions.
# The factored-input solvers (lu_solve, ldl_solve, cholesky_solve, triangular_solve) get the hostile matrix
# as their factor, with pivots that swap nothing.
OPS = {
    "linalg.cholesky": lambda T, A: T.linalg.cholesky(A),
    "linalg.cholesky_ex": lambda T, A: T.linalg.cholesky_ex(A),
    "linalg.cond": lambda T, A: T.linalg.cond(A),
    "linalg.cond_fro": lambda T, A: T.linalg.cond(A, "fro"),
    "linalg.cond_nuc": lambda T, A: T.linalg.cond(A, "nuc"),
    "linalg.cond_-2": lambda T, A: T.linalg.cond(A, -2),
    "linalg.cond_1": lambda T, A: T.linalg.cond(A, 1),
    "linalg.cond_inf": lambda T, A: T.linalg.cond(A, math.inf),
    "linalg.det": lambda T, A: T.linalg.det(A),
    "linalg.eig": lambda T, A: T.linalg.eig(A),
    "linalg.eigh": lambda T, A: T.linalg.eigh(A),
    "linalg.eigvals": lambda T, A: T.linalg.eigvals(A),
    "linalg.eigvalsh": lambda T, A: T.linalg.eigvalsh(A),
    "linalg.householder_product": lambda T, A: T.linalg.householder_product(A, A[..., 0, :]),
    "linalg.inv": lambda T, A: T.linalg.inv(A),
    "linalg.inv_ex": lambda T, A: T.linalg.inv_ex(A),
    "linalg.ldl_factor": lambda T, A: T.linalg.ldl_factor(A),
    "linalg.ldl_factor_ex": lambda T, A: T.linalg.ldl_factor_ex(A),
    "linalg.ldl_solve": lambda T, A: T.linalg.ldl_solve(A, _pivots(T, A), _rhs(T, A)),
    "linalg.lstsq": lambda T, A: T.linalg.lstsq(A, _rhs(T, A)).solution,
    "linalg.lstsq_gelsd": lambda T, A: T.linalg.lstsq(A, _rhs(T, A), driver="gelsd"),
    "linalg.lu": lambda T, A: T.linalg.lu(A),
    "linalg.lu_factor": lambda T, A: T.linalg.lu_factor(A),
    "linalg.lu_factor_ex": lambda T, A: T.linalg.lu_factor_ex(A),
    "linalg.lu_solve": lambda T, A: T.linalg.lu_solve(A, _pivots(T, A), _rhs(T, A)),
    "linalg.matrix_exp": lambda T, A: T.linalg.matrix_exp(A),
    "linalg.matrix_norm_2": lambda T, A: T.linalg.matrix_norm(A, 2),
    "linalg.matrix_norm_-2": lambda T, A: T.linalg.matrix_norm(A, -2),
    "linalg.matrix_norm_nuc": lambda T, A: T.linalg.matrix_norm(A, "nuc"),
    "linalg.matrix_norm_fro": lambda T, A: T.linalg.matrix_norm(A),
    "linalg.matrix_power_-1": lambda T, A: T.linalg.matrix_power(A, -1),
    "linalg.matrix_power_3": lambda T, A: T.linalg.matrix_power(A, 3),
    "linalg.matrix_rank": lambda T, A: T.linalg.matrix_rank(A),
    "linalg.matrix_rank_hermitian": lambda T, A: T.linalg.matrix_rank(A, hermitian=True),
    "linalg.norm": lambda T, A: T.linalg.norm(A, 2, dim=(-2, -1)),
    "linalg.pinv": lambda T, A: T.linalg.pinv(A),
    "linalg.pinv_hermitian": lambda T, A: T.linalg.pinv(A, hermitian=True),
    "linalg.qr": lambda T, A: T.linalg.qr(A),
    "linalg.slogdet": lambda T, A: T.linalg.slogdet(A),
    "linalg.solve": lambda T, A: T.linalg.solve(A, _rhs(T, A)),
    "linalg.solve_ex": lambda T, A: T.linalg.solve_ex(A, _rhs(T, A)),
    "linalg.solve_triangular": lambda T, A: T.linalg.solve_triangular(A, _rhs(T, A), upper=True),
    "linalg.svd": lambda T, A: T.linalg.svd(A),
    "linalg.svdvals": lambda T, A: T.linalg.svdvals(A),
    "linalg.tensorinv": lambda T, A: T.linalg.tensorinv(A, 1),
    "linalg.tensorsolve": lambda T, A: T.linalg.tensorsolve(A, T.ones(*A.shape[:1], dtype=A.dtype, device=A.device)),
    "cholesky": lambda T, A: T.cholesky(A),
    "cholesky_inverse": lambda T, A: T.cholesky_inverse(A),
    "cholesky_solve": lambda T, A: T.cholesky_solve(_rhs(T, A), A),
    "det": lambda T, A: T.det(A),
    "geqrf": lambda T, A: T.geqrf(A),
    "inverse": lambda T, A: T.inverse(A),
    "logdet": lambda T, A: T.logdet(A),
    "lu": lambda T, A: T.linalg.lu_factor_ex(A)[:2] if A.numel() == 0 else T.lu(A),
    "lu_solve": lambda T, A: T.lu_solve(_rhs(T, A), A, _pivots(T, A)),
    "matrix_exp": lambda T, A: T.matrix_exp(A),
    "nuclear_norm": lambda T, A: T.nuclear_norm(A),
    "pinverse": lambda T, A: T.pinverse(A),
    "qr": lambda T, A: T.qr(A),
    "slogdet": lambda T, A: T.slogdet(A),
    "svd": lambda T, A: T.svd(A),
    "triangular_solve": lambda T, A: T.triangular_solve(_rhs(T, A), A),
    "triangular_solve_lower": lambda T, A: T.triangular_solve(_rhs(T, A), A, upper=False),
}


def _pattern(value):
    """Which entries of each result are not finite: "nan", "inf", "-inf", or "f" (finite), with the shapes."""
    if isinstance(value, (tuple, list)):
        return [_pattern(v) for v in value]
    a = np.asarray(value.detach().cpu().tolist(), dtype=complex if value.is_complex() else float)
    words = np.where(np.isnan(a), "nan", np.where(np.isposinf(a.real), "inf",
                                                  np.where(np.isneginf(a.real), "-inf", "f")))
    return {"shape": list(value.shape), "entries": words.ravel().tolist()}


def outcome(T, op, matrix, device="cpu"):
    """What OPS[op] does on MATRICES[matrix]: {"raises": [class, message]} or {"results": patterns}."""
    A = T.tensor(MATRICES[matrix], dtype=T.float64, device=device)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            value = OPS[op](T, A)
    except Exception as exc:  # noqa: BLE001 — the scenario records whatever was raised
        builtin = next(c for c in type(exc).__mro__ if c.__module__ == "builtins")
        kind = "LinAlgError" if "LinAlgError" in type(exc).__name__ else builtin.__name__
        return {"raises": [kind, str(exc).replace("torch", "LIB").replace("agrad", "LIB")]}
    return {"results": _pattern(value)}


for _op in OPS:
    for _matrix in MATRICES:
        SCENARIOS[f"{_op}/{_matrix}"] = (lambda op, matrix: lambda T: outcome(T, op, matrix))(_op, _matrix)
