"""torch.lobpcg (PyTorch 2.13's torch/_lobpcg.py, by Pearu Peterson): the k largest or smallest eigenpairs
of a symmetric positive-definite generalized eigenproblem A X = B X E, by the Locally Optimal Block
Preconditioned Conjugate Gradient methods "basic" [Knyazev2001] and "ortho" [StathopoulosEtal2002,
DuerschEtal2018], ported line for line onto agrad's ops.

The iteration runs without autograd (inside LOBPCGAutogradFunction.forward); the gradient with respect to
A (B must be None) is the symmetric eigendecomposition's, for the complete eigenspace or, when only k < m
eigenpairs were found, through the polynomial solution of a Sylvester equation
(_symeig_backward_partial_eigenspace). The backward is written in agrad's ops, in-place ones on views
included, so it is differentiable again (gradgradcheck). Its random basis of span(U)'s complement comes
from a fresh generator for determinism, as in PyTorch, orthonormalized (see the NOTE there); the gradient
does not depend on which basis.
agrad's tensors are dense and real, so torch's sparse and complex branches (and TorchScript's) have no
counterpart here. The random start X (when none is given) is drawn from agrad's global generator.
"""
from __future__ import annotations

import math

from . import _linalg_utils as _utils
from . import creation, ops
from ._tensor import Tensor
from .autograd.function import Function
from .dtypes import float32, float64
from .generator import Generator

__all__ = ["lobpcg"]


def _symeig_backward_complete_eigenspace(D_grad, U_grad, A, D, U):
    # compute F, such that F_ij = (d_j - d_i)^{-1} for i != j, F_ii = 0
    F = D.unsqueeze(-2) - D.unsqueeze(-1)
    F.diagonal(dim1=-2, dim2=-1).fill_(float("inf"))
    F.pow_(-1)

    # A.grad = U (D.grad + (U^T U.grad * F)) U^T
    Ut = U.mT.contiguous()
    return ops.matmul(U, ops.matmul(ops.diag_embed(D_grad) + ops.matmul(Ut, U_grad) * F, Ut))


def _polynomial_coefficients_given_roots(roots):
    """The coefficients (a_0, ..., a_n == 1) of p(x) = (x - r_1) ... (x - r_n) given its `roots`
    (r_1, ..., r_n), by Horner's rule written as out-of-place steps so that each is a node of the graph
    (the backward of a root finder is hard; of these copies, it is not)."""
    poly_order = roots.shape[-1]
    poly_coeffs_shape = list(roots.shape)
    # p(x) = x^n + a_{n-1} x^{n-1} + ... + a_0, so poly_coeffs = {a_0, ..., a_n, a_{n+1} (== 1)}: one extra
    # coefficient vectorizes the loop below
    poly_coeffs_shape[-1] += 2
    poly_coeffs = roots.new_zeros(poly_coeffs_shape)
    poly_coeffs[..., 0] = 1
    poly_coeffs[..., -1] = 1

    for i in range(1, poly_order + 1):
        # a copy per step when roots need a gradient: each step's in-place update is then a separate node
        poly_coeffs_new = poly_coeffs.clone() if roots.requires_grad else poly_coeffs
        out = poly_coeffs_new.narrow(-1, poly_order - i, i + 1)
        out -= roots.narrow(-1, i - 1, 1) * poly_coeffs.narrow(-1, poly_order - i + 1, i + 1)
        poly_coeffs = poly_coeffs_new

    return poly_coeffs.narrow(-1, 1, poly_order + 1)


def _polynomial_value(poly, x, zero_power, transition):
    """poly(x) by Horner's rule, poly[..., i] the coefficient of x^i: `transition(val, x, poly[..., k])`
    is one step, x * val + poly[..., k] * zero_power, whatever x is (a vector, a matrix) and x^0
    (`zero_power`) is for it."""
    res = zero_power.clone()
    for k in range(poly.size(-1) - 2, -1, -1):
        res = transition(res, x, poly[..., k])
    return res


def _matrix_polynomial_value(poly, x, zero_power=None):
    """poly(x) for the (batched) matrix x."""

    def transition(curr_poly_val, x, poly_coeff):
        res = x.matmul(curr_poly_val)
        res.diagonal(dim1=-2, dim2=-1).add_(poly_coeff.unsqueeze(-1))
        return res

    if zero_power is None:
        zero_power = creation.eye(x.size(-1), x.size(-1), dtype=x.dtype, device=x.device).view(
            *([1] * len(list(x.shape[:-2]))), x.size(-1), x.size(-1))

    return _polynomial_value(poly, x, zero_power, transition)


def _vector_polynomial_value(poly, x, zero_power=None):
    """poly(x) for the (batched) vector x."""

    def transition(curr_poly_val, x, poly_coeff):
        return ops.addcmul(poly_coeff.unsqueeze(-1), x, curr_poly_val)

    if zero_power is None:
        zero_power = x.new_ones(1).expand(x.shape)

    return _polynomial_value(poly, x, zero_power, transition)


def _symeig_backward_partial_eigenspace(D_grad, U_grad, A, D, U, largest):
    # the projection (I - U U^T) onto the orthogonal complement of span(U)
    Ut = U.mT.contiguous()
    proj_U_ortho = -U.matmul(Ut)
    proj_U_ortho.diagonal(dim1=-2, dim2=-1).add_(1)

    # U_ortho, a basis of the complement of span(U): a random [..., m, m - k] matrix projected onto it,
    # from a fresh generator for determinism
    gen = Generator(A.device)
    U_ortho = proj_U_ortho.matmul(
        creation.randn((*A.shape[:-1], A.size(-1) - D.size(-1)), dtype=A.dtype, device=A.device, generator=gen))
    # NOTE: orthonormalized, where PyTorch uses the projected draw as it is: the Sylvester system below is
    # as ill-conditioned as that basis is (its Gram matrix's condition enters squared), and agrad's generator
    # draws other numbers than torch's: one of its draws left a gradient 1e-6 off, failing test_lobpcg's
    # gradgradcheck. The span, and so the gradient, is the same.
    U_ortho = ops.linalg_qr(U_ortho).Q
    U_ortho_t = U_ortho.mT.contiguous()

    # the coefficients of the characteristic polynomial of the diagonal D (whose roots are D's entries)
    chr_poly_D = _polynomial_coefficients_given_roots(D)

    # The explicit solution of the Sylvester equation U_ortho^T A U_ortho dX - dX D = -U_ortho^T A U (Hu and
    # Cheng, "The polynomial solution to the Sylvester matrix equation", 2006), its gradient contribution
    # accumulated without matrix powers of A:
    # series_acc = U_grad * (chr_poly_D[1] D^0 + ... + chr_poly_D[k] D^(k-1))
    #            + A U_grad * (chr_poly_D[2] D^0 + ... + chr_poly_D[k] D^(k-2)) + ... + A^(k-1) U_grad chr_poly_D[k]
    U_grad_projected = U_grad
    series_acc = U_grad_projected.new_zeros(U_grad_projected.shape)
    for k in range(1, chr_poly_D.size(-1)):
        poly_D = _vector_polynomial_value(chr_poly_D[..., k:], D)
        series_acc += U_grad_projected * poly_D.unsqueeze(-2)
        U_grad_projected = A.matmul(U_grad_projected)

    # chr_poly_D(A) by Horner's rule, and its action restricted to span(U_ortho)
    chr_poly_D_at_A = _matrix_polynomial_value(chr_poly_D, A)
    chr_poly_D_at_A_to_U_ortho = ops.matmul(U_ortho_t, ops.matmul(chr_poly_D_at_A, U_ortho))
    # inverted through its Cholesky factor: it is positive definite when `largest` is False or k is even,
    # negative definite otherwise (A's eigenvalues being distinct)
    chr_poly_D_at_A_to_U_ortho_sign = -1 if (largest and (k % 2 == 1)) else +1
    chr_poly_D_at_A_to_U_ortho_L = ops.linalg_cholesky(chr_poly_D_at_A_to_U_ortho_sign * chr_poly_D_at_A_to_U_ortho)

    # the gradient's part in span(U)
    res = _symeig_backward_complete_eigenspace(D_grad, U_grad, A, D, U)

    # and the Sylvester equation's solution, in span(U_ortho)
    res -= U_ortho.matmul(
        chr_poly_D_at_A_to_U_ortho_sign
        * ops.cholesky_solve(U_ortho_t.matmul(series_acc), chr_poly_D_at_A_to_U_ortho_L)
    ).matmul(Ut)

    return res


def _symeig_backward(D_grad, U_grad, A, D, U, largest):
    # a square U holds the complete eigenspace
    if U.size(-1) == U.size(-2):
        return _symeig_backward_complete_eigenspace(D_grad, U_grad, A, D, U)
    return _symeig_backward_partial_eigenspace(D_grad, U_grad, A, D, U, largest)


class LOBPCGAutogradFunction(Function):
    @staticmethod
    def forward(ctx, A: Tensor, k: int | None = None, B: Tensor | None = None, X: Tensor | None = None,
                n: int | None = None, iK: Tensor | None = None, niter: int | None = None, tol: float | None = None,
                largest: bool | None = None, method: str | None = None, tracker=None,
                ortho_iparams: dict | None = None, ortho_fparams: dict | None = None,
                ortho_bparams: dict | None = None) -> tuple[Tensor, Tensor]:
        A = A.contiguous()
        if B is not None:
            B = B.contiguous()

        D, U = _lobpcg(A, k, B, X, n, iK, niter, tol, largest, method, tracker, ortho_iparams, ortho_fparams,
                       ortho_bparams)

        ctx.save_for_backward(A, B, D, U)
        ctx.largest = largest

        return D, U

    @staticmethod
    def backward(ctx, D_grad, U_grad):
        A_grad = B_grad = None
        grads = [None] * 14

        A, B, D, U = ctx.saved_tensors
        largest = ctx.largest

        if B is not None:
            raise ValueError("lobpcg.backward does not support backward with B != I yet.")

        if largest is None:
            largest = True

        if B is None:
            A_grad = _symeig_backward(D_grad, U_grad, A, D, U, largest)

        # A has index 0, B index 2
        grads[0] = A_grad
        grads[2] = B_grad
        return tuple(grads)


def lobpcg(A: Tensor, k: int | None = None, B: Tensor | None = None, X: Tensor | None = None, n: int | None = None,
           iK: Tensor | None = None, niter: int | None = None, tol: float | None = None, largest: bool | None = None,
           method: str | None = None, tracker=None, ortho_iparams: dict | None = None,
           ortho_fparams: dict | None = None, ortho_bparams: dict | None = None) -> tuple[Tensor, Tensor]:
    """The k largest (or, with largest=False, smallest) eigenvalues E, of size (*, k), and eigenvectors X,
    of size (*, m, k), of the symmetric positive-definite generalized eigenproblem A X = B X E (B the
    identity when None) for A of size (*, m, m), by LOBPCG (method "ortho", the default, or "basic").

    X (*, m, n), k <= n <= m, is the start (random, of n columns, n defaulting to k, when not given); iK a
    preconditioner; niter the most iterations (1000; -1 runs until convergence); tol the residual
    tolerance (the square root of A's dtype's epsilon); tracker, when given, is called with the LOBPCG
    worker after each step (setting its bvars["force_stop"] stops the iteration); ortho_iparams,
    ortho_fparams, ortho_bparams tune method "ortho". m must be at least 3 n.

    Gradients flow to A (when B is None). While A is assumed symmetric, A.grad would not be: A is mapped to
    (A + A^T) / 2 when it requires grad, so that A.grad is symmetric too."""
    if A.requires_grad or (B is not None and B.requires_grad):
        # the symmetrization keeps A - alpha * A.grad symmetric for first-order optimizers; the same for B
        A_sym = (A + A.mT) / 2
        B_sym = (B + B.mT) / 2 if (B is not None) else None

        return LOBPCGAutogradFunction.apply(A_sym, k, B_sym, X, n, iK, niter, tol, largest, method, tracker,
                                            ortho_iparams, ortho_fparams, ortho_bparams)

    return _lobpcg(A, k, B, X, n, iK, niter, tol, largest, method, tracker, ortho_iparams, ortho_fparams,
                   ortho_bparams)


def _lobpcg(A: Tensor, k: int | None = None, B: Tensor | None = None, X: Tensor | None = None, n: int | None = None,
            iK: Tensor | None = None, niter: int | None = None, tol: float | None = None, largest: bool | None = None,
            method: str | None = None, tracker=None, ortho_iparams: dict | None = None,
            ortho_fparams: dict | None = None, ortho_bparams: dict | None = None) -> tuple[Tensor, Tensor]:
    if A.shape[-2] != A.shape[-1]:
        raise AssertionError(f"A must be square, got shape {A.shape}")
    if B is not None and A.shape != B.shape:
        raise AssertionError(f"A and B must have same shape, got {A.shape} vs {B.shape}")

    dtype = _utils.get_floating_dtype(A)
    device = A.device
    if tol is None:
        feps = {float32: 1.2e-07, float64: 2.23e-16}[dtype]
        tol = feps**0.5

    m = A.shape[-1]
    k = (1 if X is None else X.shape[-1]) if k is None else k
    n = (k if n is None else n) if X is None else X.shape[-1]

    if m < 3 * n:
        raise ValueError(f"LOBPCG algorithm is not applicable when the number of A rows (={m})"
                         f" is smaller than 3 x the number of requested eigenpairs (={n})")

    method = "ortho" if method is None else method

    iparams = {"m": m, "n": n, "k": k, "niter": 1000 if niter is None else niter}
    fparams = {"tol": tol}
    bparams = {"largest": True if largest is None else largest}

    if method == "ortho":
        if ortho_iparams is not None:
            iparams.update(ortho_iparams)
        if ortho_fparams is not None:
            fparams.update(ortho_fparams)
        if ortho_bparams is not None:
            bparams.update(ortho_bparams)
        iparams["ortho_i_max"] = iparams.get("ortho_i_max", 3)
        iparams["ortho_j_max"] = iparams.get("ortho_j_max", 3)
        fparams["ortho_tol"] = fparams.get("ortho_tol", tol)
        fparams["ortho_tol_drop"] = fparams.get("ortho_tol_drop", tol)
        fparams["ortho_tol_replace"] = fparams.get("ortho_tol_replace", tol)
        bparams["ortho_use_drop"] = bparams.get("ortho_use_drop", False)

    if len(A.shape) > 2:
        N = math.prod(A.shape[:-2])
        bA = A.reshape((N,) + A.shape[-2:])
        bB = B.reshape((N,) + A.shape[-2:]) if B is not None else None
        bX = X.reshape((N,) + X.shape[-2:]) if X is not None else None
        bE = creation.empty((N, k), dtype=dtype, device=device)
        bXret = creation.empty((N, m, k), dtype=dtype, device=device)

        for i in range(N):
            A_ = bA[i]
            B_ = bB[i] if bB is not None else None
            X_ = creation.randn((m, n), dtype=dtype, device=device) if bX is None else bX[i]
            if not (len(X_.shape) == 2 and X_.shape == (m, n)):
                raise AssertionError(f"X_ shape mismatch: got {X_.shape}, expected {(m, n)}")
            iparams["batch_index"] = i
            worker = LOBPCG(A_, B_, X_, iK, iparams, fparams, bparams, method, tracker)
            worker.run()
            bE[i] = worker.E[:k]
            bXret[i] = worker.X[:, :k]

        return bE.reshape(A.shape[:-2] + (k,)), bXret.reshape(A.shape[:-2] + (m, k))

    X = creation.randn((m, n), dtype=dtype, device=device) if X is None else X
    if not (len(X.shape) == 2 and X.shape == (m, n)):
        raise AssertionError(f"X shape mismatch: got {X.shape}, expected {(m, n)}")

    worker = LOBPCG(A, B, X, iK, iparams, fparams, bparams, method, tracker)
    worker.run()

    return worker.E[:k], worker.X[:, :k]


class LOBPCG:
    """Worker class of LOBPCG methods: the whole state of one iteration, which a tracker may read."""

    def __init__(self, A: Tensor | None, B: Tensor | None, X: Tensor, iK: Tensor | None, iparams: dict,
                 fparams: dict, bparams: dict, method: str, tracker) -> None:
        # constant parameters
        self.A = A
        self.B = B
        self.iK = iK
        self.iparams = iparams
        self.fparams = fparams
        self.bparams = bparams
        self.method = method
        self.tracker = tracker
        m = iparams["m"]
        n = iparams["n"]

        # variable parameters
        self.X = X
        self.E = creation.zeros((n,), dtype=X.dtype, device=X.device)
        self.R = creation.zeros((m, n), dtype=X.dtype, device=X.device)
        self.S = creation.zeros((m, 3 * n), dtype=X.dtype, device=X.device)
        self.tvars: dict[str, Tensor] = {}
        self.ivars: dict[str, int] = {"istep": 0}
        self.fvars: dict[str, float] = {"_": 0.0}
        self.bvars: dict[str, bool] = {"_": False}

    def __str__(self):
        lines = ["LOBPCG:"]
        lines += [f"  iparams={self.iparams}"]
        lines += [f"  fparams={self.fparams}"]
        lines += [f"  bparams={self.bparams}"]
        lines += [f"  ivars={self.ivars}"]
        lines += [f"  fvars={self.fvars}"]
        lines += [f"  bvars={self.bvars}"]
        lines += [f"  tvars={self.tvars}"]
        lines += [f"  A={self.A}"]
        lines += [f"  B={self.B}"]
        lines += [f"  iK={self.iK}"]
        lines += [f"  X={self.X}"]
        lines += [f"  E={self.E}"]
        return "".join(line + "\n" for line in lines)

    def update(self):
        """Set and update iteration variables."""
        if self.ivars["istep"] == 0:
            X_norm = float(ops.norm(self.X))
            iX_norm = X_norm**-1
            A_norm = float(ops.norm(_utils.matmul(self.A, self.X))) * iX_norm
            B_norm = float(ops.norm(_utils.matmul(self.B, self.X))) * iX_norm
            self.fvars["X_norm"] = X_norm
            self.fvars["A_norm"] = A_norm
            self.fvars["B_norm"] = B_norm
            self.ivars["iterations_left"] = self.iparams["niter"]
            self.ivars["converged_count"] = 0
            self.ivars["converged_end"] = 0

        if self.method == "ortho":
            self._update_ortho()
        else:
            self._update_basic()

        self.ivars["iterations_left"] = self.ivars["iterations_left"] - 1
        self.ivars["istep"] = self.ivars["istep"] + 1

    def update_residual(self):
        """Update residual R from A, B, X, E."""
        mm = _utils.matmul
        self.R = mm(self.A, self.X) - mm(self.B, self.X) * self.E

    def update_converged_count(self):
        """The number of converged eigenpairs by the backward stable convergence criterion (Sec 4.3 of
        [DuerschEtal2018]); a subclass may redefine it for a criterion of its own."""
        prev_count = self.ivars["converged_count"]
        tol = self.fparams["tol"]
        A_norm = self.fvars["A_norm"]
        B_norm = self.fvars["B_norm"]
        E, X, R = self.E, self.X, self.R
        rerr = ops.norm(R, 2, (0,)) / (ops.norm(X, 2, (0,)) * (A_norm + ops.abs(E[: X.shape[-1]]) * B_norm))
        converged = rerr < tol
        count = 0
        for b in converged:
            if not b:
                # the pairs after the first unconverged one do not count: eigenpairs stay strictly ordered
                break
            count += 1
        if count < prev_count:
            raise AssertionError(
                f"the number of converged eigenpairs (was {prev_count}, got {count}) cannot decrease")
        self.ivars["converged_count"] = count
        self.tvars["rerr"] = rerr
        return count

    def stop_iteration(self):
        """True to stop iterating (a tracker can force it with ``worker.bvars['force_stop'] = True``)."""
        return (self.bvars.get("force_stop", False) or self.ivars["iterations_left"] == 0
                or self.ivars["converged_count"] >= self.iparams["k"])

    def run(self):
        """Run LOBPCG iterations."""
        self.update()

        if self.tracker is not None:
            self.call_tracker()

        while not self.stop_iteration():
            self.update()

            if self.tracker is not None:
                self.call_tracker()

    def call_tracker(self):
        """Hand the worker to the tracker (PyTorch swaps this method in around a run: TorchScript takes no
        callbacks; agrad has no TorchScript)."""
        self.tracker(self)

    # Internal methods

    def _update_basic(self):
        """Update or initialize iteration variables when `method == "basic"`."""
        mm = ops.matmul
        ns = self.ivars["converged_end"]
        nc = self.ivars["converged_count"]
        n = self.iparams["n"]
        largest = self.bparams["largest"]

        if self.ivars["istep"] == 0:
            Ri = self._get_rayleigh_ritz_transform(self.X)
            M = _utils.qform(_utils.qform(self.A, self.X), Ri)
            E, Z = _utils.symeig(M, largest)
            self.X[:] = mm(self.X, mm(Ri, Z))
            self.E[:] = E
            np = 0
            self.update_residual()
            nc = self.update_converged_count()
            self.S[..., :n] = self.X

            W = _utils.matmul(self.iK, self.R)
            self.ivars["converged_end"] = ns = n + np + W.shape[-1]
            self.S[:, n + np: ns] = W
        else:
            S_ = self.S[:, nc:ns]
            Ri = self._get_rayleigh_ritz_transform(S_)
            M = _utils.qform(_utils.qform(self.A, S_), Ri)
            E_, Z = _utils.symeig(M, largest)
            self.X[:, nc:] = mm(S_, mm(Ri, Z[:, : n - nc]))
            self.E[nc:] = E_[: n - nc]
            P = mm(S_, mm(Ri, Z[:, n: 2 * n - nc]))
            np = P.shape[-1]

            self.update_residual()
            nc = self.update_converged_count()
            self.S[..., :n] = self.X
            self.S[:, n: n + np] = P
            W = _utils.matmul(self.iK, self.R[:, nc:])

            self.ivars["converged_end"] = ns = n + np + W.shape[-1]
            self.S[:, n + np: ns] = W

    def _update_ortho(self):
        """Update or initialize iteration variables when `method == "ortho"`."""
        mm = ops.matmul
        ns = self.ivars["converged_end"]
        nc = self.ivars["converged_count"]
        n = self.iparams["n"]
        largest = self.bparams["largest"]

        if self.ivars["istep"] == 0:
            Ri = self._get_rayleigh_ritz_transform(self.X)
            M = _utils.qform(_utils.qform(self.A, self.X), Ri)
            _E, Z = _utils.symeig(M, largest)
            self.X = mm(self.X, mm(Ri, Z))
            self.update_residual()
            np = 0
            nc = self.update_converged_count()
            self.S[:, :n] = self.X
            W = self._get_ortho(self.R, self.X)
            ns = self.ivars["converged_end"] = n + np + W.shape[-1]
            self.S[:, n + np: ns] = W

        else:
            S_ = self.S[:, nc:ns]
            # Rayleigh-Ritz procedure
            E_, Z = _utils.symeig(_utils.qform(self.A, S_), largest)

            # Update E, X, P
            self.X[:, nc:] = mm(S_, Z[:, : n - nc])
            self.E[nc:] = E_[: n - nc]
            P = mm(S_, mm(Z[:, n - nc:], _utils.basis(Z[: n - nc, n - nc:].mT)))
            np = P.shape[-1]

            # check convergence
            self.update_residual()
            nc = self.update_converged_count()

            # update S
            self.S[:, :n] = self.X
            self.S[:, n: n + np] = P
            W = self._get_ortho(self.R[:, nc:], self.S[:, : n + np])
            ns = self.ivars["converged_end"] = n + np + W.shape[-1]
            self.S[:, n + np: ns] = W

    def _get_rayleigh_ritz_transform(self, S):
        """The upper-triangular Ri that reduces the Rayleigh-Ritz problem (S^T A S) C = (S^T B S) C E to the
        standard (Ri^T S^T A S Ri) Z = Z E, C = Ri Z, for the basis S (m, n) of the search subspace.

        [DuerschEtal2018] scales by D = diag(S^T B S)^(-1/2) with matrix products (R^T R = Cholesky(D SBS D),
        Ri = D R^-1); here D's products are elementwise ones with the vector d (dd * SBS, R^-1 * d), and D is
        never formed."""
        B = self.B
        SBS = _utils.qform(B, S)
        d_row = SBS.diagonal(0, -2, -1) ** -0.5
        d_col = d_row.reshape(d_row.shape[0], 1)
        R = ops.linalg_cholesky((SBS * d_row) * d_col, upper=True)
        return ops.linalg_solve_triangular(R, d_row.diag_embed(), upper=True, left=False)

    def _get_svqb(self, U: Tensor, drop: bool, tau: float) -> Tensor:
        """B-orthonormal U (U^T B U = I), of size (m, n1): Algorithm 4 of [DuerschPhD2015] (a slight change
        of [StathopoulosWu2002]'s) when `drop` is False (n1 = n); when True, the columns whose contribution
        to span(U) is below the tolerance `tau` are dropped (n1 <= n)."""
        if U.numel() == 0:
            return U
        UBU = _utils.qform(self.B, U)
        d = UBU.diagonal(0, -2, -1)

        # Drop U's exactly zero columns first: constructed inputs can have them, and the d ** -0.5 below
        # would fail on them.
        nz = ops.where(abs(d) != 0.0)
        if len(nz) != 1:
            raise AssertionError(f"expected nz to have length 1, got {nz}")
        if len(nz[0]) < len(d):
            U = U[:, nz[0]]
            if U.numel() == 0:
                return U
            UBU = _utils.qform(self.B, U)
            d = UBU.diagonal(0, -2, -1)
            nz = ops.where(abs(d) != 0.0)
            if len(nz[0]) != len(d):
                raise AssertionError(f"expected nz[0] length {len(d)}, got {len(nz[0])}")

        # The original algorithm 4 from [DuerschPhD2015].
        d_col = (d**-0.5).reshape(d.shape[0], 1)
        DUBUD = (UBU * d_col) * d_col.mT
        E, Z = _utils.symeig(DUBUD)
        t = tau * abs(E).max()
        if drop:
            keep = ops.where(E > t)
            if len(keep) != 1:
                raise AssertionError(f"expected keep to have length 1, got {keep}")
            E = E[keep[0]]
            Z = Z[:, keep[0]]
            d_col = d_col[keep[0]]
        else:
            E[(ops.where(E < t))[0]] = t

        return ops.matmul(U * d_col.mT, Z * E**-0.5)

    def _get_ortho(self, U, V):
        """B-orthonormal U whose columns are B-orthogonal to V (m, k), of size (m, n1): Algorithm 3 of
        [DuerschPhD2015] (n1 = n), or its Algorithm 6, which may drop columns (n1 <= n), when
        `bparams["ortho_use_drop"]`. Empty when all of U's columns are B-collinear to V."""
        mm = ops.matmul
        mm_B = _utils.matmul
        m = self.iparams["m"]
        tau_ortho = self.fparams["ortho_tol"]
        tau_drop = self.fparams["ortho_tol_drop"]
        tau_replace = self.fparams["ortho_tol_replace"]
        i_max = self.iparams["ortho_i_max"]
        j_max = self.iparams["ortho_j_max"]
        # with use_drop, U's columns that add little to span([U, V]) may be dropped
        use_drop = self.bparams["ortho_use_drop"]

        # clean up variables from the previous call
        for vkey in list(self.fvars.keys()):
            if vkey.startswith("ortho_") and vkey.endswith("_rerr"):
                self.fvars.pop(vkey)
        self.ivars.pop("ortho_i", 0)
        self.ivars.pop("ortho_j", 0)

        BV_norm = ops.norm(mm_B(self.B, V))
        BU = mm_B(self.B, U)
        VBU = mm(V.mT, BU)
        i = j = 0
        for i in range(i_max):
            U = U - mm(V, VBU)
            drop = False
            tau_svqb = tau_drop
            for j in range(j_max):
                if use_drop:
                    U = self._get_svqb(U, drop, tau_svqb)
                    drop = True
                    tau_svqb = tau_replace
                else:
                    U = self._get_svqb(U, False, tau_replace)
                if U.numel() == 0:
                    # all initial U columns are B-collinear to V
                    self.ivars["ortho_i"] = i
                    self.ivars["ortho_j"] = j
                    return U
                BU = mm_B(self.B, U)
                UBU = mm(U.mT, BU)
                U_norm = ops.norm(U)
                BU_norm = ops.norm(BU)
                R = UBU - creation.eye(UBU.shape[-1], device=UBU.device, dtype=UBU.dtype)
                R_norm = ops.norm(R)
                rerr = float(R_norm) * float(BU_norm * U_norm) ** -1
                vkey = f"ortho_UBUmI_rerr[{i}, {j}]"
                self.fvars[vkey] = rerr
                if rerr < tau_ortho:
                    break
            VBU = mm(V.mT, BU)
            VBU_norm = ops.norm(VBU)
            U_norm = ops.norm(U)
            rerr = float(VBU_norm) * float(BV_norm * U_norm) ** -1
            vkey = f"ortho_VBU_rerr[{i}]"
            self.fvars[vkey] = rerr
            if rerr < tau_ortho:
                break
            if m < U.shape[-1] + V.shape[-1]:
                B = self.B
                if B is None:
                    raise AssertionError("B must not be None")
                raise ValueError("Overdetermined shape of U:"
                                 f" #B-cols(={B.shape[-1]}) >= #U-cols(={U.shape[-1]}) + #V-cols(={V.shape[-1]}) "
                                 "must hold")
        self.ivars["ortho_i"] = i
        self.ivars["ortho_j"] = j
        return U
