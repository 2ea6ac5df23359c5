"""The trapezoidal rule (ATen's Integration.cpp), composites as PyTorch's: trapezoid (trapz,
its older name) integrates y along dim over sample points x or a constant spacing dx, and
cumulative_trapezoid gives the running integral. Their gradients are those of the slices,
sums and products they are made of."""
from __future__ import annotations

from ... import dtypes
from ...creation import zeros
from ...shapes import normalize_dim
from ..registry import defop
from ..samples import SampleInput, make_arg
from ..shape.indexing import select
from ..shape.indexing import slice as slice_op
from ..shape.view import view
from .arithmetic import sum  # noqa: A004 — PyTorch's name
from .cumulative import cumsum


def _check(y, x, dx):
    if y.dtype == dtypes.bool_ or (x is not None and x.dtype == dtypes.bool_):
        raise RuntimeError("trapezoid: received a bool input for `x` or `y`, but bool is not supported")
    if isinstance(dx, bool):
        raise RuntimeError("trapezoid does not support complex or boolean dx")
    if x is not None and dx is not None:
        raise RuntimeError("trapezoid: received both x and dx; give one of them")


def _spacing(y, x, d):
    """x's differences along d, x viewed to broadcast against y (a vector along d, or padded on the left)."""
    if x.ndim == 1:
        if x.shape[0] != y.shape[d]:
            raise RuntimeError("trapezoid: There must be one `x` value for each sample point")
        sizes = [1] * y.ndim
        sizes[d] = x.shape[0]
        x = view(x, sizes)
    elif x.ndim < y.ndim:
        x = view(x, [1] * (y.ndim - x.ndim) + list(x.shape))
    return slice_op(x, d, 1, None) - slice_op(x, d, 0, -1)


def _empty_integral(y, d):
    # integrating zero samples: zeros of y's shape without dim (PyTorch's zeros_like_except)
    return zeros([s for i, s in enumerate(y.shape) if i != d], dtype=y.dtype, device=y.device)


def _trapezoid(y, x=None, dx=None, dim=-1):
    _check(y, x, dx)
    d = normalize_dim(dim, y.ndim)
    if y.shape[d] == 0:
        return _empty_integral(y, d)
    if x is not None:
        left, right = slice_op(y, d, 0, -1), slice_op(y, d, 1, None)
        return sum((left + right) * _spacing(y, x, d), [d]) / 2.0
    # a constant spacing: the sum less half the end points, times dx
    return (sum(y, [d]) - (select(y, d, 0) + select(y, d, -1)) * 0.5) * float(1 if dx is None else dx)


def _cumulative_trapezoid(y, x=None, dx=None, dim=-1):
    _check(y, x, dx)
    d = normalize_dim(dim, y.ndim)
    left, right = slice_op(y, d, 0, -1), slice_op(y, d, 1, None)
    if x is not None:
        return cumsum(_spacing(y, x, d) * (left + right), d) / 2.0
    return cumsum(float(1 if dx is None else dx) / 2.0 * (left + right), d)


def _samples(op):
    y = make_arg((3, 5), key=(op, 0))
    return [SampleInput("(3,5)", y),
            SampleInput("dx=0.5 dim 0", y, dx=0.5, dim=0),
            SampleInput("x vector", y, make_arg((5,), key=(op, 1))),
            SampleInput("x (3,5) dim 1", y, make_arg((3, 5), key=(op, 2)), dim=1),
            SampleInput("x (5,) padded, T y", make_arg((5, 3), key=(op, 3), transposed=True).t(),
                        make_arg((1, 5), key=(op, 4))),
            SampleInput("int64 y", make_arg((4,), key=(op, 5), dtype=dtypes.int64, low=-3, high=4, integer=True))]


_SCHEMA = "(Tensor y, Tensor? x=None, *, Scalar? dx=None, int dim=-1) -> Tensor"
trapezoid = defop("trapezoid" + _SCHEMA, composite=_trapezoid, samples=_samples, torch="torch.trapezoid",
                  doc="The integral of y along dim by the trapezoidal rule, over sample points x or a spacing dx "
                      "(default 1).")
trapz = defop("trapz" + _SCHEMA, composite=_trapezoid, samples=_samples, torch="torch.trapz",
              doc="trapezoid, PyTorch's older name.")
cumulative_trapezoid = defop(
    "cumulative_trapezoid" + _SCHEMA, composite=_cumulative_trapezoid,
    samples=lambda op: [s for s in _samples(op) if s.name != "int64 y"], torch="torch.cumulative_trapezoid",
    doc="The running integral of y along dim by the trapezoidal rule (one element fewer along dim).")
