"""Analytic functions of a matrix (ATen's LinearAlgebra): linalg_matrix_exp, the matrix
exponential (a Taylor polynomial with scaling and squaring, as PyTorch's), and matrix_exp,
torch.matrix_exp's name of it.

The gradient is FunctionsManual's backward_analytic_function_of_a_matrix: for any analytic f,
the upper-right block of f([[Aᴴ, G], [0, Aᴴ]]) is the adjoint of f's derivative at A applied
to G (Mathias 1996), so the backward is matrix_exp again and every order follows; the conjugate
transpose makes it the complex one too."""
from __future__ import annotations

import numpy as np

from ..backends.meta import MetaArray
from .determinants import _mH, _square_check
from .factories import zeros_like
from .registry import defop
from .samples import SampleInput, make_arg
from .shape.indexing import narrow
from .shape.join import cat


def _matrix_exp_meta(self):
    _square_check("matrix_exp", self)
    return MetaArray(self.shape, self.dtype)


_TAYLOR_DEGREE = 18      # the remainder of e^A's series past A¹⁸/18! is below 1/19! ≈ 8e-18 for ‖A‖₁ ≤ 1


def _matrix_exp_kernel(xp, self):
    """Scaling and squaring of a Taylor polynomial, as PyTorch's CPU and CUDA kernels (mexp): A / 2ˢ has a
    1-norm of at most 1, its degree-18 polynomial (Horner's rule) is e^(A / 2ˢ) to rounding, squared s
    times. Written with matmul alone, so one kernel serves every backend; s is the batch's largest."""
    _square_check("matrix_exp", self)
    n = self.shape[-1]
    if self.size == 0:
        return xp.zeros(self.shape, dtype=self.dtype)
    # a matrix with an inf or NaN has no finite scaling: its e^A is NaN (as PyTorch's), the others' as they are
    norms = xp.max(xp.sum(xp.abs(self), axis=-2), axis=-1)
    finite = xp.isfinite(norms)
    norm = float(xp.max(xp.where(finite, norms, 0.0)))
    squarings = max(0, int(np.ceil(np.log2(norm)))) if norm > 1.0 else 0
    a = self / (2.0 ** squarings) if squarings else self
    identity = xp.eye(n, dtype=self.dtype)
    result = identity + a / _TAYLOR_DEGREE
    for k in range(_TAYLOR_DEGREE - 1, 0, -1):
        result = identity + xp.matmul(a, result) / k
    for _ in range(squarings):
        result = xp.matmul(result, result)
    result = xp.where(finite[..., None, None], result, np.nan)
    return result.astype(self.dtype, copy=False)


def _matrix_exp_grad(grad, self):
    n = self.shape[-1]
    At = _mH(self)        # (the adjoint of the differential: f at Aᴴ)
    meta = cat([cat([At, grad], -1), cat([zeros_like(grad), At], -1)], -2)
    return narrow(narrow(linalg_matrix_exp(meta), -2, 0, n), -1, n, n)


def _matrix_exp_samples(op):
    return [SampleInput("(3,3)", make_arg((3, 3), key=(op, 0))),
            SampleInput("(2,2,2) batch", make_arg((2, 2, 2), key=(op, 1))),
            SampleInput("(1,1)", make_arg((1, 1), key=(op, 2))),
            SampleInput("(4,4)T large norm", make_arg((4, 4), key=(op, 3), low=-3.0, high=3.0, transposed=True))]


linalg_matrix_exp = defop(
    "linalg_matrix_exp(Tensor self) -> Tensor",
    kernel=_matrix_exp_kernel, meta=_matrix_exp_meta, grads={"self": _matrix_exp_grad}, supports_complex=True,
    samples=_matrix_exp_samples, torch="torch.linalg.matrix_exp",
    doc="e^A = Σ Aᵏ/k! of each square matrix.")

matrix_exp = defop("matrix_exp(Tensor self) -> Tensor", composite=lambda self: linalg_matrix_exp(self),
                   samples=_matrix_exp_samples, torch="torch.matrix_exp",
                   doc="linalg_matrix_exp, PyTorch's older name.")
