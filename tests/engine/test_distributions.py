"""agrad.distributions against torch 2.13.0's torch.distributions (tests/reference/distributions_fixtures.json,
written by make_distributions_reference.py): log_prob, cdf, icdf, entropy, moments, enumerate_support and
kl_divergence with their gradients, and the validation errors. Draws cannot be PyTorch's (another bit
generator), so they are checked by their shapes, dtypes and statistics, and rsample's gradients against
finite differences of the same draws (a fixed seed) or, for the Gamma family, against the implicit
gradient of the CDF. Never imports torch."""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy import special

import agrad
import agrad.distributions as D
from agrad.distributions import _sampling

import distributions_scenarios as S

FIXTURES = json.loads((Path(__file__).resolve().parents[1] / "reference" / "distributions_fixtures.json").read_text())


def _close(actual, expected, rtol=1e-7, atol=1e-10):
    np.testing.assert_allclose(np.asarray(actual, dtype=float), np.asarray(expected, dtype=float),
                               rtol=rtol, atol=atol, equal_nan=True)


def test_fixtures_cover_every_scenario():
    assert FIXTURES["torch_version"].startswith("2.13")
    assert set(FIXTURES["cases"]) == set(S.CASES)
    assert set(FIXTURES["kl"]) == {f"{p}|{q}" for p, q in S.KL_PAIRS}
    assert set(FIXTURES["errors"]) == set(S.ERRORS)
    assert set(FIXTURES["transforms"]) == set(S.TRANSFORMS)
    assert set(FIXTURES["registry"]) == set(S.REGISTRY)
    assert set(FIXTURES["sampler_grads"]) == {"standard_gamma_grad", "dirichlet_grad"}


def test_namespace():
    assert agrad.distributions is D
    assert D.Normal.__module__ == "agrad.distributions.normal"
    # every name of torch 2.13's torch.distributions.__all__
    assert set(D.__all__) == {
        "Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy", "Chi2", "ContinuousBernoulli", "Dirichlet",
        "Distribution", "Exponential", "ExponentialFamily", "FisherSnedecor", "Gamma", "GeneralizedPareto",
        "Geometric", "Gumbel", "HalfCauchy", "HalfNormal", "Independent", "InverseGamma", "Kumaraswamy",
        "LKJCholesky", "Laplace", "LogNormal", "LogisticNormal", "LowRankMultivariateNormal", "MixtureSameFamily",
        "Multinomial", "MultivariateNormal", "NegativeBinomial", "Normal", "OneHotCategorical",
        "OneHotCategoricalStraightThrough", "Pareto", "RelaxedBernoulli", "RelaxedOneHotCategorical", "StudentT",
        "Poisson", "Uniform", "VonMises", "Weibull", "Wishart", "TransformedDistribution", "biject_to",
        "kl_divergence", "register_kl", "transform_to", "AbsTransform", "AffineTransform", "CatTransform",
        "ComposeTransform", "CorrCholeskyTransform", "CumulativeDistributionTransform", "ExpTransform",
        "IndependentTransform", "LowerCholeskyTransform", "PositiveDefiniteTransform", "PowerTransform",
        "ReshapeTransform", "SigmoidTransform", "SoftplusTransform", "TanhTransform", "SoftmaxTransform",
        "StackTransform", "StickBreakingTransform", "Transform", "identity_transform"}


def _same_record(got, want):
    """The same shape, dtype, values and gradients (or the same refusal to differentiate)."""
    if not isinstance(want, dict) or "values" not in want:
        assert got == want                          # NotImplementedError, or the same error
        return
    assert ("grads" in got) == ("grads" in want)
    assert (got["shape"], got["dtype"]) == (want["shape"], want["dtype"])
    # float32 results: PyTorch's and NumPy's kernels may round differently in the last place
    rtol, grad_rtol = (1e-7, 1e-6) if want["dtype"] == "float64" else (1e-6, 1e-5)
    _close(got["values"], want["values"], rtol=rtol)
    if not isinstance(want.get("grads"), list):
        assert got.get("grads") == want.get("grads")
        return
    for gg, wg in zip(got["grads"], want["grads"], strict=True):
        assert (gg is None) == (wg is None)
        if wg is not None:
            _close(gg, wg, rtol=grad_rtol, atol=1e-9)


@pytest.mark.parametrize("name", sorted(S.CASES))
def test_case_matches_torch(name):
    got, want = S.run_case(agrad, name), FIXTURES["cases"][name]
    for key in ("batch_shape", "event_shape", "has_rsample", "has_enumerate_support", "support", "repr"):
        assert got[key] == want[key], key
    assert set(got["methods"]) == set(want["methods"])
    for method, w in want["methods"].items():
        g = got["methods"][method]
        if not isinstance(w, dict) or "values" not in w:
            assert g == w, method                   # NotImplementedError, or the same error
            continue
        _same_record(g, w)


@pytest.mark.parametrize("pair", [f"{p}|{q}" for p, q in S.KL_PAIRS])
def test_kl_matches_torch(pair):
    # a value with its gradients, an infinite KL (a constant, no gradient), or PyTorch's NotImplementedError
    _same_record(S.run_kl(agrad, *pair.split("|")), FIXTURES["kl"][pair])


@pytest.mark.parametrize("name", sorted(S.TRANSFORMS))
def test_transform_matches_torch(name):
    got, want = S.run_transform(agrad, name), FIXTURES["transforms"][name]
    for key in ("repr", "sign", "domain", "codomain", "bijective", "forward_shape", "inverse_shape"):
        assert got[key] == want[key], key
    for key in ("y", "inv", "log_abs_det_jacobian"):
        _same_record(got[key], want[key])


@pytest.mark.parametrize("name", sorted(S.REGISTRY))
def test_constraint_registry_matches_torch(name):
    got, want = S.run_registry(agrad, name), FIXTURES["registry"][name]
    for registry in ("biject_to", "transform_to"):
        g, w = got[registry], want[registry]
        assert g.keys() == w.keys()
        if "raised" in w:
            assert g == w
            continue
        assert g["repr"] == w["repr"]
        _same_record(g["y"], w["y"])
        _same_record(g["log_abs_det_jacobian"], w["log_abs_det_jacobian"])


def test_straight_through_gradient_matches_torch():
    agrad.manual_seed(0)
    got, want = S.run_straight_through(agrad), FIXTURES["straight_through"]
    assert got["values"] == want["values"] == [[4, 2, 3], True, True]     # one-hot draws
    _close(got["grads"][0], want["grads"][0], rtol=1e-6, atol=1e-9)      # the probabilities' gradient


@pytest.mark.parametrize("name", sorted(S.ERRORS))
def test_error_matches_torch(name):
    want = FIXTURES["errors"][name]
    assert want is not None
    assert S.run_error(agrad, name) == want


def test_default_validate_args():
    bad = agrad.tensor([-1.0])
    with pytest.raises(ValueError, match="to satisfy the constraint GreaterThan"):
        D.Normal(0.0, bad)
    D.Distribution.set_default_validate_args(False)
    try:
        d = D.Normal(0.0, bad)                       # no check, as torch with validation off
        assert math.isnan(d.log_prob(agrad.tensor([0.0])).item())
        with pytest.raises(ValueError, match="to satisfy the constraint"):
            D.Normal(0.0, bad, validate_args=True)
    finally:
        D.Distribution.set_default_validate_args(True)


def test_register_kl_dispatches_to_the_most_specific_pair():
    class MyNormal(D.Normal):
        pass

    calls = []

    @D.register_kl(MyNormal, D.Normal)
    def _kl(p, q):
        calls.append((type(p), type(q)))
        return agrad.zeros(p.batch_shape)

    try:
        assert D.kl_divergence(MyNormal(0.0, 1.0), D.Normal(1.0, 1.0)).item() == 0.0
        assert calls == [(MyNormal, D.Normal)]
        assert D.kl_divergence(D.Normal(0.0, 1.0), MyNormal(1.0, 1.0)).item() == pytest.approx(0.5)
    finally:
        from agrad.distributions import kl
        kl._KL_REGISTRY.pop((MyNormal, D.Normal))
        kl._KL_MEMOIZE.clear()


# ---- draws ------------------------------------------------------------------------------------------

def _dtype(name):
    if name in ("categorical_probs", "categorical_logits"):
        return agrad.int64
    return agrad.float32 if name.endswith("float32") else agrad.float64


@pytest.mark.parametrize("name", sorted(S.CASES))
def test_sample_shape_and_dtype(name):
    agrad.manual_seed(0)
    d, _, _, _ = S.build(agrad, name)
    x = d.sample((2, 3))
    assert x.shape == (2, 3) + tuple(d.batch_shape) + tuple(d.event_shape)
    assert x.dtype == _dtype(name)
    assert not x.requires_grad
    assert bool(d.support.check(x).all())
    assert d.sample().shape == tuple(d.batch_shape) + tuple(d.event_shape)
    if d.has_rsample:
        r = d.rsample((4,))
        assert r.shape == (4,) + tuple(d.batch_shape) + tuple(d.event_shape) and r.requires_grad
    else:
        with pytest.raises(NotImplementedError):
            d.rsample()
    with pytest.warns(FutureWarning, match=r"`sample_n\(n\)` will be deprecated"):
        assert d.sample_n(5).shape == (5,) + tuple(d.batch_shape) + tuple(d.event_shape)


def test_samples_follow_the_seed():
    d = D.Gamma(agrad.tensor([0.5, 3.0]), agrad.tensor([1.0, 2.0]))
    agrad.manual_seed(3)
    a = d.sample((4,))
    agrad.manual_seed(3)
    assert agrad.equal(a, d.sample((4,)))


# cases whose mean and variance are finite and light-tailed enough for 40000 draws to pin them down:
# the draws' mean within 5 standard errors, their variance within 10%
MOMENT_CASES = [n for n in sorted(S.CASES) if n not in (
    "cauchy", "student_t", "half_cauchy", "fisher_snedecor", "inverse_gamma", "generalized_pareto",
    "generalized_pareto_float32", "pareto", "categorical_probs", "categorical_logits", "relaxed_bernoulli",
    "relaxed_one_hot", "transformed_affine_sigmoid", "transformed_tanh", "transformed_exp_event", "logistic_normal",
    "lkj_cholesky", "von_mises")]


@pytest.mark.parametrize("name", MOMENT_CASES)
def test_sample_moments(name):
    agrad.manual_seed(1)
    d, _, _, _ = S.build(agrad, name)
    n = 40000
    x = d.sample((n,)).to(agrad.float64).detach().numpy()
    mean, var = d.mean.detach().numpy(), d.variance.detach().numpy()
    np.testing.assert_array_less(np.abs(x.mean(0) - mean), 5 * np.sqrt(var / n) + 1e-12)
    np.testing.assert_allclose(x.var(0), var, rtol=0.1, atol=1e-12)


@pytest.mark.parametrize("name", ["categorical_probs", "categorical_logits", "one_hot"])
def test_categorical_draw_frequencies(name):
    agrad.manual_seed(3)
    d, _, _, _ = S.build(agrad, name)
    n = 40000
    x = d.sample((n,)).detach().numpy()
    counts = x.sum(0) if name == "one_hot" else np.stack([(x == k).sum(0) for k in range(d.probs.shape[-1])], -1)
    p = d.probs.detach().numpy()
    np.testing.assert_array_less(np.abs(counts / n - p), 5 * np.sqrt(p * (1 - p) / n) + 1e-12)


def test_student_t_and_cauchy_draws_match_their_cdf():
    agrad.manual_seed(2)
    for d in (D.StudentT(agrad.tensor([3.0]), agrad.tensor([1.0]), agrad.tensor([2.0])),
              D.Cauchy(agrad.tensor([1.0]), agrad.tensor([0.5]))):
        x = d.sample((40000,)).numpy()[:, 0]
        # the median and quartiles of the draws, against the distribution's own (loc, loc -+ scale * q)
        if isinstance(d, D.Cauchy):
            quartiles = d.icdf(agrad.tensor([0.25, 0.5, 0.75], dtype=agrad.float32)).numpy()
        else:
            quartiles = 1.0 + 2.0 * np.array([-0.7648923, 0.0, 0.7648923])   # Student t(3)'s quartiles
        np.testing.assert_allclose(np.quantile(x, [0.25, 0.5, 0.75]), quartiles, atol=0.05)


def test_von_mises_draws_concentrate_as_its_density():
    agrad.manual_seed(5)
    loc, kappa = np.array([0.0, 1.0, -2.0]), np.array([0.5, 4.0, 20.0])
    x = D.VonMises(agrad.tensor(loc), agrad.tensor(kappa)).sample((40000,)).numpy()
    assert ((x >= -math.pi) & (x <= math.pi)).all()
    # E[cos(x - loc)] = I1(kappa) / I0(kappa), E[sin(x - loc)] = 0
    _close(np.cos(x - loc).mean(0), special.i1(kappa) / special.i0(kappa), atol=0.01)
    _close(np.sin(x - loc).mean(0), np.zeros(3), atol=0.01)


def test_relaxed_draws_are_on_the_simplex_and_sharpen_with_temperature():
    agrad.manual_seed(4)
    logits = agrad.tensor([0.5, -0.5, 1.0])
    cold = D.RelaxedOneHotCategorical(agrad.tensor(0.05), logits=logits).sample((20000,))
    _close(cold.sum(-1).numpy(), np.ones(20000), rtol=1e-5)
    # at a low temperature a draw is nearly one-hot, its argmax a Categorical(logits) draw
    assert float(cold.max(-1).values.mean()) > 0.9
    freq = np.bincount(cold.argmax(-1).numpy(), minlength=3) / 20000
    _close(freq, D.Categorical(logits=logits).probs.numpy(), atol=0.02)
    rb = D.RelaxedBernoulli(agrad.tensor(0.05), probs=agrad.tensor([0.3])).sample((20000,)).numpy()
    assert abs((rb > 0.5).mean() - 0.3) < 0.02


# ---- rsample's gradients ----------------------------------------------------------------------------

# reparameterized by a smooth function of noise that does not depend on the parameters
SMOOTH_RSAMPLE = [n for n in sorted(S.CASES)
                  if n not in ("gamma", "chi2", "beta", "dirichlet", "student_t", "fisher_snedecor", "inverse_gamma",
                               "wishart", "wishart_scale_tril", "generalized_pareto_float32")
                  and S.build(agrad, n)[0].has_rsample]


def _rsample_loss(name, seed, perturb=None):
    d, leaves, _, _ = S.build(agrad, name, perturb)
    agrad.manual_seed(seed)
    x = d.rsample((3,))
    return (x * agrad.tensor(S.go(x.numel()), dtype=x.dtype).reshape(x.shape)).sum(), leaves


@pytest.mark.parametrize("name", SMOOTH_RSAMPLE)
def test_rsample_gradient_matches_finite_differences(name):
    loss, leaves = _rsample_loss(name, seed=5)
    grads = agrad.autograd.grad(loss, leaves, allow_unused=True)
    h = 1e-6
    for i, (leaf, grad) in enumerate(zip(leaves, grads)):
        analytic = np.zeros(leaf.shape) if grad is None else grad.numpy()
        for k, index in enumerate(np.ndindex(*leaf.shape)):
            # a matrix parameter stays valid: a scale_tril lower triangular (its upper triangle is never
            # read), a covariance or precision symmetric (both of a pair move; their gradients add up)
            if name.startswith("mvn") and leaf.dim() == 2:
                row, col = index
                if row < col:
                    continue
                if name != "mvn_scale_tril" and row > col:
                    flat = [k, col * leaf.shape[1] + row]
                    want = analytic[row, col] + analytic[col, row]
                else:
                    flat, want = [k], analytic[index]
            else:
                flat, want = [k], analytic[index]
            plus = _rsample_loss(name, 5, (i, flat, h))[0].item()
            minus = _rsample_loss(name, 5, (i, flat, -h))[0].item()
            _close(want, (plus - minus) / (2 * h), rtol=1e-4, atol=1e-6)


def _implicit_gamma_grad(alpha, x):
    """-(dF/dalpha) / f for the standard Gamma, dF/dalpha by central differences of scipy's gammainc."""
    h = 1e-6 * np.maximum(alpha, 1.0)
    with np.errstate(all="ignore"):         # the density underflows far in the tails (left out there)
        dcdf = (special.gammainc(alpha + h, x) - special.gammainc(alpha - h, x)) / (2 * h)
        pdf = np.exp((alpha - 1) * np.log(x) - x - special.gammaln(alpha))
        return -dcdf / pdf


def test_standard_gamma_grad_is_the_implicit_gradient():
    alpha, x = np.meshgrid(np.array([0.05, 0.3, 1.0, 2.5, 7.9, 8.5, 30.0, 200.0]),
                           np.array([0.01, 0.2, 0.79, 0.81, 1.5, 4.0, 9.0, 28.0, 31.0, 190.0]))
    # where the density is not negligible (the approximations are tuned there, as in ATen)
    keep = special.gammainc(alpha, x) > 1e-6
    keep &= special.gammaincc(alpha, x) > 1e-6
    got, want = _sampling.standard_gamma_grad(alpha, x)[keep], _implicit_gamma_grad(alpha, x)[keep]
    # ATen's approximations hold to a few parts in a thousand
    np.testing.assert_allclose(got, want, rtol=5e-3)


def test_sampler_gradients_match_aten():
    (alpha, x), (bx, balpha, btotal) = S.sampler_grid()
    want = FIXTURES["sampler_grads"]
    _close(_sampling.standard_gamma_grad(np.array(alpha), np.array(x)), want["standard_gamma_grad"], rtol=1e-9)
    _close(_sampling.dirichlet_grad(np.array(bx), np.array(balpha), np.array(btotal)), want["dirichlet_grad"],
           rtol=1e-9)


def test_gamma_rsample_gradient():
    agrad.manual_seed(6)
    concentration = agrad.tensor([0.4, 2.0, 12.0], dtype=agrad.float64, requires_grad=True)
    rate = agrad.tensor([1.0, 0.5, 2.0], dtype=agrad.float64, requires_grad=True)
    x = D.Gamma(concentration, rate).rsample((200,))
    grad_c, grad_r = agrad.autograd.grad(x.sum(), [concentration, rate])
    z = (x * rate).detach().numpy()                  # the standard Gamma draws
    alpha = concentration.detach().numpy()
    _close(grad_c.numpy(), (_implicit_gamma_grad(alpha, z) / rate.detach().numpy()).sum(0), rtol=5e-3)
    _close(grad_r.numpy(), -(x.detach().numpy() / rate.detach().numpy()).sum(0), rtol=1e-10)


def test_beta_rsample_gradient_is_the_implicit_gradient():
    agrad.manual_seed(10)
    a = agrad.tensor([0.6, 3.0, 9.0], dtype=agrad.float64, requires_grad=True)
    b = agrad.tensor([2.0, 1.5, 12.0], dtype=agrad.float64, requires_grad=True)
    x = D.Beta(a, b).rsample((50,))
    ga, gb = agrad.autograd.grad(x.sum(), [a, b])
    xs, an, bn = x.detach().numpy(), a.detach().numpy(), b.detach().numpy()
    with np.errstate(all="ignore"):
        pdf = np.exp((an - 1) * np.log(xs) + (bn - 1) * np.log1p(-xs) - special.betaln(an, bn))
        h = 1e-6
        da = (special.betainc(an + h, bn, xs) - special.betainc(an - h, bn, xs)) / (2 * h)
        db = (special.betainc(an, bn + h, xs) - special.betainc(an, bn - h, xs)) / (2 * h)
    # -(dF/dparameter) / f per draw, summed over the draws (ATen's approximations: a few parts in a thousand)
    _close(ga.numpy(), (-da / pdf).sum(0), rtol=5e-3)
    _close(gb.numpy(), (-db / pdf).sum(0), rtol=5e-3)


@pytest.mark.parametrize("make, mean_grad", [
    # d E[x] / d parameters, exactly: a pathwise gradient averages to it
    (lambda a, b: D.Gamma(a, b), lambda a, b: (1 / b, -a / b ** 2)),
    (lambda a, b: D.Beta(a, b), lambda a, b: (b / (a + b) ** 2, -a / (a + b) ** 2)),
])
def test_gamma_family_rsample_gradient_averages_to_the_mean_gradient(make, mean_grad):
    agrad.manual_seed(7)
    a = agrad.tensor([0.7, 3.0], dtype=agrad.float64, requires_grad=True)
    b = agrad.tensor([2.0, 1.5], dtype=agrad.float64, requires_grad=True)
    n = 40000
    x = make(a, b).rsample((n,))
    ga, gb = agrad.autograd.grad(x.sum() / n, [a, b])
    wa, wb = mean_grad(a.detach().numpy(), b.detach().numpy())
    _close(ga.numpy(), wa, rtol=0.03)
    _close(gb.numpy(), wb, rtol=0.03)


def test_dirichlet_rsample_gradient():
    agrad.manual_seed(8)
    conc = agrad.tensor([0.7, 3.0, 1.5], dtype=agrad.float64, requires_grad=True)
    n = 40000
    x = D.Dirichlet(conc).rsample((n,))
    _close(x.sum(-1).detach().numpy(), np.ones(n), rtol=1e-12)
    # d E[x_0] / d conc = d (c_0 / sum c) / d conc
    (g,) = agrad.autograd.grad(x[:, 0].sum() / n, [conc])
    c = conc.detach().numpy()
    want = -c[0] / c.sum() ** 2 * np.ones(3)
    want[0] += 1 / c.sum()
    _close(g.numpy(), want, rtol=0.05, atol=2e-3)


def test_student_t_rsample_gradient():
    agrad.manual_seed(9)
    df = agrad.tensor([6.0], dtype=agrad.float64, requires_grad=True)
    scale = agrad.tensor([2.0], dtype=agrad.float64, requires_grad=True)
    n = 100000
    x = D.StudentT(df, 0.0, scale).rsample((n,))
    g_df, g_scale = agrad.autograd.grad((x ** 2).sum() / n, [df, scale])
    # E[x^2] = scale^2 df / (df - 2)
    _close(g_df.numpy(), [-2 * 4.0 / (6.0 - 2) ** 2], rtol=0.1)
    _close(g_scale.numpy(), [2 * 2.0 * 6.0 / 4.0], rtol=0.05)


def test_distributions_on_a_cuda_device(standin_cuda):
    # parameters on the GPU give draws, densities and pathwise gradients there (the host samplers move their
    # numbers to the parameters' device)
    concentration = agrad.tensor([0.5, 2.0], device="cuda", requires_grad=True)
    rate = agrad.tensor([1.0, 3.0], device="cuda")
    for d in (D.Gamma(concentration, rate), D.Dirichlet(concentration), D.Normal(concentration, rate),
              D.Poisson(rate), D.Categorical(logits=concentration)):
        x = d.sample((3,))
        assert x.device.type == "cuda" and d.log_prob(x).device.type == "cuda"
        if d.has_rsample:
            (g,) = agrad.autograd.grad(d.rsample((3,)).sum(), [concentration])
            assert g.device.type == "cuda" and bool(g.isfinite().all())
