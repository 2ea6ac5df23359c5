"""Sample inputs each op declares for its generated tests (gradcheck, gradgradcheck,
Meta consistency, PyTorch reference values). Deterministic: a sample is rebuilt from
its seed, so the reference script and the tests see the same numbers."""
from __future__ import annotations

import zlib

import numpy as np

from .. import dtypes
from ..creation import tensor

__all__ = ["SampleInput", "make_arg", "unary_samples", "binary_samples", "positive_unary_samples",
           "reduction_samples"]


class SampleInput:
    __slots__ = ("args", "kwargs", "name")

    def __init__(self, name, *args, **kwargs):
        self.name = name
        self.args = args
        self.kwargs = kwargs

    def __repr__(self):
        return f"SampleInput({self.name})"


def _rng(*key) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def make_arg(shape, *, key, dtype=dtypes.float64, low=-2.0, high=2.0, requires_grad=True,
             transposed=False, away_from=None, integer=False):
    """A float tensor of `shape` with values in [low, high), reproducible from `key`.

    `transposed` builds it as the transpose of a contiguous array (a non-contiguous
    input); `away_from` keeps values at least 0.1 from a point where the op is not
    differentiable (relu at 0, abs at 0)."""
    rng = _rng(key, tuple(shape))
    if integer:
        values = rng.integers(int(low), int(high), size=shape)
        return tensor(values, dtype=dtype)
    values = rng.uniform(low, high, size=shape[::-1] if transposed else shape)
    if transposed:
        values = values.T
    if away_from is not None:
        close = np.abs(values - away_from) < 0.1
        values = np.where(close, values + np.where(values >= away_from, 0.2, -0.2), values)
    t = tensor(values, dtype=dtype)     # np.array keeps the transposed (Fortran) layout
    if requires_grad:
        t.requires_grad = True
    return t


def unary_samples(dtype=dtypes.float64, requires_grad=True, *, low=-2.0, high=2.0, away_from=None):
    def samples(op):
        return [SampleInput(f"{shape}{'T' if tr else ''}",
                            make_arg(shape, key=(op, i), dtype=dtype, low=low, high=high, transposed=tr,
                                     away_from=away_from, requires_grad=requires_grad))
                for i, (shape, tr) in enumerate([((), False), ((5,), False), ((3, 4), False), ((4, 3), True),
                                                 ((2, 3, 2), False)])]
    return samples


def positive_unary_samples(low=0.5, high=3.0):
    return unary_samples(low=low, high=high)


def binary_samples(*, low=-2.0, high=2.0, other_low=None, other_high=None, scalar_other=1.5):
    other_low = low if other_low is None else other_low
    other_high = high if other_high is None else other_high
    pairs = [((), ()), ((4,), (4,)), ((2, 3), (3,)), ((2, 1, 3), (4, 1)), ((3, 2), (3, 2)), ((3,), ())]

    def samples(op):
        out = []
        for i, (sa, sb) in enumerate(pairs):
            tr = i == 4
            a = make_arg(sa, key=(op, i, "a"), low=low, high=high, transposed=tr)
            b = make_arg(sb, key=(op, i, "b"), low=other_low, high=other_high)
            out.append(SampleInput(f"{sa}x{sb}{'T' if tr else ''}", a, b))
        if scalar_other is not None:
            a = make_arg((2, 3), key=(op, "scalar"), low=low, high=high)
            out.append(SampleInput("(2, 3)xscalar", a, scalar_other))
        return out
    return samples


def reduction_samples(*, low=-2.0, high=2.0, dims=True):
    def samples(op):
        x = make_arg((3, 4, 2), key=(op, 0), low=low, high=high)
        out = [SampleInput("full", x),
               SampleInput("0-d", make_arg((), key=(op, 1), low=low, high=high))]
        if dims:
            out += [SampleInput("dim=1", x, 1),
                    SampleInput("dim=[0,2],keepdim", x, [0, 2], True),
                    SampleInput("dim=-1,T", make_arg((4, 3), key=(op, 2), low=low, high=high, transposed=True), -1)]
        return out
    return samples
