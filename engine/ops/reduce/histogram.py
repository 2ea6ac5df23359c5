"""Histograms (ATen's Histogram.cpp): histogram and histogramdd (below), and histc, the counts
of the elements in `bins` equal-width bins over [min, max] (the input's own range when min == max,
widened by 1 each way when that is one value); elements outside are not counted, one equal to
max falls in the last bin. Counts are not differentiable (derivatives.yaml: output_differentiability [False])."""
from __future__ import annotations

import builtins
import math

import numpy as np

from ... import dtypes, return_types
from ..._tensor import Tensor
from ...backends.meta import MetaArray
from ...creation import _spaced, tensor
from ...errors import DtypeNotImplementedError
from ...messages import c_type_name, scalar_type_name, sizes
from ..registry import defop
from ..samples import SampleInput, make_arg

__all__ = ["histogramdd"]


def _histc_checks(self, bins):
    if self.dtype.kind != "f":
        raise DtypeNotImplementedError(f"\"histogram_cpu\" not implemented for '{scalar_type_name(self.dtype)}'")
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")


def _histc_range(xp, self, low, high):
    # ATen's histc_select_outer_bin_edges
    low, high = float(low), float(high)
    if low == high and self.size > 0:
        low, high = float(xp.min(self)), float(xp.max(self))
    elif low > high:
        raise RuntimeError("torch.histc: max must be larger than min")
    if low == high:
        low, high = low - 1, high + 1
    if not (math.isfinite(low) and math.isfinite(high)):
        raise RuntimeError(f"torch.histc: range of [{low:g}, {high:g}] is not finite")
    return low, high


def _histc_kernel(xp, self, bins, min, max):  # noqa: A002 — PyTorch's names
    _histc_checks(self, bins)
    low, high = _histc_range(xp, self, min, max)
    x = self.reshape(-1)
    x = x[(x >= low) & (x <= high)]
    # ATen's linear interpolation: the bin is (x - min) · bins / (max - min), max itself in the last one
    pos = ((x - low) * bins / (high - low)).astype(xp.int64)
    pos = xp.minimum(pos, bins - 1)
    return xp.bincount(pos, minlength=bins).astype(self.dtype)


def _histc_meta(self, bins, min, max):  # noqa: A002 — PyTorch's names
    _histc_checks(self, bins)
    if float(min) != float(max):         # (an own range is the input's values: its checks are the kernel's)
        _histc_range(None, self, min, max)
    return MetaArray((bins,), self.dtype)


histc = defop(
    "histc(Tensor self, int bins=100, Scalar min=0, Scalar max=0) -> Tensor",
    kernel=_histc_kernel, meta=_histc_meta,
    samples=lambda op: [
        SampleInput("(3,4) own range", make_arg((3, 4), key=(op, 0), requires_grad=False), 5),
        SampleInput("range [-1, 1]", make_arg((20,), key=(op, 1), requires_grad=False), 4, -1, 1),
        SampleInput("default bins", make_arg((50,), key=(op, 2), requires_grad=False)),
        SampleInput("one value", make_arg((1,), key=(op, 3), requires_grad=False), 3)],
    torch="torch.histc", doc="The counts of the elements in `bins` equal-width bins over [min, max] (the input's "
                             "range when min == max), in the input's dtype.")


# ---- histogram, histogramdd ------------------------------------------------------------------------
# ATen's histogramdd kernel serves both: the input read as N points of D coordinates (histogram's as
# (numel, 1)), a point counted (or its weight added) in the bin of each coordinate, skipped where one is
# outside [first edge, last edge]; a coordinate equal to the last edge falls in the last bin. Edges
# given as tensors are searched; from bin counts they are the linspace over the range (the data's, ±0.5
# where that is one value, else 0 to 1 for no data), where ATen interpolates and then searches nearby,
# which finds the same bin. The outputs record a Node whose backward is not implemented, as PyTorch's.

def _not_implemented(name):
    def formula(grad):
        raise RuntimeError(f"derivative for aten::{name} is not implemented")
    return formula


def _points(self):
    if self.dtype.kind != "f":
        raise DtypeNotImplementedError(f"\"histogramdd\" not implemented for '{scalar_type_name(self.dtype)}'")
    if self.ndim < 2:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 2 dimensions")
    return self.shape[-1]


def _check_weight(self, weight):
    if weight is None:
        return
    if tuple(weight.shape) != tuple(self.shape[:-1]):
        raise RuntimeError(f"torch.histogramdd: if weight tensor is provided it should have the same shape as the "
                           f"input tensor excluding its innermost dimension, but got input with shape "
                           f"{sizes(self.shape)} and weight with shape {sizes(weight.shape)}")
    if weight.dtype != self.dtype:
        raise RuntimeError(f"torch.histogramdd: if weight tensor is provided, input tensor and weight tensor should "
                           f"have the same dtype, but got input({c_type_name(self.dtype)}), and "
                           f"weight({c_type_name(weight.dtype)})")


def _check_bin_tensors(self, bins):
    D = _points(self)
    if len(bins) != D:
        raise RuntimeError(f"torch.histogramdd: expected {D} sequences of bin edges for a {D}-dimensional histogram "
                           f"but got {len(bins)}")
    for d, edges in enumerate(bins):
        if edges.dtype != self.dtype:
            raise RuntimeError(f"torch.histogramdd: input tensor and bins tensors should have the same dtype, but got "
                               f"input with dtype {c_type_name(self.dtype)} and bins for dimension {d} with dtype "
                               f"{c_type_name(edges.dtype)}")
        if edges.ndim != 1:
            raise RuntimeError(f"torch.histogramdd: bins tensor should have one dimension, but got {edges.ndim} "
                               f"dimensions in the bins tensor for dimension {d}")
        if edges.shape[0] < 1:
            raise RuntimeError(f"torch.histogramdd: bins tensor should have at least 1 element, but got "
                               f"{edges.shape[0]} elements in the bins tensor for dimension {d}")
    for d, edges in enumerate(bins):
        if edges.shape[0] < 2:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {edges.shape[0] - 1} for dimension {d}")


def _outer_edges(xp, self, bins, range):  # noqa: A002 — PyTorch's name
    """ATen's select_outer_bin_edges: each dimension's (first, last) edge, after its checks."""
    D = _points(self)
    for d, n in enumerate(bins):
        if n <= 0:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {n} for dimension {d}")
    if range is not None and len(range) != 2 * D:
        raise RuntimeError(f"torch.histogramdd: for a {D}-dimensional histogram range should have {2 * D} "
                           f"elements, but got {len(range)}")
    outer = []
    for d in builtins.range(D):
        if range is not None:
            low, high = float(range[2 * d]), float(range[2 * d + 1])
        elif xp is None or self.size == 0:
            low, high = 0.0, 1.0          # (Meta: the data's range is the kernel's to check)
        else:
            column = self.reshape(-1, D)[:, d]
            low, high = float(xp.min(column)), float(xp.max(column))
        if not (math.isfinite(low) and math.isfinite(high)):
            raise RuntimeError(f"torch.histogramdd: dimension {d}'s range [{low:g}, {high:g}] is not finite")
        if low > high:
            raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min {low:g} max {high:g} "
                               f"for dimension {d}")
        outer.append((low - 0.5, high + 0.5) if low == high else (low, high))
    return outer


def _bin_edges_kernel(xp, self, bins, range, weight, density):  # noqa: A002
    _check_weight(self, weight)
    return tuple(xp.asarray(_spaced(low, high, n + 1, np.dtype(self.dtype))[0])
                 for (low, high), n in zip(_outer_edges(xp, self, bins, range), bins))


def _bin_edges_meta(self, bins, range, weight, density):  # noqa: A002
    _check_weight(self, weight)
    _outer_edges(None, self, bins, range)
    return tuple(MetaArray((n + 1,), self.dtype) for n in bins)


def _bin_edge_samples(op):
    points = make_arg((6, 2), key=(op, 0), requires_grad=False)
    return [SampleInput("(6,2) [2,3]", points, [2, 3]),
            SampleInput("(6,2) range", points, [2, 4], range=[-1.0, 1.0, 0.0, 3.0]),
            SampleInput("(2,3,1) one value", make_arg((2, 3, 1), key=(op, 1), requires_grad=False).clamp(0.5, 0.5),
                        [3])]


_histogramdd_bin_edges = defop(
    "_histogramdd_bin_edges(Tensor self, int[] bins, *, float[]? range=None, Tensor? weight=None, "
    "bool density=False) -> Tensor[]",
    kernel=_bin_edges_kernel, meta=_bin_edges_meta,
    grads={"self": _not_implemented("_histogramdd_bin_edges"), "weight": None}, backward_name="NotImplemented",
    differentiable=False, gradgrad=False, samples=_bin_edge_samples, torch="torch._histogramdd_bin_edges",
    doc="The bin edges histogramdd uses for bin counts: each dimension's linspace over its range.")


def _counts_kernel(xp, self, bins, weight, density):
    _check_bin_tensors(self, bins)
    _check_weight(self, weight)
    D = self.shape[-1]
    points = self.reshape(-1, D)
    shape = tuple(e.shape[0] - 1 for e in bins)
    flat = xp.zeros(points.shape[0], dtype=np.int64)
    keep = xp.ones(points.shape[0], dtype=bool)
    for d, edges in enumerate(bins):
        value = points[:, d]
        keep &= (value >= edges[0]) & (value <= edges[-1])
        pos = xp.searchsorted(edges, value, side="right") - 1
        pos = xp.clip(xp.where(pos == edges.shape[0] - 1, pos - 1, pos), 0, shape[d] - 1)
        flat = flat * shape[d] + pos
    w = None if weight is None else weight.reshape(-1)[keep]
    hist = xp.bincount(flat[keep], weights=w, minlength=math.prod(shape))[:math.prod(shape)]
    hist = hist.astype(self.dtype).reshape(shape)
    if density:
        hist = hist / hist.sum()
        for d, edges in enumerate(bins):
            lengths = xp.diff(edges)
            hist = hist / lengths.reshape([-1 if i == d else 1 for i in builtins.range(D)])
    return hist


def _counts_meta(self, bins, weight, density):
    _check_bin_tensors(self, bins)
    _check_weight(self, weight)
    return MetaArray(tuple(e.shape[0] - 1 for e in bins), self.dtype)


def _counts_samples(op):
    points = make_arg((8, 2), key=(op, 0), requires_grad=False)
    edges = [tensor([-2.0, -0.5, 0.0, 1.0, 2.0], dtype=dtypes.float64), tensor([-1.0, 0.5, 1.5], dtype=dtypes.float64)]
    weight = make_arg((8,), key=(op, 1), low=0.0, high=1.0, requires_grad=False)
    return [SampleInput("(8,2)", points, edges),
            SampleInput("(8,2) weight density", points, edges, weight=weight, density=True),
            SampleInput("(2,4,1) one bin", make_arg((2, 4, 1), key=(op, 2), requires_grad=False),
                        [tensor([-1.0, 1.0], dtype=dtypes.float64)])]


_histogramdd_from_bin_tensors = defop(
    "_histogramdd_from_bin_tensors(Tensor self, Tensor[] bins, *, Tensor? weight=None, bool density=False) "
    "-> Tensor",
    kernel=_counts_kernel, meta=_counts_meta,
    grads={"self": _not_implemented("_histogramdd_from_bin_tensors"), "bins": None, "weight": None},
    backward_name="NotImplemented", differentiable=False, gradgrad=False, samples=_counts_samples,
    torch="torch._histogramdd_from_bin_tensors",
    doc="histogramdd's counts (or summed weights, or density) in the bins the edge tensors bound.")


def _histogram_kernel(xp, self, bins, range, weight, density):  # noqa: A002
    points = self.reshape(-1, 1)
    weight = None if weight is None else weight.reshape(-1)
    if range is not None:
        # (the edges were made from range: only its checks are left to do here)
        _outer_edges(None, points, [bins.shape[0] - 1 or 1], range)
    return _counts_kernel(xp, points, [bins], weight, density), bins.copy()


def _histogram_meta(self, bins, range, weight, density):  # noqa: A002
    points = MetaArray((math.prod(self.shape), 1), self.dtype)
    if weight is not None:
        weight = MetaArray((math.prod(weight.shape),), weight.dtype)
    return _counts_meta(points, [bins], weight, density), MetaArray(bins.shape, bins.dtype)


def _histogram_samples(op):
    x = make_arg((3, 4), key=(op, 0), requires_grad=False)
    weight = make_arg((3, 4), key=(op, 1), low=0.0, high=1.0, requires_grad=False)
    return [SampleInput("(3,4) 4 bins", x, 4), SampleInput("(3,4) edges", x, tensor([-2.0, -1.0, 0.5, 2.0],
                                                                                   dtype=dtypes.float64)),
            SampleInput("(3,4) range weight density", x, 5, range=[-1.0, 1.0], weight=weight, density=True),
            SampleInput("(12,) 3 bins", make_arg((12,), key=(op, 2), requires_grad=False), 3),
            SampleInput("0 elements", make_arg((0,), key=(op, 3), requires_grad=False), 2)]


_histogram = defop(
    "histogram(Tensor self, Tensor bins, *, float[]? range=None, Tensor? weight=None, bool density=False) "
    "-> (Tensor hist, Tensor bin_edges)",
    kernel=_histogram_kernel, meta=_histogram_meta,
    grads={"self": _not_implemented("histogram"), "bins": None, "weight": None},
    backward_name="NotImplemented", differentiable=False, gradgrad=False, samples=_histogram_samples,
    torch="torch.histogram")


def histogram(self, bins=100, *, range=None, weight=None, density=False):  # noqa: A002 — PyTorch's names
    """histogram(Tensor self, Tensor bins or int bins=100, *, float[]? range=None, Tensor? weight=None,
    bool density=False) -> (Tensor hist, Tensor bin_edges)

    The histogram of all of self's elements: `bins` equal bins over `range` (the data's own range without
    one), or the bins between the edges of a 1-D tensor; counts, or the sums of `weight` (self's shape),
    normalised to a density with `density`."""
    if not isinstance(bins, Tensor):
        # PyTorch's histogram.bin_ct: histogramdd's edges of the flattened input
        bins = _histogramdd_bin_edges(self.reshape(-1, 1), [bins], range=range,
                                      weight=None if weight is None else weight.reshape(-1), density=density)[0]
    return return_types.histogram(*_histogram(self, bins, range=range, weight=weight, density=density))


# NOTE: as split: PyTorch's parser picks histogram.bin_ct or histogram.bins_tensor from the type of
# `bins`, which the dispatcher cannot once an int is bound; this function does it, as agrad.histogram
histogram.op = _histogram.op
histogram.__module__ = "agrad"
_histogram.op.function = histogram


def histogramdd(input, bins=10, *, range=None, weight=None, density=False):  # noqa: A002 — PyTorch's names
    """torch.histogramdd (torch/functional.py's): the histogram of input's points (its last dim the D
    coordinates) in D dimensions: `bins` an int or D ints (equal bins over `range`, D (min, max) pairs
    flattened, or each dimension's data range), or D edge tensors. Returns (hist, bin_edges)."""
    if isinstance(bins, int):
        bins = [bins] * input.shape[-1]
    if all(isinstance(b, int) for b in bins):
        if len(bins) != input.shape[-1]:
            raise RuntimeError("histogramdd: The size of bins must be equal to the innermost dimension of the input.")
        bin_edges = _histogramdd_bin_edges(input, list(bins), range=range, weight=weight, density=density)
    else:
        bin_edges = list(bins)
    hist = _histogramdd_from_bin_tensors(input, list(bin_edges), weight=weight, density=density)
    return return_types.histogramdd(hist, tuple(bin_edges))

