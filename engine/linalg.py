"""agrad.linalg: PyTorch's torch.linalg namespace over the op library's linalg_* ops. Each name
is the op itself where torch.linalg's function is (linalg.solve is the op linalg_solve, as
torch.linalg.solve is torch._C._linalg.linalg_solve), so results, named results
(linalg.eigh(A).eigenvectors), gradients and grad_fn names are the op's; the few whose Python
signature differs from the op's schema (pinv's positional rcond, multi_dot's list, norm's and
matrix_norm's keyword-or-positional ord) are thin functions here.

(The op library's own module of matrix products is agrad.ops.linalg; this is the public one.)
"""
from __future__ import annotations

from .errors import LinAlgError
from .ops import linalg_cholesky as cholesky
from .ops import linalg_cholesky_ex as cholesky_ex
from .ops import linalg_cond as cond
from .ops import linalg_cross as cross
from .ops import linalg_det as det
from .ops import linalg_diagonal as diagonal
from .ops import linalg_eig as eig
from .ops import linalg_eigh as eigh
from .ops import linalg_eigvals as eigvals
from .ops import linalg_eigvalsh as eigvalsh
from .ops import linalg_householder_product as householder_product
from .ops import linalg_inv as inv
from .ops import linalg_inv_ex as inv_ex
from .ops import linalg_ldl_factor as ldl_factor
from .ops import linalg_ldl_factor_ex as ldl_factor_ex
from .ops import linalg_ldl_solve as ldl_solve
from .ops import linalg_lstsq as lstsq
from .ops import linalg_lu as lu
from .ops import linalg_lu_factor as lu_factor
from .ops import linalg_lu_factor_ex as lu_factor_ex
from .ops import linalg_lu_solve as lu_solve
from .ops import linalg_matrix_exp as matrix_exp
from .ops import linalg_matrix_norm as matrix_norm
from .ops import linalg_matrix_rank as matrix_rank
from .ops import linalg_multi_dot as _multi_dot
from .ops import linalg_norm as norm
from .ops import linalg_pinv as _pinv
from .ops import linalg_qr as qr
from .ops import linalg_slogdet as slogdet
from .ops import linalg_solve as solve
from .ops import linalg_solve_ex as solve_ex
from .ops import linalg_solve_triangular as solve_triangular
from .ops import linalg_svd as svd
from .ops import linalg_svdvals as svdvals
from .ops import linalg_tensorinv as tensorinv
from .ops import linalg_tensorsolve as tensorsolve
from .ops import linalg_vander as vander
from .ops import linalg_vecdot as vecdot
from .ops import linalg_vector_norm as vector_norm
from .ops import matmul, matrix_power

__all__ = ["LinAlgError", "cholesky", "cholesky_ex", "cond", "cross", "det", "diagonal", "eig", "eigh", "eigvals", "eigvalsh",
           "householder_product",
           "inv", "inv_ex", "ldl_factor", "ldl_factor_ex", "ldl_solve",
           "lstsq", "lu", "lu_factor", "lu_factor_ex", "lu_solve", "matmul", "matrix_exp", "matrix_norm",
           "matrix_power", "matrix_rank", "multi_dot", "norm", "pinv",
           "qr", "slogdet", "solve", "solve_ex", "solve_triangular", "svd", "svdvals", "tensorinv", "tensorsolve",
           "vander", "vecdot", "vector_norm"]


def multi_dot(tensors):
    """torch.linalg.multi_dot: the product of a sequence (list or tuple) of matrices, in the cheapest order."""
    return _multi_dot(list(tensors))


def pinv(A, rcond=None, hermitian=False, *, atol=None, rtol=None):
    """torch.linalg.pinv: rcond, its positional second argument, is rtol's older name."""
    if rcond is not None:
        if rtol is not None:
            raise RuntimeError("linalg.pinv: rcond and rtol cannot both be given")
        rtol = rcond
    return _pinv(A, atol=atol, rtol=rtol, hermitian=hermitian)
