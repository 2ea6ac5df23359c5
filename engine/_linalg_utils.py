"""torch._linalg_utils (PyTorch 2.13's torch/_linalg_utils.py): the matrix helpers that lobpcg and the
low-rank SVD/PCA are written in, on agrad's ops so that autograd goes through them. agrad's tensors are
all dense (strided), so `matmul` never takes torch's sparse.mm branch, and `is_sparse` is False for every
tensor (its TypeError for a non-tensor is torch's).
"""
from __future__ import annotations

from . import ops
from ._tensor import Tensor
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
