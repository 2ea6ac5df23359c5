"""What PyTorch does where LAPACK fails, for kernels that call NumPy's LAPACK wrappers, which raise their own
numpy.linalg.LinAlgError ("SVD did not converge", "Singular matrix") instead: `per_matrix` runs a NumPy call on
the whole batch and, where it fails, matrix by matrix, handing each failing matrix to the op's own rule
(raise torch's error for the first of them, or give NaN results where torch's kernel checks no info).

ATen's `_linalg_check_errors` (BatchLinearAlgebra.cpp) words the error of the first matrix whose info is not 0,
"(Batch element k): " after the op's name where the input is batched. LAPACK 3.10+ reports a NaN in an SVD's
input as info = -4 ("contained non-finite values"), which can be known here; the info of a convergence
failure (syevd's, gesdd's "(error code: N)") depends on the LAPACK build and NumPy does not give it, so
those messages end before it.
"""
from __future__ import annotations

import numpy as np

from ..errors import LinAlgError
from ._common import host


def batch_element(shape, k: int) -> str:
    """ATen's batch_str: empty for one matrix, "(Batch element k): " for a batch."""
    return f"(Batch element {k}): " if len(shape) > 2 else ""


def per_matrix(xp, call, A, on_failure):
    """call(A), an array or a tuple of arrays over A's batch; where NumPy's LAPACK fails, call runs on each
    matrix and on_failure(k, a) stands for the failing ones (it raises, or returns NaN results)."""
    try:
        return call(A)
    except np.linalg.LinAlgError:
        pass
    results = []
    for k, index in enumerate(np.ndindex(*A.shape[:-2])):
        try:
            results.append(call(A[index]))
        except np.linalg.LinAlgError:
            results.append(on_failure(k, A[index]))
    batch = A.shape[:-2]
    if isinstance(results[0], tuple):
        return tuple(xp.stack(parts).reshape(batch + parts[0].shape) for parts in zip(*results))
    return xp.stack(results).reshape(batch + results[0].shape)


def svd_failure(xp, A, compute_uv):
    """gesdd's failures as ATen words them: a NaN is info -4; an inf makes the vectors' iteration fail (info
    > 0), while the values alone come back NaN with info 0 (svdvals, matrix_rank, the 2-norms)."""
    def on_failure(k, a):
        if bool(xp.isnan(a).any()):
            raise LinAlgError(f"linalg.svd: {batch_element(A.shape, k)}The algorithm failed to converge because "
                              "the input matrix contained non-finite values.")
        if compute_uv:
            raise LinAlgError(f"linalg.svd: {batch_element(A.shape, k)}The algorithm failed to converge because "
                              "the input matrix is ill-conditioned or has too many repeated singular values.")
        return xp.full(min(a.shape), np.nan, dtype=np.finfo(a.dtype).dtype)     # (real for a complex a)
    return on_failure


def eigh_failure(A):
    """syevd's convergence failure (info > 0), which ATen raises for eigh, eigvalsh and their users."""
    def on_failure(k, a):
        raise LinAlgError(f"linalg.eigh: {batch_element(A.shape, k)}The algorithm failed to converge because the "
                          "input matrix is ill-conditioned or has too many repeated eigenvalues.")
    return on_failure


def nan_results(xp, *shapes_and_dtypes):
    """An on_failure giving NaN arrays, where torch's kernel leaves LAPACK's NaNs and checks no info."""
    return lambda k, a: tuple(xp.full(shape, np.nan, dtype=dtype) for shape, dtype in shapes_and_dtypes)



def lu_info(a) -> int:
    """getrf's info for one square matrix: the first zero on U's diagonal, 1-based (0 where there is none):
    the "diagonal element" of ATen's inv error and the info of linalg.inv_ex (LAPACK through SciPy, on the host)."""
    import warnings

    import scipy.linalg
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")        # (SciPy's LinAlgWarning: "Diagonal number k is exactly zero")
        lu = scipy.linalg.lu_factor(host(a), check_finite=False)[0]
    zeros = np.flatnonzero(np.diagonal(lu) == 0)
    return int(zeros[0]) + 1 if zeros.size else 0
