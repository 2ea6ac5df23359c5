"""Sampling ops (ATen's Distributions): bernoulli, out of place.

The draws come from agrad's global generator (creation.manual_seed), or from a generator
seeded with `seed`, on the host with NumPy's PCG64, so a seed gives the same numbers on
every device (as dropout's mask). The result does not depend smoothly on the
probabilities: PyTorch's gradient is zero (derivatives.yaml: `self: zeros_like(grad)`),
and its result still requires grad when the probabilities do (BernoulliBackward0). The
overload with a float `p` has no derivative in PyTorch: its Node, NotImplemented, raises.
"""
from __future__ import annotations

import numpy as np

from .. import creation
from ..backends.meta import MetaArray
from ..messages import require_floating
from .registry import defop
from .samples import SampleInput, make_arg


def _check(self, p):
    require_floating("bernoulli", self.dtype)
    if p is not None and not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={float(p):g}")


def _bernoulli_meta(self, p, seed):
    _check(self, p)
    return MetaArray(self.shape, self.dtype)


def _bernoulli_kernel(xp, self, p, seed):
    _check(self, p)
    rng = np.random.default_rng(seed) if seed is not None else creation._generator
    # NOTE: drawn on the host so a seed gives the same numbers on every device
    draws = xp.asarray(rng.random(self.shape))
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
