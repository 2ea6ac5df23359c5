"""torch._linalg_utils (PyTorch 2.13's torch/_linalg_utils.py): the matrix helpers that lobpcg and the
low-rank SVD/PCA are written in, on agrad's ops so that autograd goes through them, and the functions
PyTorch removed in 1.9 (torch.symeig, eig, lstsq, matrix_rank, solve and their Tensor methods), which
raise the error that says what replaces them. agrad's tensors are all dense (strided), so `matmul` never
takes torch's sparse.mm branch, and `is_sparse` is False for every tensor (its TypeError for a non-tensor
is torch's). The ops are reached through the dispatcher by name: Tensor's methods call this module.
"""
from __future__ import annotations

from ._tensor import Tensor
from .dispatcher import ops
from .dtypes import float16, float32, float64


def is_sparse(A) -> bool:
    """Whether A is a sparse COO tensor: never, for an agrad tensor."""
    if isinstance(A, Tensor):
        return A.is_sparse
    raise TypeError(f"expected Tensor but got {type(A)}")


def get_floating_dtype(A: Tensor):
    """A's dtype when it is floating point; float32 for an integer or bool tensor."""
    return A.dtype if A.dtype in (float16, float32, float64) else float32


def matmul(A: Tensor | None, B: Tensor) -> Tensor:
    """A @ B, where a missing A (None) stands for the identity."""
    return B if A is None else ops.matmul(A, B)


def bform(X: Tensor, A: Tensor | None, Y: Tensor) -> Tensor:
    """The bilinear form X^T A Y."""
    return matmul(X.mT, matmul(A, Y))


def qform(A: Tensor | None, S: Tensor) -> Tensor:
    """The quadratic form S^T A S."""
    return bform(S, A, S)


def basis(A: Tensor) -> Tensor:
    """An orthonormal basis of A's columns."""
    return ops.linalg_qr(A).Q


def symeig(A: Tensor, largest: bool | None = False) -> tuple[Tensor, Tensor]:
    """The eigenpairs of the symmetric A (its upper triangle), eigenvalues ascending, or descending when
    `largest`."""
    E, Z = ops.linalg_eigh(A, UPLO="U")
    if largest:
        E = ops.flip(E, dims=(-1,))
        Z = ops.flip(Z, dims=(-1,))
    return E, Z


# These functions were deprecated and removed; the messages say what replaces them (PyTorch's).
def matrix_rank(input, tol=None, symmetric=False, *, out=None) -> Tensor:
    raise RuntimeError(
        "This function was deprecated since version 1.9 and is now removed.\n"
        "Please use the `torch.linalg.matrix_rank` function instead. "
        "The parameter 'symmetric' was renamed in `torch.linalg.matrix_rank()` to 'hermitian'."
    )


def solve(input: Tensor, A: Tensor, *, out=None) -> tuple[Tensor, Tensor]:
    raise RuntimeError(
        "This function was deprecated since version 1.9 and is now removed. "
        "`torch.solve` is deprecated in favor of `torch.linalg.solve`. "
        "`torch.linalg.solve` has its arguments reversed and does not return the LU factorization.\n\n"
        "To get the LU factorization see `torch.lu`, which can be used with `torch.lu_solve` or `torch.lu_unpack`.\n"
        "X = torch.solve(B, A).solution "
        "should be replaced with:\n"
        "X = torch.linalg.solve(A, B)"
    )


def lstsq(input: Tensor, A: Tensor, *, out=None) -> tuple[Tensor, Tensor]:
    raise RuntimeError(
        "This function was deprecated since version 1.9 and is now removed. "
        "`torch.lstsq` is deprecated in favor of `torch.linalg.lstsq`.\n"
        "`torch.linalg.lstsq` has reversed arguments and does not return the QR decomposition in "
        "the returned tuple (although it returns other information about the problem).\n\n"
        "To get the QR decomposition consider using `torch.linalg.qr`.\n\n"
        "The returned solution in `torch.lstsq` stored the residuals of the solution in the "
        "last m - n columns of the returned value whenever m > n. In torch.linalg.lstsq, "
        "the residuals are in the field 'residuals' of the returned named tuple.\n\n"
        "The unpacking of the solution, as in\n"
        "X, _ = torch.lstsq(B, A).solution[:A.size(1)]\n"
        "should be replaced with:\n"
        "X = torch.linalg.lstsq(A, B).solution"
    )


def _symeig(input, eigenvectors=False, upper=True, *, out=None) -> tuple[Tensor, Tensor]:
    raise RuntimeError(
        "This function was deprecated since version 1.9 and is now removed. "
        "The default behavior has changed from using the upper triangular portion of the matrix by default "
        "to using the lower triangular portion.\n\n"
        "L, _ = torch.symeig(A, upper=upper) "
        "should be replaced with:\n"
        "L = torch.linalg.eigvalsh(A, UPLO='U' if upper else 'L')\n\n"
        "and\n\n"
        "L, V = torch.symeig(A, eigenvectors=True) "
        "should be replaced with:\n"
        "L, V = torch.linalg.eigh(A, UPLO='U' if upper else 'L')"
    )


def eig(self: Tensor, eigenvectors: bool = False, *, e=None, v=None) -> tuple[Tensor, Tensor]:
    raise RuntimeError(
        "This function was deprecated since version 1.9 and is now removed. "
        "`torch.linalg.eig` returns complex tensors of dtype `cfloat` or `cdouble` rather than real tensors "
        "mimicking complex tensors.\n\n"
        "L, _ = torch.eig(A) "
        "should be replaced with:\n"
        "L_complex = torch.linalg.eigvals(A)\n\n"
        "and\n\n"
        "L, V = torch.eig(A, eigenvectors=True) "
        "should be replaced with:\n"
        "L_complex, V_complex = torch.linalg.eig(A)"
    )
