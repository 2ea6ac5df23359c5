"""The samplers torch.distributions reaches through ATen ops that agrad's op library does not have:
torch._standard_gamma (with its reparameterized gradient), torch._sample_dirichlet and
torch._dirichlet_grad. (torch.poisson, torch.binomial and torch.multinomial are agrad's ops of
those names: engine/ops/distributions.py.)

They draw, as agrad's own random ops do (engine/ops/distributions.py), from agrad's global generator on
the host (NumPy's PCG64), so a seed gives the same numbers on every device; the numbers cannot be
PyTorch's (another bit generator), only their distribution is. `standard_gamma` is differentiable in
its concentration by implicit reparameterization, dx/dalpha = -(dF(x; alpha)/dalpha) / f(x; alpha)
for the standard Gamma's CDF F and density f, the gradient ATen's `_standard_gamma_grad` returns;
its three regimes follow ATen's `standard_gamma_grad_one` (aten/src/ATen/native/Distributions.h).
A Dirichlet draw's gradient is ATen's `_dirichlet_grad` (`dirichlet_grad_one`): the implicit gradient
of each coordinate's Beta(alpha, total - alpha) marginal, in four regimes of its own.
"""
from __future__ import annotations

import numpy as np
from scipy import special

from .. import creation
from ..generator import numpy_rng
from .._tensor import Tensor
from ..autograd.function import Function, once_differentiable
from ..grad_mode import no_grad

__all__ = ["standard_gamma", "standard_gamma_grad", "sample_dirichlet", "dirichlet_grad"]


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


def _gamma_draws(concentration: Tensor) -> np.ndarray:
    """Standard Gamma draws of each concentration, on the host. NOTE: ATen's kernel clamps every draw to
    the dtype's smallest normal number (alpha <= 0 included, which NumPy refuses), so that log_prob and
    the gradients stay finite."""
    alpha = np.maximum(np.nan_to_num(_host(concentration), nan=0.0), 0.0)
    return np.maximum(numpy_rng(None).standard_gamma(alpha), np.finfo(concentration.dtype.np).tiny)


class _StandardGamma(Function):
    """torch._standard_gamma: a Gamma(concentration, 1) draw; its backward is StandardGammaBackward0's
    `grad * _standard_gamma_grad(self, result)`."""

    @staticmethod
    def forward(ctx, concentration):
        x = _like(_gamma_draws(concentration), concentration)
        ctx.save_for_backward(concentration, x)
        return x

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        concentration, x = ctx.saved_tensors
        return grad * _like(standard_gamma_grad(_host(concentration), _host(x)), concentration)


def standard_gamma(concentration: Tensor) -> Tensor:
    return _StandardGamma.apply(concentration)


def sample_dirichlet(concentration: Tensor) -> Tensor:
    """torch._sample_dirichlet: standard Gamma draws (clamped as _standard_gamma's) normalized along the last
    dim; no gradient (Dirichlet.rsample's _Dirichlet gives it one, by dirichlet_grad)."""
    gammas = _gamma_draws(concentration)
    return _like(gammas / gammas.sum(-1, keepdims=True), concentration)


def _beta_grad_alpha_small(x, alpha, beta):
    """d x / d alpha for a Beta(alpha, beta) draw x near 0: a Taylor series in x, ten terms."""
    factor = special.digamma(alpha) - special.digamma(alpha + beta) - np.log(x)
    numer = np.ones_like(x)
    series = numer / alpha * (factor + 1 / alpha)
    for i in range(1, 11):
        numer = numer * (i - beta) * x / i
        denom = alpha + i
        series = series + numer / denom * (factor + 1 / denom)
    result = x * (1 - x) ** -beta * series
    return np.where(np.isnan(result), 0.0, result)


def _beta_grad_beta_small(x, alpha, beta):
    """d x / d beta for a Beta(alpha, beta) draw x near 0: a Taylor series in x, eight terms."""
    factor = special.digamma(alpha + beta) - special.digamma(beta)
    numer, betas, dbetas = np.ones_like(x), np.ones_like(x), np.zeros_like(x)
    series = factor / alpha
    for i in range(1, 9):
        numer = numer * -x / i
        dbetas = dbetas * (beta - i) + betas
        betas = betas * (beta - i)
        series = series + numer / (alpha + i) * (dbetas + factor * betas)
    result = -(1 - x) ** (1 - beta) * series
    return np.where(np.isnan(result), 0.0, result)


def _beta_grad_alpha_mid(x, alpha, beta):
    """d x / d alpha for both parameters large: Rice's saddle point expansion, a polynomial near the mean."""
    total = alpha + beta
    mean = alpha / total
    std = np.sqrt(alpha * beta / (total + 1)) / total
    near = (mean - 0.1 * std <= x) & (x <= mean + 0.1 * std)
    poly = 47 * x * beta ** 4 + alpha * (
        (43 + 20 * (16 + 27 * beta) * x) * beta ** 3 + alpha * (
            3 * (59 + 180 * beta - 90 * x) * beta ** 2 + alpha * (
                (453 + 1620 * beta * (1 - x) - 455 * x) * beta + alpha * (8 * (1 - x) * (135 * beta - 11)))))
    prefactor_num = (1 + 12 * alpha) * (1 + 12 * beta) / (total * total)
    prefactor_den = 12960 * alpha ** 3 * beta ** 2 * (1 + 12 * total)
    near_value = prefactor_num / (1 - x) * poly / prefactor_den
    prefactor = -x / np.sqrt(2 * alpha * beta / total)
    stirling = ((1 + 1 / (12 * alpha) + 1 / (288 * alpha * alpha)) * (1 + 1 / (12 * beta) + 1 / (288 * beta * beta))
                / (1 + 1 / (12 * total) + 1 / (288 * total * total)))
    axbx = alpha * (x - 1) + beta * x
    term1 = ((2 * alpha * alpha * (x - 1) + alpha * beta * (x - 1) - x * beta * beta)
             / (np.sqrt(2 * alpha / beta) * total ** 1.5 * axbx * axbx))
    term2 = 0.5 * np.log(alpha / (total * x))
    term3 = np.sqrt(8 * alpha * beta / total) / (beta * x + alpha * (x - 1))
    term4 = (beta * np.log(beta / (total * (1 - x))) + alpha * np.log(alpha / (total * x))) ** -1.5
    far_value = stirling * prefactor * (term1 + term2 * (term3 + np.where(x < mean, term4, -term4)))
    return np.where(near, near_value, far_value)


# dirichlet_grad_one's rational correction: [numerator, denominator][power of u][power of a][power of b]
_DIRICHLET_C = np.array([
    [[[1.003668233, -0.01061107488, -0.0657888334, 0.01201642863],
      [0.6336835991, -0.3557432599, 0.05486251648, -0.001465281033],
      [-0.03276231906, 0.004474107445, 0.002429354597, -0.0001557569013]],
     [[0.221950385, -0.3187676331, 0.01799915743, 0.01074823814],
      [-0.2951249643, 0.06219954479, 0.01535556598, 0.001550077057],
      [0.02155310298, 0.004170831599, 0.001292462449, 6.976601077e-05]],
     [[-0.05980841433, 0.008441916499, 0.01085618172, 0.002319392565],
      [0.02911413504, 0.01400243777, -0.002721828457, 0.000751041181],
      [0.005900514878, -0.001936558688, -9.495446725e-06, 5.385558597e-05]]],
    [[[1, -0.02924021934, -0.04438342661, 0.007285809825],
      [0.6357567472, -0.3473456711, 0.05454656494, -0.002407477521],
      [-0.03301322327, 0.004845219414, 0.00231480583, -0.0002307248149]],
     [[0.5925320577, -0.1757678135, 0.01505928619, 0.000564515273],
      [0.1014815858, -0.06589186703, 0.01272886114, -0.0007316646956],
      [-0.007258481865, 0.001096195486, 0.0003934994223, -4.12701925e-05]],
     [[0.06469649321, -0.0236701437, 0.002902096474, -5.896963079e-05],
      [0.001925008108, -0.002869809258, 0.0008000589141, -6.063713228e-05],
      [-0.0003477407336, 6.959756487e-05, 1.097287507e-05, -1.650964693e-06]]]])


def _dirichlet_grad_rational(x, alpha, total):
    beta = total - alpha
    u = np.log(x)
    a = np.log(alpha) - u
    b = np.log(total) - a
    powers_b = np.stack([np.ones_like(b), b, b * b, b * b * b])         # (4, n)
    pq = np.einsum("kijl,ln->kijn", _DIRICHLET_C, powers_b)             # each (u, a) term's polynomial in b
    weights = np.stack([np.ones_like(u), u, u * u])[:, None] * np.stack([np.ones_like(a), a, a * a])[None]
    p, q = (pq * weights).sum((1, 2))
    return p / q * x * (special.digamma(total) - special.digamma(alpha)) / beta


def dirichlet_grad(x: np.ndarray, alpha: np.ndarray, total: np.ndarray) -> np.ndarray:
    """ATen's _dirichlet_grad(x, alpha, total): -(d/dalpha cdf(x; alpha, beta)) / pdf(x; alpha, beta) / (1 - x)
    for x a Beta(alpha, beta = total - alpha) draw, elementwise, in float64."""
    x, alpha, total = np.broadcast_arrays(np.asarray(x, np.float64), np.asarray(alpha, np.float64),
                                          np.asarray(total, np.float64))
    shape = x.shape
    x, alpha, total = x.reshape(-1), alpha.reshape(-1), total.reshape(-1)
    beta = total - alpha
    boundary = total * x * (1 - x)
    out = np.empty(x.shape)
    with np.errstate(all="ignore"):
        near0 = (x <= 0.5) & (boundary < 2.5)
        near1 = ~near0 & (x >= 0.5) & (boundary < 0.75)
        mid = ~near0 & ~near1 & (alpha > 6) & (beta > 6)
        rest = ~near0 & ~near1 & ~mid
        out[near0] = _beta_grad_alpha_small(x[near0], alpha[near0], beta[near0])
        out[near1] = -_beta_grad_beta_small(1 - x[near1], beta[near1], alpha[near1])
        out[mid] = _beta_grad_alpha_mid(x[mid], alpha[mid], beta[mid])
        out[rest] = _dirichlet_grad_rational(x[rest], alpha[rest], total[rest])
    return out.reshape(shape)
