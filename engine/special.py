"""agrad.special: PyTorch's torch.special namespace, scipy.special's names for the special
functions the op library has. Each is the op itself (torch.special.expit is sigmoid, gammaln
is lgamma, psi is digamma; ndtr is the op special_ndtr), so results, gradients and grad_fn
names are the op's, as in PyTorch, where these are aliases in native_functions.yaml."""
from __future__ import annotations

from .ops import digamma, erf, erfc, erfinv, exp2, expm1, log1p, log_softmax, logit, logsumexp, polygamma
from .ops import digamma as psi
from .ops import lgamma as gammaln
from .ops import round as _round
from .ops import sigmoid as expit
from .ops import sinc, softmax, xlogy
from .ops import special_ndtr as ndtr

__all__ = ["expit", "logit", "erf", "erfc", "erfinv", "expm1", "exp2", "log1p", "gammaln", "digamma", "psi",
           "polygamma", "ndtr", "sinc", "round", "softmax", "log_softmax", "logsumexp", "xlogy"]


def round(input, *, decimals=0):  # noqa: A001 — PyTorch's name
    """torch.special.round: round with `decimals` always given (PyTorch's round.decimals, RoundBackward1)."""
    return _round(input, decimals=decimals)
