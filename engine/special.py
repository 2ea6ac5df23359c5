"""agrad.special: PyTorch's torch.special namespace, scipy.special's names for the special
functions the op library has. Each is the op itself (torch.special.expit is sigmoid, gammaln
is lgamma, psi is digamma, multigammaln is mvlgamma, gammainc and gammaincc are igamma and
igammac; ndtr is the op special_ndtr, i0e special_i0e …), so results, gradients and grad_fn
names are the op's, as in PyTorch, where these are aliases in native_functions.yaml; the Bessel and
Airy functions and orthogonal polynomials PyTorch gives no derivative are the ops special_<name>."""
from __future__ import annotations

from .ops import digamma, erf, erfc, erfinv, exp2, expm1, log1p, log_softmax, logit, logsumexp, polygamma
from .ops import digamma as psi
from .ops import lgamma as gammaln
from .ops import round as _round
from .ops import sigmoid as expit
from .ops import i0, sinc, softmax, xlogy
from .ops import igamma as gammainc
from .ops import igammac as gammaincc
from .ops import mvlgamma as multigammaln
from .ops import special_bessel_j0 as bessel_j0
from .ops import special_bessel_j1 as bessel_j1
from .ops import special_entr as entr
from .ops import special_erfcx as erfcx
from .ops import special_i0e as i0e
from .ops import special_i1 as i1
from .ops import special_i1e as i1e
from .ops import special_log_ndtr as log_ndtr
from .ops import special_ndtr as ndtr
from .ops import special_ndtri as ndtri
from .ops import special_xlog1py as xlog1py
from .ops import special_zeta as zeta
from .ops import special_bessel_y0 as bessel_y0
from .ops import special_bessel_y1 as bessel_y1
from .ops import special_modified_bessel_i0 as modified_bessel_i0
from .ops import special_modified_bessel_i1 as modified_bessel_i1
from .ops import special_modified_bessel_k0 as modified_bessel_k0
from .ops import special_modified_bessel_k1 as modified_bessel_k1
from .ops import special_scaled_modified_bessel_k0 as scaled_modified_bessel_k0
from .ops import special_scaled_modified_bessel_k1 as scaled_modified_bessel_k1
from .ops import special_spherical_bessel_j0 as spherical_bessel_j0
from .ops import special_airy_ai as airy_ai
from .ops import special_chebyshev_polynomial_t as chebyshev_polynomial_t
from .ops import special_chebyshev_polynomial_u as chebyshev_polynomial_u
from .ops import special_chebyshev_polynomial_v as chebyshev_polynomial_v
from .ops import special_chebyshev_polynomial_w as chebyshev_polynomial_w
from .ops import special_shifted_chebyshev_polynomial_t as shifted_chebyshev_polynomial_t
from .ops import special_shifted_chebyshev_polynomial_u as shifted_chebyshev_polynomial_u
from .ops import special_shifted_chebyshev_polynomial_v as shifted_chebyshev_polynomial_v
from .ops import special_shifted_chebyshev_polynomial_w as shifted_chebyshev_polynomial_w
from .ops import special_hermite_polynomial_h as hermite_polynomial_h
from .ops import special_hermite_polynomial_he as hermite_polynomial_he
from .ops import special_laguerre_polynomial_l as laguerre_polynomial_l
from .ops import special_legendre_polynomial_p as legendre_polynomial_p

__all__ = ["expit", "logit", "erf", "erfc", "erfinv", "expm1", "exp2", "log1p", "gammaln", "digamma", "psi",
           "polygamma", "ndtr", "sinc", "round", "softmax", "log_softmax", "logsumexp", "xlogy", "i0", "i0e", "i1",
           "i1e", "ndtri", "log_ndtr", "erfcx", "xlog1py", "zeta", "entr", "multigammaln", "bessel_j0", "bessel_j1",
           "gammainc", "gammaincc",
           "bessel_y0", "bessel_y1", "modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0",
           "modified_bessel_k1",
           "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "spherical_bessel_j0", "airy_ai",
           "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
           "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
           "shifted_chebyshev_polynomial_w",
           "hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p"]


def round(input, *, decimals=0):  # noqa: A001 — PyTorch's name
    """torch.special.round: round with `decimals` always given (PyTorch's round.decimals, RoundBackward1)."""
    return _round(input, decimals=decimals)
