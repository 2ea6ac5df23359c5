"""agrad.special: PyTorch's torch.special namespace, scipy.special's names for the special
functions the op library has. Each is the op itself (torch.special.expit is sigmoid, gammaln
is lgamma, psi is digamma, multigammaln is mvlgamma, gammainc and gammaincc are igamma and
igammac; ndtr is the op special_ndtr, i0e special_i0e …), so results, gradients and grad_fn
names are the op's, as in PyTorch, where these are aliases in native_functions.yaml."""
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

__all__ = ["expit", "logit", "erf", "erfc", "erfinv", "expm1", "exp2", "log1p", "gammaln", "digamma", "psi",
           "polygamma", "ndtr", "sinc", "round", "softmax", "log_softmax", "logsumexp", "xlogy", "i0", "i0e", "i1",
           "i1e", "ndtri", "log_ndtr", "erfcx", "xlog1py", "zeta", "entr", "multigammaln", "bessel_j0", "bessel_j1",
           "gammainc", "gammaincc"]


def round(input, *, decimals=0):  # noqa: A001 — PyTorch's name
    """torch.special.round: round with `decimals` always given (PyTorch's round.decimals, RoundBackward1)."""
    return _round(input, decimals=decimals)
