"""Matrix decompositions (ATen's BatchLinearAlgebra): linalg_cholesky_ex (linalg_cholesky),
linalg_qr (and linalg_householder_product, geqrf's Q from its reflectors, a composite), linalg_eigh
(linalg_eigvalsh), linalg_eig (linalg_eigvals: any square matrix, complex results), linalg_svd (linalg_svdvals), and the deprecated svd, qr and cholesky over them;
geqrf (LAPACK's QR reflectors) with orgqr and ormqr, which form or apply their Q;
each over the
leading (batch) dimensions, by LAPACK through NumPy as PyTorch's CPU kernels call LAPACK
(potrf, geqrf/orgqr, syevd, gesdd). Where a decomposition leaves signs free, they are LAPACK's:
QR's match PyTorch's (Householder's convention), but eigh's and svd's columns can differ in
sign between LAPACK builds (PyTorch's MKL, NumPy's OpenBLAS), as they do between PyTorch's own
CPU and CUDA; the tests compare gauge-invariant parts (|V|, |U|, |Vh|), as PyTorch's OpInfo does.

The gradients are FunctionsManual.cpp's (cholesky_backward, linalg_qr_backward,
linalg_eig_backward for Hermitian input, svd_backward), written with agrad ops so that every
order of derivative follows. eigh and cholesky read one triangle of A: their gradient is the
symmetric one PyTorch gives (so gradcheck calls them on A + Aᴴ, as PyTorch's OpInfo does).
Where eigenvalues or singular values repeat, eigenvectors are not unique and the gradient is
not defined (inf/nan, as in PyTorch).
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..backends.meta import MetaArray
from ..creation import arange, eye, zeros
from ..errors import DtypeNotImplementedError, LinAlgError
from ..messages import scalar_type_name
from ..warn_once import warn_once
from ._lapack_failures import batch_element, eigh_failure, nan_results, per_matrix, svd_failure
from .determinants import _mH, _mT, _real, _square_check, square_shape_check
from .linalg import matmul
from ._common import _named_results, conj_of, host
from .registry import NotImplementedDerivative, defop
from .samples import SampleInput, make_arg
from .shape.diagonal import diag_embed, diagonal, tril, triu
from .shape.indexing import narrow
from .shape.join import cat
from .pointwise.complex import real
from .solve import linalg_solve


def _matrix_check(op, A):
    if A.ndim < 2:
        raise RuntimeError(f"linalg.{op}: The input tensor A must have at least 2 dimensions.")
    if A.dtype.kind not in "fc" or A.dtype == np.float16:
        raise DtypeNotImplementedError(f"linalg.{op}: Expected a floating point or complex tensor as input. "
                                       f"Got {scalar_type_name(A.dtype)}")


def hermitian_input(op, A, *args, **kwargs):
    """PyTorch's gradcheck_wrapper_hermitian_input: the op on A + Aᴴ, where its gradient is the true one."""
    return op(A + _mH(A), *args, **kwargs)


def _spd(op, shape, tweak=0):
    """A batch of symmetric positive-definite matrices M Mᵀ + I, as a leaf that requires grad."""
    m = make_arg(shape, key=(op, shape, tweak), requires_grad=False).detach()
    return (matmul(m, _mT(m)) + eye(shape[-1], dtype=dtypes.float64)).detach().requires_grad_()


def _symmetric(op, shape, tweak=0):
    m = make_arg(shape, key=(op, shape, tweak), requires_grad=False).detach()
    return (m + _mT(m)).detach().requires_grad_()


# ---- cholesky ----------------------------------------------------------------------------------

def _cholesky_ex_meta(A, upper=False, check_errors=False):
    _square_check("cholesky", A)
    return MetaArray(A.shape, A.dtype), MetaArray(A.shape[:-2], np.dtype(np.int32))


def _potf2(xp, a):
    """LAPACK's unblocked Cholesky (potf2, lower) of one matrix, for the matrices NumPy's cannot answer for:
    (L, info), info the order of the first leading minor whose pivot is not positive (or is NaN, which NumPy
    passes on), L the partial factor LAPACK leaves: the columns done, the failing pivot stored on the diagonal,
    A's lower triangle beyond it (what PyTorch's cholesky_ex returns).
    n steps of vector arithmetic (only where a matrix fails, or has an inf or NaN)."""
    n = a.shape[-1]
    L = xp.tril(a).astype(a.dtype, copy=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        for j in range(n):
            pivot = a[j, j] - xp.sum(L[j, :j] * xp.conj(L[j, :j]))
            if not bool(pivot.real > 0):            # (False for NaN too)
                L[j, j] = pivot
                return L, j + 1
            L[j, j] = xp.sqrt(pivot.real)
            L[j + 1:, j] = (a[j + 1:, j] - L[j + 1:, :j] @ xp.conj(L[j, :j])) / L[j, j]
    return L, 0


def _cholesky_ex_kernel(xp, A, upper, check_errors):
    _square_check("cholesky", A)
    # NumPy reads the lower triangle; upper=True reads the upper one, as PyTorch's potrf('U'): Aᴴ's lower
    a = xp.conj(xp.swapaxes(A, -1, -2)) if upper else A
    info = xp.zeros(A.shape[:-2], dtype=np.int32)
    try:
        L = xp.linalg.cholesky(a)
        # (an inf or NaN may fail potrf's pivot test where NumPy's arithmetic passes it on)
        failed = not bool(xp.isfinite(a).all())
    except np.linalg.LinAlgError:
        failed = True
    if failed:
        L = xp.array(xp.broadcast_to(xp.zeros((), dtype=A.dtype), A.shape))
        for k, index in enumerate(np.ndindex(*A.shape[:-2])):
            L[index], info[index] = _potf2(xp, a[index])
            if info[index] and check_errors:
                raise LinAlgError(f"linalg.cholesky: {batch_element(A.shape, k)}The factorization could not be "
                                  f"completed because the input is not positive-definite (the leading minor of "
                                  f"order {int(info[index])} is not positive-definite).") from None
    if upper:
        L = xp.conj(xp.swapaxes(L, -1, -2))
    return xp.ascontiguousarray(L).astype(A.dtype, copy=False), info


def _cholesky_grad(grads, result, upper):
    """cholesky_backward (Murray 2016): gA = L⁻ᴴ Φ(Lᴴ gL) L⁻¹ made Hermitian, Φ the lower triangle with
    half its diagonal."""
    L, gL = result[0], grads[0]
    if upper:
        L, gL = _mH(L), _mH(gL)
    phi = tril(matmul(_mH(L), gL))
    phi = phi - 0.5 * diag_embed(diagonal(phi, 0, -2, -1))
    phi = 0.5 * (phi + _mH(phi))
    inner = linalg_solve(_mH(L), phi)                     # L⁻ᴴ Φ
    return _mH(linalg_solve(_mH(L), _mH(inner)))           # (L⁻ᴴ (L⁻ᴴ Φ)ᴴ)ᴴ = L⁻ᴴ Φ L⁻¹


def _cholesky_samples(op):
    return [SampleInput("(3,3)", _spd(op, (3, 3))).wrapped(hermitian_input),
            SampleInput("(2,4,4) batch", _spd(op, (2, 4, 4))).wrapped(hermitian_input),
            SampleInput("(1,1)", _spd(op, (1, 1))).wrapped(hermitian_input),
            SampleInput("upper", _spd(op, (3, 3), 1), upper=True).wrapped(hermitian_input)]


linalg_cholesky_ex = _named_results(defop(
    "linalg_cholesky_ex(Tensor A, *, bool upper=False, bool check_errors=False) -> (Tensor L, Tensor info)",
    kernel=_cholesky_ex_kernel, meta=_cholesky_ex_meta, grads={"A": _cholesky_grad},
    samples=_cholesky_samples, torch="torch.linalg.cholesky_ex", supports_complex=True,
    doc="(L, info): L lower-triangular with L Lᴴ = A (U upper with Uᴴ U = A for upper=True), from A's lower "
        "(upper) triangle; LAPACK's info (the order of the first minor that is not positive-definite, or 0)."),
    "linalg_cholesky_ex")


def _cholesky(A, upper=False):
    return linalg_cholesky_ex(A, upper=upper, check_errors=True)[0]


linalg_cholesky = defop("linalg_cholesky(Tensor A, *, bool upper=False) -> Tensor", composite=_cholesky,
                        samples=_cholesky_samples, torch="torch.linalg.cholesky",
                        doc="The Cholesky factor of each Hermitian positive-definite matrix (an error where it is not).")


# ---- qr ------------------------------------------------------------------------------------------

def _qr_shapes(A, mode):
    if A.ndim < 2:
        raise RuntimeError("linalg.qr: The input tensor A must have at least 2 dimensions.")
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), 'r', "
                           f"or 'complete'")
    *batch, m, n = A.shape
    k = min(m, n)
    q = (0,) if mode == "r" else tuple(batch) + ((m, m) if mode == "complete" else (m, k))
    r = tuple(batch) + ((m, n) if mode == "complete" else (k, n))
    return q, r


def _qr_meta(A, mode="reduced"):
    _matrix_check("qr", A)
    q, r = _qr_shapes(A, mode)
    return MetaArray(q, A.dtype), MetaArray(r, A.dtype)


def _qr_kernel(xp, A, mode):
    _matrix_check("qr", A)
    q_shape, _ = _qr_shapes(A, mode)
    if mode == "r":
        return xp.empty(q_shape, dtype=A.dtype), xp.linalg.qr(A, mode="r").astype(A.dtype, copy=False)
    Q, R = xp.linalg.qr(A, mode=mode)
    return Q.astype(A.dtype, copy=False), R.astype(A.dtype, copy=False)


def _qr_square_or_tall(gQ, gR, Q, R):
    """linalg_qr_backward for m >= n: gA = [gQ + Q copyltu(M)] R⁻ᴴ with M = R gRᴴ - gQᴴ Q, copyltu
    its lower triangle reflected (PyTorch's syminvadj of the upper triangle of Mᴴ)."""
    M = matmul(gR, _mH(R)) - matmul(_mH(Q), gQ)
    upper = triu(M)
    sym = upper + _mH(upper)                              # (its diagonal real: halving it is halving its real part)
    sym = sym - 0.5 * diag_embed(diagonal(sym, 0, -2, -1))
    b = matmul(Q, sym) + gQ
    return _mH(linalg_solve(R, _mH(b)))                  # b R⁻ᴴ


def _qr_grad(grads, result, mode):
    gQ, gR = grads
    Q, R = result
    if mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please use "
                           "linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr.")
    m, n = Q.shape[-2], R.shape[-1]
    if mode == "complete" and m > n:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and nrows > ncols.")
    if m >= n:
        return _qr_square_or_tall(gQ, gR, Q, R)
    # A = [X | Y] with X = Q U square and Y = Q V: V's gradient reaches Q through V = Qᴴ Y, and Y as Q gV
    # (Y = Q V from the results: A itself is not saved, as PyTorch's node saves Q and R only)
    gU, gV = narrow(gR, -1, 0, m), narrow(gR, -1, m, n - m)
    Y = matmul(Q, narrow(R, -1, m, n - m))
    gX = _qr_square_or_tall(gQ + matmul(Y, _mH(gV)), gU, Q, narrow(R, -1, 0, m))
    return cat([gX, matmul(Q, gV)], -1)


def _qr_samples(op):
    return [SampleInput("(4,3)", make_arg((4, 3), key=(op, 7))),
            SampleInput("(3,3)", make_arg((3, 3), key=(op, 1))),
            SampleInput("(3,5) wide", make_arg((3, 5), key=(op, 2))),
            SampleInput("(2,4,3) batch", make_arg((2, 4, 3), key=(op, 3))),
            SampleInput("(3,4) complete", make_arg((3, 4), key=(op, 4)), mode="complete"),
            SampleInput("(3,3)T complete", make_arg((3, 3), key=(op, 5), transposed=True), "complete"),
            SampleInput("(4,3) r", make_arg((4, 3), key=(op, 6), requires_grad=False), mode="r")]


linalg_qr = _named_results(defop(
    "linalg_qr(Tensor A, str mode='reduced') -> (Tensor Q, Tensor R)",
    kernel=_qr_kernel, meta=_qr_meta, grads={"A": _qr_grad},
    samples=_qr_samples, torch="torch.linalg.qr", supports_complex=True,
    doc="(Q, R) with A = Q R, Q's columns orthonormal, R upper-triangular; mode 'reduced' (k = min(m, n) "
        "columns), 'complete' (Q square) or 'r' (R only, Q empty)."),
    "linalg_qr")


# ---- eigh ------------------------------------------------------------------------------------------

def _eigh_meta(A, UPLO="L"):
    _square_check("eigh", A)
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    # (the eigenvalues of a Hermitian matrix are real)
    return MetaArray(A.shape[:-1], _real(A.dtype)), MetaArray(A.shape, A.dtype)


def _eigh_kernel(xp, A, UPLO):
    _eigh_meta(A, UPLO)
    L, V = per_matrix(xp, lambda a: xp.linalg.eigh(a, UPLO=UPLO), A, eigh_failure(A))
    return L.astype(_real(A.dtype), copy=False), V.astype(A.dtype, copy=False)


_PHASE_DEPENDENT = ("{}: The eigenvectors in the complex case are specified up to multiplication by e^{{i phi}}. "
                    "The specified loss function depends on this quantity, so it is ill-defined.")


def _check_phase_invariant(VhgV, op):
    """linalg_eig_backward's check that a loss of complex eigenvectors does not depend on their phases
    (V -> V e^{iφ}): Im diag(Vᴴ gV) = 0, to PyTorch's lax 1e-2 (rtol and atol against zeros)."""
    if not VhgV.dtype.is_complex:
        return
    imdiag = diagonal(VhgV, 0, -2, -1).detach()._data
    if not isinstance(imdiag, MetaArray):              # (a Meta tensor has no values to check)
        imdiag = host(imdiag).imag
        if not np.all(np.abs(imdiag) <= 1e-2):
            raise RuntimeError(_PHASE_DEPENDENT.format(op))


def _eig_inner(V, VhgV, gL, L, hermitian):
    """linalg_eig_backward's middle factor: Vᴴ gV projected (onto the skew-Hermitian matrices, or for
    unit-norm eigenvectors, Vᴴ gV - Vᴴ V Re diag(Vᴴ gV)), divided by E* (E[i, j] = L[j] - L[i], 1 on
    the diagonal), its diagonal then gL, as PyTorch's copy_ into it."""
    if hermitian:
        VhgV = 0.5 * (VhgV - _mH(VhgV))
    else:
        VhgV = VhgV - matmul(_mH(V), V * real(diagonal(VhgV, 0, -2, -1)).unsqueeze(-2))
    Lc = conj_of(L)
    E = Lc.unsqueeze(-2) - Lc.unsqueeze(-1) + eye(L.shape[-1], dtype=L.dtype, device=L.device)
    inner = VhgV / E
    # (a real Hermitian's skew part has an exact zero diagonal: adding gL is the copy, without a subtraction)
    if not (hermitian and not inner.dtype.is_complex):
        inner = inner - diag_embed(diagonal(inner, 0, -2, -1))
    return inner + diag_embed(gL)


def _eigh_grad(grads, result):
    """linalg_eig_backward for Hermitian A: gA = V (skew(Vᴴ gV) / E + diag(gL)) Vᴴ, E[i, j] = L[j] - L[i]."""
    gL, gV = grads
    L, V = result
    VhgV = matmul(_mH(V), gV)
    _check_phase_invariant(VhgV, "linalg_eigh_backward")
    return matmul(V, matmul(_eig_inner(V, VhgV, gL, L, True), _mH(V)))


def eigh_gauge_invariant(outputs):
    """(L, |V|): invariant under the sign of each eigenvector, which LAPACK builds choose differently."""
    L, V = outputs
    return L, V.abs()


def _eigh_samples(op, gauge=True):
    samples = [SampleInput("(3,3)", _symmetric(op, (3, 3))).wrapped(hermitian_input),
               SampleInput("(2,4,4) batch", _symmetric(op, (2, 4, 4))).wrapped(hermitian_input),
               SampleInput("(1,1)", _symmetric(op, (1, 1))).wrapped(hermitian_input),
               SampleInput("UPLO=U", _symmetric(op, (3, 3), 1), UPLO="U").wrapped(hermitian_input)]
    return [s.processed(eigh_gauge_invariant) for s in samples] if gauge else samples


linalg_eigh = _named_results(defop(
    "linalg_eigh(Tensor A, str UPLO='L') -> (Tensor eigenvalues, Tensor eigenvectors)",
    kernel=_eigh_kernel, meta=_eigh_meta, grads={"A": _eigh_grad},
    samples=_eigh_samples, torch="torch.linalg.eigh", supports_complex=True,
    doc="(L, V) of a symmetric matrix (from its UPLO triangle): eigenvalues ascending, orthonormal eigenvectors "
        "as columns, A = V diag(L) Vᴴ."),
    "linalg_eigh")

def _eigvalsh_meta(A, UPLO="L"):
    return _eigh_meta(A, UPLO)[0]


def _eigvalsh_grad(grad, A, UPLO):
    """linalg_eig_backward without gV: V diag(gL) Vᴴ, defined where eigenvalues repeat too (the eigenvectors
    are recomputed here; PyTorch computes them in the forward when A requires grad)."""
    V = linalg_eigh(A, UPLO)[1]
    return matmul(V * grad.unsqueeze(-2), _mH(V))


linalg_eigvalsh = defop(
    "linalg_eigvalsh(Tensor A, str UPLO='L') -> Tensor",
    kernel=lambda xp, A, UPLO: _eigh_kernel(xp, A, UPLO)[0], meta=_eigvalsh_meta, grads={"A": _eigvalsh_grad},
    backward_name="LinalgEighBackward0", samples=lambda op: _eigh_samples(op, gauge=False),
    torch="torch.linalg.eigvalsh", supports_complex=True,
    doc="The eigenvalues of a symmetric matrix, ascending (PyTorch's node, LinalgEighBackward0).")


# ---- eig ---------------------------------------------------------------------------------------------
# The eigendecomposition of a general square matrix: complex eigenvalues and eigenvectors whatever A's
# dtype (complex64 of float32, complex128 of float64), in LAPACK's geev order, each eigenvector of unit
# 2-norm with its largest component real (geev's normalisation, as PyTorch's CPU kernel calls geev). An
# eigenvector is defined up to a phase e^{iφ}: a loss of V must not depend on it (linalg_eig_backward
# checks), the tests compare |V|, as PyTorch's OpInfo does.

def _eig_meta(A):
    square_shape_check("linalg.eig", A)
    if A.dtype == np.float16:
        raise DtypeNotImplementedError("\"linalg_eig_out_cpu\" not implemented for 'Half'")
    complex_dtype = dtypes.from_numpy(A.dtype).to_complex().np      # (c10's toComplexType: refuses integers)
    return MetaArray(A.shape[:-1], complex_dtype), MetaArray(A.shape, complex_dtype)


def _eig_kernel(xp, A, check_finite=True):
    L, V = _eig_meta(A)
    if A.size == 0:
        return xp.zeros(L.shape, dtype=L.dtype), xp.zeros(V.shape, dtype=V.dtype)
    # on the host, as PyTorch's CUDA kernel (MAGMA's geev) runs it: CuPy has no eig
    a = host(A)
    # linalg_eig refuses a non-finite input before geev; eigvals checks nothing and gets geev's NaNs
    if check_finite and not np.isfinite(a).all():
        raise RuntimeError("torch.linalg.eig: input tensor should not contain infs or NaNs.")
    values, vectors = per_matrix(np, np.linalg.eig, a, nan_results(np, (L.shape[-1:], L.dtype), (V.shape[-2:], V.dtype)))
    return xp.asarray(values.astype(L.dtype, copy=False)), xp.asarray(np.ascontiguousarray(vectors).astype(V.dtype))


def _eig_grad(grads, result):
    """linalg_eig_backward: gA = V⁻ᴴ (diag(gL) + (Vᴴ gV - Vᴴ V Re diag(Vᴴ gV)) / E*) Vᴴ, E[i, j] = L[j] - L[i]
    (the projection keeps the eigenvectors' unit norm); its real part for a real A (handle_r_to_c, the
    engine's)."""
    gL, gV = grads
    L, V = result
    VhgV = matmul(_mH(V), gV)
    _check_phase_invariant(VhgV, "linalg_eig_backward")
    return linalg_solve(_mH(V), matmul(_eig_inner(V, VhgV, gL, L, False), _mH(V)))


def eig_gauge_invariant(outputs):
    """(|L|, arg L, |V|): invariant under the phase of each eigenvector (PyTorch's OpInfo compares L and |V|),
    L in real numbers, which the reference fixtures record (and dask computes: it has no view_as_real)."""
    L, V = outputs
    return L.abs(), L.angle(), V.abs()


def eigvals_parts(L):
    """(|L|, arg L), as the reference fixtures record them (the samples' eigenvalues are away from arg's cut)."""
    return L.abs(), L.angle()


def _nonsymmetric(op, shape, tweak=0, dtype=None):
    """A batch of matrices with well separated eigenvalues (1, 2, ... on the diagonal, small entries off it),
    as a leaf that requires grad: complex conjugate pairs where it is real (a rotation block)."""
    n = shape[-1]
    m = 0.3 * make_arg(shape, key=(op, shape, tweak), requires_grad=False).detach()
    m = m + diag_embed(arange(1, n + 1, dtype=dtypes.float64))
    if n >= 2:
        m[..., 0, 1] = m[..., 0, 1] + 1.5           # with the diagonal 1, 2: a pair 1.5 ± i·(about 1.1)
        m[..., 1, 0] = m[..., 1, 0] - 1.5
    return (m if dtype is None else m.to(dtype)).detach().requires_grad_()


def _eig_samples(op, gauge):
    samples = [SampleInput("(3,3) complex pair", _nonsymmetric(op, (3, 3))),
               SampleInput("(2,4,4) batch", _nonsymmetric(op, (2, 4, 4))),
               SampleInput("(1,1)", _nonsymmetric(op, (1, 1))),
               SampleInput("(3,3)T", _mT(_nonsymmetric(op, (3, 3), 1)).detach().requires_grad_())]
    return [s.processed(eig_gauge_invariant if gauge else eigvals_parts) for s in samples]


linalg_eig = _named_results(defop(
    "linalg_eig(Tensor self) -> (Tensor eigenvalues, Tensor eigenvectors)",
    kernel=_eig_kernel, meta=_eig_meta, grads={"self": _eig_grad}, supports_complex=True,
    samples=lambda op: _eig_samples(op, gauge=True), torch="torch.linalg.eig",
    doc="(L, V) with A V = V diag(L): complex eigenvalues and unit-norm eigenvectors (as columns) of a square "
        "matrix, real or complex, in LAPACK geev's order."),
    "linalg_eig")


def _eigvals_grad(grad, self):
    """linalg_eig_backward without gV: V⁻ᴴ diag(gL) Vᴴ (the eigenvectors recomputed here; PyTorch computes
    them in the forward when A requires grad)."""
    V = linalg_eig(self)[1]
    return linalg_solve(_mH(V), grad.unsqueeze(-1) * _mH(V))


linalg_eigvals = defop(
    "linalg_eigvals(Tensor self) -> Tensor",
    kernel=lambda xp, self: _eig_kernel(xp, self, check_finite=False)[0], meta=lambda self: _eig_meta(self)[0],
    grads={"self": _eigvals_grad}, supports_complex=True, backward_name="LinalgEigBackward0",
    samples=lambda op: _eig_samples(op, gauge=False), torch="torch.linalg.eigvals",
    doc="The complex eigenvalues of a square matrix, in LAPACK geev's order (PyTorch's node, LinalgEigBackward0).")


# ---- svd ---------------------------------------------------------------------------------------------

def _svd_meta(A, full_matrices=True):
    _matrix_check("svd", A)
    *batch, m, n = A.shape
    k = min(m, n)
    batch = tuple(batch)
    S = MetaArray(batch + (k,), _real(A.dtype))                # (singular values are real)
    if full_matrices:
        return MetaArray(batch + (m, m), A.dtype), S, MetaArray(batch + (n, n), A.dtype)
    return MetaArray(batch + (m, k), A.dtype), S, MetaArray(batch + (k, n), A.dtype)


def _svd_kernel(xp, A, full_matrices):
    _matrix_check("svd", A)
    U, S, Vh = per_matrix(xp, lambda a: xp.linalg.svd(a, full_matrices=full_matrices), A, svd_failure(xp, A, True))
    return U.astype(A.dtype, copy=False), S.astype(_real(A.dtype), copy=False), Vh.astype(A.dtype, copy=False)


def _svd_grad(grads, result, full_matrices):
    """svd_backward: the reduced decomposition's (full_matrices' extra columns of U and rows of Vh carry no
    gradient, derivatives.yaml narrows them away). E[i, j] = S[j]² - S[i]² (1 on the diagonal)."""
    gU, gS, gVh = grads
    U, S, Vh = result
    m, n = U.shape[-2], Vh.shape[-1]
    k = S.shape[-1]
    if full_matrices:
        gU, U = narrow(gU, -1, 0, k), narrow(U, -1, 0, k)
        gVh, Vh = narrow(gVh, -2, 0, k), narrow(Vh, -2, 0, k)
    UhgU = matmul(_mH(U), gU)
    UhgU = UhgU - _mH(UhgU)
    VhgV = matmul(Vh, _mH(gVh))
    VhgV = VhgV - _mH(VhgV)
    _check_svd_phase_invariant(UhgU, VhgV)
    S2 = S * S
    E = S2.unsqueeze(-2) - S2.unsqueeze(-1) + eye(k, dtype=S.dtype, device=S.device)
    gA = (UhgU * S.unsqueeze(-2) + S.unsqueeze(-1) * VhgV) / E + diag_embed(gS)
    if UhgU.dtype.is_complex:       # i Im diag(Uᴴ gU) / S: the phase part (the skew part's diagonal / 2S)
        gA = gA + diag_embed(diagonal(UhgU, 0, -2, -1) / (2.0 * S))
    if m > n:           # gA = [U gA + (I - U Uᴴ) gU S⁻¹] Vᴴ
        gUSinv = gU / S.unsqueeze(-2)
        gA = matmul(U, gA) + gUSinv - matmul(U, matmul(_mH(U), gUSinv))
        return matmul(gA, Vh)
    if m < n:           # gA = U [gA Vᴴ + S⁻¹ gVᴴ (I - V Vᴴ)]
        SinvgVh = gVh / S.unsqueeze(-1)
        gA = matmul(gA, Vh) + SinvgVh - matmul(matmul(SinvgVh, _mH(Vh)), Vh)
        return matmul(U, gA)
    return matmul(U, matmul(gA, Vh))


_SVD_PHASE_DEPENDENT = ("svd_backward: The singular vectors in the complex case are specified up to multiplication "
                        "by e^{i phi}. The specified loss function depends on this phase term, making it "
                        "ill-defined.")


def _check_svd_phase_invariant(UhgU, VhgV):
    """svd_backward's check that a loss of complex singular vectors does not depend on the phases of the
    pairs (uᵢ, vᵢ) -> (uᵢ e^{iφ}, vᵢ e^{iφ}): Im diag(Uᴴ gU) = -Im diag(Vᴴ gV), to PyTorch's lax 1e-2."""
    if not UhgU.dtype.is_complex:
        return
    u, v = diagonal(UhgU, 0, -2, -1).detach()._data, diagonal(VhgV, 0, -2, -1).detach()._data
    if not isinstance(u, MetaArray):
        u, v = host(u).imag, -host(v).imag
        if not np.all(np.abs(u - v) <= 1e-2 + 1e-2 * np.abs(v)):
            raise RuntimeError(_SVD_PHASE_DEPENDENT)


def svd_gauge_invariant(outputs):
    """(|U|, S, |Vh|) of the first k = min(m, n) singular vectors: invariant under flipping the signs of a
    pair uᵢ, vᵢ (LAPACK builds choose them differently), and without full_matrices' extra columns of U and
    rows of Vh, any orthonormal completion, whose derivative is not defined. Tensor methods only, so that
    the reference script applies it to torch's outputs too."""
    U, S, Vh = outputs
    k = S.shape[-1]
    return U[..., :k].abs(), S, Vh[..., :k, :].abs()


def _svd_samples(op):
    samples = [SampleInput("(3,3)", make_arg((3, 3), key=(op, 0)), full_matrices=False),
               SampleInput("(4,3)", make_arg((4, 3), key=(op, 1)), full_matrices=False),
               SampleInput("(3,5) wide", make_arg((3, 5), key=(op, 2)), False),
               SampleInput("(2,3,2) batch", make_arg((2, 3, 2), key=(op, 3)), full_matrices=False),
               SampleInput("(4,2) full_matrices", make_arg((4, 2), key=(op, 4))),
               SampleInput("(2,3)T full_matrices", make_arg((2, 3), key=(op, 5), transposed=True))]
    return [s.processed(svd_gauge_invariant) for s in samples]


linalg_svd = _named_results(defop(
    "linalg_svd(Tensor A, bool full_matrices=True) -> (Tensor U, Tensor S, Tensor Vh)",
    kernel=_svd_kernel, meta=_svd_meta, grads={"A": _svd_grad},
    samples=_svd_samples, torch="torch.linalg.svd", supports_complex=True,
    doc="(U, S, Vh) with A = U diag(S) Vh, S descending; U (m, m) and Vh (n, n) with full_matrices, else "
        "(m, k) and (k, n), k = min(m, n)."),
    "linalg_svd")


def _svdvals_samples(op):
    return [SampleInput("(3,3)", make_arg((3, 3), key=(op, 0))),
            SampleInput("(4,3)", make_arg((4, 3), key=(op, 1))),
            SampleInput("(2,3,5) batch", make_arg((2, 3, 5), key=(op, 2)))]


def _svdvals_meta(A):
    return _svd_meta(A, False)[1]


def _svdvals_kernel(xp, A):
    _matrix_check("svd", A)
    # (the vectors too: dask's batched svd has no compute_uv; a failure is then judged as gesdd's without them)
    S = per_matrix(xp, lambda a: xp.linalg.svd(a, full_matrices=False)[1], A, svd_failure(xp, A, False))
    return S.astype(_real(A.dtype), copy=False)


def _svdvals_grad(grad, A):
    """svd_backward without gU, gVh: U diag(gS) Vh, defined where singular values repeat or vanish too (U and
    Vh are recomputed here; PyTorch computes them in the forward when A requires grad)."""
    U, _, Vh = linalg_svd(A, full_matrices=False)
    return matmul(U * grad.unsqueeze(-2), Vh)


linalg_svdvals = defop(
    "linalg_svdvals(Tensor A) -> Tensor",
    kernel=_svdvals_kernel, meta=_svdvals_meta, grads={"A": _svdvals_grad},
    backward_name="LinalgSvdBackward0", samples=_svdvals_samples, torch="torch.linalg.svdvals", supports_complex=True,
    doc="The singular values of each matrix, descending (PyTorch's node, LinalgSvdBackward0).")


# ---- householder_product ------------------------------------------------------------------------------

def _householder_product(A, tau):
    """H₁ H₂ … H_k's first n columns, Hᵢ = I - τᵢ vᵢ vᵢᴴ, vᵢ column i of A below the diagonal with a 1 on it
    (LAPACK's orgqr, geqrf's Q): applied to the first n columns of I from the last reflection, each as two
    products, so the gradient (and every order) is the products'."""
    if A.ndim < 2:
        raise RuntimeError("torch.linalg.householder_product: input must have at least 2 dimensions.")
    m, n = A.shape[-2], A.shape[-1]
    if m < n:
        raise RuntimeError("torch.linalg.householder_product: input.shape[-2] must be greater than or equal to "
                           "input.shape[-1]")
    if tau.ndim != A.ndim - 1:
        raise RuntimeError(f"torch.linalg.householder_product: Expected tau to have one dimension less than input, "
                           f"but got tau.ndim equal to {tau.ndim} and input.ndim is equal to {A.ndim}")
    k = tau.shape[-1]
    if n < k:
        raise RuntimeError("torch.linalg.householder_product: input.shape[-1] must be greater than or equal to "
                           "tau.shape[-1]")
    if tuple(tau.shape[:-1]) != tuple(A.shape[:-2]):
        raise RuntimeError(f"torch.linalg.householder_product: Expected batch dimensions of tau to be equal to "
                           f"input.shape[:-2], but got {list(tau.shape[:-1])}")
    if A.dtype != tau.dtype:
        raise RuntimeError(f"torch.linalg.householder_product: tau dtype {scalar_type_name(tau.dtype.np)} does not "
                           f"match input dtype {scalar_type_name(A.dtype.np)}")
    identity = eye(m, n, dtype=A.dtype, device=A.device)
    V = tril(A, -1) + identity
    Q = identity.expand(*A.shape)
    for i in range(k - 1, -1, -1):
        v = V[..., :, i:i + 1]
        Q = Q - matmul(v, tau[..., i:i + 1].unsqueeze(-1) * matmul(_mH(v), Q))
    return Q


def _householder_samples(op):
    return [SampleInput("(4,3) k=3", make_arg((4, 3), key=(op, 0)), make_arg((3,), key=(op, 1), low=0.5, high=1.5)),
            SampleInput("(3,3) k=2", make_arg((3, 3), key=(op, 2)), make_arg((2,), key=(op, 3), low=0.5, high=1.5)),
            SampleInput("(2,4,2) batch", make_arg((2, 4, 2), key=(op, 4)),
                        make_arg((2, 2), key=(op, 5), low=0.5, high=1.5))]


linalg_householder_product = defop(
    "linalg_householder_product(Tensor input, Tensor tau) -> Tensor", composite=_householder_product,
    samples=_householder_samples, torch="torch.linalg.householder_product",
    doc="The first n columns of the product of Householder reflections I - τᵢ vᵢ vᵢᴴ (geqrf's Q from its "
        "reflectors).")


# ---- the deprecated torch.svd, torch.qr, torch.cholesky ---------------------------------------------
# ATen's own composites over the linalg ops (BatchLinearAlgebra.cpp, LinearAlgebra.cpp): svd returns V,
# not Vh, and zeros for U and V without compute_uv; qr's `some` is mode 'reduced' or 'complete'.
# cholesky is an op of its own in PyTorch (CholeskyBackward0), linalg_cholesky_ex's kernel and formula.

_QR_DEPRECATED = (
    "torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a future PyTorch release.\n"
    "The boolean parameter 'some' has been replaced with a string parameter 'mode'.\n"
    "Q, R = torch.qr(A, some)\nshould be replaced with\n"
    "Q, R = torch.linalg.qr(A, 'reduced' if some else 'complete')")
_CHOLESKY_DEPRECATED = (
    "torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in a future PyTorch "
    "release.\nL = torch.cholesky(A)\nshould be replaced with\nL = torch.linalg.cholesky(A)\nand\n"
    "U = torch.cholesky(A, upper=True)\nshould be replaced with\nU = torch.linalg.cholesky(A).mH\n"
    "This transform will produce equivalent results for all valid (symmetric positive definite) inputs.")


def _svd(self, some=True, compute_uv=True):
    if self.ndim < 2:
        raise RuntimeError(f"linalg.svd: input should have at least 2 dimensions, but has {self.ndim} dimensions "
                           f"instead")
    if compute_uv:
        U, S, Vh = linalg_svd(self, full_matrices=not some)
    else:
        # U and V are (m, m) and (n, n) zeros whatever `some` says, as ATen's svd gives them
        S = linalg_svdvals(self)
        *batch, m, n = self.shape
        U = zeros(*batch, m, m, dtype=self.dtype, device=self.device)
        Vh = zeros(*batch, n, n, dtype=self.dtype, device=self.device)
    return U, S, _mH(Vh)


def svd_v_gauge_invariant(outputs):
    """svd_gauge_invariant for torch.svd's (U, S, V): V's first k columns are Vh's first k rows."""
    U, S, V = outputs
    k = S.shape[-1]
    return U[..., :k].abs(), S, V[..., :k].abs()


def _legacy_svd_samples(op):
    samples = [SampleInput("(3,3)", make_arg((3, 3), key=(op, 0))),
               SampleInput("(4,3)", make_arg((4, 3), key=(op, 1))),
               SampleInput("(3,5) wide", make_arg((3, 5), key=(op, 2)), True),
               SampleInput("(2,3,2) batch", make_arg((2, 3, 2), key=(op, 3))),
               SampleInput("(4,2) some=False", make_arg((4, 2), key=(op, 4)), some=False),
               SampleInput("(3,4) compute_uv=False", make_arg((3, 4), key=(op, 5)), compute_uv=False),
               SampleInput("(2,4,3) some=False compute_uv=False", make_arg((2, 4, 3), key=(op, 6)), False, False)]
    return [s.processed(svd_v_gauge_invariant) for s in samples]


svd = _named_results(defop(
    "svd(Tensor self, bool some=True, bool compute_uv=True) -> (Tensor U, Tensor S, Tensor V)",
    composite=_svd, samples=_legacy_svd_samples, torch="torch.svd",
    doc="(U, S, V) with self = U diag(S) Vᴴ (torch.svd, deprecated for linalg.svd, which gives Vh): reduced with "
        "some=True, else U (m, m) and V (n, n); without compute_uv, U and V are zeros."),
    "svd")


def _qr(self, some=True):
    warn_once("qr", _QR_DEPRECATED)
    return tuple(linalg_qr(self, "reduced" if some else "complete"))


qr = _named_results(defop(
    "qr(Tensor self, bool some=True) -> (Tensor Q, Tensor R)", composite=_qr,
    samples=lambda op: [SampleInput("(4,3)", make_arg((4, 3), key=(op, 0))),
                        SampleInput("(3,5) wide", make_arg((3, 5), key=(op, 1))),
                        # (complete QR of a tall matrix has no derivative: its extra columns of Q are free)
                        SampleInput("(2,3,4) batch some=False", make_arg((2, 3, 4), key=(op, 2)), False),
                        SampleInput("(3,4) some=False", make_arg((3, 4), key=(op, 3)), some=False)],
    torch="torch.qr",
    doc="linalg_qr(self, 'reduced' if some else 'complete') (torch.qr, deprecated for linalg.qr)."),
    "qr")


def _legacy_cholesky_check(A):
    square_shape_check("cholesky", A)


def _legacy_cholesky_kernel(xp, self, upper):
    warn_once("cholesky", _CHOLESKY_DEPRECATED)
    _legacy_cholesky_check(self)
    L, info = _cholesky_ex_kernel(xp, self, upper, False)
    failed = np.flatnonzero(np.asarray(info))
    if failed.size:
        where = f"(Batch element {failed[0]}): " if self.ndim > 2 else ""
        raise LinAlgError(f"cholesky: {where}The factorization could not be completed because the input is not "
                          f"positive-definite (the leading minor of order {np.asarray(info).flat[failed[0]]} is not "
                          f"positive-definite).")
    return L


def _legacy_cholesky_meta(self, upper):
    _legacy_cholesky_check(self)
    return _cholesky_ex_meta(self, upper)[0]


cholesky = defop(
    "cholesky(Tensor self, bool upper=False) -> Tensor",
    kernel=_legacy_cholesky_kernel, meta=_legacy_cholesky_meta,
    grads={"self": lambda grad, result, upper: _cholesky_grad([grad], [result], upper)},
    samples=lambda op: [SampleInput("(3,3)", _spd(op, (3, 3))).wrapped(hermitian_input),
                        SampleInput("(2,4,4) batch", _spd(op, (2, 4, 4))).wrapped(hermitian_input),
                        SampleInput("upper", _spd(op, (3, 3), 1), True).wrapped(hermitian_input)],
    torch="torch.cholesky",
    doc="linalg_cholesky with a positional `upper` (torch.cholesky, deprecated for linalg.cholesky); "
        "CholeskyBackward0.")


# ---- geqrf, orgqr, ormqr: QR as LAPACK's Householder reflectors ------------------------------------------

def _geqrf_meta(self):
    if self.ndim < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    *batch, m, n = self.shape
    return MetaArray(self.shape, self.dtype), MetaArray(tuple(batch) + (min(m, n),), self.dtype)


def _geqrf_kernel(xp, self):
    _geqrf_meta(self)
    if self.dtype.kind not in "fc" or self.dtype == np.float16:
        raise DtypeNotImplementedError(f"\"geqrf_cpu\" not implemented for '{scalar_type_name(self.dtype)}'")
    *batch, m, n = self.shape
    a, tau = xp.zeros(self.shape, dtype=self.dtype), xp.zeros(tuple(batch) + (min(m, n),), dtype=self.dtype)
    for index in np.ndindex(*batch):
        # NumPy's raw QR is LAPACK's geqrf (zgeqrf for a complex one), its reflectors transposed (Fortran order)
        h, t = xp.linalg.qr(self[index], mode="raw")
        a[index], tau[index] = h.T, t
    return a, tau


geqrf = _named_results(defop(
    "geqrf(Tensor self) -> (Tensor a, Tensor tau)",
    kernel=_geqrf_kernel, meta=_geqrf_meta,
    grads={"self": NotImplementedDerivative("geqrf")}, differentiable=False, gradgrad=False, supports_complex=True,
    samples=lambda op: [SampleInput("(4,3)", make_arg((4, 3), key=(op, 0), requires_grad=False)),
                        SampleInput("(3,5) wide", make_arg((3, 5), key=(op, 1), requires_grad=False)),
                        SampleInput("(2,3,3) batch", make_arg((2, 3, 3), key=(op, 2), requires_grad=False))],
    torch="torch.geqrf",
    doc="LAPACK's geqrf: R on and above the diagonal, the Householder vectors below it, and their factors tau "
        "(Q = householder_product(a, tau)). No derivative, as PyTorch's."), "geqrf")

orgqr = defop(
    "orgqr(Tensor self, Tensor input2) -> Tensor",
    composite=lambda self, input2: linalg_householder_product(self, input2),
    # (householder_product's own samples: the same op, on inputs whose float32 gradients are well conditioned)
    samples=lambda op: _householder_samples("linalg_householder_product"), torch="torch.orgqr",
    doc="linalg_householder_product under LAPACK's name: the first n columns of Q from geqrf's (a, tau).")


def _ormqr(self, input2, input3, left=True, transpose=False):
    """Q (m × m, from self's reflectors and tau) or Qᵀ times input3 from the left or the right, as LAPACK's
    ormqr; Q is formed by householder_product of the reflectors padded to m columns, so the gradient (to
    the reflectors, tau and input3) is that of the products."""
    if self.ndim < 2:
        raise RuntimeError("torch.ormqr: input must have at least 2 dimensions.")
    if input3.ndim < 2:
        raise RuntimeError("torch.ormqr: other must have at least 2 dimensions.")
    m = self.shape[-2]
    side = -2 if left else -1
    if input3.shape[side] != m:
        raise RuntimeError(f"torch.ormqr: other.shape[{side}] must be equal to input.shape[-2]")
    if input2.shape[-1] != min(input3.shape[side], self.shape[-1]):
        raise RuntimeError(f"torch.ormqr: tau.shape[-1] must be equal to min(other.shape[{side}], input.shape[-1])")
    reflectors = narrow(self, -1, 0, input2.shape[-1])
    missing = m - reflectors.shape[-1]
    if missing:
        reflectors = cat([reflectors, zeros(*reflectors.shape[:-1], missing, dtype=self.dtype, device=self.device)], -1)
    Q = linalg_householder_product(reflectors, input2)
    if transpose:           # (LAPACK's ormqr 'C' for a complex Q: its conjugate transpose)
        Q = _mH(Q)
    return matmul(Q, input3) if left else matmul(input3, Q)


def _ormqr_samples(op):
    a = make_arg((4, 3), key=(op, 0))
    tau = make_arg((3,), key=(op, 1), low=0.5, high=1.5)
    return [SampleInput("left", a, tau, make_arg((4, 2), key=(op, 2))),
            SampleInput("right transposed", a, tau, make_arg((2, 4), key=(op, 3)), left=False, transpose=True),
            SampleInput("(2,4,2) batch, 2 reflectors, transposed", make_arg((2, 4, 2), key=(op, 4)),
                        make_arg((2, 2), key=(op, 5), low=0.5, high=1.5), make_arg((2, 4, 3), key=(op, 6)), True,
                        True)]


ormqr = defop(
    "ormqr(Tensor self, Tensor input2, Tensor input3, bool left=True, bool transpose=False) -> Tensor",
    composite=_ormqr, samples=_ormqr_samples, torch="torch.ormqr",
    doc="input3 multiplied by the Q of geqrf's (self, input2) = (a, tau), or by Qᵀ (transpose), from the left or "
        "the right (left=False), as LAPACK's ormqr.")
