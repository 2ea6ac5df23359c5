"""More of PyTorch's reductions and data-dependent ops: nansum, nanmean, trace, linalg_cross
and cross, kron, take; the non-differentiable allclose and equal (Python bools), nonzero,
bincount and unique (via `_unique2`, whose output shapes depend on the values).

Gradients are derivatives.yaml's formulas written with agrad ops: nansum's gradient is zero
at NaNs, trace's is grad on the diagonal, take's scatters grad back (index_add), linalg_cross's
are cross products again; nanmean and kron are PyTorch's composites (DivBackward0,
UnsafeViewBackward0).
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from .. import dtypes
from ..backends.meta import MetaArray
from ..creation import eye, tensor, zeros
from ..errors import DtypeError, DtypeNotImplementedError
from ..messages import scalar_type_name
from ..shapes import broadcast_shapes, normalize_dim, normalize_dims, reduced_shape
from .indexing_advanced import index_add
from .logical import logical_not
from .pointwise import div, eq, where
from .pointwise_math import remainder
from .reduction import _sum_dtype, sum_backward
from .reduction import sum as _sum
from .registry import defop
from .samples import SampleInput, make_arg, reduction_samples
from .selection import all as _all
from .selection import isclose, isnan
from .shape import _unsafe_view, expand, reshape

__all__ = ["allclose", "equal", "unique"]

_INT64 = np.dtype(np.int64)


def _data_dependent(name):
    def rule(*args):
        raise NotImplementedError(f"{name}: the shape of its result depends on the input's values, which a Meta "
                                  f"tensor does not have")
    return rule


def _int_arg(shape, key, low=0, high=5):
    return make_arg(shape, key=key, dtype=dtypes.int64, low=low, high=high, integer=True)


# ---- nansum, nanmean -----------------------------------------------------------------------------

def _nansum_meta(self, dim, keepdim, dtype):
    return MetaArray(reduced_shape(self.shape, normalize_dims(dim, self.ndim), keepdim), _sum_dtype(self, dtype))


def _nansum_kernel(xp, self, dim, keepdim, dtype):
    return xp.nansum(self, axis=normalize_dims(dim, self.ndim), keepdims=keepdim, dtype=_sum_dtype(self, dtype))


def _nansum_grad(grad, self, dim, keepdim):
    return where(isnan(self), 0.0, sum_backward(grad, list(self.shape), dim, keepdim))


def _nan_samples(op):
    x = make_arg((3, 4, 2), key=(op, "nan"), requires_grad=False).numpy().copy()
    x[0, 1, 0] = x[2, 1:, 1] = np.nan
    t = tensor(x, dtype=dtypes.float64, requires_grad=True)
    return reduction_samples()(op) + [SampleInput("nan", t), SampleInput("nan dim=1", t, 1),
                                      SampleInput("nan dim=[0,2] keepdim", t, [0, 2], True)]


nansum = defop(
    "nansum(Tensor self, int[]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
    kernel=_nansum_kernel, meta=_nansum_meta,
    grads={"self": _nansum_grad},
    samples=lambda op: _nan_samples(op) + [SampleInput("int64", _int_arg((3, 4), (op, "i"), -3, 4), 1)],
    torch="torch.nansum",
    doc="The sum treating NaN as zero (integers sum to int64).")


def _nanmean(self, dim, keepdim, dtype):
    if not (dtype if dtype is not None else self.dtype).is_floating_point:
        raise DtypeError(f"nanmean(): expected input to have floating point or complex dtype but got "
                         f"{scalar_type_name(self.dtype.np)}")
    count = _sum(logical_not(isnan(self)), dim, keepdim)
    return div(nansum(self, dim, keepdim, dtype=dtype), count)


nanmean = defop(
    "nanmean(Tensor self, int[]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
    composite=_nanmean, samples=_nan_samples, torch="torch.nanmean",
    doc="The mean of the non-NaN elements (NaN where all are NaN).")


# ---- trace ------------------------------------------------------------------------------------------

def _trace_meta(self):
    if self.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {self.ndim}")
    if self.dtype == np.bool_:
        raise DtypeNotImplementedError("\"trace\" not implemented for 'Bool'")
    return MetaArray((), _sum_dtype(self, None))


def _trace_kernel(xp, self):
    _trace_meta(self)
    return xp.asarray(xp.trace(self, dtype=_sum_dtype(self, None)))


def _trace_grad(grad, self_shape):
    n, m = self_shape
    return expand(grad, [n, m]) * eye(n, m, dtype=grad.dtype, device=grad.device)


trace = defop(
    "trace(Tensor self) -> Tensor",
    kernel=_trace_kernel, meta=_trace_meta,
    grads={"self": _trace_grad},
    samples=lambda op: [SampleInput("(3,3)", make_arg((3, 3), key=(op, 0))),
                        SampleInput("(2,4)", make_arg((2, 4), key=(op, 1))),
                        SampleInput("(4,2)T", make_arg((4, 2), key=(op, 2), transposed=True)),
                        SampleInput("int64", _int_arg((3, 3), (op, 3), -3, 4))],
    torch="torch.trace",
    doc="The sum of the main diagonal of a matrix.")


# ---- linalg_cross, cross ---------------------------------------------------------------------------

def _cross_meta(self, other, dim):
    if self.ndim != other.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    if self.dtype != other.dtype:
        raise DtypeError(f"expected scalar type {scalar_type_name(self.dtype)} but found "
                         f"{scalar_type_name(other.dtype)}")
    d = normalize_dim(dim, self.ndim)
    if self.shape[d] != 3 or other.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. "
                           f"Got {self.shape[d]} and {other.shape[d]}")
    return MetaArray(broadcast_shapes(self.shape, other.shape), self.dtype)


def _cross_kernel(xp, self, other, dim):
    _cross_meta(self, other, dim)
    return xp.cross(self, other, axis=normalize_dim(dim, self.ndim))


linalg_cross = defop(
    "linalg_cross(Tensor self, Tensor other, *, int dim=-1) -> Tensor",
    kernel=_cross_kernel, meta=_cross_meta,
    grads={"self": lambda grad, other, dim: linalg_cross(other, grad, dim=dim),
           "other": lambda grad, self, dim: linalg_cross(grad, self, dim=dim)},
    samples=lambda op: [SampleInput("(3,)", make_arg((3,), key=(op, 0)), make_arg((3,), key=(op, 1))),
                        SampleInput("(2,3) broadcast", make_arg((2, 3), key=(op, 2)), make_arg((1, 3), key=(op, 3))),
                        SampleInput("(3,4) dim=0", make_arg((3, 4), key=(op, 4), transposed=True),
                                    make_arg((3, 4), key=(op, 5)), dim=0),
                        SampleInput("int64", _int_arg((2, 3), (op, 6), -3, 4), _int_arg((2, 3), (op, 7), -3, 4))],
    torch="torch.linalg.cross",
    doc="The cross product of 3-vectors along dim (broadcasting the other dimensions).")


def _cross(self, other, dim):
    if dim is None:
        sizes = tuple(self.shape)
        if 3 not in sizes:
            raise RuntimeError("no dimension of size 3 in input")
        dim = sizes.index(3)
        warnings.warn("Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass the dim "
                      "explicitly or simply use torch.linalg.cross.\nThe default value of dim will change to agree "
                      "with that of linalg.cross in a future release.", UserWarning, stacklevel=3)
    return linalg_cross(self, other, dim=dim)


cross = defop(
    "cross(Tensor self, Tensor other, int? dim=None) -> Tensor",
    composite=_cross,
    samples=lambda op: [SampleInput("(2,3) dim=1", make_arg((2, 3), key=(op, 0)), make_arg((2, 3), key=(op, 1)), 1),
                        SampleInput("(3,2) dim=-2", make_arg((3, 2), key=(op, 2)), make_arg((3, 2), key=(op, 3)),
                                    dim=-2)],
    torch="torch.cross",
    doc="linalg.cross along dim; without dim, along the first dimension of size 3 (deprecated, as in PyTorch).")


# ---- kron ---------------------------------------------------------------------------------------------

def _kron(self, other):
    nd = max(self.ndim, other.ndim)
    a = [1] * (nd - self.ndim) + list(self.shape)
    b = [1] * (nd - other.ndim) + list(other.shape)
    a_shape = [s for x in a for s in (x, 1)]
    b_shape = [s for x in b for s in (1, x)]
    product = reshape(self, a_shape) * reshape(other, b_shape)
    return _unsafe_view(product, [x * y for x, y in zip(a, b)])


kron = defop(
    "kron(Tensor self, Tensor other) -> Tensor",
    composite=_kron,
    samples=lambda op: [SampleInput("(2,3)x(2,2)", make_arg((2, 3), key=(op, 0)), make_arg((2, 2), key=(op, 1))),
                        SampleInput("(2,3)x(3,)", make_arg((2, 3), key=(op, 2)), make_arg((3,), key=(op, 3))),
                        SampleInput("(2,)x(2,1,2)", make_arg((2,), key=(op, 4)), make_arg((2, 1, 2), key=(op, 5))),
                        SampleInput("int64", _int_arg((2, 2), (op, 6), -3, 4), _int_arg((2,), (op, 7), -3, 4))],
    torch="torch.kron",
    doc="The Kronecker product: every element of self times a block of other.")


# ---- take --------------------------------------------------------------------------------------------

def _take_meta(self, index):
    if index.dtype != _INT64:
        raise DtypeError(f"take(): Expected a long tensor for index, but got {scalar_type_name(index.dtype)}")
    return MetaArray(index.shape, self.dtype)


def _take_kernel(xp, self, index):
    _take_meta(self, index)
    n = math.prod(self.shape)
    if index.size:
        bad = (index < -n) | (index >= n)
        if bool(bad.any()):
            first = int(index[bad].reshape(-1)[0])
            raise IndexError(f"out of range: tried to access index {first} on a tensor of {n} elements.")
    return xp.ascontiguousarray(self).reshape(-1)[index]


def _take_grad(grad, self_shape, index):
    n = math.prod(self_shape)
    flat = zeros([n], dtype=grad.dtype, device=grad.device)
    positions = remainder(reshape(index, [-1]), n)       # negative indices count from the end
    return reshape(index_add(flat, 0, positions, reshape(grad, [-1])), list(self_shape))


take = defop(
    "take(Tensor self, Tensor index) -> Tensor",
    kernel=_take_kernel, meta=_take_meta,
    grads={"self": _take_grad, "index": None},
    samples=lambda op: [
        SampleInput("(3,4)[(2,3)]", make_arg((3, 4), key=(op, 0)),
                    tensor([[0, 5, 11], [-1, 5, 3]], dtype=dtypes.int64)),
        SampleInput("T (4,3)[(5,)]", make_arg((4, 3), key=(op, 1), transposed=True),
                    tensor([1, 2, 7, -12, 2], dtype=dtypes.int64)),
        SampleInput("0-d", make_arg((), key=(op, 2)), tensor(0, dtype=dtypes.int64))],
    torch="torch.take",
    doc="The elements of self, read as a 1-D tensor, at index (the result has index's shape).")


# ---- allclose, equal: Python bools --------------------------------------------------------------------

def allclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
    """Whether every element of self is close to other's (isclose), as a Python bool."""
    return bool(_all(isclose(self, other, rtol, atol, equal_nan)).item())


def equal(self, other) -> bool:
    """True when self and other have the same shape and equal elements (NaN is never equal)."""
    if tuple(self.shape) != tuple(other.shape):
        return False
    return bool(_all(eq(self, other)).item())


# ---- nonzero --------------------------------------------------------------------------------------------

nonzero = defop(
    "nonzero(Tensor self) -> Tensor",
    kernel=lambda xp, self: xp.argwhere(self).astype(_INT64, copy=False), meta=_data_dependent("nonzero"),
    samples=lambda op: [
        SampleInput("(3,4)", tensor(np.where(np.arange(12).reshape(3, 4) % 3 == 0, 0.0, 1.5))),
        SampleInput("int64 (2,2,3)", _int_arg((2, 2, 3), (op, 0), -1, 2)),
        SampleInput("bool (5,)", tensor([True, False, False, True, True])),
        SampleInput("0-d", tensor(3.0)), SampleInput("0-d zero", tensor(0.0))],
    torch="torch.nonzero", tags=("dynamic_output_shape",),
    doc="The indices of the nonzero elements, one row per element: (count, ndim), int64.")


# ---- bincount --------------------------------------------------------------------------------------------

def _bincount_kernel(xp, self, weights, minlength):
    if self.dtype.kind not in "iu":
        raise DtypeNotImplementedError(f"\"bincount_cpu\" not implemented for '{scalar_type_name(self.dtype)}'")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if self.ndim == 1 and self.size == 0:
        return xp.zeros(minlength, dtype=_INT64)
    if self.ndim != 1 or bool((self < 0).any()):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is None:
        return xp.bincount(self, minlength=minlength).astype(_INT64, copy=False)
    if weights.ndim != 1 or weights.shape[0] != self.shape[0]:
        raise RuntimeError("weights should be 1-d and have the same length as input")
    out = np.dtype(np.float32) if weights.dtype == np.float32 else np.dtype(np.float64)
    return xp.bincount(self, weights=weights.astype(np.float64, copy=False), minlength=minlength).astype(out)


bincount = defop(
    "bincount(Tensor self, Tensor? weights=None, int minlength=0) -> Tensor",
    kernel=_bincount_kernel, meta=_data_dependent("bincount"),
    samples=lambda op: [
        SampleInput("(8,)", _int_arg((8,), (op, 0), 0, 5)),
        SampleInput("minlength", _int_arg((6,), (op, 1), 0, 3), minlength=7),
        SampleInput("weights", _int_arg((6,), (op, 2), 0, 4), make_arg((6,), key=(op, 3), requires_grad=False)),
        SampleInput("int weights", _int_arg((4,), (op, 4), 0, 4), _int_arg((4,), (op, 5), -2, 3), 2),
        SampleInput("empty", tensor(np.zeros(0, dtype=np.int64)), minlength=3)],
    torch="torch.bincount", tags=("dynamic_output_shape",),
    doc="How often each value 0..max occurs in a 1-D non-negative integer tensor (weighted sums with weights).")


# ---- unique ----------------------------------------------------------------------------------------------

def _unique2_kernel(xp, self, sorted, return_inverse, return_counts):  # noqa: A002 — PyTorch's name
    values, inverse, counts = xp.unique(self.reshape(-1), return_inverse=True, return_counts=True, equal_nan=False)
    empty = xp.zeros(0, dtype=_INT64)
    return (values.astype(self.dtype, copy=False),
            inverse.reshape(self.shape).astype(_INT64, copy=False) if return_inverse else empty,
            counts.astype(_INT64, copy=False) if return_counts else empty)


_unique2 = defop(
    "_unique2(Tensor self, bool sorted=True, bool return_inverse=False, bool return_counts=False) "
    "-> (Tensor, Tensor, Tensor)",
    kernel=_unique2_kernel, meta=_data_dependent("_unique2"),
    samples=lambda op: [
        SampleInput("int64", tensor([3, 1, 2, 3, 1], dtype=dtypes.int64), return_inverse=True,
                    return_counts=True),
        SampleInput("(2,3) inverse", _int_arg((2, 3), (op, 0), -2, 3).double(), True, True),
        SampleInput("nan counts", tensor([3.0, np.nan, 1.0, np.nan, 3.0]), return_counts=True),
        SampleInput("bool", tensor([True, False, True]))],
    torch="torch._unique2", tags=("dynamic_output_shape",),
    doc="The sorted distinct values, the index of each element's value in them (return_inverse) and "
        "how often each occurs (return_counts); an empty int64 tensor for an output not asked for.")


def unique(input, sorted=True, return_inverse=False, return_counts=False):  # noqa: A002 — PyTorch's names
    """The sorted distinct elements of input (flattened); with return_inverse and/or return_counts,
    a tuple adding the index of each element's value (input's shape) and each value's count."""
    values, inverse, counts = _unique2(input, sorted, return_inverse, return_counts)
    if return_inverse and return_counts:
        return values, inverse, counts
    if return_inverse:
        return values, inverse
    if return_counts:
        return values, counts
    return values
