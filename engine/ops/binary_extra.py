"""maximum, minimum and clamp: elementwise selections whose gradient follows the
selected operand (ties split in half, bounds get the gradient where they win)."""
from __future__ import annotations

import numpy as np

from .. import dtypes
from .._tensor import Tensor
from ..backends.meta import MetaArray
from ..creation import tensor as _tensor
from ..shapes import broadcast_shapes, pointwise_meta, shape_of
from .pointwise import where
from .registry import defop
from .samples import SampleInput, binary_samples, make_arg

same_meta = pointwise_meta()


def _selection_grad(grad, self, other, loses):
    # PyTorch: at::where(self == other, grad / 2, grad).masked_fill_(loses, 0)
    return where(loses, 0.0, where(self == other, grad / 2, grad))


maximum = defop(
    "maximum(Tensor self, Tensor other) -> Tensor",
    kernel=lambda xp, self, other: xp.maximum(self, other), meta=same_meta, promote="same",
    grads={"self": lambda grad, self, other: _selection_grad(grad, self, other, self < other),
           "other": lambda grad, self, other: _selection_grad(grad, self, other, self > other)},
    samples=binary_samples(scalar_other=None), torch="torch.maximum")

minimum = defop(
    "minimum(Tensor self, Tensor other) -> Tensor",
    kernel=lambda xp, self, other: xp.minimum(self, other), meta=same_meta, promote="same",
    grads={"self": lambda grad, self, other: _selection_grad(grad, self, other, self > other),
           "other": lambda grad, self, other: _selection_grad(grad, self, other, self < other)},
    samples=binary_samples(scalar_other=None), torch="torch.minimum")


# ---- clamp ----------------------------------------------------------------------------------

def _check_bounds(min, max):  # noqa: A002 — PyTorch's argument names
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if (min is not None and max is not None) and hasattr(min, "shape") != hasattr(max, "shape"):
        # PyTorch has clamp(Tensor, Tensor?, Tensor?) and clamp(Tensor, Scalar?, Scalar?), nothing mixed
        got = ", ".join("Tensor" if hasattr(a, "shape") else type(a).__name__ for a in (min, max))
        raise TypeError(f"clamp() received an invalid combination of arguments - got (Tensor, {got}), but expected "
                        f"one of:\n * (Tensor input, Tensor min = None, Tensor max = None, *, Tensor out = None)\n"
                        f" * (Tensor input, Number min = None, Number max = None, *, Tensor out = None)")


def _clamp_kernel(xp, self, min, max):  # noqa: A002
    _check_bounds(min, max)
    out = self
    if min is not None:
        out = xp.maximum(out, min)
    if max is not None:
        out = xp.minimum(out, max)
    return out.astype(self.dtype, copy=False)


def _clamp_meta(self, min, max):  # noqa: A002
    _check_bounds(min, max)
    return MetaArray(broadcast_shapes(self.shape, shape_of(min), shape_of(max)), self.dtype)


def _clamp_self_grad(grad, self, min, max):  # noqa: A002
    # the subgradient 1 at the bounds, as PyTorch's clamp_backward
    if min is not None and max is not None:
        return where((self >= min) * (self <= max), grad, 0.0)
    if min is not None:
        return where(self >= min, grad, 0.0)
    return where(self <= max, grad, 0.0)


def _clamp_min_grad(grad, self, min, max):  # noqa: A002
    # min wins where self is below it, unless min > max (then max wins everywhere)
    if max is not None:
        return where((self < min) * (min < max), grad, 0.0)
    return where(self < min, grad, 0.0)


def _clamp_max_grad(grad, self, min, max):  # noqa: A002
    if min is not None:
        return where((self > max) + (max < min), grad, 0.0)
    return where(self > max, grad, 0.0)


def _away_from(shape, key, points, low=-2.0, high=2.0):
    """Values in [low, high) at least 0.1 from each of `points` (clamp is not differentiable there)."""
    values = make_arg(shape, key=key, low=low, high=high, requires_grad=False).numpy().copy()
    for p in points:
        close = np.abs(values - p) < 0.1
        values = np.where(close, values + np.where(values >= p, 0.2, -0.2), values)
    return _tensor(values, requires_grad=True)


def _clamp_samples(op):
    x = _away_from((3, 4), (op, "x"), [-0.5, 0.5])
    lo = make_arg((4,), key=(op, "lo"), low=-1.5, high=-0.1)
    hi = make_arg((3, 1), key=(op, "hi"), low=0.1, high=1.5)
    crossing_lo = make_arg((3, 4), key=(op, "clo"), low=-1.0, high=1.0)
    crossing_hi = make_arg((3, 4), key=(op, "chi"), low=-1.0, high=1.0)
    return [
        SampleInput("scalar min,max", x, -0.5, 0.5),
        SampleInput("scalar min kw", x, min=-0.5),
        SampleInput("scalar max kw", x, max=0.5),
        SampleInput("0-d scalar", _away_from((), (op, "0d"), [0.5]), 0.5),
        SampleInput("T scalar", _away_from((4, 3), (op, "T"), [-0.5, 0.5]).detach().T.requires_grad_(), -0.5, 0.5),
        SampleInput("tensor min,max broadcast", make_arg((3, 4), key=(op, "tx")), lo, hi),
        SampleInput("tensor min only", make_arg((3, 4), key=(op, "tm")), lo),
        SampleInput("tensor max only", make_arg((2, 3, 1), key=(op, "tM")), None, hi),
        SampleInput("tensor min > max somewhere", make_arg((3, 4), key=(op, "cx")), crossing_lo, crossing_hi),
        SampleInput("int self, float bound", make_arg((5,), key=(op, "int"), low=-5, high=5, integer=True,
                                                      dtype=dtypes.int64), 0.5),
    ]


def _clamp_overload(self, min, max):  # noqa: A002
    # clamp.Tensor (ClampBackward0) when a bound is a tensor, clamp with Scalar bounds (ClampBackward1)
    return 0 if isinstance(min, Tensor) or isinstance(max, Tensor) else 1


clamp = defop(
    "clamp(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor",
    kernel=_clamp_kernel, meta=_clamp_meta, promote="same", wraps_numbers=True,
    grads={"self": _clamp_self_grad, "min": _clamp_min_grad, "max": _clamp_max_grad},
    backward_name=("ClampBackward0", "ClampBackward1"), overload=_clamp_overload,
    samples=_clamp_samples, torch="torch.clamp")
