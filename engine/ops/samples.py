"""Sample inputs each op declares for its generated tests (gradcheck, gradgradcheck,
Meta consistency, PyTorch reference values). Deterministic: a sample is rebuilt from
its seed, so the reference script and the tests see the same numbers."""
from __future__ import annotations

import zlib

import numpy as np

from .. import dtypes
from ..creation import tensor

__all__ = ["SampleInput", "make_arg", "int_arg", "unary_samples", "binary_samples", "positive_unary_samples",
           "reduction_samples", "off_integers", "quotient_off_integers"]


class SampleInput:
    """An op's arguments, and two hooks PyTorch's OpInfo tests have. `gradcheck_wrapper(op, *args,
    **kwargs)`: how gradcheck calls the op, where its derivative is defined on a subspace only (eigh and
    cholesky read one triangle of a symmetric matrix, so their gradient is the symmetric one:
    gradcheck_wrapper_hermitian_input). `output_process_fn_grad(outputs)`: what of the outputs gradients
    and PyTorch's values are compared on, where the op leaves a gauge free (the signs of eigenvectors and
    singular vectors, which LAPACK builds differ on); written with Tensor methods torch has too, as the
    reference script applies it to torch's outputs."""
    __slots__ = ("args", "kwargs", "name", "gradcheck_wrapper", "output_process_fn_grad")

    def __init__(self, name, *args, **kwargs):
        self.name = name
        self.args = args
        self.kwargs = kwargs
        self.gradcheck_wrapper = None
        self.output_process_fn_grad = None

    def wrapped(self, gradcheck_wrapper):
        self.gradcheck_wrapper = gradcheck_wrapper
        return self

    def processed(self, output_process_fn_grad):
        self.output_process_fn_grad = output_process_fn_grad
        return self

    def __repr__(self):
        return f"SampleInput({self.name})"


def _rng(*key) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def make_arg(shape, *, key, dtype=dtypes.float64, low=-2.0, high=2.0, requires_grad=True,
             transposed=False, away_from=None, integer=False):
    """A float tensor of `shape` with values in [low, high), reproducible from `key`; of a
    complex dtype, real and imaginary parts each in [low, high).

    `transposed` builds it as the transpose of a contiguous array (a non-contiguous
    input); `away_from` keeps values at least 0.1 from a point where the op is not
    differentiable (relu at 0, abs at 0)."""
    rng = _rng(key, tuple(shape))
    if integer:
        values = rng.integers(int(low), int(high), size=shape)
        return tensor(values, dtype=dtype)
    values = rng.uniform(low, high, size=shape[::-1] if transposed else shape)
    if dtype.is_complex:
        values = values + 1j * rng.uniform(low, high, size=values.shape)
    if transposed:
        values = values.T
    if away_from is not None:
        close = np.abs(values - away_from) < 0.1
        values = np.where(close, values + np.where(values.real >= away_from, 0.2, -0.2), values)
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


def off_integers(shape, key, *, low=-3.0, high=3.0, halves=False, requires_grad=True):
    """Values whose fractional part is in [0.2, 0.8] (with `halves`: in [0.15, 0.35] or [0.65, 0.85],
    away from .5 too), so finite differences of a rounding op never step over one of its jumps."""
    v = make_arg(shape, key=key, low=low, high=high, requires_grad=False).numpy()
    whole = np.floor(v)
    part = v - whole
    part = np.where(part < 0.5, 0.15 + 0.4 * part, 0.65 + 0.4 * (part - 0.5)) if halves else 0.2 + 0.6 * part
    return tensor(whole + part, dtype=dtypes.float64, requires_grad=requires_grad)


def quotient_off_integers(shape_a, shape_b, *, key):
    """(a, b): divisors in +-[0.5, 2] and dividends whose quotient a / b is 0.2 to 0.8 past a whole
    number, where floor division, remainder and fmod jump."""
    b = make_arg(shape_b, key=(key, "b"), low=0.5, high=2.0, requires_grad=False).numpy()
    b = b * np.where(make_arg(shape_b, key=(key, "s"), requires_grad=False).numpy() < 0, -1.0, 1.0)
    shape = np.broadcast_shapes(tuple(shape_a), tuple(shape_b))
    a = off_integers(shape, (key, "q"), requires_grad=False).numpy() * b
    return tensor(a, dtype=dtypes.float64, requires_grad=True), tensor(b, dtype=dtypes.float64, requires_grad=True)


def grad_output_samples(op, forward, samples, rest):
    """Samples of a backward op: for each of the forward's `samples`, a grad_output shaped as the
    forward's (first) output, from its Meta rule, then the arguments `rest(sample)` -> (args, kwargs)."""
    out = []
    for s in samples:
        result = forward(s.args[0].to("meta"), *s.args[1:], **s.kwargs)
        shape = tuple((result[0] if isinstance(result, tuple) else result).shape)    # values of (values, indices)
        args, kwargs = rest(s)
        out.append(SampleInput(s.name, make_arg(shape, key=(op, s.name)), *args, **kwargs))
    return out


def int_arg(shape, key, low=0, high=5):
    """An int64 tensor of indices or counts in [low, high), no gradient."""
    return make_arg(shape, key=key, dtype=dtypes.int64, low=low, high=high, integer=True)
