"""Covariance and correlation matrices, composites as PyTorch's are (Correlation.cpp): cov
(rows are variables, columns observations; frequency and analytic weights, a correction of
the degrees of freedom) and corrcoef (cov normalised by the standard deviations, clipped to
[-1, 1]). Their gradients are those of the ops they are made of (a squeeze last for cov, so
its grad_fn is SqueezeBackward0; a clamp for corrcoef)."""
from __future__ import annotations

from ... import dtypes
from ...creation import tensor
from ...user_warnings import warn_user
from ..linalg import mm
from ..pointwise.binary import clip, div
from ..pointwise.unary import sqrt
from ..registry import defop
from ..samples import SampleInput, make_arg
from ..shape.diagonal import diagonal
from ..shape.view import squeeze, t, unsqueeze, view
from .arithmetic import sum  # noqa: A004 — PyTorch's name


def _has_values(x) -> bool:
    # NOTE: PyTorch's checks of values (.item()) fail on a Meta tensor; agrad skips them there, so that
    # cov's shapes and gradients are inferred without data as every op's are
    return x.device.type != "meta"


def _check_weights(name, w, observations, integral):
    if w.ndim > 1:
        raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got {name} with {w.ndim} "
                           f"dimensions")
    if w.numel() != observations:
        raise RuntimeError(f"cov(): expected {name} to have the same numel as there are observations in the input "
                           f"but got {w.numel()} != {observations}")
    if integral and w.dtype.is_floating_point:
        raise RuntimeError(f"cov(): expected {name} to have integral dtype but got {name} with {w.dtype} dtype")
    if not integral and not w.dtype.is_floating_point:
        raise RuntimeError(f"cov(): expected {name} to have floating point dtype but got {name} with {w.dtype} "
                           f"dtype")
    if _has_values(w) and bool((w < 0).any()):
        raise RuntimeError(f"cov(): {name} cannot be negative")


def _cov(self, correction=1, fweights=None, aweights=None):
    if self.ndim > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an input with "
                           f"{self.ndim} dimensions")
    if self.dtype == dtypes.bool_:
        raise RuntimeError("cov(): bool dtype is not supported for input")
    x = view(self, [1, -1]) if self.ndim < 2 else self
    observations = x.shape[1]
    w = None
    if fweights is not None:
        _check_weights("fweights", fweights, observations, True)
        w = fweights
    if aweights is not None:
        _check_weights("aweights", aweights, observations, False)
        w = aweights if w is None else w * aweights
    w_sum = sum(w) if w is not None else tensor(observations, dtype=dtypes.int64, device=self.device)
    if w is not None and _has_values(w_sum) and not bool(w_sum != 0):
        raise RuntimeError("cov(): weights sum to zero, can't be normalized")
    avg = div(sum(x * w if w is not None else x, [1]), w_sum)
    if w is not None and aweights is not None and correction != 0:
        norm_factor = w_sum - correction * sum(w * aweights) / w_sum
    else:
        norm_factor = w_sum - correction
    if _has_values(norm_factor) and bool(norm_factor <= 0):
        warn_user("cov(): degrees of freedom is <= 0. Correction should be strictly less than the number of "
                  "observations.")
        norm_factor = norm_factor * 0
    x = x - unsqueeze(avg, 1)
    c = mm(x, t(x * w if w is not None else x))
    return squeeze(div(c, norm_factor))


def _cov_samples(op):
    x = make_arg((3, 5), key=(op, 0))
    return [SampleInput("(3,5)", x),
            SampleInput("(5,) correction 0", make_arg((5,), key=(op, 1)), correction=0),
            SampleInput("fweights", x, fweights=make_arg((5,), key=(op, 2), dtype=dtypes.int64, low=1, high=4,
                                                         integer=True)),
            SampleInput("aweights and fweights, correction 2", x, correction=2,
                        fweights=make_arg((5,), key=(op, 3), dtype=dtypes.int64, low=1, high=4, integer=True),
                        aweights=make_arg((5,), key=(op, 4), low=0.5, high=2.0, requires_grad=False)),
            SampleInput("T (4,2)", make_arg((4, 2), key=(op, 5), transposed=True))]


cov = defop(
    "cov(Tensor self, *, int correction=1, Tensor? fweights=None, Tensor? aweights=None) -> Tensor",
    composite=_cov, samples=_cov_samples, torch="torch.cov",
    doc="The covariance matrix of the variables (rows) over the observations (columns).")


def _corrcoef(self):
    if self.ndim > 2:
        raise RuntimeError(f"corrcoef(): expected input to have two or fewer dimensions but got an input with "
                           f"{self.ndim} dimensions")
    c = cov(self)
    if c.ndim == 0:
        return c / c            # one variable: nan where its variance is 0, nan or inf, else 1
    stddev = sqrt(diagonal(c))
    c = c / view(stddev, [-1, 1])
    c = c / view(stddev, [1, -1])
    return clip(c, -1, 1)       # rounding may take |c| past 1


corrcoef = defop(
    "corrcoef(Tensor self) -> Tensor", composite=_corrcoef,
    samples=lambda op: [SampleInput("(3,5)", make_arg((3, 5), key=(op, 0))),
                        SampleInput("(4,)", make_arg((4,), key=(op, 1))),
                        SampleInput("T (4,2)", make_arg((4, 2), key=(op, 2), transposed=True))],
    torch="torch.corrcoef", doc="Pearson's correlation coefficients of the variables (rows).")
