"""Inverse, determinant and matrix power (ATen's BatchLinearAlgebra, LinearAlgebra):
linalg_inv_ex (inverse and linalg_inv over it), linalg_det (det), linalg_slogdet (slogdet,
and logdet composed of it as PyTorch's), and matrix_power composed of matmul and
linalg_inv as PyTorch's linalg_matrix_power.

The gradients are derivatives.yaml's for invertible matrices, written with agrad ops so that
every order of derivative follows: inv' is -A⁻ᴴ G A⁻ᴴ (of the result), det' is
(G·conj(det)) A⁻ᴴ and slogdet's logabsdet' is G A⁻ᴴ (a real sign is piecewise constant; a complex
one's phase adds to G). The complex formulas are the real ones with conjugate transposes (`_mH`),
as derivatives.yaml writes them; for a real matrix `_mH` is the transpose. NOTE:
PyTorch's det backward switches to an SVD for singular matrices (where A⁻¹ does not exist);
agrad's gives inf/nan there, as solving with a singular LU does.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..backends.meta import MetaArray
from ..creation import eye
from ..errors import DtypeNotImplementedError, LinAlgError
from ..messages import scalar_type_name
from .registry import defop
from ._common import _named_results, conj_of
from ._lapack_failures import batch_element, lu_info, per_matrix
from .samples import SampleInput, make_arg
from .linalg import matmul
from .pointwise.binary import eq, where
from .pointwise.complex import imag
from .shape.view import expand, transpose, unsqueeze


def square_shape_check(name, A):
    """ATen's squareCheckInputs: batches of square matrices, its messages prefixed with `name`."""
    if A.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")


def _square_check(op, A):
    square_shape_check(f"linalg.{op}", A)
    if A.dtype.kind not in "fc" or A.dtype == np.float16:
        raise DtypeNotImplementedError(f"linalg.{op}: Expected a floating point or complex tensor as input. "
                                       f"Got {scalar_type_name(A.dtype)}")


def _mT(t):
    return transpose(t, -2, -1)


def _real(np_dtype):
    """The NumPy dtype of a kernel's real result of a complex operand (eigenvalues, singular values, log|det|):
    complex128's float64, a real dtype itself."""
    return dtypes.from_numpy(np_dtype).to_real().np


def _mH(t):
    """t.mH, the conjugate transpose that derivatives.yaml's complex formulas write where the real ones
    had a transpose; a real t's is its transpose (no conj call)."""
    return conj_of(transpose(t, -2, -1))


def _invertible(op, shape, tweak=0):
    """A batch of well-conditioned matrices (diagonally dominant), as a leaf that requires grad."""
    n = shape[-1]
    base = make_arg(shape, key=(op, shape, tweak), requires_grad=False).detach()
    out = base + 3.0 * eye(n, dtype=dtypes.float64)
    return out.detach().requires_grad_()


def _matrix_samples(op):
    negative_det = _invertible(op, (3, 3), 1).detach().clone()
    negative_det[0] = -negative_det[0]           # a negative determinant (slogdet's sign -1)
    return [SampleInput("(3,3)", _invertible(op, (3, 3))),
            SampleInput("(2,4,4) batch", _invertible(op, (2, 4, 4))),
            SampleInput("(1,1)", _invertible(op, (1, 1))),
            SampleInput("negative det", negative_det.requires_grad_()),
            SampleInput("(3,3)T", _mT(_invertible(op, (3, 3), 2)).detach().requires_grad_())]


# ---- the inverse -------------------------------------------------------------------------------

def _inv_ex_meta(A, check_errors=False):
    _square_check("inv", A)
    return MetaArray(A.shape, A.dtype), MetaArray(A.shape[:-2], np.dtype(np.int32))


def _inv_ex_kernel(xp, A, check_errors):
    _square_check("inv", A)

    def singular(k, a):
        # LAPACK's info: a singular matrix has no inverse (PyTorch raises where check_errors, else NaN)
        info = lu_info(a)
        if check_errors:
            raise LinAlgError(f"linalg.inv: {batch_element(A.shape, k)}The diagonal element {info} is zero, the "
                              f"inversion could not be completed because the input matrix is singular.")
        return xp.full(a.shape, np.nan, dtype=A.dtype), xp.asarray(np.int32(info))

    inverse, info = per_matrix(xp, lambda a: (xp.linalg.inv(a), xp.zeros(a.shape[:-2], dtype=np.int32)), A, singular)
    return inverse.astype(A.dtype, copy=False), info


def _inv_ex_grad(grads, result):
    inverse_t = _mH(result[0])
    return -matmul(matmul(inverse_t, grads[0]), inverse_t)


linalg_inv_ex = _named_results(defop(
    "linalg_inv_ex(Tensor A, *, bool check_errors=False) -> (Tensor inverse, Tensor info)",
    kernel=_inv_ex_kernel, meta=_inv_ex_meta, grads={"A": _inv_ex_grad}, supports_complex=True,
    backward_name="LinalgInvExBackward0", samples=_matrix_samples, torch="torch.linalg.inv_ex",
    doc="(A⁻¹, info): the inverse of each square matrix, and LAPACK's info (0 where it is invertible)."),
    "linalg_inv_ex")


def _inv(A):
    # PyTorch's linalg_inv checks linalg_inv_ex's info; here the kernel checks it (check_errors), so that
    # a meta tensor, whose info has no values, passes
    return linalg_inv_ex(A, check_errors=True)[0]


linalg_inv = defop("linalg_inv(Tensor A) -> Tensor", composite=_inv, samples=_matrix_samples,
                   torch="torch.linalg.inv", doc="A⁻¹ of each square matrix (an error where it is singular).")
inverse = defop("inverse(Tensor self) -> Tensor", composite=_inv, samples=_matrix_samples,
                torch="torch.inverse", doc="linalg_inv, PyTorch's older name.")


# ---- determinants ------------------------------------------------------------------------------

def _det_meta(A):
    _square_check("det", A)
    return MetaArray(A.shape[:-2], A.dtype)


def _det_kernel(xp, A):
    _square_check("det", A)
    return xp.asarray(xp.linalg.det(A)).astype(A.dtype, copy=False)


def _det_grad(grad, A, result):
    # derivatives.yaml: linalg_det_backward; for an invertible A, (grad · conj(det)) A⁻ᴴ
    scale = unsqueeze(unsqueeze(grad * conj_of(result), -1), -1)
    return scale * _mH(linalg_inv_ex(A)[0])


linalg_det = defop(
    "linalg_det(Tensor A) -> Tensor",
    kernel=_det_kernel, meta=_det_meta, grads={"A": _det_grad}, supports_complex=True,
    samples=_matrix_samples, torch="torch.linalg.det", doc="The determinant of each square matrix.")
det = defop("det(Tensor self) -> Tensor", composite=lambda self: linalg_det(self), samples=_matrix_samples,
            torch="torch.det", doc="linalg_det, PyTorch's older name.")


def _slogdet_meta(A):
    _square_check("slogdet", A)
    # a complex A's sign is complex (det / |det|), its log|det| real
    return MetaArray(A.shape[:-2], A.dtype), MetaArray(A.shape[:-2], _real(A.dtype))


def _slogdet_kernel(xp, A):
    _square_check("slogdet", A)
    sign, logabsdet = xp.linalg.slogdet(A)
    return (xp.asarray(sign).astype(A.dtype, copy=False),
            xp.asarray(logabsdet).astype(_real(A.dtype), copy=False))


def _slogdet_grad(grads, A, result):
    """derivatives.yaml's slogdet_backward: g A⁻ᴴ with g = grad_logabsdet; a real sign is piecewise constant,
    a complex one adds -i Im(conj(grad_sign) · sign) to g (the phase's derivative)."""
    g = grads[1]
    if A.dtype.is_complex:
        g = g - 1j * imag(grads[0].conj() * result[0])
    return unsqueeze(unsqueeze(g, -1), -1) * _mH(linalg_inv_ex(A)[0])


linalg_slogdet = _named_results(defop(
    "linalg_slogdet(Tensor A) -> (Tensor sign, Tensor logabsdet)",
    kernel=_slogdet_kernel, meta=_slogdet_meta, grads={"A": _slogdet_grad}, supports_complex=True,
    samples=_matrix_samples, torch="torch.linalg.slogdet",
    doc="(sign, log|det|) of each square matrix: the determinant without overflow."),
    "linalg_slogdet")
slogdet = _named_results(defop("slogdet(Tensor self) -> (Tensor sign, Tensor logabsdet)",
                composite=lambda self: linalg_slogdet(self), samples=_matrix_samples,
                torch="torch.slogdet", doc="linalg_slogdet, PyTorch's older name."),
    "slogdet")


def _logdet(self):
    # PyTorch's composite: log det is NaN where the determinant is negative; a complex one's is log(sign) +
    # log|det| (the principal branch)
    sign, logabsdet = linalg_slogdet(self)
    if self.dtype.is_complex:
        return sign.log() + logabsdet
    return where(eq(sign, -1.0), float("nan"), logabsdet)


def _logdet_samples(op):
    # (not the negative determinant: its NaN has no finite-difference gradient to check)
    return [s for s in _matrix_samples(op) if s.name != "negative det"]


logdet = defop("logdet(Tensor self) -> Tensor", composite=_logdet, samples=_logdet_samples, torch="torch.logdet",
               doc="log det of each square matrix (NaN where it is negative).")


# ---- matrix_power ------------------------------------------------------------------------------

def _matrix_power(self, n):
    """PyTorch's linalg_matrix_power: A⁰ is the identity (a copy of A overwritten, CopyBackwards),
    A⁻ⁿ is (A⁻¹)ⁿ, and larger powers multiply by repeated squaring."""
    if self.ndim < 2 or self.shape[-1] != self.shape[-2]:
        raise RuntimeError("linalg.matrix_power: A must be batches of square matrices, but they are "
                           f"{tuple(self.shape[-2:])} matrices")
    if n == 0:
        identity = expand(eye(self.shape[-1], dtype=self.dtype, device=self.device), list(self.shape))
        return self.clone().copy_(identity)
    a = linalg_inv_ex(self, check_errors=True)[0] if n < 0 else self     # (ATen's linalg_inv: singular raises)
    if n < 0:
        return _power_of(a, -n, self_is_new=True)
    return _power_of(a, n, self_is_new=False)


def _power_of(a, n, self_is_new):
    if n == 1:
        return a if self_is_new else a.clone()
    if n == 2:
        return matmul(a, a)
    if n == 3:
        return matmul(matmul(a, a), a)
    z = result = None
    while n > 0:
        z = a if z is None else matmul(z, z)
        if n & 1:
            result = z if result is None else matmul(result, z)
        n >>= 1
    return result


def _matrix_power_samples(op):
    a = _invertible(op, (3, 3))
    return [SampleInput(f"n={n}", a, n) for n in (0, 1, 2, 3, 5, -1, -2)] + [
        SampleInput("batch n=4", _invertible(op, (2, 3, 3)), 4)]


matrix_power = defop("matrix_power(Tensor self, int n) -> Tensor", composite=_matrix_power,
                     samples=_matrix_power_samples, torch="torch.matrix_power",
                     doc="self multiplied by itself n times (the inverse's -n times for n < 0, I for 0).")
