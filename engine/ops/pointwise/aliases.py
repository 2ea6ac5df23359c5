"""PyTorch's other names of pointwise ops (NumPy's arccos, absolute, multiply, greater …,
and fix, negative, positive).

Each alias is a composite over its target, as PyTorch's aliases are (CompositeImplicitAutograd
in native_functions.yaml, one kernel under two names), so a result's grad_fn is the target's
(`torch.multiply(a, b).grad_fn` is MulBackward0) and every derivative is the target's own. The
samples are the target's, drawn under the alias's name.
"""
from __future__ import annotations

from ... import dtypes
from ..registry import defop, get_info
from ..samples import SampleInput, make_arg
from .binary import atan2, div, ge, gt, le, lt, mul, ne, sub
from .unary import abs, acos, acosh, asin, asinh, atan, atanh, neg, trunc  # noqa: A004 — PyTorch's names


def _samples_of(target):
    """The target's samples, drawn under the alias's name (so their values differ from the target's)."""
    return lambda op: get_info(target).samples(op)


def _unary_alias(name, target, fn):
    return defop(f"{name}(Tensor self) -> Tensor", composite=lambda self: fn(self),
                 samples=_samples_of(target), torch=f"torch.{name}", doc=f"{target}, NumPy's name.")


def _binary_alias(name, target, fn, tags=()):
    return defop(f"{name}(Tensor self, Tensor other) -> Tensor", composite=lambda self, other: fn(self, other),
                 wraps_numbers=True, samples=_samples_of(target), torch=f"torch.{name}", tags=tags,
                 doc=f"{target}, NumPy's name.")


absolute = _unary_alias("absolute", "abs", abs)
arccos = _unary_alias("arccos", "acos", acos)
arccosh = _unary_alias("arccosh", "acosh", acosh)
arcsin = _unary_alias("arcsin", "asin", asin)
arcsinh = _unary_alias("arcsinh", "asinh", asinh)
arctan = _unary_alias("arctan", "atan", atan)
arctanh = _unary_alias("arctanh", "atanh", atanh)
negative = _unary_alias("negative", "neg", neg)
fix = _unary_alias("fix", "trunc", trunc)

arctan2 = _binary_alias("arctan2", "atan2", atan2)
multiply = _binary_alias("multiply", "mul", mul)
greater = _binary_alias("greater", "gt", gt, tags=("comparison",))
greater_equal = _binary_alias("greater_equal", "ge", ge, tags=("comparison",))
less = _binary_alias("less", "lt", lt, tags=("comparison",))
less_equal = _binary_alias("less_equal", "le", le, tags=("comparison",))
not_equal = _binary_alias("not_equal", "ne", ne, tags=("comparison",))

subtract = defop(
    "subtract(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
    composite=lambda self, other, alpha=1: sub(self, other, alpha=alpha), wraps_numbers=True,
    samples=lambda op: get_info("sub").samples(op) + [
        SampleInput("alpha=2", make_arg((2, 3), key=(op, "a")), make_arg((3,), key=(op, "b")), alpha=2)],
    torch="torch.subtract", doc="sub, NumPy's name.")

divide = defop(
    "divide(Tensor self, Tensor other, *, str? rounding_mode=None) -> Tensor",
    composite=lambda self, other, rounding_mode=None: div(self, other, rounding_mode=rounding_mode),
    wraps_numbers=True, samples=_samples_of("div"), torch="torch.divide", doc="div, NumPy's name.")


# ---- the identities of real tensors ------------------------------------------------------------

def _positive(self):
    # PyTorch: a bool tensor has no unary +; anything else is returned as it is (no copy, no grad_fn)
    if self.dtype == dtypes.bool_:
        raise TypeError("The `+` operator, on a bool tensor is not supported.")
    return self


positive = defop(
    "positive(Tensor self) -> Tensor", composite=_positive,
    samples=lambda op: [SampleInput("(3,4)", make_arg((3, 4), key=(op, 0)))],
    torch="torch.positive", doc="self itself: unary plus.")

