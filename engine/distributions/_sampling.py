"""The samplers torch.distributions reaches through ATen ops that agrad's op library does not have:
torch._standard_gamma (with its reparameterized gradient), torch.poisson, torch.binomial and
torch.multinomial (with replacement).

They draw, as agrad's own random ops do (engine/ops/distributions.py), from agrad's global generator on
the host (NumPy's PCG64), so a seed gives the same numbers on every device; the numbers cannot be
PyTorch's (another bit generator), only their distribution is. The integer-valued draws carry no
gradient (PyTorch's poisson and binomial have none either). `standard_gamma` is differentiable in
its concentration by implicit reparameterization, dx/dalpha = -(dF(x; alpha)/dalpha) / f(x; alpha)
for the standard Gamma's CDF F and density f, the gradient ATen's `_standard_gamma_grad` returns;
its three regimes follow ATen's `standard_gamma_grad_one` (aten/src/ATen/native/Distributions.h).
"""
from __future__ import annotations

import numpy as np
from scipy import special

from .. import creation
from .._tensor import Tensor
from ..autograd.function import Function, once_differentiable
from ..grad_mode import no_grad

__all__ = ["standard_gamma", "standard_gamma_grad", "poisson", "binomial", "multinomial"]


def _host(t: Tensor) -> np.ndarray:
    return np.asarray(t.detach().cpu().numpy())


def _like(values: np.ndarray, like: Tensor) -> Tensor:
    return creation.tensor(np.ascontiguousarray(values, dtype=like.dtype.np), dtype=like.dtype, device=like.device)


# ATen's bivariate rational approximation of the gradient for x >= 0.8 and alpha <= 8 (Jankowiak and
# Obermeyer, "Pathwise Derivatives Beyond the Reparameterization Trick", 2018): rows are the
# coefficients' constant, linear and quadratic terms in u = log(x / alpha); columns p0..p3, q0..q3 in v = log(alpha)
_COEF_UV = np.array([
    [0.16009398, -0.094634809, 0.025146376, -0.0030648343, 1, 0.32668115, 0.10406089, 0.0014179084],
    [0.53487893, 0.1298071, 0.065735949, -0.0015649758, 0.16639465, 0.020070113, -0.0035938915, -0.00058392623],
    [0.040121004, -0.0065914022, -0.0026286047, -0.0013441777, 0.017050642, -0.0021309326, 0.00085092367,
     -1.5247877e-07]])


def standard_gamma_grad(alpha: np.ndarray, x: np.ndarray) -> np.ndarray:
    """ATen's _standard_gamma_grad(x, alpha): -(d/dalpha cdf(x; alpha)) / pdf(x; alpha), elementwise, in float64."""
    alpha, x = np.broadcast_arrays(np.asarray(alpha, np.float64), np.asarray(x, np.float64))
    out = np.empty(alpha.shape)
    with np.errstate(all="ignore"):
        # small x: the Taylor series of the lower incomplete gamma function, six terms
        small = x < 0.8
        a, xs = alpha[small], x[small]
        numer, denom = np.ones_like(a), a.copy()
        series1, series2 = numer / denom, numer / (denom * denom)
        for i in range(1, 6):
            numer = numer * (-xs / i)
            denom = denom + 1
            series1 = series1 + numer / denom
            series2 = series2 + numer / (denom * denom)
        pow_x_alpha = xs ** a
        pdf = xs ** (a - 1) * np.exp(-xs)
        cdf_alpha = (np.log(xs) - special.digamma(a)) * pow_x_alpha * series1 - pow_x_alpha * series2
        result = -cdf_alpha / pdf
        out[small] = np.where(np.isnan(result), 0.0, result)
        # large alpha: Rice's saddle point expansion, a closed form near the mode
        large = ~small & (alpha > 8)
        a, xs = alpha[large], x[large]
        near = (0.9 * a <= xs) & (xs <= 1.1 * a)
        near_value = ((1 + 24 * a * (1 + 12 * a))
                      * (1440 * a * a + 6 * xs * (53 - 120 * xs) - 65 * xs * xs / a + a * (107 + 3600 * xs))
                      / (1244160 * a ** 4))
        root = np.sqrt(8 * a)
        term2 = root / (a - xs)
        term3 = (xs - a - a * np.log(xs / a)) ** -1.5
        term23 = np.where(xs < a, term2 - term3, term2 + term3)
        term1 = np.log(xs / a) * term23 - np.sqrt(2 / a) * (a + xs) / ((a - xs) * (a - xs))
        stirling = 1 + 1 / (12 * a) * (1 + 1 / (24 * a))
        out[large] = np.where(near, near_value, -stirling * xs * term1 / root)
        # otherwise the rational approximation
        rest = ~small & ~(alpha > 8)
        u, v = np.log(x[rest] / alpha[rest]), np.log(alpha[rest])
        coef = _COEF_UV[0][:, None] + u * (_COEF_UV[1][:, None] + u * _COEF_UV[2][:, None])
        p = coef[0] + v * (coef[1] + v * (coef[2] + v * coef[3]))
        q = coef[4] + v * (coef[5] + v * (coef[6] + v * coef[7]))
        out[rest] = np.exp(p / q)
    return out


class _StandardGamma(Function):
    """torch._standard_gamma: a Gamma(concentration, 1) draw; its backward is StandardGammaBackward0's
    `grad * _standard_gamma_grad(self, result)`."""

    @staticmethod
    def forward(ctx, concentration):
        alpha = _host(concentration)
        # NOTE: ATen's kernel clamps every draw to the dtype's smallest normal number (alpha <= 0 included,
        # which NumPy refuses), so that log_prob and the gradient stay finite
        draws = creation._generator.standard_gamma(np.maximum(np.nan_to_num(alpha, nan=0.0), 0.0))
        x = _like(np.maximum(draws, np.finfo(concentration.dtype.np).tiny), concentration)
        ctx.save_for_backward(concentration, x)
        return x

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        concentration, x = ctx.saved_tensors
        return grad * _like(standard_gamma_grad(_host(concentration), _host(x)), concentration)


def standard_gamma(concentration: Tensor) -> Tensor:
    return _StandardGamma.apply(concentration)


def poisson(rate: Tensor) -> Tensor:
    """torch.poisson: a Poisson draw of each rate, in the rate's dtype (no gradient)."""
    lam = _host(rate)
    if not (lam >= 0).all():        # NaN too
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    with no_grad():
        return _like(creation._generator.poisson(lam), rate)


def binomial(count: Tensor, prob: Tensor) -> Tensor:
    """torch.binomial: a Binomial(count, prob) draw, in prob's dtype (no gradient)."""
    # NOTE: ATen's sampler reads a negative count as 0 trials and a probability past [0, 1] as its bound
    n = np.maximum(np.rint(_host(count)), 0).astype(np.int64)
    with no_grad():
        return _like(creation._generator.binomial(n, np.clip(_host(prob), 0.0, 1.0)), prob)


def multinomial(probs: Tensor, num_samples: int) -> Tensor:
    """torch.multinomial(probs, num_samples, replacement=True) of a 2-D probs: int64 indices, one row per
    row of probs, drawn by inverting each row's cumulative distribution (the weights need not sum to 1)."""
    weights = _host(probs).astype(np.float64)
    # ATen's checks, whose messages differ between its one-draw path and its with-replacement kernel
    if num_samples == 1 and not (np.isfinite(weights) & (weights >= 0)).all():
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if not (weights >= 0).all():    # NaN too
        raise RuntimeError("invalid multinomial distribution (encountering probability entry < 0)")
    if not np.isfinite(weights).all():
        raise RuntimeError("invalid multinomial distribution (encountering probability entry = infinity or NaN)")
    if not (weights.sum(-1) > 0).all():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    with no_grad():
        cdf = np.cumsum(weights, axis=-1)
        draws = creation._generator.random((weights.shape[0], num_samples)) * cdf[:, -1:]
        index = np.stack([np.searchsorted(row, d, side="right") for row, d in zip(cdf, draws)])
        index = np.minimum(index, weights.shape[-1] - 1)   # NOTE: a draw can round onto the last edge
        return creation.tensor(index.reshape(weights.shape[0], num_samples), device=probs.device)
