"""The Vandermonde matrix (ATen's LinearAlgebra.cpp vander), a composite over cumprod as
PyTorch's: column j holds x ** j (increasing) or x ** (N - 1 - j), made as running
products of x so that integer inputs stay exact. PyTorch fills the columns of an empty
matrix in place (CopySlices) and flips it; agrad joins a column of ones to the running
products (cat), then flips: the same values. NOTE: PyTorch 2.13's backward through vander
fails (its in-place cumprod overwrites the slice cumprod saved: "modified by an inplace
operation"), so its fixtures hold forward values only; agrad's gradient is checked against
finite differences."""
from __future__ import annotations

from ... import dtypes
from ...creation import ones, zeros
from ..conversion import to
from ..registry import defop
from ..samples import SampleInput, make_arg
from ..shape.join import cat
from ..shape.rearrange import flip
from ..shape.view import expand, unsqueeze
from .cumulative import cumprod


def _vander(x, N=None, increasing=False):
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    m = x.shape[0]
    n = m if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    # integers become long, as cumprod promotes them
    dtype = x.dtype if x.dtype.is_floating_point else dtypes.int64
    if n == 0:
        return zeros([m, 0], dtype=dtype, device=x.device)
    result = ones([m, 1], dtype=dtype, device=x.device)
    if n > 1:
        powers = cumprod(expand(unsqueeze(to(x, dtype=dtype), 1), [m, n - 1]), 1)
        result = cat([result, powers], 1)
    return result if increasing else flip(result, [1])


vander = defop(
    "vander(Tensor x, int? N=None, bool increasing=False) -> Tensor", composite=_vander,
    samples=lambda op: [SampleInput("(4,)", make_arg((4,), key=(op, 0))),
                        SampleInput("N=2", make_arg((3,), key=(op, 1)), 2),
                        SampleInput("N=5 increasing", make_arg((3,), key=(op, 2)), N=5, increasing=True),
                        SampleInput("int64", make_arg((3,), key=(op, 3), dtype=dtypes.int64, low=-3, high=4,
                                                      integer=True))],
    torch="torch.vander", doc="The Vandermonde matrix of x: its columns are powers of x, decreasing (or increasing).")
