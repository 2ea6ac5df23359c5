"""torch.distributions scenarios written once for any torch-like library: run with `torch` by
tests/reference/make_distributions_reference.py (which writes distributions_fixtures.json) and with
`agrad` by tests/engine/test_distributions.py, which compares the two.

Each case builds a distribution from float64 leaves; each method's result is recorded with the
gradient of sum(go * result) to every leaf (go[k] = (-1)**k * (1 + (k % 3) / 4), the convention of
tests/reference/reference_common.py). Draws are never compared: the two libraries' generators differ.
"""
from __future__ import annotations

import math
import warnings

METHODS = ("log_prob", "cdf", "icdf", "entropy", "mean", "mode", "variance", "stddev", "perplexity",
           "enumerate_support", "enumerate_support_unexpanded", "expand_log_prob")


def _leaf(lib, values):
    return lib.tensor(values, dtype=lib.float64, requires_grad=True)


def _value(lib, values, dtype=None):
    return lib.tensor(values, dtype=dtype or lib.float64)


# name -> build(lib, leaf): (distribution, the value log_prob and cdf take, the probabilities icdf takes)
def _cases():
    def normal(lib, L):
        return lib.distributions.Normal(L([0.5, -1.0, 2.0]), L([1.0, 0.5, 2.5])), [0.3, -0.2, 4.0], [0.1, 0.5, 0.97]

    def normal_scalar(lib, L):
        return lib.distributions.Normal(0.0, L(2.0)), [[0.5], [-1.0]], [0.25]

    def bernoulli_probs(lib, L):
        return lib.distributions.Bernoulli(probs=L([0.2, 0.7, 0.5])), [1.0, 0.0, 1.0], None

    def bernoulli_logits(lib, L):
        return lib.distributions.Bernoulli(logits=L([-1.5, 0.3, 2.0])), [0.0, 1.0, 1.0], None

    def categorical_probs(lib, L):
        return lib.distributions.Categorical(probs=L([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]])), [2.0, 0.0], None

    def categorical_logits(lib, L):
        return lib.distributions.Categorical(logits=L([[0.2, -1.3, 0.5, 1.0]])), [[1.0], [3.0]], None

    def one_hot(lib, L):
        d = lib.distributions.OneHotCategorical(probs=L([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]]))
        return d, [[0.0, 0.0, 1.0], [0.0, 1.0, 0.0]], None

    def one_hot_logits(lib, L):
        return lib.distributions.OneHotCategorical(logits=L([0.5, -0.5, 1.5])), [0.0, 1.0, 0.0], None

    def uniform(lib, L):
        return lib.distributions.Uniform(L([0.0, -2.0, 0.5]), L([1.0, 3.0, 4.0])), [0.25, 1.5, 3.9], [0.3, 0.8, 0.01]

    def exponential(lib, L):
        return lib.distributions.Exponential(L([0.5, 2.0, 1.3])), [1.0, 0.25, 3.0], [0.2, 0.6, 0.99]

    def laplace(lib, L):
        return lib.distributions.Laplace(L([0.0, 1.0, -2.0]), L([1.0, 0.3, 2.0])), [-0.7, 1.4, -2.0], [0.2, 0.7, 0.5]

    def gamma(lib, L):
        return lib.distributions.Gamma(L([0.5, 2.0, 7.5]), L([1.0, 0.5, 3.0])), [0.3, 5.0, 2.0], None

    def chi2(lib, L):
        return lib.distributions.Chi2(L([1.5, 4.0])), [0.7, 3.0], None

    def beta(lib, L):
        return lib.distributions.Beta(L([0.5, 2.0, 3.0]), L([1.5, 2.0, 0.8])), [0.3, 0.5, 0.9], None

    def dirichlet(lib, L):
        d = lib.distributions.Dirichlet(L([[0.5, 2.0, 3.0], [1.5, 1.2, 4.0]]))
        return d, [[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]], None

    def poisson(lib, L):
        return lib.distributions.Poisson(L([0.5, 3.0, 10.0])), [0.0, 2.0, 12.0], None

    def binomial(lib, L):
        return lib.distributions.Binomial(8, L([0.2, 0.6, 0.9])), [1.0, 5.0, 8.0], None

    def binomial_logits(lib, L):
        return lib.distributions.Binomial(_value(lib, [3.0, 5.0]), logits=L([-0.5, 1.0])), [2.0, 5.0], None

    def geometric(lib, L):
        return lib.distributions.Geometric(L([0.2, 0.6])), [3.0, 0.0], None

    def geometric_logits(lib, L):
        return lib.distributions.Geometric(logits=L([-1.0, 0.4])), [1.0, 4.0], None

    def mvn_scale_tril(lib, L):
        d = lib.distributions.MultivariateNormal(L([0.5, -1.0, 0.0]),
                                                 scale_tril=L([[1.5, 0.0, 0.0], [0.3, 0.8, 0.0], [-0.2, 0.4, 1.1]]))
        return d, [[0.1, 0.2, 0.3], [1.0, -1.0, 0.5]], None

    def mvn_covariance(lib, L):
        d = lib.distributions.MultivariateNormal(L([0.5, -1.0]), covariance_matrix=L([[2.0, 0.3], [0.3, 0.5]]))
        return d, [0.0, -0.5], None

    def mvn_precision(lib, L):
        d = lib.distributions.MultivariateNormal(L([[0.5, -1.0], [0.0, 0.0]]),
                                                 precision_matrix=L([[2.0, -0.4], [-0.4, 1.0]]))
        return d, [0.0, -0.5], None

    def independent(lib, L):
        base = lib.distributions.Normal(L([[0.5, -1.0], [0.0, 1.0]]), L([[1.0, 0.5], [2.0, 0.7]]))
        return lib.distributions.Independent(base, 1), [[0.3, -0.2], [1.0, 1.5]], None

    def log_normal(lib, L):
        return lib.distributions.LogNormal(L([0.0, 0.5]), L([1.0, 0.25])), [0.7, 2.0], [0.3, 0.6]

    def transformed_affine_sigmoid(lib, L):
        D = lib.distributions
        base = D.Normal(L([0.0, 0.5]), L([1.0, 2.0]))
        d = D.TransformedDistribution(base, [D.AffineTransform(L([0.3, -0.2]), L([2.0, 0.5])), D.SigmoidTransform()])
        return d, [0.6, 0.2], [0.3, 0.9]

    def transformed_tanh(lib, L):
        D = lib.distributions
        d = D.TransformedDistribution(D.Normal(L([0.2]), L([0.8])), D.TanhTransform())
        return d, [0.5], [0.4]

    def transformed_exp_event(lib, L):
        D = lib.distributions
        base = D.Independent(D.Normal(L([0.0, 1.0]), L([1.0, 0.5])), 1)
        return D.TransformedDistribution(base, [D.ExpTransform()]), [0.7, 2.0], None

    def cauchy(lib, L):
        return lib.distributions.Cauchy(L([0.0, 1.0]), L([1.0, 0.4])), [0.5, -3.0], [0.3, 0.95]

    def student_t(lib, L):
        return lib.distributions.StudentT(L([3.0, 1.5]), L([0.0, 1.0]), L([1.0, 2.0])), [0.5, -1.0], None

    def gumbel(lib, L):
        return lib.distributions.Gumbel(L([0.0, 1.0, -0.5]), L([1.0, 2.0, 0.6])), [0.5, -1.0, 0.0], [0.3, 0.8, 0.5]

    def relaxed_bernoulli(lib, L):
        return lib.distributions.RelaxedBernoulli(L(0.7), probs=L([0.2, 0.8])), [0.3, 0.9], None

    def relaxed_one_hot(lib, L):
        d = lib.distributions.RelaxedOneHotCategorical(L(0.5), logits=L([0.5, -0.5, 1.0]))
        return d, [0.2, 0.3, 0.5], None

    def mixture(lib, L):
        D = lib.distributions
        mix = D.Categorical(logits=L([0.3, -0.2, 1.0]))
        comp = D.Normal(L([-1.0, 0.0, 2.0]), L([0.5, 1.0, 1.5]))
        return D.MixtureSameFamily(mix, comp), [[0.5], [2.5]], None

    def mixture_mvn(lib, L):
        D = lib.distributions
        mix = D.Categorical(probs=L([0.4, 0.6]))
        comp = D.Independent(D.Normal(L([[0.0, 1.0], [1.0, -1.0]]), L([[1.0, 0.5], [0.7, 2.0]])), 1)
        return D.MixtureSameFamily(mix, comp), [0.5, 0.0], None

    def continuous_bernoulli(lib, L):
        d = lib.distributions.ContinuousBernoulli(probs=L([0.2, 0.5, 0.8]))
        return d, [0.3, 0.6, 0.9], [0.3, 0.5, 0.9]

    def continuous_bernoulli_logits(lib, L):
        return lib.distributions.ContinuousBernoulli(logits=L([-1.0, 2.0])), [0.1, 0.7], [0.4, 0.8]

    def fisher_snedecor(lib, L):
        return lib.distributions.FisherSnedecor(L([3.0, 6.0]), L([5.0, 10.0])), [0.5, 2.0], None

    def generalized_pareto(lib, L):
        d = lib.distributions.GeneralizedPareto(L([0.0, 1.0]), L([1.0, 2.0]), L([0.2, -0.1]))
        return d, [0.5, 3.0], [0.3, 0.7]

    def generalized_pareto_float32(lib, L):
        # NOTE: in float64 PyTorch's log_prob and cdf fail (isclose with a float32 zero); in float32 they run
        d = lib.distributions.GeneralizedPareto(L([0.0, 1.0]).float(), L([1.0, 2.0]).float(), L([0.2, 0.0]).float())
        return d, [0.5, 3.0], [0.3, 0.7]

    def half_cauchy(lib, L):
        return lib.distributions.HalfCauchy(L([1.0, 2.0])), [0.5, 3.0], [0.3, 0.9]

    def half_normal(lib, L):
        return lib.distributions.HalfNormal(L([1.0, 0.5, 2.0])), [0.3, 1.2, 0.1], [0.2, 0.5, 0.9]

    def inverse_gamma(lib, L):
        return lib.distributions.InverseGamma(L([2.5, 4.0]), L([1.0, 2.0])), [0.5, 1.0], None

    def kumaraswamy(lib, L):
        return lib.distributions.Kumaraswamy(L([0.5, 2.0]), L([1.5, 3.0])), [0.3, 0.7], None

    def lkj_cholesky(lib, L):
        d = lib.distributions.LKJCholesky(3, L(1.5))
        return d, [[1.0, 0.0, 0.0], [0.6, 0.8, 0.0], [0.0, 0.6, 0.8]], None

    def logistic_normal(lib, L):
        return lib.distributions.LogisticNormal(L([0.0, 0.5]), L([1.0, 0.5])), [0.2, 0.3, 0.5], None

    def lowrank_mvn(lib, L):
        d = lib.distributions.LowRankMultivariateNormal(L([0.5, -1.0]), L([[1.0], [0.5]]), L([0.5, 1.0]))
        return d, [[0.3, -0.2], [1.0, 0.0]], None

    def multinomial(lib, L):
        return lib.distributions.Multinomial(5, probs=L([0.2, 0.3, 0.5])), [1.0, 1.0, 3.0], None

    def multinomial_logits(lib, L):
        return lib.distributions.Multinomial(4, logits=L([[0.2, -0.3], [1.0, 0.0]])), [[1.0, 3.0], [4.0, 0.0]], None

    def negative_binomial(lib, L):
        return lib.distributions.NegativeBinomial(L([3.0, 5.0]), probs=L([0.4, 0.7])), [2.0, 4.0], None

    def negative_binomial_logits(lib, L):
        return lib.distributions.NegativeBinomial(L([2.0]), logits=L([0.3])), [[0.0], [6.0]], None

    def pareto(lib, L):
        return lib.distributions.Pareto(L([1.0, 2.0, 0.5]), L([2.5, 3.0, 4.0])), [1.5, 4.0, 0.6], [0.3, 0.7, 0.5]

    def von_mises(lib, L):
        return lib.distributions.VonMises(L([0.0, 1.0, -2.0]), L([0.5, 4.0, 20.0])), [0.3, -2.0, -2.1], None

    def weibull(lib, L):
        return lib.distributions.Weibull(L([1.0, 2.0]), L([1.5, 3.0])), [0.5, 2.0], [0.3, 0.6]

    def wishart(lib, L):
        d = lib.distributions.Wishart(df=L(4.0), covariance_matrix=L([[2.0, 0.3], [0.3, 1.0]]))
        return d, [[1.0, 0.2], [0.2, 0.5]], None

    def wishart_scale_tril(lib, L):
        d = lib.distributions.Wishart(df=L([3.5, 5.0]), scale_tril=L([[1.0, 0.0], [0.4, 0.7]]))
        return d, [[1.0, 0.2], [0.2, 0.5]], None

    return {k: v for k, v in locals().items() if callable(v)}


CASES = _cases()

# kl_divergence(p, q) for pairs torch registers (each built from its own leaves)
KL_PAIRS = [
    ("normal", "normal"), ("bernoulli_probs", "bernoulli_logits"), ("categorical_probs", "categorical_probs"),
    ("one_hot", "one_hot"), ("uniform", "uniform"), ("exponential", "exponential"), ("laplace", "laplace"),
    ("gamma", "gamma"), ("beta", "beta"), ("dirichlet", "dirichlet"), ("poisson", "poisson"),
    ("binomial", "binomial"), ("geometric", "geometric"), ("mvn_scale_tril", "mvn_scale_tril"),
    ("mvn_covariance", "mvn_precision"), ("independent", "independent"), ("log_normal", "log_normal"),
    ("cauchy", "cauchy"), ("uniform", "normal"), ("uniform", "gumbel"), ("uniform", "exponential"),
    ("uniform", "gamma"), ("uniform", "beta"), ("exponential", "gamma"), ("exponential", "normal"),
    ("exponential", "gumbel"), ("gamma", "normal"), ("gamma", "exponential"), ("gamma", "gumbel"),
    ("gumbel", "gumbel"), ("gumbel", "normal"), ("laplace", "normal"), ("normal", "gumbel"), ("normal", "laplace"),
    ("beta", "exponential"), ("beta", "gamma"), ("beta", "normal"), ("beta", "uniform"), ("normal", "uniform"),
    ("bernoulli_probs", "poisson"), ("exponential", "uniform"), ("chi2", "chi2"),
    ("continuous_bernoulli", "continuous_bernoulli"), ("half_normal", "half_normal"), ("pareto", "pareto"),
    ("lowrank_mvn", "lowrank_mvn"), ("mvn_covariance", "lowrank_mvn"), ("lowrank_mvn", "mvn_covariance"),
    ("beta", "continuous_bernoulli"), ("continuous_bernoulli", "normal"), ("continuous_bernoulli", "exponential"),
    ("continuous_bernoulli", "uniform"), ("uniform", "continuous_bernoulli"), ("pareto", "exponential"),
    ("pareto", "gamma"), ("pareto", "normal"), ("pareto", "uniform"), ("uniform", "pareto"), ("beta", "pareto"),
    ("exponential", "pareto"), ("normal", "pareto"),
    # every other pair torch 2.13 registers, on the first cases of its two types
    ("continuous_bernoulli", "pareto"), ("exponential", "beta"), ("exponential", "continuous_bernoulli"),
    ("gamma", "beta"), ("gamma", "continuous_bernoulli"), ("gamma", "pareto"), ("gamma", "uniform"),
    ("gumbel", "beta"), ("gumbel", "continuous_bernoulli"), ("gumbel", "exponential"), ("gumbel", "gamma"),
    ("gumbel", "pareto"), ("gumbel", "uniform"), ("laplace", "beta"), ("laplace", "continuous_bernoulli"),
    ("laplace", "exponential"), ("laplace", "gamma"), ("laplace", "pareto"), ("laplace", "uniform"),
    ("normal", "beta"), ("normal", "continuous_bernoulli"), ("normal", "exponential"), ("normal", "gamma"),
    ("pareto", "beta"), ("pareto", "continuous_bernoulli"), ("poisson", "bernoulli_probs"), ("poisson", "binomial"),
    ("transformed_affine_sigmoid", "transformed_affine_sigmoid"),
    # (ExponentialFamily, ExponentialFamily): the Bregman divergence of the log-normalizer, by autograd
    ("wishart", "wishart"), ("multinomial", "multinomial"),
]


# name -> (build(lib, leaf) -> transform, x); each transform's y = t(x), t.inv(y), log_abs_det_jacobian(x, y)
def _transforms():
    def exp(lib, L):
        return lib.distributions.ExpTransform(), [-1.0, 0.5, 2.0]

    def affine(lib, L):
        return lib.distributions.AffineTransform(L([0.5, -1.0]), L([2.0, -0.5])), [[0.3, 1.2], [-2.0, 0.0]]

    def affine_event(lib, L):
        return lib.distributions.AffineTransform(L(0.5), L([2.0, 3.0]), event_dim=1), [[0.3, 1.2], [-2.0, 0.0]]

    def sigmoid(lib, L):
        return lib.distributions.SigmoidTransform(), [-3.0, 0.0, 4.0]

    def tanh(lib, L):
        return lib.distributions.TanhTransform(), [-1.5, 0.2, 0.9]

    def power(lib, L):
        return lib.distributions.PowerTransform(L([2.0, 0.5])), [1.5, 4.0]

    def softplus(lib, L):
        return lib.distributions.SoftplusTransform(), [-2.0, 0.5, 3.0]

    def compose(lib, L):
        D = lib.distributions
        return D.ComposeTransform([D.AffineTransform(L(1.0), L(0.5)), D.ExpTransform()]), [0.2, -1.0]

    def inverse_sigmoid(lib, L):
        return lib.distributions.SigmoidTransform().inv, [0.2, 0.9]

    def stick_breaking(lib, L):
        return lib.distributions.StickBreakingTransform(), [[0.5, -1.0, 2.0]]

    def independent_exp(lib, L):
        return lib.distributions.IndependentTransform(lib.distributions.ExpTransform(), 1), [[0.5, -1.0]]

    def abs_(lib, L):
        return lib.distributions.AbsTransform(), [-1.5, 0.5]

    def softmax(lib, L):
        return lib.distributions.SoftmaxTransform(), [[0.5, -1.0, 2.0]]

    def reshape(lib, L):
        return lib.distributions.ReshapeTransform((2, 3), (3, 2)), [[[0.5, -1.0, 2.0], [1.0, 0.0, -0.5]]]

    def corr_cholesky(lib, L):
        return lib.distributions.CorrCholeskyTransform(), [[0.5, -1.0, 2.0]]

    def lower_cholesky(lib, L):
        return lib.distributions.LowerCholeskyTransform(), [[0.5, 0.0], [-1.0, 0.3]]

    def positive_definite(lib, L):
        return lib.distributions.PositiveDefiniteTransform(), [[0.5, 0.0], [-1.0, 0.3]]

    def cat(lib, L):
        D = lib.distributions
        return D.CatTransform([D.ExpTransform(), D.AffineTransform(L(1.0), L(2.0))], dim=0, lengths=[1, 2]), \
            [[0.5, -1.0], [1.0, 2.0], [0.0, -0.5]]

    def stack(lib, L):
        D = lib.distributions
        return D.StackTransform([D.ExpTransform(), D.SigmoidTransform()], dim=1), [[0.5, -1.0], [1.0, 2.0]]

    def cumulative_distribution(lib, L):
        D = lib.distributions
        return D.CumulativeDistributionTransform(D.Normal(L([0.5, -1.0]), L([1.0, 2.0]))), [0.3, 0.0]

    return {k: v for k, v in locals().items() if callable(v)}


TRANSFORMS = _transforms()


def sampler_grid():
    """Points for ATen's reparameterized gradients (_standard_gamma_grad(alpha, x) and _dirichlet_grad(x,
    alpha, total)), covering each of their regimes: (alpha, x) and (x, alpha, total) as flat lists."""
    gamma = [(a, x) for a in (0.05, 0.3, 1.0, 2.5, 7.9, 8.5, 30.0, 200.0)
             for x in (0.01, 0.2, 0.79, 0.81, 1.5, 4.0, 9.0, 28.0, 31.0, 190.0, 205.0)]
    dirichlet = [(x, a, a + b) for x in (0.001, 0.02, 0.1, 0.3, 0.5, 0.62, 0.9, 0.99, 0.999)
                 for a in (0.05, 0.3, 1.0, 2.5, 7.0, 30.0) for b in (0.2, 1.0, 7.5, 40.0)]
    return [list(c) for c in zip(*gamma)], [list(c) for c in zip(*dirichlet)]


def go(n):
    return [(-1) ** k * (1 + (k % 3) / 4) for k in range(n)]


def _flat(t):
    return t.detach().reshape(-1).tolist()


def _message(exc):
    # the builtin class: agrad's own errors subclass PyTorch's (DtypeError is a RuntimeError)
    kind = next(c.__name__ for c in type(exc).__mro__ if c.__module__ == "builtins")
    return [kind, str(exc).replace("torch", "LIB").replace("agrad", "LIB")]


def _record(lib, out, leaves):
    """The result's shape, dtype, values and the gradients of sum(go * result) to the leaves."""
    rec = {"shape": list(out.shape), "dtype": str(out.dtype).split(".")[-1], "values": _flat(out)}
    if out.requires_grad:
        weights = lib.tensor(go(out.numel()), dtype=out.dtype).reshape(out.shape)
        try:
            grads = lib.autograd.grad((out * weights).sum(), leaves, allow_unused=True, retain_graph=True)
        except (NotImplementedError, RuntimeError) as exc:   # igamma has no derivative in its first argument
            rec["grads"] = {"raised": _message(exc)}
        else:
            rec["grads"] = [None if g is None else _flat(g) for g in grads]
    return rec


def _attempt(lib, fn, leaves):
    """_record of fn(), or the error it raises."""
    try:
        out = fn()
    except NotImplementedError:
        return "NotImplementedError"
    except Exception as exc:   # noqa: BLE001 — the error is the fact recorded
        return {"raised": _message(exc)}
    return _record(lib, out, leaves)


def _method(lib, d, method, value, q):
    if method in ("log_prob", "cdf"):
        return getattr(d, method)(value)
    if method == "icdf":
        if q is None:
            return None
        return d.icdf(_value(lib, q, lib.float32 if d.mean.dtype == lib.float32 else None))
    if method in ("entropy", "perplexity"):
        return getattr(d, method)()
    if method == "enumerate_support":
        return d.enumerate_support() if d.has_enumerate_support else None
    if method == "enumerate_support_unexpanded":
        return d.enumerate_support(expand=False) if d.has_enumerate_support else None
    if method == "expand_log_prob":
        e = d.expand((2,) + tuple(d.batch_shape))
        return e.log_prob(value)
    return getattr(d, method)


def _moved(lib, values):
    """Other valid parameters of the same kind: a square matrix scaled by 1.1 (still lower triangular,
    symmetric, positive definite), anything else each element times 1.05, 1.08 or 1.11 (probabilities stay
    under 1 and, renormalized, change)."""
    t = lib.tensor(values, dtype=lib.float64)
    if t.dim() == 2 and t.shape[0] == t.shape[1]:
        return (t * 1.1).tolist()
    factors = lib.tensor([1.05 + 0.03 * (k % 3) for k in range(t.numel())], dtype=lib.float64)
    return (t.reshape(-1) * factors).reshape(t.shape).tolist()


def build(lib, name, perturb=None, moved=False):
    """The case's distribution, its leaves, value and icdf probabilities; `perturb` = (leaf, flat indices, h)
    adds h to those elements of one leaf before the distribution is made (finite differences); `moved`
    makes it from other parameters (_moved), so that KL(p || q) of one case with itself is not 0."""
    leaves = []

    def L(values):
        if moved:
            values = _moved(lib, values)
        if perturb is not None and perturb[0] == len(leaves):
            flat = lib.tensor(values, dtype=lib.float64).reshape(-1).tolist()
            for k in perturb[1]:
                flat[k] += perturb[2]
            values = lib.tensor(flat, dtype=lib.float64).reshape(lib.tensor(values).shape).tolist()
        t = _leaf(lib, values)
        leaves.append(t)
        return t
    d, value, q = CASES[name](lib, L)
    dtype = lib.int64 if "categorical" in name and "one_hot" not in name else lib.float64
    dtype = lib.float32 if name.endswith("float32") else dtype
    return d, leaves, _value(lib, value, dtype), q


def run_case(lib, name):
    d, leaves, value, q = build(lib, name)
    facts = {"batch_shape": list(d.batch_shape), "event_shape": list(d.event_shape),
             "has_rsample": d.has_rsample, "has_enumerate_support": d.has_enumerate_support,
             "support": repr(d.support).replace("torch", "LIB").replace("agrad", "LIB"),
             "repr": repr(d).replace("torch", "LIB").replace("agrad", "LIB"), "methods": {}}
    for method in METHODS:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out = _method(lib, d, method, value, q)
        except NotImplementedError:
            facts["methods"][method] = "NotImplementedError"
            continue
        except Exception as exc:   # noqa: BLE001 — the error is the fact recorded
            facts["methods"][method] = {"raised": _message(exc)}
            continue
        if out is not None:
            facts["methods"][method] = _record(lib, out, leaves)
    return facts


def run_kl(lib, p_name, q_name):
    p, p_leaves, _, _ = build(lib, p_name)
    q, q_leaves, _, _ = build(lib, q_name, moved=True)
    try:
        out = lib.distributions.kl_divergence(p, q)
    except Exception as exc:   # noqa: BLE001
        return {"raised": _message(exc)}
    return _record(lib, out, p_leaves + q_leaves)


def run_transform(lib, name):
    leaves = []

    def L(values):
        t = _leaf(lib, values)
        leaves.append(t)
        return t
    t, x = TRANSFORMS[name](lib, L)
    x = L(x)
    y = t(x)
    facts = {"repr": repr(t).replace("torch", "LIB").replace("agrad", "LIB"), "sign": None,
             "domain": repr(t.domain).replace("torch", "LIB").replace("agrad", "LIB"),
             "codomain": repr(t.codomain).replace("torch", "LIB").replace("agrad", "LIB"),
             "bijective": t.bijective, "y": _record(lib, y, leaves),
             "inv": _attempt(lib, lambda: t.inv(y.detach()), leaves),
             "log_abs_det_jacobian": _attempt(lib, lambda: t.log_abs_det_jacobian(x, y), leaves),
             "forward_shape": list(t.forward_shape(x.shape)), "inverse_shape": list(t.inverse_shape(y.shape))}
    try:
        facts["sign"] = float(t.sign) if not isinstance(t.sign, lib.Tensor) else _flat(t.sign)
    except NotImplementedError:
        facts["sign"] = "NotImplementedError"
    return facts


# constraint -> (build(lib), x): biject_to and transform_to of the constraint, applied to x
def _registry():
    C = "constraints"
    return {
        "real": (lambda lib: getattr(lib.distributions, C).real, [0.5, -1.0]),
        "positive": (lambda lib: getattr(lib.distributions, C).positive, [0.5, -1.0]),
        "greater_than": (lambda lib: getattr(lib.distributions, C).greater_than(1.5), [0.5, -1.0]),
        "less_than": (lambda lib: getattr(lib.distributions, C).less_than(1.5), [0.5, -1.0]),
        "unit_interval": (lambda lib: getattr(lib.distributions, C).unit_interval, [0.5, -1.0]),
        "interval": (lambda lib: getattr(lib.distributions, C).interval(-1.0, 2.0), [0.5, -1.0]),
        "simplex": (lambda lib: getattr(lib.distributions, C).simplex, [0.5, -1.0]),
        "lower_cholesky": (lambda lib: getattr(lib.distributions, C).lower_cholesky, [[0.5, 0.0], [-1.0, 0.3]]),
        "corr_cholesky": (lambda lib: getattr(lib.distributions, C).corr_cholesky, [0.5, -1.0, 2.0]),
        "positive_definite": (lambda lib: getattr(lib.distributions, C).positive_definite,
                              [[0.5, 0.0], [-1.0, 0.3]]),
        "independent": (lambda lib: getattr(lib.distributions, C).independent(
            getattr(lib.distributions, C).positive, 1), [0.5, -1.0]),
    }


REGISTRY = _registry()


def run_registry(lib, name):
    make, x = REGISTRY[name]
    facts = {}
    for registry in ("biject_to", "transform_to"):
        try:
            t = getattr(lib.distributions, registry)(make(lib))
        except NotImplementedError as exc:          # biject_to has no lower_cholesky, as PyTorch
            facts[registry] = {"raised": _message(exc)}
            continue
        leaf = _leaf(lib, x)
        y = t(leaf)
        facts[registry] = {"repr": repr(t).replace("torch", "LIB").replace("agrad", "LIB"),
                           "y": _record(lib, y, [leaf]),
                           "log_abs_det_jacobian": _attempt(lib, lambda: t.log_abs_det_jacobian(leaf, y), [leaf])}
    return facts


def run_straight_through(lib):
    """OneHotCategoricalStraightThrough.rsample: a one-hot draw whose gradient is that of the probabilities."""
    logits = _leaf(lib, [[0.5, -0.5, 1.0], [0.0, 2.0, -1.0]])
    d = lib.distributions.OneHotCategoricalStraightThrough(logits=logits)
    x = d.rsample((4,))
    facts = _record(lib, x, [logits])
    facts["values"] = [list(x.shape), bool(((x == 0) | (x == 1)).all()), bool((x.sum(-1) == 1).all())]
    return facts


# name -> a call that raises PyTorch's error for an invalid parameter or value (validate_args on)
def _errors():
    def normal_scale(lib):
        lib.distributions.Normal(_value(lib, [0.0, 1.0]), _value(lib, [1.0, -1.0]), validate_args=True)

    def normal_value_nan(lib):
        lib.distributions.Normal(0.0, 1.0, validate_args=True).log_prob(_value(lib, [math.nan]))

    def exponential_support(lib):
        lib.distributions.Exponential(_value(lib, [1.0]), validate_args=True).log_prob(_value(lib, [-1.0]))

    def bernoulli_both(lib):
        lib.distributions.Bernoulli(probs=_value(lib, [0.5]), logits=_value(lib, [0.0]))

    def bernoulli_neither(lib):
        lib.distributions.Bernoulli()

    def bernoulli_probs(lib):
        lib.distributions.Bernoulli(probs=_value(lib, [1.5]), validate_args=True)

    def bernoulli_value(lib):
        lib.distributions.Bernoulli(probs=_value(lib, [0.5]), validate_args=True).log_prob(_value(lib, [0.5]))

    def categorical_both(lib):
        lib.distributions.Categorical(probs=_value(lib, [0.5, 0.5]), logits=_value(lib, [0.0, 0.0]))

    def categorical_dim(lib):
        lib.distributions.Categorical(probs=_value(lib, 0.5))

    def categorical_simplex(lib):
        lib.distributions.Categorical(probs=_value(lib, [0.5, -0.1]), validate_args=True)

    def categorical_value(lib):
        d = lib.distributions.Categorical(probs=_value(lib, [0.5, 0.5]), validate_args=True)
        d.log_prob(lib.tensor([2]))

    def uniform_bounds(lib):
        lib.distributions.Uniform(_value(lib, [1.0]), _value(lib, [0.0]), validate_args=True)

    def uniform_value(lib):
        lib.distributions.Uniform(0.0, 1.0, validate_args=True).log_prob(_value(lib, [1.5]))

    def gamma_concentration(lib):
        lib.distributions.Gamma(_value(lib, [0.0]), _value(lib, [1.0]), validate_args=True)

    def beta_value(lib):
        lib.distributions.Beta(_value(lib, [2.0]), _value(lib, [2.0]), validate_args=True).log_prob(
            _value(lib, [1.5]))

    def dirichlet_dim(lib):
        lib.distributions.Dirichlet(_value(lib, 1.0))

    def poisson_value(lib):
        lib.distributions.Poisson(_value(lib, [1.0]), validate_args=True).log_prob(_value(lib, [1.5]))

    def binomial_count(lib):
        lib.distributions.Binomial(_value(lib, [-1.0]), _value(lib, [0.5]), validate_args=True)

    def mvn_none(lib):
        lib.distributions.MultivariateNormal(_value(lib, [0.0, 0.0]))

    def mvn_two(lib):
        eye = _value(lib, [[1.0, 0.0], [0.0, 1.0]])
        lib.distributions.MultivariateNormal(_value(lib, [0.0, 0.0]), covariance_matrix=eye, precision_matrix=eye)

    def mvn_loc_dim(lib):
        lib.distributions.MultivariateNormal(_value(lib, 0.0), scale_tril=_value(lib, [[1.0]]))

    def mvn_not_pd(lib):
        cov = _value(lib, [[1.0, 2.0], [2.0, 1.0]])
        lib.distributions.MultivariateNormal(_value(lib, [0.0, 0.0]), covariance_matrix=cov, validate_args=True)

    def value_shape(lib):
        lib.distributions.Normal(_value(lib, [0.0, 1.0]), 1.0, validate_args=True).log_prob(_value(lib, [0.0] * 3))

    def value_not_tensor(lib):
        lib.distributions.Normal(0.0, 1.0, validate_args=True).log_prob(0.5)

    def event_shape(lib):
        d = lib.distributions.Dirichlet(_value(lib, [1.0, 1.0]), validate_args=True)
        d.log_prob(_value(lib, [0.2, 0.3, 0.5]))

    def independent_ndims(lib):
        lib.distributions.Independent(lib.distributions.Normal(_value(lib, [0.0]), 1.0), 2)

    def mixture_batch(lib):
        D = lib.distributions
        D.MixtureSameFamily(D.Categorical(probs=_value(lib, [[0.5, 0.5]] * 2)),
                            D.Normal(_value(lib, [[0.0, 1.0]] * 3), 1.0))

    def mixture_not_categorical(lib):
        D = lib.distributions
        D.MixtureSameFamily(D.Normal(0.0, 1.0), D.Normal(_value(lib, [0.0, 1.0]), 1.0))

    def kl_not_implemented(lib):
        D = lib.distributions
        D.kl_divergence(D.Poisson(_value(lib, [1.0])), D.Normal(0.0, 1.0))

    def transformed_event(lib):
        D = lib.distributions
        D.TransformedDistribution(D.Normal(0.0, 1.0), [D.SoftmaxTransform()])

    def poisson_sample_negative(lib):
        lib.distributions.Poisson(_value(lib, [1.0, -1.0]), validate_args=False).sample()

    def categorical_sample_zero(lib):
        lib.distributions.Categorical(probs=_value(lib, [[0.0, 0.0]]), validate_args=False).sample()

    def categorical_sample_negative(lib):
        lib.distributions.Categorical(probs=_value(lib, [[-0.5, 1.5]]), validate_args=False).sample()

    def categorical_sample_n_negative(lib):
        lib.distributions.Categorical(probs=_value(lib, [[-0.5, 1.5]]), validate_args=False).sample((3,))

    def categorical_sample_n_inf(lib):
        lib.distributions.Categorical(logits=_value(lib, [[math.inf, 0.0]]), validate_args=False).sample((3,))

    def one_hot_sample_zero(lib):
        lib.distributions.OneHotCategorical(logits=_value(lib, [-math.inf, -math.inf]),
                                            validate_args=False).sample((2,))

    def default_validate_bad(lib):
        lib.distributions.Distribution.set_default_validate_args(None)

    return {k: v for k, v in locals().items() if callable(v)}


ERRORS = _errors()


def run_error(lib, name):
    try:
        ERRORS[name](lib)
    except Exception as exc:   # noqa: BLE001
        return _message(exc)
    return None
