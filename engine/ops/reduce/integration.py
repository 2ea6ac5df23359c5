"""The trapezoidal rule (ATen's Integration.cpp), composites as PyTorch's: trapezoid (trapz,
its older name) integrates y along dim over sample points x or a constant spacing dx, and
cumulative_trapezoid gives the running integral; and the other way, gradient, torch.gradient's
finite differences (below). Their gradients are those of the slices, sums and products they are
made of."""
from __future__ import annotations

from ... import dtypes
from ..._tensor import Tensor
from ...creation import zeros
from ...shapes import normalize_dim
from ..registry import defop
from ..samples import SampleInput, make_arg
from ..shape.indexing import select
from ..shape.indexing import slice as slice_op
from ..shape.view import view
from .arithmetic import sum  # noqa: A004 — PyTorch's name
from ..shape.join import cat
from .cumulative import cumsum, diff


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


# ---- gradient ------------------------------------------------------------------------------------------
# torch.gradient (ATen's ReduceOps.cpp): the derivative of samples along each dim by second-order central
# differences inside (with uneven coordinates, the three-point formula), and first- or second-order
# one-sided differences at the two ends (edge_order); spacing is one number per dim, or each dim's
# coordinates. A composite: its gradient is that of the slices and products it is made of.

def _gradient_checks(self, spacing_size, dim, edge_order):
    """ATen's pre_check_gradient; the dims, normalised."""
    if self.dtype == dtypes.uint8:
        raise RuntimeError("torch.gradient does not support uint8 input.")
    if spacing_size is not None and dim is None and spacing_size != self.ndim:
        raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar, or a list of length equal "
                           f"to 'self.dim() = {self.ndim}', since dim argument was not given, but got a list of "
                           f"length {spacing_size}")
    if spacing_size is not None and dim is not None and spacing_size != len(dim):
        raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim "
                           f"arguments to have the same length, but got a spacing argument of length {spacing_size} "
                           f"and a dim argument of length {len(dim)}.")
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    dims = list(range(self.ndim)) if dim is None else [normalize_dim(d, self.ndim) for d in dim]
    if len(set(dims)) != len(dims):
        repeated = next(d for d in dims if dims.count(d) > 1)
        raise RuntimeError(f"dim {repeated} appears multiple times in the list of dims")
    for d in dims:
        if self.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least edge_order+1")
    return dims


def _along(self, d, start, end=None):
    return slice_op(self, d, start, end)


def _uniform_gradient(self, d, dx, edge_order):
    center = (_along(self, d, 2) - _along(self, d, 0, -2)) / dx
    if edge_order == 1:
        prepend = (_along(self, d, 1, 2) - _along(self, d, 0, 1)) / dx
        append = (_along(self, d, -1) - _along(self, d, -2, -1)) / dx
    else:
        prepend = (_along(self, d, 0, 1) * -1.5 + _along(self, d, 1, 2) * 2 - _along(self, d, 2, 3) * 0.5) / dx
        append = (_along(self, d, -3, -2) * 0.5 - _along(self, d, -2, -1) * 2 + _along(self, d, -1) * 1.5) / dx
    return cat([prepend, center / 2, append], d)


def _coordinate_gradient(self, d, coordinates, edge_order):
    if coordinates.ndim != 1:
        raise RuntimeError(f"torch.gradient expected each element of spacing to have one dimension, but got an "
                           f"element with {coordinates.ndim} dimensions!")
    shape = [1] * self.ndim
    shape[d] = -1
    ax_dx = diff(coordinates, 1, 0)
    dx1, dx2 = _along(ax_dx, 0, 0, -1), _along(ax_dx, 0, 1)
    a = view(-dx2 / (dx1 * (dx1 + dx2)), shape)
    b = view((dx2 - dx1) / (dx1 * dx2), shape)
    c = view(dx1 / (dx2 * (dx1 + dx2)), shape)
    center = a * _along(self, d, 0, -2) + b * _along(self, d, 1, -1) + c * _along(self, d, 2)
    first, second, last, before_last = ax_dx[0], ax_dx[1], ax_dx[-1], ax_dx[-2]
    if edge_order == 1:
        prepend = (_along(self, d, 1, 2) - _along(self, d, 0, 1)) / first
        append = (_along(self, d, -1) - _along(self, d, -2, -1)) / last
    else:
        a = -(2.0 * first + second) / (first * (first + second))
        b = (first + second) / (first * second)
        c = -first / (second * (first + second))
        prepend = a * _along(self, d, 0, 1) + b * _along(self, d, 1, 2) + c * _along(self, d, 2, 3)
        a = last / (before_last * (last + before_last))
        b = -(last + before_last) / (last * before_last)
        c = (2 * last + before_last) / (last * (last + before_last))
        append = a * _along(self, d, -3, -2) + b * _along(self, d, -2, -1) + c * _along(self, d, -1)
    return cat([prepend, center, append], d)


def _gradient(self, spacing=None, dim=None, edge_order=1):
    """The forms with numbers (gradient.scalarint, .scalararray, .array …): a spacing per dim, 1 by default."""
    dims = _gradient_checks(self, None if spacing is None else len(spacing), dim, edge_order)
    steps = [1.0] * len(dims) if spacing is None else spacing
    return [_uniform_gradient(self, d, dx, edge_order) for d, dx in zip(dims, steps)]


def _gradient_samples(op):
    return [SampleInput("(5,)", make_arg((5,), key=(op, 0))),
            SampleInput("(4,5) spacing 0.5 dim 1", make_arg((4, 5), key=(op, 1)), spacing=[0.5], dim=[1]),
            SampleInput("(3,4) spacings [2, 0.25] edge_order 2", make_arg((3, 4), key=(op, 2)), spacing=[2.0, 0.25],
                        edge_order=2),
            SampleInput("(3,4,3) dims (-1, 0) edge_order 2", make_arg((3, 4, 3), key=(op, 3)), dim=[-1, 0],
                        edge_order=2)]


_gradient_op = defop(
    "gradient(Tensor self, *, Scalar[]? spacing=None, int[]? dim=None, int edge_order=1) -> Tensor[]",
    composite=_gradient, samples=_gradient_samples,
    torch="lambda x, spacing=None, dim=None, edge_order=1: torch.gradient(x, spacing=1 if spacing is None else "
          "spacing, dim=dim, edge_order=edge_order)")


def gradient(self, *, spacing=1, dim=None, edge_order=1):
    """gradient(Tensor self, *, spacing=1, dim=None, edge_order=1) -> Tensor[]

    torch.gradient: the derivative of self's samples along each dim of `dim` (an int or a list; every dim
    without one), a tuple of tensors of self's shape; `spacing` a number (every dim's), one per dim, or each
    dim's sample coordinates as 1-D tensors. Central differences inside, one-sided ones of `edge_order` 1
    or 2 at the ends."""
    if isinstance(dim, int):
        dim = [dim]
    if isinstance(spacing, (list, tuple)) and spacing and isinstance(spacing[0], Tensor):
        # PyTorch's gradient.tensorarray(int): coordinates
        dims = _gradient_checks(self, len(spacing), dim, edge_order)
        for coordinates in spacing:
            if coordinates.device != self.device:
                raise RuntimeError(f"torch.gradient expected each tensor to be on the same device, but got devices "
                                   f"{self.device} and {coordinates.device}!")
        return tuple(_coordinate_gradient(self, d, c, edge_order) for d, c in zip(dims, spacing))
    if not isinstance(spacing, (list, tuple)):
        # one number: every dim's (ATen makes the list of one per dim before its checks)
        spacing = [spacing] * (self.ndim if dim is None else len(dim))
    return tuple(_gradient_op(self, spacing=list(spacing), dim=dim, edge_order=edge_order))


# NOTE: as split: PyTorch's parser picks gradient's overload from the spacing's type (numbers or tensors)
gradient.op = _gradient_op.op
gradient.__module__ = "agrad"
_gradient_op.op.function = gradient
