"""Histograms (ATen's Histogram.cpp): histc, the counts of the elements in `bins` equal-width bins
over [min, max] (the input's own range when min == max, widened by 1 each way when that is one
value); elements outside are not counted, one equal to max falls in the last bin. Counts are not
differentiable (derivatives.yaml: output_differentiability [False])."""
from __future__ import annotations

import math

from ...backends.meta import MetaArray
from ...errors import DtypeNotImplementedError
from ...messages import scalar_type_name
from ..registry import defop
from ..samples import SampleInput, make_arg


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
