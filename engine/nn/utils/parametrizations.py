"""torch.nn.utils.parametrizations (torch/nn/utils/parametrizations.py): orthogonal, weight_norm
and spectral_norm as parametrizations (register_parametrization), the successors of the hook API
in weight_norm.py and spectral_norm.py.

- orthogonal: the weight is Q = map(A) for A built from the unconstrained `original` — the matrix
  exponential or Cayley transform of A - Aᴴ (A's lower triangle), or the product of the Householder
  reflections whose vectors are below original's diagonal (signs from its diagonal). With
  use_trivialization (the default) Q is base · map(A), `base` an orthogonal buffer that assigning
  module.weight = X sets to X made orthogonal (original then -I, so that Q = base).
- weight_norm: original0 = g (the norm over every dim but `dim`), original1 = v; weight = v g / ‖v‖.
- spectral_norm: weight = original / σ; σ = u·(W v) from the buffers _u and _v, which each
  training-mode evaluation first updates by n_power_iterations steps of power iteration.

agrad has no geqrf op: _make_orthogonal takes linalg.qr's Q (LAPACK's geqrf and orgqr, as torch's
geqrf and householder_product are) with the signs of R's diagonal, the same matrix; the Householder
map's right_inverse without trivialization, which needs geqrf's reflectors themselves, reads them
from LAPACK through NumPy (_geqrf; no gradient is needed: it runs under no_grad)."""
from __future__ import annotations

from enum import Enum, auto

import numpy as np

from ..._tensor import Tensor
from ...grad_mode import no_grad
from ..functional import normalize
from ..modules.module import Module
from . import parametrize
from .weight_norm import _weight_norm, norm_except_dim

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


def _is_orthogonal(Q, eps=None):
    import agrad
    n, k = Q.size(-2), Q.size(-1)
    Id = agrad.eye(k, dtype=Q.dtype, device=Q.device)
    # A reasonable eps, but not too large
    eps = 10.0 * n * float(np.finfo(Q.dtype.np).eps)
    return agrad.allclose(Q.mT @ Q, Id, atol=eps)


def _make_orthogonal(A):
    """The Q of A = QR with R's diagonal made positive (A of full rank: the closest orthogonal
    matrix in the QR sense)."""
    import agrad
    Q, R = agrad.linalg.qr(A)
    # NOTE: torch multiplies geqrf+householder_product's Q by sgn(diag(R)); linalg.qr is the same pair
    Q *= R.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)
    return Q


def _geqrf(A):
    """torch.geqrf(A) for real A: LAPACK's Householder QR in its packed form (R on and above the
    diagonal, the reflectors' vectors below it) and the reflectors' scales tau."""
    import agrad
    h, tau = np.linalg.qr(A.detach().cpu().numpy(), mode="raw")     # h is LAPACK's column-major result
    packed = agrad.tensor(np.ascontiguousarray(np.swapaxes(h, -1, -2)), dtype=A.dtype, device=A.device)
    return packed, agrad.tensor(np.ascontiguousarray(tau), dtype=A.dtype, device=A.device)


class _OrthMaps(Enum):
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


class _Orthogonal(Module):
    def __init__(self, weight, orthogonal_map: _OrthMaps, *, use_trivialization=True) -> None:
        super().__init__()
        if weight.is_complex() and orthogonal_map == _OrthMaps.householder:
            raise ValueError("The householder parametrization does not support complex tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X: Tensor) -> Tensor:
        import agrad
        n, k = X.size(-2), X.size(-1)
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        # X is real here, or complex for matrix_exp and cayley (Xᴴ = X.mT for real X)
        if self.orthogonal_map == _OrthMaps.matrix_exp or self.orthogonal_map == _OrthMaps.cayley:
            # A = X - Xᴴ is skew-symmetric: its exponential and Cayley transform are orthogonal
            X = X.tril()
            if n != k:
                # embed X in the lower part of an n x n matrix
                X = agrad.cat([X, X.new_zeros(n, n - k).expand(*X.shape[:-2], -1, -1)], dim=-1)
            A = X - X.mT
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                Q = agrad.matrix_exp(A)
            else:
                # (I + A/2)(I - A/2)^{-1}
                Id = agrad.eye(n, dtype=A.dtype, device=A.device)
                Q = agrad.linalg.solve(agrad.add(Id, A, alpha=-0.5), agrad.add(Id, A, alpha=0.5))
            if n != k:
                Q = Q[..., :k]
        else:
            # X is real: the reflectors are below the diagonal, the signs on it
            A = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = agrad.linalg.householder_product(A, tau)
            # the diagonal of X is 1's and -1's: -Id is the identity of this map (see right_inverse)
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if hasattr(self, "base"):
            Q = self.base @ Q
        if transposed:
            Q = Q.mT
        return Q

    def right_inverse(self, Q: Tensor) -> Tensor:
        with no_grad():
            return self._right_inverse(Q)

    def _right_inverse(self, Q: Tensor) -> Tensor:
        import agrad
        if Q.shape != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                             f"Got a tensor of shape {Q.shape}.")
        Q_init = Q
        n, k = Q.size(-2), Q.size(-1)
        transpose = n < k
        if transpose:
            Q = Q.mT
            n, k = k, n
        if not hasattr(self, "base"):
            # NOTE: only the Householder map is inverted (torch's note [right_inverse expm cayley])
            if self.orthogonal_map == _OrthMaps.cayley or self.orthogonal_map == _OrthMaps.matrix_exp:
                raise NotImplementedError("It is not possible to assign to the matrix exponential "
                                          "or the Cayley parametrizations when use_trivialization=False.")
            # Householder: Q made orthogonal by its QR decomposition, whose R gets a positive diagonal
            # (else Q = (-Q)(-Id) would be another decomposition of an orthogonal Q); the reflectors
            # are real here (no complex Householder)
            A, tau = _geqrf(Q)
            A.diagonal(dim1=-2, dim2=-1).sign_()
            # LAPACK gives tau exactly 0 where it uses no reflection
            A.diagonal(dim1=-2, dim2=-1)[tau == 0.0] *= -1
            return A.mT if transpose else A
        if n == k:
            # Q is orthogonal already, or made so
            Q = _make_orthogonal(Q) if not _is_orthogonal(Q) else Q.clone()
        else:
            # complete Q to an n x n orthogonal matrix with random columns
            N = agrad.randn(*(Q.size()[:-2] + (n, n - k)), dtype=Q.dtype, device=Q.device)
            Q = _make_orthogonal(agrad.cat([Q, N], dim=-1))
        self.base = Q
        # -Id: householder(-Id) = Id, so that the module's weight is base (its diagonal gives the signs)
        neg_Id = agrad.zeros_like(Q_init)
        neg_Id.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
        return neg_Id


def orthogonal(module: Module, name: str = "weight", orthogonal_map: str | None = None, *,
               use_trivialization: bool = True) -> Module:
    """module.<name> (a matrix or batch of them) constrained to be orthogonal (semi-orthogonal when
    not square): orthogonal_map 'matrix_exp' (the default for square matrices), 'cayley' or
    'householder' (the default otherwise)."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        orthogonal_map = ("matrix_exp" if weight.size(-2) == weight.size(-1) or weight.is_complex()
                          else "householder")
    orth_enum = getattr(_OrthMaps, orthogonal_map, None)
    if orth_enum is None:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
                         f"Got: {orthogonal_map}")
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module


class _WeightNorm(Module):
    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        if dim is None:
            dim = -1
        self.dim = dim

    def forward(self, weight_g, weight_v):
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        weight_g = norm_except_dim(weight, 2, self.dim)
        weight_v = weight
        return weight_g, weight_v


def weight_norm(module: Module, name: str = "weight", dim: int = 0):
    """module.<name> parametrized as original1 · original0 / ‖original1‖ (original0 = g, the norm
    over every dim but `dim`, dim=None: over all; original1 = v). A state dict of the hook API
    (<name>_g, <name>_v) loads into it."""
    _weight_norm_module = _WeightNorm(dim)
    parametrize.register_parametrization(module, name, _weight_norm_module, unsafe=True)

    def _weight_norm_compat_hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                 error_msgs) -> None:
        g_key = f"{prefix}{name}_g"
        v_key = f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            original0 = state_dict.pop(g_key)
            original1 = state_dict.pop(v_key)
            state_dict[f"{prefix}parametrizations.{name}.original0"] = original0
            state_dict[f"{prefix}parametrizations.{name}.original1"] = original1

    module._register_load_state_dict_pre_hook(_weight_norm_compat_hook)
    return module


class _SpectralNorm(Module):
    def __init__(self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12) -> None:
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError("Dimension out of range (expected to be in range of "
                             f"[-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but "
                             f"got n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            # a vector is just normalised: no power iteration
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.size()
            u = weight_mat.new_empty(h).normal_(0, 1)
            v = weight_mat.new_empty(w).normal_(0, 1)
            self.register_buffer("_u", normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", normalize(v, dim=0, eps=self.eps))
            # start u and v near the top singular vectors
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        if weight.ndim <= 1:
            raise AssertionError(f"Expected weight to have more than 1 dimension, got {weight.ndim}")
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, weight_mat: Tensor, n_power_iterations: int) -> None:
        """u and v updated in place (out=): the buffers stay the same tensors."""
        if weight_mat.ndim <= 1:
            raise AssertionError(f"Expected weight_mat to have more than 1 dimension, got {weight_mat.ndim}")
        with no_grad():
            for _ in range(n_power_iterations):
                self._u = normalize(weight_mat.mv(self._v), dim=0, eps=self.eps, out=self._u)
                self._v = normalize(weight_mat.mT.mv(self._u), dim=0, eps=self.eps, out=self._v)

    def forward(self, weight: Tensor) -> Tensor:
        if weight.ndim == 1:
            return normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        # NOTE: clones: σ's backward must not see the next call's in-place update of the buffers
        u = self._u.clone()
        v = self._v.clone()
        sigma = u.dot(weight_mat.mv(v))
        return weight / sigma

    def right_inverse(self, value: Tensor) -> Tensor:
        # the constraint is enforced by forward: any value is its own preimage
        return value


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1, eps: float = 1e-12,
                  dim: int | None = None) -> Module:
    """module.<name> parametrized as original / σ, σ its largest singular value estimated by power
    iteration (buffers parametrizations.<name>[0]._u and _v); dim defaults to 1 for transposed
    convolutions, else 0."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        from ..modules import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)) else 0
    parametrize.register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module
