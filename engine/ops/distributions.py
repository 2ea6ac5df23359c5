"""Sampling ops (ATen's Distributions): bernoulli, normal, poisson, binomial, multinomial,
randint_like, out of place.

The draws come from agrad's global generator (creation.manual_seed), or from a generator
seeded with `seed` (what a `generator=` becomes: generator.seed_of), on the host with NumPy's
PCG64, so a seed gives the same numbers on every device (as dropout's mask). The numbers are
not PyTorch's (another bit generator); their distributions, shapes, dtypes and checks are. A
result does not depend smoothly on its parameters: PyTorch's gradient is zero
(derivatives.yaml: `self: zeros_like(grad)`, normal's `mean`/`std` likewise), and its result
still requires grad when they do (BernoulliBackward0, NormalBackward1-3, PoissonBackward0).
bernoulli with a float `p` and binomial have no derivative in PyTorch: their Node,
NotImplemented, raises. multinomial's indices never require grad.
"""
from __future__ import annotations

import math

import numpy as np

from .. import creation, dtypes
from .._allocation import check_allocation
from ..backends.meta import MetaArray
from ..generator import Generator, check_seed, seeded_rng
from ..messages import require_floating, scalar_type_name
from ..shapes import broadcast_shapes, shape_of
from .registry import defop
from .samples import SampleInput, make_arg


def _check(self, p):
    require_floating("bernoulli", self.dtype)
    if p is not None and not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={float(p):g}")


def _bernoulli_meta(self, p, seed):
    _check(self, p)
    check_seed("bernoulli", seed)
    return MetaArray(self.shape, self.dtype)


def _bernoulli_kernel(xp, self, p, seed):
    _check(self, p)
    check_allocation(self.shape, self.dtype)
    # NOTE: drawn on the host so a seed gives the same numbers on every device
    draws = xp.asarray(seeded_rng("bernoulli", seed).random(self.shape))
    return (draws < (self if p is None else p)).astype(self.dtype)


def _bernoulli_grad(grad, p):
    if p is not None:
        raise RuntimeError("derivative for aten::bernoulli is not implemented")
    return creation.zeros_like(grad)


def _samples(op):
    def probabilities(shape, k):
        # 0 and 1 only: draws that PyTorch's generator and agrad's agree on
        return make_arg(shape, key=(op, k), low=0.0, high=2.0, requires_grad=False).floor_().requires_grad_()
    return [SampleInput("(3,4) probabilities in {0,1}", probabilities((3, 4), 0), seed=0),
            SampleInput("0-d", probabilities((), 1), seed=1),
            SampleInput("p=1", make_arg((2, 3), key=(op, 2), low=0.0, high=1.0, requires_grad=False), 1.0, seed=2),
            SampleInput("p=0", make_arg((4,), key=(op, 3), low=0.0, high=1.0, requires_grad=False), 0.0, seed=3)]


bernoulli = defop(
    "bernoulli(Tensor self, float? p=None, *, int? seed=None) -> Tensor",
    kernel=_bernoulli_kernel, meta=_bernoulli_meta,
    grads={"self": _bernoulli_grad},
    # NOTE: PyTorch's bernoulli.p has no derivative (derivatives.yaml: not_implemented): a Node named
    # NotImplemented that raises when backward reaches it
    backward_name=("BernoulliBackward0", "NotImplemented"),
    overload=lambda self, p=None, seed=None: 0 if p is None else 1,
    samples=_samples, gradgrad=False,
    torch="lambda self, p=None, seed=None: torch.bernoulli(self) if p is None else torch.bernoulli(self, p)",
    doc="1 with probability `self` (or `p`, for every element), else 0, in self's dtype; drawn from `seed`, "
        "or agrad's global generator when seed is None. Its gradient is zero, as PyTorch's.")


def _host(a) -> np.ndarray:
    """An array's values on the host, to sample from (NumPy's generator takes host arrays)."""
    if isinstance(a, np.ndarray):
        return a
    return a.get() if hasattr(a, "get") else np.asarray(a)


# ---- normal: PyTorch's overloads Tensor_float, float_Tensor, Tensor_Tensor (float_float, which makes a tensor
# of a size, is the factory creation.normal; agrad.normal picks) ----

def _normal_dtype(mean, std):
    """The result's dtype: mean's where it is a tensor, else std's (PyTorch's empty_like of either)."""
    dt = (mean if hasattr(mean, "dtype") else std).dtype
    require_floating("normal_kernel_cpu", dt)
    if not hasattr(std, "dtype") and not std >= 0:      # (NaN too, as ATen's check)
        raise RuntimeError(f"normal expects std >= 0.0, but found std {float(std):g}")
    return dt


def _normal_meta(mean, std, seed):
    check_seed("normal", seed)
    return MetaArray(broadcast_shapes(shape_of(mean), shape_of(std)), _normal_dtype(mean, std))


def _normal_kernel(xp, mean, std, seed):
    dt = _normal_dtype(mean, std)
    shape = broadcast_shapes(shape_of(mean), shape_of(std))
    # (ATen's std.min().ge(0): a NaN fails it too)
    if hasattr(std, "dtype") and not bool((std >= 0).all()):
        raise RuntimeError("normal expects all elements of std >= 0.0")
    check_allocation(shape, dt)
    draws = xp.asarray(seeded_rng("normal", seed).standard_normal(shape))
    return (mean + std * draws).astype(dt)


def _zero_grad(grad):
    return creation.zeros_like(grad)


def _normal_samples(op):
    # std 0: the draws do not show, so the values are PyTorch's; no input requires grad (a draw moves with mean,
    # which finite differences would see, where PyTorch's gradient is zero by definition)
    def arg(shape, k):
        return make_arg(shape, key=(op, k), requires_grad=False)
    return [SampleInput("Tensor_Tensor std 0", arg((3, 4), 0), creation.zeros(3, 4, dtype=dtypes.float64), seed=0),
            SampleInput("Tensor_float std 0", arg((2, 3), 1), 0.0, seed=1),
            SampleInput("float_Tensor broadcast", 1.5, creation.zeros(2, 1, dtype=dtypes.float64), seed=2),
            SampleInput("0-d mean", arg((), 2), 0.0, seed=3)]


normal = defop(
    "normal(Tensor mean, Tensor std=1, *, int? seed=None) -> Tensor",
    kernel=_normal_kernel, meta=_normal_meta, wraps_numbers=True,
    grads={"mean": _zero_grad, "std": _zero_grad},
    backward_name=("NormalBackward1", "NormalBackward2", "NormalBackward3"),
    overload=lambda mean, std=1, seed=None: (0 if not hasattr(std, "shape") else 1 if not hasattr(mean, "shape")
                                             else 2),
    samples=_normal_samples, gradgrad=False,
    torch="lambda mean, std=1, seed=None: torch.normal(mean, std)",
    doc="Normal draws of mean `mean` and standard deviation `std` (tensors or numbers, broadcast), in the "
        "dtype of the tensor mean (else std); from `seed`, or agrad's global generator when seed is None. "
        "Its gradients are zero, as PyTorch's.")


# ---- poisson ----

def _poisson_meta(self, seed):
    require_floating("poisson_cpu", self.dtype)
    check_seed("poisson", seed)
    return MetaArray(self.shape, self.dtype)


# NumPy's largest Poisson rate (beyond it PyTorch's sampler gives garbage; agrad refuses)
_POISSON_MAX_RATE = float(np.iinfo(np.int64).max) - 10 * np.sqrt(float(np.iinfo(np.int64).max))


def _poisson_kernel(xp, self, seed):
    require_floating("poisson_cpu", self.dtype)
    check_allocation(self.shape, self.dtype)
    rates = _host(self).astype(np.float64)
    if not bool((rates >= 0).all()):      # (a NaN rate fails this too, as PyTorch's check)
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    if rates.size and float(rates.max()) > _POISSON_MAX_RATE:
        raise RuntimeError(f"invalid Poisson rate, agrad samples rates up to {_POISSON_MAX_RATE:g}, got "
                           f"{float(rates.max()):g}")
    return xp.asarray(np.asarray(seeded_rng("poisson", seed).poisson(rates), dtype=self.dtype))


poisson = defop(
    "poisson(Tensor self, *, int? seed=None) -> Tensor",
    kernel=_poisson_kernel, meta=_poisson_meta,
    grads={"self": _zero_grad}, backward_name="PoissonBackward0",
    # rate 0: the draws are PyTorch's (0); not requiring grad, as finite differences would step to a negative rate
    samples=lambda op: [SampleInput("rates 0", creation.zeros(2, 3, dtype=dtypes.float64), seed=0),
                        SampleInput("0-d rate 0", creation.zeros((), dtype=dtypes.float64), seed=1)],
    gradgrad=False, torch="lambda self, seed=None: torch.poisson(self)",
    doc="Poisson draws of rate `self`, in self's dtype; from `seed`, or agrad's global generator when seed is "
        "None. Its gradient is zero, as PyTorch's.")


# ---- binomial ----

def _binomial_dtype(count, prob):
    for name, t in (("count", count), ("prob", prob)):
        if t.dtype.kind != "f":
            raise ValueError(f"binomial only supports floating-point dtypes for {name}, got: "
                             f"{scalar_type_name(t.dtype)}")
    if prob.dtype != count.dtype:
        raise RuntimeError(f"Found dtype {scalar_type_name(prob.dtype)} but expected {scalar_type_name(count.dtype)}")
    return count.dtype


def _binomial_meta(count, prob, seed):
    check_seed("binomial", seed)
    return MetaArray(broadcast_shapes(count.shape, prob.shape), _binomial_dtype(count, prob))


# NumPy draws int64 counts of trials: 2^63 and beyond (finite) would wrap negative (agrad refuses, as poisson's rates)
_BINOMIAL_MAX_COUNT = float(2 ** 63)


def _binomial_kernel(xp, count, prob, seed):
    dt = _binomial_dtype(count, prob)
    shape = broadcast_shapes(count.shape, prob.shape)
    check_allocation(shape, dt)
    n = np.broadcast_to(_host(count).astype(np.float64), shape)
    p = np.broadcast_to(_host(prob).astype(np.float64), shape)
    # ATen's sample_binomial, case by case: no trials or no chance gives 0, certainty the count itself (a
    # fractional one too); between, a draw of the count's whole trials (an infinite count stays infinite);
    # a NaN probability NaN
    zero = (n <= 0) | (p <= 0)
    certain = ~zero & (p >= 1)
    between = ~zero & ~certain & ~np.isnan(p)
    drawn = between & np.isfinite(n)
    if bool((n[drawn] >= _BINOMIAL_MAX_COUNT).any()):
        raise RuntimeError(f"invalid binomial count, agrad samples counts below {_BINOMIAL_MAX_COUNT:g}, got "
                           f"{float(n[drawn].max()):g}")
    trials = np.floor(np.where(drawn, n, 0)).astype(np.int64)
    draws = seeded_rng("binomial", seed).binomial(trials, np.where(drawn, p, 0)).astype(np.float64)
    values = np.where(zero, 0.0, np.where(certain | (between & ~drawn), n, np.where(drawn, draws, np.nan)))
    return xp.asarray(values.astype(dt))


def _binomial_grad(grad):
    raise RuntimeError("derivative for aten::binomial is not implemented")


binomial = defop(
    "binomial(Tensor count, Tensor prob, *, int? seed=None) -> Tensor",
    kernel=_binomial_kernel, meta=_binomial_meta,
    grads={"count": _binomial_grad, "prob": _binomial_grad}, backward_name="NotImplemented",
    samples=lambda op: [SampleInput("prob 0 and 1", creation.tensor([[10., 4.], [7., 0.]], dtype=dtypes.float64),
                                    creation.tensor([[0., 1.], [1., 0.]], dtype=dtypes.float64), seed=0),
                        SampleInput("broadcast prob 1", creation.tensor([3., 5., 2.], dtype=dtypes.float64),
                                    creation.tensor([1.], dtype=dtypes.float64), seed=1)],
    gradgrad=False, torch="lambda count, prob, seed=None: torch.binomial(count, prob)",
    doc="Binomial draws of `count` trials of probability `prob` (broadcast), in count's dtype; from `seed`, "
        "or agrad's global generator when seed is None. It has no derivative, as in PyTorch.")


# ---- multinomial ----

def _multinomial_shape(self, num_samples, replacement):
    if not 1 <= len(self.shape) <= 2:
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if self.dtype.kind != "f":
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{scalar_type_name(self.dtype)}")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    categories = self.shape[-1]
    if not replacement and num_samples > categories:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    if categories > 2 ** 24:        # PyTorch indexes categories in float32
        raise RuntimeError("number of categories cannot exceed 2^24")
    return (num_samples,) if len(self.shape) == 1 else (self.shape[0], num_samples)


def _multinomial_meta(self, num_samples, replacement, seed):
    check_seed("multinomial", seed)
    return MetaArray(_multinomial_shape(self, num_samples, replacement), np.dtype(np.int64))


def _multinomial_kernel(xp, self, num_samples, replacement, seed):
    shape = _multinomial_shape(self, num_samples, replacement)
    check_allocation(shape, np.int64)
    if not math.prod(shape):
        return xp.zeros(shape, dtype=np.int64)
    probs = _host(self).astype(np.float64).reshape(-1, self.shape[-1])
    rng = seeded_rng("multinomial", seed)
    if not replacement or num_samples == 1:
        if not (bool((probs < np.inf).all()) and bool((probs >= 0).all())):      # (NaN fails both)
            raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
        if bool((probs.sum(axis=1) == 0).any()):
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        # PyTorch's: the Gumbel-max trick, exponentiated: the num_samples largest p / q with q ~ Exp(1)
        keys = probs / rng.standard_exponential(probs.shape)
        picked = np.argsort(-keys, axis=1, kind="stable")[:, :num_samples]
    else:
        if not bool((probs >= 0).all()):      # (NaN fails this first, as in PyTorch's kernel)
            raise RuntimeError("invalid multinomial distribution (encountering probability entry < 0)")
        if not bool(np.isfinite(probs).all()):
            raise RuntimeError("invalid multinomial distribution (encountering probability entry = infinity or NaN)")
        totals = probs.sum(axis=1, keepdims=True)
        if bool((totals <= 0).any()):
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        cumulative = np.cumsum(probs / totals, axis=1)
        cumulative[:, -1] = 1.0         # a draw below 1 always lands in a category
        draws = rng.random((probs.shape[0], num_samples))
        picked = np.stack([np.searchsorted(c, d, side="right") for c, d in zip(cumulative, draws)])
        # a zero-probability category is never drawn, even at the edge of a rounding step
        picked = np.minimum(picked, probs.shape[1] - 1)
    return xp.asarray(picked.reshape(shape).astype(np.int64))


def _multinomial_samples(op):
    one_hot = creation.tensor([[0., 1., 0.], [0., 0., 2.]], dtype=dtypes.float64)
    return [SampleInput("one-hot rows, 1 sample", one_hot, 1, seed=0),
            SampleInput("one-hot rows, replacement", one_hot, 4, True, seed=1),
            SampleInput("1-d one-hot", creation.tensor([0., 0., 0.5, 0.], dtype=dtypes.float64), 3, True, seed=2)]


multinomial = defop(
    "multinomial(Tensor self, int num_samples, bool replacement=False, *, int? seed=None) -> Tensor",
    kernel=_multinomial_kernel, meta=_multinomial_meta,
    samples=_multinomial_samples,
    torch="lambda self, num_samples, replacement=False, seed=None: torch.multinomial(self, num_samples, replacement)",
    doc="num_samples category indices (int64) per row of `self` (1-d or 2-d, nonnegative weights, not "
        "normalised), drawn with or without replacement, with PyTorch's checks; from `seed`, or agrad's "
        "global generator when seed is None.")


# ---- randint_like: PyTorch's empty_like(input).random_(low, high) ----

def _randint_like(input, low, high, dtype, device, requires_grad, memory_format, seed):
    if high is None:                # randint_like(input, high): PyTorch's overload without low
        low, high = 0, low
    check_seed("randint_like", seed)
    generator = Generator().manual_seed(seed) if seed is not None else None
    made = creation.empty_like(input, dtype=dtype, device=device, memory_format=memory_format)
    made.random_(low, high, generator=generator)
    return made.requires_grad_() if requires_grad else made


randint_like = defop(
    "randint_like(Tensor input, int low=0, int? high=None, *, ScalarType? dtype=None, Device? device=None, "
    "bool requires_grad=False, MemoryFormat? memory_format=None, int? seed=None) -> Tensor",
    composite=_randint_like, differentiable=False,
    samples=lambda op: [SampleInput("high 1", make_arg((2, 3), key=(op, 0), requires_grad=False), 1, seed=0),
                        SampleInput("low 4 high 5 int32", make_arg((3,), key=(op, 1), requires_grad=False), 4, 5,
                                    dtype=dtypes.int32, seed=1)],
    torch="lambda input, low=0, high=None, dtype=None, seed=None: torch.randint_like(input, low, dtype=dtype) "
          "if high is None else torch.randint_like(input, low, high, dtype=dtype)",
    doc="Integers uniform in [low, high) of the input's shape (its dtype and device unless given): "
        "randint_like(input, high) or (input, low, high), as PyTorch's; from `seed`, else agrad's global "
        "generator.")
