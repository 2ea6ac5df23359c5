"""agrad.distributions: torch.distributions (torch/distributions/) on agrad's tensors, one distribution per
file as PyTorch's, so that parameters built from tensors that require grad give log_prob, entropy, cdf,
mean … (and rsample, where a draw is reparameterized) that backpropagate to them.

    d = agrad.distributions.Normal(loc, scale)
    loss = -d.log_prob(x).mean(); loss.backward()

Here: Bernoulli, Beta, Binomial, Categorical, Cauchy, Chi2, Dirichlet, Exponential, Gamma, Geometric,
Gumbel, Independent, Laplace, LogNormal, MixtureSameFamily, MultivariateNormal, Normal, OneHotCategorical
(and its StraightThrough), Poisson, RelaxedBernoulli, RelaxedOneHotCategorical, StudentT,
TransformedDistribution and Uniform; kl_divergence with PyTorch's registered pairs among them; the
elementwise, shape and simplex transforms. Draws come from agrad's global generator (agrad.manual_seed),
so they are reproducible but never PyTorch's numbers. Not here yet: the other distributions of
torch.distributions, the matrix transforms (CorrCholesky, LowerCholesky, PositiveDefinite, Cat, Stack,
CumulativeDistribution) and constraint_registry's biject_to/transform_to.
"""
from . import constraints, transforms
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical
from .cauchy import Cauchy
from .chi2 import Chi2
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .gamma import Gamma
from .geometric import Geometric
from .gumbel import Gumbel
from .independent import Independent
from .kl import _add_kl_info, kl_divergence, register_kl
from .laplace import Laplace
from .log_normal import LogNormal
from .mixture_same_family import MixtureSameFamily
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .one_hot_categorical import OneHotCategorical, OneHotCategoricalStraightThrough
from .poisson import Poisson
from .relaxed_bernoulli import RelaxedBernoulli
from .relaxed_categorical import RelaxedOneHotCategorical
from .studentT import StudentT
from .transformed_distribution import TransformedDistribution
from .transforms import *  # noqa: F403
from .uniform import Uniform

_add_kl_info()
del _add_kl_info

__all__ = [
    "Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy", "Chi2", "Dirichlet", "Distribution", "Exponential",
    "ExponentialFamily", "Gamma", "Geometric", "Gumbel", "Independent", "Laplace", "LogNormal", "MixtureSameFamily",
    "MultivariateNormal", "Normal", "OneHotCategorical", "OneHotCategoricalStraightThrough", "Poisson",
    "RelaxedBernoulli", "RelaxedOneHotCategorical", "StudentT", "TransformedDistribution", "Uniform",
    "kl_divergence", "register_kl",
]
__all__.extend(transforms.__all__)
